"""``tablebase serve`` against Lichess's conventions (lila-tablebase ``src/response.rs`` and
``src/tablebases.rs``, the Lichess API's ``TablebaseJson.yaml``): every field, its type and
place, the move order, the status codes; values against the Gaviota oracle."""

from __future__ import annotations

import sys
from pathlib import Path

import chess
import chess.gaviota
import chess.syzygy
import pytest

from conftest import Server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from check_oracle import dtz_agrees  # noqa: E402

# Keys in the order lila-tablebase serialises them (serde: PositionInfo flattened).
POSITION_KEYS = ["checkmate", "stalemate", "variant_win", "variant_loss", "insufficient_material", "dtz",
                 "precise_dtz", "dtm", "dtw", "dtc", "category"]
ROOT_KEYS = POSITION_KEYS + ["moves"]
MOVE_KEYS = ["uci", "san", "zeroing", "conversion"] + POSITION_KEYS
CATEGORIES = {"win", "unknown", "syzygy-win", "maybe-win", "cursed-win", "draw", "blessed-loss", "maybe-loss",
              "syzygy-loss", "loss"}


@pytest.fixture(scope="module")
def gaviota(oracle_dir):
    with chess.gaviota.open_tablebase(oracle_dir / "gaviota") as t:
        yield t


@pytest.fixture(scope="module")
def syzygy(oracle_dir):
    with chess.syzygy.open_tablebase(oracle_dir / "syzygy") as t:
        yield t


def lichess_dtz(syzygy, board: chess.Board) -> int:
    """Syzygy's DTZ as the oracle gives it (python-chess: -1 for a checkmated side)."""
    return syzygy.probe_dtz(board)


def lichess_dtm(gaviota, board: chess.Board) -> int | None:
    """DTM as lila-tablebase reports it from Gaviota: plies from the side to move, 0 for a
    draw, None for a checkmated side (Gaviota's 0 there is reserved for draws)."""
    if board.is_checkmate():
        return None
    return gaviota.probe_dtm(board)


def category_of(board: chess.Board, syzygy) -> str:
    """The category at clock 0, from Syzygy's WDL (a mate: loss)."""
    if board.is_checkmate():
        return "loss"
    return {2: "win", 1: "cursed-win", 0: "draw", -1: "blessed-loss", -2: "loss"}[syzygy.probe_wdl(board)]


def lichess_order_ok(a: dict, b: dict, capture: dict) -> bool:
    """Whether move ``a`` may come before ``b`` in lila-tablebase's order, the rules
    applied one after the other as MoveInfo::sort_key has them (``capture``: uci -> the
    captured and promoted piece types)."""
    rank = ["loss", "unknown", "syzygy-loss", "maybe-loss", "blessed-loss", "draw", "cursed-win", "maybe-win",
            "syzygy-win", "win"]
    steps = [
        lambda m: rank.index(m["category"]),
        lambda m: not m["checkmate"],
        lambda m: not m["stalemate"],
        # dtm: -1, -2, ... (mate soonest), then null and 0, then the largest positive first
        lambda m: (0, -m["dtm"]) if m["dtm"] is not None and m["dtm"] < 0 else (1, 0),
        lambda m: -m["dtm"] if m["dtm"] is not None and m["dtm"] > 0 else -10**9,
        lambda m: m["conversion"] != (m["category"] not in ("win", "cursed-win", "maybe-win", "syzygy-win")),
        lambda m: m["zeroing"] != (m["category"] not in ("win", "cursed-win", "maybe-win", "syzygy-win")),
        lambda m: tuple(-(p or -1) for p in capture[m["uci"]]),
    ]
    for step in steps:
        if step(a) != step(b):
            return step(a) < step(b)
    return True


