"""The per-material pipeline: init -> ply-by-ply backward passes -> shards + manifest.

:func:`run_passes` drives any set of partitions (in-process here, Ray actors in
``tablebase.distributed``) through the supersteps; :func:`generate_table` runs one table in
this process; :func:`generate` runs a list of tables and all their sub-tables in
dependency order, skipping tables already complete.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

import numpy as np

from .. import __version__
from ..endgame.index import IndexScheme
from ..endgame.material import Material, dependency_order
from ..store.shards import ShardInfo, TableManifest, load_table, read_manifest, table_complete, write_manifest
from .worker import Partition, SubtableValues, partition_bounds

#: progress(material, ply, decided at this ply, decided so far, legal positions, seconds)
Progress = Callable[[str, int, int, int, int, float], None]


class Partitions(Protocol):
    """A table's partitions, wherever they run."""

    def init(self) -> list[dict]: ...

    def superstep(self, ply: int) -> int: ...

    def last_pending_ply(self) -> int: ...

    def finish(self, folder: Path | None) -> list[ShardInfo]: ...


class LocalPartitions:
    """Every partition in this process (tests, small tables, the body of a Ray task)."""

    def __init__(self, key: str, subtables: SubtableValues, num_partitions: int = 1):
        bounds = partition_bounds(IndexScheme.of(key), num_partitions)
        self.parts = [Partition(key, bounds[p], bounds[p + 1], bounds, subtables) for p in range(len(bounds) - 1)]

    def init(self) -> list[dict]:
        return [p.init() for p in self.parts]

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

    def finish(self, folder: Path | None) -> list[ShardInfo]:
        return [info for p in self.parts for info in p.finish(folder)]

    def values(self) -> tuple[np.ndarray, np.ndarray]:
        """Both sides' final values (after :meth:`finish`), for tests."""
        out = [np.empty(self.parts[0].scheme.size, dtype=np.uint16) for _ in range(2)]
        for p in self.parts:
            lo, vals = p.values()
            for stm in (0, 1):
                out[stm][lo:lo + len(vals[stm])] = vals[stm]
        return out[0], out[1]


@dataclass
class TableStats:
    material: str
    positions: int = 0
    legal: int = 0
    plies: int = 0
    seconds: float = 0.0
    pass_seconds: float = 0.0
    bytes: int = 0
    skipped: bool = False
    counts: dict = field(default_factory=dict)
    longest_dtm: int = 0


def run_passes(key: str, parts: Partitions, progress: Progress | None = None) -> TableStats:
    """Init, then supersteps until a ply decides nothing and no exit is still due."""
    t0 = time.perf_counter()
    legal = sum(s["legal"] for s in parts.init())
    t1 = time.perf_counter()
    total = 0
    ply = 0
    while True:
        ply += 1
        decided = parts.superstep(ply)
        total += decided
        if progress is not None:
            progress(key, ply, decided, total, legal, time.perf_counter() - t0)
        if decided == 0 and parts.last_pending_ply() < ply:
            break
    stats = TableStats(material=key, positions=2 * IndexScheme.of(key).size, legal=legal, plies=ply)
    stats.pass_seconds = time.perf_counter() - t1
    return stats


def load_subtables(out: Path, key: str) -> SubtableValues:
    """Final values of the direct sub-tables of ``key``, from their complete tables under ``out``."""
    out = Path(out)
    tables = []
    for sub in Material.parse(key).direct_subtables():
        if not table_complete(out / sub.key, sub.key, hash_check=False):
            raise FileNotFoundError(f"sub-table {sub.key} of {key} is missing or incomplete in {out}")
        tables.append(load_table(out / sub.key, sub.key))
    return SubtableValues.build(tables)


def write_table_manifest(out: Path, key: str, infos: list[ShardInfo], config: dict | None = None) -> TableManifest:
    manifest = TableManifest(material=key, index_size=IndexScheme.of(key).size,
                             shards=sorted(infos, key=lambda i: (i.side, i.start)),
                             generator=f"tablebase {__version__}", config=config or {})
    write_manifest(out / key, manifest)
    return manifest


def finish_stats(stats: TableStats, manifest: TableManifest, t0: float) -> TableStats:
    stats.seconds = time.perf_counter() - t0
    stats.bytes = manifest.total_bytes
    stats.counts = manifest.counts()
    stats.longest_dtm = manifest.longest_dtm
    return stats


def skipped_stats(out: Path, key: str) -> TableStats:
    manifest = read_manifest(out / key)
    stats = TableStats(material=key, positions=2 * manifest.index_size, skipped=True)
    return finish_stats(stats, manifest, time.perf_counter())


def generate_table(out: Path, key: str, *, num_partitions: int = 1, progress: Progress | None = None,
                   config: dict | None = None,
                   make_partitions: Callable[[str, SubtableValues, int], Partitions] = LocalPartitions) -> TableStats:
    """Generate one table (its sub-tables must be complete under ``out``), by default in
    this process; ``make_partitions`` places the partitions elsewhere (Ray actors)."""
    out = Path(out)
    if table_complete(out / key, key):
        return skipped_stats(out, key)
    t0 = time.perf_counter()
    parts = make_partitions(key, load_subtables(out, key), num_partitions)
    stats = run_passes(key, parts, progress)
    manifest = write_table_manifest(out, key, parts.finish(out / key), config)
    return finish_stats(stats, manifest, t0)


def generate(keys: list[str], out: Path, *, progress: Progress | None = None,
             on_table: Callable[[TableStats], None] | None = None, config: dict | None = None) -> list[TableStats]:
    """Generate ``keys`` and every sub-table they need, in this process, sub-tables first."""
    results = []
    for key in dependency_order(keys):
        stats = generate_table(Path(out), key, progress=progress, config=config)
        if on_table is not None:
            on_table(stats)
        results.append(stats)
    return results
