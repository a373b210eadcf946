"""Move and un-move generation throughput, one core, beside python-chess.

    python benchmarks/movegen.py [positions]

For KQRvKR and KRPvKR, times the serial kernels (one core, JIT warmed first) over
``positions`` indices per side to move, taken as 6 contiguous runs starting at evenly
spaced king pairs, so that special king pairs (both kings on the long diagonal: 21 of
462, fully re-encoded) weigh as in the whole table:

* forward moves: ``successor_rows``, every legal move's target (table, side to move,
  index) and each index's flags, written into CSR arrays allocated once and reused from
  run to run, as a consumer walking slice after slice would;
* ``successor_lists``: the same output in fresh arrays per call (allocation, first-touch
  page faults and the final trim included);
* un-moves: ``predecessor_lists``;

and python-chess's ``list(board.legal_moves)`` on a sample of the legal positions of the
same runs. Times are CPU seconds of this process (best of 3), so other work on a busy
machine does not count. Rates are per legal position (invalid and illegal indices cost
time but are not counted); the ratios compare forward moves with python-chess.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from tablebase.endgame import ExitMap, IndexScheme, index_board, predecessor_lists, successor_lists
from tablebase.endgame.movegen import MAX_MOVES, successor_rows

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
    exit_map = exits.arrays
    per_kk = scheme.positions_per_king_pair
    starts = [(2 * j + 1) * scheme.num_king_pairs // (2 * RUNS) * per_kk for j in range(RUNS)]
    runs = [(lo, min(lo + positions // RUNS, scheme.size)) for lo in starts]
    for stm in (0, 1):
        successor_lists(scheme.desc, stm, 0, 100, exit_map)  # compile or load the JIT cache
        predecessor_lists(scheme.desc, stm, 0, 100)
        count = positions // RUNS
        indptr, flags = np.empty(count + 1, np.int64), np.empty(count, np.int8)
        cap = count * 64 + MAX_MOVES  # room for every run's moves: one call per run
        sub, side, idx = np.empty(cap, np.int64), np.empty(cap, np.int8), np.empty(cap, np.int64)
        t_fwd = t_lists = t_back = 0.0
        legal, moves = [], 0
        for lo, hi in runs:
            t, (x, k) = best_of(3, lambda: successor_rows(scheme.desc, stm, lo, hi, True, exit_map, indptr, flags, 0,
                                                          sub, side, idx))
            assert x == hi
            t_fwd += t
            t, lists = best_of(3, lambda: successor_lists(scheme.desc, stm, lo, hi, exit_map))
            t_lists += t
            assert np.array_equal(lists[3], idx[:k]) and np.array_equal(lists[4], flags[:hi - lo])
            t_back += best_of(3, lambda: predecessor_lists(scheme.desc, stm, lo, hi))[0]
            legal.append(lo + np.flatnonzero(flags[:hi - lo]))
            moves += k
        legal = np.concatenate(legal)
        rng = np.random.default_rng(0)
        boards = [index_board(key, stm, int(i)) for i in rng.choice(legal, PYCHESS_SAMPLE, replace=False)]
        t_chess, _ = best_of(3, lambda: [list(b.legal_moves) for b in boards])
        ours, fresh, theirs = len(legal) / t_fwd, len(legal) / t_lists, PYCHESS_SAMPLE / t_chess
        print(f"| {key} | {'wb'[stm]} | {sum(hi - lo for lo, hi in runs):,} | {len(legal):,} "
              f"| {moves / len(legal):.1f} | {ours / 1e6:.2f} M/s | {fresh / 1e6:.2f} M/s "
              f"| {len(legal) / t_back / 1e6:.2f} M/s | {theirs / 1e3:.0f} k/s | {ours / theirs:.0f}x "
              f"| {fresh / theirs:.0f}x |")


def main() -> None:
    positions = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
    print("| table | to move | indices | legal | moves per position | forward moves | successor_lists "
          "| un-moves | python-chess legal_moves | forward / python-chess | successor_lists / python-chess |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key in ("KQRvKR", "KRPvKR"):
        bench(key, positions)


if __name__ == "__main__":
    main()
