"""Compiled move and un-move generation over index slices.

The kernels work on a placement (``sq``: one square per slot, in the order of
:meth:`Material.pieces`) with ``board`` (slot on each square, -1 if empty) and ``occ``
(occupancy bits). Positions carry no castling rights and no en-passant square.

A forward move lands either in the same table (the other side's index) or, after a
capture or a promotion, in a sub-table: an *exit*, named by its sub-table id in the
material's :class:`ExitMap`.

Speed comes from doing per position what the old per-move tests did: legality from
masks (squares the opponent attacks, checkers, pinned pieces) computed once; target
indices by arithmetic on the index of the position (see ``encode_after_move``) rather
than by encoding, king moves included (a table gives the new king pair and its symmetry);
and, over a range, :func:`walk_to` steps from one index's placement to the next instead
of decoding each (decoding every index stays as its slow twin). The loop over a range
is one compiled function, its helpers inlined and without reference counting: numba
passes each array argument of a call as seven words, which cost more than the work of
a position (inlining costs compile time instead, once with the cache: some 30 s more).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
from numba.extending import intrinsic

from .board import (BETWEEN, DIAGONAL_FLIP, KING_MASK, KNIGHT_MASK, LINE_KIND, ON_DIAGONAL, ON_LONG_DIAGONAL,
                    PAWN_ATTACK_MASK, RAYS)
from .index import (D_COLOUR, D_GROUP, D_N, D_PAWNFUL, D_R, D_SLOT_GROUP, D_TYPE, DESC_LEN, KING_PAIR, decode,
                    encode, encode_after_move, index_of, is_valid, leaf, make_descriptor, next_placement, rank_rest,
                    rest_under)
from .material import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, Material, material_of_counts, PIECE_ORDER

SQ_BIT = np.array([1 << s for s in range(64)], dtype=np.uint64)
MAX_MOVES = 256
#: Markers of :func:`successors`' ``out_ep`` for moves that stay in the table (besides the
#: slot of a pawn whose double step allows an en-passant capture, and -1 for other moves).
KING_MOVE, PAWN_PUSH = -2, -3


class ExitArrays(NamedTuple):
    """An :class:`ExitMap`'s arrays, as the kernels take them: one ``exit_map`` argument."""

    exit_id: np.ndarray
    exit_flip: np.ndarray
    exit_perm: np.ndarray
    subdesc: np.ndarray


class Scratch(NamedTuple):
    """The scratch arrays of a loop over positions, one argument (:func:`scratch` makes
    them): a placement (``sq``), index arithmetic (``tmp``, ``sub_sq``), two boards, and
    two move lists (``o_*`` a position's successors, ``e_*`` those of a successor, such
    as an en-passant vertex's), with the in-table targets of one (``inside``, ``is_king``)."""

    sq: np.ndarray
    tmp: np.ndarray
    sub_sq: np.ndarray
    board: np.ndarray
    board2: np.ndarray
    o_sub: np.ndarray
    o_stm: np.ndarray
    o_idx: np.ndarray
    o_ep: np.ndarray
    e_sub: np.ndarray
    e_stm: np.ndarray
    e_idx: np.ndarray
    e_ep: np.ndarray
    inside: np.ndarray
    is_king: np.ndarray


@njit(cache=True)
def scratch():
    """A fresh :class:`Scratch` (boards empty: -1 on every square)."""
    lists = np.zeros((9, MAX_MOVES), dtype=np.int64)  # o_*, e_*, inside: rows of one block
    return Scratch(np.zeros(16, dtype=np.int64), np.zeros(16, dtype=np.int64), np.zeros(16, dtype=np.int64),
                   np.full(64, -1, dtype=np.int64), np.full(64, -1, dtype=np.int64),
                   lists[0], lists[1], lists[2], lists[3], lists[4], lists[5], lists[6], lists[7], lists[8],
                   np.zeros(MAX_MOVES, dtype=np.bool_))


