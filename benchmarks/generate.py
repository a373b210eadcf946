"""Generation speed, memory and size per table, beside an in-run baseline.

    python benchmarks/generate.py [--workers 2] [--out DIR] [MATERIAL ...]

For each table (default: KQvKR KBNvK KRvKP KQRvKR KRPvKR) it prints wall seconds end to
end and by stage (init: reading the sub-tables and classifying; the DTM passes; the DTZ
passes; writing: choosing the storage orders and the shards; the rest: starting the
partitions, Ray's scheduling, the manifest) and the largest peak RSS of a process that
held its partitions (``worker peak``), scheduled as the generator does it on a local Ray
instance with ``--workers`` CPUs (a table of more than 8M positions per side is split
over that many actors; a smaller one runs whole in one task),
positions per second, the peak RSS of a one-process run (``--local``, in a subprocess)
and its bytes per index position, the same above that process's own memory before the
table (``process``: Python, numpy, pyarrow, the compiled kernels), and bits per position
on disk. Sub-tables are
generated first and not timed.

Baseline, measured in the same run: the generic path on KQvKR, i.e. building the
explicit game graph with the move kernels and solving it with ``tablebase.solve.retrograde``
(WDL and depths on the graph, the slow twin of the pipeline); printed as a ratio.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import ray

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tablebase.distributed import generate_on_ray  # noqa: E402
from tablebase.endgame.index import IndexScheme  # noqa: E402
from tablebase.endgame.material import dependency_order  # noqa: E402
from tablebase.generate.exact import load_table  # noqa: E402

DEFAULT = ["KQvKR", "KBNvK", "KRvKP", "KQRvKR", "KRPvKR"]


def baseline_explicit(out: Path) -> float:
    """Seconds to solve KQvKR as an explicit graph with the generic retrograde solver."""
    from tablebase.endgame.graph import ChessGame
    from tablebase.generate.values import DECIDED, DEPTH_MASK
    from tablebase.solve import retrograde

    def evals(key: str, stm: int, idx: np.ndarray) -> np.ndarray:
        v = load_table(out, key)[stm][idx]
        d = (v & DEPTH_MASK).astype(np.int64)
        won_by_mover = ((v & np.uint16(0xF000)) == DECIDED) & (d % 2 == 1)
        lost_by_mover = ((v & np.uint16(0xF000)) == DECIDED) & (d % 2 == 0)
        mover = 1 - 2 * stm  # +1 White
        return np.where(won_by_mover, mover, np.where(lost_by_mover, -mover, 0))

    t = time.perf_counter()
    retrograde(ChessGame("KQvKR", evals))
    return time.perf_counter() - t


def peak_rss_local(out: Path, key: str) -> tuple[int, int]:
    """Peak RSS (bytes) of a one-process generation of ``key`` in a fresh interpreter, and
    that process's RSS just before it: Python, numpy, pyarrow and the compiled kernels,
    loaded by generating a small table first."""
    shutil.rmtree(out / key, ignore_errors=True)
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across fork+exec;
    # writing 5 to clear_refs starts VmHWM again from the present RSS.
    code = ("import tempfile; from tablebase.cli import main\n"
            "def status(field): return int([l.split()[1] for l in open('/proc/self/status') "
            "if l.startswith(field)][0]) * 1024\n"
            "with tempfile.TemporaryDirectory() as warm: main(['generate', 'KQvK', '--out', warm, '--local'])\n"
            "base = status('VmRSS'); open('/proc/self/clear_refs', 'w').write('5')\n"
            f"main(['generate', {key!r}, '--out', {str(out)!r}, '--local'])\n"
            "print(status('VmHWM'), base)")
    done = subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True, text=True)
    peak, base = map(int, done.stdout.split()[-2:])
    return peak, base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("materials", nargs="*", default=DEFAULT)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "bench-tables")
    parser.add_argument("--no-rss", action="store_true", help="skip the one-process peak-memory runs")
    args = parser.parse_args()
    out = args.out.resolve()
    ray.init(address="local", num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    subs = sorted({k for m in args.materials for k in dependency_order([m])[:-1]} - set(args.materials),
                  key=lambda k: (len(k), k))
    generate_on_ray(subs, out, workers=args.workers)

    print(f"{'table':8} {'positions':>12} {'end-to-end s':>12} {'init s':>7} {'passes s':>9} {'DTZ s':>7} "
          f"{'write s':>8} {'rest s':>7} {'Mpos/s':>7} {'worker peak':>11} "
          f"{'peak RSS':>9} {'B/pos':>6} {'process':>8} {'B/pos above':>11} {'disk MB':>8} {'bits/pos':>8}")
    for key in args.materials:
        positions = 2 * IndexScheme.of(key).size
        rss, base = (0, 0) if args.no_rss else peak_rss_local(out, key)
        shutil.rmtree(out / key, ignore_errors=True)
        t = time.perf_counter()
        (stats,) = [s for s in generate_on_ray([key], out, workers=args.workers) if s.material == key]
        wall = time.perf_counter() - t
        rest = wall - stats.init_seconds - stats.pass_seconds - stats.dtz_seconds - stats.write_seconds
        print(f"{key:8} {positions:12,d} {wall:12.1f} {stats.init_seconds:7.1f} {stats.pass_seconds:9.1f} "
              f"{stats.dtz_seconds:7.1f} {stats.write_seconds:8.1f} {rest:7.1f} {positions / wall / 1e6:7.2f} "
              f"{stats.worker_peak_bytes / 1e9:10.2f}G "
              f"{rss / 1e9:8.2f}G {rss / positions:6.2f} {base / 1e6:6.0f}MB {(rss - base) / positions:11.2f} "
              f"{stats.bytes / 1e6:8.2f} {8 * stats.bytes / positions:8.2f}",
              flush=True)
        if key == "KQvKR":
            base = baseline_explicit(out)
            print(f"         baseline: explicit graph + generic retrograde on KQvKR {base:.1f} s; "
                  f"pipeline end to end is {base / wall:.2f}x its speed")
    ray.shutdown()


if __name__ == "__main__":
    main()
