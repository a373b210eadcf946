"""WinTree on chess: the compiled search against its Python twin, and what each move order and closing cycles do.

    python -m benchmarks.solve [--tables DIR] [--positions N] [--seed S] [--max-nodes N] [--python-nodes N]

The positions are a seeded sample of legal KQvKR and KPvK positions (the search runs
over the material's positions with its own table hidden, the sub-tables answering).
Each position is searched for both players with :func:`tablebase.online.prove` (plain
WinTree and iterative deepening, cycles closed).

1. Compiled against Python, same positions, same order (heuristic), measured in the
   same run: nodes per second of each (each counts its own expansions: the compiled
   search positions, the Python search every vertex, table leaves and depth-chain
   vertices too, which flatters the Python rate), their ratio, and the time each took
   for the searches both finished within the Python budget (``--python-nodes``, the
   Python search being slow).
2. The compiled search per move order, with cycles closed and as in the paper, with
   the budget ``--max-nodes``: searches solved, nodes and nodes per second, as ratios
   against the natural order. Fewer nodes for more solved searches is the better order.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tablebase.online import ORDERS, SearchGraph, make_searches, pack, prove, sample_positions
from tablebase.probe import open_tablebase

ROOT = Path(__file__).resolve().parents[1]


def run(tb, material: str, positions: list[tuple[int, int]], order: str, max_nodes: int, close_cycles: bool,
        engine: str) -> list[tuple[bool, int, float]]:
    """(finished, nodes, seconds) of each search: every position, both players."""
    graph = SearchGraph(tb, material)
    out = []
    for stm, idx in positions:
        searches = make_searches(graph, order, close_cycles, engine)
        for g in (1, -1):
            t0 = time.process_time()
            proof = prove(graph, g, pack(stm, idx), order, max_nodes, close_cycles=close_cycles, engine=engine,
                          search=searches[g])
            out.append((proof.finished, proof.nodes, time.process_time() - t0))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=Path, default=ROOT / "data" / "test-tables")
    parser.add_argument("--positions", type=int, default=12, help="positions per material (default 12)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-nodes", type=int, default=1_000_000,
                        help="budget of each compiled search (default 1,000,000)")
    parser.add_argument("--python-nodes", type=int, default=20_000,
                        help="budget of each search in the comparison with Python (default 20,000)")
    args = parser.parse_args()
    with open_tablebase(args.tables) as tb:
        for material in ("KQvKR", "KPvK"):
            positions = sample_positions(tb, material, args.positions, args.seed)
            # Loads (or compiles) every kernel before the timed runs: searches that grow
            # their tables and stop on the budget, as the timed ones do.
            run(tb, material, positions[:3], "heuristic", 30_000, True, "compiled")
            searches = 2 * len(positions)
            print(f"{material}: {len(positions)} positions x 2 players, plain WinTree and iterative deepening, "
                  f"cycles closed")
            py = run(tb, material, positions, "heuristic", args.python_nodes, True, "python")
            co = run(tb, material, positions, "heuristic", args.python_nodes, True, "compiled")
            both = [k for k in range(searches) if py[k][0] and co[k][0]]
            print(f"  {'engine':9} {'budget':>9} {'solved':>8} {'nodes':>11} {'seconds':>8} {'nodes/s':>11} "
                  f"{'s, both solved':>15}")
            rates = {}
            for name, res in (("python", py), ("compiled", co)):
                nodes, seconds = sum(r[1] for r in res), sum(r[2] for r in res)
                rates[name] = nodes / seconds
                print(f"  {name:9} {args.python_nodes:9,d} {sum(r[0] for r in res):4d}/{searches:<3d} {nodes:11,d} "
                      f"{seconds:8.2f} {rates[name]:11,.0f} {sum(res[k][2] for k in both):15.3f}")
            same = sum(py[k][2] for k in both) / max(1e-9, sum(co[k][2] for k in both))
            print(f"  compiled / python: {rates['compiled'] / rates['python']:.1f}x nodes/s; "
                  f"{same:.1f}x faster on the {len(both)} searches both solved")
            full = run(tb, material, positions, "heuristic", args.max_nodes, True, "compiled")
            nodes, seconds = sum(r[1] for r in full), sum(r[2] for r in full)
            print(f"  compiled, budget {args.max_nodes:,d}: solved {sum(r[0] for r in full)}/{searches}, "
                  f"{nodes:,d} nodes in {seconds:.2f} s = {nodes / seconds:,.0f} nodes/s "
                  f"({nodes / seconds / rates['python']:.0f}x python's rate)")
            for close_cycles in (True, False):
                how = "cycles closed" if close_cycles else "as in the paper"
                print(f"{material}: compiled, {how}, budget {args.max_nodes:,d} nodes a search")
                print(f"  {'order':22} {'solved':>8} {'nodes':>12} {'vs natural':>10} {'nodes/s':>11} {'vs natural':>10}")
                base = None
                for order in ORDERS:
                    res = run(tb, material, positions, order, args.max_nodes, close_cycles, "compiled")
                    nodes, seconds = sum(r[1] for r in res), sum(r[2] for r in res)
                    rate = nodes / seconds
                    if base is None:
                        base = (nodes, rate)
                    print(f"  {order:22} {sum(r[0] for r in res):4d}/{searches:<3d} {nodes:12,d} "
                          f"{nodes / base[0]:9.2f}x {rate:11,.0f} {rate / base[1]:9.2f}x")


if __name__ == "__main__":
    main()
