"""What the probe library refuses, and how: every error case, the ``get_*`` defaults,
corrupted and truncated shards, and the ``tablebase probe`` command's exits."""

from __future__ import annotations

import random
import shutil

import chess
import numpy as np
import pytest

from tablebase.cli import main
from tablebase.endgame.material import dependency_order
from tablebase.probe import (BadFenError, CastlingRightsError, CorruptTableError, IllegalPositionError,
                             MissingTableError, PositionError, TooManyPiecesError, open_tablebase)

KQVKR_WHITE = chess.Board("8/8/8/4k3/8/8/2Q4r/K7 w - - 0 1")  # a KQvKR board, White to move
KQVKR_BLACK = chess.Board("8/8/8/4k3/8/8/2Q4r/K7 b - - 0 1")


@pytest.fixture(scope="module")
def tb(tables_34):
    with open_tablebase(tables_34) as t:
        yield t


def _all_probes_raise(tb, board: chess.Board, error: type[Exception]) -> None:
    for probe in (tb.probe_wdl, tb.probe_dtm, tb.probe_eval, tb.probe_moves, tb.never_lose_moves, tb.best_move,
                  lambda b: tb.probe_depth(b, chess.WHITE), tb.probe_wdl_batch, tb.probe_dtm_batch):
        with pytest.raises(error):
            probe([board] if probe in (tb.probe_wdl_batch, tb.probe_dtm_batch) else board)


def _get_twins_default(tb, board: chess.Board) -> None:
    assert tb.get_wdl(board) is None and tb.get_dtm(board, 99) == 99
    assert tb.get_eval(board, "x") == "x" and tb.get_depth(board, chess.BLACK, -5) == -5


def test_castling_rights(tb):
    board = chess.Board("r3k3/8/8/8/8/8/8/4K3 b q - 0 1")
    _all_probes_raise(tb, board, CastlingRightsError)
    _get_twins_default(tb, board)


def test_too_many_pieces(tb):
    board = chess.Board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1")
    _all_probes_raise(tb, board, TooManyPiecesError)
    _get_twins_default(tb, board)


def test_missing_table(tb, tables_34):
    board = chess.Board("8/8/8/4k3/8/8/2Q5/K2Rr3 w - - 0 1")  # KQRvKR: five pieces
    _all_probes_raise(tb, board, MissingTableError)
    _get_twins_default(tb, board)
    with pytest.raises(KeyError) as e:
        tb.probe_wdl(board)
    assert e.value.material == "KQRvKR"
    assert str(e.value) == (f"no table for KQRvKR in {tables_34}; make it with: "  # no KeyError quotes
                            f"tablebase generate KQRvKR --out {tables_34}")
    with pytest.raises(MissingTableError, match="KQRvKR"):
        tb.probe_batch_indices("KQRvKR", 0, [0])


ILLEGAL = {
    "kings touch": "8/8/8/8/8/8/8/Kk6 w - - 0 1",
    "side not to move in check": "8/8/8/4k3/8/8/1Q6/K7 w - - 0 1",
    "pawn on the back rank": "P3k3/8/8/8/8/8/8/4K3 w - - 0 1",
    "no black king": "8/8/8/8/8/8/8/K7 w - - 0 1",
    "three kings": "8/8/8/8/8/8/8/K1K1k3 w - - 0 1",
    "two checkers on a line with the king": "R7/8/8/8/k7/8/8/Q6K b - - 0 1",
    "three checkers": "7K/8/8/R3k3/8/2B5/8/4Q3 b - - 0 1",
    "en-passant square without a pawn": "8/8/8/8/8/8/8/K2kr3 w - e6 0 1",
}


@pytest.mark.parametrize("fen", ILLEGAL.values(), ids=ILLEGAL.keys())
def test_illegal_positions(tb, fen):
    board = chess.Board(fen)
    assert not board.is_valid()
    _all_probes_raise(tb, board, IllegalPositionError)
    _get_twins_default(tb, board)


