"""Probe finished tables: python-chess boards in, WDL, DTM and Romano's value out.

Open a folder of tables (one sub-folder per material, as ``tablebase generate`` writes
them) and probe boards the way python-chess probes Syzygy or Gaviota tables:

>>> import chess
>>> from tablebase import open_tablebase
>>> with open_tablebase("data/test-tables") as tablebase:
...     board = chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1")
...     print(tablebase.probe_wdl(board), tablebase.probe_dtm(board))
...
-1 -10

Conventions (python-chess's): ``wdl`` is +1 / 0 / -1 from the side to move; ``dtm`` is
plies to mate from the side to move, positive when it wins, negative when it loses, 0 for
draws and for a checkmated side. ``eval`` (Romano) is absolute: +1 White wins, -1 Black
wins. A board with a legal en-passant capture is valued over its moves: the table value
of the same pieces without the en-passant square, and each en-passant capture.

A shard row is a position's value or, where a capture or promotion achieves the value, a
don't-care no better than it (the shards are smaller so): a probe reads the row, then
searches the captures and promotions into the sub-tables (compiled, in
:mod:`tablebase.probing.engine`), so probing a table needs its sub-tables too.

Tables are opened lazily, the first time a material is probed, with the sub-tables its
probes search: the manifests are read and every shard's size and Parquet footer are
checked then; a shard's sha256 is checked the first time its values are read. Decoded
blocks live in a bounded pool, shared by threads.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, NamedTuple

import chess
import numpy as np

from .endgame.index import IndexScheme
from .endgame.material import MAX_PIECES, Material, normalize_key
from .endgame.pychess import board_squares, fen_as_given, illegal_position_error as _illegal
from .errors import (BadFenError, CastlingRightsError, CorruptTableError, IllegalPositionError, MissingMetricError,
                     MissingTableError, PositionError, TableFormatError, TablesFolderError, TooManyPiecesError)
from .generate.values import DRAW, ILLEGAL, ZERO_CURSED, ZERO_WIN, decode_value, dtz_of_stored, to_wdl_dtm
from .probing.engine import Engine, NoSubtable, encode_board
from .store import is_table_folder

__all__ = [
    "BadFenError",
    "CacheInfo",
    "CastlingRightsError",
    "CorruptTableError",
    "ILLEGAL_WDL",
    "IllegalPositionError",
    "MissingMetricError",
    "MissingTableError",
    "MoveValue",
    "PositionError",
    "TableFormatError",
    "Tablebase",
    "TooManyPiecesError",
    "open_tablebase",
    "table_folders",
]

#: ``wdl`` that :meth:`Tablebase.probe_batch_indices` gives an index that is no legal
#: position (its ``dtm`` is 0). It is negative: test ``wdl == -1`` for losses.
ILLEGAL_WDL = -128


#: The folder of tables when neither a path nor ``TABLEBASE_PATH`` names one.
DEFAULT_TABLES = Path("data/tables")

#: Environment variable naming the folders of tables, separated by ``os.pathsep`` (like
#: Stockfish's ``SyzygyPath``): used by :func:`open_tablebase`, the CLI and the server.
TABLEBASE_PATH = "TABLEBASE_PATH"


@dataclass(frozen=True)
class MoveValue:
    """A legal move and the value of the position after it, seen from the side that
    plays it: ``wdl`` +1 when the move wins, ``dtm`` plies to mate counting the move;
    under the 50-move rule, ``dtz`` (as :meth:`Tablebase.probe_dtz`, counting the move:
    a zeroing move that keeps a win is 1) and ``category`` (as
    :meth:`Tablebase.probe_category`, with the clock the move leaves), both None where
    the table after the move holds no DTZ (generated with ``--no-dtz``)."""

    move: chess.Move
    wdl: int
    dtm: int
    dtz: int | None = 0
    category: str | None = "draw"


class CacheInfo(NamedTuple):
    """What :meth:`Tablebase.cache_info` reports: decoded blocks (row groups) held, their
    bytes, the bound, and the lookups that found or decoded their block (``hits`` is a
    lower bound once a batch has run on several threads, which count without atomics)."""

    blocks: int
    bytes: int
    capacity: int
    hits: int
    misses: int


def table_folders(path: str | os.PathLike | Iterable[str | os.PathLike] | None = None) -> list[Path]:
    """The folders of tables to open: ``path`` (one folder or several), else those of the
    ``TABLEBASE_PATH`` environment variable (separated by ``os.pathsep``), else
    ``data/tables``.

    >>> import os
    >>> os.environ["TABLEBASE_PATH"] = os.pathsep.join(["/tables/3-4", "/tables/5"])
    >>> [str(p) for p in table_folders()]
    ['/tables/3-4', '/tables/5']
    >>> del os.environ["TABLEBASE_PATH"]
    """
    if path is None:
        env = os.environ.get(TABLEBASE_PATH, "")
        folders = [Path(p) for p in env.split(os.pathsep) if p]
        return folders or [DEFAULT_TABLES]
    if isinstance(path, (str, os.PathLike)):
        return [Path(path)]
    return [Path(p) for p in path]


def require_folder(path: str | os.PathLike) -> Path:
    """``path`` as a Path; :exc:`~tablebase.errors.TablesFolderError`, saying how to name
    one, where it is no folder."""
    path = Path(path)
    if not path.is_dir():
        where = "" if path.is_absolute() else f" (relative to {Path.cwd()})"
        raise TablesFolderError(
            f"no tables folder {path}{where}: name one (--tables DIR, open_tablebase(DIR)) or set "
            f"{TABLEBASE_PATH}=DIR{os.pathsep}DIR...; tables are made by `tablebase generate --out DIR`")
    return path


def open_tablebase(path: str | os.PathLike | Iterable[str | os.PathLike] | None = None, *,
                   cache_bytes: int = 64 << 20) -> "Tablebase":
    """Open the tables in ``path``: one sub-folder per material, as ``tablebase generate``
    writes them. ``path`` may list several folders; by default the folders of the
    ``TABLEBASE_PATH`` environment variable, else ``data/tables`` (see
    :func:`table_folders`). A folder that does not exist raises
    :exc:`~tablebase.errors.TablesFolderError` naming it.

    Nothing is read until a material is probed. ``cache_bytes`` bounds the pool of
    decoded blocks (4 bytes a position: its row, and its exact value once a probe found
    it), which holds at least 64 blocks.

    >>> with open_tablebase("data/test-tables") as tablebase:
    ...     tablebase.probe_wdl(chess.Board("8/8/8/8/8/2k5/1q6/K7 w - - 0 1"))
    ...
    -1
    """
    tablebase = Tablebase(cache_bytes=cache_bytes)
    try:
        for folder in table_folders(path):
            tablebase.add_directory(folder)
    except BaseException:
        tablebase.close()
        raise
    return tablebase


class _Layout(NamedTuple):
    """A material as boards show it: its table, whether Black holds the table's white
    (left-hand) side, and the table's index descriptor."""

    key: str
    flipped: bool
    desc: np.ndarray


