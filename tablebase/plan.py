"""What a generation run will take, before it starts (``tablebase generate ... --dry-run``).

Per table, from its index size (positions, both sides to move) and piece count: seconds
from the measured rates below, peak memory per worker from
:func:`tablebase.generate.worker.table_memory`, bytes on disk from the measured bits per
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
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from .config import JobConfig
from .endgame.index import IndexScheme
from .endgame.material import Material, dependency_order
from .generate.worker import SPLIT_ABOVE, table_memory
from .store.shards import table_complete

__all__ = ["Plan", "TablePlan", "plan_job", "table_seconds"]

# Measured on this machine kind (2 cores, 24 GiB) by `python benchmarks/plan.py` on
# 2026-12-01: every 3-4 piece table and KQRvKR, generated with 2 workers, seconds per
# table fitted as TABLE_SECONDS + positions * rate (least squares per piece count). See
# the benchmark's docstring for the run and its figures.

#: Seconds a table costs whatever its size, run as one task (start, init, manifest).
TABLE_SECONDS = 0.25
#: Seconds per position (index entry, both sides to move) of a table run whole in one
#: task on one CPU, by piece count (6 and 7 pieces: the 5-piece rate, a guess).
TASK_SECONDS_PER_POSITION = {2: 0.0, 3: 5.0e-7, 4: 6.0e-7, 5: 6.0e-7}
#: CPU-seconds per position of a table split over partition actors (the run takes this
#: over the number of workers, plus SPLIT_TABLE_SECONDS).
SPLIT_SECONDS_PER_POSITION = {5: 3.0e-7}
#: Seconds a split table costs whatever its size (actors, sub-table reads, barriers).
SPLIT_TABLE_SECONDS = 3.0
#: Bytes on disk per position, by piece count (shards and manifest, measured).
DISK_BYTES_PER_POSITION = {2: 0.0, 3: 0.25, 4: 0.25, 5: 0.25}
#: Seconds numba takes to compile the kernels once after an install or a change of the
#: source (its cache then holds them).
COMPILE_SECONDS = 90.0


def _by_pieces(table: dict[int, float], pieces: int) -> float:
    return table[min(pieces, max(table))]


@dataclass(frozen=True)
class TablePlan:
    """One table of a run: ``positions`` (index entries, both sides to move), whether it
    is ``split`` over the workers, its estimated ``seconds``, peak ``memory_per_worker``
    and ``disk_bytes``."""

    material: str
    pieces: int
    positions: int
    split: bool
    seconds: float
    memory_per_worker: int
    disk_bytes: int


@dataclass(frozen=True)
class Plan:
    """A run's tables (those not complete yet, in the order they are made) and totals."""

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
                     f"{self.disk_bytes / 1e6:.1f} MB on disk, about {_duration(self.wall_seconds)} "
                     + (f"(+{self.compile_seconds:.0f} s to compile the kernels the first time)"
                        if self.compile_seconds else "(kernels already compiled)"))
        return "\n".join(lines)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def table_seconds(key: str, *, split: bool, workers: int) -> float:
    """Estimated seconds to generate ``key``: as one task, or split over ``workers``."""
    pieces = Material.parse(key).num_pieces
    positions = 2 * IndexScheme.of(key).size
    if split:
        return SPLIT_TABLE_SECONDS + positions * _by_pieces(SPLIT_SECONDS_PER_POSITION, pieces) / workers
    return TABLE_SECONDS + positions * _by_pieces(TASK_SECONDS_PER_POSITION, pieces)


def _kernels_compiled() -> bool:
    """Whether numba's cache (keyed by the package's source) already holds kernels."""
    folder = os.environ.get("NUMBA_CACHE_DIR", "")
    return bool(folder) and Path(folder).is_dir() and any(Path(folder).rglob("*.nbc"))


def plan_job(cfg: JobConfig) -> Plan:
    """The plan of ``cfg``'s run: its tables and their sub-tables, less those complete in
    ``cfg.out``. Reads nothing but the manifests of ``cfg.out``."""
    workers = cfg.cpus()
    split_above = SPLIT_ABOVE if cfg.split_above is None else cfg.split_above
    out = Path(cfg.out)
    order = dependency_order(cfg.tables())
    complete = [k for k in order if table_complete(out / k, k, hash_check=False)]
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
                                int(2 * size * _by_pieces(DISK_BYTES_PER_POSITION, pieces))))
    wall = (sum(t.seconds for t in tables) if cfg.executor == "local"
            else _schedule(tables, set(complete), workers))
    return Plan(str(out), workers, cfg.executor, tables, complete,
                0.0 if _kernels_compiled() or not tables else COMPILE_SECONDS, wall)


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
