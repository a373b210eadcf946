"""Move and un-move generation throughput, one core, beside python-chess.

    python benchmarks/movegen.py [positions]

For KQRvKR and KRPvKR, times ``successor_lists`` and ``predecessor_lists`` (serial
kernels: one core, JIT warmed first) over ``positions`` indices per side to move, taken
as 6 contiguous runs starting at evenly spaced king pairs, so that special king pairs
(both kings on the long diagonal: 21 of 462, fully re-encoded) weigh as in the whole
table; and python-chess's ``list(board.legal_moves)`` on a sample of the legal positions
of the same runs. Times are CPU seconds of this process (best of 3), so other work on a
busy machine does not count. Rates are per legal position (invalid and illegal indices
cost time but are not counted); the ratio compares forward moves.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from tablebase.endgame import ExitMap, IndexScheme, index_board, predecessor_lists, successor_lists

RUNS = 6
PYCHESS_SAMPLE = 3000


def best_of(repeat: int, fn):
    """The fastest of ``repeat`` runs, in CPU seconds, and the last result."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        result = fn()
        best = min(best, time.process_time() - t)
    return best, result


def bench(key: str, positions: int) -> None:
    scheme = IndexScheme.of(key)
    exits = ExitMap.of(scheme.material)
    args = (exits.exit_id, exits.exit_flip, exits.exit_perm, exits.subdesc)
    per_kk = scheme.positions_per_king_pair
    starts = [(2 * j + 1) * scheme.num_king_pairs // (2 * RUNS) * per_kk for j in range(RUNS)]
    runs = [(lo, min(lo + positions // RUNS, scheme.size)) for lo in starts]
    for stm in (0, 1):
        successor_lists(scheme.desc, stm, 0, 100, *args)  # compile or load the JIT cache
        predecessor_lists(scheme.desc, stm, 0, 100)
        t_fwd = t_back = 0.0
        legal, moves = [], 0
        for lo, hi in runs:
            t, (_, _, _, targets, flags) = best_of(3, lambda: successor_lists(scheme.desc, stm, lo, hi, *args))
            t_fwd += t
            t_back += best_of(3, lambda: predecessor_lists(scheme.desc, stm, lo, hi))[0]
            legal.append(lo + np.flatnonzero(flags))
            moves += len(targets)
        legal = np.concatenate(legal)
        rng = np.random.default_rng(0)
        boards = [index_board(key, stm, int(i)) for i in rng.choice(legal, PYCHESS_SAMPLE, replace=False)]
        t_chess, _ = best_of(3, lambda: [list(b.legal_moves) for b in boards])
        ours, theirs = len(legal) / t_fwd, PYCHESS_SAMPLE / t_chess
        print(f"| {key} | {'wb'[stm]} | {sum(hi - lo for lo, hi in runs):,} | {len(legal):,} "
              f"| {moves / len(legal):.1f} | {ours / 1e6:.2f} M/s | {len(legal) / t_back / 1e6:.2f} M/s "
              f"| {theirs / 1e3:.0f} k/s | {ours / theirs:.0f}x |")


def main() -> None:
    positions = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
    print("| table | to move | indices | legal | moves per position | forward moves | un-moves "
          "| python-chess legal_moves | forward / python-chess |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for key in ("KQRvKR", "KRPvKR"):
        bench(key, positions)


if __name__ == "__main__":
    main()
