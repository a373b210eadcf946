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

Tables are opened lazily, the first time a material is probed: the manifest is read and
every shard's size and Parquet footer are checked then; a shard's sha256 is checked the
first time its values are read. Decoded values live in a bounded LRU cache, shared by
threads.
"""

from __future__ import annotations

import bisect
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple

import chess
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numba import njit

from .endgame.index import D_COLOUR, D_N, D_TYPE, IndexScheme, encode
from .endgame.material import MAX_PIECES, WHITE, normalize_key
from .endgame.pychess import board_squares
from .generate.kernels import DEPTH_MASK, DRAW, ILLEGAL, from_wdl_dtm, to_wdl_dtm
from .store.shards import INDEX_SCHEME, SCHEMA, SIDES, CorruptTableError, ShardInfo, check_shard, read_manifest

__all__ = [
    "BadFenError",
    "CacheInfo",
    "CastlingRightsError",
    "CorruptTableError",
    "ILLEGAL_WDL",
    "IllegalPositionError",
    "MissingTableError",
    "MoveValue",
    "PositionError",
    "Tablebase",
    "TooManyPiecesError",
    "open_tablebase",
]

#: ``wdl`` that :meth:`Tablebase.probe_batch_indices` gives an index that is no legal
#: position (its ``dtm`` is 0). It is negative: test ``wdl == -1`` for losses.
ILLEGAL_WDL = -128


class MissingTableError(KeyError):
    """No table of the board's material was found in the opened folders."""

    def __init__(self, material: str, message: str):
        super().__init__(message)
        self.material = material

    def __str__(self) -> str:
        # KeyError quotes its message; this one is meant to be read.
        return str(self.args[0])


class PositionError(ValueError):
    """A board the tables cannot answer (the ``get_*`` methods return their default)."""


class CastlingRightsError(PositionError):
    """The board has castling rights; tables hold positions without them."""


class TooManyPiecesError(PositionError):
    """The board has more pieces than any table can hold."""


class IllegalPositionError(PositionError):
    """The board is not a legal position (``board.is_valid()`` is false)."""


class BadFenError(ValueError):
    """A FEN python-chess cannot parse."""


@dataclass(frozen=True)
class MoveValue:
    """A legal move and the value of the position after it, seen from the side that
    plays it: ``wdl`` +1 when the move wins, ``dtm`` plies to mate counting the move."""

    move: chess.Move
    wdl: int
    dtm: int


class CacheInfo(NamedTuple):
    """What :meth:`Tablebase.cache_info` reports: decoded blocks (row groups) held, their
    bytes, the bound, and the lookups that found or decoded their block."""

    blocks: int
    bytes: int
    capacity: int
    hits: int
    misses: int


def open_tablebase(path: str | os.PathLike, *, cache_bytes: int = 64 << 20) -> "Tablebase":
    """Open the tables in ``path``: one sub-folder per material holding ``manifest.json``.

    Nothing is read until a material is probed. ``cache_bytes`` bounds the memory of
    decoded values (2 bytes a position).

    >>> with open_tablebase("data/test-tables") as tablebase:
    ...     tablebase.probe_wdl(chess.Board("8/8/8/8/8/2k5/1q6/K7 w - - 0 1"))
    ...
    -1
    """
    tablebase = Tablebase(cache_bytes=cache_bytes)
    tablebase.add_directory(path)
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


@njit("int64(int64[:], boolean, uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64)", cache=True)
def _encode_board(desc, flipped, white, black, kings, queens, rooks, bishops, knights, pawns):
    """Index of a board given by its python-chess bitboards (-1 where the index rejects
    the placement). One compiled call reads the squares off the bitboards in slot order
    and encodes them: a per-piece Python loop and fresh numpy arrays cost three times
    as much."""
    pieces = (kings, queens, rooks, bishops, knights, pawns)  # in PIECE_ORDER
    sq = np.empty(MAX_PIECES, dtype=np.int64)
    tmp = np.empty(MAX_PIECES, dtype=np.int64)
    mirror = 56 if flipped else 0  # the colour flip mirrors the ranks
    one = np.uint64(1)
    group = -1
    bb = np.uint64(0)
    for i in range(desc[D_N]):
        colour, ptype = desc[D_COLOUR + i], desc[D_TYPE + i]
        if colour * 8 + ptype != group:  # the first slot of a group of identical pieces
            group = colour * 8 + ptype
            bb = pieces[ptype] & (white if (colour == WHITE) != flipped else black)
        s = 0
        while not (bb >> np.uint64(s)) & one:
            s += 1
        sq[i] = s ^ mirror
        bb &= bb - one
    return encode(desc, sq, tmp)


