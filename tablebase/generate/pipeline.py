"""The per-material pipeline: init -> ply-by-ply backward passes -> shards + manifest.

:func:`run_passes` drives any set of partitions (in-process here, Ray actors in
``tablebase.distributed``) through the supersteps, checkpointing them now and then;
:func:`solve_table` adds the recovery from a lost partition and the final shards;
:func:`generate_table` runs one table; :func:`generate` runs a list of tables and all
their sub-tables in dependency order, skipping tables already complete.
"""

from __future__ import annotations

import logging
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

import numpy as np

from .. import __version__
from ..endgame.index import IndexScheme
from ..endgame.material import dependency_order
from ..store.checkpoint import (Checkpoint, CorruptCheckpointError, StateFile, checkpoint_folder, read_checkpoint,
                                read_state, remove_checkpoints, write_checkpoint, write_state)
from ..store import (DEFAULT_CODING, Coding, ShardInfo, TableManifest, read_manifest, remove_other_format,
                     table_complete, write_manifest)
from ..store.layout import candidate_orders, natural_order, order_sample
from ..store.manifest import METRICS, METRICS_WITHOUT_DTZ
from .exact import load_subtable_classes, load_subtables
from .partition import PACKING, GenerationError, Partition, Tick, partition_bounds, read_only, result_of, subtable_reads

log = logging.getLogger(__name__)


class Progress(Protocol):
    """Where the generation of a table stands, as the driver sees it (the CLI prints it)."""

    def ply(self, material: str, ply: int, decided: int, total: int, legal: int, seconds: float) -> None:
        """After a ply of the DTM passes: decided at this ply, decided so far, of the legal positions."""

    def stage(self, material: str, text: str) -> None:
        """During the other stages (init, the DTZ passes, writing): ``text`` says where."""

#: How often a table is rolled back and resumed after losing a partition before giving up.
MAX_RESTARTS = 3


class PartitionLost(RuntimeError):
    """A partition's worker died and took its values with it (the executor restarts it empty)."""


class Partitions(Protocol):
    """A table's partitions, wherever they run. Any method may raise :class:`PartitionLost`."""

    bounds: list[int]

    def where(self) -> list[tuple[str, int]]: ...

    def peak_memory(self) -> list[int]: ...

    def routed(self) -> list[dict[tuple[str, int], int]]: ...

    def init(self, dtz: bool = True, tick: Tick | None = None) -> list[dict]: ...

    def superstep(self, ply: int) -> int: ...

    def last_pending_ply(self) -> int: ...

    def save(self, folder: Path, ply: int) -> list[StateFile]: ...

    def load(self, folder: Path, states: list[StateFile]) -> None: ...

    def order_costs(self, sample: list[int], dont_care: str) -> list[dict]: ...

    def dtz_classes(self, stm: int, tick: Tick | None = None) -> list[list[bytes]]: ...

    def dtz_init(self, classes: "TableClasses", tick: Tick | None = None) -> None: ...

    def finish(self, folder: Path | None, orders: tuple, coding: Coding, tick: Tick | None = None) -> list[ShardInfo]: ...

    def close(self) -> None: ...


