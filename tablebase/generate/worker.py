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

import numpy as np

from ..endgame.index import IndexScheme
from ..endgame.material import Material
from ..endgame.movegen import ExitMap
from ..store.shards import ShardInfo, write_shard
from . import kernels as K


class GenerationError(RuntimeError):
    """A table could not be generated (workers lost again and again, inconsistent sub-tables);
    complete tables and the last checkpoint are kept, so a re-run resumes."""


@dataclass(frozen=True)
class SubtableValues:
    """Final values of every direct sub-table, concatenated: ``values[offsets[sub, stm] + idx]``."""

    values: np.ndarray
    offsets: np.ndarray

    @classmethod
    def build(cls, tables: list[tuple[np.ndarray, np.ndarray]]) -> "SubtableValues":
        offsets = np.zeros((max(1, len(tables)), 2), dtype=np.int64)
        parts = []
        pos = 0
        for i, pair in enumerate(tables):
            for stm in range(2):
                offsets[i, stm] = pos
                parts.append(pair[stm])
                pos += len(pair[stm])
        values = np.concatenate(parts) if parts else np.zeros(1, dtype=np.uint16)
        return cls(values, offsets)


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

#: Peak bytes per index position of a partition (both sides to move): 3 B of values and
#: successor counters, the frontier (4 B per position decided at one ply) and the per-slice
#: temporaries. The sub-tables' values add 2 B per sub-table position, once per node.
BYTES_PER_POSITION = 5

#: A worker process's own memory before any table: Python, numpy, numba, pyarrow.
WORKER_BYTES = 400 << 20


def table_memory(key: str, workers: int = 1) -> int:
    """Estimated peak bytes to generate ``key`` over ``workers`` partitions on one node."""
    subs = sum(2 * IndexScheme.of(m.key).size for m in Material.parse(key).direct_subtables())
    return BYTES_PER_POSITION * 2 * IndexScheme.of(key).size + 2 * subs + WORKER_BYTES * workers


#: Frontier positions un-moved per expand call: bounds the predecessor buffers (about
#: 15 predecessors of 8 bytes each per position) whatever the size of a ply.
EXPAND_BUDGET = 1 << 19