def _layout(board: chess.Board) -> _Layout:
    material, flipped, _, _ = board_squares(board)
    return _Layout(material.key, flipped, IndexScheme.of(material).desc)


# Layouts by the counts of each non-king piece of each colour: material.py and
# board_squares answer once per material, then the squares come straight off the
# bitboards (board_squares costs ~20 us a call).
_LAYOUTS: dict[tuple[int, ...], _Layout] = {}
# Scratch space of encode_board (the kernels hold the GIL: one call at a time).
_SQ, _TMP = np.empty(16, dtype=np.int64), np.empty(16, dtype=np.int64)


def _status_error(board: chess.Board, key: str) -> Exception:
    """The error for a board that its index or table rejects: python-chess says why, or
    the table is wrong."""
    status = board.status()
    if status == chess.STATUS_VALID:
        return CorruptTableError(f"{key}: the table has no value for the legal position {board.fen()}")
    return _illegal(board, status)


def _from_mover(wdl: int, dtm: int) -> tuple[int, int]:
    """The value of a position, seen from the side that moved into it (one ply more)."""
    if wdl > 0:
        return -1, -dtm - 1
    if wdl < 0:
        return 1, 1 - dtm
    return 0, 0


def _rank(value: tuple[int, int]) -> tuple[int, int]:
    """Larger is better for the side to move: wins by fewer plies, then draws, then
    losses by more plies."""
    return value[0], -value[1]


# Exact code -> (wdl, dtm), for vectorised gathers.
_WDL_OF, _DTM_OF, _legal = to_wdl_dtm(np.arange(1 << 16, dtype=np.uint16))
_WDL_OF[~_legal] = ILLEGAL_WDL
_DTM_OF[~_legal] = 0
del _legal


