"""WinTree on chess: nodes per second, and what each move ordering and closing cycles do to the nodes searched.

    python -m benchmarks.solve [--tables DIR] [--positions N] [--seed S] [--max-nodes N]

The positions are a seeded sample of legal KQvKR and KPvK positions (the search runs
over the material's positions with its own table hidden, the sub-tables answering), the
same for every ordering. Each position is searched for both players with
:func:`tablebase.online.prove` (plain WinTree and iterative deepening) and, apart,
with plain WinTree alone, each with cycles closed (the default) and as in the paper.
Nodes and speed are printed as ratios against the natural (move generator) order of the
same kind measured in the same run; "solved" counts the searches that finished within
the budget (fewer nodes for more solved searches is the better order). A last table
compares closing cycles with the paper's search, per order, as a ratio of nodes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tablebase.online import ORDERS, SearchGraph, pack, prove, sample_positions
from tablebase.probe import open_tablebase

ROOT = Path(__file__).resolve().parents[1]


def run(tb, material: str, positions: list[tuple[int, int]], order: str, max_nodes: int,
        deepen: bool, close_cycles: bool) -> tuple[int, float, int]:
    """(nodes, seconds, searches finished) over every position and both players."""
    graph = SearchGraph(tb, material)
    nodes, solved = 0, 0
    t0 = time.perf_counter()
    for stm, idx in positions:
        for g in (1, -1):
            proof = prove(graph, g, pack(stm, idx), order, max_nodes, deepen=deepen, close_cycles=close_cycles)
            nodes += proof.nodes
            solved += proof.finished
    return nodes, time.perf_counter() - t0, solved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=Path, default=ROOT / "data" / "test-tables")
    parser.add_argument("--positions", type=int, default=12, help="positions per material (default 12)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-nodes", type=int, default=20_000, help="budget of each search (default 20,000)")
    args = parser.parse_args()
    with open_tablebase(args.tables) as tb:
        for material in ("KQvKR", "KPvK"):
            positions = sample_positions(tb, material, args.positions, args.seed)
            closed_vs_paper = {}
            for deepen in (False, True):
                for close_cycles in (True, False):
                    what = "WinTree and iterative deepening" if deepen else "plain WinTree"
                    how = "cycles closed" if close_cycles else "as in the paper"
                    print(f"{material}: {len(positions)} positions x 2 players, {what}, {how}, budget "
                          f"{args.max_nodes:,d} nodes a search")
                    print(f"  {'order':22} {'solved':>8} {'nodes':>10} {'vs natural':>10} {'nodes/s':>9} "
                          f"{'vs natural':>10}")
                    base = None
                    for order in ORDERS:
                        nodes, seconds, solved = run(tb, material, positions, order, args.max_nodes, deepen,
                                                     close_cycles)
                        rate = nodes / seconds
                        if base is None:
                            base = (nodes, rate)
                        closed_vs_paper.setdefault((deepen, order), []).append((nodes, solved))
                        print(f"  {order:22} {solved:4d}/{2 * len(positions):<3d} {nodes:10,d} "
                              f"{nodes / base[0]:9.2f}x {rate:9,.0f} {rate / base[1]:9.2f}x")
            print(f"{material}: closing cycles vs the paper's search (nodes; searches solved, closed / paper)")
            for (deepen, order), ((closed, solved_closed), (paper, solved_paper)) in closed_vs_paper.items():
                what = "with deepening" if deepen else "plain"
                print(f"  {what:15} {order:22} {closed / paper:6.2f}x   {solved_closed}/{solved_paper}")


if __name__ == "__main__":
    main()
