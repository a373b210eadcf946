"""python-chess's golden endgame positions (../shared/oracle/epd) that our 3-4 piece
tables cover: WDL from ``endgame.epd`` (the sign of ``wdl`` for Romano's eval, ``wdl`` itself
and ``dtz`` for the 50-move rule's values) and mate distance from ``endgame-dm-4.epd``."""

from __future__ import annotations

import sys
from pathlib import Path

import chess

import tablebase

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from check_oracle import dtz_agrees  # noqa: E402


def epd_positions(path):
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        board, ops = chess.Board.from_epd(line)
        if len(board.piece_map()) <= 4 and not board.castling_rights:
            yield board, ops


def test_endgame_epd_wdl(tables_34, oracle_dir):
    positions = list(epd_positions(oracle_dir / "epd" / "endgame.epd"))
    assert len(positions) >= 100
    with tablebase.open_tablebase(tables_34) as tb:
        for board, ops in positions:
            want = int(ops["wdl"])
            assert tb.probe_wdl(board) == (want > 0) - (want < 0), board.fen()
            # The 50-move rule's values as Syzygy gives them: the golden DTZ is Syzygy's,
            # which some files round to one ply less than our exact value.
            assert tb.probe_wdl50(board) == want, board.fen()
            assert dtz_agrees(tb.probe_dtz(board), int(ops["dtz"])), board.fen()


def test_endgame_dm_epd_mate_distance(tables_34, oracle_dir):
    positions = list(epd_positions(oracle_dir / "epd" / "endgame-dm-4.epd"))
    assert len(positions) >= 40
    with tablebase.open_tablebase(tables_34) as tb:
        for board, ops in positions:
            dm = int(ops["dm"])
            # dm: mate in n moves (n > 0), mated in -n moves (n < 0), 0 for draws and mates.
            want = 2 * dm - 1 if dm > 0 else 2 * dm
            if dm == 0 and board.is_checkmate():
                assert tb.probe_wdl(board) == -1, board.fen()
            assert tb.probe_dtm(board) == want, board.fen()
