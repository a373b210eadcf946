"""Board geometry built once as numpy tables: squares, symmetries, attacks, lines.

Squares are 0 = a1 ... 63 = h8 (python-chess numbering): file = sq & 7, rank = sq >> 3.
The numba kernels read these module-level arrays as compile-time constants.
"""

from __future__ import annotations

import numpy as np

KING_STEPS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]
KNIGHT_STEPS = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]
#: Ray directions: the first four are orthogonal (rook), the last four diagonal (bishop).
RAY_STEPS = [(0, 1), (1, 0), (0, -1), (-1, 0), (1, 1), (1, -1), (-1, -1), (-1, 1)]


def _on_board(f: int, r: int) -> bool:
    return 0 <= f < 8 and 0 <= r < 8


def _step_table(steps) -> np.ndarray:
    """For each square, the squares one step away (padded with -1)."""
    table = -np.ones((64, 8), dtype=np.int64)
    for sq in range(64):
        f, r = sq & 7, sq >> 3
        targets = [(f + df) + 8 * (r + dr) for df, dr in steps if _on_board(f + df, r + dr)]
        table[sq, :len(targets)] = targets
    return table


KING_TARGETS = _step_table(KING_STEPS)
KNIGHT_TARGETS = _step_table(KNIGHT_STEPS)

#: RAYS[sq, d, i]: the i-th square from sq in direction d, -1 past the edge.
RAYS = -np.ones((64, 8, 7), dtype=np.int64)
for _sq in range(64):
    for _d, (_df, _dr) in enumerate(RAY_STEPS):
        _f, _r = _sq & 7, _sq >> 3
        for _i in range(7):
            _f, _r = _f + _df, _r + _dr
            if not _on_board(_f, _r):
                break
            RAYS[_sq, _d, _i] = _f + 8 * _r


def _mask(squares) -> int:
    m = 0
    for s in squares:
        m |= 1 << int(s)
    return m


KING_MASK = np.array([_mask(t for t in KING_TARGETS[s] if t >= 0) for s in range(64)], dtype=np.uint64)
KNIGHT_MASK = np.array([_mask(t for t in KNIGHT_TARGETS[s] if t >= 0) for s in range(64)], dtype=np.uint64)

#: BETWEEN[a, b]: squares strictly between a and b when they share a line, else 0.
#: LINE_KIND[a, b]: 1 if a and b share a rank or file, 2 if a diagonal, 0 otherwise.
BETWEEN = np.zeros((64, 64), dtype=np.uint64)
LINE_KIND = np.zeros((64, 64), dtype=np.int8)
for _a in range(64):
    for _d in range(8):
        _seen = []
        for _i in range(7):
            _b = RAYS[_a, _d, _i]
            if _b < 0:
                break
            BETWEEN[_a, _b] = np.uint64(_mask(_seen))
            LINE_KIND[_a, _b] = 1 if _d < 4 else 2
            _seen.append(_b)

#: PAWN_ATTACKS[colour, sq]: squares a pawn of that colour on sq attacks.
PAWN_ATTACK_MASK = np.zeros((2, 64), dtype=np.uint64)
for _sq in range(64):
    _f, _r = _sq & 7, _sq >> 3
    for _colour, _dr in ((0, 1), (1, -1)):
        PAWN_ATTACK_MASK[_colour, _sq] = np.uint64(_mask(
            (_f + _df) + 8 * (_r + _dr) for _df in (-1, 1) if _on_board(_f + _df, _r + _dr)))


def _transform(t: int, sq: int) -> int:
    """The 8 symmetries of the square: bit 0 mirrors files, bit 1 mirrors ranks, bit 2
    swaps files and ranks (applied last)."""
    f, r = sq & 7, sq >> 3
    if t & 1:
        f = 7 - f
    if t & 2:
        r = 7 - r
    if t & 4:
        f, r = r, f
    return f + 8 * r


SYMMETRY = np.array([[_transform(t, s) for s in range(64)] for t in range(8)], dtype=np.int64)
DIAGONAL_FLIP = SYMMETRY[4]


def in_triangle(sq: int) -> bool:
    """a1-d1-d4: the white king's squares in pawnless tables."""
    f, r = sq & 7, sq >> 3
    return f <= 3 and r <= f


#: TRIANGLE_SYMMETRY[sq]: a symmetry that brings sq into the a1-d1-d4 triangle.
TRIANGLE_SYMMETRY = np.array([next(t for t in range(8) if in_triangle(_transform(t, s))) for s in range(64)],
                             dtype=np.int64)
ON_DIAGONAL = np.array([(s & 7) == (s >> 3) for s in range(64)], dtype=np.bool_)
#: On a1-h8 or a8-h1: the squares a symmetry other than the identity can fix.
ON_LONG_DIAGONAL = np.array([(s & 7) == (s >> 3) or (s & 7) + (s >> 3) == 7 for s in range(64)], dtype=np.bool_)
ABOVE_DIAGONAL = np.array([(s >> 3) > (s & 7) for s in range(64)], dtype=np.bool_)
