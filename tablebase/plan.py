"""What a generation run will take, before it starts (``tablebase generate ... --dry-run``).

Per table, from its index size (positions, both sides to move) and piece count: seconds
from the measured rates below, peak memory per worker from
:func:`tablebase.generate.partition.table_memory`, bytes on disk from the measured bits per
position. The run's wall time replays the scheduler of
:func:`tablebase.distributed.generate_on_ray`: tables whose sub-tables are done run as
tasks, one per CPU at a time; a table of more than ``split_above`` positions per side
waits until nothing else runs and is split over every worker. ``--local`` runs the
tables one after the other in one process.

The constants are measured by ``python benchmarks/plan.py`` (which also prints this
module's estimate beside the measured run); re-measure them there after a change to the
generator.

>>> from tablebase.config import JobConfig
>>> plan = plan_job(JobConfig(materials=["KRvK"], workers=2, out="/nonexistent"))
>>> [t.material for t in plan.tables], plan.tables[-1].positions
(['KvK', 'KRvK'], 59136)
"""

from __future__ import annotations

import heapq
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .config import JobConfig
from .endgame.index import IndexScheme
from .endgame.material import Material, dependency_order
from .generate.partition import SPLIT_ABOVE, table_memory
from .store.shards import table_complete

__all__ = ["JobProgress", "Plan", "TablePlan", "plan_job", "table_seconds"]

# Rates of this machine kind (2 cores, 24 GiB). Tasks: measured by `python
# benchmarks/plan.py` on 2026-12-07 (every 3-4 piece table with 2 workers, an otherwise
# idle machine; each table's seconds fitted as TABLE_SECONDS + positions * rate per piece
# count; KvK..KPvK: 2-3 pieces, 6 tables, 0.01-0.12 s each; 4 pieces, 29 tables without
# KPvKP, 70.8 s in all). The rates of 2026-12-01 (4 pieces 6.4e-7, KPvKP 32.8 s) were
# measured with the machine shared (load average 3-7). Split tables:
# `python benchmarks/generate.py KQRvKR KRPvKR --workers 2 --no-rss` on 2026-12-03, an
# otherwise idle machine: KQRvKR 63.3 s (242,221,056 positions: 5.2e-7 CPU-seconds a
# position with the 4 s fixed below), KRPvKR 146.9 s (710,148,096: 4.0e-7); KQRvKR took
# 72.1 s in the run of 2026-12-07 (5.6e-7). The run of
# 2026-12-02 (old code) of the 14 pawnless 5-piece tables of five.toml took 842 s in
# all, 2.5x the 2.95e-7 that stood here, which had been measured on KQRvKR and KRPvKR
# before the DTZ passes existed.

#: Seconds a table costs whatever its size, run as one task (start, init, manifest).
TABLE_SECONDS = 0.05
#: Seconds per position (index entry, both sides to move) of a table run whole in one
#: task on one CPU, by piece count (more pieces: the largest known rate, a guess).
TASK_SECONDS_PER_POSITION = {2: 0.0, 3: 4.8e-7, 4: 3.9e-7}
#: CPU-seconds per position of a table split over partition actors: the run takes this
#: over the number of workers, plus SPLIT_TABLE_SECONDS.
SPLIT_SECONDS_PER_POSITION = {5: 4.6e-7}
#: Seconds a split table costs whatever its size (actors, sub-table reads, barriers).
SPLIT_TABLE_SECONDS = 4.0
#: Factor on the rate of a table where both sides have pawns: its en-passant vertices
#: (KPvKP measured 4.23 s on 2026-12-07, 1.3 times the 4-piece rate; 5 pieces: assumed).
EN_PASSANT_FACTOR = 1.3
#: Bytes on disk per position (the shards, with DTZ), by piece count: every 3-4 piece
#: table (169.6 M positions, 46.3 MB) and KQRvKR, KRPvKR (0.252, 0.246), 2026-12-03.
DISK_BYTES_PER_POSITION = {2: 3.4, 3: 0.29, 4: 0.27, 5: 0.25}
#: The exact codes kept beside the shards (tablebase.store.exact), per byte of shards:
#: 419 MB beside 346 MB for KQRvKR, KRPvKR and their 19 sub-tables, 2026-12-03.
EXACT_COPY_SHARE = 1.2
#: Seconds numba takes to compile the kernels once after an install or a change of the
#: source (its cache then holds them); measured: KvK's first run, 32 s, and KQvK's, 69 s.
COMPILE_SECONDS = 100.0
#: The share of the job's estimated seconds for which the job's ETA trusts the plan as if
#: it had been observed (replayed on the default job: within 2x of the truth throughout).
PRIOR_SHARE = 0.25


