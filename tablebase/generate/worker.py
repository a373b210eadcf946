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

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..endgame.index import IndexScheme
from ..endgame.movegen import ExitMap
from ..store.shards import ShardInfo, write_shard
from . import kernels as K


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


def units_of(scheme: IndexScheme) -> list[tuple[int, int]]:
    """Every (side to move, slice) unit of a table, slices in index order."""
    return [(stm, s) for s in range(scheme.num_slices) for stm in (0, 1)]


def assign_units(scheme: IndexScheme, num_partitions: int) -> list[list[tuple[int, int]]]:
    """Contiguous runs of slices per partition (both sides of a slice together): king
    moves reach neighbouring king pairs, so most un-moves stay inside a partition."""
    n = scheme.num_slices
    parts = min(num_partitions, n)
    bounds = [round(i * n / parts) for i in range(parts + 1)]
    return [[(stm, s) for s in range(bounds[p], bounds[p + 1]) for stm in (0, 1)] for p in range(parts)]


#: Frontier positions un-moved per expand call: bounds the predecessor buffers (about
#: 15 predecessors of 8 bytes each per position) whatever the size of a ply.
EXPAND_BUDGET = 1 << 19


class Partition:
    """The values of some units of one table, with the stage kernels applied to them.

    A ply runs as: ``expand`` until it reports nothing left (each call un-moves at most
    :data:`EXPAND_BUDGET` frontier positions), ``apply`` of every batch routed here, then
    ``end_ply``. Batches of one ply commute, so their number and order do not matter.
    """

    def __init__(self, key: str, units: list[tuple[int, int]], owner: np.ndarray, subtables: SubtableValues):
        self.scheme = IndexScheme.of(key)
        self.exits = ExitMap.of(self.scheme.material)
        self.units = units
        self.owner = owner  # owner[stm, slice] -> partition number
        self.subtables = subtables
        self.val: dict[tuple[int, int], np.ndarray] = {}
        self.cnt: dict[tuple[int, int], np.ndarray] = {}
        self.ply = 0  # the ply being built (its positions are the next frontier)
        # Decided at ply - 1, as int32 offsets from the unit's first index (4 bytes each:
        # a ply can decide a good part of a table).
        self.frontier: dict[tuple[int, int], np.ndarray] = {}
        self.cursor: dict[tuple[int, int], int] = {}
        self.next_frontier: dict[tuple[int, int], list[np.ndarray]] = {}
        # Positions a capture or promotion wins are found by scanning for their value at
        # the ply it names (no index lists: they can be half the table).
        self.exit_wins: dict[tuple[int, int], np.ndarray] = {}  # unit -> count per ply
        self.pending: dict[int, list[tuple[tuple[int, int], np.ndarray]]] = {}
        # En-passant vertices ("q with an en-passant square", reached from p by a double
        # step): per unit, arrays q, p, and the captures' fastest win / any draw / slowest
        # loss. ep_due[ply] lists the predecessors to emit when expanding ply + 1, with a
        # threshold: skip those whose q is won by then in at most that many plies.
        self.ep: dict[tuple[int, int], tuple[np.ndarray, ...]] = {}
        self.ep_due: dict[int, list[tuple[tuple[int, int], np.ndarray, np.ndarray, np.ndarray]]] = {}

    def _range(self, unit: tuple[int, int]) -> tuple[int, int]:
        return self.scheme.slice_range(unit[1])

    def _defer(self, unit: tuple[int, int], indices: np.ndarray, plies: np.ndarray) -> None:
        for ply in np.unique(plies):
            self.pending.setdefault(int(ply), []).append((unit, indices[plies == ply]))

    def init(self) -> dict:
        """Classify every position and read the exits; checkmates form the ply-0 frontier."""
        e, s = self.exits, self.subtables
        legal = 0
        for unit in self.units:
            lo, hi = self._range(unit)
            val = np.empty(hi - lo, dtype=np.uint16)
            cnt = np.empty(hi - lo, dtype=np.uint8)
            bad = K.init_slice(self.scheme.desc, unit[0], lo, hi, e.exit_id, e.exit_flip, e.exit_perm, e.subdesc,
                               s.values, s.offsets, val, cnt)
            if bad:
                raise RuntimeError(f"{self.scheme.material}: {bad} exits of slice {unit} lead to positions "
                                   "their sub-table marks illegal")
            self.val[unit], self.cnt[unit] = val, cnt
            self.frontier[unit] = np.flatnonzero(val == K.DECIDED).astype(np.int32)
            self.cursor[unit] = 0
            kind = val & np.uint16(0xF000)
            self.exit_wins[unit] = np.bincount(val[kind == K.TENT_WIN] & K.DEPTH_MASK, minlength=K.MAX_DEPTH + 1)
            exit_losses = np.flatnonzero((kind == K.TENT_LOSS) & (cnt == 0))
            self._defer(unit, exit_losses + lo, (val[exit_losses] & K.DEPTH_MASK).astype(np.int64))
            legal += int((val != K.ILLEGAL).sum())
            if self._has_en_passant():
                self._init_en_passant(unit, lo, hi)
        self.ply = 1
        self.next_frontier = {unit: [] for unit in self.units}
        return {"legal": legal, "mates": sum(len(f) for f in self.frontier.values())}

    def _has_en_passant(self) -> bool:
        m = self.scheme.material
        return "P" in m.white and "P" in m.black

    def _init_en_passant(self, unit: tuple[int, int], lo: int, hi: int) -> None:
        e, s = self.exits, self.subtables
        q, p, win, draw, loss, q_moves, bad = K.ep_pairs_slice(self.scheme.desc, unit[0], lo, hi, self.val[unit],
                                                               e.exit_id, e.exit_flip, e.exit_perm, e.subdesc,
                                                               s.values, s.offsets)
        if bad:
            raise RuntimeError(f"{self.scheme.material}: {bad} en-passant captures of slice {unit} lead to "
                               "positions their sub-table marks illegal")
        self.ep[unit] = (q, p, win, draw, loss)
        # A winning capture makes the en-passant vertex won for the side to move in `win`
        # plies at most: its predecessor loses that way out then, unless q itself is won sooner.
        has_win = win <= K.MAX_DEPTH
        self._ep_schedule(unit, win[has_win], q[has_win], p[has_win], win[has_win])
        # A stalemated q is never decided: its vertex's value is the captures' alone.
        lost = ~q_moves & ~has_win & ~draw
        self._ep_schedule(unit, loss[lost], q[lost], p[lost], np.full(int(lost.sum()), -1))

    def _ep_schedule(self, unit, plies, q, p, threshold) -> None:
        for ply in np.unique(plies):
            sel = plies == ply
            self.ep_due.setdefault(int(ply), []).append((unit, q[sel], p[sel], threshold[sel]))

    def _ep_expand(self, unit: tuple[int, int]) -> np.ndarray:
        """Predecessors through en-passant vertices to emit for the current ply."""
        out = []
        d = self.ply - 1
        lo, _ = self._range(unit)
        if unit in self.ep:
            q, p, win, draw, loss = self.ep[unit]
            hit = np.isin(q - lo, self.frontier[unit])
            if d % 2 == 0:  # q lost at d: the en-passant vertex is lost too unless a capture saves it
                lost = hit & (win > K.MAX_DEPTH) & ~draw
                out.append(p[lost & (loss <= d)])
                late = lost & (loss > d)
                self._ep_schedule(unit, loss[late], q[late], p[late], np.full(int(late.sum()), -1))
            else:  # q won at d: so is the vertex, unless a capture won it sooner
                out.append(p[hit & ((win > K.MAX_DEPTH) | (win >= d))])
        for u, q, p, threshold in self.ep_due.get(d, []):
            if u != unit:
                continue
            v = self.val[unit][q - lo]
            depth = (v & K.DEPTH_MASK).astype(np.int64)
            won_sooner = ((v & np.uint16(0xF000)) == K.DECIDED) & (depth % 2 == 1) & (depth <= threshold)
            out.append(p[~won_sooner])
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

    def expand(self, num_partitions: int) -> tuple[list[np.ndarray], int]:
        """Un-move the next part of this partition's frontier. Returns the predecessors as
        global ids (``stm * size + index``), one array per destination partition, and how
        many frontier positions are still to expand this ply."""
        size = self.scheme.size
        span = self.scheme.slice_range(0)[1]
        chunks = []
        budget = EXPAND_BUDGET
        for unit, frontier in self.frontier.items():
            stm = unit[0]
            start = self.cursor[unit]
            if start == 0 and (self.ep or self.ep_due):
                chunks.append(self._ep_expand(unit) + (1 - stm) * size)
            if budget and start < len(frontier):
                part = frontier[start:start + budget] + np.int64(self._range(unit)[0])
                self.cursor[unit] = start + len(part)
                budget -= len(part)
                chunks.append(K.expand(self.scheme.desc, stm, part) + (1 - stm) * size)
        self.ep_due.pop(self.ply - 1, None)
        left = sum(len(f) - self.cursor[u] for u, f in self.frontier.items())
        preds = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)
        dest = self.owner[preds // size, (preds % size) // span]
        order = np.argsort(dest, kind="stable")
        preds, dest = preds[order], dest[order]
        cuts = np.searchsorted(dest, np.arange(num_partitions + 1))
        return [preds[cuts[p]:cuts[p + 1]] for p in range(num_partitions)], left

    def apply(self, incoming: list[np.ndarray]) -> int:
        """Apply predecessors routed here: at an odd ply they win (their successor was
        lost at the last ply), at an even ply they lose a way out. Returns how many
        positions this decided."""
        size = self.scheme.size
        span = self.scheme.slice_range(0)[1]
        preds = np.concatenate(incoming) if incoming else np.zeros(0, dtype=np.int64)
        if not len(preds):
            return 0
        unit_of = (preds // size) * (1 << 40) + (preds % size) // span
        order = np.argsort(unit_of, kind="stable")
        preds, unit_of = preds[order], unit_of[order]
        decided = 0
        for unit in self.units:
            stm, s = unit
            a, b = np.searchsorted(unit_of, [stm * (1 << 40) + s, stm * (1 << 40) + s + 1])
            if a == b:
                continue
            lo, _ = self._range(unit)
            mine = preds[a:b] % size
            if self.ply % 2 == 1:
                new = K.apply_wins(self.val[unit], lo, mine, self.ply)
            else:
                new, later, later_ply = K.apply_losses(self.val[unit], self.cnt[unit], lo, mine, self.ply)
                self._defer(unit, later, later_ply)
            self.next_frontier[unit].append((new - lo).astype(np.int32))
            decided += len(new)
        return decided

    def end_ply(self) -> int:
        """Decide what captures and promotions decide at this ply, make the positions
        decided at this ply the frontier and move to the next ply. Returns how many the
        exits decided."""
        ply = self.ply
        due: dict[tuple[int, int], list[np.ndarray]] = {}
        for unit, idx in self.pending.pop(ply, []):
            due.setdefault(unit, []).append(idx)
        decided = 0
        for unit in self.units:
            lo, _ = self._range(unit)
            val = self.val[unit]
            parts = self.next_frontier[unit]
            if ply <= K.MAX_DEPTH and self.exit_wins[unit][ply]:
                due.setdefault(unit, []).append(np.flatnonzero(val == (K.TENT_WIN | np.uint16(ply))) + lo)
            for idx in due.get(unit, []):
                new = K.decide_pending(val, lo, idx, ply)
                parts.append((new - lo).astype(np.int32))
                decided += len(new)
            self.frontier[unit] = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
            self.cursor[unit] = 0
            self.next_frontier[unit] = []
        self.ply = ply + 1
        return decided

    def last_pending_ply(self) -> int:
        """The last ply at which an exit or an en-passant vertex still decides something."""
        wins = max((int(np.flatnonzero(h)[-1]) for h in self.exit_wins.values() if h.any()), default=-1)
        return max(max(self.pending, default=-1), max(self.ep_due, default=-2) + 1, wins)

    def finish(self, folder: Path | None) -> list[ShardInfo]:
        """Turn undecided positions into draws; write one shard per unit when ``folder`` is given."""
        infos = []
        for unit in self.units:
            K.finalize(self.val[unit])
            self.cnt.pop(unit, None)
            if folder is not None:
                lo, _ = self._range(unit)
                infos.append(write_shard(folder, self.scheme.material.key, unit[0], unit[1], lo, self.val[unit]))
        return infos

    def values(self) -> dict[tuple[int, int], np.ndarray]:
        return self.val