def _illegal(board: chess.Board, status: chess.Status) -> IllegalPositionError:
    flags = ", ".join(f.name.lower().replace("_", " ") for f in chess.Status if f & status)
    return IllegalPositionError(f"illegal position ({flags}): {board.fen()}")


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


# The value encoding as Python ints, for the per-position path.
_DRAW, _ILLEGAL, _DEPTH_MASK = int(DRAW), int(ILLEGAL), int(DEPTH_MASK)


def _decode_value(v: int) -> tuple[int, int]:
    if v == _DRAW:
        return 0, 0
    d = v & _DEPTH_MASK
    return (1, d) if d & 1 else (-1, -d)


# Final value -> (wdl, dtm), for vectorised gathers.
_WDL_OF, _DTM_OF, _legal = to_wdl_dtm(np.arange(1 << 16, dtype=np.uint16))
_WDL_OF[~_legal] = ILLEGAL_WDL
_DTM_OF[~_legal] = 0
del _legal


class _Shard:
    """One Parquet shard, its footer parsed once, its sha256 checked before its first
    read. Its blocks (the unit of decoding and caching) are its row groups."""

    def __init__(self, folder: Path, material: str, info: ShardInfo):
        self.folder, self.info = folder, info
        self.start = info.start
        self.path = folder / info.file
        check_shard(folder, info, hash_check=False)
        try:
            self.file = pq.ParquetFile(self.path, memory_map=True)
        except (OSError, pa.ArrowException) as e:
            raise CorruptTableError(f"{self.path}: unreadable Parquet footer ({e})") from e
        try:
            self.block_rows = self._check_footer(material)
        except BaseException:
            self.file.close()
            raise
        self._lock = threading.Lock()
        self._verified = False

    def _check_footer(self, material: str) -> int:
        """Raise CorruptTableError unless the footer describes this shard; return the
        rows of a row group."""
        info = self.info
        try:
            meta = self.file.schema_arrow.metadata or {}
            schema = self.file.schema_arrow.remove_metadata()
            num_rows = self.file.metadata.num_rows
            rg_rows = [self.file.metadata.row_group(i).num_rows for i in range(self.file.num_row_groups)]
        except (OSError, pa.ArrowException) as e:
            raise CorruptTableError(f"{self.path}: unreadable Parquet footer ({e})") from e
        expected = {"material": material, "side": info.side, "start": str(info.start), "stop": str(info.stop),
                    "index_scheme": INDEX_SCHEME}
        for k, v in expected.items():
            found = meta.get(f"tablebase.{k}".encode(), b"").decode(errors="replace")
            if found != v:
                raise CorruptTableError(f"{self.path}: footer says {k}={found!r}, the manifest {v!r}")
        if not schema.equals(SCHEMA):
            raise CorruptTableError(f"{self.path}: columns {schema}, expected wdl int8, dtm int16")
        if num_rows != info.rows or info.rows != info.stop - info.start:
            raise CorruptTableError(f"{self.path}: {num_rows} rows, the manifest says {info.rows}")
        # Row groups of one size (the last may be shorter) make a row's block a division.
        if not rg_rows or any(r != rg_rows[0] for r in rg_rows[:-1]) or rg_rows[-1] > rg_rows[0]:
            raise CorruptTableError(f"{self.path}: row groups of sizes {rg_rows[:3]}...{rg_rows[-1:]}, "
                                    "expected equal ones")
        return rg_rows[0]

    def load(self, block: int) -> np.ndarray:
        """Decoded final values (uint16) of one row group."""
        with self._lock:  # a ParquetFile is not safe for concurrent reads
            if not self._verified:
                check_shard(self.folder, self.info, hash_check=True)
                self._verified = True
            try:
                table = self.file.read_row_group(block)
            except (OSError, pa.ArrowException) as e:
                raise CorruptTableError(f"{self.path}: unreadable Parquet ({e})") from e
        wdl = table.column("wdl")
        legal = wdl.is_valid().to_numpy(zero_copy_only=False)
        values = from_wdl_dtm(wdl.fill_null(0).to_numpy(), table.column("dtm").fill_null(0).to_numpy(), legal)
        values.flags.writeable = False
        return values

    def close(self) -> None:
        self.file.close()


