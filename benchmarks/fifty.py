"""What the 50-move rule costs: generation time and peak memory with DTZ, beside DTM alone.

    python benchmarks/fifty.py --tables DIR [--repeat N] [--no-dtz] [--base-src DIR --base-tables DIR] [MATERIAL ...]

For each table (default: KQRvKR KRPvKR), generated whole in one process (a subprocess per
run, its sub-tables linked from ``--tables``), twice in a row: WDL and DTM only
(``--no-dtz``), then with the 50-move rule's DTZ. It prints both runs' seconds end to end,
the DTZ passes' seconds, the ratio of the two runs, the DTZ passes run and each run's peak
RSS per index position; ``--repeat N`` runs each N times, alternating, and keeps the
fastest of each. Small tables are generated first with each version, so that the timed
runs find their kernels compiled.

``--base-src`` (a checkout of an earlier version, e.g. ``git worktree add ../base 2b4096b``)
with ``--base-tables`` (its tables, of its format) adds that version's run of the same
table in the same session (DTM only): its seconds and peak memory, and ours over them.
``--no-dtz`` leaves out the runs with DTZ (for ``--tables`` generated without it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tablebase.endgame.index import IndexScheme  # noqa: E402
from tablebase.endgame.material import dependency_order  # noqa: E402

CHILD = """
import json, resource, sys, time
from pathlib import Path
from tablebase.generate.pipeline import generate_table
t = time.perf_counter()
stats = generate_table(Path(sys.argv[1]), sys.argv[2], **({"dtz": sys.argv[3] == "1"} if len(sys.argv) > 3 else {}))
print(json.dumps({"seconds": time.perf_counter() - t, "dtz_seconds": getattr(stats, "dtz_seconds", 0.0),
                  "dtz_passes": getattr(stats, "dtz_passes", 0), "skipped": stats.skipped,
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def run(src: Path, tables: Path, key: str, *dtz: str) -> dict:
    """Generate ``key`` with the code in ``src`` into a fresh folder beside links to its
    sub-tables (``dtz``: "1" with DTZ, "0" without, nothing: the version's default)."""
    with tempfile.TemporaryDirectory(dir=ROOT / "data") as tmp:
        for sub in dependency_order([key])[:-1]:
            os.symlink((tables / sub).resolve(), Path(tmp) / sub)
        # Each version its own compiled kernels (tablebase keys numba's cache by its source).
        env = {k: v for k, v in os.environ.items()
               if k not in ("NUMBA_CACHE_DIR", "NUMBA_CACHE_LOCATOR_CLASSES")} | {"PYTHONPATH": str(src)}
        out = subprocess.run([sys.executable, "-c", CHILD, tmp, key, *dtz], env=env, cwd=src, check=True,
                             capture_output=True, text=True).stdout
        shutil.rmtree(Path(tmp) / key, ignore_errors=True)
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("materials", nargs="*", default=["KQRvKR", "KRPvKR"])
    parser.add_argument("--tables", type=Path, required=True, help="complete tables holding the sub-tables")
    parser.add_argument("--base-src", type=Path)
    parser.add_argument("--base-tables", type=Path)
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each version this many times, alternating, and keep the fastest of each "
                             "(this machine's speed drifts by 10-40 %% between minutes)")
    parser.add_argument("--no-dtz", action="store_true", help="only the runs without DTZ")
    args = parser.parse_args()
    ours = (("0",),) if args.no_dtz else (("0",), ("1",))
    print(f"{'table':8} {'DTM s':>7} {'+DTZ s':>7} {'DTZ s':>7} {'ratio':>6} {'passes':>6} {'B/pos':>6} "
          f"{'+DTZ B/pos':>10}" + (f" {'base s':>7} {'base B/pos':>10} {'DTM/base':>8}" if args.base_src else ""))
    for src, tables, flags in [(ROOT, args.tables, ours)] + (
            [(args.base_src, args.base_tables, ((),))] if args.base_src else []):
        for key in ("KQvK", "KPvK"):  # compile what the timed runs use, pawnless and with pawns
            for flag in flags:
                run(src, tables, key, *flag)
    for key in args.materials:
        positions = 2 * IndexScheme.of(key).size
        # Alternating (DTM, DTZ, DTM, ...), so that a slow spell of the machine hits both.
        runs = [[run(ROOT, args.tables, key, *flag) for flag in ours] for _ in range(args.repeat)]
        d = min((each[0] for each in runs), key=lambda x: x["seconds"])
        line = f"{key:8} {d['seconds']:7.1f}"
        if args.no_dtz:
            line += f" {'-':>7} {'-':>7} {'-':>6} {'-':>6} {d['peak'] / positions:6.2f} {'-':>10}"
        else:
            r = min((each[1] for each in runs), key=lambda x: x["seconds"])
            line += (f" {r['seconds']:7.1f} {r['dtz_seconds']:7.1f} {r['seconds'] / d['seconds']:6.2f} "
                     f"{r['dtz_passes']:6d} {d['peak'] / positions:6.2f} {r['peak'] / positions:10.2f}")
        if args.base_src:
            b = run(args.base_src, args.base_tables, key)
            line += f" {b['seconds']:7.1f} {b['peak'] / positions:10.2f} {d['seconds'] / b['seconds']:8.2f}"
        print(line, flush=True)
    print("\nDTM s / +DTZ s: the run without / with the 50-move rule; ratio: the second over the first; "
          "B/pos: peak RSS of the process (Python, numpy, pyarrow and the kernels included) per index "
          "position, both sides to move; DTM/base: the run without DTZ over the base version's")


if __name__ == "__main__":
    main()
