"""Times ``retrograde`` on a random game graph of 1M vertices / 10M arcs, next to the
reference fixed point on a 20k / 200k graph.

    python -m benchmarks.solve_explicit [--vertices N] [--arcs E] [--seed S]

The random graphs are bipartite (White-to-move and Black-to-move halves, arcs only
across), with 10% sinks of random value and the remaining arcs spread over the other
vertices with heavy-tailed weights, so that many vertices have few moves (forced
play, long wins) and a few have many.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tablebase.game import ExplicitGame
from tablebase.solve import INF, reference_solution, retrograde


def random_csr(vertices: int, arcs: int, seed: int, sink_fraction: float = 0.1) -> tuple[np.ndarray, ...]:
    """CSR arrays ``(indptr, indices, turn, win)`` of a random valid game graph with
    exactly ``arcs`` arcs, built without Python loops."""
    rng = np.random.default_rng(seed)
    half = vertices // 2
    turn = np.where(np.arange(vertices) < half, 1, -1).astype(np.int8)
    sink = rng.random(vertices) < sink_fraction
    win = rng.integers(-1, 2, vertices).astype(np.int8)
    movers = np.flatnonzero(~sink)
    weights = rng.pareto(1.5, movers.size) + 0.05
    extra = rng.choice(movers, arcs - vertices, p=weights / weights.sum())
    degree = 1 + np.bincount(extra, minlength=vertices)
    indptr = np.zeros(vertices + 1, np.int64)
    np.cumsum(degree, out=indptr[1:])
    source = np.repeat(np.arange(vertices, dtype=np.int32), degree)
    white = source < half
    indices = np.where(white, half + rng.integers(0, vertices - half, arcs), rng.integers(0, half, arcs))
    indices[indptr[:-1][sink]] = np.flatnonzero(sink)
    return indptr, indices.astype(np.int32), turn, win


def random_game(vertices: int, arcs: int, seed: int) -> ExplicitGame:
    return ExplicitGame.from_csr(*random_csr(vertices, arcs, seed))


def _best_of(repeats: int, function, *args):
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        result = function(*args)
        times.append(time.perf_counter() - begin)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vertices", type=int, default=1_000_000)
    parser.add_argument("--arcs", type=int, default=10_000_000)
    parser.add_argument("--reference-vertices", type=int, default=20_000)
    parser.add_argument("--reference-arcs", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()

    arrays = random_csr(args.vertices, args.arcs, args.seed)
    validate, game = _best_of(3, ExplicitGame.from_csr, *arrays)
    print(f"graph: {game.num_vertices:,} vertices, {game.num_arcs:,} arcs; "
          f"ExplicitGame.from_csr validated it in {validate:.3f} s")

    retrograde(random_game(1000, 10_000, args.seed))  # JIT warm-up (or cache load)
    fast, solution = _best_of(3, retrograde, game)
    counts = {value: int(np.count_nonzero(solution.eval == value)) for value in (1, 0, -1)}
    longest = max(int(solution.depth(g)[solution.depth(g) < INF].max(initial=0)) for g in (1, -1))
    print(f"retrograde: {fast:.3f} s, {game.num_arcs / fast / 1e6:.1f} M arcs/s (white wins {counts[1]:,}, "
          f"draws {counts[0]:,}, black wins {counts[-1]:,}; longest win {longest} plies)")

    small = random_game(args.reference_vertices, args.reference_arcs, args.seed)
    slow, reference = _best_of(1, reference_solution, small)
    small_fast, small_solution = _best_of(3, retrograde, small)
    assert np.array_equal(reference.eval, small_solution.eval)
    assert all(np.array_equal(reference.depth(g), small_solution.depth(g)) for g in (1, -1))
    print(f"reference: {slow:.3f} s on {small.num_vertices:,} vertices / {small.num_arcs:,} arcs, "
          f"{small.num_arcs / slow / 1e6:.2f} M arcs/s "
          f"(retrograde on the same graph: {small_fast * 1e3:.1f} ms, identical values)")
    print(f"throughput ratio retrograde / reference: {(game.num_arcs / fast) / (small.num_arcs / slow):.0f}x")


if __name__ == "__main__":
    main()