def _by_pieces(table: dict[int, float], pieces: int) -> float:
    """The rate of the piece count, else of the nearest one measured."""
    return table[min(table, key=lambda n: abs(n - pieces))]


@dataclass(frozen=True)
class TablePlan:
    """One table of a run: ``positions`` (index entries, both sides to move), whether it
    is ``split`` over the workers, its estimated ``seconds``, peak ``memory_per_worker``
    and ``disk_bytes`` (its shards and the exact codes kept beside them)."""

    material: str
    pieces: int
    positions: int
    split: bool
    seconds: float
    memory_per_worker: int
    disk_bytes: int


@dataclass(frozen=True)
class Plan:
    """A run's tables (those not complete yet, in the order they are made) and totals;
    ``compile_seconds`` is numba's one-time compilation, not in ``wall_seconds``."""

    out: str
    workers: int
    executor: str
    tables: list[TablePlan]
    complete: list[str]
    compile_seconds: float
    wall_seconds: float

    @property
    def peak_memory_per_worker(self) -> int:
        return max((t.memory_per_worker for t in self.tables), default=0)

    @property
    def disk_bytes(self) -> int:
        return sum(t.disk_bytes for t in self.tables)

    def as_dict(self) -> dict:
        out = asdict(self)
        out.update(positions=sum(t.positions for t in self.tables), peak_memory_per_worker=self.peak_memory_per_worker,
                   disk_bytes=self.disk_bytes)
        return out

    def text(self) -> str:
        lines = [f"dry run: {len(self.tables)} tables to generate into {self.out} with {self.workers} "
                 f"worker{'s' * (self.workers != 1)} ({self.executor}); nothing was run"]
        if self.complete:
            lines.append(f"already complete, skipped: {len(self.complete)} ({', '.join(self.complete[:8])}"
                         f"{', ...' if len(self.complete) > 8 else ''})")
        lines.append(f"{'table':10} {'pieces':>6} {'positions':>15} {'split':>5} {'est. s':>8} "
                     f"{'peak/worker':>12} {'disk':>10}")
        for t in self.tables:
            lines.append(f"{t.material:10} {t.pieces:6d} {t.positions:15,d} {'yes' if t.split else 'no':>5} "
                         f"{t.seconds:8.1f} {t.memory_per_worker / 1e9:10.2f}GB {t.disk_bytes / 1e6:8.1f}MB")
        total = sum(t.positions for t in self.tables)
        lines.append(f"total: {total:,d} positions, peak {self.peak_memory_per_worker / 1e9:.2f} GB per worker, "
                     f"{self.disk_bytes / 1e6:.1f} MB on disk, about {_duration(self.wall_seconds)}"
                     + (f" (the first run after an install also compiles the kernels: about "
                        f"{self.compile_seconds:.0f} s more)" if self.compile_seconds else ""))
        return "\n".join(lines)


