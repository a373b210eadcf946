"""Ray scaling: KQRvKR generated with 1, 2, ... N workers (N = the cores present).

    python benchmarks/scaling.py [--max-workers N] [--out DIR] [MATERIAL]

One local Ray instance with N CPUs; for each worker count the table (default KQRvKR) is
generated from scratch, split over that many partition actors, its sub-tables already
present (generated first, not timed). Prints wall seconds end to end and for the backward
passes alone, the speedup over 1 worker measured in the same run, and checks that every
run wrote byte-identical shards (same sha256 for every shard).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

import ray

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tablebase.distributed import generate_on_ray  # noqa: E402
from tablebase.endgame.material import dependency_order  # noqa: E402
from tablebase.store.shards import read_manifest  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("material", nargs="?", default="KQRvKR")
    parser.add_argument("--max-workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "bench-tables")
    args = parser.parse_args()
    key, n_max, out = args.material, args.max_workers, args.out.resolve()
    ray.init(num_cpus=n_max, include_dashboard=False, log_to_driver=False)
    subs = dependency_order([key])[:-1]
    generate_on_ray(subs, out, workers=n_max)

    print(f"{key} on {n_max} CPUs: {'workers':>7} {'end-to-end s':>12} {'passes s':>9} "
          f"{'speedup':>8} {'passes speedup':>15} {'peak GB/worker':>15}")
    base = None
    shards = None
    for n in range(1, n_max + 1):
        shutil.rmtree(out / key, ignore_errors=True)
        t = time.perf_counter()
        (stats,) = [s for s in generate_on_ray([key], out, workers=n, split_above=0) if s.material == key]
        wall = time.perf_counter() - t
        base = base or (wall, stats.pass_seconds)
        hashes = [(i.file, i.sha256) for i in read_manifest(out / key).shards]
        if shards is not None and hashes != shards:
            raise SystemExit(f"{n} workers wrote different shards than 1 worker")
        shards = hashes
        print(f"{'':{len(key) + 12}} {n:7d} {wall:12.1f} {stats.pass_seconds:9.1f} {base[0] / wall:7.2f}x "
              f"{base[1] / stats.pass_seconds:14.2f}x {stats.worker_peak_bytes / 1e9:15.2f}", flush=True)
    print("shards byte-identical for every worker count")
    ray.shutdown()


if __name__ == "__main__":
    main()
