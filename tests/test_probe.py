"""The probe library against the oracles (Syzygy WDL, Gaviota DTM), its batch paths
against its single probes, and the ``tablebase probe`` command.

``TABLEBASE_PROBE_SAMPLES`` sets the random positions per table of the oracle test: the
default, 200, takes 30-40 s on 2 cores; the issue's full check is 20000.
"""

from __future__ import annotations

import doctest
import inspect
import json
import os
import random
import subprocess
import sys
import threading

import chess
import chess.gaviota
import chess.syzygy
import numpy as np
import pytest

import tablebase
import tablebase.probe
import tablebase.probing.engine
from tablebase.cli import main
from tablebase.endgame.index import IndexScheme
from tablebase.endgame.material import all_materials
from tablebase.endgame.pychess import board_index
from tablebase.generate.exact import load_table

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "scripts"))
from check_oracle import dtz_agrees  # noqa: E402
from tablebase.generate.values import to_wdl_dtm
from tablebase.probe import ILLEGAL_WDL, open_tablebase
from tablebase.probing.engine import BYTES_PER_ROW, MIN_SLOTS
from tablebase.store import DEFAULT_CODING

SAMPLES = int(os.environ.get("TABLEBASE_PROBE_SAMPLES", "200"))
MATERIALS = ["KvK"] + all_materials(3) + all_materials(4)
PIECE_TYPES = {letter: chess.Piece.from_symbol(letter).piece_type for letter in "KQRBNP"}


@pytest.fixture(scope="module")
def tb(tables_34):
    with open_tablebase(tables_34) as t:
        yield t


@pytest.fixture(scope="module")
def syzygy(oracle_dir):
    with chess.syzygy.open_tablebase(oracle_dir / "syzygy") as t:
        yield t


class _Unbounded(dict):
    """python-chess's pure-Python Gaviota prober keeps 128 decompressed blocks, evicting
    when ``len()`` passes 128, so random positions decompress a block (~3 ms) per probe.
    Reporting no length keeps every block: the same values, several times faster."""

    def __len__(self) -> int:
        return 0


@pytest.fixture(scope="module")
def gaviota(oracle_dir):
    with chess.gaviota.open_tablebase(oracle_dir / "gaviota") as t:
        t.block_cache = _Unbounded()
        yield t


def _place(key: str, rng: random.Random, flip: bool) -> chess.Board:
    white, black = key.split("v")
    if flip:
        white, black = black, white
    board = chess.Board(None)
    pieces = [(c, True) for c in white] + [(c, False) for c in black]
    for (letter, colour), square in zip(pieces, rng.sample(range(64), len(pieces))):
        board.set_piece_at(square, chess.Piece(PIECE_TYPES[letter], colour))
    return board


def random_board(key: str, rng: random.Random, *, flip: bool, black_to_move: bool) -> chess.Board:
    """A random legal position of ``key`` (Black holds the left-hand side when ``flip``).
    When a pawn of the side that just moved stands where a double step ends, with the
    squares behind it empty, it is taken to have just made that step."""
    while True:
        board = _place(key, rng, flip)
        board.turn = not black_to_move
        step = -8 if black_to_move else 8  # from the pawn to the square it passed over
        pushed = [s for s in board.pieces(chess.PAWN, not board.turn)
                  if chess.square_rank(s) == (3 if black_to_move else 4)
                  and not board.piece_at(s + step) and not board.piece_at(s + 2 * step)]
        if pushed:
            board.ep_square = rng.choice(pushed) + step
        if board.is_valid():
            return board


def ep_board(rng: random.Random) -> chess.Board:
    """A random KPvKP position (either side to move) with a legal en-passant capture."""
    while True:
        file = rng.randrange(8)
        capturer = file + rng.choice([f for f in (-1, 1) if 0 <= file + f < 8])
        board = chess.Board(None)
        board.set_piece_at(chess.square(file, 4), chess.Piece(chess.PAWN, chess.BLACK))
        board.set_piece_at(chess.square(capturer, 4), chess.Piece(chess.PAWN, chess.WHITE))
        passed = {chess.square(file, 5), chess.square(file, 6)}  # must be empty after a double step
        free = [s for s in range(64) if not board.piece_at(s) and s not in passed]
        wk, bk = rng.sample(free, 2)
        board.set_piece_at(wk, chess.Piece(chess.KING, chess.WHITE))
        board.set_piece_at(bk, chess.Piece(chess.KING, chess.BLACK))
        board.ep_square = chess.square(file, 5)
        if rng.random() < 0.5:
            board = board.mirror()
        if board.is_valid() and board.has_legal_en_passant():
            return board