class _Table:
    """A material's manifest and shards, by side to move."""

    def __init__(self, key: str, folder: Path):
        manifest = read_manifest(folder)
        if manifest is None:
            raise CorruptTableError(f"{folder}: manifest.json disappeared")
        if manifest.material != key:
            raise CorruptTableError(f"{folder}: manifest is for {manifest.material}, not {key}")
        self.key = key
        self.scheme = IndexScheme.of(key)
        if manifest.index_size != self.scheme.size or manifest.index_scheme != INDEX_SCHEME:
            raise CorruptTableError(f"{folder}: manifest index {manifest.index_scheme} of size {manifest.index_size}, "
                                    f"this reader's is {INDEX_SCHEME} of size {self.scheme.size}")
        self.shards: tuple[list[_Shard], list[_Shard]] = ([], [])
        try:
            for info in sorted(manifest.shards, key=lambda s: s.start):
                if info.side not in SIDES:
                    raise CorruptTableError(f"{folder}: shard {info.file} has side {info.side!r}")
                side = self.shards[SIDES.index(info.side)]
                if info.start != (side[-1].info.stop if side else 0):
                    raise CorruptTableError(f"{folder}: shard {info.file} starts at {info.start}, leaving a gap "
                                            "or an overlap")
                side.append(_Shard(folder, key, info))
            for side, shards in zip(SIDES, self.shards):
                if (shards[-1].info.stop if shards else 0) != self.scheme.size:
                    raise CorruptTableError(f"{folder}: shards of side {side} do not cover the "
                                            f"{self.scheme.size} indices")
        except BaseException:
            self.close()
            raise
        self.starts = tuple([s.start for s in shards] for shards in self.shards)

    def shard_of(self, stm: int, idx: int) -> _Shard:
        shards = self.shards[stm]
        if len(shards) == 1:
            return shards[0]
        return shards[bisect.bisect_right(self.starts[stm], idx) - 1]

    def close(self) -> None:
        for shards in self.shards:
            for shard in shards:
                shard.close()


