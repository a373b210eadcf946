"""Distribution and fault tolerance: the same shards whatever the partitioning, the
number of Ray workers or nodes; checkpoints; a killed actor or driver; memory refusal."""

from __future__ import annotations

import filecmp
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tablebase.distributed.executor import PARTITIONS_PER_WORKER
from tablebase.endgame.index import IndexScheme
from tablebase.endgame.material import dependency_order
from tablebase.generate.pipeline import LocalPartitions, generate_table, peaks, routed, run_passes
from tablebase.store.checkpoint import checkpoint_folder, read_checkpoint
from tablebase.generate.exact import load_table
from tablebase.generate.partition import WORKER_BYTES
from tablebase.store import DEFAULT_CODING, read_manifest, table_complete

ROOT = Path(__file__).resolve().parents[1]
FULL = os.environ.get("TABLEBASE_FULL") == "1"


def with_subtables(src: Path, dst: Path, key: str) -> Path:
    """``dst`` holding copies of every table ``key`` needs, not ``key`` itself."""
    for sub in dependency_order([key])[:-1]:
        shutil.copytree(src / sub, dst / sub)
    return dst


def assert_same_shards(folder: Path, reference: Path, key: str) -> None:
    infos = read_manifest(folder / key).shards
    assert [i.file for i in infos] == [i.file for i in read_manifest(reference / key).shards]
    for info in infos:
        assert filecmp.cmp(folder / key / info.file, reference / key / info.file, shallow=False), info.file
    assert not checkpoint_folder(folder / key).exists()


class Stop(Exception):
    pass


class AtPly:
    """A :class:`~tablebase.generate.pipeline.Progress` that calls ``then(key)`` after ply ``ply``."""

    def __init__(self, ply: int, then):
        self.at, self.then = ply, then

    def ply(self, key, ply, *_):
        if ply == self.at:
            self.then(key)

    def stage(self, key, text):
        pass


def stop_at(ply: int) -> AtPly:
    def stop(key):
        raise Stop(key)
    return AtPly(ply, stop)


@pytest.mark.parametrize("key, partitions, stop", [("KPvKP", 2, 9), ("KQvKR", 3, 12), ("KBNvK", 1, 30)])
def test_checkpoint_resume_gives_the_same_values(tables_34, tmp_path, key, partitions, stop):
    """Stopped after a ply, a table restarts from its checkpoint (values, counters, frontier,
    deferred exits, en-passant vertices) in fresh partitions and ends with the same values."""
    folder = with_subtables(tables_34, tmp_path, key)
    cps = checkpoint_folder(folder / key)
    with pytest.raises(Stop):
        run_passes(key, LocalPartitions(key, folder, partitions), stop_at(stop), checkpoints=cps, checkpoint_seconds=0)
    assert read_checkpoint(cps, key).ply == stop - 1
    parts = LocalPartitions(key, folder, partitions)
    stats = run_passes(key, parts, checkpoints=cps, checkpoint_seconds=0)
    assert stats.resumed_from == stop - 1
    parts.finish(None, (), DEFAULT_CODING)
    assert all(np.array_equal(a, b) for a, b in zip(parts.values(), load_table(tables_34, key)))


def test_checkpoint_of_other_partitions_or_corrupted_is_ignored(tables_34, tmp_path):
    key = "KQvKR"
    folder = with_subtables(tables_34, tmp_path, key)
    cps = checkpoint_folder(folder / key)
    with pytest.raises(Stop):
        run_passes(key, LocalPartitions(key, folder, 2), stop_at(6), checkpoints=cps,
                   checkpoint_seconds=0)
    # Written for 2 partitions: a 3-partition run starts over.
    assert run_passes(key, LocalPartitions(key, folder, 3), checkpoints=cps).resumed_from == 0
    state = cps / read_checkpoint(cps, key).states[1].file
    state.write_bytes(state.read_bytes()[:-10])
    stats = generate_table(folder, key, num_partitions=2, checkpoint_seconds=0)
    assert stats.resumed_from == 0
    assert_same_shards(folder, tables_34, key)


@pytest.mark.parametrize("key", ["KQvKR", "KRvKP"])
def test_two_ray_workers_write_the_same_shards(tables_34, ray_local, tmp_path, key):
    """Split over 2 Ray actors, a table's shards are byte-identical to the one-partition run."""
    from tablebase.distributed import generate_on_ray
    folder = with_subtables(tables_34, tmp_path, key)
    (stats,) = [s for s in generate_on_ray([key], folder, workers=2, split_above=0) if s.material == key]
    assert stats.partitions == min(2 * PARTITIONS_PER_WORKER, IndexScheme.of(key).num_slices) > 1
    assert_same_shards(folder, tables_34, key)