class LocalPartitions:
    """Every partition in this process (tests, small tables, the body of a Ray task), the
    sub-tables read from the complete tables in ``out``."""

    def __init__(self, key: str, out: Path, num_partitions: int = 1):
        self.key, self.out = key, Path(out)
        self.bounds = partition_bounds(IndexScheme.of(key), num_partitions)
        self.parts = [Partition(key, self.bounds[p], self.bounds[p + 1], self.bounds)
                      for p in range(len(self.bounds) - 1)]

    def where(self) -> list[tuple[str, int]]:
        """(node, process id) of every partition: all here."""
        return [("local", os.getpid())] * len(self.parts)

    def peak_memory(self) -> list[int]:
        return [self.parts[0].peak_memory()] * len(self.parts)

    def routed(self) -> list[dict[tuple[str, int], int]]:
        return [p.routed for p in self.parts]

    def init(self, dtz: bool = True, tick: Tick | None = None) -> list[dict]:
        stats = []
        for stm in init_order(self.key):
            subtables = load_subtables(self.out, self.key, stm)
            stats += [result_of(p.init(stm, subtables, dtz), tick) for p in self.parts]
            del subtables  # before the other side's values take their memory
        return stats

    def dtz_classes(self, stm: int, tick: Tick | None = None) -> list[list[bytes]]:
        return [result_of(p.dtz_classes(stm), tick) for p in self.parts]

    def dtz_init(self, classes: "TableClasses", tick: Tick | None = None) -> None:
        for stm in init_order(self.key):
            subclasses = load_subtable_classes(self.out, self.key, stm)
            them = classes.reached_by(stm)
            for p in self.parts:
                result_of(p.dtz_init(stm, subclasses, them), tick)
            del subclasses, them

    def superstep(self, ply: int) -> int:
        n = len(self.parts)
        decided = 0
        left = 1
        while left:
            left = 0
            outgoing = []
            for p in self.parts:
                out, rest = p.expand(n)
                outgoing.append(out)
                left += rest
            decided += sum(p.apply([out[i] for out in outgoing]) for i, p in enumerate(self.parts))
        return decided + sum(p.end_ply() for p in self.parts)

    def last_pending_ply(self) -> int:
        return max(p.last_pending_ply() for p in self.parts)

    def save(self, folder: Path, ply: int) -> list[StateFile]:
        return [write_state(folder, i, ply, p.state()) for i, p in enumerate(self.parts)]

    def load(self, folder: Path, states: list[StateFile]) -> None:
        for p, state in zip(self.parts, states):
            p.restore(read_state(folder, state))

    def order_costs(self, sample: list[int], dont_care: str) -> list[dict]:
        return [p.order_costs(sample, dont_care) for p in self.parts]

    def finish(self, folder: Path | None, orders: tuple, coding: Coding, tick: Tick | None = None) -> list[ShardInfo]:
        return [info for p in self.parts for info in result_of(p.finish(folder, orders, coding), tick)]

    def close(self) -> None:
        pass

    def values(self, metric: str = "dtm") -> tuple[np.ndarray, np.ndarray]:
        """Both sides' final codes (after :meth:`finish`), exact DTM or DTZ, for tests."""
        out = [np.empty(self.parts[0].scheme.size, dtype=np.uint16) for _ in range(2)]
        for p in self.parts:
            lo, vals = p.values() if metric == "dtm" else p.dtz_values()
            for stm in (0, 1):
                out[stm][lo:lo + len(vals[stm])] = vals[stm]
        return out[0], out[1]


@dataclass
class TableStats:
    material: str
    positions: int = 0
    legal: int = 0
    plies: int = 0
    seconds: float = 0.0  # end to end: the partitions' start to the manifest
    pass_seconds: float = 0.0  # the DTM passes
    init_seconds: float = 0.0  # init (reading the sub-tables, classifying), or a resume
    write_seconds: float = 0.0  # the storage orders and the shards
    bytes: int = 0
    skipped: bool = False
    counts: dict = field(default_factory=dict)
    longest_dtm: int = 0
    resumed_from: int = 0  # the checkpointed ply this run started from (0: from init)
    restarts: int = 0  # roll-backs after a lost partition
    partitions: int = 1
    nodes: int = 1  # the nodes the partitions ran on
    worker_peak_bytes: int = 0  # the largest peak RSS of a process that held partitions
    node_peak_bytes: int = 0  # the largest sum over a node of its processes' peak RSS
    routed_bytes: int = 0  # predecessors sent between partitions, in all (since init or a resume)
    routed_ply_bytes: int = 0  # the same, at the ply that sent most
    dtz_passes: int = 0  # DTZ passes run (see run_dtz)
    dtz_plies: int = 0  # plies of the last DTZ pass
    dtz_seconds: float = 0.0
    longest_dtz: int = 0
    has_dtz: bool = True  # the table holds the 50-move rule's values


def _resume(key: str, parts: Partitions, checkpoints: Path) -> Checkpoint | None:
    """Restore the partitions from the table's last checkpoint, if it fits them."""
    cp = read_checkpoint(checkpoints, key)
    if cp is None:
        return None
    if cp.bounds != parts.bounds:
        log.info("%s: checkpoint of ply %d ignored: written for partitions %s, not %s",
                 key, cp.ply, cp.bounds, parts.bounds)
        return None
    try:
        parts.load(checkpoints, cp.states)
    except CorruptCheckpointError as e:
        log.warning("%s: checkpoint of ply %d ignored: %s", key, cp.ply, e)
        return None
    return cp


