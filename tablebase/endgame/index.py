"""The index: ``index <-> placement`` for a material and a side to move.

This module owns that contract. An index is ``kk * R + rest``: ``kk`` numbers the legal,
canonical king pairs (462 pawnless with the white king in the a1-d1-d4 triangle; 1806 with
pawns, white king on files a-d), and ``rest`` is a mixed-radix number over the groups of
identical pieces, each group placed as a combination (colex rank) of 64 squares, or of the
48 squares of ranks 2-7 for pawns. The last group varies fastest.

A *slice* is a contiguous range of king pairs, so a slice's indices are contiguous too.

Some indices are not positions: two pieces on one square, or (pawnless, both kings on the
long diagonal) the mirror image across that diagonal of a smaller index. :func:`decode`
reports them as invalid, and they are stored like illegal positions.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numba import njit

from .board import ABOVE_DIAGONAL, ON_DIAGONAL, SYMMETRY, TRIANGLE_SYMMETRY, in_triangle
from .material import PAWN, Material, normalize_key

# Layout of a scheme descriptor: one int64 array the kernels read.
D_N, D_PAWNFUL, D_NGROUPS, D_R, D_NKK, D_SIZE = 0, 1, 2, 3, 4, 5
D_TYPE, D_COLOUR, D_GROUP = 8, 16, 24  # 8 slots each; groups: 4 ints (start, count, is_pawn, mult)
D_SLOT_GROUP = 56  # 8 slots: the group of each non-king slot
DESC_LEN = 64

#: The decorator of the kernels that allocate nothing (most of this module and of movegen):
#: without numba's reference counting (NRT), a call no longer pays two atomic operations
#: per array argument, which cost more than a short kernel's work.
leaf = njit(cache=True, _nrt=False)

BINOM = np.zeros((65, 9), dtype=np.int64)
for _n in range(65):
    BINOM[_n, 0] = 1
    for _k in range(1, 9):
        BINOM[_n, _k] = 0 if _n == 0 else BINOM[_n - 1, _k - 1] + BINOM[_n - 1, _k]


def _king_pairs(pawnful: bool) -> np.ndarray:
    pairs = []
    for wk in range(64):
        if pawnful:
            if (wk & 7) > 3:
                continue
        elif not in_triangle(wk):
            continue
        for bk in range(64):
            if max(abs((wk & 7) - (bk & 7)), abs((wk >> 3) - (bk >> 3))) <= 1:
                continue
            if not pawnful and ON_DIAGONAL[wk] and ABOVE_DIAGONAL[bk]:
                continue
            pairs.append((wk, bk))
    return np.array(pairs, dtype=np.int64)


KK_SQUARES = (_king_pairs(False), _king_pairs(True))  # [pawnful] -> (n_kk, 2)
KK_INDEX = np.full((2, 64 * 64), -1, dtype=np.int64)
for _p in range(2):
    for _i, (_wk, _bk) in enumerate(KK_SQUARES[_p]):
        KK_INDEX[_p, _wk * 64 + _bk] = _i
KK_SQUARES_ALL = np.zeros((2, 1806, 2), dtype=np.int64)
KK_SQUARES_ALL[0, :462] = KK_SQUARES[0]
KK_SQUARES_ALL[1] = KK_SQUARES[1]
assert len(KK_SQUARES[0]) == 462 and len(KK_SQUARES[1]) == 1806


def _king_pair_table() -> np.ndarray:
    """What :func:`encode` makes of kings standing on ``wk``/``bk`` (any orientation), at
    ``[pawnful, wk * 64 + bk]``: -1 where the kings touch, else ``16 * kk + t`` for the
    king pair ``kk`` and the symmetry ``t & 7`` applied to every piece, where ``t & 8``
    says both kings end on the long diagonal (pawnless: the rest is then the smaller of
    the one under that symmetry and the one under that symmetry followed by the flip
    across the diagonal, ``(t & 7) ^ 4``). Small entries: one load, from a table that
    stays in the L1 cache."""
    table = np.full((2, 64 * 64), -1, dtype=np.int16)
    for wk in range(64):
        for bk in range(64):
            pair = wk * 64 + bk
            t = int((wk & 7) > 3)
            kk = KK_INDEX[1, SYMMETRY[t, wk] * 64 + SYMMETRY[t, bk]]
            if kk >= 0:
                table[1, pair] = 16 * kk + t
            t = int(TRIANGLE_SYMMETRY[wk])
            w, b = SYMMETRY[t, wk], SYMMETRY[t, bk]
            if ON_DIAGONAL[w] and ABOVE_DIAGONAL[b]:
                t ^= 4
                w, b = SYMMETRY[t, wk], SYMMETRY[t, bk]
            kk = KK_INDEX[0, w * 64 + b]
            if kk >= 0:
                table[0, pair] = 16 * kk + t + 8 * int(ON_DIAGONAL[w] and ON_DIAGONAL[b])
    return table


KING_PAIR = _king_pair_table()


def make_descriptor(material: Material) -> np.ndarray:
    """The int64 descriptor of a material's index scheme, as the kernels read it."""
    slots = material.pieces()
    n = len(slots)
    desc = np.zeros(DESC_LEN, dtype=np.int64)
    desc[D_N] = n
    desc[D_PAWNFUL] = int(material.has_pawns)
    for i, (colour, ptype) in enumerate(slots):
        desc[D_TYPE + i] = ptype
        desc[D_COLOUR + i] = colour
    groups = []
    i = 2
    while i < n:
        j = i
        while j < n and slots[j] == slots[i]:
            j += 1
        groups.append((i, j - i, int(slots[i][1] == PAWN)))
        i = j
    radix = [int(BINOM[48 if pawn else 64, count]) for _, count, pawn in groups]
    mult = 1
    for g in range(len(groups) - 1, -1, -1):
        start, count, pawn = groups[g]
        desc[D_GROUP + 4 * g: D_GROUP + 4 * g + 4] = (start, count, pawn, mult)
        desc[D_SLOT_GROUP + start: D_SLOT_GROUP + start + count] = g
        mult *= radix[g]
    desc[D_NGROUPS] = len(groups)
    desc[D_R] = mult
    desc[D_NKK] = len(KK_SQUARES[int(material.has_pawns)])
    desc[D_SIZE] = desc[D_NKK] * mult
    return desc