def test_kernel_inputs_are_read_only_on_the_local_path_as_through_ray(tables_34):
    """Arrays from Ray's object store are read-only, a type of their own to numba: the local
    path hands the sub-tables' values and classes and the table's classes over read-only
    too, so that partition actors run the kernels a local run compiled."""
    from tablebase.generate.exact import load_subtable_classes, load_subtables
    from tablebase.generate.pipeline import TableClasses
    for stm in (0, 1):
        for subs in (load_subtables(tables_34, "KRvKP", stm), load_subtable_classes(tables_34, "KRvKP", stm)):
            assert not subs.values.flags.writeable and not subs.offsets.flags.writeable
    parts = LocalPartitions("KPvK", tables_34, 1)
    run_passes("KPvK", parts)
    classes = TableClasses.of(parts, "KPvK")
    assert [classes.reached_by(stm).size for stm in (0, 1)] == [IndexScheme.of("KPvK").size, 1]
    assert not any(classes.reached_by(stm).flags.writeable for stm in (0, 1))


@pytest.mark.parametrize("checkpoint_seconds", [0, None])
def test_a_killed_actor_is_replaced_and_the_table_finishes(tables_34, ray_local, tmp_path, checkpoint_seconds):
    """SIGKILL a partition actor's process mid-pass: Ray restarts it, the table rolls back
    (to its checkpoint, or to init without one) and finishes with the undisturbed shards."""
    import ray
    from tablebase.distributed import generate_on_ray
    key = "KQvKR"
    folder = with_subtables(tables_34, tmp_path, key)
    killed = []

    def kill_partition_1(k):
        if k == key and not killed:
            _, pid = ray.get(ray.get_actor(f"{key}/partition-1").where.remote())
            killed.append(pid)
            threading.Timer(0.05, os.kill, (pid, signal.SIGKILL)).start()  # during the next superstep

    (stats,) = [s for s in generate_on_ray([key], folder, workers=2, split_above=0, progress=AtPly(8, kill_partition_1),
                                           checkpoint_seconds=checkpoint_seconds) if s.material == key]
    assert killed and stats.restarts == 1
    assert_same_shards(folder, tables_34, key)


class Recorder:
    """A :class:`~tablebase.generate.pipeline.Progress` that keeps every stage line and
    calls ``then(text)`` after each."""

    def __init__(self, then=None):
        self.lines, self.then = [], then

    def ply(self, key, ply, *_):
        pass

    def stage(self, key, text):
        self.lines.append(text)
        if self.then is not None:
            self.then(text)

    def last(self, stage: str) -> str:
        return [line for line in self.lines if line.startswith(stage + ":")][-1]


def test_stages_outside_the_passes_show_their_slices(tables_34, tmp_path):
    """Init, the DTZ classes and inits, the DTZ plies and the writing each say where they
    stand, slice by slice (shard by shard), every partition's counted once."""
    key = "KRvKP"
    folder = with_subtables(tables_34, tmp_path, key)
    recorder = Recorder()
    generate_table(folder, key, num_partitions=3, progress=recorder)
    both_sides = 2 * IndexScheme.of(key).num_slices
    for stage, unit in [("init", "slices"), ("DTZ classes", "slices"), ("DTZ pass 1 init", "slices"),
                        ("writing", "shards")]:
        assert recorder.last(stage) == f"{stage}: {both_sides:,} of {both_sides:,} {unit}"
    assert len([line for line in recorder.lines if line.startswith("init:")]) == both_sides
    assert any(line.startswith("DTZ pass 1, ply 2: ") for line in recorder.lines)
    assert len(read_manifest(folder / key).shards) == both_sides


def test_partitions_count_the_bytes_they_route(tables_34):
    """One partition routes nothing; three send each other the predecessors they do not
    own (8 bytes each), and the stats sum them over the partitions and plies."""
    key = "KRvKP"
    one = LocalPartitions(key, tables_34, 1)
    run_passes(key, one)
    assert routed(one) == (0, 0)
    three = LocalPartitions(key, tables_34, 3)
    run_passes(key, three)
    total, worst = routed(three)
    by_part = [sum(p.values()) for p in three.routed()]
    assert total == sum(by_part) and all(n > 0 for n in by_part) and total % 8 == 0
    assert 0 < worst < total
    assert peaks(three)[0] == peaks(three)[1]  # one process: its peak is the node's