def run_passes(key: str, parts: Partitions, progress: Progress | None = None, *, checkpoints: Path | None = None,
               checkpoint_seconds: float = math.inf, dtz: bool = True) -> TableStats:
    """Init (or resume from the last checkpoint in ``checkpoints``), then supersteps until
    a ply decides nothing and no exit is still due; every ``checkpoint_seconds`` the
    partitions' state at the end of a ply is saved to ``checkpoints``. ``dtz``: the DTZ
    passes will follow."""
    t0 = time.perf_counter()
    cp = _resume(key, parts, checkpoints) if checkpoints is not None else None
    if cp is None:
        legal = sum(s["legal"] for s in parts.init(dtz, stage_ticker(progress, key, "init", "slices")))
        ply = total = 0
    else:
        legal, ply, total = cp.legal, cp.ply, cp.decided
        log.info("%s: resumed from the checkpoint of ply %d", key, ply)
    t1 = last_save = time.perf_counter()
    stats = TableStats(material=key, positions=2 * IndexScheme.of(key).size, legal=legal,
                       resumed_from=cp.ply if cp else 0, init_seconds=t1 - t0)

    def after_ply(ply: int, decided: int, total: int) -> None:
        nonlocal last_save
        if progress is not None:
            progress.ply(key, ply, decided, total, legal, time.perf_counter() - t0)
        if checkpoints is not None and time.perf_counter() - last_save >= checkpoint_seconds:
            states = parts.save(checkpoints, ply)
            write_checkpoint(checkpoints, Checkpoint(key, ply, list(parts.bounds), states, legal, total))
            last_save = time.perf_counter()

    stats.plies = sweep(parts, ply, total, after_ply)
    stats.pass_seconds = time.perf_counter() - t1
    return stats


def stage_ticker(progress: Progress | None, key: str, what: str, unit: str) -> Tick | None:
    """A :data:`Tick` that shows stage ``what`` of table ``key`` as done of all ``unit``
    (slices of both sides or shards: the index's slices twice)."""
    if progress is None:
        return None
    total = 2 * IndexScheme.of(key).num_slices
    done = 0

    def tick(steps: int) -> None:
        nonlocal done
        done += steps
        progress.stage(key, f"{what}: {done:,} of {total:,} {unit}")
    return tick


def sweep(parts: Partitions, ply: int = 0, total: int = 0,
          after_ply: Callable[[int, int, int], None] | None = None) -> int:
    """Supersteps from the one after ``ply`` until one decides nothing and no exit is still
    due; ``after_ply(ply, decided, total)`` after each but the last. Returns the last ply."""
    while True:
        ply += 1
        decided = parts.superstep(ply)
        total += decided
        if decided == 0 and parts.last_pending_ply() < ply:
            return ply
        if after_ply is not None:
            after_ply(ply, decided, total)


@dataclass(frozen=True)
class TableClasses:
    """Both sides' classes over a table's whole index (what its pawn moves reach), each
    slice's zstd-compressed: between the DTZ inits they take no memory to speak of, the
    whole of a side never exists but while a DTZ init reads it, and equal bytes are equal
    classes."""

    packed: tuple[tuple[bytes, ...], tuple[bytes, ...]]
    key: str

    @classmethod
    def of(cls, parts: Partitions, key: str, tick: Tick | None = None) -> "TableClasses":
        """The partitions' classes, slices in index order."""
        return cls(tuple(tuple(chunk for part in parts.dtz_classes(stm, tick) for chunk in part) for stm in (0, 1)),
                   key)

    @classmethod
    def none(cls) -> "TableClasses":
        """For a table without pawn moves (no class is read)."""
        return cls(((), ()), "")

    def reached_by(self, stm: int) -> np.ndarray:
        """The classes the pawn moves of side to move ``stm`` reach: the other side's (the
        whole index), nothing for a side without pawns."""
        material = IndexScheme.of(self.key).material if self.key else None
        if material is None or "P" not in (material.white, material.black)[stm]:
            return read_only(np.zeros(1, dtype=np.int8))
        return read_only(self.side(1 - stm))

    def side(self, stm: int) -> np.ndarray:
        if not self.key:
            return np.zeros(1, dtype=np.int8)
        scheme = IndexScheme.of(self.key)
        out = np.empty(scheme.size, dtype=np.int8)
        for sl, chunk in enumerate(self.packed[stm]):
            lo, hi = scheme.slice_range(sl)
            out[lo:hi] = np.frombuffer(PACKING.decompress(chunk, decompressed_size=hi - lo), dtype=np.int8)
        return out


