"""The rates behind ``tablebase generate --dry-run`` (``tablebase/plan.py``), measured.

    python benchmarks/plan.py [--workers 2] [--out DIR] [MATERIAL ...]

Generates the tables (default: every 3- and 4-piece table, then KQRvKR) into a fresh
folder on a local Ray instance with ``--workers`` CPUs, as ``tablebase generate`` does;
then fits, per piece count, each table's own seconds (its task or split run, end to end) as
``fixed + positions * rate``, and prints the fitted constants beside plan.py's, and
plan.py's estimate of the whole run beside its measured wall time (the ratio is what a
later check holds within 30 %).

Baseline in the same run: the estimate with plan.py's constants, printed as a ratio.
Sub-tables of the named materials outside the list are generated first and not timed.

Measured 2026-12-01 (2 workers, the machine shared with two other sessions, load average
3-7): 3 pieces 0.03-0.09 s a table, fit 4.8e-7 s/position; 4 pieces 0.8-5.8 s, fit
6.4e-7 s/position (30 tables), KPvKP an outlier at 32.8 s (en passant); disk 0.36 bytes a
position; KQRvKR (split) 324.7 s, against 35.7 s the project measured on an idle machine:
the split rate in plan.py is the idle one, so the printed whole-run ratio (0.25 then) says
how far the load was from idle, not how far the model is.

Measured 2026-12-07 (2 workers, an otherwise idle machine, load average 1), two runs:
4 pieces 70.8 / 75.9 s in all, fit 3.6e-7 / 4.4e-7 s/position; KPvKP 4.23 / 5.42 s, 1.3x
the 4-piece rate (plan.py's en-passant factor was 6.1, from the loaded run); KQRvKR
(split) 72.1 / 83.6 s against 59.7 s estimated; whole run 111.8 / 122.0 s, estimated
144.6 s with the constants of 2026-12-01, 96.2 s with those of 2026-12-07.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import ray

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tablebase import plan  # noqa: E402
from tablebase.config import JobConfig  # noqa: E402
from tablebase.distributed import generate_on_ray  # noqa: E402
from tablebase.endgame.index import IndexScheme  # noqa: E402
from tablebase.endgame.material import Material, all_materials  # noqa: E402
from tablebase.generate.partition import SPLIT_ABOVE  # noqa: E402


def fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """(fixed seconds, seconds per position) by least squares, both kept >= 0."""
    x = np.array([p for p, _ in points], dtype=float)
    y = np.array([s for _, s in points])
    if len(points) == 1:
        return 0.0, float(y[0] / x[0])
    a = np.vstack([np.ones_like(x), x]).T
    fixed, rate = np.linalg.lstsq(a, y, rcond=None)[0]
    if fixed < 0:
        return 0.0, float(y.sum() / x.sum())
    return float(fixed), max(float(rate), 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("materials", nargs="*", default=all_materials(3) + all_materials(4) + ["KQRvKR"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, help="folder to generate into (default: a temporary one)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="plan-bench-"))
    shutil.rmtree(out, ignore_errors=True)
    cfg = JobConfig(materials=args.materials, workers=args.workers, out=out)
    estimate = plan.plan_job(cfg)

    ray.init(address="local", num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    with tempfile.TemporaryDirectory() as warm:  # compiled kernels, loaded by every worker, are not timed
        generate_on_ray(["KQvK", "KRvK", "KPvK"], Path(warm), workers=args.workers)
    t0 = time.perf_counter()
    stats = generate_on_ray(args.materials, out, workers=args.workers)
    wall = time.perf_counter() - t0
    ray.shutdown()

    print(f"{'table':8} {'pieces':>6} {'positions':>12} {'split':>5} {'seconds':>8} {'estimate':>8}")
    by_kind: dict[tuple[int, bool], list[tuple[int, float]]] = {}
    estimated = {t.material: t for t in estimate.tables}
    for s in stats:
        if s.skipped:
            continue
        positions = 2 * IndexScheme.of(s.material).size
        split = IndexScheme.of(s.material).size > SPLIT_ABOVE
        pieces = Material.parse(s.material).num_pieces
        by_kind.setdefault((pieces, split), []).append((positions, s.seconds))
        print(f"{s.material:8} {pieces:6d} {positions:12,d} {'yes' if split else 'no':>5} {s.seconds:8.2f} "
              f"{estimated[s.material].seconds:8.2f}")
    print("fitted (fixed s + positions * rate) beside plan.py's constants:")
    for (pieces, split), points in sorted(by_kind.items()):
        fixed, rate = fit(points)
        if split:
            have = (plan.SPLIT_TABLE_SECONDS, plan.SPLIT_SECONDS_PER_POSITION.get(pieces))
            rate *= args.workers  # CPU-seconds per position: the run divides by the workers
        else:
            have = (plan.TABLE_SECONDS, plan.TASK_SECONDS_PER_POSITION.get(pieces))
        print(f"  {pieces} pieces, {'split' if split else 'task '}: fixed {fixed:6.2f} s, rate {rate:.3e} s/position "
              f"({len(points)} tables); plan.py: {have[0]:.2f} s, {have[1]}")
    disk = sum(s.bytes for s in stats if not s.skipped)
    positions = sum(2 * IndexScheme.of(s.material).size for s in stats if not s.skipped)
    print(f"disk: {disk / positions:.3f} bytes per position measured, plan.py estimate {estimate.disk_bytes / 1e6:.1f} "
          f"MB vs {disk / 1e6:.1f} MB measured")
    print(f"whole run (kernels compiled beforehand): {wall:.1f} s measured, plan.py estimates "
          f"{estimate.wall_seconds:.1f} s: ratio estimate/measured {estimate.wall_seconds / wall:.2f}")
    if args.out is None:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
