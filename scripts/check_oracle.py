#!/usr/bin/env python3
"""Compare generated tables with the Syzygy (WDL) and Gaviota (DTM) oracles.

    python scripts/check_oracle.py [--tables DIR] [--oracle DIR] [--exhaustive] MATERIAL...

``--wdl-only`` skips Gaviota (for 5-piece tables). Without ``--exhaustive`` it checks a sample that covers every king pair of each table
(``--per-king-pair`` legal positions per king pair and side to move). Exits non-zero on any
disagreement. Our ``wdl`` must equal the sign of Syzygy's ``probe_wdl`` (Syzygy counts the
50-move rule; we do not) and our ``dtm`` must equal Gaviota's ``probe_dtm``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.gaviota
import chess.syzygy
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tablebase.endgame.index import IndexScheme  # noqa: E402
from tablebase.endgame.material import all_materials  # noqa: E402
from tablebase.endgame.pychess import index_board  # noqa: E402
from tablebase.generate.exact import load_table  # noqa: E402
from tablebase.generate.values import ILLEGAL, to_wdl_dtm  # noqa: E402

DEFAULT_ORACLE = ROOT.parent / "shared" / "oracle"


@dataclass
class OracleResult:
    material: str
    checked: int = 0
    mismatches: list[str] = field(default_factory=list)


def sample_indices(scheme: IndexScheme, val: np.ndarray, per_king_pair: int, rng: np.random.Generator) -> np.ndarray:
    """Up to ``per_king_pair`` legal indices of every king pair."""
    r = scheme.positions_per_king_pair
    legal = np.flatnonzero(val != ILLEGAL)
    kk = legal // r
    keys = rng.random(len(legal))
    order = np.lexsort((keys, kk))
    legal, kk = legal[order], kk[order]
    first = np.searchsorted(kk, kk, side="left")
    return np.sort(legal[np.arange(len(legal)) - first < per_king_pair])


def check_material(tables: Path, key: str, oracle: Path = DEFAULT_ORACLE, *, exhaustive: bool = False,
                   per_king_pair: int = 2, seed: int = 0, max_report: int = 20, with_dtm: bool = True) -> OracleResult:
    scheme = IndexScheme.of(key)
    result = OracleResult(key)
    values = load_table(Path(tables), key)
    rng = np.random.default_rng(seed)
    with chess.syzygy.open_tablebase(str(oracle / "syzygy")) as syzygy, \
            chess.gaviota.open_tablebase(str(oracle / "gaviota")) as gaviota:
        for stm in (0, 1):
            val = values[stm]
            indices = np.flatnonzero(val != ILLEGAL) if exhaustive else sample_indices(scheme, val, per_king_pair, rng)
            wdl, dtm, _ = to_wdl_dtm(val[indices])
            for x, w, d in zip(indices.tolist(), wdl.tolist(), dtm.tolist()):
                board = index_board(key, stm, x)
                ref_wdl = syzygy.probe_wdl(board)
                ref_dtm = gaviota.probe_dtm(board) if with_dtm else d
                result.checked += 1
                if np.sign(ref_wdl) != w or ref_dtm != d:
                    if len(result.mismatches) < max_report:
                        result.mismatches.append(f"{board.fen()}: ours wdl={w} dtm={d}, "
                                                 f"syzygy wdl={ref_wdl}, gaviota dtm={ref_dtm}")
                    else:
                        result.mismatches.append("")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("materials", nargs="*", help="material keys (default: every 3- and 4-piece table)")
    parser.add_argument("--tables", type=Path, default=ROOT / "data" / "tables")
    parser.add_argument("--oracle", type=Path, default=DEFAULT_ORACLE)
    parser.add_argument("--exhaustive", action="store_true", help="every legal position, not a sample")
    parser.add_argument("--per-king-pair", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--wdl-only", action="store_true",
                        help="compare WDL with Syzygy only (5-piece tables: Gaviota's 5-piece files are not shipped)")
    args = parser.parse_args(argv)
    keys = args.materials or all_materials(3) + all_materials(4)
    bad = 0
    total = 0
    for key in keys:
        r = check_material(args.tables, key, args.oracle, exhaustive=args.exhaustive,
                           per_king_pair=args.per_king_pair, seed=args.seed, with_dtm=not args.wdl_only)
        total += r.checked
        bad += len(r.mismatches)
        print(f"{key:8} checked {r.checked:10d}  mismatches {len(r.mismatches)}", flush=True)
        for line in r.mismatches:
            if line:
                print("   ", line)
    print(f"total: checked {total}, mismatches {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