def run_dtz(key: str, parts: Partitions, progress: Progress | None = None) -> tuple[int, int]:
    """The DTZ50'' passes (after the DTM passes, over the same partitions). A pawn move's
    value is the class of the position it reaches in this table: the first pass assumes
    the DTM values' (every win and loss within the rule), and a pass runs again with the
    classes the last one found until they are the ones it assumed; pawn moves only go
    forward, so that takes one pass more than the longest chain of pawn moves on which a
    cursed win or blessed loss changes a class. Returns the passes and the last one's plies."""
    pawnful = IndexScheme.of(key).material.has_pawns
    classes = (TableClasses.of(parts, key, stage_ticker(progress, key, "DTZ classes", "slices")) if pawnful
               else TableClasses.none())
    passes = 0

    def after_ply(ply: int, decided: int, total: int) -> None:
        if progress is not None:
            progress.stage(key, f"DTZ pass {passes}, ply {ply}: {total:,} resolved")

    while True:
        passes += 1
        parts.dtz_init(classes, stage_ticker(progress, key, f"DTZ pass {passes} init", "slices"))
        plies = sweep(parts, after_ply=after_ply)
        if not pawnful:
            return passes, plies
        found = TableClasses.of(parts, key, stage_ticker(progress, key, f"DTZ pass {passes} classes", "slices"))
        if found == classes:
            return passes, plies
        log.info("%s: DTZ pass %d changed classes; again", key, passes)
        classes = found


def choose_orders(key: str, parts: Partitions, coding: Coding) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The storage order of each side to move: the one whose rows compress best on the
    sample slices (the same whichever partitions hold them), else the index's own."""
    scheme = IndexScheme.of(key)
    if coding.order == "natural":
        return natural_order(scheme), natural_order(scheme)
    totals: dict[tuple[int, tuple[int, ...]], int] = {}
    for costs in parts.order_costs(order_sample(scheme), coding.dont_care):
        for k, v in costs.items():
            totals[k] = totals.get(k, 0) + v
    return tuple(min(candidate_orders(scheme), key=lambda o: (totals[stm, o], o)) for stm in (0, 1))


def solve_table(key: str, parts: Partitions, folder: Path | None = None, progress: Progress | None = None, *,
                checkpoint_seconds: float | None = None, coding: Coding = DEFAULT_CODING,
                max_restarts: int = MAX_RESTARTS, dtz: bool = True) -> tuple[TableStats, list[ShardInfo], tuple]:
    """:func:`run_passes`, the DTZ passes where ``dtz`` (:func:`run_dtz`), then the
    shards into ``folder`` (when given). A lost partition
    rolls every partition back to the last checkpoint (or to init) and the table goes on:
    the passes are deterministic, so the shards are those of an undisturbed run.
    ``checkpoint_seconds=None`` writes no checkpoints (and resumes from none)."""
    checkpoints = checkpoint_folder(folder) if folder is not None and checkpoint_seconds is not None else None
    restarts = 0
    while True:
        try:
            stats = run_passes(key, parts, progress, checkpoints=checkpoints,
                               checkpoint_seconds=checkpoint_seconds if checkpoint_seconds is not None else math.inf,
                               dtz=dtz)
            t = time.perf_counter()
            orders = choose_orders(key, parts, coding)
            stats.write_seconds = time.perf_counter() - t
            if dtz:
                t = time.perf_counter()
                stats.dtz_passes, stats.dtz_plies = run_dtz(key, parts, progress)
                stats.dtz_seconds = time.perf_counter() - t
            t = time.perf_counter()
            infos = parts.finish(folder, orders, coding, stage_ticker(progress, key, "writing", "shards"))
            stats.write_seconds += time.perf_counter() - t
            stats.worker_peak_bytes, stats.node_peak_bytes = peaks(parts)
            stats.routed_bytes, stats.routed_ply_bytes = routed(parts)
        except PartitionLost as e:
            restarts += 1
            if restarts > max_restarts:
                raise GenerationError(f"{key}: lost a partition {restarts} times, giving up: {e}") from e
            log.warning("%s: lost a partition (%s); rolling back to the last checkpoint", key, e)
            continue
        stats.restarts = restarts
        if checkpoints is not None:
            remove_checkpoints(checkpoints)
        return stats, infos, orders


def peaks(parts: Partitions) -> tuple[int, int]:
    """The largest peak RSS of a process holding partitions, and the largest sum of those
    of one node (their peaks need not coincide: an upper bound of the node's peak)."""
    node: dict[str, dict[int, int]] = {}
    for (where, pid), peak in zip(parts.where(), parts.peak_memory()):
        node.setdefault(where, {})[pid] = peak
    return max(max(p.values()) for p in node.values()), max(sum(p.values()) for p in node.values())