class JobProgress:
    """Where a run stands against its :class:`Plan`: tables done of all, positions in the
    tables done of all, and the time left: the plan's estimate, scaled by the time taken
    over the plan's estimated seconds for the work done since the first tables finished,
    one per worker (each worker compiles the kernels in its first table). The plan
    counts as if it had been seen for a quarter of the job (``PRIOR_SHARE``), so that a
    few small tables that still pay a compilation do not turn a 5-minute job's ETA into
    hours; an estimate off by a constant factor still converges to the right ETA.

    >>> from tablebase.config import JobConfig
    >>> job = JobProgress(plan_job(JobConfig(materials=["KRvK"], workers=1, out="/nonexistent")))
    >>> job.table_done("KvK", now=4.0)
    >>> job.text("KRvK", 0.5, now=10.0)
    'job: 1 of 2 tables, 924 of 60,060 positions, ETA 3 s'
    """

    def __init__(self, plan: Plan):
        self.tables = {t.material: t for t in plan.tables}
        self.total_seconds = sum(t.seconds for t in plan.tables)
        self.done: set[str] = set()
        self.warm_after = min(plan.workers, len(plan.tables))  # tables done when every worker has compiled
        self.first_done: tuple[float, float] | None = None  # when, and the estimated seconds done then

    def table_done(self, material: str, now: float | None = None) -> None:
        if material in self.tables:
            self.done.add(material)
            if self.first_done is None and len(self.done) >= self.warm_after:
                now = time.perf_counter() if now is None else now
                self.first_done = now, sum(self.tables[k].seconds for k in self.done)

    def text(self, current: str | None = None, fraction: float = 0.0, now: float | None = None) -> str:
        """The job's line; ``current``: a table ``fraction`` done (resolved positions)."""
        now = time.perf_counter() if now is None else now
        done_seconds = sum(self.tables[k].seconds for k in self.done)
        if current in self.tables and current not in self.done:
            done_seconds += fraction * self.tables[current].seconds
        positions = sum(self.tables[k].positions for k in self.done)
        line = (f"job: {len(self.done)} of {len(self.tables)} tables, {positions:,} of "
                f"{sum(t.positions for t in self.tables.values()):,} positions")
        if len(self.done) < len(self.tables):
            left = max(0.0, self.total_seconds - done_seconds)  # a float sum can fall short of the total
            prior = PRIOR_SHARE * self.total_seconds
            if self.first_done is not None and done_seconds - self.first_done[1] + prior > 0:
                left *= (max(0.0, now - self.first_done[0]) + prior) / (done_seconds - self.first_done[1] + prior)
            line += f", ETA {_duration(left)}"
        return line


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def table_seconds(key: str, *, split: bool, workers: int) -> float:
    """Estimated seconds to generate ``key``: as one task, or split over ``workers``."""
    material = Material.parse(key)
    positions = 2 * IndexScheme.of(key).size
    white, black = key.split("v")
    factor = EN_PASSANT_FACTOR if "P" in white and "P" in black else 1.0
    if split:
        rate = _by_pieces(SPLIT_SECONDS_PER_POSITION, material.num_pieces)
        return SPLIT_TABLE_SECONDS + factor * positions * rate / workers
    return TABLE_SECONDS + factor * positions * _by_pieces(TASK_SECONDS_PER_POSITION, material.num_pieces)


def plan_job(cfg: JobConfig) -> Plan:
    """The plan of ``cfg``'s run: its tables and their sub-tables, less those complete in
    ``cfg.out``. Reads nothing but the manifests of ``cfg.out``."""
    workers = cfg.cpus()
    split_above = SPLIT_ABOVE if cfg.split_above is None else cfg.split_above
    out = Path(cfg.out)
    order = dependency_order(cfg.tables())
    complete = [k for k in order if table_complete(out / k, k, hash_check=False, dtz=cfg.dtz)]
    tables = []
    for key in order:
        if key in complete:
            continue
        size = IndexScheme.of(key).size
        split = cfg.executor != "local" and size > split_above and workers > 1
        parts = workers if split else 1
        pieces = Material.parse(key).num_pieces
        tables.append(TablePlan(key, pieces, 2 * size, split,
                                table_seconds(key, split=split, workers=workers),
                                table_memory(key, parts) // parts,
                                int(2 * size * _by_pieces(DISK_BYTES_PER_POSITION, pieces) * (1 + EXACT_COPY_SHARE))))
    wall = (sum(t.seconds for t in tables) if cfg.executor == "local"
            else _schedule(tables, set(complete), workers))
    return Plan(str(out), workers, cfg.executor, tables, complete, COMPILE_SECONDS if tables else 0.0, wall)


def _schedule(tables: list[TablePlan], done: set[str], cpus: int) -> float:
    """Wall seconds of generate_on_ray's schedule: a table starts when its sub-tables are
    done, a task per free CPU; a split table starts when nothing runs and holds them all."""
    deps = {t.material: {m.key for m in Material.parse(t.material).direct_subtables()} for t in tables}
    todo = list(tables)
    running: list[tuple[float, str]] = []  # (finish time, material), a heap
    split_running = False
    now = 0.0
    while todo or running:
        for t in [t for t in todo if deps[t.material] <= done]:
            if split_running or (t.split and running) or len(running) >= cpus:
                continue
            todo.remove(t)
            heapq.heappush(running, (now + t.seconds, t.material))
            split_running = t.split
        if not running:
            break  # nothing can start: a dependency outside the plan is missing
        now, key = heapq.heappop(running)
        done.add(key)
        split_running = False
    return now
