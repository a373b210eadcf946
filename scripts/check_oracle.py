#!/usr/bin/env python3
"""Compare generated tables with the Syzygy (WDL) and Gaviota (DTM) oracles.

    python scripts/check_oracle.py [--tables DIR] [--oracle DIR] [--exhaustive] MATERIAL...

``--wdl-only`` compares Syzygy's WDL only (5-piece tables: the oracle has no 5-piece DTZ or
Gaviota files). Each table is checked on a sample that covers every king pair
(``--per-king-pair`` legal positions per king pair and side to move) through python-chess's
probers; ``--exhaustive`` adds every legal position against Syzygy, read at compiled speed
(:mod:`syzygy_compiled`, which gives python-chess's values; tables in dependency order, so
that the sub-tables that value a table's captures are checked before it). Exits non-zero
on any disagreement. Our ``wdl`` must equal the sign of Syzygy's ``probe_wdl``, our
``wdl50`` (the ``dtz`` column's class) Syzygy's ``probe_wdl`` itself, our ``dtz`` Syzygy's
``probe_dtz`` under python-chess's rounding rule (:func:`dtz_agrees`), and our ``dtm``
Gaviota's ``probe_dtm``.
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
sys.path.insert(0, str(ROOT / "scripts"))

from tablebase.endgame.index import IndexScheme  # noqa: E402
from tablebase.endgame.material import all_materials, dependency_order  # noqa: E402
from tablebase.endgame.pychess import index_board  # noqa: E402
from tablebase.generate.exact import load_table  # noqa: E402
from tablebase.generate.values import ILLEGAL, class_of_stored_dtz, dtz_of_stored, to_wdl_dtm  # noqa: E402
from tablebase.store import TableReader  # noqa: E402

DEFAULT_ORACLE = ROOT.parent / "shared" / "oracle"


@dataclass
class OracleResult:
    material: str
    checked: int = 0
    mismatches: list[str] = field(default_factory=list)
    dtz_rounded: int = 0  # positions where Syzygy's DTZ is one ply less than ours (its rounding)
    dtz_exact: int = 0  # positions where Syzygy's DTZ is exact by construction, so must equal ours


def dtz_agrees(ours: int, syzygy: int) -> bool:
    """python-chess's rule for Syzygy's DTZ: the same sign, and its value the exact one or
    one ply closer to zero (the files may round); a cursed or blessed value may also be
    100 plies off, where a later phase is what curses it."""
    return bool(dtz_agrees_many(np.array([ours]), np.array([syzygy]))[0])


def dtz_agrees_many(ours: np.ndarray, syzygy: np.ndarray) -> np.ndarray:
    """:func:`dtz_agrees` of arrays, element by element."""
    ours, syzygy = ours.astype(np.int64), syzygy.astype(np.int64)
    gap = np.abs(ours) - np.abs(syzygy)
    return (np.sign(ours) == np.sign(syzygy)) & (
        (gap == 0) | (gap == 1) | ((np.abs(ours) > 100) & ((gap == 100) | (gap == 101)))
        | ((np.abs(syzygy) > 100) & ((gap == -100) | (gap == -99))))


def dtz_of_stored_many(stored: np.ndarray) -> np.ndarray:
    """:func:`~tablebase.generate.values.dtz_of_stored`'s DTZ of a ``dtz`` column."""
    s = stored.astype(np.int64)
    return np.where(s < 0, -np.maximum(-s - 1, 1), s)


def stored_dtz(tables: Path, key: str, stm: int) -> np.ndarray:
    """The ``dtz`` column of one side to move of a table, every index."""
    with TableReader(Path(tables) / key, key) as reader:
        return np.concatenate([reader.stored_dtz_slice(stm, sl) for sl in range(reader.scheme.num_slices)])


def check_exhaustive(tables: Path, key: str, oracle: Path = DEFAULT_ORACLE, *, with_dtz: bool = True,
                     max_report: int = 20) -> OracleResult:
    """Every legal position of ``key`` against Syzygy (WDL, and DTZ unless ``with_dtz`` is
    False), through :func:`syzygy_compiled.syzygy_view`."""
    from syzygy_compiled import syzygy_view

    result = OracleResult(key)
    values = load_table(Path(tables), key)
    view = syzygy_view(tables, key, oracle / "syzygy", with_dtz=with_dtz, own=values)
    for stm in (0, 1):
        stored = stored_dtz(tables, key, stm)
        legal = view.legal[stm]
        wdl, _, _ = to_wdl_dtm(values[stm])
        wdl50 = class_of_stored_dtz(stored)
        ok = (np.sign(view.wdl[stm]) == wdl) & (view.wdl[stm] == wdl50)
        dtz = dtz_of_stored_many(stored)
        if with_dtz:
            exact = legal & view.dtz_exact[stm]
            ok &= dtz_agrees_many(dtz, view.dtz[stm]) & (~exact | (dtz == view.dtz[stm]))
            result.dtz_rounded += int(np.count_nonzero(legal & (dtz != view.dtz[stm])))
            result.dtz_exact += int(np.count_nonzero(exact))
        result.checked += int(np.count_nonzero(legal))
        for x in np.flatnonzero(legal & ~ok).tolist():
            if len(result.mismatches) < max_report:
                ref = f" dtz={view.dtz[stm][x]}" if with_dtz else ""
                result.mismatches.append(f"{index_board(key, stm, x).fen()}: ours wdl={wdl[x]} wdl50={wdl50[x]} "
                                         f"dtz={dtz[x]}, syzygy wdl={view.wdl[stm][x]}{ref}")
            else:
                result.mismatches.append("")
    return result


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


