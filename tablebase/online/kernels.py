"""The compiled expansion of one position for the online search.

One call decodes an index, generates its legal moves with the generator's own kernels
(:func:`tablebase.endgame.movegen.successors`), adds the en-passant captures of a
position that has an en-passant square, and says which successors are in check (for
move ordering): the search pays one compiled call per vertex, not one per move.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablebase.endgame.index import D_COLOUR, D_N, D_TYPE, decode, is_valid
from tablebase.endgame.material import PAWN
from tablebase.endgame.movegen import (KING_MASK, MAX_MOVES, PAWN_PUSH, SQ_BIT, _lsb, attacked, ep_capture_legal,
                                       ep_exits, in_check, is_legal, setup_board, successors)

#: What :func:`expand` returns besides the move count: the position is not legal (or
#: not a valid placement), or its en-passant square names no pawn that can be taken.
ILLEGAL, BAD_EP = -1, -2
#: Flags: the position has moves, is checkmate, is stalemate.
MOVES, CHECKMATE, STALEMATE = 1, 2, 3


def buffers() -> tuple[np.ndarray, ...]:
    """Output arrays for :func:`expand`: sub-table, side to move, index, en-passant square,
    check flag and features of each move (room for the en-passant captures too)."""
    n = MAX_MOVES + 8
    return (np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64),
            np.empty(n, np.bool_), np.empty(n, np.int64))


@njit(cache=True, inline="always")
def _edge_distance(s):
    """0 on the edge of the board, 3 on the four centre squares."""
    f, r = s & 7, s >> 3
    return min(min(f, 7 - f), min(r, 7 - r))


@njit(cache=True, inline="always")
def square_distance(a, b):
    """King steps from square ``a`` to square ``b`` (as ``chess.square_distance``;
    symmetries keep it, so any orientation of a placement will do)."""
    return max(abs((a & 7) - (b & 7)), abs((a >> 3) - (b >> 3)))


@njit(cache=True, inline="always")
def moves(desc, stm, x, ep_square, exit_map, sq, tmp, sub_sq, board, out_sub, out_stm, out_idx, out_ep):
    """The moves of :func:`expand` without the check flags and features, into the ``out_*``
    arrays, with scratch arrays passed in (``sq``, ``tmp``, ``sub_sq``: 16 int64;
    ``board``: 64): what a search that expands millions of positions calls, inlined.
    Returns ``(count, flag)`` as :func:`expand` does; ``out_ep`` as :func:`expand`'s but
    :data:`PAWN_PUSH` for a pawn move that allows no en-passant capture (move ordering
    tells pawn moves apart)."""
    decode(desc, x, sq)
    if not is_valid(desc, x, sq, tmp):
        return ILLEGAL, 0
    occ = setup_board(desc, sq, board)
    if not is_legal(desc, sq, stm, occ):
        return ILLEGAL, 0
    m = successors(desc, sq, x, stm, board, occ, exit_map, tmp, sub_sq, out_sub, out_stm, out_idx, out_ep)
    for k in range(m):
        slot = out_ep[k]
        if slot >= 0:
            # A pawn move keeps the kings, hence the orientation: the square needs no mapping.
            out_ep[k] = sq[slot] + (16 if stm == 0 else -16)
        elif slot != PAWN_PUSH:
            out_ep[k] = -1
    if ep_square >= 0:
        slot = board[ep_square]
        if (slot < 0 or desc[D_TYPE + slot] != PAWN or desc[D_COLOUR + slot] == stm
                or (ep_square >> 3) != (3 if stm == 1 else 4) or not ep_capture_legal(desc, sq, stm, occ, slot)):
            return BAD_EP, 0
        n = ep_exits(desc, sq, stm, occ, slot, exit_map, tmp, sub_sq, out_sub[m:], out_stm[m:], out_idx[m:])
        for k in range(m, m + n):
            out_ep[k] = -1
        m += n
    flag = MOVES
    if m == 0:
        flag = CHECKMATE if in_check(desc, sq, stm, occ) else STALEMATE
    return m, flag


@njit(cache=True, inline="always")
def features(desc, stm, x, exit_map, sq, tmp, sub_sq, board, r_sub, r_stm, r_idx, r_ep):
    """What move ordering reads of index ``x`` of this table with ``stm`` to move (the
    position a move reached): its number of legal moves but en-passant captures (bits 0-7;
    0 for checkmate and stalemate), how far its side to move's king is from the edge
    (bits 8-9), the distance between the kings (bits 10-13) and whether its side to move
    is in check (bit 16). Scratch as for :func:`moves`; ``r_*`` hold the replies."""
    decode(desc, x, sq)
    occ = setup_board(desc, sq, board)
    check = in_check(desc, sq, stm, occ)
    replies = successors(desc, sq, x, stm, board, occ, exit_map, tmp, sub_sq, r_sub, r_stm, r_idx, r_ep)
    return (min(replies, 255) | _edge_distance(sq[stm]) << 8 | square_distance(sq[0], sq[1]) << 10
            | np.int64(check) << 16)


@njit(cache=True, inline="always")
def in_check_at(desc, stm, x, sq):
    """Whether ``stm``, to move in index ``x`` of this table, is in check: what move
    ordering asks of the position a move reaches, without generating its moves."""
    decode(desc, x, sq)
    occ = np.uint64(0)
    for i in range(desc[D_N]):
        occ |= SQ_BIT[sq[i]]
    return in_check(desc, sq, stm, occ)


@njit(cache=True, inline="always")
def king_flights(desc, sq, side):
    """How many legal moves ``side``'s king has in the placement ``sq``: the squares next
    to it that hold no piece of its own and that no other piece attacks once it stands
    there (a piece it takes attacks nothing)."""
    king = sq[side]
    occ = np.uint64(0)
    own = np.uint64(0)
    for i in range(desc[D_N]):
        occ |= SQ_BIT[sq[i]]
        if desc[D_COLOUR + i] == side:
            own |= SQ_BIT[sq[i]]
    flights = 0
    targets = KING_MASK[king] & ~own
    while targets:
        t = _lsb(targets)
        targets &= targets - np.uint64(1)
        taken = -1
        for i in range(desc[D_N]):
            if sq[i] == t:
                taken = i
        if not attacked(desc, sq, (occ & ~SQ_BIT[king]) | SQ_BIT[t], t, 1 - side, taken):
            flights += 1
    return flights


@njit(cache=True, inline="always")
def promoting_pawn(desc, sq, side):
    """The square of ``side``'s pawn nearest to promotion in the placement ``sq`` (-1: none)."""
    best = 8
    found = -1
    for i in range(2, desc[D_N]):
        if desc[D_TYPE + i] == PAWN and desc[D_COLOUR + i] == side:
            togo = 7 - (sq[i] >> 3) if side == 0 else sq[i] >> 3
            if togo < best:
                best = togo
                found = sq[i]
    return found


