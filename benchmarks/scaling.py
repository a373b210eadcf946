"""Ray scaling: KQRvKR generated on 1, 2, ... N cores (N = the cores present).

    python benchmarks/scaling.py [--max-workers N] [--out DIR] [MATERIAL]

For each core count n, a fresh process pinned to n cores (CPU affinity, inherited by the
Ray instance it starts, so a run cannot borrow idle cores) generates the table (default
KQRvKR) from scratch with ``workers=n``, its sub-tables already present (generated first,
not timed). Prints wall seconds end to end and for the backward passes alone, the
speedup over 1 core measured in the same run, the largest peak RSS of a worker, the bytes
of predecessors routed between partitions (through Ray's object store: between nodes on a
cluster) in all and at the ply that routed most, and checks that every run wrote
byte-identical shards (same sha256 for every shard).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: One run, in a process pinned to the first n cores: prints its stats as JSON.
RUN = """
import json, os, sys, time
from pathlib import Path
n, key, out = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:n])
sys.path.insert(0, sys.argv[4])
import ray
from tablebase.distributed import generate_on_ray
ray.init(address="local", num_cpus=n, include_dashboard=False, log_to_driver=False)
t = time.perf_counter()
stats = [s for s in generate_on_ray([key], out, workers=n, split_above=0) if s.material == key][0]
print(json.dumps({"wall": time.perf_counter() - t, "passes": stats.pass_seconds,
                  "peak": stats.worker_peak_bytes, "partitions": stats.partitions,
                  "routed": stats.routed_bytes, "routed_ply": stats.routed_ply_bytes}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("material", nargs="?", default="KQRvKR")
    parser.add_argument("--max-workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "bench-tables")
    args = parser.parse_args()
    key, out = args.material, args.out.resolve()

    sys.path.insert(0, str(ROOT))
    import ray

    from tablebase.distributed import generate_on_ray
    from tablebase.endgame.material import dependency_order
    from tablebase.store.shards import read_manifest
    ray.init(address="local", num_cpus=args.max_workers, include_dashboard=False, log_to_driver=False)
    generate_on_ray(dependency_order([key])[:-1], out, workers=args.max_workers)
    ray.shutdown()

    print(f"{key}: {'cores':>5} {'partitions':>10} {'end-to-end s':>12} {'passes s':>9} {'speedup':>8} "
          f"{'passes speedup':>15} {'peak GB/worker':>15} {'routed MB':>10} {'MB at worst ply':>16}")
    base = shards = None
    for n in range(1, args.max_workers + 1):
        shutil.rmtree(out / key, ignore_errors=True)
        done = subprocess.run([sys.executable, "-c", RUN, str(n), key, str(out), str(ROOT)], check=True,
                              capture_output=True, text=True)
        r = json.loads(done.stdout.strip().splitlines()[-1])
        base = base or r
        hashes = [(i.file, i.sha256) for i in read_manifest(out / key).shards]
        if shards is not None and hashes != shards:
            raise SystemExit(f"{n} cores wrote different shards than 1 core")
        shards = hashes
        print(f"{'':{len(key) + 1}} {n:5d} {r['partitions']:10d} {r['wall']:12.1f} {r['passes']:9.1f} "
              f"{base['wall'] / r['wall']:7.2f}x {base['passes'] / r['passes']:14.2f}x {r['peak'] / 1e9:15.2f} "
              f"{r['routed'] / 1e6:10.1f} {r['routed_ply'] / 1e6:16.1f}",
              flush=True)
    print("shards byte-identical for every core count")


if __name__ == "__main__":
    main()