@njit(cache=True, inline="always")
def _group_rank(desc, sq, g):
    """Combination rank of group ``g``'s squares (in any order)."""
    base = D_GROUP + 4 * g
    start, count, pawn = desc[base], desc[base + 1], desc[base + 2]
    off = 8 if pawn else 0
    if count == 1:
        return sq[start] - off
    if count == 2:
        a, b = sq[start] - off, sq[start + 1] - off
        if a > b:
            a, b = b, a
        return BINOM[a, 1] + BINOM[b, 2]
    # Colex rank of a small set: each square's binomial is indexed by how many of the
    # group's squares lie below it.
    r = 0
    for x in range(count):
        s = sq[start + x] - off
        k = 1
        for y in range(count):
            if sq[start + y] - off < s:
                k += 1
        r += BINOM[s, k]
    return r


@njit(cache=True, inline="always")
def rank_rest(desc, sq):
    """Mixed-radix rank of the non-king pieces; sq is already in canonical orientation."""
    rest = 0
    for g in range(desc[D_NGROUPS]):
        rest += _group_rank(desc, sq, g) * desc[D_GROUP + 4 * g + 3]
    return rest


@njit(cache=True, inline="always")
def rest_under(desc, sq, t, tmp):
    """The rest of the index of ``sq`` with symmetry ``t`` applied to every piece (the
    kings' squares do not matter); ``tmp`` is scratch space like :func:`encode`'s."""
    if t != 0:
        for i in range(2, desc[D_N]):
            tmp[i] = SYMMETRY[t, sq[i]]
        sq = tmp
    return rank_rest(desc, sq)


@leaf
def encode(desc, sq, tmp):
    """Index of the placement ``sq`` (slot order, any orientation, identical pieces in any
    order); -1 when the kings touch or a pawn stands on rank 1 or 8. ``tmp`` is scratch
    space of at least ``desc[D_N]`` int64."""
    if desc[D_PAWNFUL]:
        for i in range(2, desc[D_N]):
            if desc[D_TYPE + i] == PAWN and (sq[i] < 8 or sq[i] > 55):
                return -1
    if KING_PAIR[desc[D_PAWNFUL], sq[0] * 64 + sq[1]] < 0:
        return -1
    return index_of(desc, sq, tmp)


@njit(cache=True, inline="always")
def index_of(desc, sq, tmp):
    """:func:`encode` of a placement known to be a position (kings apart, pawns on ranks
    2 to 7), inlined where a call would cost more: it passes each array as seven words."""
    pair = KING_PAIR[desc[D_PAWNFUL], sq[0] * 64 + sq[1]]
    rest = rest_under(desc, sq, pair & 7, tmp)
    if pair & 8:
        rest = min(rest, rest_under(desc, sq, (pair & 7) ^ 4, tmp))
    return (pair >> 4) * desc[D_R] + rest


