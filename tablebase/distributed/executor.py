"""Ray executor: the material DAG as tasks, large tables as partitioned actors."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import ray

from ..endgame.index import IndexScheme
from ..endgame.material import Material, dependency_order
from ..generate.pipeline import Progress, TableStats, generate_table, skipped_stats
from ..generate.worker import Partition, SubtableValues, partition_bounds
from ..store.shards import ShardInfo, table_complete

#: Tables with more positions per side than this are split over actors; smaller ones run
#: whole in one task (an actor per table would cost more than the table).
ACTOR_THRESHOLD = 8_000_000


class _PartitionActor(Partition):
    """A :class:`Partition` as a Ray actor; ``apply_from`` takes the routed arrays as
    separate arguments so Ray moves them between actors without the driver."""

    def apply_from(self, *incoming: np.ndarray) -> int:
        """Batches as flat arguments: white, black, white, black, ..."""
        return self.apply([[incoming[i], incoming[i + 1]] for i in range(0, len(incoming), 2)])

    def expand_split(self, num_partitions: int):
        """The batches for each destination (white, black) as separate returns, then how
        many frontier positions are left."""
        out, left = self.expand(num_partitions)
        return (*[a for pair in out for a in pair], left)


PartitionActor = ray.remote(num_cpus=1)(_PartitionActor)


class RayPartitions:
    """A table's partitions as Ray actors, one per worker."""

    def __init__(self, key: str, subtables: SubtableValues, num_partitions: int):
        bounds = partition_bounds(IndexScheme.of(key), num_partitions)
        sub_ref = ray.put(subtables)
        self.n = len(bounds) - 1
        self.actors = [PartitionActor.options(name=f"{key}/partition-{p}")
                       .remote(key, bounds[p], bounds[p + 1], bounds, sub_ref) for p in range(self.n)]

    def init(self) -> list[dict]:
        return ray.get([a.init.remote() for a in self.actors])

    def superstep(self, ply: int) -> int:
        decided = 0
        left = 1
        while left:
            outgoing = [a.expand_split.options(num_returns=2 * self.n + 1).remote(self.n) for a in self.actors]
            applied = [a.apply_from.remote(*[ref for out in outgoing for ref in out[2 * dst:2 * dst + 2]])
                       for dst, a in enumerate(self.actors)]
            left = sum(ray.get([out[-1] for out in outgoing]))
            decided += sum(ray.get(applied))
        return decided + sum(ray.get([a.end_ply.remote() for a in self.actors]))

    def last_pending_ply(self) -> int:
        return max(ray.get([a.last_pending_ply.remote() for a in self.actors]))

    def finish(self, folder: Path | None) -> list[ShardInfo]:
        infos = [i for part in ray.get([a.finish.remote(folder) for a in self.actors]) for i in part]
        for a in self.actors:
            ray.kill(a)
        return infos


@ray.remote(num_cpus=1)
def _generate_table_task(out: str, key: str, config: dict) -> TableStats:
    return generate_table(Path(out), key, config=config)


def generate_on_ray(keys: list[str], out: Path, *, workers: int, progress: Progress | None = None,
                    on_table: Callable[[TableStats], None] | None = None, config: dict | None = None,
                    actor_threshold: int = ACTOR_THRESHOLD) -> list[TableStats]:
    """Generate ``keys`` and their sub-tables on the connected Ray instance.

    Independent small tables run concurrently as tasks; a large table waits until nothing
    else runs, then takes ``workers`` actors. Complete tables are skipped.
    """
    out = Path(out).resolve()
    config = config or {}
    order = dependency_order(keys)
    deps = {k: {m.key for m in Material.parse(k).direct_subtables()} for k in order}
    done: set[str] = set()
    results: list[TableStats] = []
    running: dict[ray.ObjectRef, str] = {}

    def finished(stats: TableStats) -> None:
        done.add(stats.material)
        results.append(stats)
        if on_table is not None:
            on_table(stats)

    todo = list(order)
    while todo or running:
        ready = [k for k in todo if deps[k] <= done]
        for key in ready:
            if table_complete(out / key, key):
                todo.remove(key)
                finished(skipped_stats(out, key))
            elif IndexScheme.of(key).size <= actor_threshold:
                todo.remove(key)
                running[_generate_table_task.options(name=f"generate {key}").remote(str(out), key, config)] = key
            elif not running:
                todo.remove(key)
                finished(generate_table(out, key, num_partitions=workers, progress=progress, config=config,
                                        make_partitions=RayPartitions))
                break
        if running:
            ref_done, _ = ray.wait(list(running), num_returns=1)
            running.pop(ref_done[0])
            finished(ray.get(ref_done[0]))
        elif todo and not any(deps[k] <= done for k in todo):
            raise RuntimeError(f"cannot schedule {todo}: sub-tables missing")
    return results