class _BlockCache:
    """A thread-safe LRU of decoded blocks, bounded by their bytes."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._blocks: OrderedDict[tuple[_Shard, int], np.ndarray] = OrderedDict()
        self._bytes = 0
        self._hits = self._misses = 0
        self._lock = threading.Lock()

    def get(self, shard: _Shard, block: int) -> np.ndarray:
        key = (shard, block)
        with self._lock:
            values = self._blocks.get(key)
            if values is not None:
                self._blocks.move_to_end(key)
                self._hits += 1
                return values
            self._misses += 1
        # Decoded outside the cache lock, so threads probing other blocks do not wait.
        values = shard.load(block)
        if values.nbytes <= self.capacity:
            with self._lock:
                if key not in self._blocks:
                    self._blocks[key] = values
                    self._bytes += values.nbytes
                    while self._bytes > self.capacity:
                        self._bytes -= self._blocks.popitem(last=False)[1].nbytes
        return values

    def clear(self) -> None:
        with self._lock:
            self._blocks.clear()
            self._bytes = 0

    def info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(len(self._blocks), self._bytes, self.capacity, self._hits, self._misses)


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
        self._directories: set[str] = set()
        self._folders: dict[str, Path] = {}
        self._tables: dict[str, _Table] = {}
        self._lock = threading.Lock()
        self._cache = _BlockCache(cache_bytes)

    def add_directory(self, path: str | os.PathLike) -> int:
        """Add the complete tables (sub-folders named by their material, holding
        ``manifest.json``) of ``path``; return how many were found. A material found in
        several directories is read from the first one added."""
        path = Path(path)
        found = {}
        for entry in sorted(path.iterdir()):
            try:
                key = normalize_key(entry.name)
            except ValueError:
                continue  # not a table folder
            if key == entry.name and (entry / "manifest.json").is_file():
                found[key] = entry
        with self._lock:
            self._directories.add(str(path))
            for key, entry in found.items():
                self._folders.setdefault(key, entry)
        return len(found)

    def close(self) -> None:
        """Close the shard files and drop the cache; later probes find no table."""
        with self._lock:
            for table in self._tables.values():
                table.close()
            self._tables.clear()
            self._folders.clear()
            self._directories.clear()
        self._cache.clear()

    def __enter__(self) -> "Tablebase":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def cache_info(self) -> CacheInfo:
        """Decoded blocks held, their bytes, the bound, and the hits and misses so far."""
        return self._cache.info()

    # -- tables and values --------------------------------------------------------------

    def _table(self, key: str) -> _Table | None:
        """The opened table of ``key``; None for KvK without a table (every legal KvK
        position is a draw); MissingTableError otherwise."""
        table = self._tables.get(key)
        if table is not None:
            return table
        with self._lock:
            table = self._tables.get(key)
            if table is None:
                folder = self._folders.get(key)
                if folder is None:
                    if key == "KvK":
                        return None
                    where = ", ".join(sorted(self._directories)) or "no folder (closed)"
                    raise MissingTableError(key, f"no table for {key} in {where}")
                table = self._tables[key] = _Table(key, folder)
        return table

    def _lookup(self, table: _Table, stm: int, idx: int) -> int:
        shard = table.shard_of(stm, idx)
        block, row = divmod(idx - shard.start, shard.block_rows)
        return int(self._cache.get(shard, block)[row])

    def _locate(self, board: chess.Board) -> tuple[str, int, int]:
        """(material key, side to move in the table, index) of a board without castling
        rights and with at most MAX_PIECES pieces; IllegalPositionError for boards the
        index rejects (kings, pawns on the back rank) and for impossible checks."""
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
        idx = _encode_board(layout.desc, layout.flipped, white, black, k, q, r, b, n, p)
        if idx < 0:
            raise _status_error(board, layout.key)
        # Tables hold every placement where the side not to move is not in check;
        # python-chess also rejects some double checks (three checkers, or two on one
        # line with the king). Only a side with two pieces besides its king can give them.
        them = black if board.turn == chess.WHITE else white
        if them.bit_count() >= 3:
            checkers = board.checkers_mask()
            if checkers & (checkers - 1) and board.status() != chess.STATUS_VALID:
                raise _status_error(board, layout.key)
        return layout.key, int(board.turn == chess.BLACK) ^ layout.flipped, int(idx)

    def _check_probeable(self, board: chess.Board) -> None:
        if board.castling_rights:
            raise CastlingRightsError(f"tables hold no positions with castling rights: {board.fen()}")
        pieces = board.occupied.bit_count()
        if pieces > MAX_PIECES:
            raise TooManyPiecesError(f"{pieces} pieces, tables hold at most {MAX_PIECES}: {board.fen()}")

    def _value(self, board: chess.Board) -> tuple[int, int]:
        """(wdl, dtm) of a board, from the side to move."""
        self._check_probeable(board)
        if board.ep_square is not None:
            return self._value_ep(board)
        return self._value_no_ep(board)

    def _value_no_ep(self, board: chess.Board) -> tuple[int, int]:
        key, stm, idx = self._locate(board)
        table = self._table(key)
        if table is None:
            return 0, 0
        v = self._lookup(table, stm, idx)
        if v == _ILLEGAL:
            raise _status_error(board, key)
        return _decode_value(v)

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
        return self._value(board)[0]

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
        MoveValue(move=Move.from_uci('d1c2'), wdl=1, dtm=5)
        """
        self._value(board)  # raises for boards no table answers
        child = board.copy(stack=False)
        out = []
        for move in board.legal_moves:
            child.push(move)
            out.append(MoveValue(move, *_from_mover(*self._value(child))))
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

    def best_move(self, board: chess.Board) -> chess.Move | None:
        """The fastest win, else a drawing move, else the longest defence; None when the
        side to move has no legal move.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.best_move(chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1"))
        ...
        Move.from_uci('a1b2')
        """
        moves = self.probe_moves(board)
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

    # -- batches ------------------------------------------------------------------------

    def probe_batch_indices(self, material_key: str, stm: np.ndarray | int,
                            index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(wdl int8, dtm int16) of index arrays of one table (``stm``: 0 White to move,
        1 Black, in the table's orientation; a scalar applies to all). Indices that are no
        legal position get ``wdl = ILLEGAL_WDL`` and ``dtm = 0``.

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
        scheme = IndexScheme.of(key) if (table := self._table(key)) is None else table.scheme
        if index.size and (index.min() < 0 or index.max() >= scheme.size):
            raise ValueError(f"{key}: indices must lie in [0, {scheme.size})")
        if stm.size and (stm.min() < 0 or stm.max() > 1):
            raise ValueError("stm must be 0 (White to move) or 1 (Black to move)")
        shape = index.shape
        index, stm = index.ravel(), stm.ravel()
        values = np.empty(index.size, dtype=np.uint16)
        if table is None:  # KvK: every valid placement is a legal draw
            values[:] = np.where(scheme.decode(index)[1], DRAW, ILLEGAL)
        else:
            for side, sel in _split_by(stm):
                idx = index[sel]
                shards = table.shards[side]
                if len(shards) == 1:
                    values[sel] = self._gather(shards[0], idx - shards[0].start)
                    continue
                out = np.empty(idx.size, dtype=np.uint16)
                for s, chunk in _split_by(np.searchsorted(table.starts[side], idx, side="right") - 1):
                    out[chunk] = self._gather(shards[s], idx[chunk] - shards[s].start)
                values[sel] = out
        return _WDL_OF[values].reshape(shape), _DTM_OF[values].reshape(shape)

    def _gather(self, shard: _Shard, rows: np.ndarray) -> np.ndarray:
        out = np.empty(rows.size, dtype=np.uint16)
        blocks = rows // shard.block_rows
        for b, chunk in _split_by(blocks):
            out[chunk] = self._cache.get(shard, b)[rows[chunk] - b * shard.block_rows]
        return out

    def probe_wdl_batch(self, boards: Iterable[chess.Board | str]) -> np.ndarray:
        """:meth:`probe_wdl` of each board or FEN, as an int8 array. Raises like
        :meth:`probe_wdl` (and :exc:`BadFenError`) at the first position it cannot answer.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.probe_wdl_batch(["8/8/8/8/8/8/8/K2kr3 w - - 0 1", "8/8/8/8/8/8/8/K2kr3 b - - 0 1"])
        ...
        array([-1,  1], dtype=int8)
        """
        return self._batch(boards)[0]

    def probe_dtm_batch(self, boards: Iterable[chess.Board | str]) -> np.ndarray:
        """:meth:`probe_dtm` of each board or FEN, as an int16 array.

        >>> with open_tablebase("data/test-tables") as tablebase:
        ...     tablebase.probe_dtm_batch(["8/8/8/8/8/8/8/K2kr3 w - - 0 1", "8/8/8/8/8/8/8/K2kr3 b - - 0 1"])
        ...
        array([-10,   5], dtype=int16)
        """
        return self._batch(boards)[1]

    def _batch(self, boards: Iterable[chess.Board | str]) -> tuple[np.ndarray, np.ndarray]:
        boards = [_board(b) for b in boards]
        wdl = np.empty(len(boards), dtype=np.int8)
        dtm = np.empty(len(boards), dtype=np.int16)
        # Plain boards are located one by one, then gathered per table in one go.
        groups: dict[str, tuple[list[int], list[int], list[int]]] = {}
        for i, board in enumerate(boards):
            self._check_probeable(board)
            if board.ep_square is not None:
                wdl[i], dtm[i] = self._value_ep(board)
                continue
            key, stm, idx = self._locate(board)
            positions, stms, idxs = groups.setdefault(key, ([], [], []))
            positions.append(i)
            stms.append(stm)
            idxs.append(idx)
        for key, (positions, stms, idxs) in groups.items():
            w, d = self.probe_batch_indices(key, np.array(stms), np.array(idxs))
            bad = np.flatnonzero(w == ILLEGAL_WDL)
            if bad.size:
                raise _status_error(boards[positions[bad[0]]], key)
            wdl[positions] = w
            dtm[positions] = d
        return wdl, dtm


def _split_by(keys: np.ndarray) -> Iterator[tuple[int, np.ndarray | slice]]:
    """(key, where it is) for each distinct key of an array of small non-negative ints,
    without a loop per position; a slice when all keys are equal (no copy)."""
    if keys.size == 0:
        return
    lo, hi = int(keys.min()), int(keys.max())
    if lo == hi:
        yield lo, slice(None)
        return
    # A stable sort of 16-bit keys is a radix sort: linear time.
    small = keys.astype(np.uint16) if hi < 1 << 16 else keys
    order = np.argsort(small, kind="stable")
    for chunk in np.split(order, np.flatnonzero(np.diff(small[order])) + 1):
        yield int(keys[chunk[0]]), chunk


def _board(board: chess.Board | str) -> chess.Board:
    if isinstance(board, chess.Board):
        return board
    try:
        return chess.Board(board)
    except ValueError as e:
        raise BadFenError(f"bad FEN {board!r}: {e}") from e