@njit(cache=True, inline="always")
def king_move_kk(pawnful, wk, bk):
    """The king pair of kings ``wk``/``bk`` as they stand, or -1 where the position's
    orientation would change (or, pawnless, both kings stand on the long diagonal): a king
    move that keeps the orientation keeps the rest of the index, ``idx % desc[D_R]``."""
    pair = KING_PAIR[pawnful, wk * 64 + bk]
    return pair >> 4 if (pair & 15) == 0 else -1


@leaf
def encode_after_move(desc, sq, x, i, frm, tmp):
    """Index of ``sq``, where ``sq`` was the decoded placement of index ``x`` before slot
    ``i`` left square ``frm``. A move of a piece other than a king keeps the king pair and
    hence the orientation, so the index changes by arithmetic on one group, and a king
    move that keeps the orientation keeps the rest; other king moves, the
    diagonal-symmetric king pairs, and ``x < 0`` (``sq`` not decoded) re-encode."""
    if x < 0 or (not desc[D_PAWNFUL] and ON_DIAGONAL[sq[0]] and ON_DIAGONAL[sq[1]]):
        return encode(desc, sq, tmp)
    if i < 2:
        kk = king_move_kk(desc[D_PAWNFUL], sq[0], sq[1])
        if kk < 0:
            return encode(desc, sq, tmp)
        return kk * desc[D_R] + x % desc[D_R]
    g = desc[D_SLOT_GROUP + i]
    base = D_GROUP + 4 * g
    if desc[base + 1] == 1:
        return x + (sq[i] - frm) * desc[base + 3]
    new = _group_rank(desc, sq, g)
    to = sq[i]
    sq[i] = frm
    old = _group_rank(desc, sq, g)
    sq[i] = to
    return x + (new - old) * desc[base + 3]


@leaf
def decode(desc, idx, sq):
    """Fill ``sq`` with the placement of ``idx`` (canonical orientation, identical pieces
    ascending)."""
    r_size = desc[D_R]
    kk = idx // r_size
    rest = idx - kk * r_size
    pawnful = desc[D_PAWNFUL]
    sq[0] = KK_SQUARES_ALL[pawnful, kk, 0]
    sq[1] = KK_SQUARES_ALL[pawnful, kk, 1]
    for g in range(desc[D_NGROUPS]):
        base = D_GROUP + 4 * g
        start, count, pawn, mult = desc[base], desc[base + 1], desc[base + 2], desc[base + 3]
        r = rest // mult
        rest -= r * mult
        off = 8 if pawn else 0
        if count == 1:
            sq[start] = r + off
            continue
        for k in range(count, 0, -1):
            c = k - 1
            while BINOM[c + 1, k] <= r:
                c += 1
            r -= BINOM[c, k]
            sq[start + k - 1] = c + off


@njit(cache=True, inline="always")
def next_placement(desc, sq):
    """Turn ``sq``, the placement of an index as :func:`decode` gives it, into that of
    the next index, as an odometer: the last group's combination steps to its colex
    successor, wrapping into the group before it, and past the last group's wrap into the
    next king pair. Returns whether the kings moved (a new king pair)."""
    for g in range(desc[D_NGROUPS] - 1, -1, -1):
        base = D_GROUP + 4 * g
        start, count, pawn = desc[base], desc[base + 1], desc[base + 2]
        off = 8 if pawn else 0
        j = 0
        while j < count - 1 and sq[start + j] + 1 == sq[start + j + 1]:
            j += 1
        if j < count - 1 or sq[start + j] + 1 < (56 if pawn else 64):
            sq[start + j] += 1
            for y in range(j):
                sq[start + y] = off + y
            return False
        for y in range(count):
            sq[start + y] = off + y
    pawnful = desc[D_PAWNFUL]
    kk = KK_INDEX[pawnful, sq[0] * 64 + sq[1]] + 1
    sq[0] = KK_SQUARES_ALL[pawnful, kk, 0]
    sq[1] = KK_SQUARES_ALL[pawnful, kk, 1]
    return True


@leaf
def is_valid(desc, idx, sq, tmp):
    """Whether the decoded ``sq`` of ``idx`` is a placement this index stands for: no two
    pieces on one square, and the canonical one of a diagonal-symmetric pair."""
    n = desc[D_N]
    seen = np.uint64(0)
    for i in range(n):
        bit = np.uint64(1) << np.uint64(sq[i])
        if seen & bit:
            return False
        seen |= bit
    if not desc[D_PAWNFUL] and ON_DIAGONAL[sq[0]] and ON_DIAGONAL[sq[1]]:
        return encode(desc, sq, tmp) == idx
    return True


