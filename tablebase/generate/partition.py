"""A partition of one table's index space and the stages run on it.

A :class:`Partition` owns the values of some (side to move, slice) units and runs the
kernels on them. The executors only move numpy arrays between partitions: in one process
for tests and small tables, or as Ray actors (``tablebase.distributed``).

One ply is a superstep: every partition un-moves the positions it decided at the last ply
(:meth:`Partition.expand`), the predecessors are routed to the partitions that own them,
and each partition applies them (:meth:`Partition.apply`). The result does not depend on
how units are spread over partitions, so any number of workers writes the same shards.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import numpy as np
import pyarrow as pa

from ..endgame.index import IndexScheme
from ..endgame.material import Material
from ..endgame.movegen import ExitMap
from ..errors import GenerationError  # noqa: F401  (raised here; re-exported for old imports)
from ..store.checkpoint import CorruptCheckpointError
from ..store import Coding, ShardInfo, write_shard
from ..store.layout import candidate_orders, order_cost
from . import kernels as K
from . import values as V


@dataclass(frozen=True)
class SubtableValues:
    """Final values of direct sub-tables, concatenated: ``values[offsets[sub, stm] + idx]``,
    offset -1 for a side not held (init reads only the sides one side's exits reach)."""

    values: np.ndarray
    offsets: np.ndarray

    @classmethod
    def build(cls, sizes: list[int], sides: list[tuple[int, int]],
              fill: Callable[[int, int, np.ndarray], None], dtype=np.uint16) -> "SubtableValues":
        """The ``sides`` (sub-table, side to move) of sub-tables of ``sizes`` positions per
        side, each written in place by ``fill(sub, side, into)``: no second copy of them is
        ever held. DTM codes (uint16), or classes (int8) for the DTZ passes."""
        offsets = np.full((max(1, len(sizes)), 2), -1, dtype=np.int64)
        pos = 0
        for sub, side in sides:
            offsets[sub, side] = pos
            pos += sizes[sub]
        values = np.zeros(max(1, pos), dtype=dtype)
        for sub, side in sides:
            fill(sub, side, values[offsets[sub, side]:offsets[sub, side] + sizes[sub]])
        return cls(read_only(values), read_only(offsets))


def read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a``, as an array from Ray's object store is. numba compiles a
    kernel once per argument type, and read-only is part of an array's type: arrays that
    reach the kernels through the object store on one path (partition actors) and in
    memory on the other (one process, a task) are made read-only on both, or every
    kernel that reads them compiles twice (about 2 minutes)."""
    view = a.view()
    view.flags.writeable = False
    return view


def partition_bounds(scheme: IndexScheme, num_partitions: int) -> list[int]:
    """Slice boundaries of the partitions: contiguous runs of slices (both sides to move of
    a slice together), since king moves reach neighbouring king pairs and most un-moves
    then stay inside a partition."""
    n = scheme.num_slices
    parts = min(num_partitions, n)
    return [round(i * n / parts) for i in range(parts + 1)]


#: Tables with more positions per side than this are split over several partitions by
#: default; smaller ones run whole (a split costs more than such a table).
SPLIT_ABOVE = 8_000_000

#: Peak bytes per index position of a partition (both sides to move): 2 B of values, and
#: the per-slice temporaries. The sub-tables' values one side's exits read add 2 B per
#: position read, once per node.
BYTES_PER_POSITION = 3

#: A worker process's own memory before any table: Python, numpy, numba, pyarrow.
WORKER_BYTES = 400 << 20


def subtable_reads(key: str, stm: int) -> int:
    """How many sub-table values init holds for side to move ``stm`` of ``key``: the sides
    of the sub-tables its captures and promotions reach."""
    exits = ExitMap.of(Material.parse(key))
    return sum(IndexScheme.of(exits.subtables[sub].key).size for sub, _ in exits.sides_reached(stm))


def partition_memory(scheme: IndexScheme, first: int, stop: int) -> int:
    """Estimated peak bytes of the process of a partition of slices ``[first, stop)`` of
    ``scheme`` (both sides to move); the sub-table values it reads come from Ray's object
    store."""
    return BYTES_PER_POSITION * 2 * (scheme.slice_range(stop - 1)[1] - scheme.slice_range(first)[0]) + WORKER_BYTES


def table_memory(key: str, workers: int = 1) -> int:
    """Estimated peak bytes to generate ``key`` over ``workers`` partitions on one node."""
    subs = max(subtable_reads(key, stm) for stm in (0, 1))
    return BYTES_PER_POSITION * 2 * IndexScheme.of(key).size + 2 * subs + WORKER_BYTES * workers


#: Frontier positions un-moved per expand call: bounds the buffer of predecessors bound for
#: other partitions (8 bytes each, about one per frontier position) whatever the size of a
#: ply; each call is a barrier across the partitions. At 4 M, the largest plies' buffers
#: made a KQRvKR worker's peak 1.20 GB; at 1 M it is 0.75 GB, in the same time.
EXPAND_BUDGET = 1 << 20

#: Positions per block (``1 << BLOCK_SHIFT``) in the count of each ply's decided positions:
#: a frontier scan reads only the blocks with some, a few of a slice at the sparse plies
#: that most DTZ plies are.
BLOCK_SHIFT = 10

#: What keeps a partition's values compressed while it does not work on them.
PACKING = pa.Codec("zstd", compression_level=1)

#: Version of :meth:`Partition.state`: a checkpoint of another version is not resumed.
STATE_FORMAT = 4

T = TypeVar("T")
#: A stage of a partition that works slice by slice, as a generator: it yields ``None``
#: after each slice (or shard), so that a caller can show progress, and its result last.
#: Ray streams an actor's yields to the driver as they come (a Ray generator).
Steps = Iterator[T | None]

#: tick(steps): that many more slices (or shards) of a stage are done; 0: none, but the
#: caller may show where it stands (Ray's driver calls it while it waits).
Tick = Callable[[int], None]


def result_of(steps: Steps[T], tick: Tick | None = None) -> T:
    """Run a stage's steps to the end, calling ``tick(1)`` after each: its result."""
    for item in steps:
        if item is not None:
            return item
        if tick is not None:
            tick(1)
    raise AssertionError("a stage ended without its result")


class Partition:
    """The values of a run of slices ``[first, stop)`` of one table (both sides to move),
    with the stage kernels applied to them.

    A ply runs as: ``expand`` until it reports nothing left (each call un-moves at most
    :data:`EXPAND_BUDGET` frontier positions, applying the predecessors that fall in this
    partition and returning the others), ``apply`` of every batch routed here, then
    ``end_ply``. Batches of one ply commute, so their number and order do not matter.
    The frontier of a ply is no list: it is the positions whose value says they were
    decided at the last ply, looked for in the blocks that had some (``hits``).
    """

    def __init__(self, key: str, first: int, stop: int, bounds: list[int]):
        self.scheme = IndexScheme.of(key)
        self.exits = ExitMap.of(self.scheme.material)
        self.first = first
        self.slices = range(first, stop)
        self.lo = self.scheme.slice_range(first)[0]
        self.hi = self.scheme.slice_range(stop - 1)[1]
        self.span = self.scheme.slice_range(0)[1]  # indices per slice
        # owner[slice] -> partition, for routing predecessors.
        self.owner = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
        self._reset()

    def _reset(self) -> None:
        """Forget every value: the state before :meth:`init` (or :meth:`restore`)."""
        self.val = [np.empty(0, dtype=np.uint16)] * 2  # per side to move, indices [lo, hi)
        self.ply = 0  # the ply being built
        n = (self.hi - self.lo + (1 << BLOCK_SHIFT) - 1) >> BLOCK_SHIFT
        # Per side and block: how many positions were decided at the last ply (the frontier)
        # and at this one.
        self.hits_prev = [np.zeros(n, dtype=np.int32) for _ in range(2)]
        self.hits = [np.zeros(n, dtype=np.int32) for _ in range(2)]
        self.cursor = [0, 0]  # the next block to expand, per side
        self.decided = 0  # decided by this partition's own un-moves at this ply
        # Bytes of predecessors sent to other partitions, per (metric, ply): what a cluster
        # moves between nodes (benchmarks/scaling.py, docs/scaling.md).
        self.routed: dict[tuple[str, int], int] = {}
        # Positions whose exits decide something at a later ply (a capture or promotion
        # wins, or the last of losing ones goes) are found by scanning for their value at
        # that ply (no index lists: they can be half the table). Per (side, slice) with
        # some: how many settle at each ply.
        self.exit_plies: dict[tuple[int, int], np.ndarray] = {}
        # En-passant vertices ("q with an en-passant square", reached from p by a double
        # step): per side to move, arrays q, p, and the captures' fastest win / any draw /
        # slowest loss. ep_due[ply] lists the predecessors to emit when expanding ply + 1,
        # with a threshold: skip those whose q is won by then in at most that many plies.
        self.ep: dict[int, tuple[np.ndarray, ...]] = {}
        self.ep_due: dict[int, list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]] = {}
        self.ep_expanded = [False, False]  # this ply's en-passant predecessors emitted
        self.inited = [False, False]  # per side to move: init done
        # The DTZ passes (the 50-move rule) run after the DTM passes over the same slices:
        # the DTM values wait compressed meanwhile, their memory going to the DTZ codes.
        self.metric = "dtm"
        self.zval = [np.empty(0, dtype=np.uint16)] * 2
        self.packed: list[dict[int, bytes]] | None = None
        # Per side to move, the DTM init codes, compressed per slice, from which its DTZ
        # init derives without generating a piece move (kernels.zinit_from_dtm).
        self.init_packed: list[dict[int, bytes]] = [{}, {}]

    def init(self, stm: int, subtables: SubtableValues, dtz: bool = True) -> Steps[dict]:
        """Classify every position of side to move ``stm`` and read its exits from
        ``subtables`` (which need only the sides this one's exits reach: see
        :meth:`ExitMap.sides_reached`); checkmates form the ply-0 frontier. Call it for
        both sides, each side's values taking their memory only then; the first call
        forgets any earlier state. ``dtz``: the DTZ passes will follow. Steps a slice at
        a time (:data:`Steps`); the result counts legal positions and mates."""
        if self.ply or self.inited[stm]:
            self._reset()
        e, s = self.exits, subtables
        size = self.hi - self.lo
        self.val[stm] = np.empty(size, dtype=np.uint16)
        settles = np.empty(self.span, dtype=np.uint16)
        self.hits_prev[stm][:] = 0
        legal = 0
        for sl in self.slices:
            # Per slice, so that the temporaries below stay small beside the values.
            lo, hi = self.scheme.slice_range(sl)
            val = self.val[stm][lo - self.lo:hi - self.lo]
            bad, overflow = K.init_slice(self.scheme.desc, stm, lo, hi, e.arrays, s.values, s.offsets, val,
                                         settles[:hi - lo])
            if bad:
                raise GenerationError(f"{self.scheme.material}: {bad} exits of slice {sl} (side {stm}) lead to "
                                      "positions their sub-table marks illegal (or to a side not loaded)")
            if overflow:
                raise GenerationError(f"{self.scheme.material}: {overflow} positions of slice {sl} (side {stm}) "
                                      f"have more than {V.MAX_WAYS} ways out or a losing capture slower than "
                                      f"{V.MAX_EXIT_LOSS} plies, more than a value holds")
            if dtz:
                self.init_packed[stm][sl] = PACKING.compress(val).to_pybytes()
            plies = settles[:hi - lo]
            if plies.any():
                self.exit_plies[stm, sl] = np.bincount(plies[plies > 0])
            V.count_frontier(val, 0, False, lo - self.lo, BLOCK_SHIFT, self.hits_prev[stm])
            legal += int(np.count_nonzero(val != V.ILLEGAL))
            yield None
        if self._has_en_passant():
            self._init_en_passant(stm, subtables)
        self.inited[stm] = True
        if all(self.inited):
            self.ply = 1
        yield {"legal": legal, "mates": int(self.hits_prev[stm].sum())}

    # -- the DTZ passes ---------------------------------------------------------------

    def dtz_classes(self, stm: int) -> Steps[list[bytes]]:
        """The classes (int8) of this partition's slices of side to move ``stm``, each
        slice's zstd-compressed: before the first DTZ pass those its DTM values give (every
        decided position within the rule), after one those the pass found. The DTM values
        are packed first: their memory is free before a DTZ init loads anything. Steps a
        slice at a time."""
        if self.packed is None:
            self._pack_dtm()
        out = []
        for sl in self.slices:
            lo, hi = self.scheme.slice_range(sl)
            a, b = lo - self.lo, hi - self.lo
            cls = (V.class_of_finished(self._dtm_slice(stm, sl)) if self.metric == "dtm"
                   else V.class_of_stored_dtz(V.dtz_stored(self.zval[stm][a:b])))
            out.append(PACKING.compress(cls).to_pybytes())
            yield None
        yield out

    def dtz_init(self, stm: int, subclasses: SubtableValues, them_classes: np.ndarray) -> Steps[dict]:
        """First stage of a DTZ pass for side to move ``stm``: ``subclasses`` holds the
        sub-tables' classes (both sides of those a capture or an en-passant capture
        reaches), ``them_classes`` this table's for the other side to move (the whole index:
        its pawn moves can reach any slice). Call it for both sides; a pass after another
        starts afresh. Steps a slice at a time."""
        if self.packed is None:
            self._pack_dtm()
        if self.metric == "dtm" or all(self.inited):
            self.metric = "dtz"
            self.ply = 0
            self.inited = [False, False]
            self.exit_plies = {}
            self.hits_prev = [np.zeros_like(h) for h in self.hits_prev]
            self.hits = [np.zeros_like(h) for h in self.hits]
            self.cursor, self.decided = [0, 0], 0
        e, s = self.exits, subclasses
        if len(self.zval[stm]) != self.hi - self.lo:
            self.zval[stm] = np.empty(self.hi - self.lo, dtype=np.uint16)
        settles = np.empty(self.span, dtype=np.uint16)
        self.hits_prev[stm][:] = 0
        init_codes = self.init_packed[stm] or None
        read_exits = init_codes is not None and V.has_cursed(s.values)
        m = self.scheme.material
        pawns = "P" in (m.white, m.black)[stm]
        if not m.has_pawns:
            self.init_packed[stm] = {}  # one pass; with pawns, kept for the passes that follow
        for sl in self.slices:
            lo, hi = self.scheme.slice_range(sl)
            z = self.zval[stm][lo - self.lo:hi - self.lo]
            if init_codes is not None:
                raw = np.frombuffer(PACKING.decompress(init_codes[sl], decompressed_size=2 * (hi - lo)), dtype=np.uint16)
                bad = K.zinit_from_dtm(self.scheme.desc, stm, lo, hi, raw, self._dtm_slice(stm, sl), read_exits, pawns,
                                       e.arrays, s.values, s.offsets, them_classes, z, settles[:hi - lo])
                overflow = 0
            else:
                bad, overflow = K.zinit_slice(self.scheme.desc, stm, lo, hi, e.arrays, s.values, s.offsets,
                                              them_classes, z, settles[:hi - lo])
            if bad:
                raise GenerationError(f"{self.scheme.material}: {bad} zeroing moves of slice {sl} (side {stm}) "
                                      "reach a sub-table side not loaded")
            if overflow:
                raise GenerationError(f"{self.scheme.material}: {overflow} positions of slice {sl} (side {stm}) "
                                      f"have more than {V.MAX_WAYS} piece moves out")
            plies = settles[:hi - lo]
            self.exit_plies.pop((stm, sl), None)
            if plies.any():
                self.exit_plies[stm, sl] = np.bincount(plies[plies > 0])
            V.count_frontier(z, 0, True, lo - self.lo, BLOCK_SHIFT, self.hits_prev[stm])
            yield None
        self.inited[stm] = True
        if all(self.inited):
            self.ply = 1
        yield {"mates": int(self.hits_prev[stm].sum())}

    def _pack_dtm(self) -> None:
        """Finish the DTM values and keep them compressed per slice until the shards."""
        self._finalize()
        self.packed = [{}, {}]
        for stm in (0, 1):
            for sl in self.slices:
                lo, hi = self.scheme.slice_range(sl)
                self.packed[stm][sl] = PACKING.compress(self.val[stm][lo - self.lo:hi - self.lo]).to_pybytes()
            self.val[stm] = np.empty(0, dtype=np.uint16)

    def _dtm_slice(self, stm: int, sl: int) -> np.ndarray:
        """The finished DTM codes of one slice (exit marks kept)."""
        lo, hi = self.scheme.slice_range(sl)
        if self.packed is None:
            return self.val[stm][lo - self.lo:hi - self.lo]
        raw = PACKING.decompress(self.packed[stm][sl], decompressed_size=2 * (hi - lo))
        return np.frombuffer(raw, dtype=np.uint16)

    def _has_en_passant(self) -> bool:
        m = self.scheme.material
        return "P" in m.white and "P" in m.black

    def _init_en_passant(self, stm: int, subtables: SubtableValues) -> None:
        e, s = self.exits, subtables
        q, p, win, draw, loss, q_moves, bad = K.ep_pairs_slice(self.scheme.desc, stm, self.lo, self.hi,
                                                               self.val[stm], e.arrays, s.values, s.offsets)
        if bad:
            raise GenerationError(f"{self.scheme.material}: {bad} en-passant captures (side {stm}) lead to "
                                  "positions their sub-table marks illegal")
        self.ep[stm] = (q, p, win, draw, loss)
        # A winning capture makes the en-passant vertex won for the side to move in `win`
        # plies at most: its predecessor loses that way out then, unless q itself is won sooner.
        has_win = win <= V.MAX_DEPTH
        self._ep_schedule(stm, win[has_win], q[has_win], p[has_win], win[has_win])
        # A stalemated q is never decided: its vertex's value is the captures' alone.
        lost = ~q_moves & ~has_win & ~draw
        self._ep_schedule(stm, loss[lost], q[lost], p[lost], np.full(int(lost.sum()), -1))

    def _ep_schedule(self, stm, plies, q, p, threshold) -> None:
        for ply in np.unique(plies):
            sel = plies == ply
            self.ep_due.setdefault(int(ply), []).append((stm, q[sel], p[sel], threshold[sel]))

    def _ep_expand(self, stm: int) -> np.ndarray:
        """Predecessors through en-passant vertices to emit for the current ply."""
        out = []
        d = self.ply - 1
        if stm in self.ep:
            q, p, win, draw, loss = self.ep[stm]
            hit = (self.val[stm][q - self.lo] & V.UNMARKED) == V.DECIDED | np.uint16(d)
            if d % 2 == 0:  # q lost at d: the en-passant vertex is lost too unless a capture saves it
                lost = hit & (win > V.MAX_DEPTH) & ~draw
                out.append(p[lost & (loss <= d)])
                late = lost & (loss > d)
                self._ep_schedule(stm, loss[late], q[late], p[late], np.full(int(late.sum()), -1))
            else:  # q won at d: so is the vertex, unless a capture won it sooner
                out.append(p[hit & ((win > V.MAX_DEPTH) | (win >= d))])
        for side, q, p, threshold in self.ep_due.get(d, []):
            if side != stm:
                continue
            v = self.val[stm][q - self.lo]
            depth = (v & V.DEPTH_MASK).astype(np.int64)
            won_sooner = ((v & V.DECIDED_KIND) == V.DECIDED) & (depth % 2 == 1) & (depth <= threshold)
            out.append(p[~won_sooner])
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

    def _apply(self, stm: int, preds: np.ndarray) -> int:
        """Apply predecessors (side ``stm``, all in this partition) of the last ply's frontier:
        DTZ's come as ``y`` where their successor was lost, ``-y - 1`` where it was won."""
        if self.metric == "dtz":
            won = preds < 0
            return (K.apply_predecessors(self.zval[stm], self.lo, read_only(preds[~won]), self.ply, True, True,
                                         BLOCK_SHIFT, self.hits[stm])
                    + K.apply_predecessors(self.zval[stm], self.lo, read_only(-preds[won] - 1), self.ply, False, True,
                                           BLOCK_SHIFT, self.hits[stm]))
        return K.apply_predecessors(self.val[stm], self.lo, read_only(preds), self.ply, self.ply % 2 == 1, False,
                                    BLOCK_SHIFT, self.hits[stm])

    def _retro(self, stm: int, budget: int) -> tuple[np.ndarray, int]:
        """Un-move the frontier of side ``stm`` from its next block on, about ``budget``
        positions of it, applying the predecessors this partition owns; returns the others
        (as :meth:`_apply` takes them) and how many frontier positions it un-moved."""
        dtz = self.metric == "dtz"
        desc, other, values = self.scheme.desc, 1 - stm, self.zval if dtz else self.val
        first, second, self.cursor[stm] = V.frontier_in_blocks(values[stm], self.ply - 1, dtz, self.lo, BLOCK_SHIFT,
                                                               self.hits_prev[stm], self.cursor[stm], budget)
        # DTM: the frontier was lost at an even ply, won at an odd one; DTZ: lost, then won.
        runs = ((first, True), (second, False)) if dtz else ((first, self.ply % 2 == 1),)
        remote = []
        for frontier, win in runs:
            decided, away = K.retro_step(desc, stm, frontier, self.lo, self.hi, values[other], self.ply, win, dtz,
                                         BLOCK_SHIFT, self.hits[other])
            self.decided += decided
            remote.append(away if win or not dtz else -away - 1)
        return (np.concatenate(remote) if dtz else remote[0]), len(first) + len(second)

    def expand(self, num_partitions: int) -> tuple[list[list[np.ndarray]], int]:
        """Un-move the next part of this partition's frontier, applying the predecessors it
        owns. Returns, per destination partition, the other predecessor indices for each
        side to move (``[white, black]``), and how many frontier positions are still to
        expand this ply."""
        empty = np.zeros(0, dtype=np.int64)
        out = [[empty, empty] for _ in range(num_partitions)]
        budget = EXPAND_BUDGET
        for stm in (0, 1):
            remote = []
            if self.metric == "dtm" and not self.ep_expanded[stm] and (self.ep or self.ep_due):
                preds = self._ep_expand(stm)
                inside = (preds >= self.lo) & (preds < self.hi)
                self.decided += self._apply(1 - stm, preds[inside])
                remote.append(preds[~inside])
                self.ep_expanded[stm] = True
            if budget > 0 and self.cursor[stm] < len(self.hits_prev[stm]):
                preds, done = self._retro(stm, budget)
                budget -= done
                remote.append(preds)
            preds = np.concatenate(remote) if len(remote) > 1 else remote[0] if remote else empty
            if len(preds):
                grouped, starts = K.route_predecessors(preds, self.owner, self.span, num_partitions)
                for p in range(num_partitions):
                    out[p][1 - stm] = grouped[starts[p]:starts[p + 1]]
                at = (self.metric, self.ply)
                self.routed[at] = self.routed.get(at, 0) + preds.nbytes
        self.ep_due.pop(self.ply - 1, None)
        left = sum(int(h[c:].sum()) for h, c in zip(self.hits_prev, self.cursor))
        return out, left

    def apply(self, incoming: list[list[np.ndarray]]) -> int:
        """Apply predecessor batches routed here (each ``[white, black]``): at an odd ply
        they win (their successor was lost at the last ply), at an even ply they lose a way
        out. Returns how many positions this decided."""
        decided = 0
        for stm in (0, 1):
            for pair in incoming:
                if len(pair[stm]):
                    decided += self._apply(stm, pair[stm])
        return decided

    def end_ply(self) -> int:
        """Decide what captures and promotions decide at this ply, make the positions
        decided at this ply the frontier and move to the next ply. Returns how many this
        partition decided at this ply, but for :meth:`apply`'s."""
        ply = self.ply
        decided = self.decided
        for (stm, sl), hist in self.exit_plies.items():
            if ply < len(hist) and hist[ply]:
                lo, hi = self.scheme.slice_range(sl)
                settle = K.zsettle_exits if self.metric == "dtz" else K.settle_exits
                values = self.zval if self.metric == "dtz" else self.val
                decided += settle(values[stm][lo - self.lo:hi - self.lo], ply, lo - self.lo, BLOCK_SHIFT,
                                  self.hits[stm])
        self.hits_prev, self.hits = self.hits, [np.zeros_like(h) for h in self.hits_prev]
        self.cursor = [0, 0]
        self.decided = 0
        self.ep_expanded = [False, False]
        self.ply = ply + 1
        return decided

    def last_pending_ply(self) -> int:
        """The last ply at which an exit or an en-passant vertex still decides something."""
        exits = max((len(h) - 1 for h in self.exit_plies.values()), default=-1)
        return max(exits, max(self.ep_due, default=-2) + 1)

    def state(self) -> dict[str, np.ndarray]:
        """Everything needed to go on from the end of the last ply (call it between plies),
        as named arrays: what a checkpoint stores."""
        st = {"format": np.array(STATE_FORMAT), "ply": np.array(self.ply), "lo": np.array(self.lo),
              "hi": np.array(self.hi), "val0": self.val[0], "val1": self.val[1]}
        st.update(_pack("exit_plies", [(stm, sl, (h,)) for (stm, sl), h in self.exit_plies.items()]))
        st.update(_pack("ep", [(stm, 0, arrays) for stm, arrays in self.ep.items()]))
        st.update(_pack("ep_due", [(ply, stm, arrays) for ply, items in self.ep_due.items()
                                   for stm, *arrays in items]))
        return st

    def restore(self, st: dict[str, np.ndarray]) -> None:
        """Continue from a :meth:`state` of a partition with the same slices."""
        if "format" not in st or int(st["format"]) != STATE_FORMAT:
            raise CorruptCheckpointError(f"state of format {int(st['format']) if 'format' in st else 1}, "
                                         f"not {STATE_FORMAT} (written by another version)")
        if (int(st["lo"]), int(st["hi"])) != (self.lo, self.hi):
            raise ValueError(f"state of indices [{int(st['lo'])}, {int(st['hi'])}) given to the partition "
                             f"of [{self.lo}, {self.hi})")
        self._reset()
        self.ply = int(st["ply"])
        self.val = [st["val0"], st["val1"]]
        self.exit_plies = {(stm, sl): h for stm, sl, (h,) in _unpack("exit_plies", st)}
        self.ep = {stm: arrays for stm, _, arrays in _unpack("ep", st)}
        for ply, stm, arrays in _unpack("ep_due", st):
            self.ep_due.setdefault(ply, []).append((stm, *arrays))
        for stm in (0, 1):
            V.count_frontier(self.val[stm], self.ply - 1, False, 0, BLOCK_SHIFT, self.hits_prev[stm])

    def order_costs(self, sample: list[int], dont_care: str) -> dict[tuple[int, tuple[int, ...]], int]:
        """For each side and storage order, the bytes of this partition's slices of
        ``sample`` under the order-choosing proxy (:func:`~tablebase.store.layout.order_cost`)."""
        self._finalize()
        costs: dict[tuple[int, tuple[int, ...]], int] = {}
        orders = candidate_orders(self.scheme)
        for sl in sample:
            if sl not in self.slices:
                continue
            lo, hi = self.scheme.slice_range(sl)
            shape = self.scheme.slice_shape(sl)
            for stm in (0, 1):
                val = self._dtm_slice(stm, sl)
                for order in orders:
                    costs[stm, order] = costs.get((stm, order), 0) + order_cost(val, shape, order, dont_care)
        return costs

    def _finalize(self) -> None:
        if self.packed is None:
            for stm in (0, 1):
                V.finalize(self.val[stm])
        for z in self.zval:
            V.zfinalize(z)

    def finish(self, folder: Path | None, orders: tuple, coding: Coding) -> Steps[list[ShardInfo]]:
        """Turn undecided positions into draws; write one shard per (side, slice), side
        ``stm`` in ``orders[stm]``, when ``folder`` is given (after the DTZ passes, if any).
        Steps a shard at a time."""
        self._finalize()
        self.init_packed = [{}, {}]
        infos = []
        if folder is not None:
            for stm in (0, 1):
                for sl in self.slices:
                    lo, hi = self.scheme.slice_range(sl)
                    zval = self.zval[stm][lo - self.lo:hi - self.lo] if len(self.zval[stm]) else None
                    infos.append(write_shard(folder, self.scheme.material.key, stm, sl, self._dtm_slice(stm, sl),
                                             zval, orders[stm], coding))
                    yield None
        yield infos

    def peak_memory(self) -> int:
        """Peak resident memory of this process so far, in bytes (Linux reports KiB)."""
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def values(self) -> tuple[int, list[np.ndarray]]:
        """The first index and the exact DTM codes of both sides to move (after :meth:`finish`)."""
        return self.lo, [V.plain(np.concatenate([self._dtm_slice(stm, sl) for sl in self.slices]))
                         for stm in (0, 1)]

    def dtz_values(self) -> tuple[int, list[np.ndarray]]:
        """The first index and the finished DTZ codes of both sides to move."""
        return self.lo, [z.copy() for z in self.zval]


def _pack(name: str, entries: list[tuple[int, int, tuple[np.ndarray, ...]]]) -> dict[str, np.ndarray]:
    """Entries ``(key, key, arrays)`` of equal-length arrays as a few flat named arrays."""
    st = {f"{name}.keys": np.array([(a, b) for a, b, _ in entries], dtype=np.int64).reshape(-1, 2),
          f"{name}.lengths": np.array([len(arrays[0]) for _, _, arrays in entries], dtype=np.int64)}
    for j in range(len(entries[0][2]) if entries else 0):
        st[f"{name}.{j}"] = np.concatenate([arrays[j] for _, _, arrays in entries])
    return st


def _unpack(name: str, st: dict[str, np.ndarray]) -> list[tuple[int, int, tuple[np.ndarray, ...]]]:
    keys, lengths = st[f"{name}.keys"], st[f"{name}.lengths"]
    columns = []
    while f"{name}.{len(columns)}" in st:
        columns.append(np.split(st[f"{name}.{len(columns)}"], np.cumsum(lengths)[:-1]))
    return [(int(a), int(b), tuple(col[i] for col in columns)) for i, (a, b) in enumerate(keys)]
