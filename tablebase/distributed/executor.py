"""Ray executor: the material DAG as tasks, large tables as partitioned actors.

Fault tolerance: a table task whose worker dies is retried by Ray (tables are written
atomically and deterministically). A partition actor that dies is restarted by Ray, empty;
the driver then rolls every partition of the table back to the last checkpoint and
replays the plies since (:func:`tablebase.generate.pipeline.solve_table`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable

import numpy as np
import ray
from ray.exceptions import ActorDiedError, RayActorError, RayError

from ..endgame.index import IndexScheme
from ..endgame.material import Material, dependency_order
from ..generate.exact import load_subtable_classes, load_subtables
from ..generate.pipeline import (PartitionLost, Progress, TableClasses, TableStats, generate_table, init_order,
                                 skipped_stats)
from ..generate.partition import (SPLIT_ABOVE, GenerationError, Partition, Tick, partition_bounds, partition_memory,
                                table_memory)
from ..store.checkpoint import StateFile, read_state, write_state
from ..store import Coding, ShardInfo, table_complete

#: How often Ray restarts a dead partition actor.
ACTOR_RESTARTS = 3

#: Seconds the driver waits for a stage's next step before it shows where the stage stands.
TICK_SECONDS = 0.5


class _PartitionActor(Partition):
    """A :class:`Partition` as a Ray actor; ``apply_from`` takes the routed arrays as
    separate arguments so Ray moves them between actors without the driver."""

    def where(self) -> tuple[str, int]:
        """The node id and process id of this actor."""
        return ray.get_runtime_context().get_node_id(), os.getpid()

    def save(self, folder: Path, part: int, ply: int) -> StateFile:
        return write_state(folder, part, ply, self.state())

    def load(self, folder: Path, state: StateFile) -> None:
        self.restore(read_state(folder, state))

    def routed_bytes(self) -> dict[tuple[str, int], int]:
        return self.routed

    def apply_from(self, *incoming: np.ndarray) -> int:
        """Batches as flat arguments: white, black, white, black, ..."""
        return self.apply([[incoming[i], incoming[i + 1]] for i in range(0, len(incoming), 2)])

    def expand_split(self, num_partitions: int):
        """The batches for each destination (white, black) as separate returns, then how
        many frontier positions are left."""
        out, left = self.expand(num_partitions)
        return (*[a for pair in out for a in pair], left)


#: Partitions (actors) per worker CPU: more than one, since the frontier of a ply is
#: unevenly spread over the king pairs and the busy ones then use the CPU time the idle
#: ones leave; few, since predecessors a partition does not own travel through the object
#: store (KQRvKR on 2 cores, end to end: 53 s with 4 per CPU, 46 s with 2 or 1).
PARTITIONS_PER_WORKER = 2

PartitionActor = ray.remote(num_cpus=1 / PARTITIONS_PER_WORKER, max_restarts=ACTOR_RESTARTS)(_PartitionActor)


class InsufficientMemoryError(ValueError):
    """The Ray cluster has too little memory for a table of the job."""


def check_memory(keys: list[str], nodes: list[dict], workers: int, split_above: int = SPLIT_ABOVE) -> None:
    """Refuse a job before any work when one of its tables cannot fit in the memory of
    the cluster's ``nodes`` (each node's Ray resources): a split table needs its estimated
    peak (:func:`tablebase.generate.partition.table_memory`) in all of them and each of its
    partition actors its own in one node; a whole-table task its peak in one node."""
    total = sum(n.get("memory", 0) for n in nodes)
    largest = max((n.get("memory", 0) for n in nodes), default=0)
    for key in keys:
        scheme = IndexScheme.of(key)
        whole = f"to generate ({2 * scheme.size:,} positions)"
        if scheme.size > split_above:
            bounds = partition_bounds(scheme, workers * PARTITIONS_PER_WORKER)
            actor = max(partition_memory(scheme, a, b) for a, b in zip(bounds, bounds[1:]))
            needs = [(table_memory(key, len(bounds) - 1), total, whole, ""),
                     (actor, largest, f"in each of its {len(bounds) - 1} partition actors", " on its largest node")]
        else:
            needs = [(table_memory(key), largest, whole, " to one task (its largest node)")]
        for need, have, what, where in needs:
            if need > have:
                raise InsufficientMemoryError(
                    f"{key} needs about {need / 1e9:.1f} GB {what} but the Ray cluster offers {have / 1e9:.1f} GB "
                    f"of memory{where}: add nodes or memory (the job did not start)")


class RayPartitions:
    """A table's partitions as Ray actors, one per worker, spread over the nodes."""

    def __init__(self, key: str, out: Path, num_partitions: int):
        self.key, self.out = key, Path(out)
        scheme = IndexScheme.of(key)
        self.bounds = partition_bounds(scheme, num_partitions * PARTITIONS_PER_WORKER)
        self.n = len(self.bounds) - 1
        # Each actor asks Ray for its estimated peak, so that Ray places it where that fits.
        self.actors = [PartitionActor.options(name=f"{key}/partition-{p}", scheduling_strategy="SPREAD",
                                              memory=partition_memory(scheme, self.bounds[p], self.bounds[p + 1]))
                       .remote(key, self.bounds[p], self.bounds[p + 1], self.bounds) for p in range(self.n)]

    def _get(self, refs):
        """``ray.get``; a dead actor is reported as :class:`PartitionLost` once Ray has
        restarted it (empty), so that the caller can roll the table back."""
        try:
            return ray.get(refs)
        except RayActorError as e:
            self._wait_restarted()
            raise PartitionLost(str(e).splitlines()[0]) from e

    def _wait_restarted(self, timeout: float = 300.0) -> None:
        deadline = time.monotonic() + timeout
        for a in self.actors:
            while True:
                try:
                    ray.get(a.where.remote())
                    break
                except ActorDiedError as e:
                    raise GenerationError(f"a partition actor is dead for good (it died {ACTOR_RESTARTS + 1} times, "
                                          f"or its constructor failed): {str(e).splitlines()[0]}") from e
                except RayError:  # still restarting, or killed again while starting (memory pressure)
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)

    def where(self) -> list[tuple[str, int]]:
        """(node id, pid) of every partition actor."""
        return self._get([a.where.remote() for a in self.actors])

    def peak_memory(self) -> list[int]:
        return self._get([a.peak_memory.remote() for a in self.actors])

    def routed(self) -> list[dict[tuple[str, int], int]]:
        return self._get([a.routed_bytes.remote() for a in self.actors])

    def _stream(self, calls: list, tick: Tick | None) -> list:
        """The results of a stage's calls, one per actor, in the actors' order. Each call is
        a Ray generator (:data:`~tablebase.generate.partition.Steps`): its steps reach
        the driver as they are done, and ``tick`` hears of them, and at least every
        :data:`TICK_SECONDS` while the driver waits."""
        results = [None] * len(calls)
        where = {id(call): i for i, call in enumerate(calls)}
        pending = list(calls)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1, timeout=TICK_SECONDS)
            steps = 0
            for call in ready:
                try:
                    item = self._get(next(call))
                except StopIteration:
                    continue
                pending.append(call)
                if item is None:
                    steps += 1
                else:
                    results[where[id(call)]] = item
            if tick is not None:
                tick(steps)
        return results

    def init(self, dtz: bool = True, tick: Tick | None = None) -> list[dict]:
        """Each side in turn: the driver reads the sub-table values that side's exits reach
        and puts them in the object store once, for every actor of the node to share."""
        stats = []
        for stm in init_order(self.key):
            subtables = ray.put(load_subtables(self.out, self.key, stm))
            stats += self._stream([a.init.remote(stm, subtables, dtz) for a in self.actors], tick)
            del subtables
        return stats

    def dtz_classes(self, stm: int, tick: Tick | None = None) -> list[list[bytes]]:
        return self._stream([a.dtz_classes.remote(stm) for a in self.actors], tick)

    def dtz_init(self, classes: TableClasses, tick: Tick | None = None) -> None:
        """As :meth:`init`: the table's classes and the sub-tables' put in the object store once."""
        for stm in init_order(self.key):
            subclasses = ray.put(load_subtable_classes(self.out, self.key, stm))
            them = ray.put(classes.reached_by(stm))
            self._stream([a.dtz_init.remote(stm, subclasses, them) for a in self.actors], tick)
            del subclasses, them

    def superstep(self, ply: int) -> int:
        decided = 0
        left = 1
        while left:
            outgoing = [a.expand_split.options(num_returns=2 * self.n + 1).remote(self.n) for a in self.actors]
            applied = [a.apply_from.remote(*[ref for out in outgoing for ref in out[2 * dst:2 * dst + 2]])
                       for dst, a in enumerate(self.actors)]
            left = sum(self._get([out[-1] for out in outgoing]))
            decided += sum(self._get(applied))
        return decided + sum(self._get([a.end_ply.remote() for a in self.actors]))

    def last_pending_ply(self) -> int:
        return max(self._get([a.last_pending_ply.remote() for a in self.actors]))

    def save(self, folder: Path, ply: int) -> list[StateFile]:
        return self._get([a.save.remote(folder, p, ply) for p, a in enumerate(self.actors)])

    def load(self, folder: Path, states: list[StateFile]) -> None:
        self._get([a.load.remote(folder, s) for a, s in zip(self.actors, states)])

    def order_costs(self, sample: list[int], dont_care: str) -> list[dict]:
        return self._get([a.order_costs.remote(sample, dont_care) for a in self.actors])

    def finish(self, folder: Path | None, orders: tuple, coding: Coding, tick: Tick | None = None) -> list[ShardInfo]:
        return [i for part in self._stream([a.finish.remote(folder, orders, coding) for a in self.actors], tick)
                for i in part]

    def close(self) -> None:
        """End the actors now, so that the next table has their memory."""
        for a in self.actors:
            ray.kill(a)