def routed(parts: Partitions) -> tuple[int, int]:
    """Bytes of predecessors the partitions sent each other: in all, and at the ply (DTM
    or DTZ) that sent most."""
    by_ply: dict[tuple[str, int], int] = {}
    for part in parts.routed():
        for at, n in part.items():
            by_ply[at] = by_ply.get(at, 0) + n
    return sum(by_ply.values()), max(by_ply.values(), default=0)


def init_order(key: str) -> list[int]:
    """Sides to move in the order init takes them: the one whose exits read more sub-table
    values first, while the other side's values take no memory yet."""
    return [0, 1] if subtable_reads(key, 0) >= subtable_reads(key, 1) else [1, 0]


def write_table_manifest(out: Path, key: str, infos: list[ShardInfo], orders: tuple, coding: Coding,
                         config: dict | None = None, dtz: bool = True) -> TableManifest:
    manifest = TableManifest(material=key, index_size=IndexScheme.of(key).size,
                             shards=sorted(infos, key=lambda i: (i.side, i.start)),
                             orders={"w": list(orders[0]), "b": list(orders[1])}, coding=coding.as_dict(),
                             metrics=list(METRICS if dtz else METRICS_WITHOUT_DTZ),
                             generator=f"tablebase {__version__}", config=config or {})
    write_manifest(out / key, manifest)
    return manifest


def finish_stats(stats: TableStats, manifest: TableManifest, t0: float) -> TableStats:
    stats.seconds = time.perf_counter() - t0
    stats.bytes = manifest.total_bytes
    stats.counts = manifest.counts()
    stats.longest_dtm = manifest.longest_dtm
    stats.longest_dtz = manifest.longest_dtz
    stats.has_dtz = manifest.has_dtz
    return stats


def skipped_stats(out: Path, key: str) -> TableStats:
    manifest = read_manifest(out / key)
    stats = TableStats(material=key, positions=2 * manifest.index_size, skipped=True)
    return finish_stats(stats, manifest, time.perf_counter())


def generate_table(out: Path, key: str, *, num_partitions: int = 1, progress: Progress | None = None,
                   config: dict | None = None, checkpoint_seconds: float | None = None,
                   coding: Coding = DEFAULT_CODING, dtz: bool = True,
                   make_partitions: Callable[[str, Path, int], Partitions] = LocalPartitions) -> TableStats:
    """Generate one table (its sub-tables must be complete under ``out``), by default in
    this process; ``make_partitions`` places the partitions elsewhere (Ray actors). With
    ``checkpoint_seconds``, a run resumes from the table's last checkpoint and writes one
    at the end of a ply at most that often. ``dtz=False``: WDL and DTM only, no 50-move
    rule (its sub-tables then need no DTZ either). A table of another format is replaced,
    and so is one without DTZ where ``dtz`` asks for it."""
    out = Path(out)
    if table_complete(out / key, key, dtz=dtz):
        return skipped_stats(out, key)
    if remove_other_format(out / key):
        log.info("%s: removed a table of an older format, to write it again", key)
    t0 = time.perf_counter()
    parts = make_partitions(key, out, num_partitions)
    try:
        where = parts.where()
        stats, infos, orders = solve_table(key, parts, out / key, progress, checkpoint_seconds=checkpoint_seconds,
                                           coding=coding, dtz=dtz)
    finally:
        parts.close()
    stats.partitions, stats.nodes = len(where), len({node for node, _ in where})
    manifest = write_table_manifest(out, key, infos, orders, coding, config, dtz)
    return finish_stats(stats, manifest, t0)


def generate(keys: list[str], out: Path, *, progress: Progress | None = None,
             on_table: Callable[[TableStats], None] | None = None, config: dict | None = None,
             checkpoint_seconds: float | None = None, dtz: bool = True) -> list[TableStats]:
    """Generate ``keys`` and every sub-table they need, in this process, sub-tables first
    (``dtz=False``: WDL and DTM only)."""
    results = []
    for key in dependency_order(keys):
        stats = generate_table(Path(out), key, progress=progress, config=config,
                               checkpoint_seconds=checkpoint_seconds, dtz=dtz)
        if on_table is not None:
            on_table(stats)
        results.append(stats)
    return results