class Tablebase:
    """Tables of several materials, probed with python-chess boards.

    Use :func:`open_tablebase`. Errors: :exc:`MissingTableError` (a :exc:`KeyError`) when
    the material's table was not found; :exc:`PositionError` (a :exc:`ValueError`:
    :exc:`CastlingRightsError`, :exc:`TooManyPiecesError`, :exc:`IllegalPositionError`)
    for boards no table answers; :exc:`CorruptTableError` (a :exc:`ValueError`) when a
    shard does not match its manifest. The ``get_*`` twins return a default for the first
    two kinds; corruption always raises.
    """

    def __init__(self, *, cache_bytes: int = 64 << 20):
        if cache_bytes < 0:
            raise ValueError(f"cache_bytes must be >= 0, not {cache_bytes}")
        self._directories: list[str] = []
        self._folders: dict[str, Path] = {}
        self._lock = threading.Lock()
        self._engine = Engine(self._folders.get, cache_bytes)
        self._cache_bytes = cache_bytes
        self._dtz: Engine | None = None

    def add_directory(self, path: str | os.PathLike) -> int:
        """Add the complete tables (sub-folders named by their material, holding the
        manifests) of ``path``; return how many were found. A material found in several
        directories is read from the first one added. A folder that does not exist raises
        :exc:`~tablebase.errors.TablesFolderError`."""
        path = require_folder(path)
        found = {}
        for entry in sorted(path.iterdir()):
            try:
                key = normalize_key(entry.name)
            except ValueError:
                continue  # not a table folder
            if key == entry.name and is_table_folder(entry):
                found[key] = entry
        with self._lock:
            if str(path) not in self._directories:
                self._directories.append(str(path))
            for key, entry in found.items():
                self._folders.setdefault(key, entry)
        return len(found)

    @property
    def directories(self) -> list[str]:
        """The folders added, in the order they are searched.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.directories
        ['data/test-tables']
        """
        with self._lock:
            return list(self._directories)

    @property
    def cache_bytes(self) -> int:
        """The bound of the pool of decoded blocks, as opened."""
        return self._cache_bytes

    def close(self) -> None:
        """Close the shard files and drop the cache; later probes find no table."""
        with self._lock:
            self._engine.close()
            if self._dtz is not None:
                self._dtz.close()
            self._folders.clear()
            self._directories.clear()

    def __enter__(self) -> "Tablebase":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def cache_info(self) -> CacheInfo:
        """Decoded blocks held, their bytes, the bound, and the hits and misses so far."""
        return CacheInfo(*self._engine.cache_info())

    def preload(self) -> list[str]:
        """Decode whole tables into the pool of decoded blocks, smallest first, while they
        fit: probes of them then read no shard. Return the tables loaded.

        >>> with open_tablebase("data/test-tables", cache_bytes=1 << 30) as tablebase:
        ...     loaded = tablebase.preload()
        ...     before = tablebase.cache_info()
        ...     tablebase.probe_dtm(chess.Board("8/8/3r4/4k3/8/8/Q7/K7 w - - 0 1"))
        ...     loaded == tablebase.materials(), before.misses == before.blocks == tablebase.cache_info().misses
        ...
        65
        (True, True)
        """
        loaded = _preload(self._engine, self.materials())
        _preload(self._dtz_engine(), loaded)  # the dtz column's blocks too, in its own pool
        return loaded

    # -- tables and values --------------------------------------------------------------

    def _missing(self, key: str, needed_by: str | None = None) -> MissingTableError:
        if not self._directories:
            return MissingTableError(key, f"no table for {key}: no folder opened (closed)")
        why = f" (a probe of {needed_by} searches its captures and promotions there)" if needed_by else ""
        return MissingTableError(key, f"no table for {key} in {', '.join(self._directories)}{why}; make it with: "
                                      f"tablebase generate {key} --out {self._directories[0]}")

    def materials(self) -> list[str]:
        """The materials whose tables the opened folders hold, smallest first.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.materials()[:3]
        ...
        ['KvK', 'KBvK', 'KNvK']
        """
        with self._lock:
            return sorted(self._folders, key=lambda k: (len(k), k))

    def largest_table(self) -> int:
        """Pieces of the largest table in the opened folders (2 when there is none: KvK
        needs no table).

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.largest_table()
        ...
        4
        """
        return max((Material.parse(key).num_pieces for key in self.materials()), default=2)

    def _table(self, key: str) -> int | None:
        """The engine's id of ``key``'s table, opened on first use; None for KvK without a
        table (every legal KvK position is a draw); MissingTableError otherwise."""
        t = self._engine.table_id(key)
        if t is None and key != "KvK":
            raise self._missing(key)
        return t

    def _code(self, key: str, stm: int, idx: int, wdl_only: bool = False) -> int:
        """Exact code of a legal index (DRAW for KvK without a table)."""
        t = self._table(key)
        if t is None:
            return int(DRAW)
        try:
            return self._engine.value(t, stm, idx, wdl_only)
        except NoSubtable as e:
            raise self._missing(e.material, key) from None

    def _layout(self, board: chess.Board) -> tuple[_Layout, tuple[int, ...]]:
        """The board's layout and its bitboards (white, black, kings, queens, rooks,
        bishops, knights, pawns); IllegalPositionError without one king a side."""
        white, black = board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK]
        k, q, r, b, n, p = board.kings, board.queens, board.rooks, board.bishops, board.knights, board.pawns
        wk, bk = k & white, k & black
        if not wk or not bk or wk & (wk - 1) or bk & (bk - 1):
            raise _illegal(board, board.status())
        sig = ((q & white).bit_count(), (r & white).bit_count(), (b & white).bit_count(), (n & white).bit_count(),
               (p & white).bit_count(), (q & black).bit_count(), (r & black).bit_count(), (b & black).bit_count(),
               (n & black).bit_count(), (p & black).bit_count())
        layout = _LAYOUTS.get(sig)
        if layout is None:
            layout = _LAYOUTS[sig] = _layout(board)
        return layout, (white, black, k, q, r, b, n, p)

    def _check_rare_checks(self, board: chess.Board, key: str) -> None:
        # Tables hold every placement where the side not to move is not in check;
        # python-chess also rejects some double checks (three checkers, or two on one
        # line with the king). Only a side with two pieces besides its king can give them.
        them = board.occupied_co[not board.turn]
        if them.bit_count() >= 3:
            checkers = board.checkers_mask()
            if checkers & (checkers - 1) and board.status() != chess.STATUS_VALID:
                raise _status_error(board, key)

    def _locate(self, board: chess.Board) -> tuple[str, int, int]:
        """(material key, side to move in the table, index) of a board without castling
        rights and with at most MAX_PIECES pieces; IllegalPositionError for boards the
        index rejects (kings, pawns on the back rank) and for impossible checks."""
        layout, bitboards = self._layout(board)
        stm = int(board.turn == chess.BLACK) ^ layout.flipped
        idx = encode_board(layout.desc, layout.flipped, *bitboards, stm, _SQ, _TMP)
        if idx < 0:
            raise _status_error(board, layout.key)
        self._check_rare_checks(board, layout.key)
        return layout.key, stm, int(idx)

    def _check_probeable(self, board: chess.Board) -> None:
        if board.castling_rights:
            given = fen_as_given(board)
            rights = given.split()[2]
            why = "" if board.clean_castling_rights() else " (which this position cannot have either)"
            raise CastlingRightsError(f"castling rights {rights}{why}: tables hold positions without castling "
                                      f"rights: {given}")
        pieces = board.occupied.bit_count()
        if pieces > MAX_PIECES:
            where = ", ".join(self._directories) or "no folder (closed)"
            raise TooManyPiecesError(f"{pieces} pieces: the largest table in {where} has {self.largest_table()} "
                                     f"(tables can have at most {MAX_PIECES}): {fen_as_given(board)}")

    def _value(self, board: chess.Board, wdl_only: bool = False) -> tuple[int, int]:
        """(wdl, dtm) of a board, from the side to move (``wdl_only``: the dtm is not)."""
        self._check_probeable(board)
        if board.ep_square is not None:
            return self._value_ep(board)
        return self._value_no_ep(board, wdl_only)

    def _value_no_ep(self, board: chess.Board, wdl_only: bool = False) -> tuple[int, int]:
        layout, bitboards = self._layout(board)
        t = self._engine.table_id(layout.key)
        if t is None:
            self._locate(board)  # an illegal board says so first, as when its table is present
            if layout.key == "KvK":  # every legal KvK placement is a draw
                return 0, 0
            raise self._missing(layout.key)
        stm = int(board.turn == chess.BLACK) ^ layout.flipped
        try:
            code = self._engine.board_value(t, layout.flipped, bitboards, stm, wdl_only)
        except NoSubtable as e:
            raise self._missing(e.material, layout.key) from None
        if code < 0:
            raise _status_error(board, layout.key)
        self._check_rare_checks(board, layout.key)
        return decode_value(code)

    def _value_ep(self, board: chess.Board) -> tuple[int, int]:
        # The en-passant square passes the cheap checks above unseen: ask python-chess.
        status = board.status()
        if status != chess.STATUS_VALID:
            raise _illegal(board, status)
        if not board.has_legal_en_passant():
            return self._value_no_ep(board)
        child = board.copy(stack=False)
        values = []
        # The table's position has the board's moves but the en-passant captures; when
        # those are all it has, the table scores a mate or stalemate this board is not.
        if any(not board.is_en_passant(m) for m in board.generate_legal_moves()):
            values.append(self._value_no_ep(board))
        for move in board.generate_legal_ep():
            child.push(move)
            values.append(_from_mover(*self._value(child)))
            child.pop()
        return max(values, key=_rank)

    # -- single probes ------------------------------------------------------------------

    def probe_wdl(self, board: chess.Board) -> int:
        """+1 if the side to move wins, 0 draw, -1 loss (the 50-move rule ignored).

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.probe_wdl(chess.Board("8/8/8/8/8/8/8/K2kr3 b - - 0 1"))
        ...
        1
        """
        return self._value(board, wdl_only=True)[0]

    def probe_dtm(self, board: chess.Board) -> int:
        """Plies to mate: positive if the side to move wins, negative if it loses, 0 for
        draws and for a checkmated side (Gaviota's convention).

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.probe_dtm(chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1"))
        ...
        -10
        """
        return self._value(board)[1]

    def probe_eval(self, board: chess.Board) -> int:
        """Romano's ``eval``: +1 if White wins, -1 if Black wins, 0 for a draw.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.probe_eval(chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1"))
        ...
        -1
        """
        wdl = self._value(board)[0]
        return wdl if board.turn == chess.WHITE else -wdl

    def probe_depth(self, board: chess.Board, g: bool | int) -> int | None:
        """Romano's ``d_g``: plies until ``g`` (``chess.WHITE`` or +1, ``chess.BLACK`` or
        -1) mates, or None when ``g`` does not win. 0 when the other side is checkmated.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     board = chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1")
        ...     tablebase.probe_depth(board, chess.BLACK), tablebase.probe_depth(board, chess.WHITE)
        ...
        (10, None)
        """
        if isinstance(g, (bool, np.bool_)):
            white = bool(g)
        elif g in (1, -1):
            white = g == 1
        else:
            raise ValueError(f"g is chess.WHITE / chess.BLACK or +1 / -1, not {g!r}")
        wdl, dtm = self._value(board)
        if wdl == 0 or (wdl > 0) != (board.turn == white):
            return None
        return abs(dtm)

    def probe_moves(self, board: chess.Board) -> list[MoveValue]:
        """Every legal move with the value after it, from the mover's side, best first
        (as on Lichess): wins by the fastest mate, then draws, then losses by the longest
        resistance. Empty for a checkmate or stalemate.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.probe_moves(chess.Board("8/8/8/8/8/8/8/K2kr3 b - - 0 1"))[0]
        ...
        MoveValue(move=Move.from_uci('d1c2'), wdl=1, dtm=5, dtz=5, category='win')
        """
        self._value(board)  # raises for boards no table answers
        child = board.copy(stack=False)
        out = []
        for move in board.legal_moves:
            zeroing = board.is_zeroing(move)
            child.push(move)
            wdl, dtm = _from_mover(*self._value(child))
            try:
                row = self._dtz_row(child)
            except MissingMetricError:
                out.append(MoveValue(move, wdl, dtm, None, None))
            else:
                mover_row = (_zeroing_row(dtz_of_stored(row)[0]) if zeroing
                             else -row if row < 0 else -row - 2 if row else 0)
                out.append(MoveValue(move, wdl, dtm, dtz_of_stored(mover_row)[1],
                                     _NEGATED_CATEGORY[_category(child, row)]))
            child.pop()
        out.sort(key=lambda m: (-m.wdl, m.dtm))
        return out

    def never_lose_moves(self, board: chess.Board) -> list[chess.Move]:
        """The moves after which the side to move does not lose, best first: the winning
        moves by the fastest mate (as :meth:`winning_moves`), then the drawing moves in
        the order of the legal moves. Empty in a lost position. Playing the first of them
        each turn never loses a drawn or won game, and wins a won one.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     [m.uci() for m in tablebase.never_lose_moves(chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1"))]
        ...
        []
        >>> with open_tablebase("data/test-tables") as tablebase:  # the queen is en prise: only Kxc2 draws
        ...     [m.uci() for m in tablebase.never_lose_moves(chess.Board("8/8/8/8/8/2k5/2Q5/5K2 b - - 0 1"))]
        ...
        ['c3c2']
        """
        return [m.move for m in self.probe_moves(board) if m.wdl >= 0]

    def winning_moves(self, board: chess.Board) -> list[chess.Move]:
        """The moves that keep a win, fastest mate first (empty where the side to move
        does not win). Each makes progress: after it the winner mates in fewer plies.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     [m.uci() for m in tablebase.winning_moves(chess.Board("8/8/8/8/8/8/8/K2kr3 b - - 0 1"))][:3]
        ...
        ['d1c2', 'd1c1', 'e1e3']
        """
        return [m.move for m in self.probe_moves(board) if m.wdl > 0]

    def best_move(self, board: chess.Board, *, fifty_move_rule: bool = False) -> chess.Move | None:
        """The fastest win, else a drawing move, else the longest defence; None when the
        side to move has no legal move.

        With ``fifty_move_rule``, the board's halfmove clock counts: the move keeps the
        best category the position has (:meth:`probe_category`), the win in hand before
        anything else, and is the fastest mate among the moves that keep it (so where the
        fastest mate would let the clock run out, a move that zeroes it in time); a lost
        side holds out for the claim of a draw where it can, else the longest.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.best_move(chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1"))
        ...
        Move.from_uci('a1b2')
        """
        moves = self.probe_moves(board)
        if fifty_move_rule:
            without = next((m.move for m in moves if m.category is None), None)
            if without is not None:  # a table holds no DTZ: its MissingMetricError names it
                child = board.copy(stack=False)
                child.push(without)
                self._dtz_row(child)
            moves.sort(key=lambda m: -CATEGORIES.index(m.category))
        return moves[0].move if moves else None

    # -- get_* twins: a default instead of an error for boards no table answers -------

    def get_wdl(self, board: chess.Board, default: int | None = None) -> int | None:
        """Like :meth:`probe_wdl`, but ``default`` when no table answers the board."""
        try:
            return self.probe_wdl(board)
        except (MissingTableError, PositionError):
            return default

    def get_dtm(self, board: chess.Board, default: int | None = None) -> int | None:
        """Like :meth:`probe_dtm`, but ``default`` when no table answers the board."""
        try:
            return self.probe_dtm(board)
        except (MissingTableError, PositionError):
            return default

    def get_eval(self, board: chess.Board, default: int | None = None) -> int | None:
        """Like :meth:`probe_eval`, but ``default`` when no table answers the board."""
        try:
            return self.probe_eval(board)
        except (MissingTableError, PositionError):
            return default

    def get_depth(self, board: chess.Board, g: bool | int, default: int | None = None) -> int | None:
        """Like :meth:`probe_depth`, but ``default`` when no table answers the board
        (``None`` stays the answer when ``g`` does not win)."""
        try:
            return self.probe_depth(board, g)
        except (MissingTableError, PositionError):
            return default

    # -- the 50-move rule ---------------------------------------------------------------

    def _dtz_engine(self) -> Engine:
        """The engine of the ``dtz`` column (its own pool), made on first use."""
        with self._lock:
            if self._dtz is None:
                self._dtz = Engine(self._folders.get, self._cache_bytes, column="dtz")
            return self._dtz

    def _dtz_row(self, board: chess.Board) -> int:
        """The board's DTZ50'' as stored (``+e`` a win, ``0`` a draw, ``-(e + 1)`` a loss,
        ``e`` plies to the next zeroing move, from the side to move), the clock at 0."""
        self._check_probeable(board)
        if board.ep_square is not None:
            status = board.status()
            if status != chess.STATUS_VALID:
                raise _illegal(board, status)
            if board.has_legal_en_passant():
                return self._dtz_ep(board)
        key, stm, idx = self._locate(board)
        engine = self._dtz_engine()
        t = engine.table_id(key)
        if t is None:
            if key == "KvK":
                return 0
            raise self._missing(key)
        reader = engine.readers[t]
        if not reader.manifest.has_dtz:
            raise reader.missing_dtz()
        return engine.row(t, stm, idx)

    def _dtz_ep(self, board: chess.Board) -> int:
        # As _value_ep: the table's position, unless the en-passant captures are all the
        # board's moves, and the captures, which zero the clock.
        options = []
        if any(not board.is_en_passant(m) for m in board.generate_legal_moves()):
            plain = board.copy(stack=False)
            plain.ep_square = None
            options.append(self._dtz_row(plain))
        child = board.copy(stack=False)
        for move in board.generate_legal_ep():
            child.push(move)
            options.append(_zeroing_row(dtz_of_stored(self._dtz_row(child))[0]))
            child.pop()
        return max(options, key=_dtz_rank)

    def probe_wdl50(self, board: chess.Board) -> int:
        """The result under the 50-move rule, the halfmove clock taken as 0: 2 win, 1
        cursed win (won, but not within the rule), 0 draw, -1 blessed loss, -2 loss; the
        values of python-chess's :meth:`chess.syzygy.Tablebase.probe_wdl`.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.probe_wdl50(chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1"))
        ...
        -2
        """
        return dtz_of_stored(self._dtz_row(board))[0]

    def probe_dtz(self, board: chess.Board) -> int:
        """Syzygy's DTZ50'', exact (Syzygy's files may round it): plies to the next capture,
        pawn move or mate under optimal play with the 50-move rule, the halfmove clock
        taken as 0; positive when the side to move wins, negative when it loses, 0 for a
        draw. A win or loss past 100 plies is cursed or blessed, and a zeroing move into a
        cursed or blessed position counts 101 plies. The values of python-chess's
        :meth:`chess.syzygy.Tablebase.probe_dtz` (-1 for a checkmated side), unrounded.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.probe_dtz(chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1"))
        ...
        -10
        """
        return dtz_of_stored(self._dtz_row(board))[1]

    def probe_category(self, board: chess.Board) -> str:
        """The result with the board's halfmove clock ``c``, in Lichess's words: ``win``,
        ``maybe-win``, ``cursed-win``, ``draw``, ``blessed-loss``, ``maybe-loss``, ``loss``.

        With DTZ ``n`` (:meth:`probe_dtz`, exact): a win is ``win`` if ``c + n <= 100``
        (the next zeroing move or mate comes before either side may claim a draw), else
        ``maybe-win`` (the defender may claim one first); a loss of ``-n`` is ``loss`` if
        ``c + n <= 100``, else ``maybe-loss``; cursed wins, blessed losses and draws stay
        what :meth:`probe_wdl50` says. From ``c >= 150`` (the 75-move rule) the game is
        drawn, a ``draw``; a checkmated side is a ``loss`` whatever the clock.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     board = chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1")
        ...     tablebase.probe_category(board), tablebase.probe_category(chess.Board(board.fen().replace("0 1", "95 80")))
        ...
        ('loss', 'maybe-loss')
        """
        clock = board.halfmove_clock
        if clock < 0:
            raise PositionError(f"halfmove clock {clock} is negative: {board.fen()}")
        return _category(board, self._dtz_row(board))

    def get_wdl50(self, board: chess.Board, default: int | None = None) -> int | None:
        """Like :meth:`probe_wdl50`, but ``default`` when no table answers the board."""
        try:
            return self.probe_wdl50(board)
        except (MissingTableError, PositionError):
            return default

    def get_dtz(self, board: chess.Board, default: int | None = None) -> int | None:
        """Like :meth:`probe_dtz`, but ``default`` when no table answers the board."""
        try:
            return self.probe_dtz(board)
        except (MissingTableError, PositionError):
            return default

    def get_category(self, board: chess.Board, default: str | None = None) -> str | None:
        """Like :meth:`probe_category`, but ``default`` when no table answers the board."""
        try:
            return self.probe_category(board)
        except (MissingTableError, PositionError):
            return default

    # -- batches ------------------------------------------------------------------------

    def probe_batch_indices(self, material_key: str, stm: np.ndarray | int,
                            index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(wdl int8, dtm int16) of index arrays of one table (``stm``: 0 White to move,
        1 Black, in the table's orientation; a scalar applies to all). Indices that are no
        legal position get ``wdl = ILLEGAL_WDL`` and ``dtm = 0``. A batch of 2 * 65,536
        indices or more runs on numba's threads (``NUMBA_NUM_THREADS``, one per CPU by
        default), in parts of at least 65,536.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.probe_batch_indices("KQvK", [0, 1], [1000, 1000])
        ...
        (array([ 1, -1], dtype=int8), array([ 15, -16], dtype=int16))
        """
        key = normalize_key(material_key)
        if key != material_key:
            raise ValueError(f"indices belong to the table {key}, not {material_key!r}: give the normal key")
        index = np.asarray(index, dtype=np.int64)
        stm = np.broadcast_to(np.asarray(stm, dtype=np.int64), index.shape)
        table = self._table(key)
        scheme = IndexScheme.of(key)
        if index.size and (index.min() < 0 or index.max() >= scheme.size):
            raise ValueError(f"{key}: indices must lie in [0, {scheme.size})")
        if stm.size and (stm.min() < 0 or stm.max() > 1):
            raise ValueError("stm must be 0 (White to move) or 1 (Black to move)")
        shape = index.shape
        index, stm = index.ravel(), stm.ravel()
        if table is None:  # KvK: every valid placement is a legal draw
            values = np.where(scheme.decode(index)[1], DRAW, ILLEGAL).astype(np.uint16)
        else:
            values = self._codes(key, table, stm, index)
        return _WDL_OF[values].reshape(shape), _DTM_OF[values].reshape(shape)

    def _codes(self, key: str, t: int, stm: np.ndarray, index: np.ndarray, check_legal: bool = True) -> np.ndarray:
        try:
            return self._engine.values(t, stm, index, check_legal)
        except NoSubtable as e:
            raise self._missing(e.material, key) from None

    def probe_wdl_batch(self, boards: Iterable[chess.Board | str], *, default: int | None = None) -> np.ndarray:
        """:meth:`probe_wdl` of each board or FEN, as an int8 array. Without ``default``
        it raises like :meth:`probe_wdl` (and :exc:`BadFenError`) for a position it
        cannot answer; with it, such positions (a missing table or sub-table, castling
        rights, too many pieces, an illegal position, a bad FEN) get ``default`` and the
        others their value.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.probe_wdl_batch(["8/8/8/8/8/8/8/K2kr3 w - - 0 1", "8/8/8/8/8/8/8/K2kr3 b - - 0 1"])
        ...
        array([-1,  1], dtype=int8)
        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.probe_wdl_batch(["8/8/8/8/8/8/8/K2kr3 b - - 0 1", "8/8/8/4k3/8/8/2Q5/K2Rr3 w - - 0 1"],
        ...                               default=ILLEGAL_WDL)
        ...
        array([   1, -128], dtype=int8)
        """
        return self._batch(boards, default, np.int8)[0]

    def probe_dtm_batch(self, boards: Iterable[chess.Board | str], *, default: int | None = None) -> np.ndarray:
        """:meth:`probe_dtm` of each board or FEN, as an int16 array; ``default`` as in
        :meth:`probe_wdl_batch`.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.probe_dtm_batch(["8/8/8/8/8/8/8/K2kr3 w - - 0 1", "8/8/8/8/8/8/8/K2kr3 b - - 0 1"])
        ...
        array([-10,   5], dtype=int16)
        """
        return self._batch(boards, default, np.int16)[1]

    def _batch(self, boards: Iterable[chess.Board | str], default: int | None,
               dtype: type) -> tuple[np.ndarray, np.ndarray]:
        if default is not None:
            info = np.iinfo(dtype)
            if not isinstance(default, (int, np.integer)) or not info.min <= default <= info.max:
                raise ValueError(f"default must be an integer in [{info.min}, {info.max}], not {default!r}")
        boards = list(boards)
        wdl = np.empty(len(boards), dtype=np.int8)
        dtm = np.empty(len(boards), dtype=np.int16)
        answered = np.ones(len(boards), dtype=bool)
        # Plain boards are located one by one, then gathered per table in one go.
        groups: dict[str, tuple[list[int], list[int], list[int]]] = {}
        for i, board in enumerate(boards):
            try:
                board = _board(board)
                self._check_probeable(board)
                if board.ep_square is not None:
                    wdl[i], dtm[i] = self._value_ep(board)
                    continue
                key, stm, idx = self._locate(board)
            except (MissingTableError, PositionError, BadFenError):
                if default is None:
                    raise
                answered[i] = False
                continue
            positions, stms, idxs = groups.setdefault(key, ([], [], []))
            positions.append(i)
            stms.append(stm)
            idxs.append(idx)
        for key, (positions, stms, idxs) in groups.items():
            try:
                t = self._table(key)
                if t is None:
                    values = np.zeros(len(idxs), dtype=np.uint16)  # KvK: located boards are legal draws
                else:
                    values = self._codes(key, t, np.array(stms, dtype=np.int64), np.array(idxs, dtype=np.int64), False)
            except MissingTableError:
                if default is None:
                    raise
                # The table is missing, or a sub-table that some positions' searches need:
                # those get the default, the others their value.
                values = np.array([self._code_or(key, s, i, ILLEGAL) for s, i in zip(stms, idxs)], dtype=np.uint16)
                answered[positions] = values != ILLEGAL
            wdl[positions] = _WDL_OF[values]
            dtm[positions] = _DTM_OF[values]
        if default is not None:
            wdl[~answered] = default if dtype is np.int8 else 0
            dtm[~answered] = default if dtype is np.int16 else 0
        return wdl, dtm

    def _code_or(self, key: str, stm: int, idx: int, missing: int) -> int:
        """Exact code of a legal index, ``missing`` where its table or a sub-table its
        search needs is missing."""
        try:
            return self._code(key, stm, idx)
        except MissingTableError:
            return missing


#: Lichess's categories, worst first for the side to move.
CATEGORIES = ("loss", "maybe-loss", "blessed-loss", "draw", "cursed-win", "maybe-win", "win")
_CATEGORY_OF_WDL50 = {1: "cursed-win", 0: "draw", -1: "blessed-loss"}
_NEGATED_CATEGORY = dict(zip(CATEGORIES, reversed(CATEGORIES)))


def _preload(engine: Engine, keys: list[str]) -> list[str]:
    """Decode whole tables of ``keys`` into ``engine``'s pool, in order, while they fit."""
    # Every table is opened first, so that the pool's block size is settled before it fills.
    tables = [(key, engine.table_id(key)) for key in keys]
    free = engine.slots()
    loaded = []
    for key, t in tables:
        if t is None:  # KvK: no table needed
            loaded.append(key)
            continue
        blocks = engine.blocks(t)
        if blocks > free:
            break
        engine.load_blocks(t)
        free -= blocks
        loaded.append(key)
    return loaded


def _category(board: chess.Board, row: int) -> str:
    """:meth:`Tablebase.probe_category` of a board whose stored DTZ row is ``row``."""
    clock = board.halfmove_clock
    wdl50, dtz = dtz_of_stored(row)
    if board.is_checkmate():
        return "loss"
    if clock >= 150:
        return "draw"
    if wdl50 == 2:
        return "win" if clock + dtz <= 100 else "maybe-win"
    if wdl50 == -2:
        return "loss" if clock - dtz <= 100 else "maybe-loss"
    return _CATEGORY_OF_WDL50[wdl50]


def _dtz_rank(row: int) -> int:
    """Larger is better for the side to move, over stored DTZ rows."""
    if row > 0:
        return (1 << 20) - row
    if row < 0:
        return -(1 << 20) - row
    return 0


def _zeroing_row(child_wdl50: int) -> int:
    """The stored DTZ row a zeroing move gives its mover, from the class of the position
    it reaches (from the side to move there)."""
    return {-2: ZERO_WIN, -1: ZERO_CURSED, 0: 0, 1: -ZERO_CURSED - 1, 2: -ZERO_WIN - 1}[child_wdl50]


def _board(board: chess.Board | str) -> chess.Board:
    if isinstance(board, chess.Board):
        return board
    try:
        return chess.Board(board.replace("_", " "))  # underscores: FENs as in Lichess URLs
    except ValueError as e:
        raise BadFenError(f"bad FEN {board!r}: {e}") from e
