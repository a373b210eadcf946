"""The slow twin of the compiled prober, for tests and benchmarks.

The same rule (a position's value is the better of its row and its best capture or
promotion), computed independently: python-chess generates the moves and makes them,
rows come from whole slices in index order (:meth:`~tablebase.store.TableReader.stored_slice`),
and every capture and promotion is searched, without pruning.
"""

from __future__ import annotations

from pathlib import Path

import chess

from ..endgame.index import IndexScheme
from ..endgame.pychess import board_index
from ..generate.values import decode_value
from ..store import TableReader


class ReferenceProber:
    """``value(board)``: (wdl, dtm) of a legal board without castling rights or an
    en-passant square, from the tables under ``tables``."""

    def __init__(self, tables: Path):
        self.tables = Path(tables)
        self._readers: dict[str, TableReader] = {}
        self._slices: dict[tuple[str, int, int], object] = {}

    def _row(self, key: str, stm: int, idx: int) -> int:
        scheme = IndexScheme.of(key)
        s = int(scheme.slice_of(idx))
        rows = self._slices.get((key, stm, s))
        if rows is None:
            if key not in self._readers:
                self._readers[key] = TableReader(self.tables / key, key)
            rows = self._slices[key, stm, s] = self._readers[key].stored_slice(stm, s)
        return int(rows[idx - scheme.slice_range(s)[0]])

    def value(self, board: chess.Board) -> tuple[int, int]:
        key, stm, idx = board_index(board)
        if key == "KvK" and not (self.tables / key).exists():
            return 0, 0
        best = _rank(*decode_value(self._row(key, stm, idx)))
        for move in board.generate_legal_moves():
            if board.is_capture(move) or move.promotion:
                board.push(move)
                wdl, dtm = self.value(board)
                board.pop()
                best = max(best, _rank(-wdl, _from_child_dtm(wdl, dtm)))
        return _value(best)

    def close(self) -> None:
        for reader in self._readers.values():
            reader.close()


def _from_child_dtm(wdl: int, dtm: int) -> int:
    """The mover's dtm through a successor of value (wdl, dtm) from its side to move."""
    return -dtm - 1 if wdl > 0 else 1 - dtm if wdl < 0 else 0


def _rank(wdl: int, dtm: int) -> tuple[int, int]:
    return wdl, -dtm


def _value(rank: tuple[int, int]) -> tuple[int, int]:
    return rank[0], -rank[1]