class Partition:
    """The values of a run of slices ``[first, stop)`` of one table (both sides to move),
    with the stage kernels applied to them.

    A ply runs as: ``expand`` until it reports nothing left (each call un-moves at most
    :data:`EXPAND_BUDGET` frontier positions), ``apply`` of every batch routed here, then
    ``end_ply``. Batches of one ply commute, so their number and order do not matter.
    """

    def __init__(self, key: str, first: int, stop: int, bounds: list[int]):
        self.scheme = IndexScheme.of(key)
        self.exits = ExitMap.of(self.scheme.material)
        self.slices = range(first, stop)
        self.lo = self.scheme.slice_range(first)[0]
        self.hi = self.scheme.slice_range(stop - 1)[1]
        self.span = self.scheme.slice_range(0)[1]  # indices per slice
        # owner[slice] -> partition, for routing predecessors.
        self.owner = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
        # Offsets from lo: 4 bytes each where they fit (a ply can decide a good part of a table).
        self.offset_type = np.uint32 if self.hi - self.lo < 2 ** 32 else np.int64
        self._reset()

    def _reset(self) -> None:
        """Forget every value: the state before :meth:`init` (or :meth:`restore`)."""
        self.val = [np.empty(0, dtype=np.uint16)] * 2  # per side to move, indices [lo, hi)
        self.cnt = [np.empty(0, dtype=np.uint8)] * 2
        self.ply = 0  # the ply being built
        self.frontier = [np.empty(0, dtype=self.offset_type)] * 2  # decided at ply - 1
        self.cursor = [0, 0]
        self.next_frontier: list[list[np.ndarray]] = [[], []]
        # Positions a capture or promotion wins are found by scanning for their value at
        # the ply it names (no index lists: they can be half the table): counts per slice.
        self.exit_wins: dict[tuple[int, int], np.ndarray] = {}
        self.pending: dict[int, list[tuple[int, np.ndarray]]] = {}  # ply -> (stm, indices)
        # En-passant vertices ("q with an en-passant square", reached from p by a double
        # step): per side to move, arrays q, p, and the captures' fastest win / any draw /
        # slowest loss. ep_due[ply] lists the predecessors to emit when expanding ply + 1,
        # with a threshold: skip those whose q is won by then in at most that many plies.
        self.ep: dict[int, tuple[np.ndarray, ...]] = {}
        self.ep_due: dict[int, list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]] = {}
        self.ep_expanded = [False, False]  # this ply's en-passant predecessors emitted

    def _defer(self, stm: int, indices: np.ndarray, plies: np.ndarray) -> None:
        for ply in np.unique(plies):
            self.pending.setdefault(int(ply), []).append((stm, indices[plies == ply]))

    def init(self, subtables: SubtableValues) -> dict:
        """Classify every position and read the exits from ``subtables`` (needed by init
        alone); checkmates form the ply-0 frontier."""
        self._reset()
        e, s = self.exits, subtables
        size = self.hi - self.lo
        self.val = [np.empty(size, dtype=np.uint16) for _ in range(2)]
        self.cnt = [np.empty(size, dtype=np.uint8) for _ in range(2)]
        for stm in (0, 1):
            mates = []
            for sl in self.slices:
                # Per slice, so that the temporaries below stay small beside the values.
                lo, hi = self.scheme.slice_range(sl)
                val, cnt = self.val[stm][lo - self.lo:hi - self.lo], self.cnt[stm][lo - self.lo:hi - self.lo]
                bad = K.init_slice(self.scheme.desc, stm, lo, hi, e.exit_id, e.exit_flip, e.exit_perm, e.subdesc,
                                   s.values, s.offsets, val, cnt)
                if bad:
                    raise GenerationError(f"{self.scheme.material}: {bad} exits of slice {sl} (side {stm}) lead to "
                                       "positions their sub-table marks illegal")
                kind = val & np.uint16(0xF000)
                self.exit_wins[stm, sl] = np.bincount(val[kind == K.TENT_WIN] & K.DEPTH_MASK,
                                                      minlength=K.MAX_DEPTH + 1)
                mates.append((np.flatnonzero(val == K.DECIDED) + (lo - self.lo)).astype(self.offset_type))
                exit_losses = np.flatnonzero((kind == K.TENT_LOSS) & (cnt == 0))
                self._defer(stm, exit_losses + lo, (val[exit_losses] & K.DEPTH_MASK).astype(np.int64))
            self.frontier[stm] = np.concatenate(mates)
            if self._has_en_passant():
                self._init_en_passant(stm, subtables)
        self.ply = 1
        return {"legal": int(sum(np.count_nonzero(v != K.ILLEGAL) for v in self.val)),
                "mates": int(sum(len(f) for f in self.frontier))}

    def _has_en_passant(self) -> bool:
        m = self.scheme.material
        return "P" in m.white and "P" in m.black

    def _init_en_passant(self, stm: int, subtables: SubtableValues) -> None:
        e, s = self.exits, subtables
        q, p, win, draw, loss, q_moves, bad = K.ep_pairs_slice(self.scheme.desc, stm, self.lo, self.hi,
                                                               self.val[stm], e.exit_id, e.exit_flip, e.exit_perm,
                                                               e.subdesc, s.values, s.offsets)
        if bad:
            raise GenerationError(f"{self.scheme.material}: {bad} en-passant captures (side {stm}) lead to "
                               "positions their sub-table marks illegal")
        self.ep[stm] = (q, p, win, draw, loss)
        # A winning capture makes the en-passant vertex won for the side to move in `win`
        # plies at most: its predecessor loses that way out then, unless q itself is won sooner.
        has_win = win <= K.MAX_DEPTH
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
            hit = np.isin(q - self.lo, self.frontier[stm])
            if d % 2 == 0:  # q lost at d: the en-passant vertex is lost too unless a capture saves it
                lost = hit & (win > K.MAX_DEPTH) & ~draw
                out.append(p[lost & (loss <= d)])
                late = lost & (loss > d)
                self._ep_schedule(stm, loss[late], q[late], p[late], np.full(int(late.sum()), -1))
            else:  # q won at d: so is the vertex, unless a capture won it sooner
                out.append(p[hit & ((win > K.MAX_DEPTH) | (win >= d))])
        for side, q, p, threshold in self.ep_due.get(d, []):
            if side != stm:
                continue
            v = self.val[stm][q - self.lo]
            depth = (v & K.DEPTH_MASK).astype(np.int64)
            won_sooner = ((v & np.uint16(0xF000)) == K.DECIDED) & (depth % 2 == 1) & (depth <= threshold)
            out.append(p[~won_sooner])
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

    def expand(self, num_partitions: int) -> tuple[list[list[np.ndarray]], int]:
        """Un-move the next part of this partition's frontier. Returns, per destination
        partition, the predecessor indices for each side to move (``[white, black]``), and
        how many frontier positions are still to expand this ply."""
        empty = np.zeros(0, dtype=np.int64)
        out = [[empty, empty] for _ in range(num_partitions)]
        budget = EXPAND_BUDGET
        for stm in (0, 1):
            chunks = []
            if not self.ep_expanded[stm] and (self.ep or self.ep_due):
                chunks.append(self._ep_expand(stm))
                self.ep_expanded[stm] = True
            start = self.cursor[stm]
            if budget and start < len(self.frontier[stm]):
                part = self.frontier[stm][start:start + budget].astype(np.int64) + self.lo
                self.cursor[stm] = start + len(part)
                budget -= len(part)
                chunks.append(K.expand(self.scheme.desc, stm, part))
            preds = np.concatenate(chunks) if chunks else empty
            if num_partitions == 1:
                out[0][1 - stm] = preds
                continue
            dest = self.owner[preds // self.span]
            for p in range(num_partitions):
                out[p][1 - stm] = preds[dest == p]
        self.ep_due.pop(self.ply - 1, None)
        left = sum(len(f) - c for f, c in zip(self.frontier, self.cursor))
        return out, left

    def apply(self, incoming: list[list[np.ndarray]]) -> int:
        """Apply predecessor batches routed here (each ``[white, black]``): at an odd ply
        they win (their successor was lost at the last ply), at an even ply they lose a way
        out. Returns how many positions this decided."""
        decided = 0
        for stm in (0, 1):
            batches = [pair[stm] for pair in incoming if len(pair[stm])]
            if not batches:
                continue
            preds = np.concatenate(batches) if len(batches) > 1 else batches[0]
            if self.ply % 2 == 1:
                new = K.apply_wins(self.val[stm], self.lo, preds, self.ply)
            else:
                new, later, later_ply = K.apply_losses(self.val[stm], self.cnt[stm], self.lo, preds, self.ply)
                self._defer(stm, later, later_ply)
            self.next_frontier[stm].append((new - self.lo).astype(self.offset_type))
            decided += len(new)
        return decided

    def end_ply(self) -> int:
        """Decide what captures and promotions decide at this ply, make the positions
        decided at this ply the frontier and move to the next ply. Returns how many the
        exits decided."""
        ply = self.ply
        due: list[list[np.ndarray]] = [[], []]
        for stm, idx in self.pending.pop(ply, []):
            due[stm].append(idx)
        if ply <= K.MAX_DEPTH:
            for (stm, sl), hist in self.exit_wins.items():
                if hist[ply]:
                    lo, hi = self.scheme.slice_range(sl)
                    due[stm].append(np.flatnonzero(self.val[stm][lo - self.lo:hi - self.lo]
                                                   == (K.TENT_WIN | np.uint16(ply))) + lo)
        decided = 0
        for stm in (0, 1):
            parts = self.next_frontier[stm]
            for idx in due[stm]:
                new = K.decide_pending(self.val[stm], self.lo, idx, ply)
                parts.append((new - self.lo).astype(self.offset_type))
                decided += len(new)
            self.frontier[stm] = np.concatenate(parts) if parts else np.zeros(0, dtype=self.offset_type)
            self.cursor[stm] = 0
            self.next_frontier[stm] = []
        self.ep_expanded = [False, False]
        self.ply = ply + 1
        return decided

    def last_pending_ply(self) -> int:
        """The last ply at which an exit or an en-passant vertex still decides something."""
        wins = max((int(np.flatnonzero(h)[-1]) for h in self.exit_wins.values() if h.any()), default=-1)
        return max(max(self.pending, default=-1), max(self.ep_due, default=-2) + 1, wins)

    def state(self) -> dict[str, np.ndarray]:
        """Everything needed to go on from the end of the last ply (call it between plies),
        as named arrays: what a checkpoint stores."""
        st = {"ply": np.array(self.ply), "lo": np.array(self.lo), "hi": np.array(self.hi)}
        for stm in (0, 1):
            st[f"val{stm}"], st[f"cnt{stm}"], st[f"frontier{stm}"] = self.val[stm], self.cnt[stm], self.frontier[stm]
        st.update(_pack("exit_wins", [(stm, sl, (h,)) for (stm, sl), h in self.exit_wins.items()]))
        st.update(_pack("pending", [(ply, stm, (idx,)) for ply, items in self.pending.items() for stm, idx in items]))
        st.update(_pack("ep", [(stm, 0, arrays) for stm, arrays in self.ep.items()]))
        st.update(_pack("ep_due", [(ply, stm, arrays) for ply, items in self.ep_due.items()
                                   for stm, *arrays in items]))
        return st

    def restore(self, st: dict[str, np.ndarray]) -> None:
        """Continue from a :meth:`state` of a partition with the same slices."""
        if (int(st["lo"]), int(st["hi"])) != (self.lo, self.hi):
            raise ValueError(f"state of indices [{int(st['lo'])}, {int(st['hi'])}) given to the partition "
                             f"of [{self.lo}, {self.hi})")
        self._reset()
        self.ply = int(st["ply"])
        for stm in (0, 1):
            self.val[stm], self.cnt[stm] = st[f"val{stm}"], st[f"cnt{stm}"]
            self.frontier[stm] = st[f"frontier{stm}"].astype(self.offset_type, copy=False)
        self.exit_wins = {(stm, sl): h for stm, sl, (h,) in _unpack("exit_wins", st)}
        for ply, stm, (idx,) in _unpack("pending", st):
            self.pending.setdefault(ply, []).append((stm, idx))
        self.ep = {stm: arrays for stm, _, arrays in _unpack("ep", st)}
        for ply, stm, arrays in _unpack("ep_due", st):
            self.ep_due.setdefault(ply, []).append((stm, *arrays))

    def finish(self, folder: Path | None) -> list[ShardInfo]:
        """Turn undecided positions into draws; write one shard per (side, slice) when
        ``folder`` is given."""
        self.cnt = [np.empty(0, dtype=np.uint8)] * 2
        infos = []
        for stm in (0, 1):
            K.finalize(self.val[stm])
            if folder is not None:
                for sl in self.slices:
                    lo, hi = self.scheme.slice_range(sl)
                    infos.append(write_shard(folder, self.scheme.material.key, stm, sl, lo,
                                             self.val[stm][lo - self.lo:hi - self.lo]))
        return infos

    def peak_memory(self) -> int:
        """Peak resident memory of this process so far, in bytes (Linux reports KiB)."""
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def values(self) -> tuple[int, list[np.ndarray]]:
        """The first index and the values of both sides to move."""
        return self.lo, self.val


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