def check_material(tables: Path, key: str, oracle: Path = DEFAULT_ORACLE, *, per_king_pair: int = 2, seed: int = 0,
                   max_report: int = 20, with_dtm: bool = True,
                   with_dtz: bool = True) -> OracleResult:
    scheme = IndexScheme.of(key)
    result = OracleResult(key)
    values = load_table(Path(tables), key)
    dtz_columns = [stored_dtz(tables, key, stm) for stm in (0, 1)]
    rng = np.random.default_rng(seed)
    with chess.syzygy.open_tablebase(str(oracle / "syzygy")) as syzygy, \
            chess.gaviota.open_tablebase(str(oracle / "gaviota")) as gaviota:
        for stm in (0, 1):
            val = values[stm]
            indices = sample_indices(scheme, val, per_king_pair, rng)
            wdl, dtm, _ = to_wdl_dtm(val[indices])
            stored = dtz_columns[stm][indices].tolist()
            for x, w, d, z in zip(indices.tolist(), wdl.tolist(), dtm.tolist(), stored):
                board = index_board(key, stm, x)
                ref_wdl = syzygy.probe_wdl(board)
                ref_dtm = gaviota.probe_dtm(board) if with_dtm else d
                wdl50, dtz = dtz_of_stored(z)
                ref_dtz = syzygy.probe_dtz(board) if with_dtz else dtz
                result.checked += 1
                if ref_dtz != dtz:
                    result.dtz_rounded += 1
                if np.sign(ref_wdl) != w or ref_dtm != d or ref_wdl != wdl50 or not dtz_agrees(dtz, ref_dtz):
                    if len(result.mismatches) < max_report:
                        result.mismatches.append(f"{board.fen()}: ours wdl={w} dtm={d} wdl50={wdl50} dtz={dtz}, "
                                                 f"syzygy wdl={ref_wdl} dtz={ref_dtz}, gaviota dtm={ref_dtm}")
                    else:
                        result.mismatches.append("")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("materials", nargs="*", help="material keys (default: every 3- and 4-piece table)")
    parser.add_argument("--tables", type=Path, default=ROOT / "data" / "tables")
    parser.add_argument("--oracle", type=Path, default=DEFAULT_ORACLE)
    parser.add_argument("--exhaustive", action="store_true",
                        help="also every legal position against Syzygy (compiled), beside the sample")
    parser.add_argument("--per-king-pair", type=int, default=2,
                        help="positions of the python-chess sample per king pair and side to move (0: no sample)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--wdl-only", action="store_true",
                        help="compare WDL with Syzygy only (5-piece tables: no 5-piece DTZ or Gaviota files are shipped)")
    args = parser.parse_args(argv)
    requested = args.materials or all_materials(3) + all_materials(4)
    bad = 0
    total = 0
    for key in [k for k in dependency_order(requested) if k in requested]:
        results = []
        if args.per_king_pair > 0:
            results.append(("sample", check_material(args.tables, key, args.oracle, per_king_pair=args.per_king_pair,
                                                     seed=args.seed, with_dtm=not args.wdl_only,
                                                     with_dtz=not args.wdl_only)))
        if args.exhaustive:
            results.append(("every position", check_exhaustive(args.tables, key, args.oracle,
                                                               with_dtz=not args.wdl_only)))
        for what, r in results:
            total += r.checked
            bad += len(r.mismatches)
            exact = f", exact by construction {r.dtz_exact}" if r.dtz_exact else ""
            print(f"{key:8} {what:14} checked {r.checked:11d}  mismatches {len(r.mismatches)}  "
                  f"syzygy dtz rounded {r.dtz_rounded}{exact}", flush=True)
            for line in r.mismatches:
                if line:
                    print("   ", line)
    print(f"total: checked {total}, mismatches {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