@ray.remote(num_cpus=1)
def _generate_table_task(out: str, key: str, config: dict, checkpoint_seconds: float | None,
                         dtz: bool) -> TableStats:
    return generate_table(Path(out), key, config=config, checkpoint_seconds=checkpoint_seconds, dtz=dtz)


def generate_on_ray(keys: list[str], out: Path, *, workers: int, progress: Progress | None = None,
                    on_table: Callable[[TableStats], None] | None = None, config: dict | None = None,
                    split_above: int | None = None, checkpoint_seconds: float | None = None,
                    dtz: bool = True) -> list[TableStats]:
    """Generate ``keys`` and their sub-tables on the connected Ray instance (``dtz=False``:
    WDL and DTM only).

    Independent small tables run concurrently as tasks; a table of more than
    ``split_above`` positions per side (default :data:`SPLIT_ABOVE`) waits until nothing else runs, then takes
    ``workers`` actors. Complete tables are skipped; with ``checkpoint_seconds``, a table
    resumes from its last checkpoint. Refuses to start, with :class:`InsufficientMemoryError`,
    when a table cannot fit in the cluster's memory.
    """
    out = Path(out).resolve()
    config = config or {}
    split_above = SPLIT_ABOVE if split_above is None else split_above
    order = dependency_order(keys)
    check_memory([k for k in order if not table_complete(out / k, k, hash_check=False, dtz=dtz)],
                 [n["Resources"] for n in ray.nodes() if n["Alive"]], workers, split_above)
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
            if table_complete(out / key, key, dtz=dtz):
                todo.remove(key)
                finished(skipped_stats(out, key))
            elif IndexScheme.of(key).size <= split_above:
                todo.remove(key)
                running[_generate_table_task.options(name=f"generate {key}", memory=table_memory(key))
                        .remote(str(out), key, config, checkpoint_seconds, dtz)] = key
            elif not running:
                todo.remove(key)
                finished(generate_table(out, key, num_partitions=workers, progress=progress, config=config,
                                        checkpoint_seconds=checkpoint_seconds, dtz=dtz,
                                        make_partitions=RayPartitions))
                break
        if running:
            ref_done, _ = ray.wait(list(running), num_returns=1)
            running.pop(ref_done[0])
            finished(ray.get(ref_done[0]))
        elif todo and not any(deps[k] <= done for k in todo):
            raise GenerationError(f"cannot schedule {todo}: sub-tables missing")
    return results