@dataclass(frozen=True)
class ExitMap:
    """Where each capture or promotion of a material leads.

    ``exit_id[cap + 1, promo_slot + 1, promo_piece]`` is the sub-table id (index into
    ``subtables``) when the piece in slot ``cap`` is captured (-1: none) and the pawn in
    ``promo_slot`` promotes to ``promo_piece`` (0: no promotion, else Q=1 R=2 B=3 N=4);
    ``exit_flip`` says the sub-table holds it colour-flipped, and ``exit_perm[..., j]`` is
    the sub-table slot that slot ``j`` moves to.
    """

    material: Material
    subtables: list[Material]
    subdesc: np.ndarray
    exit_id: np.ndarray
    exit_flip: np.ndarray
    exit_perm: np.ndarray

    @classmethod
    def of(cls, material: Material) -> "ExitMap":
        """The exit map of a material (built once per material and shared: read-only)."""
        return _exit_map(material.key)

    @classmethod
    def _build(cls, material: Material) -> "ExitMap":
        slots = material.pieces()
        n = len(slots)
        subs = material.direct_subtables()
        sub_ids = {m.key: i for i, m in enumerate(subs)}
        exit_id = np.full((n + 1, n + 1, 5), -1, dtype=np.int64)
        exit_flip = np.zeros((n + 1, n + 1, 5), dtype=np.int64)
        exit_perm = np.full((n + 1, n + 1, 5, n), -1, dtype=np.int64)
        for cap in range(-1, n):
            if cap in (0, 1):
                continue
            for pslot in range(-1, n):
                if pslot >= 0 and (pslot == cap or slots[pslot][1] != PAWN):
                    continue
                for promo in ((0,) if pslot < 0 else (QUEEN, ROOK, BISHOP, KNIGHT)):
                    if cap < 0 and pslot < 0:
                        continue
                    if cap >= 0 and pslot >= 0 and (slots[cap][0] == slots[pslot][0] or slots[cap][1] == PAWN):
                        continue  # a pawn never captures its own side, nor a pawn when it promotes
                    remaining = [(j, slots[j][0], promo if j == pslot else slots[j][1]) for j in range(n) if j != cap]
                    sides = ["", ""]
                    for _, colour, ptype in remaining:
                        sides[colour] += PIECE_ORDER[ptype]
                    key = material_of_counts(sides[0], sides[1])
                    sub = Material.parse(key)
                    flip = (sub.white, sub.black) != ("".join(sorted(sides[0], key=PIECE_ORDER.index)),
                                                     "".join(sorted(sides[1], key=PIECE_ORDER.index)))
                    sub_slots = sub.pieces()
                    used = [False] * len(sub_slots)
                    for j, colour, ptype in remaining:
                        want = (colour ^ int(flip), ptype)
                        k = next(k for k, s in enumerate(sub_slots) if s == want and not used[k])
                        used[k] = True
                        exit_perm[cap + 1, pslot + 1, promo, j] = k
                    exit_id[cap + 1, pslot + 1, promo] = sub_ids[key]
                    exit_flip[cap + 1, pslot + 1, promo] = int(flip)
        subdesc = np.zeros((max(1, len(subs)), DESC_LEN), dtype=np.int64)
        for i, m in enumerate(subs):
            subdesc[i] = make_descriptor(m)
        return cls(material, subs, subdesc, exit_id, exit_flip, exit_perm)

    @property
    def arrays(self) -> ExitArrays:
        """The arrays the kernels read, as their one ``exit_map`` argument."""
        return ExitArrays(self.exit_id, self.exit_flip, self.exit_perm, self.subdesc)

    def sides_reached(self, stm: int) -> list[tuple[int, int]]:
        """The (sub-table, side to move) pairs that the captures and promotions of side
        ``stm`` lead to: all that its exits read (half the sub-tables' values or less)."""
        colours = [colour for colour, _ in self.material.pieces()]
        reached = set()
        for (cap, pslot, promo), sid in np.ndenumerate(self.exit_id):
            if sid < 0 or (cap > 0 and colours[cap - 1] == stm) or (pslot > 0 and colours[pslot - 1] != stm):
                continue
            reached.add((int(sid), (1 - stm) ^ int(self.exit_flip[cap, pslot, promo])))
        return sorted(reached)


@functools.lru_cache(maxsize=None)
def _exit_map(key: str) -> ExitMap:
    return ExitMap._build(Material.parse(key))


@njit(cache=True, inline="always")
def _aligned_attack(ptype, s, target, occ):
    kind = LINE_KIND[s, target]
    if kind == 0:
        return False
    if kind == 1 and ptype != QUEEN and ptype != ROOK:
        return False
    if kind == 2 and ptype != QUEEN and ptype != BISHOP:
        return False
    return (BETWEEN[s, target] & occ) == 0


@njit(cache=True, inline="always")
def attacked(desc, sq, occ, target, by_colour, skip):
    """Whether a piece of ``by_colour`` (other than slot ``skip``) attacks ``target``."""
    for i in range(desc[D_N]):
        if i == skip or desc[D_COLOUR + i] != by_colour:
            continue
        t = desc[D_TYPE + i]
        s = sq[i]
        bit = SQ_BIT[target]
        if t == KING:
            if KING_MASK[s] & bit:
                return True
        elif t == KNIGHT:
            if KNIGHT_MASK[s] & bit:
                return True
        elif t == PAWN:
            if PAWN_ATTACK_MASK[by_colour, s] & bit:
                return True
        elif _aligned_attack(t, s, target, occ):
            return True
    return False


@leaf
def setup_board(desc, sq, board):
    """Fill ``board`` from ``sq``; return the occupancy bits."""
    for s in range(64):
        board[s] = -1
    occ = np.uint64(0)
    for i in range(desc[D_N]):
        board[sq[i]] = i
        occ |= SQ_BIT[sq[i]]
    return occ


@leaf
def is_legal(desc, sq, stm, occ):
    """The side not to move is not in check (so the kings do not touch either)."""
    them = 1 - stm
    return not attacked(desc, sq, occ, sq[them], stm, -1)


@leaf
def in_check(desc, sq, stm, occ):
    return attacked(desc, sq, occ, sq[stm], 1 - stm, -1)


@njit(cache=True, inline="always")
def _exit(desc, sq, stm, cap, pslot, promo, exit_map, tmp, sub_sq):
    """Sub-table id, side to move there and index of ``sq`` (already moved) after the piece
    in slot ``cap`` was captured (-1: none) and the pawn in ``pslot`` promoted to ``promo``."""
    sid = exit_map.exit_id[cap + 1, pslot + 1, promo]
    flip = exit_map.exit_flip[cap + 1, pslot + 1, promo]
    for j in range(desc[D_N]):
        if j != cap:
            sub_sq[exit_map.exit_perm[cap + 1, pslot + 1, promo, j]] = (sq[j] ^ 56) if flip else sq[j]
    return sid, (1 - stm) ^ flip, index_of(exit_map.subdesc[sid], sub_sq, tmp)


# RAY_MASK[s, d]: every square from s in direction d (board.RAY_STEPS order); along
# RAY_UP[d] the square numbers grow, so the nearest blocker is the lowest set bit.
RAY_MASK = np.zeros((64, 8), dtype=np.uint64)
for _s in range(64):
    for _d in range(8):
        for _t in RAYS[_s, _d]:
            if _t >= 0:
                RAY_MASK[_s, _d] |= SQ_BIT[_t]
RAY_UP = np.array([True, True, False, False, True, False, False, True])
# LINE[a, b]: the whole line through a and b when they share one (a pinned piece's moves).
LINE = np.zeros((64, 64), dtype=np.uint64)
for _s in range(64):
    for _d in range(8):
        for _t in RAYS[_s, _d]:
            if _t >= 0:
                LINE[_s, _t] = RAY_MASK[_s, _d] | RAY_MASK[_s, _d ^ 2] | SQ_BIT[_s]
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True, inline="always")
def _ray(s, d, occ):
    ray = RAY_MASK[s, d]
    block = ray & occ
    if block == 0:
        return ray
    if RAY_UP[d]:
        b = np.int64(trailing_zeros(block))
    else:
        b = 63 - np.int64(leading_zeros(block))
    return ray ^ RAY_MASK[b, d]