def test_predecessors_are_routed_to_the_partitions_that_own_them():
    """The routing kernel against numpy's masks (the slow twin): each partition gets its
    predecessors, DTZ's won ones (``-y - 1``) by the slice of ``y``, in their order."""
    from tablebase.generate.kernels import route_predecessors
    rng = np.random.default_rng(7)
    span, bounds = 1000, [0, 3, 4, 9, 12]  # partition p owns slices [bounds[p], bounds[p + 1])
    owner = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    y = rng.integers(0, span * bounds[-1], 5000)
    preds = np.where(rng.random(y.size) < 0.5, y, -y - 1)
    grouped, at = route_predecessors(preds, owner, span, len(bounds) - 1)
    dest = owner[np.where(preds < 0, -preds - 1, preds) // span]
    for p in range(len(bounds) - 1):
        assert np.array_equal(grouped[at[p]:at[p + 1]], preds[dest == p]), p
    assert at[-1] == preds.size and len({int(n) for n in np.diff(at)}) > 1


def test_an_actor_killed_during_init_is_replaced_and_the_table_finishes(tables_34, ray_local, tmp_path):
    """Ray streams each actor's init slice by slice to the driver (a Ray generator); an
    actor killed meanwhile is restarted, the table starts over and writes the undisturbed
    shards, and the driver's lines count every slice of both sides."""
    import ray
    from tablebase.distributed import generate_on_ray
    key = "KQvKR"
    folder = with_subtables(tables_34, tmp_path, key)
    killed = []

    def kill_partition_1(text):
        if text.startswith("init: 1 of") and not killed:
            _, pid = ray.get(ray.get_actor(f"{key}/partition-1").where.remote())
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)

    recorder = Recorder(kill_partition_1)
    (stats,) = [s for s in generate_on_ray([key], folder, workers=2, split_above=0, progress=recorder)
                if s.material == key]
    assert killed and stats.restarts == 1
    both_sides = 2 * IndexScheme.of(key).num_slices
    assert recorder.last("init") == f"init: {both_sides:,} of {both_sides:,} slices"
    assert recorder.last("writing") == f"writing: {both_sides:,} of {both_sides:,} shards"
    assert_same_shards(folder, tables_34, key)