@pytest.mark.parametrize("key", ["KQvKR", "KRRvK", "KPvKP", "KQBvK"])
def test_illegal_exactly_when_python_chess_says_so(tb, key):
    """Random placements, legal or not: a probe answers exactly the valid boards."""
    rng = random.Random(key)
    white, black = key.split("v")
    seen_invalid = seen_valid = 0
    for _ in range(1500):
        board = chess.Board(None)
        for letter, colour, square in zip(white + black, [True] * len(white) + [False] * len(black),
                                          rng.sample(range(64), len(white) + len(black))):
            board.set_piece_at(square, chess.Piece.from_symbol(letter if colour else letter.lower()))
        board.turn = rng.random() < 0.5
        if board.is_valid():
            seen_valid += 1
            assert tb.probe_wdl(board) in (-1, 0, 1), board.fen()
        else:
            seen_invalid += 1
            with pytest.raises(IllegalPositionError):
                tb.probe_wdl(board)
    assert seen_valid and seen_invalid


def test_error_kinds():
    assert issubclass(MissingTableError, KeyError)
    for error in (CastlingRightsError, TooManyPiecesError, IllegalPositionError):
        assert issubclass(error, PositionError) and issubclass(error, ValueError)
    assert issubclass(BadFenError, ValueError) and issubclass(CorruptTableError, ValueError)


def test_bad_fen_in_a_batch(tb):
    with pytest.raises(BadFenError, match="not a fen"):
        tb.probe_wdl_batch(["8/8/8/8/8/8/8/K2kr3 w - - 0 1", "not a fen"])
    with pytest.raises(BadFenError):
        tb.probe_dtm_batch(["8/8/8/8/8/8/8/K2kr3 w - - 0 1 extra"])


def test_bad_arguments(tb):
    board = chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1")
    with pytest.raises(ValueError, match="chess.WHITE"):
        tb.probe_depth(board, 0)
    with pytest.raises(ValueError, match="normal key"):
        tb.probe_batch_indices("KRvKQ", 0, [0])
    with pytest.raises(ValueError, match="indices"):
        tb.probe_batch_indices("KQvKR", 0, [-1])
    with pytest.raises(ValueError, match="indices"):
        tb.probe_batch_indices("KQvKR", 0, [1892352])
    with pytest.raises(ValueError, match="stm"):
        tb.probe_batch_indices("KQvKR", 2, [0])
    with pytest.raises(ValueError, match="cache_bytes"):
        open_tablebase(".", cache_bytes=-1)
    with pytest.raises(FileNotFoundError):
        open_tablebase("no/such/folder")


def test_kvk_without_a_table(tmp_path, tables_34):
    with open_tablebase(tmp_path) as empty, open_tablebase(tables_34) as full:
        board = chess.Board("8/8/8/8/8/2k5/8/K7 b - - 0 1")
        assert (empty.probe_wdl(board), empty.probe_dtm(board), empty.probe_eval(board)) == (0, 0, 0)
        assert len(empty.never_lose_moves(board)) == board.legal_moves.count()
        with pytest.raises(IllegalPositionError):
            empty.probe_wdl(chess.Board("8/8/8/8/8/8/1k6/K7 b - - 0 1"))
        # Index batches: draws where the placement is valid, as in the generated table.
        idx = np.arange(462)
        for stm in (0, 1):
            for got, want in zip(empty.probe_batch_indices("KvK", stm, idx), full.probe_batch_indices("KvK", stm, idx)):
                np.testing.assert_array_equal(got, want)
        with pytest.raises(MissingTableError):
            empty.probe_wdl(KQVKR_WHITE)


def test_closed_tablebase_finds_no_table(tables_34):
    t = open_tablebase(tables_34)
    assert t.probe_wdl(KQVKR_WHITE) == 1
    t.close()
    with pytest.raises(MissingTableError):
        t.probe_wdl(KQVKR_WHITE)