def check_reply(reply: dict, board: chess.Board, gaviota, syzygy) -> None:
    assert list(reply) == ROOT_KEYS
    for key in ("checkmate", "stalemate", "variant_win", "variant_loss", "insufficient_material"):
        assert type(reply[key]) is bool
    assert reply["variant_win"] is reply["variant_loss"] is False
    assert reply["dtw"] is reply["dtc"] is None
    assert reply["dtz"] == reply["precise_dtz"] and dtz_agrees(reply["dtz"], lichess_dtz(syzygy, board))
    assert reply["checkmate"] == board.is_checkmate() and reply["stalemate"] == board.is_stalemate()
    assert reply["insufficient_material"] == board.is_insufficient_material()
    assert reply["dtm"] == lichess_dtm(gaviota, board)
    assert reply["category"] == category_of(board, syzygy)
    assert sorted(m["uci"] for m in reply["moves"]) == sorted(m.uci() for m in board.legal_moves)
    capture = {}
    for m in reply["moves"]:
        assert list(m) == MOVE_KEYS
        move = chess.Move.from_uci(m["uci"])
        assert m["san"] == board.san(move)
        assert m["zeroing"] == board.is_zeroing(move)
        assert m["conversion"] == (board.is_capture(move) or move.promotion is not None)
        taken = chess.PAWN if board.is_en_passant(move) else board.piece_type_at(move.to_square)
        capture[m["uci"]] = (taken, move.promotion)
        board.push(move)
        assert m["checkmate"] == board.is_checkmate() and m["stalemate"] == board.is_stalemate()
        assert m["insufficient_material"] == board.is_insufficient_material()
        assert m["dtm"] == lichess_dtm(gaviota, board), m
        assert m["category"] == category_of(board, syzygy) and m["category"] in CATEGORIES
        assert m["dtw"] is m["dtc"] is None
        assert m["dtz"] == m["precise_dtz"] and dtz_agrees(m["dtz"], lichess_dtz(syzygy, board))
        board.pop()
    for a, b in zip(reply["moves"], reply["moves"][1:]):
        assert lichess_order_ok(a, b, capture), (a, b)
    if reply["moves"]:  # the root's category is the best move's, negated
        negate = {"win": "loss", "loss": "win", "draw": "draw", "cursed-win": "blessed-loss",
                  "blessed-loss": "cursed-win"}
        assert reply["category"] == negate[reply["moves"][0]["category"]]


POSITIONS = {
    "won (Lichess's own example)": "4k3/6KP/8/8/8/8/7p/8 w - - 0 1",
    "lost": "8/8/8/8/8/8/8/K2kr3 w - - 0 1",
    "won, mate in one and stalemates among the moves": "7k/8/6K1/8/8/1Q6/8/8 w - - 0 1",
    "drawn": "8/8/4k3/8/8/2K5/3R4/5r2 w - - 0 1",
    "checkmate": "8/8/8/8/8/2k5/1q6/K7 w - - 0 1",
    "stalemate": "k7/2Q5/1K6/8/8/8/8/8 b - - 0 1",
    "en passant": "8/8/8/8/2pP4/8/8/K1k5 b - d3 0 1",
    "insufficient material": "8/8/3k4/8/8/2KB4/8/8 w - - 0 1",
}


@pytest.mark.parametrize("fen", POSITIONS.values(), ids=POSITIONS.keys())
def test_standard(server, gaviota, syzygy, fen):
    board = chess.Board(fen)
    reply = server.json("/standard", fen.replace(" ", "_"))  # underscores, as in Lichess URLs
    check_reply(reply, board, gaviota, syzygy)
    assert server.json("/standard", fen) == reply  # spaces too


def test_lichess_documented_example(server):
    """The example of the Lichess API's TablebaseJson.yaml."""
    reply = server.json("/standard", "4k3/6KP/8/8/8/8/7p/8_w_-_-_0_1")
    assert (reply["category"], reply["dtm"], reply["checkmate"]) == ("win", 17, False)
    best = reply["moves"][0]
    assert {k: best[k] for k in ("uci", "san", "dtm", "zeroing", "checkmate", "stalemate", "category")} == {
        "uci": "h7h8q", "san": "h8=Q+", "dtm": -16, "zeroing": True, "checkmate": False, "stalemate": False,
        "category": "loss"}


