"""The page at ``/`` in a real browser: headless Chromium (Debian's ``chromium`` package)
loads it from a running server, driven through the DevTools protocol; the rendered board
and move table are checked against the API, and a click plays a move."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.request

import chess
import pytest

websocket = pytest.importorskip("websocket", reason="websocket-client is not installed: pip install -e '.[test]'")
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not found: apt-get install chromium")

NEGATE = {"win": "loss", "loss": "win", "draw": "draw", "unknown": "unknown"}
GLYPHS = dict(zip("KQRBNPkqrbnp", "\u2654\u2655\u2656\u2657\u2658\u2659\u265a\u265b\u265c\u265d\u265e\u265f"))


class Browser:
    """Headless Chromium with one page, spoken to over the DevTools protocol."""

    def __init__(self, profile):
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and len(port_file.read_text().split()) == 2):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("Chromium did not open its DevTools port")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = next(t for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.next_id = 0

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(reply["error"])
                return reply["result"]

    def eval(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def wait_loaded(self, fen: str) -> None:
        """Until the page has drawn ``fen`` and its answer (it sets body's data-loaded)."""
        deadline = time.monotonic() + 30
        while self.eval("(document.body && document.body.dataset.loaded) || ''") != fen:
            assert time.monotonic() < deadline, f"the page did not show {fen}"
            time.sleep(0.05)

    def close(self) -> None:
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        self.process.terminate()
        self.process.wait(10)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = Browser(tmp_path_factory.mktemp("chromium"))
    yield b
    b.close()


RENDERED = """Array.from(document.querySelectorAll('#moves tbody tr')).map(r => ({
    uci: r.dataset.uci, category: r.dataset.category, cls: r.className,
    cells: Array.from(r.cells).map(c => c.textContent),
    colour: getComputedStyle(r).backgroundColor}))"""
BOARD = "Array.from(document.querySelectorAll('#board div')).map(d => d.textContent)"


def check_page(browser, server, fen: str) -> list[dict]:
    """The rendered position, its category and its move table equal the API's answer."""
    browser.wait_loaded(fen)
    board = chess.Board(fen)
    squares = browser.eval(BOARD)
    assert len(squares) == 64
    for i, text in enumerate(squares):  # a8 first
        piece = board.piece_at(chess.square(i % 8, 7 - i // 8))
        assert text == ("" if piece is None else GLYPHS[piece.symbol()]), (i, text)
    reply = server.json("/standard", fen)
    assert browser.eval("document.getElementById('category').className") == "tag " + reply["category"]
    assert browser.eval("document.getElementById('category').textContent").startswith(reply["category"])
    rows = browser.eval(RENDERED)
    assert [r["uci"] for r in rows] == [m["uci"] for m in reply["moves"]]  # the API's order, best first
    for row, move in zip(rows, reply["moves"]):
        assert row["category"] == move["category"]
        assert row["cls"] == NEGATE[move["category"]]  # coloured by the mover's result
        assert row["cells"][0] == move["san"] and row["cells"][1].startswith(NEGATE[move["category"]])
        if move["dtm"]:
            plies = abs(move["dtm"]) + 1
            assert row["cells"][2].endswith(f"({plies} plies)"), row
    colours = {r["cls"]: r["colour"] for r in rows}
    assert len(set(colours.values())) == len(colours)  # one colour per category shown
    return rows


def test_page_shows_the_api_and_plays_a_move(browser, server):
    fen = "4k3/6KP/8/8/8/8/7p/8 w - - 0 1"
    browser.call("Page.navigate", url=f"{server.url}/#fen={fen.replace(' ', '_')}")
    rows = check_page(browser, server, fen)
    assert {r["cls"] for r in rows} == {"win", "draw", "loss"}
    # Click the best move (h8=Q+): the page shows the position after it.
    browser.eval("document.querySelector('#moves tbody tr').click()")
    board = chess.Board(fen)
    board.push_uci(rows[0]["uci"])
    after = board.fen()
    check_page(browser, server, after)
    # Play on by clicking until mate: every position along the line matches the API.
    for _ in range(40):
        if board.is_game_over():
            break
        browser.eval("document.querySelector('#moves tbody tr').click()")
        board.push_uci(server.json("/standard", board.fen())["moves"][0]["uci"])
        check_page(browser, server, board.fen())
    assert board.is_checkmate()
    assert browser.eval("document.querySelectorAll('#moves tbody tr').length") == 0
    # Back takes the last move back.
    browser.eval("document.getElementById('back').click()")
    board.pop()
    check_page(browser, server, board.fen())


def test_page_edit_fen_and_errors(browser, server):
    browser.call("Page.navigate", url=f"{server.url}/")
    browser.wait_loaded("4k3/6KP/8/8/8/8/7p/8 w - - 0 1")
    fen = "8/8/8/8/2pP4/8/8/K1k5 b - d3 0 1"  # an en-passant capture among the moves
    browser.eval(f"document.getElementById('fen').value = {json.dumps(fen)}; "
                 "document.getElementById('form').requestSubmit()")
    rows = check_page(browser, server, fen)
    assert "c4d3" in [r["uci"] for r in rows]
    missing = "8/8/8/4k3/8/8/2Q5/K2Rr3 w - - 0 1"
    browser.eval(f"document.getElementById('fen').value = {json.dumps(missing)}; "
                 "document.getElementById('form').requestSubmit()")
    browser.wait_loaded(missing)
    assert browser.eval("document.getElementById('error').textContent").startswith("404: no table for KQRvKR")
    assert browser.eval(RENDERED) == []
