"""Generation: exact values against the oracles, Romano's local check, determinism,
atomic writes and resume."""

from __future__ import annotations

import filecmp
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tablebase.endgame.index import IndexScheme
from tablebase.endgame.material import all_materials, dependency_order
from tablebase.errors import MissingTableError
from tablebase.generate import kernels as K
from tablebase.generate import values as V
from tablebase.generate.values import DECIDED, ILLEGAL
from tablebase.generate.pipeline import (LocalPartitions, generate, generate_table, load_subtables, run_passes,
                                        write_table_manifest)
from tablebase.generate.verify import verify_table
from tablebase.generate.partition import GenerationError, result_of
from tablebase.generate.exact import load_dtz_side, load_table
from tablebase.store import DEFAULT_CODING, read_manifest, table_complete

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from check_oracle import check_material  # noqa: E402

MATERIALS_34 = all_materials(3) + all_materials(4)


def copy_tables(src: Path, dst: Path, keys: list[str]) -> None:
    for key in keys:
        shutil.copytree(src / key, dst / key)


@pytest.mark.parametrize("key", MATERIALS_34)
def test_every_king_pair_matches_the_oracles(tables_34, oracle_dir, key):
    """WDL equals the sign of Syzygy's, DTM equals Gaviota's, on a legal position of every
    king pair and side to move (scripts/check_oracle.py --exhaustive checks them all)."""
    result = check_material(tables_34, key, oracle_dir, per_king_pair=1, seed=1)
    assert result.checked >= 2 * 462 * 0.9
    assert result.mismatches == []


@pytest.mark.parametrize("key", ["KQvK", "KRvK", "KPvK", "KQvKR", "KRvKP", "KPvKP", "KBNvK"])
def test_verify_proves_the_tables(tables_34, key):
    result = verify_table(tables_34, key)
    assert result.ok, result
    assert result.positions == sum(c["wins"] + c["draws"] + c["losses"]
                                   for c in read_manifest(tables_34 / key).counts().values())


def test_verify_catches_a_wrong_value(tables_34, tmp_path):
    """A table with one DTM off by two (still a loss: locally plausible) fails the check."""
    copy_tables(tables_34, tmp_path, ["KvK", "KQvK"])
    w, b = load_table(tmp_path, "KQvK")
    x = int(np.flatnonzero((b & np.uint16(0xF000)) == DECIDED)[100])
    b[x] += 2
    parts = LocalPartitions("KQvK", tmp_path)
    parts.parts[0].val = [w, b]
    parts.parts[0].zval = [load_dtz_side(tmp_path, "KQvK", stm, v == ILLEGAL) for stm, v in enumerate((w, b))]
    orders = ((0, 1), (0, 1))
    write_table_manifest(tmp_path, "KQvK", parts.finish(tmp_path / "KQvK", orders, DEFAULT_CODING), orders,
                         DEFAULT_CODING)
    result = verify_table(tmp_path, "KQvK")
    assert not result.ok
    assert (1, x) in result.examples


def test_longest_mates_are_the_known_ones(tables_34):
    # Mate in 10 (KQK), 16 (KRK), 33 (KBNK) moves, and KQvKR's 35 moves for the queen.
    expected = {"KQvK": 19, "KRvK": 31, "KBNvK": 65, "KQvKR": 69}
    for key, plies in expected.items():
        w, _ = load_table(tables_34, key)
        d = (w[(w != ILLEGAL) & ((w & np.uint16(0xF000)) == DECIDED)] & np.uint16(0xFFF)).astype(int)
        assert d[d % 2 == 1].max() == plies, key


def test_init_refuses_subtables_without_the_sides_its_exits_reach(tables_34):
    """Init holds only the sub-table sides one side's exits reach; handed the other side's,
    it says so instead of reading values that are not there."""
    key = "KQvKR"
    assert load_subtables(tables_34, key, 0).offsets.tolist() != load_subtables(tables_34, key, 1).offsets.tolist()
    part = LocalPartitions(key, tables_34).parts[0]
    with pytest.raises(GenerationError, match="not loaded"):
        result_of(part.init(0, load_subtables(tables_34, key, 1)))
    assert result_of(part.init(0, load_subtables(tables_34, key, 0)))["legal"] > 0


def test_values_do_not_depend_on_partitioning(tables_34):
    """Three partitions exchanging frontiers give the values of the one-partition run."""
    key = "KRvKP"
    parts = LocalPartitions(key, tables_34, 3)
    assert len(parts.parts) == 3
    run_passes(key, parts)
    parts.finish(None, (), DEFAULT_CODING)
    w, b = parts.values()
    want = load_table(tables_34, key)
    assert np.array_equal(w, want[0]) and np.array_equal(b, want[1])


def test_ray_actors_write_the_same_shards(tables_34, ray_local, tmp_path):
    """A table split over 2 Ray actors writes shards byte-identical to the default run."""
    from tablebase.distributed import generate_on_ray
    key = "KRvKP"
    copy_tables(tables_34, tmp_path, dependency_order([key])[:-1])
    generate_on_ray([key], tmp_path, workers=2, split_above=0)
    manifest = read_manifest(tmp_path / key)
    assert len(manifest.shards) == 2 * IndexScheme.of(key).num_slices > 2
    for info in manifest.shards:
        assert filecmp.cmp(tmp_path / key / info.file, tables_34 / key / info.file, shallow=False)