def run_cli(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tablebase.cli", "generate", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, **kw)


def test_a_killed_driver_resumes_from_the_checkpoint(tables_34, tmp_path):
    """Kill the whole job (driver and its local Ray) mid-table: the re-run resumes from the
    last checkpoint and writes the undisturbed shards."""
    key = "KQvKR"
    folder = with_subtables(tables_34, tmp_path / "tables", key)
    config = tmp_path / "job.toml"
    config.write_text("split_above = 0\ncheckpoint_seconds = 0\nworkers = 2\n")
    args = [key, "--out", str(folder), "--config", str(config)]
    proc = subprocess.Popen([sys.executable, "-m", "tablebase.cli", "generate", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    cps = checkpoint_folder(folder / key)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        cp = read_checkpoint(cps, key)
        if cp is not None and cp.ply >= 6:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not table_complete(folder / key, key), "the run finished before it was killed"
    done = run_cli(args)
    assert done.returncode == 0, done.stderr
    assert f"{key}: resumed from the checkpoint of ply" in done.stderr
    assert_same_shards(folder, tables_34, key)


def test_the_simulated_cluster_script_spreads_a_table_over_its_nodes(tables_34, tmp_path):
    key = "KQvKR"
    folder = with_subtables(tables_34, tmp_path / "tables", key)
    config = tmp_path / "job.toml"
    config.write_text("split_above = 0\n")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "simulated_cluster.py"), "3", "--memory-per-node",
                           "2", "--", key, "--out", str(folder), "--config", str(config)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"{3 * PARTITIONS_PER_WORKER} partitions on 3 nodes" in done.stderr, done.stderr
    assert_same_shards(folder, tables_34, key)


@pytest.fixture(scope="module")
def two_nodes():
    """A Ray cluster on this machine: two nodes of one CPU each, and a head node with a
    CPU but too little memory for a partition actor (which Ray must then leave out)."""
    from ray.cluster_utils import Cluster
    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 1, "memory": WORKER_BYTES // 4, "include_dashboard": False})
    for _ in range(2):
        cluster.add_node(num_cpus=1, memory=4 << 30)
    cluster.wait_for_nodes()
    yield cluster
    cluster.shutdown()


def test_two_ray_nodes_write_the_same_shards(tables_34, two_nodes, tmp_path):
    keys = ["KQvKR", "KRvKP"]  # KQvKR is also a sub-table of KRvKP (promotion): generated first
    folder = tmp_path / "tables"
    for sub in dependency_order(keys):
        if sub not in keys:
            shutil.copytree(tables_34 / sub, folder / sub)
    config = tmp_path / "job.toml"
    config.write_text(f"split_above = 0\nworkers = 2\naddress = {two_nodes.address!r}\n")
    done = run_cli([*keys, "--out", str(folder), "--config", str(config)])
    assert done.returncode == 0, done.stderr
    assert done.stderr.count(f"{2 * PARTITIONS_PER_WORKER} partitions on 2 nodes") == 2, done.stderr
    assert done.stderr.count(" GB per node") == 2, done.stderr
    for key in keys:
        assert_same_shards(folder, tables_34, key)


def test_a_table_too_big_for_the_cluster_is_refused_before_any_work(ray_local, tmp_path):
    from tablebase.distributed import InsufficientMemoryError, check_memory, generate_on_ray
    from tablebase.generate.partition import BYTES_PER_POSITION, partition_bounds, partition_memory, table_memory
    need = table_memory("KQRvKQR", 4 * PARTITIONS_PER_WORKER) / 1e9
    assert need > BYTES_PER_POSITION * 15.5  # 15.5 G positions (both sides to move)
    with pytest.raises(InsufficientMemoryError, match=rf"KQRvKQR needs about {need:.1f} GB .* offers 16\.0 GB"):
        check_memory(["KQvK", "KQRvKQR"], [{"memory": 8e9, "CPU": 2}] * 2, workers=4)
    check_memory(["KQRvKR"], [{"memory": 16e9, "CPU": 4}], workers=4)
    # In all, the nodes have room for KQRvKR's 8 partitions; none has room for one of them.
    scheme = IndexScheme.of("KQRvKR")
    actor = partition_memory(scheme, *partition_bounds(scheme, 8)[:2])
    assert actor > WORKER_BYTES + BYTES_PER_POSITION * 2 * scheme.size / 9  # an eighth of the positions
    with pytest.raises(InsufficientMemoryError, match="KQRvKR needs about .* in each of its 8 partition actors .* "
                                                      "on its largest node"):
        check_memory(["KQRvKR"], [{"memory": 0.9 * actor, "CPU": 1}] * 40, workers=4)
    with pytest.raises(InsufficientMemoryError, match="KQvKR needs about .* to one task"):
        check_memory(["KQvKR"], [{"memory": 0.9 * table_memory("KQvKR"), "CPU": 4}], workers=4)
    check_memory(["KQvKR"], [{"memory": table_memory("KQvKR"), "CPU": 4}], workers=4)
    with pytest.raises(InsufficientMemoryError, match="KQRvKQR"):
        generate_on_ray(["KQRvKQR"], tmp_path, workers=2)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not FULL, reason="generates KQRvKR three times (about 10 minutes on 2 cores); TABLEBASE_FULL=1")
def test_kqrvkr_is_the_same_on_one_or_two_workers_and_two_nodes(tables_34, two_nodes, tmp_path):
    key = "KQRvKR"
    runs = {}
    n = PARTITIONS_PER_WORKER
    for name, extra, placement in [("one", ["--workers", "1"], f"{n} partitions on 1 node,"),
                                   ("two", ["--workers", "2"], f"{2 * n} partitions on 1 node,"),
                                   ("nodes", ["--workers", "2", "--address", two_nodes.address],
                                    f"{2 * n} partitions on 2 nodes")]:
        folder = with_subtables(tables_34, tmp_path / name, key)
        done = run_cli([key, "--out", str(folder), *extra])
        assert done.returncode == 0, done.stderr
        summary = next(line for line in done.stderr.splitlines() if line.startswith(f"{key} ") and "plies," in line)
        assert placement in summary, summary
        runs[name] = folder
    for name in ("two", "nodes"):
        assert_same_shards(runs[name], runs["one"], key)
