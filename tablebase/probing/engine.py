"""The compiled prober: exact values from the shards, over a pool of decoded blocks.

A shard row is a position's exact value or, where a capture or promotion achieves the
value, a don't-care no better than it (:mod:`tablebase.generate.values`). So a probe reads
the row, then the captures and promotions of the position (the compiled move generator's
exits) into the sub-tables, recursively, taking the best: a one-ply search per table
level, as Syzygy's probes do. A child whose row already shows it cannot better the best
so far is not searched (its row is a lower bound of its value), so most probes read one
row per exit and search nothing.

The rows come from a pool of decoded row groups (*blocks*) that the kernels read
directly: an open-addressed hash from block keys to slots and CLOCK eviction, all numpy
arrays. A kernel that needs a block the pool lacks returns MISS with the block's key;
:class:`Engine` decodes that row group into the pool and calls again. Tables are
registered (given ids and their exit maps laid out for the kernels) as they are opened.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

import numpy as np
from numba import get_num_threads, njit, prange

from ..endgame.index import D_N, decode, encode, is_valid
from ..endgame.material import MAX_PIECES
from ..endgame.movegen import MAX_MOVES, SQ_BIT, ExitArrays, ExitMap, attacked, exits, may_exit
from ..generate.values import DECIDED, DEPTH_MASK, DRAW, ILLEGAL, rank_of_stored
from ..store import TableReader
from ..store.layout import storage_row

#: An exact code not yet known (exact codes are DRAW, DECIDED + d or ILLEGAL).
UNKNOWN = np.uint16(0xFFFE)
OK, MISS, NO_TABLE = 0, 1, 2
#: Sub-table ids in the registry for a sub-table without one: KvK (every position a
#: draw); the ones not found are -3, -4, ... (see :meth:`Engine._no_subtable`).
DRAWN = -1
#: Exits searched below one probe: one level per capture or promotion.
MAX_LEVELS = MAX_PIECES
#: A pool holds at least this many blocks, so that one probe's search always fits.
MIN_SLOTS = 64
#: Pool bytes per row: the stored value and the exact code once known.
BYTES_PER_ROW = 4
#: Bits of a row within its block in :func:`block_order`'s packed entries.
ROW_BITS = 20
#: Fewest indices a batch gives a thread of its own (fewer: the threads cost more than they save).
PART_INDICES = 1 << 16
#: One parallel kernel at a time in a process: numba's workqueue threading layer, the one
#: every install has, aborts the process when two threads launch kernels at once.
_PARALLEL = threading.Lock()
#: Most sub-tables a table has (20 for 6 pieces; 7 pieces stay below 32).
MAX_SUBTABLES = 32
_EMPTY = np.int64(-1)
_N = MAX_PIECES + 1

# The registry is one int64 row per table (a kernel call unpacks each array argument, so
# few arrays make cheap calls): its index descriptor, king pairs per slice, rows per
# block, storage order per side, sub-table ids, and its exit map padded to 7 pieces.
R_DESC, R_KK, R_ROWS, R_ORDER, R_SUBS = 0, 64, 65, 66, 82
R_EXIT_ID = R_SUBS + MAX_SUBTABLES
R_EXIT_FLIP = R_EXIT_ID + _N * _N * 5
R_EXIT_PERM = R_EXIT_FLIP + _N * _N * 5
R_SUBDESC = R_EXIT_PERM + _N * _N * 5 * _N
R_LEN = R_SUBDESC + MAX_SUBTABLES * 64

# A search's scratch space, one int64 row per level: squares, index scratch, the
# sub-table squares, the board, the exits found, and the level's state.
S_SQ, S_TMP, S_SUB_SQ, S_BOARD = 0, 16, 32, 48
S_SUB, S_STM, S_IDX = 112, 112 + MAX_MOVES, 112 + 2 * MAX_MOVES
S_STATE = 112 + 3 * MAX_MOVES  # table, best rank, next exit, exits, the row's slot and offset
S_LEN = S_STATE + 6

# The pool's index, one int64 array: the CLOCK hand and hit count, then the hash table
# (keys, then slots), then each slot's key and referenced bit.
P_HAND, P_HITS, P_HASH = 0, 1, 2


@njit(cache=True, inline="always")
def _exit_map(reg, t):
    row = reg[t]
    return ExitArrays(row[R_EXIT_ID:R_EXIT_FLIP].reshape((_N, _N, 5)), row[R_EXIT_FLIP:R_EXIT_PERM].reshape((_N, _N, 5)),
                      row[R_EXIT_PERM:R_SUBDESC].reshape((_N, _N, 5, _N)),
                      row[R_SUBDESC:R_LEN].reshape((MAX_SUBTABLES, 64)))


@njit(cache=True, inline="always")
def block_key(t, stm, s, b):
    return (((np.int64(t) << 1 | stm) << 24 | s) << 16) | b


@njit(cache=True, inline="always")
def _home(key, mask):
    h = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64(h >> np.uint64(40)) & mask


@njit(cache=True, inline="always")
def _pool_parts(index, n_slots):
    h = (index.shape[0] - P_HASH - 2 * n_slots) // 2
    return (index[P_HASH:P_HASH + h], index[P_HASH + h:P_HASH + 2 * h],
            index[P_HASH + 2 * h:P_HASH + 2 * h + n_slots], index[P_HASH + 2 * h + n_slots:])


@njit(cache=True, inline="always")
def pool_find(index, n_slots, key):
    ht_key, ht_slot, _, _ = _pool_parts(index, n_slots)
    mask = ht_key.shape[0] - 1
    i = _home(key, mask)
    while True:
        k = ht_key[i]
        if k == key:
            return ht_slot[i]
        if k == _EMPTY:
            return -1
        i = (i + 1) & mask


@njit(cache=True)
def pool_insert(index, n_slots, key):
    """A slot for ``key`` (not in the pool): a free one, else the first one the CLOCK hand
    finds unreferenced since its last pass; its old key leaves the hash table."""
    ht_key, ht_slot, slot_key, ref = _pool_parts(index, n_slots)
    while True:
        s = index[P_HAND]
        index[P_HAND] = (s + 1) % n_slots
        if slot_key[s] == _EMPTY or ref[s] == 0:
            break
        ref[s] = 0
    mask = ht_key.shape[0] - 1
    old = slot_key[s]
    if old != _EMPTY:
        # Backward-shift deletion keeps every probe sequence unbroken.
        i = _home(old, mask)
        while ht_key[i] != old:
            i = (i + 1) & mask
        j = i
        while True:
            j = (j + 1) & mask
            if ht_key[j] == _EMPTY:
                break
            h = _home(ht_key[j], mask)
            if (i <= j and (h <= i or h > j)) or (i > j and h <= i and h > j):
                ht_key[i], ht_slot[i] = ht_key[j], ht_slot[j]
                i = j
        ht_key[i] = _EMPTY
    i = _home(key, mask)
    while ht_key[i] != _EMPTY:
        i = (i + 1) & mask
    ht_key[i], ht_slot[i] = key, s
    slot_key[s] = key
    ref[s] = 1
    return s


@njit(cache=True, inline="always")
def _rank(v):
    """Larger is better for the side to move (exact code, not ILLEGAL)."""
    if v == DRAW:
        return np.int64(0)
    d = np.int64(v & DEPTH_MASK)
    return 32768 - d if d % 2 == 1 else d - 32768


@njit(cache=True, inline="always")
def _from_child(r):
    """The mover's rank through a successor of rank ``r`` (its side to move's)."""
    if r > 0:
        return 1 - r
    if r < 0:
        return -r - 1
    return np.int64(0)


@njit(cache=True, inline="always")
def _code(r):
    if r > 0:
        return DECIDED | np.uint16(32768 - r)
    if r < 0:
        return DECIDED | np.uint16(r + 32768)
    return DRAW


@njit(cache=True, inline="always")
def _slot(reg, vals, index, t, stm, idx, need):
    """(status, slot, offset) of ``idx``'s row in the pool (MISS: the block's key in
    ``need[0]``)."""
    row = reg[t]
    order = row[R_ORDER + 8 * stm:R_ORDER + 8 * stm + 8]
    s, r = storage_row(row[R_DESC:R_KK], order, row[R_KK], idx)
    br = row[R_ROWS]
    b = r // br
    key = block_key(t, stm, s, b)
    n_slots = vals.shape[0]
    slot = pool_find(index, n_slots, key)
    if slot < 0:
        need[0] = key
        return MISS, 0, 0
    index[index.shape[0] - n_slots + slot] = 1  # referenced
    index[P_HITS] += 1
    return OK, slot, r - b * br


@njit(cache=True, inline="always")
def _enter(reg, vals, exact, scratch, level, t, stm, idx, slot, off, wdl_only, decoded):
    """Start the search of ``idx`` (its row at ``slot``/``off``) at ``level``: its row,
    then its exits (none where its row already answers; ``decoded``: its squares are in
    the level's scratch)."""
    w = scratch[level]
    best = rank_of_stored(vals[slot, off])
    w[S_STATE], w[S_STATE + 1], w[S_STATE + 2], w[S_STATE + 3] = t, best, 0, 0
    w[S_STATE + 4], w[S_STATE + 5] = slot, off
    if wdl_only and best > 0:
        return
    desc = reg[t, R_DESC:R_KK]
    sq, board = w[S_SQ:S_TMP], w[S_BOARD:S_SUB]
    if not decoded:
        decode(desc, idx, sq)
    occ = np.uint64(0)
    for i in range(desc[D_N]):
        occ |= SQ_BIT[sq[i]]
    if not may_exit(desc, sq, stm, occ):  # most positions: the row is exact
        return
    for i in range(desc[D_N]):
        board[sq[i]] = i
    exit_map = _exit_map(reg, t)
    # Called, not inlined: inlined at each of the search's entries, the move generation
    # took numba two minutes to compile, where a call per searched position costs nothing
    # measurable; and the generation's kernels call the same compiled copy.
    w[S_STATE + 3] = exits(desc, sq, stm, board, occ, exit_map, w[S_TMP:S_SUB_SQ], w[S_SUB_SQ:S_BOARD],
                           w[S_SUB:S_STM], w[S_STM:S_IDX], w[S_IDX:S_STATE])
    for i in range(desc[D_N]):  # the board stays empty between positions
        board[sq[i]] = -1


@njit(cache=True)
def value_of(reg, vals, exact, index, scratch, t, stm, idx, need, wdl_only, decoded):
    """(status, exact code) of legal index ``idx`` of table ``t``, side ``stm`` to move
    (``decoded``: its squares are in ``scratch[0]``). MISS: a block is missing (its key
    in ``need[0]``); NO_TABLE: a sub-table is (its registry code in ``need[0]``).
    ``wdl_only``: only the wdl of the code is exact, which lets a won position stop at
    its row. Exact codes found are kept in ``exact`` beside their rows (UNKNOWN until
    then), so a position is searched once while its block stays. One level of
    ``scratch`` per capture or promotion: an explicit stack (numba's cache mishandles
    recursive kernels)."""
    status, slot, off = _slot(reg, vals, index, t, stm, idx, need)
    if status != OK:
        return status, DRAW
    return _search(reg, vals, exact, index, scratch, t, stm, idx, slot, off, need, wdl_only, decoded)


@njit(cache=True, inline="always")
def _search(reg, vals, exact, index, scratch, t, stm, idx, slot, off, need, wdl_only, decoded):
    """:func:`value_of` of ``idx``, its row at ``slot``/``off``."""
    if exact[slot, off] != UNKNOWN:
        return OK, exact[slot, off]
    _enter(reg, vals, exact, scratch, 0, t, stm, idx, slot, off, wdl_only, decoded)
    level = 0
    while True:
        w = scratch[level]
        t, best, k, m = w[S_STATE], w[S_STATE + 1], w[S_STATE + 2], w[S_STATE + 3]
        if k < m and best != 32767:  # a mate in one: nothing is better
            w[S_STATE + 2] = k + 1
            ct = reg[t, R_SUBS + w[S_SUB + k]]
            c_stm, c_idx = w[S_STM + k], w[S_IDX + k]
            if ct == DRAWN:
                w[S_STATE + 1] = max(best, 0)
                continue
            if ct < 0:  # not found: need[0] says which
                need[0] = ct
                return NO_TABLE, DRAW
            status, c_slot, c_off = _slot(reg, vals, index, ct, c_stm, c_idx, need)
            if status != OK:
                return status, DRAW
            known = exact[c_slot, c_off]
            if known != UNKNOWN:
                w[S_STATE + 1] = max(best, _from_child(_rank(known)))
                continue
            if _from_child(rank_of_stored(vals[c_slot, c_off])) <= best:
                continue  # its value is at least its row's: it cannot better the best
            level += 1
            _enter(reg, vals, exact, scratch, level, ct, c_stm, c_idx, c_slot, c_off, wdl_only, False)
            continue
        if not wdl_only:
            exact[w[S_STATE + 4], w[S_STATE + 5]] = _code(best)
        if level == 0:
            return OK, _code(best)
        level -= 1
        w = scratch[level]
        w[S_STATE + 1] = max(w[S_STATE + 1], _from_child(best))


@njit(cache=True)
def row_of(reg, vals, index, t, stm, idx, need):
    """(status, stored row) of index ``idx`` of table ``t``: a column whose rows are all
    exact (``dtz``), read without a search."""
    status, slot, off = _slot(reg, vals, index, t, stm, idx, need)
    if status != OK:
        return status, np.int16(0)
    return OK, vals[slot, off]


@njit(cache=True)
def block_order(reg, t, stms, idxs):
    """(order, packed, starts, keys): an order of the indices that visits each block of
    table ``t`` in one run (a counting sort by block); in that order, each one's index,
    side to move and row within its block in one int64 (:func:`_unpack`), read in
    sequence where a gather through ``order`` from arrays of millions would cost more
    than the probe; and the runs, where each starts in that order (and the end) and the
    key of its block, so that :func:`values_of` finds each block once."""
    n = idxs.shape[0]
    row = reg[t]
    desc, kk, br = row[R_DESC:R_KK], row[R_KK], row[R_ROWS]
    blocks_per_slice = (kk * desc[3] + br - 1) // br  # D_R
    slices = (desc[5] + kk * desc[3] - 1) // (kk * desc[3])  # D_SIZE
    buckets = 2 * slices * blocks_per_slice
    bucket = np.empty(n, dtype=np.int64)
    local = np.empty(n, dtype=np.int64)
    counts = np.zeros(buckets + 1, dtype=np.int64)
    for i in range(n):
        stm = stms[i]
        s, r = storage_row(desc, row[R_ORDER + 8 * stm:R_ORDER + 8 * stm + 8], kk, idxs[i])
        bucket[i] = (stm * slices + s) * blocks_per_slice + r // br
        local[i] = r % br
        counts[bucket[i] + 1] += 1
    runs = 0
    for b in range(buckets):
        runs += counts[b + 1] > 0
        counts[b + 1] += counts[b]
    starts = np.empty(runs + 1, dtype=np.int64)
    keys = np.empty(runs, dtype=np.int64)
    k = 0
    for b in range(buckets):
        if counts[b + 1] > counts[b]:
            stm, rest = divmod(b, slices * blocks_per_slice)
            starts[k], keys[k] = counts[b], block_key(t, stm, rest // blocks_per_slice, rest % blocks_per_slice)
            k += 1
    starts[runs] = n
    order = np.empty(n, dtype=np.int64)
    packed = np.empty(n, dtype=np.int64)
    for i in range(n):
        j = counts[bucket[i]]
        counts[bucket[i]] += 1
        order[j] = i
        packed[j] = (idxs[i] << (ROW_BITS + 1)) | (stms[i] << ROW_BITS) | local[i]
    return order, packed, starts, keys


@njit(cache=True, inline="always")
def _unpack(p):
    """(stm, idx, row within its block) of an entry of :func:`block_order`'s ``packed``."""
    return (p >> ROW_BITS) & 1, p >> (ROW_BITS + 1), p & ((1 << ROW_BITS) - 1)


@njit(cache=True)
def values_of(reg, vals, exact, index, scratch, t, order, packed, starts, keys, start, end, out, need, check_legal):
    """:func:`value_of` of many indices of table ``t`` (ILLEGAL for illegal ones when
    ``check_legal``, kept in ``exact`` too), given in :func:`block_order`'s order
    (``packed``, the runs' ``starts`` and ``keys``), from position ``start`` to ``end``
    of it, into ``out`` at their places in ``order``, until done or a probe stops (MISS,
    NO_TABLE: ``need[0]`` says what it lacks). Returns the position reached and the
    status there."""
    desc = reg[t, R_DESC:R_KK]
    w = scratch[0]
    sq, tmp = w[S_SQ:S_TMP], w[S_TMP:S_SUB_SQ]
    n_slots = vals.shape[0]
    run = np.searchsorted(starts, start, side="right") - 1
    i = start
    while i < end:
        slot = pool_find(index, n_slots, keys[run])  # once a run (only Python loads blocks)
        if slot < 0:
            need[0] = keys[run]
            return i, MISS
        index[index.shape[0] - n_slots + slot] = 1  # referenced
        stop = min(end, starts[run + 1])
        index[P_HITS] += stop - i
        while i < stop:
            stm, idx, off = _unpack(packed[i])
            known = exact[slot, off]
            if known == UNKNOWN:
                decode(desc, idx, sq)
                if check_legal and not _legal(desc, stm, idx, sq, tmp):
                    known = exact[slot, off] = ILLEGAL
                else:
                    status, known = _search(reg, vals, exact, index, scratch, t, stm, idx, slot, off, need, False,
                                            True)
                    if status != OK:
                        return i, status
            out[order[i]] = known
            i += 1
        run += 1
    return end, OK


@njit(cache=True, parallel=True)
def values_in_parts(reg, vals, exact, index, scratches, t, order, packed, starts, keys, bounds, done, status, needs,
                    out, check_legal):
    """:func:`values_of` over the parts ``[bounds[p], bounds[p + 1])`` of the order at
    once, a thread each, part ``p`` from ``done[p]`` with ``scratches[p]``; each part's
    position reached and status into ``done`` and ``status`` (what it lacks in
    ``needs[p]``). The parts share the pool: only Python loads blocks, between calls,
    and what they write into it concurrently (an exact code, a referenced bit) is the
    same whichever thread writes it; the hit count may lose increments."""
    for p in prange(bounds.shape[0] - 1):
        if done[p] < bounds[p + 1]:
            done[p], status[p] = values_of(reg, vals, exact, index, scratches[p], t, order, packed, starts, keys,
                                           done[p], bounds[p + 1], out, needs[p], check_legal)


@njit(cache=True, inline="always")
def _legal(desc, stm, idx, sq, tmp):
    """Whether decoded ``sq`` of ``idx`` is a legal position, ``stm`` to move (a valid
    placement, the side not to move not in check)."""
    if not is_valid(desc, idx, sq, tmp):
        return False
    occ = np.uint64(0)
    for i in range(desc[D_N]):
        occ |= SQ_BIT[sq[i]]
    return not attacked(desc, sq, occ, sq[1 - stm], stm, -1)


@njit(cache=True, inline="always")
def _board_index(desc, flipped, white, black, kings, queens, rooks, bishops, knights, pawns, stm, sq, tmp):
    """Index of a board given by its python-chess bitboards, its squares into ``sq``: -1
    where the index rejects the placement, -2 where the side not to move is in check.
    The squares are read off the bitboards in slot order, in the kernel: a per-piece
    Python loop costs far more."""
    pieces = (kings, queens, rooks, bishops, knights, pawns)  # in PIECE_ORDER
    mirror = 56 if flipped else 0  # the colour flip mirrors the ranks
    one = np.uint64(1)
    group = -1
    bb = np.uint64(0)
    occ = np.uint64(0)
    for i in range(desc[D_N]):
        colour, ptype = desc[16 + i], desc[8 + i]  # D_COLOUR, D_TYPE
        if colour * 8 + ptype != group:  # the first slot of a group of identical pieces
            group = colour * 8 + ptype
            bb = pieces[ptype] & (white if (colour == 0) != flipped else black)
        s = 0
        while not (bb >> np.uint64(s)) & one:
            s += 1
        sq[i] = s ^ mirror
        occ |= one << np.uint64(sq[i])
        bb &= bb - one
    idx = encode(desc, sq, tmp)
    if idx >= 0 and attacked(desc, sq, occ, sq[1 - stm], stm, -1):
        return -2
    return idx


@njit("int64(int64[:], boolean, uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, int64, int64[:], "
      "int64[:])", cache=True)
def encode_board(desc, flipped, white, black, kings, queens, rooks, bishops, knights, pawns, stm, sq, tmp):
    """:func:`_board_index` (``flipped``: Black holds the table's white side; ``stm``: the
    side to move in the table)."""
    return _board_index(desc, flipped, white, black, kings, queens, rooks, bishops, knights, pawns, stm, sq, tmp)


@njit("Tuple((int64, uint16))(int64[:, ::1], int16[:, ::1], uint16[:, ::1], int64[::1], int64[:, ::1], int64, "
      "boolean, uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64, int64, int64[::1], boolean)", cache=True)
def probe_board(reg, vals, exact, index, scratch, t, flipped, white, black, kings, queens, rooks, bishops, knights, pawns,
                stm, need, wdl_only):
    """(status, exact code) of a board in table ``t``, as :func:`encode_board` gives it:
    status -1 or -2 where :func:`_board_index` rejects it, else :func:`value_of`'s."""
    desc = reg[t, R_DESC:R_KK]
    w = scratch[0]
    sq, tmp = w[S_SQ:S_TMP], w[S_TMP:S_SUB_SQ]
    idx = _board_index(desc, flipped, white, black, kings, queens, rooks, bishops, knights, pawns, stm, sq, tmp)
    if idx < 0:
        return idx, DRAW
    decode(desc, idx, sq)  # the canonical squares, for the search
    return value_of(reg, vals, exact, index, scratch, t, stm, idx, need, wdl_only, True)


class NoSubtable(LookupError):
    """A probe needed a sub-table that was not found (``material``: its key)."""

    def __init__(self, material: str):
        super().__init__(material)
        self.material = material


class Engine:
    """Opened tables, their registry for the kernels, and the block pool.

    ``find(key)`` gives a material's table folder, or None where it has none; tables are
    opened (and checked: :class:`~tablebase.store.TableReader`) on first use, with the
    sub-tables their probes may search. Thread-safe: one lock around the kernels and the
    pool (the kernels hold the GIL anyway).
    """

    def __init__(self, find: Callable[[str], Path | None], cache_bytes: int, column: str = "value"):
        #: The shards' column this engine reads: ``value`` (searched, see the module) or
        #: ``dtz`` (every row exact: :meth:`row`).
        self.column = column
        self._find = find
        self._cache_bytes = cache_bytes
        self._lock = threading.RLock()
        self.readers: list[TableReader] = []
        self.ids: dict[str, int] = {}
        self._absent: list[str] = []  # keys of sub-tables not found: registry codes -3, -4, ...
        self._reg = np.zeros((4, R_LEN), dtype=np.int64)
        self._vals = np.zeros((0, 1), dtype=np.int16)
        self._exact = np.zeros((0, 1), dtype=np.uint16)
        self._index = np.zeros(P_HASH, dtype=np.int64)
        self._misses = 0
        self._scratch = np.full((MAX_LEVELS, S_LEN), -1, dtype=np.int64)  # boards start empty
        self._scratches = np.zeros((0, MAX_LEVELS, S_LEN), dtype=np.int64)  # a batch's, one per part
        self._need = np.zeros(1, dtype=np.int64)

    # -- tables ---------------------------------------------------------------------------

    def table_id(self, key: str) -> int | None:
        """The registry id of ``key``'s table, opening it and the sub-tables its probes may
        search; None where it has no table."""
        t = self.ids.get(key)
        if t is not None:
            return t
        with self._lock:
            if key in self.ids:
                return self.ids[key]
            folder = self._find(key)
            if folder is None:
                return None
            return self._register(key, folder)

    def _register(self, key: str, folder: Path) -> int:
        reader = TableReader(folder, key)
        e = ExitMap.of(reader.scheme.material)
        if len(e.subtables) > MAX_SUBTABLES:
            reader.close()
            raise ValueError(f"{key}: {len(e.subtables)} sub-tables, more than {MAX_SUBTABLES}")
        if reader.block_rows > 1 << ROW_BITS:
            reader.close()
            raise ValueError(f"{key}: row groups of {reader.block_rows:,} rows, more than the {1 << ROW_BITS:,} a probe "
                             "can address")
        t = len(self.readers)
        if t == len(self._reg):
            self._reg = np.concatenate([self._reg, np.zeros_like(self._reg)])
        self.readers.append(reader)
        self.ids[key] = t
        row = self._reg[t]
        desc = reader.scheme.desc
        n = desc[D_N]
        row[R_DESC:R_KK] = desc
        row[R_KK] = reader.scheme.king_pairs_per_slice
        row[R_ROWS] = reader.block_rows
        for stm, order in enumerate(reader.orders):
            row[R_ORDER + 8 * stm:R_ORDER + 8 * stm + len(order)] = order
        exit_id = np.full((_N, _N, 5), -1, dtype=np.int64)
        exit_flip = np.zeros((_N, _N, 5), dtype=np.int64)
        exit_perm = np.full((_N, _N, 5, _N), -1, dtype=np.int64)
        subdesc = np.zeros((MAX_SUBTABLES, 64), dtype=np.int64)
        exit_id[:n + 1, :n + 1] = e.exit_id
        exit_flip[:n + 1, :n + 1] = e.exit_flip
        exit_perm[:n + 1, :n + 1, :, :n] = e.exit_perm
        subdesc[:len(e.subtables)] = e.subdesc[:len(e.subtables)]
        for start, a in ((R_EXIT_ID, exit_id), (R_EXIT_FLIP, exit_flip), (R_EXIT_PERM, exit_perm),
                         (R_SUBDESC, subdesc)):
            row[start:start + a.size] = a.ravel()
        self._grow_pool(reader.block_rows)
        for i, sub in enumerate(e.subtables):
            child = self.table_id(sub.key)  # may grow the registry: index it afresh below
            if child is None:
                if sub.key == "KvK":
                    child = DRAWN
                else:
                    self._absent.append(sub.key)
                    child = -2 - len(self._absent)
            self._reg[t, R_SUBS + i] = child
        return t

    def _grow_pool(self, block_rows: int) -> None:
        """A pool whose slots hold ``block_rows`` rows (emptied when it must grow)."""
        if block_rows <= self._vals.shape[1] and len(self._vals):
            return
        slots = max(MIN_SLOTS, self._cache_bytes // (BYTES_PER_ROW * block_rows))
        hashed = 1 << (2 * slots - 1).bit_length()
        self._vals = np.zeros((slots, block_rows), dtype=np.int16)
        self._exact = np.full((slots, block_rows), UNKNOWN, dtype=np.uint16)
        self._index = np.concatenate([np.zeros(P_HASH, dtype=np.int64), np.full(2 * hashed, -1, dtype=np.int64),
                                      np.full(slots, -1, dtype=np.int64), np.zeros(slots, dtype=np.int64)])
        self._index[P_HASH + hashed:P_HASH + 2 * hashed] = 0

    def _load(self, key: int) -> None:
        b = key & 0xFFFF
        s = (key >> 16) & 0xFFFFFF
        stm = (key >> 40) & 1
        t = key >> 41
        values = self.readers[t].shards[stm][s].read_block(b, self.column)
        slot = pool_insert(self._index, len(self._vals), np.int64(key))
        self._vals[slot, :len(values)] = values
        self._exact[slot] = UNKNOWN
        self._misses += 1

    def _no_subtable(self, code: int) -> NoSubtable:
        return NoSubtable(self._absent[-3 - code])

    # -- values ---------------------------------------------------------------------------

    def _settle(self, status: int) -> bool:
        """Act on a kernel's status: True when done; a missing block is loaded."""
        if status == OK:
            return True
        if status == NO_TABLE:
            raise self._no_subtable(int(self._need[0]))
        self._load(int(self._need[0]))
        return False

    def value(self, t: int, stm: int, idx: int, wdl_only: bool = False) -> int:
        """Exact code of the legal index ``idx`` of table ``t`` (side ``stm`` to move);
        NoSubtable when its search needs a sub-table that is not found."""
        with self._lock:
            while True:
                status, v = value_of(self._reg, self._vals, self._exact, self._index, self._scratch, t, stm, idx,
                                     self._need, wdl_only, False)
                if self._settle(status):
                    return int(v)

    def row(self, t: int, stm: int, idx: int) -> int:
        """The stored row of the legal index ``idx`` of table ``t`` (side ``stm`` to move)."""
        with self._lock:
            while True:
                status, v = row_of(self._reg, self._vals, self._index, t, stm, idx, self._need)
                if self._settle(status):
                    return int(v)

    def board_value(self, t: int, flipped: bool, bitboards: tuple[int, ...], stm: int,
                    wdl_only: bool = False) -> int:
        """Exact code of a board's position in table ``t``, from its python-chess bitboards
        (white, black, kings, queens, rooks, bishops, knights, pawns): -1 where the index
        rejects the placement, -2 where the side not to move is in check."""
        with self._lock:
            while True:
                status, v = probe_board(self._reg, self._vals, self._exact, self._index, self._scratch, t, flipped,
                                        *bitboards, stm, self._need, wdl_only)
                if status < 0:
                    return int(status)
                if self._settle(status):
                    return int(v)

    def values(self, t: int, stms: np.ndarray, idxs: np.ndarray, check_legal: bool) -> np.ndarray:
        """Exact codes of many indices of table ``t`` (ILLEGAL for illegal ones when
        ``check_legal``), visited block by block so that each of ``t``'s blocks is decoded
        once, in parts of at least PART_INDICES on numba's threads; NoSubtable when one
        needs a sub-table that is not found."""
        with self._lock:
            order, packed, starts, keys = block_order(self._reg, t, stms, idxs)
            n = idxs.shape[0]
            # Between two calls each part loads a block it lacks: so few parts that their
            # searches' blocks (a level each) fit the pool together.
            parts = max(1, min(get_num_threads(), n // PART_INDICES, len(self._vals) // (2 * MAX_LEVELS)))
            bounds = np.linspace(0, n, parts + 1).astype(np.int64)
            done = bounds[:-1].copy()
            status = np.zeros(parts, dtype=np.int64)
            needs = np.zeros((parts, 1), dtype=np.int64)
            if len(self._scratches) < parts:
                self._scratches = np.full((parts, MAX_LEVELS, S_LEN), -1, dtype=np.int64)  # boards start empty
            out = np.empty(n, dtype=np.uint16)
            while True:
                with _PARALLEL:
                    values_in_parts(self._reg, self._vals, self._exact, self._index, self._scratches, t, order, packed,
                                    starts, keys, bounds, done, status, needs, out, check_legal)
                if (status == NO_TABLE).any():
                    raise self._no_subtable(int(needs[np.argmax(status == NO_TABLE), 0]))
                if (status == OK).all():
                    return out
                for key in {int(k) for k in needs[status == MISS, 0]}:  # parts may lack the same block
                    if pool_find(self._index, len(self._vals), np.int64(key)) < 0:
                        self._load(key)
                status[:] = OK

    def _block_keys(self, t: int) -> list[int]:
        reader = self.readers[t]
        return [int(block_key(t, stm, s, b)) for stm, side in enumerate(reader.shards) for s, shard in enumerate(side)
                for b in range(-(-shard.info.rows // reader.block_rows))]

    def blocks(self, t: int) -> int:
        """Blocks (row groups) of table ``t``, both sides: the pool slots it takes whole."""
        return len(self._block_keys(t))

    def slots(self) -> int:
        """Blocks the pool holds."""
        return len(self._vals)

    def load_blocks(self, t: int) -> None:
        """Decode every block of table ``t`` that the pool lacks into it."""
        with self._lock:
            for key in self._block_keys(t):
                if pool_find(self._index, len(self._vals), np.int64(key)) < 0:
                    self._load(key)

    def cache_info(self) -> tuple[int, int, int, int, int]:
        """(blocks held, their bytes, the bound, hits, misses)."""
        slots = len(self._vals)
        held = int(np.count_nonzero(self._index[len(self._index) - 2 * slots:len(self._index) - slots] >= 0))
        per_block = (self._vals.itemsize + self._exact.itemsize) * self._vals.shape[1]
        return held, held * per_block, self._vals.nbytes + self._exact.nbytes, int(self._index[P_HITS]), self._misses

    def close(self) -> None:
        with self._lock:
            for reader in self.readers:
                reader.close()
            self.readers.clear()
            self.ids.clear()
            self._absent.clear()
            self._reg = np.zeros((4, R_LEN), dtype=np.int64)
            self._vals = np.zeros((0, 1), dtype=np.int16)
            self._exact = np.zeros((0, 1), dtype=np.uint16)
            self._index = np.zeros(P_HASH, dtype=np.int64)