def test_rerun_does_no_work(tables_34, tmp_path):
    keys = dependency_order(["KRvK"])
    copy_tables(tables_34, tmp_path, keys)
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    stats = generate(["KRvK"], tmp_path)
    assert all(s.skipped for s in stats)
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")} == before


def test_a_corrupted_shard_is_regenerated(tables_34, tmp_path):
    copy_tables(tables_34, tmp_path, ["KvK", "KRvK"])
    shard = next((tmp_path / "KRvK").glob("side=b/0*.parquet"))
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    assert not table_complete(tmp_path / "KRvK", "KRvK")
    stats = generate_table(tmp_path, "KRvK")
    assert not stats.skipped
    assert filecmp.cmp(shard, tables_34 / shard.relative_to(tmp_path), shallow=False)


def test_missing_subtable_is_a_clear_error(tmp_path):
    with pytest.raises(MissingTableError, match="sub-table KQvK of KQvKR is missing.*tablebase generate KQvK"):
        generate_table(tmp_path, "KQvKR")


def test_killed_run_resumes_to_identical_shards(tables_34, tmp_path):
    """SIGKILL the CLI in the middle of a table; the re-run skips what was complete and
    writes shards byte-identical to an uninterrupted run."""
    keys = ["KQvKR", "KRvKR"]
    copy_tables(tables_34, tmp_path, [k for k in dependency_order(keys) if k not in keys])
    cmd = [sys.executable, "-m", "tablebase.cli", "generate", *keys, "--out", str(tmp_path), "--local"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 300
    while not (tmp_path / "KQvKR" / "side=b" / "manifest.parquet").exists() and time.time() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert table_complete(tmp_path / "KQvKR", "KQvKR")
    assert not table_complete(tmp_path / "KRvKR", "KRvKR")
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "1 generated" in done.stderr
    for key in keys:
        for info in read_manifest(tmp_path / key).shards:
            assert filecmp.cmp(tmp_path / key / info.file, tables_34 / key / info.file, shallow=False)
    leftovers = [p for p in tmp_path.rglob(".*tmp*")]
    assert leftovers == []


# -- the frontier's block counts ------------------------------------------------------


def _codes_with_frontier(rng, n: int, ply: int, dtz: bool) -> tuple[np.ndarray, np.ndarray]:
    """Random codes, a sparse, clustered frontier of ``ply`` among them, and where it is."""
    val = rng.integers(1, 0x7F, n).astype(np.uint16)
    where = np.zeros(n, dtype=bool)
    for start in rng.integers(0, n - 40, 30):
        where[start:start + 40] = rng.random(40) < 0.5
    where |= rng.random(n) < 0.002
    won = rng.random(n) < 0.5
    if dtz:
        val[where & won], val[where & ~won] = V.ZWON | ply, V.ZLOST | ply
    else:  # decided at ply, marked as reached by an exit or not
        val[where & won], val[where & ~won] = V.EXIT_DECIDED | ply, V.DECIDED | ply
    val[:50] = V.DECIDED | (ply + 1)  # decided at another ply: not the frontier
    where[:50] = False
    return val, where


@pytest.mark.parametrize("dtz", [False, True])
def test_frontier_in_blocks_finds_what_a_scan_finds(dtz):
    """The blocks' counts and the frontier read from them, budget by budget, against numpy."""
    rng = np.random.default_rng(7)
    n, shift, ply, lo = 100_000, 10, 9, 5_000
    val, where = _codes_with_frontier(rng, n, ply, dtz)
    hits = np.zeros((n >> shift) + 1, dtype=np.int32)
    V.count_frontier(val, ply, dtz, 0, shift, hits)
    assert np.array_equal(hits, np.bincount(np.flatnonzero(where) >> shift, minlength=len(hits)))
    found, start = [[], []], 0
    while start < len(hits):
        first, second, start = V.frontier_in_blocks(val, ply, dtz, lo, shift, hits, start, 500)
        found[0].append(first)
        found[1].append(second)
    first, second = np.concatenate(found[0]), np.concatenate(found[1])
    if dtz:
        assert np.array_equal(first, lo + np.flatnonzero(val == V.ZLOST | ply))
        assert np.array_equal(second, lo + np.flatnonzero(val == V.ZWON | ply))
    else:
        assert np.array_equal(first, lo + np.flatnonzero(where)) and len(second) == 0


@pytest.mark.parametrize("ply", [7, 8])
def test_settled_exits_are_counted_in_their_blocks(ply):
    """settle_exits counts each position it decides in the block of ``base + j``."""
    rng = np.random.default_rng(ply)
    n, shift, base = 50_000, 10, 777  # a slice that starts inside a block
    val = rng.integers(1, 0x7F, n).astype(np.uint16)
    now = rng.random(n) < 0.01
    val[now] = (V.TENT_WIN | ply) if ply % 2 else V.exit_loss_code(ply) + 1
    goes = ~now & (rng.random(n) < 0.01)
    if ply % 2 == 0:
        val[goes] = V.exit_loss_code(ply) + 3  # a way out goes, the position stays undecided
    hits = np.zeros(((base + n) >> shift) + 1, dtype=np.int32)
    decided = K.settle_exits(val, ply, base, shift, hits)
    assert decided == now.sum()
    assert np.array_equal(hits, np.bincount((base + np.flatnonzero(now)) >> shift, minlength=len(hits)))
    assert (val[now] == V.EXIT_DECIDED | ply).all()
    if ply % 2 == 0:
        assert (val[goes] == 2).all()