@njit(cache=True, inline="always")
def _piece_targets(t, s, occ):
    """Squares a non-pawn piece of type ``t`` on ``s`` attacks (through empty squares)."""
    if t == KING:
        return KING_MASK[s]
    if t == KNIGHT:
        return KNIGHT_MASK[s]
    att = np.uint64(0)
    if t != BISHOP:
        att |= _ray(s, 0, occ) | _ray(s, 1, occ) | _ray(s, 2, occ) | _ray(s, 3, occ)
    if t != ROOK:
        att |= _ray(s, 4, occ) | _ray(s, 5, occ) | _ray(s, 6, occ) | _ray(s, 7, occ)
    return att


@njit(cache=True, inline="always")
def _lsb(b):
    return np.int64(trailing_zeros(b))


@intrinsic
def _ctpop(typingctx, b):
    """The number of set bits of a uint64 (LLVM's ctpop: one instruction)."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.uint64(types.uint64), codegen


@njit(cache=True, inline="always")
def _popcount(b):
    return np.int64(_ctpop(np.uint64(b)))


@njit(cache=True, inline="always")
def _put(out_sub, out_stm, out_idx, k, sub, side, idx, out_ep, k0, ep, want_ep):
    """Write move ``k``; return ``k + 1``. Unsigned indices: numba then compiles no
    wraparound of negative ones, which the quiet-move loops would pay on every store."""
    u = np.uint64(k)
    out_sub[u] = sub
    out_stm[u] = side
    out_idx[u] = idx
    if want_ep:
        out_ep[np.uint64(k - k0)] = ep
    return k + 1


@njit(cache=True, inline="always")
def _king_move_index(desc, sq, kings, tmp, have):
    """Index of ``sq`` with its kings moved to ``kings`` (``wk * 64 + bk``): the other pieces
    stay, so the index is the new king pair's (table lookups) and the rest under that
    pair's symmetry. A few symmetries cover all king moves of a position: each rest is
    computed once, in ``tmp[8 + symmetry]``, and ``have`` (returned updated) says which are."""
    pair = KING_PAIR[desc[D_PAWNFUL], kings]
    t = pair & 15
    s = t & 7
    if not (have >> s) & 1:
        tmp[8 + s] = rest_under(desc, sq, s, tmp)
        have |= 1 << s
    r = tmp[8 + s]
    if t & 8:
        s ^= 4
        if not (have >> s) & 1:
            tmp[8 + s] = rest_under(desc, sq, s, tmp)
            have |= 1 << s
        r = min(r, tmp[8 + s])
    return (pair >> 4) * desc[D_R] + r, have


@njit(cache=True, inline="always")
def _legality_masks(desc, sq, stm, occ):
    """Legality of ``stm``'s moves by masks, computed once per position: its own pieces,
    the squares the opponent attacks with ``stm``'s king lifted off the board (king
    moves), the squares an evasion must reach (all when not in check, none in double
    check: take or block the checker) and the pinned pieces (each may move only along
    its line to the king)."""
    n = desc[D_N]
    them = 1 - stm
    king = sq[stm]
    own = np.uint64(0)
    for i in range(n):
        if desc[D_COLOUR + i] == stm:
            own |= SQ_BIT[sq[i]]
    danger = np.uint64(0)
    checkers = 0
    evade = ALL
    pinned = np.uint64(0)
    lifted = occ ^ SQ_BIT[king]
    for j in range(n):
        if desc[D_COLOUR + j] != them:
            continue
        t = desc[D_TYPE + j]
        s = sq[j]
        if t == KING:
            danger |= KING_MASK[s]
        elif t == KNIGHT:
            att = KNIGHT_MASK[s]
            danger |= att
            if att & SQ_BIT[king]:
                checkers += 1
                evade = SQ_BIT[s]
        elif t == PAWN:
            att = PAWN_ATTACK_MASK[them, s]
            danger |= att
            if att & SQ_BIT[king]:
                checkers += 1
                evade = SQ_BIT[s]
        else:
            danger |= _piece_targets(t, s, lifted)
            kind = LINE_KIND[s, king]
            if kind == 0 or (kind == 1 and t == BISHOP) or (kind == 2 and t == ROOK):
                continue
            between = BETWEEN[s, king] & occ
            if between == 0:
                checkers += 1
                evade = SQ_BIT[s] | BETWEEN[s, king]
            elif (between & (between - np.uint64(1))) == 0 and (between & own):
                pinned |= between
    if checkers > 1:
        evade = np.uint64(0)
    return own, danger, evade, pinned


@njit(cache=True, inline="always")
def may_exit(desc, sq, stm, occ):
    """Whether the side to move may have an exit: one of its pieces attacks (through empty
    squares) a piece of the other side's other than its king, or one of its pawns stands
    a step from promoting. False: :func:`exits` finds none. A filter a few table look-ups
    long, where :func:`exits` first needs the check and pin masks."""
    them = np.uint64(0)
    for i in range(2, desc[D_N]):  # slots 0 and 1 are the kings
        if desc[D_COLOUR + i] != stm:
            them |= SQ_BIT[sq[i]]
    for i in range(desc[D_N]):
        if desc[D_COLOUR + i] != stm:
            continue
        t, frm = desc[D_TYPE + i], sq[i]
        if t == PAWN:
            if (frm >> 3) == (6 if stm == 0 else 1) or PAWN_ATTACK_MASK[stm, frm] & them:
                return True
        elif them and _piece_targets(t, frm, occ) & them:
            return True
    return False


@njit(cache=True, inline="always")
def _exits_into(desc, sq, stm, board, occ, exit_map, tmp, sub_sq, out_sub, out_stm, out_idx):
    """The exits of :func:`_successors_into` alone (its captures and promotions, in its
    order), from position 0 of the ``out_*`` arrays; returns how many. What a reader of
    the shards needs to resolve a stored value (see :mod:`tablebase.generate.values`)."""
    return _exits_counting(desc, sq, stm, board, occ, exit_map, tmp, sub_sq, out_sub, out_stm, out_idx, False)[0]


@njit(cache=True, inline="always")
def _exits_counting(desc, sq, stm, board, occ, exit_map, tmp, sub_sq, out_sub, out_stm, out_idx, count):
    """:func:`_exits_into`, and with ``count`` how many moves stay in the table (those
    :func:`_successors_into` gives with sub-table -1), counted by their target masks
    without an index each: (exits, moves in the table)."""
    n = desc[D_N]
    king = sq[stm]
    own, danger, evade, pinned = _legality_masks(desc, sq, stm, occ)
    k = 0
    inside = 0
    for i in range(n):
        if desc[D_COLOUR + i] != stm:
            continue
        t = desc[D_TYPE + i]
        frm = sq[i]
        if t == PAWN:
            allowed = evade & (LINE[king, frm] if SQ_BIT[frm] & pinned else ALL)
            fwd = 8 if stm == 0 else -8
            to = frm + fwd
            last = (to >> 3) == (7 if stm == 0 else 0)
            exits = PAWN_ATTACK_MASK[stm, frm] & occ & ~own & allowed
            if last and board[to] < 0:
                exits |= SQ_BIT[to] & allowed
            elif count and board[to] < 0:
                if SQ_BIT[to] & allowed:
                    inside += 1
                to2 = to + fwd
                if (frm >> 3) == (1 if stm == 0 else 6) and board[to2] < 0 and SQ_BIT[to2] & allowed:
                    inside += 1
            while exits:
                to = _lsb(exits)
                exits &= exits - np.uint64(1)
                sq[i] = to
                for promo in range(1 if last else 0, 5 if last else 1):
                    out_sub[k], out_stm[k], out_idx[k] = _exit(desc, sq, stm, board[to], i if promo > 0 else -1,
                                                               promo, exit_map, tmp, sub_sq)
                    k += 1
                sq[i] = frm
            continue
        if t == KING:
            targets = KING_MASK[frm] & ~own & ~danger
        else:
            targets = _piece_targets(t, frm, occ) & ~own & evade
            if SQ_BIT[frm] & pinned:
                targets &= LINE[king, frm]
        if count:
            inside += _popcount(targets & ~occ)
        caps = targets & occ
        while caps:
            to = _lsb(caps)
            caps &= caps - np.uint64(1)
            sq[i] = to
            out_sub[k], out_stm[k], out_idx[k] = _exit(desc, sq, stm, board[to], -1, 0, exit_map, tmp, sub_sq)
            k += 1
            sq[i] = frm
    return k, inside


@leaf
def exits_counting(desc, sq, stm, board, occ, exit_map, tmp, sub_sq, out_sub, out_stm, out_idx):
    """:func:`exits`, and how many moves stay in the table: (exits, moves in the table)."""
    return _exits_counting(desc, sq, stm, board, occ, exit_map, tmp, sub_sq, out_sub, out_stm, out_idx, True)


@leaf
def exits(desc, sq, stm, board, occ, exit_map, tmp, sub_sq, out_sub, out_stm, out_idx):
    """The captures and promotions of the side to move, as :func:`successors` gives them
    (its moves whose sub-table id is >= 0); returns how many."""
    return _exits_into(desc, sq, stm, board, occ, exit_map, tmp, sub_sq, out_sub, out_stm, out_idx)


@njit(cache=True, inline="always")
def _successors_into(desc, sq, x, stm, board, occ, exit_map, tmp, sub_sq,
                     out_sub, out_stm, out_idx, k, out_ep, want_ep):
    """:func:`successors` writing from position ``k`` of ``out_sub``/``out_stm``/``out_idx``
    (``out_ep`` from 0, only if ``want_ep``); returns the new ``k``. Inlined into the loops
    over indices: a call passes each array as seven words."""
    n = desc[D_N]
    them = 1 - stm
    king = sq[stm]
    own, danger, evade, pinned = _legality_masks(desc, sq, stm, occ)
    # Quiet moves mostly change the index by arithmetic (see encode_after_move), done
    # here inline: a call per move with the arrays as arguments costs more than the move.
    pawnful = desc[D_PAWNFUL]
    decoded = x >= 0
    r_size = desc[D_R]
    # The rest of x without a division: decoded kings stand canonically.
    rest = x - (KING_PAIR[pawnful, sq[0] * 64 + sq[1]] >> 4) * r_size if decoded else 0
    # Both kings on the long diagonal (pawnless): the index takes the smaller rest of the
    # placement and of its mirror image across that diagonal; both change by arithmetic.
    diag = not pawnful and ON_DIAGONAL[sq[0]] and ON_DIAGONAL[sq[1]]
    mirror_rest = 0
    if decoded and diag:
        for j in range(2, n):
            tmp[j] = DIAGONAL_FLIP[sq[j]]
        mirror_rest = rank_rest(desc, tmp)
    k0 = k
    for i in range(n):
        if desc[D_COLOUR + i] != stm:
            continue
        t = desc[D_TYPE + i]
        frm = sq[i]
        step = 0  # index change per square of a lone piece of its group (0: ask encode_after_move)
        if decoded and i >= 2 and desc[D_GROUP + 4 * desc[D_SLOT_GROUP + i] + 1] == 1:
            step = desc[D_GROUP + 4 * desc[D_SLOT_GROUP + i] + 3]
        if t == PAWN:
            allowed = evade & (LINE[king, frm] if SQ_BIT[frm] & pinned else ALL)
            if allowed == 0:
                continue
            fwd = 8 if stm == 0 else -8
            to = frm + fwd
            last = (to >> 3) == (7 if stm == 0 else 0)
            # Captures and promotions leave the table: one loop over them (one _exit
            # inlined), the push that promotes being the move with nothing captured.
            exits = PAWN_ATTACK_MASK[stm, frm] & occ & ~own & allowed
            if board[to] < 0:
                if SQ_BIT[to] & allowed:
                    if last:
                        exits |= SQ_BIT[to]
                    else:
                        sq[i] = to
                        to_idx = x + (to - frm) * step if step else encode_after_move(desc, sq, x, i, frm, tmp)
                        k = _put(out_sub, out_stm, out_idx, k, -1, them, to_idx, out_ep, k0, PAWN_PUSH, want_ep)
                        sq[i] = frm
                to2 = to + fwd
                if (frm >> 3) == (1 if stm == 0 else 6) and board[to2] < 0 and SQ_BIT[to2] & allowed:
                    sq[i] = to2
                    to_idx = x + (to2 - frm) * step if step else encode_after_move(desc, sq, x, i, frm, tmp)
                    ep = PAWN_PUSH
                    if want_ep and ep_capture_legal(desc, sq, them, (occ ^ SQ_BIT[frm]) | SQ_BIT[to2], i):
                        ep = i
                    k = _put(out_sub, out_stm, out_idx, k, -1, them, to_idx, out_ep, k0, ep, want_ep)
                    sq[i] = frm
            while exits:
                to = _lsb(exits)
                exits &= exits - np.uint64(1)
                sq[i] = to
                for promo in range(1 if last else 0, 5 if last else 1):
                    e_sub, e_stm, e_idx = _exit(desc, sq, stm, board[to], i if promo > 0 else -1, promo,
                                                exit_map, tmp, sub_sq)
                    k = _put(out_sub, out_stm, out_idx, k, e_sub, e_stm, e_idx, out_ep, k0, -1, want_ep)
                sq[i] = frm
            continue
        if t == KING:
            targets = KING_MASK[frm] & ~own & ~danger
        else:
            targets = _piece_targets(t, frm, occ) & ~own & evade
            if SQ_BIT[frm] & pinned:
                targets &= LINE[king, frm]
        caps = targets & occ
        while caps:
            to = _lsb(caps)
            caps &= caps - np.uint64(1)
            sq[i] = to
            e_sub, e_stm, e_idx = _exit(desc, sq, stm, board[to], -1, 0, exit_map, tmp, sub_sq)
            k = _put(out_sub, out_stm, out_idx, k, e_sub, e_stm, e_idx, out_ep, k0, -1, want_ep)
            sq[i] = frm
        # Quiet moves, one tight loop per case.
        quiet = targets & ~occ
        if i < 2:
            # A king move keeps the other pieces: see _king_move_index.
            have = 0
            if decoded:
                tmp[8] = rest
                have = 1
            other = sq[1 - i]
            while quiet:
                to = _lsb(quiet)
                quiet &= quiet - np.uint64(1)
                to_idx, have = _king_move_index(desc, sq, to * 64 + other if i == 0 else other * 64 + to, tmp, have)
                k = _put(out_sub, out_stm, out_idx, k, -1, them, to_idx, out_ep, k0, KING_MOVE, want_ep)
        elif step and not diag:
            base = x - frm * step
            while quiet:
                to = _lsb(quiet)
                quiet &= quiet - np.uint64(1)
                k = _put(out_sub, out_stm, out_idx, k, -1, them, base + to * step, out_ep, k0, -1, want_ep)
        else:
            while quiet:
                to = _lsb(quiet)
                quiet &= quiet - np.uint64(1)
                if step:
                    to_idx = x - rest + min(rest + (to - frm) * step,
                                            mirror_rest + (DIAGONAL_FLIP[to] - DIAGONAL_FLIP[frm]) * step)
                else:
                    sq[i] = to
                    to_idx = encode_after_move(desc, sq, x, i, frm, tmp)
                    sq[i] = frm
                k = _put(out_sub, out_stm, out_idx, k, -1, them, to_idx, out_ep, k0, -1, want_ep)
    return k


@njit(cache=True, inline="always")
def _pawn_moves_into(desc, sq, x, stm, board, occ, tmp, out_idx, out_ep):
    """The legal pawn moves of the side to move that stay in the table (pushes and double
    steps that do not promote), as :func:`successors` gives them: the index reached to
    ``out_idx``, the pawn's slot to ``out_ep`` for a double step after which an en-passant
    capture is legal, else PAWN_PUSH. Returns how many."""
    n = desc[D_N]
    them = 1 - stm
    king = sq[stm]
    own, danger, evade, pinned = _legality_masks(desc, sq, stm, occ)
    fwd = 8 if stm == 0 else -8
    k = 0
    for i in range(2, n):
        if desc[D_COLOUR + i] != stm or desc[D_TYPE + i] != PAWN:
            continue
        frm = sq[i]
        to = frm + fwd
        if (to >> 3) == (7 if stm == 0 else 0) or board[to] >= 0:
            continue  # a promotion (an exit) or blocked
        allowed = evade & (LINE[king, frm] if SQ_BIT[frm] & pinned else ALL)
        if SQ_BIT[to] & allowed:
            sq[i] = to
            out_idx[k] = encode_after_move(desc, sq, x, i, frm, tmp)
            out_ep[k] = PAWN_PUSH
            k += 1
            sq[i] = frm
        to2 = to + fwd
        if (frm >> 3) == (1 if stm == 0 else 6) and board[to2] < 0 and SQ_BIT[to2] & allowed:
            sq[i] = to2
            out_idx[k] = encode_after_move(desc, sq, x, i, frm, tmp)
            out_ep[k] = i if ep_capture_legal(desc, sq, them, (occ ^ SQ_BIT[frm]) | SQ_BIT[to2], i) else PAWN_PUSH
            k += 1
            sq[i] = frm
    return k


@leaf
def successors(desc, sq, x, stm, board, occ, exit_map, tmp, sub_sq, out_sub, out_stm, out_idx, out_ep):
    """Every legal move of the side to move, as (sub-table id or -1, side to move, index)
    written to the ``out_*`` arrays (room for MAX_MOVES each); returns how many.
    ``board``/``occ`` describe ``sq``, the decoded placement of index ``x`` (-1 if ``sq``
    was not decoded); ``tmp`` and ``sub_sq`` are scratch space of 16 int64.

    ``out_ep`` is the slot of the pawn for a double step after which the opponent can
    capture en passant (the successor is then that index *with* an en-passant square,
    see :func:`ep_exits`), -2 (KING_MOVE) for a king move that stays in the table, -3
    (PAWN_PUSH) for another pawn move that stays in it, else -1. Moves
    that stay in the table reach distinct indices, except that a king move may reach the
    index of another move (symmetric positions), and any two may when both kings stand on
    the long diagonal of a pawnless table."""
    return _successors_into(desc, sq, x, stm, board, occ, exit_map, tmp, sub_sq,
                            out_sub, out_stm, out_idx, 0, out_ep, True)


@leaf
def _ep_capturers(desc, sq, stm, occ, slot):
    """Bit mask of the slots of ``stm``'s pawns (``stm`` to move) that can legally capture
    en passant the pawn in ``slot``, which has just made a double step."""
    s = sq[slot]
    target = s - 8 if desc[D_COLOUR + slot] == 0 else s + 8
    mask = 0
    for j in range(desc[D_N]):
        if desc[D_COLOUR + j] != stm or desc[D_TYPE + j] != PAWN:
            continue
        frm = sq[j]
        if (frm >> 3) != (s >> 3) or abs((frm & 7) - (s & 7)) != 1:
            continue
        sq[j] = target
        if not attacked(desc, sq, (occ ^ SQ_BIT[s] ^ SQ_BIT[frm]) | SQ_BIT[target], sq[stm], 1 - stm, slot):
            mask |= 1 << j
        sq[j] = frm
    return mask


@leaf
def ep_capture_legal(desc, sq, stm, occ, slot):
    """Whether ``stm`` (to move) can capture en passant the pawn in ``slot`` that has just
    made a double step."""
    return _ep_capturers(desc, sq, stm, occ, slot) != 0


@leaf
def ep_exits(desc, sq, stm, occ, slot, exit_map, tmp, sub_sq, out_sub, out_stm, out_idx):
    """The legal en-passant captures of the pawn in ``slot`` by ``stm`` (to move), as
    exits like :func:`successors` writes them; returns how many."""
    mask = _ep_capturers(desc, sq, stm, occ, slot)
    target = sq[slot] - 8 if desc[D_COLOUR + slot] == 0 else sq[slot] + 8
    k = 0
    for j in range(desc[D_N]):
        if mask >> j & 1:
            frm = sq[j]
            sq[j] = target
            out_sub[k], out_stm[k], out_idx[k] = _exit(desc, sq, stm, slot, -1, 0, exit_map, tmp, sub_sq)
            sq[j] = frm
            k += 1
    return k


@leaf
def ep_predecessors(desc, sq, x, stm, board, occ, tmp, out_idx, out_slot):
    """The double steps that lead to ``sq`` with an en-passant capture available: the
    predecessor indices (side to move ``1 - stm``) and the slot of the pawn; returns how many."""
    mover = 1 - stm
    k = 0
    for i in range(desc[D_N]):
        if desc[D_COLOUR + i] != mover or desc[D_TYPE + i] != PAWN:
            continue
        to = sq[i]
        back = -8 if mover == 0 else 8
        if (to >> 3) != (3 if mover == 0 else 4) or board[to + back] >= 0 or board[to + 2 * back] >= 0:
            continue
        if not ep_capture_legal(desc, sq, stm, occ, i):
            continue
        frm = to + 2 * back
        occ2 = (occ ^ SQ_BIT[to]) | SQ_BIT[frm]
        sq[i] = frm
        if not attacked(desc, sq, occ2, sq[stm], mover, -1):
            out_idx[k] = encode_after_move(desc, sq, x, i, to, tmp)
            out_slot[k] = i
            k += 1
        sq[i] = to
    return k


@leaf
def predecessors(desc, sq, x, stm, board, occ, tmp, out_idx):
    """Un-moves inside the table: the indices (side to move ``1 - stm``) of every position
    whose legal moves include a quiet, non-promoting move to ``sq`` (the decoded placement
    of index ``x``). Un-captures and un-promotions lead to larger tables and are not
    generated. Duplicates (a symmetric position reached twice) are kept; see
    :func:`unique_small`. Double steps after which an en-passant capture is legal lead to
    ``sq`` *with* an en-passant square, another vertex: :func:`ep_predecessors` lists them."""
    return _predecessors_into(desc, sq, x, stm, board, occ, tmp, out_idx, False, False)


@njit(cache=True, inline="always")
def _unmove_squares(desc, sq, occ, i, king, mover):
    """The squares from which slot ``i`` (of ``mover``, now on ``sq[i]``) can have come
    as far as the other pieces of ``mover`` go: none of them may attack ``king`` once it
    is back there. A checking knight, pawn or king leaves none; a checking slider, or one
    whose line ``sq[i]`` alone blocks, leaves the squares between it and ``king``."""
    to_bit = SQ_BIT[sq[i]]
    need = ALL
    for j in range(desc[D_N]):
        if j == i or desc[D_COLOUR + j] != mover:
            continue
        t = desc[D_TYPE + j]
        s = sq[j]
        if t == KING:
            if KING_MASK[s] & SQ_BIT[king]:
                return np.uint64(0)
        elif t == KNIGHT:
            if KNIGHT_MASK[s] & SQ_BIT[king]:
                return np.uint64(0)
        elif t == PAWN:
            if PAWN_ATTACK_MASK[mover, s] & SQ_BIT[king]:
                return np.uint64(0)
        elif _aligned_attack(t, s, king, occ & ~to_bit):
            need &= BETWEEN[s, king]
    return need


@njit(cache=True, inline="always")
def _attackers_of(t, colour, target, occ):
    """The squares from which a piece of type ``t`` and ``colour`` would attack ``target``."""
    if t == KING:
        return KING_MASK[target]
    if t == KNIGHT:
        return KNIGHT_MASK[target]
    if t == PAWN:
        return PAWN_ATTACK_MASK[1 - colour, target]
    return _piece_targets(t, target, occ)


@njit(cache=True, inline="always")
def _predecessors_into(desc, sq, x, stm, board, occ, tmp, out_idx, distinct, pieces_only):
    """:func:`predecessors`, inlined into the loops over frontiers; with ``pieces_only``,
    no pawn un-moves (the moves that keep the halfmove clock running). With ``distinct``,
    each predecessor is listed once: only a king un-move (it may change the orientation)
    or, both kings on the long diagonal of a pawnless table, any un-move can repeat
    another's index. ``tmp`` needs 16 entries: 8 onwards cache the rest of the index
    under each symmetry, as in :func:`_successors_into`."""
    n = desc[D_N]
    mover = 1 - stm
    king = sq[stm]
    pawnful = desc[D_PAWNFUL]
    r_size = desc[D_R]
    # As in successors: a lone piece of its group changes the index by arithmetic, a king
    # by the king-pair table; both kings on the long diagonal (pawnless) re-encode.
    diag = not pawnful and ON_DIAGONAL[sq[0]] and ON_DIAGONAL[sq[1]]
    arithmetic = x >= 0 and not diag
    rest = x - (KING_PAIR[pawnful, sq[0] * 64 + sq[1]] >> 4) * r_size if arithmetic else 0
    k = 0
    kings = 0  # king un-moves come first (the kings are slots 0 and 1)
    for i in range(n):
        if desc[D_COLOUR + i] != mover:
            continue
        t = desc[D_TYPE + i]
        to = sq[i]
        # Legal predecessors: no piece of the mover attacks the king of the side to move,
        # this one included once back on its square.
        need = _unmove_squares(desc, sq, occ, i, king, mover)
        if need == 0:
            continue
        need &= ~_attackers_of(t, mover, king, occ ^ SQ_BIT[to])
        step = 0
        if arithmetic and i >= 2 and desc[D_GROUP + 4 * desc[D_SLOT_GROUP + i] + 1] == 1:
            step = desc[D_GROUP + 4 * desc[D_SLOT_GROUP + i] + 3]
        if t == PAWN:
            if pieces_only:
                continue
            back = -8 if mover == 0 else 8
            frm = to + back
            if frm < 8 or frm > 55 or board[frm] >= 0:
                continue
            for double in range(2):
                if double == 1:
                    if (to >> 3) != (3 if mover == 0 else 4) or ep_capture_legal(desc, sq, stm, occ, i):
                        break  # not a double step, or one that ep_predecessors handles
                    frm = to + 2 * back
                    if board[frm] >= 0:
                        break
                if not SQ_BIT[frm] & need:
                    continue
                sq[i] = frm
                out_idx[k] = x + (frm - to) * step if step else encode_after_move(desc, sq, x, i, to, tmp)
                k += 1
                sq[i] = to
            continue
        sources = _piece_targets(t, to, occ) & ~occ & need
        if i < 2 and arithmetic:
            tmp[8] = rest
            have = 1
            other = sq[1 - i]
            while sources:
                frm = _lsb(sources)
                sources &= sources - np.uint64(1)
                out_idx[k], have = _king_move_index(desc, sq, frm * 64 + other if i == 0 else other * 64 + frm, tmp,
                                                    have)
                k += 1
            kings = k
            continue
        while sources:
            frm = _lsb(sources)
            sources &= sources - np.uint64(1)
            if step:
                out_idx[k] = x + (frm - to) * step
            else:
                sq[i] = frm
                out_idx[k] = encode_after_move(desc, sq, x, i, to, tmp)
                sq[i] = to
            k += 1
        if i < 2:
            kings = k
    # Two predecessors share an index only if a symmetry of the board maps one onto the
    # other; it fixes the king that did not move, so that king stands on a long diagonal
    # of a pawnless table (no other symmetry fixes a square).
    if not distinct or pawnful or not ON_LONG_DIAGONAL[king]:
        return k
    if diag or x < 0:
        return unique_small(out_idx, k)
    # A king un-move that repeats an earlier king un-move or any other un-move is dropped:
    # backwards, so that each test reads only entries not yet dropped.
    for p in range(kings - 1, -1, -1):
        for q in range(k):
            if out_idx[q] == out_idx[p] and (q < p or q >= kings):
                out_idx[p] = -1
                break
    m = 0
    for p in range(k):
        if out_idx[p] >= 0:
            out_idx[m] = out_idx[p]
            m += 1
    return m


@leaf
def unique_small(a, n):
    """Sort ``a[:n]`` in place (insertion sort: n is a move count) and drop duplicates;
    return the new length."""
    for i in range(1, n):
        x = a[i]
        j = i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x
    m = 0
    for i in range(n):
        if m == 0 or a[i] != a[m - 1]:
            a[m] = a[i]
            m += 1
    return m


@njit(cache=True, inline="always")
def _walk_to(desc, x, first, sq, board, tmp):
    """:func:`walk_to`, inlined into the loops over indices."""
    n = desc[D_N]
    if first:
        decode(desc, x, sq)
        occ = setup_board(desc, sq, board)
        return occ if is_valid(desc, x, sq, tmp) else np.uint64(0)
    for j in range(2, n):
        board[sq[j]] = -1
    if next_placement(desc, sq):
        for s in range(64):
            board[s] = -1
    occ = np.uint64(0)
    ok = True
    for j in range(n):
        bit = SQ_BIT[sq[j]]
        if occ & bit:
            ok = False  # two pieces on one square; the next step clears both
        occ |= bit
        board[sq[j]] = j
    if not ok:
        return np.uint64(0)
    if not desc[D_PAWNFUL] and ON_DIAGONAL[sq[0]] and ON_DIAGONAL[sq[1]] and encode(desc, sq, tmp) != x:
        return np.uint64(0)
    return occ


@leaf
def walk_to(desc, x, first, sq, board, tmp):
    """Set ``sq`` and ``board`` to the placement of index ``x``; return its occupancy
    bits, 0 where ``x`` is not a valid placement. Unless ``first``, ``sq``/``board`` hold
    the placement of ``x - 1`` and step to ``x`` by :func:`next_placement`, moving only
    the pieces that change; ``first`` decodes ``x`` from scratch (the slow twin)."""
    return _walk_to(desc, x, first, sq, board, tmp)


@njit(cache=True)
def successor_rows(desc, stm, lo, hi, odometer, exit_map, indptr, flags, k, sub, side, idx):
    """:func:`successor_lists` into given arrays: rows ``x - lo`` of ``indptr``/``flags``,
    moves from position ``k`` of ``sub``/``side``/``idx``, for ``x`` from ``lo`` until
    ``hi`` or until the move arrays have room for fewer than MAX_MOVES more. Returns the
    first index not done and the new ``k`` (also written to its ``indptr`` row).
    ``odometer``: step from index to index (:func:`walk_to`); else decode each one."""
    no_ep = np.empty(0, dtype=np.int64)  # the en-passant slots are not asked for
    # Plain types, not literal ones: else each caller's constants compile the kernel anew.
    return _successor_rows(desc, stm, lo, hi, bool(odometer), exit_map, indptr, flags,
                           np.int64(k), sub, side, idx, scratch(), no_ep)


@leaf
def _successor_rows(desc, stm, lo, hi, odometer, exit_map, indptr, flags, k, sub, side, idx, s, no_ep):
    """:func:`successor_rows` with its scratch arrays, without reference counting: the
    kernels inlined here would otherwise count a reference per array they are passed."""
    sq, tmp, sub_sq, board = s.sq, s.tmp, s.sub_sq, s.board
    cap = sub.shape[0]
    x = lo
    while x < hi and k + MAX_MOVES <= cap:
        indptr[x - lo] = k
        flags[x - lo] = 0
        occ = _walk_to(desc, x, x == lo or not odometer, sq, board, tmp)
        x += 1
        if occ == 0 or attacked(desc, sq, occ, sq[1 - stm], stm, -1):  # is_legal, inlined
            continue
        # Straight into the CSR arrays: no per-position buffer to copy, nor slices of them.
        end = _successors_into(desc, sq, x - 1, stm, board, occ, exit_map, tmp,
                               sub_sq, sub, side, idx, k, no_ep, False)
        if end == k:
            flags[x - 1 - lo] = 2 if attacked(desc, sq, occ, sq[stm], 1 - stm, -1) else 3  # in_check
        else:
            flags[x - 1 - lo] = 1
        k = end
    indptr[x - lo] = k
    return x, k


@njit(cache=True)
def successor_lists(desc, stm, lo, hi, exit_map, odometer=True):
    """Forward moves of every index in ``[lo, hi)`` as CSR arrays: ``indptr`` (one row per
    index; invalid and illegal indices have none), then per move the sub-table id (-1:
    this table), the side to move and the index it leads to. Also ``flags``, one per
    index: 0 invalid or illegal, 1 has moves, 2 checkmate, 3 stalemate. ``odometer=False``
    decodes every index (the slow twin of the walk; same result)."""
    count = hi - lo
    indptr = np.empty(count + 1, dtype=np.int64)
    flags = np.zeros(count, dtype=np.int8)
    cap = max(MAX_MOVES, count * 16)
    sub = np.empty(cap, dtype=np.int64)
    side = np.empty(cap, dtype=np.int8)
    idx = np.empty(cap, dtype=np.int64)
    x, k = successor_rows(desc, stm, lo, hi, odometer, exit_map, indptr, flags, 0, sub, side, idx)
    while x < hi:
        cap *= 2
        sub, side, idx = grow(sub[:k], cap), grow(side[:k], cap), grow(idx[:k], cap)
        x, k = successor_rows(desc, stm, x, hi, odometer, exit_map,
                              indptr[x - lo:], flags[x - lo:], k, sub, side, idx)
    return indptr, sub[:k].copy(), side[:k].copy(), idx[:k].copy(), flags


@njit(cache=True)
def grow(a, cap):
    """A copy of ``a`` with room for ``cap`` items (output buffers of unknown length)."""
    b = np.empty(cap, dtype=a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True)
def predecessor_lists(desc, stm, lo, hi):
    """Un-moves of every index in ``[lo, hi)`` as CSR arrays (``indptr``, predecessor
    indices with side to move ``1 - stm``), each row sorted and without duplicates,
    double steps that allow an en-passant capture included.
    Invalid and illegal indices have none."""
    count = hi - lo
    indptr = np.zeros(count + 1, dtype=np.int64)
    cap = max(16, count * 8)
    idx = np.empty(cap, dtype=np.int64)
    sq = np.empty(16, dtype=np.int64)
    tmp = np.empty(16, dtype=np.int64)
    board = np.empty(64, dtype=np.int64)
    out = np.empty(MAX_MOVES, dtype=np.int64)
    slots = np.empty(16, dtype=np.int64)
    k = 0
    for x in range(lo, hi):
        indptr[x - lo] = k
        occ = walk_to(desc, x, x == lo, sq, board, tmp)
        if occ == 0 or not is_legal(desc, sq, stm, occ):
            continue
        m = predecessors(desc, sq, x, stm, board, occ, tmp, out)
        m += ep_predecessors(desc, sq, x, stm, board, occ, tmp, out[m:], slots)
        m = unique_small(out, m)
        if k + m > cap:
            cap = 2 * (k + m)
            idx = grow(idx, cap)
        idx[k:k + m] = out[:m]
        k += m
    indptr[count] = k
    return indptr, idx[:k].copy()