@njit(cache=True)
def encode_many(desc, squares):
    n = squares.shape[0]
    out = np.empty(n, dtype=np.int64)
    tmp = np.empty(16, dtype=np.int64)
    for i in range(n):
        out[i] = encode(desc, squares[i], tmp)
    return out


@njit(cache=True)
def decode_many(desc, indices):
    n = indices.shape[0]
    out = np.empty((n, desc[D_N]), dtype=np.int64)
    valid = np.empty(n, dtype=np.bool_)
    tmp = np.empty(16, dtype=np.int64)
    for i in range(n):
        decode(desc, indices[i], out[i])
        valid[i] = is_valid(desc, indices[i], out[i], tmp)
    return out, valid


#: Positions per slice the scheme aims for: large enough that a task's work dwarfs Ray's
#: ~5 ms overhead, small enough that many slices keep every worker busy.
SLICE_TARGET = 1 << 21

#: Slices are the unit of distribution, so a table cut into fewer than MIN_SLICES slices
#: gets smaller ones, down to MIN_SLICE positions: a 4-piece table still spreads over workers.
MIN_SLICES = 8
MIN_SLICE = 1 << 16


@dataclass(frozen=True)
class IndexScheme:
    """The index of one material (the same for both sides to move).

    >>> s = IndexScheme.of("KQvKR")
    >>> s.size, s.num_king_pairs, s.positions_per_king_pair
    (1892352, 462, 4096)
    """

    material: Material
    desc: np.ndarray

    @classmethod
    def of(cls, material: Material | str) -> "IndexScheme":
        """The scheme of a material (built once per material and shared: read-only)."""
        return _scheme(material.key if isinstance(material, Material) else normalize_key(material))

    @property
    def size(self) -> int:
        """Indices per side to move."""
        return int(self.desc[D_SIZE])

    @property
    def num_king_pairs(self) -> int:
        return int(self.desc[D_NKK])

    @property
    def positions_per_king_pair(self) -> int:
        return int(self.desc[D_R])

    @property
    def king_pairs_per_slice(self) -> int:
        r, n = self.positions_per_king_pair, self.num_king_pairs
        return min(max(1, SLICE_TARGET // r), max(-(-n // MIN_SLICES), -(-MIN_SLICE // r)))

    @property
    def num_slices(self) -> int:
        return -(-self.num_king_pairs // self.king_pairs_per_slice)

    def slice_range(self, s: int) -> tuple[int, int]:
        """Index range ``[start, stop)`` of slice ``s``."""
        if not 0 <= s < self.num_slices:
            raise IndexError(f"{self.material}: slice {s} out of range 0..{self.num_slices - 1}")
        k = self.king_pairs_per_slice
        r = self.positions_per_king_pair
        return s * k * r, min((s + 1) * k, self.num_king_pairs) * r

    @property
    def group_radices(self) -> tuple[int, ...]:
        """Placements of each group of identical pieces (a combination of 64 squares, or
        of the 48 pawn squares), slowest first: the axes of a king pair's indices."""
        d = self.desc
        return tuple(int(BINOM[48 if d[D_GROUP + 4 * g + 2] else 64, d[D_GROUP + 4 * g + 1]])
                     for g in range(int(d[D_NGROUPS])))

    def slice_shape(self, s: int) -> tuple[int, ...]:
        """Slice ``s``'s indices as a box: its king pairs, then :attr:`group_radices`
        (index ``lo + i`` is the box's element ``i`` in C order).

        >>> IndexScheme.of("KRvKP").slice_shape(0)
        (226, 64, 48)
        """
        lo, hi = self.slice_range(s)
        return ((hi - lo) // self.positions_per_king_pair, *self.group_radices)

    def slice_of(self, indices: np.ndarray) -> np.ndarray:
        return np.asarray(indices) // (self.king_pairs_per_slice * self.positions_per_king_pair)

    def encode(self, squares: np.ndarray) -> np.ndarray:
        """Indices of placements (rows of slot squares); -1 where kings touch."""
        return encode_many(self.desc, np.ascontiguousarray(squares, dtype=np.int64))

    def decode(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Placements of indices (rows of slot squares) and whether each index is a valid placement."""
        return decode_many(self.desc, np.ascontiguousarray(indices, dtype=np.int64))


@functools.lru_cache(maxsize=None)
def _scheme(key: str) -> IndexScheme:
    return IndexScheme(Material.parse(key), make_descriptor(Material.parse(key)))