def test_special_roots(server, gaviota):
    mate = server.json("/standard", POSITIONS["checkmate"])
    assert (mate["checkmate"], mate["category"], mate["dtm"], mate["moves"]) == (True, "loss", None, [])
    stale = server.json("/standard", POSITIONS["stalemate"])
    assert (stale["stalemate"], stale["category"], stale["dtm"], stale["moves"]) == (True, "draw", 0, [])
    ep = server.json("/standard", POSITIONS["en passant"])
    assert "c4d3" in [m["uci"] for m in ep["moves"]]
    # Castling rights: as lila-tablebase, no value for the root, values for the moves that
    # give the rights up; the root's category is the best move's.
    board = chess.Board("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1")
    castle = server.json("/standard", board.fen())
    assert castle["dtm"] is None and castle["category"] == "win"
    assert "e1c1" in [m["uci"] for m in castle["moves"]]  # O-O-O
    assert all(m["dtm"] is not None and m["category"] != "unknown" for m in castle["moves"])  # every move gives them up
    # lila-tablebase's rule: once the clock before a move reached 100, a decided position
    # after it is cursed or blessed, a mate too (the loser could have claimed the draw).
    late = server.json("/standard", "7k/8/6K1/8/8/1Q6/8/8 w - - 100 140")
    assert late["moves"][0]["san"] == "Qb8#" and late["moves"][0]["category"] == "blessed-loss"
    assert late["category"] == "cursed-win"


@pytest.mark.parametrize("path", ["/standard", "/standard/mainline"])
@pytest.mark.parametrize("fen, status, message", [
    ("not a fen", 400, "bad FEN 'not a fen'"),
    (None, 400, "missing query parameter fen"),
    ("8/8/8/8/8/8/8/Kk6_w_-_-_0_1", 400, "illegal position"),
    ("8/8/8/4k3/8/8/2Q5/K2Rr3_w_-_-_0_1", 404, "tablebase generate KQRvKR"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR_w_-_-_0_1", 404, "32 pieces"),
])
def test_errors(server, path, fen, status, message):
    got, kind, body = server.get(path, fen)
    assert (got, kind.split(";")[0]) == (status, "text/plain") and message in body, body


def test_mainline(server):
    fen = "8/8/8/8/8/8/8/K2kr3 b - - 0 1"
    line = server.json("/standard/mainline", fen)
    assert list(line) == ["mainline", "winner", "dtz", "precise_dtz"]
    board = chess.Board(fen)
    for step in line["mainline"]:
        assert list(step) == ["uci", "san", "dtz", "precise_dtz"]
        assert step["uci"] == server.json("/standard", board.fen())["moves"][0]["uci"]
        assert step["san"] == board.san(chess.Move.from_uci(step["uci"]))
        board.push_uci(step["uci"])
    assert board.is_checkmate() and line["winner"] == "b" and len(line["mainline"]) == 5
    draw = server.json("/standard/mainline", POSITIONS["drawn"])
    assert draw == {"mainline": [], "winner": None, "dtz": 0, "precise_dtz": 0}
    got, _, body = server.get("/standard/mainline", "4k3/8/8/8/8/8/8/R3K3_w_Q_-_0_1")
    assert got == 404 and "castling" in body


def test_page_is_served(server):
    status, kind, body = server.get("/")
    assert status == 200 and kind.startswith("text/html") and "standard?fen=" in body


def test_several_folders_and_workers(tables_34, tmp_path):
    """TABLEBASE_PATH with two folders (the second holding KQvK only), two worker processes."""
    import shutil
    only = tmp_path / "only"
    only.mkdir()
    shutil.copytree(tables_34 / "KRvK", only / "KRvK")
    s = Server([only, tables_34], ["--workers", "2"])
    try:
        assert s.json("/standard", "8/8/8/8/8/8/8/K2kr3_w_-_-_0_1")["dtm"] == -10
        assert s.json("/standard", "7k/8/6K1/8/8/1Q6/8/8_w_-_-_0_1")["category"] == "win"  # from the second
    finally:
        s.close()


def test_docstring_examples():
    import doctest

    import tablebase.server
    result = doctest.testmod(tablebase.server)
    assert result.attempted > 0 and result.failed == 0