# -- damaged tables: always on a copy ---------------------------------------------------


@pytest.fixture
def kqvkr_copy(tables_34, tmp_path):
    """KQvKR and the sub-tables its probes search."""
    for key in dependency_order(["KQvKR"]):
        shutil.copytree(tables_34 / key, tmp_path / key)
    return tmp_path


def test_flipped_byte_in_the_data(kqvkr_copy):
    shard = kqvkr_copy / "KQvKR" / "side=w" / "00000.parquet"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x01
    shard.write_bytes(bytes(data))
    with open_tablebase(kqvkr_copy) as t:
        assert t.probe_wdl(KQVKR_BLACK) in (-1, 0, 1)  # the other side's shard is intact
        for _ in range(2):  # and stays refused: a failed check marks nothing verified
            with pytest.raises(CorruptTableError, match="side=w/00000.parquet.*sha256"):
                t.probe_wdl(KQVKR_WHITE)
        with pytest.raises(CorruptTableError):
            t.get_wdl(KQVKR_WHITE)  # corruption is never a default
        with pytest.raises(CorruptTableError):
            t.probe_batch_indices("KQvKR", 0, [0, 1, 2])


def test_flipped_byte_in_the_footer(kqvkr_copy):
    shard = kqvkr_copy / "KQvKR" / "side=b" / "00000.parquet"
    data = bytearray(shard.read_bytes())
    data[-20] ^= 0x40
    shard.write_bytes(bytes(data))
    with open_tablebase(kqvkr_copy) as t:
        # Refused when the table opens (unreadable footer, wrong metadata) or at the
        # shard's first read (sha256), depending on what the flipped bit hit.
        with pytest.raises(CorruptTableError, match="side=b/00000.parquet"):
            t.probe_wdl(KQVKR_BLACK)


def test_truncated_shard(kqvkr_copy):
    shard = kqvkr_copy / "KQvKR" / "side=b" / "00000.parquet"
    data = shard.read_bytes()
    shard.write_bytes(data[: len(data) - 1000])
    with open_tablebase(kqvkr_copy) as t:
        with pytest.raises(CorruptTableError, match="side=b/00000.parquet.*truncated"):
            t.probe_wdl(KQVKR_WHITE)  # the size is checked when the table opens


def test_missing_shard(kqvkr_copy):
    (kqvkr_copy / "KQvKR" / "side=w" / "00000.parquet").unlink()
    with open_tablebase(kqvkr_copy) as t:
        with pytest.raises(CorruptTableError, match="side=w/00000.parquet.*missing"):
            t.probe_wdl(KQVKR_BLACK)


def test_folder_holding_another_material(tables_34, tmp_path):
    shutil.copytree(tables_34 / "KQvK", tmp_path / "KRvK")
    with open_tablebase(tmp_path) as t:
        with pytest.raises(CorruptTableError, match="KQvK, not KRvK"):
            t.probe_wdl(chess.Board("8/8/8/8/8/2k5/8/K2R4 w - - 0 1"))


# -- the command --------------------------------------------------------------------------


@pytest.mark.parametrize("fen, message", [
    ("not a fen", "bad FEN 'not a fen'"),
    ("r3k3/8/8/8/8/8/8/4K3 b q - 0 1", "castling rights"),
    ("8/8/8/8/8/8/8/Kk6 w - - 0 1", "illegal position"),
    ("8/8/8/4k3/8/8/2Q5/K2Rr3 w - - 0 1", "no table for KQRvKR in"),
])
def test_cli_probe_errors(tables_34, capsys, fen, message):
    assert main(["probe", fen, "--tables", str(tables_34)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tablebase: error: ") and message in lines[0]


def test_cli_probe_missing_folder(tmp_path, capsys):
    assert main(["probe", "8/8/8/8/8/8/8/K2kr3 w - - 0 1", "--tables", str(tmp_path / "none")]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1