def boards_of(key: str, n: int, seed: int) -> list[chess.Board]:
    """``n`` positions of ``key``, cycling through both colour orientations and both sides
    to move; in KPvKP (the only 3-4 piece material with en-passant captures) every
    fourth position has a legal en-passant capture."""
    rng = random.Random(f"{key}/{seed}")
    out = []
    for i in range(n):
        if key == "KPvKP" and i % 4 == 3:
            out.append(ep_board(rng))
        else:
            out.append(random_board(key, rng, flip=bool(i % 2), black_to_move=bool(i // 2 % 2)))
    return out


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


def mover_value(wdl: int, dtm: int) -> tuple[int, int]:
    """The value of a position seen from the side that moved into it (one ply more)."""
    if wdl == 0:
        return 0, 0
    return (-1, -dtm - 1) if wdl > 0 else (1, 1 - dtm)


def gaviota_wdl(dtm: int, board: chess.Board) -> int:
    # Gaviota's 0 is a draw, or a checkmated side to move.
    return -1 if dtm == 0 and board.is_checkmate() else sign(dtm)


@pytest.mark.parametrize("key", MATERIALS)
def test_probes_match_the_oracles(tb, syzygy, gaviota, key):
    """WDL against Syzygy, DTM against Gaviota, and the moves' values against Syzygy's
    WDL of the positions they lead to (in this table or, after a capture or a promotion,
    in a sub-table)."""
    gaviota.block_cache.clear()  # one table's blocks at a time
    for board in boards_of(key, SAMPLES, seed=1):
        fen = board.fen(en_passant="fen")
        wdl, dtm = tb.probe_wdl(board), tb.probe_dtm(board)
        assert wdl == sign(syzygy.probe_wdl(board)), fen
        assert dtm == gaviota.probe_dtm(board), fen
        assert tb.probe_wdl50(board) == syzygy.probe_wdl(board), fen
        assert dtz_agrees(tb.probe_dtz(board), syzygy.probe_dtz(board)), fen
        if board.ep_square is None:
            # The bitboard fast path against its slow twin, board_index.
            assert tb._locate(board) == board_index(board), fen
        assert tb.probe_eval(board) == (wdl if board.turn == chess.WHITE else -wdl), fen
        winner = None if wdl == 0 else board.turn == (wdl > 0)
        for g in (chess.WHITE, chess.BLACK):
            assert tb.probe_depth(board, g) == (abs(dtm) if winner == g else None), fen

        moves = tb.probe_moves(board)
        expected = {}
        for move in board.legal_moves:
            board.push(move)
            expected[move] = -sign(syzygy.probe_wdl(board))
            board.pop()
        assert {m.move: m.wdl for m in moves} == expected, fen
        for m in moves:  # a move's dtz: as python-chess finds the best one's, the move counted
            if m.dtz > 0 and board.halfmove_clock == 0:
                assert m.dtz >= tb.probe_dtz(board), fen
        assert set(tb.never_lose_moves(board)) == {m for m, w in expected.items() if w >= 0}, fen
        ranks = [(-m.wdl, m.dtm) for m in moves]
        assert ranks == sorted(ranks), fen
        assert tb.best_move(board) == (moves[0].move if moves else None), fen
        if moves:
            assert (moves[0].wdl, moves[0].dtm) == (wdl, dtm), fen  # the value is the best move's


def test_en_passant_capture_as_the_only_move(tb, gaviota):
    """Without its en-passant square this KQPvKP board is stalemate; with it, exd6 is
    forced and loses. No 3-4 piece position has en-passant captures as its only moves,
    so this 5-piece board (the capture leads into KQvKP) is the one that shows the
    stalemate is not taken as an option."""
    board = chess.Board("8/8/4k3/3pP3/8/6q1/8/7K w - d6 0 1")
    assert [m.uci() for m in board.legal_moves] == ["e5d6"]
    after = board.copy()
    after.push_uci("e5d6")
    expected = mover_value(gaviota_wdl(gaviota.probe_dtm(after), after), gaviota.probe_dtm(after))
    assert expected[0] == -1
    assert (tb.probe_wdl(board), tb.probe_dtm(board)) == expected
    assert [(m.move, m.wdl, m.dtm) for m in tb.probe_moves(board)] == [(chess.Move.from_uci("e5d6"), *expected)]
    assert tb.never_lose_moves(board) == []
    with pytest.raises(tablebase.probe.MissingTableError):
        tb.probe_wdl(chess.Board("8/8/4k3/3pP3/8/6q1/8/7K w - - 0 1"))


def test_checkmate_and_stalemate_boards(tb):
    mate = chess.Board("8/8/8/8/8/2k5/1q6/K7 w - - 0 1")
    assert (tb.probe_wdl(mate), tb.probe_dtm(mate), tb.probe_eval(mate)) == (-1, 0, -1)
    assert tb.probe_depth(mate, chess.BLACK) == 0 and tb.probe_depth(mate, chess.WHITE) is None
    assert tb.probe_moves(mate) == [] and tb.best_move(mate) is None
    stalemate = chess.Board("k7/2Q5/1K6/8/8/8/8/8 b - - 0 1")
    assert stalemate.is_stalemate()
    assert (tb.probe_wdl(stalemate), tb.probe_dtm(stalemate), tb.probe_eval(stalemate)) == (0, 0, 0)
    assert tb.probe_depth(stalemate, 1) is None and tb.probe_depth(stalemate, -1) is None


def test_probe_depth_accepts_both_spellings_of_a_side(tb):
    board = chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1")
    assert tb.probe_depth(board, -1) == tb.probe_depth(board, chess.BLACK) == abs(tb.probe_dtm(board))
    assert tb.probe_depth(board, 1) is tb.probe_depth(board, chess.WHITE) is None


def test_open_tablebase_is_exported_lazily():
    assert tablebase.open_tablebase is open_tablebase
    assert tablebase.MissingTableError is tablebase.probe.MissingTableError
    loaded = subprocess.run([sys.executable, "-c", "import sys, tablebase; print(tablebase.__version__, "
                             "*sorted({'ray', 'numba', 'pyarrow', 'chess'} & set(sys.modules)))"],
                            capture_output=True, text=True, check=True).stdout.split()
    assert loaded == [tablebase.__version__]


def test_docstring_examples(tables_34, monkeypatch):
    monkeypatch.chdir(tables_34.parents[1])  # the examples name data/test-tables
    import tablebase.cli
    import tablebase.endgame.pychess
    import tablebase.errors
    import tablebase.lichess
    import tablebase.plan
    import tablebase.stats
    for module in (tablebase.probe, tablebase.errors, tablebase.lichess, tablebase.endgame.pychess, tablebase.stats,
                   tablebase.plan, tablebase.cli):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


# -- batches --------------------------------------------------------------------------


def _sample_boards() -> list[chess.Board]:
    return [b for key in MATERIALS for b in boards_of(key, 24, seed=2)]


def test_board_and_fen_batches_equal_single_probes(tb):
    boards = _sample_boards()
    assert any(b.has_legal_en_passant() for b in boards)
    wdl = np.array([tb.probe_wdl(b) for b in boards])
    dtm = np.array([tb.probe_dtm(b) for b in boards])
    for batch in (boards, [b.fen() for b in boards]):
        w, d = tb.probe_wdl_batch(batch), tb.probe_dtm_batch(batch)
        assert w.dtype == np.int8 and d.dtype == np.int16
        np.testing.assert_array_equal(w, wdl)
        np.testing.assert_array_equal(d, dtm)
    assert tb.probe_wdl_batch([]).shape == (0,)


def test_index_batch_equals_single_probes(tb):
    boards = [b for b in _sample_boards() if b.ep_square is None]
    by_key: dict[str, list] = {}
    for board in boards:
        key, stm, idx = board_index(board)
        by_key.setdefault(key, []).append((stm, idx, tb.probe_wdl(board), tb.probe_dtm(board)))
    for key, rows in by_key.items():
        stm, idx, wdl, dtm = (np.array(c) for c in zip(*rows))
        w, d = tb.probe_batch_indices(key, stm, idx)
        np.testing.assert_array_equal(w, wdl)
        np.testing.assert_array_equal(d, dtm)


@pytest.mark.parametrize("key, cache_bytes, threads", [("KvK", 512 << 20, 1), ("KQvKR", 512 << 20, 1),
                                                       ("KPvKP", 512 << 20, 4), ("KQvKR", 100_000, 4)])
def test_index_batch_over_a_whole_table(tables_34, monkeypatch, key, cache_bytes, threads):
    """Every index of both sides, in random order, against the exact values the
    generator's loader resolves (its slow twin: whole slices, not one probe at a time).
    With room for every block, no block is decoded twice; the small cache (the pool's
    least, MIN_SLOTS blocks) gives the same answers. With 4 threads the batch runs in 4
    parts at once (whatever the CPUs here), which share the pool and its misses."""
    monkeypatch.setattr(tablebase.probing.engine, "get_num_threads", lambda: threads)
    white, black = load_table(tables_34, key)
    size = IndexScheme.of(key).size
    idx = np.random.default_rng(3).permutation(2 * size)
    calls = []
    values_in_parts = tablebase.probing.engine.values_in_parts

    def counted(*args):
        bounds = inspect.signature(values_in_parts.py_func).bind(*args).arguments["bounds"]
        calls.append(len(bounds) - 1)
        return values_in_parts(*args)

    monkeypatch.setattr(tablebase.probing.engine, "values_in_parts", counted)
    with open_tablebase(tables_34, cache_bytes=cache_bytes) as t:
        wdl, dtm = t.probe_batch_indices(key, (idx // size).reshape(-1, 2), (idx % size).reshape(-1, 2))
        info = t.cache_info()
    assert wdl.shape == dtm.shape == (size, 2)
    assert info.bytes <= max(cache_bytes, info.capacity)
    if cache_bytes > 1 << 20:
        assert info.misses == info.blocks
    assert set(calls) == {threads}
    want_wdl, want_dtm, legal = to_wdl_dtm(np.concatenate([white, black])[idx])
    np.testing.assert_array_equal(wdl.ravel(), np.where(legal, want_wdl, ILLEGAL_WDL))
    np.testing.assert_array_equal(dtm.ravel(), want_dtm)


def test_small_cache_and_threads_give_the_same_answers(tb, tables_34):
    boards = _sample_boards()
    want = [(tb.probe_wdl(b), tb.probe_dtm(b)) for b in boards]
    with open_tablebase(tables_34, cache_bytes=200_000) as small:
        results: list[list] = [[] for _ in range(4)]

        def work(k: int) -> None:
            order = list(range(len(boards)))
            random.Random(k).shuffle(order)
            got = {i: (small.probe_wdl(boards[i]), small.probe_dtm(boards[i])) for i in order}
            results[k] = [got[i] for i in range(len(boards))]

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(r == want for r in results)
        info = small.cache_info()
        assert 0 < info.bytes <= info.capacity == MIN_SLOTS * BYTES_PER_ROW * DEFAULT_CODING.row_group_rows
        assert info.misses > info.blocks  # blocks were evicted and decoded again


# -- the command ------------------------------------------------------------------------

MATE_IN_ONE = "7k/8/6K1/8/8/1Q6/8/8 w - - 0 1"  # Qb8# mates; Qf7, Kh6 and others stalemate


def test_cli_probe_json(tables_34, gaviota, capsys):
    """--json prints lila-tablebase's JSON: the root, and each move by the position after it."""
    assert main(["probe", MATE_IN_ONE, "--tables", str(tables_34), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {k: out[k] for k in ("category", "dtm", "checkmate", "stalemate", "dtz")} == {
        "category": "win", "dtm": 1, "checkmate": False, "stalemate": False, "dtz": 1}
    board = chess.Board(MATE_IN_ONE)
    assert {k: out["moves"][0][k] for k in ("uci", "san", "category", "checkmate", "dtm")} == {
        "uci": "b3b8", "san": "Qb8#", "category": "loss", "checkmate": True, "dtm": None}
    assert sorted(m["uci"] for m in out["moves"]) == sorted(m.uci() for m in board.legal_moves)
    for m in out["moves"]:
        board.push_uci(m["uci"])
        child = gaviota.probe_dtm(board)
        assert m["dtm"] == (None if board.is_checkmate() else child), m
        assert m["stalemate"] == board.is_stalemate() and m["checkmate"] == board.is_checkmate(), m
        board.pop()


def test_cli_probe_text(tables_34, capsys):
    assert main(["probe", "8/8/8/8/8/8/8/K2kr3 w - - 0 1", "--tables", str(tables_34)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "8/8/8/8/8/8/8/K2kr3 w - - 0 1  KRvK, White to move: loss, mated in 5, 10 plies, DTZ -10"
    assert lines[1].split() == ["move", "result", "for", "White", "DTZ", "DTM"]
    assert [line.split() for line in lines[2:]] == [["Kb2", "loss", "-10", "mated", "in", "5,", "10", "plies"],
                                                    ["Kb1", "loss", "-8", "mated", "in", "4,", "8", "plies"],
                                                    ["Ka2", "loss", "-6", "mated", "in", "3,", "6", "plies"]]
    assert main(["probe", MATE_IN_ONE, "--tables", str(tables_34)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("KQvK, White to move: win, mate in 1, 1 ply, DTZ 1")
    assert lines[2].split() == ["Qb8#", "win", "1", "checkmate"]
    assert ["Qf7", "draw", "0", "stalemate"] in [line.split() for line in lines]
    # The halfmove clock counts: 95 plies without a capture or pawn move leave too few.
    assert main(["probe", "8/8/8/8/8/8/8/K2kr3 w - - 95 90", "--tables", str(tables_34)]) == 0
    assert "White to move: maybe-loss (halfmove clock 95)" in capsys.readouterr().out
    assert main(["probe", "8/8/8/8/8/2k5/1q6/K7_w_-_-_0_1", "--tables", str(tables_34)]) == 0  # underscores
    assert capsys.readouterr().out.splitlines() == [
        "8/8/8/8/8/2k5/1q6/K7 w - - 0 1  KQvK, White to move: loss, checkmated"]


