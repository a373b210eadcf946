"""Move and un-move generation throughput, one core, beside python-chess.

    python benchmarks/movegen.py [positions]

For KQRvKR and KRPvKR, times ``successor_lists`` and ``predecessor_lists`` over a
contiguous run of indices from the middle of the table (both sides to move, the JIT
warmed first), and python-chess's ``list(board.legal_moves)`` on a sample of the
legal positions of the same run. The kernels are serial: one core. Rates are per legal position (invalid and illegal
indices cost time but are not counted); the ratio compares forward moves.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from tablebase.endgame import ExitMap, IndexScheme, index_board, predecessor_lists, successor_lists

PYCHESS_SAMPLE = 3000


def best_of(repeat: int, fn):
    """The fastest of ``repeat`` runs, in seconds, and the last result."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def bench(key: str, positions: int) -> None:
    scheme = IndexScheme.of(key)
    exits = ExitMap.of(scheme.material)
    args = (exits.exit_id, exits.exit_flip, exits.exit_perm, exits.subdesc)
    lo = scheme.num_king_pairs // 2 * scheme.positions_per_king_pair
    hi = lo + positions
    for stm in (0, 1):
        successor_lists(scheme.desc, stm, lo, lo + 100, *args)  # compile or load the JIT cache
        predecessor_lists(scheme.desc, stm, lo, lo + 100)
        t_fwd, (indptr, _, _, targets, flags) = best_of(3, lambda: successor_lists(scheme.desc, stm, lo, hi, *args))
        t_back, (back_ptr, _) = best_of(3, lambda: predecessor_lists(scheme.desc, stm, lo, hi))
        legal = np.flatnonzero(flags)
        rng = np.random.default_rng(0)
        boards = [index_board(key, stm, lo + int(i)) for i in rng.choice(legal, PYCHESS_SAMPLE, replace=False)]
        t_chess, _ = best_of(3, lambda: [list(b.legal_moves) for b in boards])
        ours, theirs = len(legal) / t_fwd, PYCHESS_SAMPLE / t_chess
        print(f"| {key} | {'wb'[stm]} | {hi - lo:,} | {len(legal):,} | {len(targets) / len(legal):.1f} "
              f"| {ours / 1e6:.2f} M/s | {len(legal) / t_back / 1e6:.2f} M/s | {theirs / 1e3:.0f} k/s "
              f"| {ours / theirs:.0f}x |")


def main() -> None:
    positions = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
    print("| table | to move | indices | legal | moves per position | forward moves | un-moves "
          "| python-chess legal_moves | forward / python-chess |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for key in ("KQRvKR", "KRPvKR"):
        bench(key, positions)


if __name__ == "__main__":
    main()