@njit(cache=True)
def expand(desc, stm, x, ep_square, exit_map, out_sub, out_stm, out_idx, out_ep, out_check, out_features):
    """Moves of index ``x`` with ``stm`` to move (0 White, 1 Black, table orientation).

    ``ep_square`` (-1: none) is the square, in the decoded orientation of ``x``, of a
    pawn of the side not to move that has just made a double step and can be taken en
    passant. Returns ``(count, flag)``: ``count`` is the number of moves (or
    :data:`ILLEGAL` / :data:`BAD_EP`) and ``flag`` :data:`MOVES`, :data:`CHECKMATE` or
    :data:`STALEMATE`. Per move: ``out_sub`` the sub-table id (-1: this table) and
    ``out_stm``, ``out_idx`` the position reached; ``out_ep`` the en-passant square of
    the position reached (a double step the opponent can take; -1 otherwise), in the
    decoded orientation of its index; ``out_check`` whether its side to move is in check;
    for a move that stays in the table, ``out_features`` packs what move ordering reads
    of the position reached (:func:`features` but the check bit).
    """
    sq = np.empty(16, np.int64)
    tmp = np.empty(16, np.int64)
    sub_sq = np.empty(16, np.int64)
    board = np.empty(64, np.int64)
    r_sub = np.empty(MAX_MOVES, np.int64)
    r_stm = np.empty(MAX_MOVES, np.int64)
    r_idx = np.empty(MAX_MOVES, np.int64)
    r_ep = np.empty(MAX_MOVES, np.int64)
    m, flag = moves(desc, stm, x, ep_square, exit_map, sq, tmp, sub_sq, board, out_sub, out_stm, out_idx, out_ep)
    for k in range(max(m, 0)):
        out_ep[k] = max(out_ep[k], -1)
        if out_sub[k] < 0:
            f = features(desc, 1 - stm, out_idx[k], exit_map, sq, tmp, sub_sq, board, r_sub, r_stm, r_idx, r_ep)
            out_check[k] = f >> 16
            out_features[k] = f & 0xFFFF
        else:
            sub = exit_map.subdesc[out_sub[k]]
            decode(sub, out_idx[k], sq)
            out_check[k] = in_check(sub, sq, out_stm[k], setup_board(sub, sq, board))
            out_features[k] = 0
    return m, flag
