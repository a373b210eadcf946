"""Compiled kernels of the generation stages, each a pure function over one slice.

Values live in one uint16 per position (this module owns that encoding):

* ``DECIDED + d``: decided at ply ``d``; the side to move wins if ``d`` is odd (it mates
  in ``d`` plies) and loses if ``d`` is even (``d = 0``: checkmated). This is Romano's
  ``d_g`` for the winner ``g``.
* ``UNKNOWN``: not decided yet; a draw once the passes end.
* ``TENT_WIN + e``: undecided, but a capture or promotion wins in ``e`` plies, so the
  position is won in at most ``e``.
* ``TENT_LOSS + e``: undecided, and every capture or promotion loses, the slowest in ``e``.
* ``ILLEGAL``: not a legal position (or not a placement of the index).

A finished table keeps only ``DECIDED + d``, ``DRAW`` (= ``UNKNOWN``) and ``ILLEGAL``.

``cnt`` (uint8) counts the moves that stay in the table, to distinct successors, not yet
known to win for the opponent; ``CANT_LOSE`` marks positions that have a drawing or
winning way out and can never be lost.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..endgame.board import ON_DIAGONAL
from ..endgame.index import D_PAWNFUL, decode
from ..endgame.movegen import (MAX_MOVES, SQ_BIT, ep_exits, ep_predecessors, grow, in_check, is_legal,
                               predecessors, setup_board, successors, unique_small, walk_to)

UNKNOWN = np.uint16(0)
DRAW = UNKNOWN
DECIDED = np.uint16(0x1000)
TENT_LOSS = np.uint16(0x4000)
TENT_WIN = np.uint16(0x8000)
ILLEGAL = np.uint16(0xFFFF)
DEPTH_MASK = np.uint16(0x0FFF)
MAX_DEPTH = 0x0FFF
CANT_LOSE = np.uint8(255)


@njit(cache=True)
def _exit_summary(subvals, suboff, o_sub, o_stm, o_idx, m):
    """Over the exits among ``m`` moves, from the mover's side: the fastest win (MAX_DEPTH + 1
    if none), whether one draws, the slowest loss (0 if none), and how many exits reach a
    position their sub-table marks illegal."""
    best_win = MAX_DEPTH + 1
    worst_loss = 0
    has_draw = False
    bad = 0
    for k in range(m):
        sid = o_sub[k]
        if sid < 0:
            continue
        v = subvals[suboff[sid, o_stm[k]] + o_idx[k]]
        if v == ILLEGAL:
            bad += 1
        elif v == DRAW:
            has_draw = True
        else:
            d = np.int64(v & DEPTH_MASK)
            if d % 2 == 0:
                best_win = min(best_win, d + 1)
            else:
                worst_loss = max(worst_loss, d + 1)
    return best_win, has_draw, worst_loss, bad


@njit(cache=True)
def ep_pairs_slice(desc, stm, lo, hi, val, exit_id, exit_flip, exit_perm, subdesc, subvals, suboff):
    """En-passant vertices of ``[lo, hi)``: for each legal index ``q`` reached by a double
    step ``p -> q`` after which ``stm`` may capture en passant, the vertex "q with an
    en-passant square" has the moves of ``q`` plus those captures. Returns arrays ``q``,
    ``p``, the captures' summary from ``stm``'s side (fastest win, any draw, slowest loss)
    and whether ``q`` itself has a legal move."""
    cap = 64
    qs = np.empty(cap, dtype=np.int64)
    ps = np.empty(cap, dtype=np.int64)
    wins = np.empty(cap, dtype=np.int64)
    draws = np.empty(cap, dtype=np.bool_)
    losses = np.empty(cap, dtype=np.int64)
    sq = np.empty(16, dtype=np.int64)
    tmp = np.empty(16, dtype=np.int64)
    sub_sq = np.empty(16, dtype=np.int64)
    board = np.empty(64, dtype=np.int64)
    pred = np.empty(16, dtype=np.int64)
    slots = np.empty(16, dtype=np.int64)
    o_sub = np.empty(MAX_MOVES, dtype=np.int64)
    o_stm = np.empty(MAX_MOVES, dtype=np.int64)
    o_idx = np.empty(MAX_MOVES, dtype=np.int64)
    o_ep = np.empty(MAX_MOVES, dtype=np.int64)
    moves = np.empty(cap, dtype=np.bool_)
    k = 0
    bad_exits = 0
    for x in range(lo, hi):
        if val[x - lo] == ILLEGAL:
            continue
        decode(desc, x, sq)
        occ = setup_board(desc, sq, board)
        n = ep_predecessors(desc, sq, x, stm, board, occ, tmp, pred, slots)
        if n:
            q_moves = successors(desc, sq, x, stm, board, occ, exit_id, exit_flip, exit_perm, subdesc, tmp, sub_sq,
                                 o_sub, o_stm, o_idx, o_ep) > 0
        for a in range(n):
            m = ep_exits(desc, sq, stm, occ, slots[a], exit_id, exit_flip, exit_perm, subdesc, tmp, sub_sq,
                         o_sub, o_stm, o_idx)
            w, dr, ls, bad = _exit_summary(subvals, suboff, o_sub, o_stm, o_idx, m)
            bad_exits += bad
            if k == cap:
                cap *= 2
                qs, ps, wins, losses = grow(qs, cap), grow(ps, cap), grow(wins, cap), grow(losses, cap)
                draws, moves = grow(draws, cap), grow(moves, cap)
            qs[k], ps[k], wins[k], draws[k], losses[k], moves[k] = x, pred[a], w, dr, ls, q_moves
            k += 1
    return qs[:k], ps[:k], wins[:k], draws[:k], losses[:k], moves[:k], bad_exits


@njit(cache=True)
def _has_moves(desc, sq, stm, occ, exit_id, exit_flip, exit_perm, subdesc, tmp, sub_sq,
               o_sub, o_stm, o_idx, o_ep):
    board = np.empty(64, dtype=np.int64)
    setup_board(desc, sq, board)
    return successors(desc, sq, -1, stm, board, occ, exit_id, exit_flip, exit_perm, subdesc, tmp, sub_sq,
                      o_sub, o_stm, o_idx, o_ep) > 0


@njit(cache=True)
def ep_vertex_value(vq, q_has_moves, best_win, has_draw, worst_loss):
    """Final value of "q with an en-passant square" from q's final value and the
    en-passant captures' summary (side to move's view). A stalemated q adds no draw: the
    captures are then the vertex's only moves."""
    if not q_has_moves:
        if best_win <= MAX_DEPTH:
            return DECIDED | np.uint16(best_win)
        return DRAW if has_draw else DECIDED | np.uint16(worst_loss)
    q_decided = vq != ILLEGAL and (vq & np.uint16(0xF000)) == DECIDED
    dq = np.int64(vq & DEPTH_MASK)
    if q_decided and dq % 2 == 1:
        return DECIDED | np.uint16(min(dq, best_win))
    if best_win <= MAX_DEPTH:
        return DECIDED | np.uint16(best_win)
    if has_draw or not q_decided:
        return DRAW
    return DECIDED | np.uint16(max(dq, worst_loss))


@njit(cache=True)
def _king_move_repeats(idx, is_king, n):
    """How many king-move successors repeat the index of another successor (counted once
    per repeated index); the other successors are distinct among themselves."""
    repeats = 0
    for p in range(n):
        if not is_king[p]:
            continue
        for q in range(n):
            if q != p and idx[q] == idx[p] and (q < p or not is_king[q]):
                repeats += 1
                break
    return repeats


@njit(cache=True)
def init_slice(desc, stm, lo, hi, exit_id, exit_flip, exit_perm, subdesc, subvals, suboff, val, cnt):
    """First stage: classify every index of ``[lo, hi)`` and read its exits.

    Writes ``val``/``cnt`` (length ``hi - lo``). Returns the number of exits that led to a
    position the sub-table marks illegal (a bug or a corrupted sub-table: must be 0).
    """
    sq = np.empty(16, dtype=np.int64)
    tmp = np.empty(16, dtype=np.int64)
    sub_sq = np.empty(16, dtype=np.int64)
    board = np.empty(64, dtype=np.int64)
    o_sub = np.empty(MAX_MOVES, dtype=np.int64)
    o_stm = np.empty(MAX_MOVES, dtype=np.int64)
    o_idx = np.empty(MAX_MOVES, dtype=np.int64)
    o_ep = np.empty(MAX_MOVES, dtype=np.int64)
    inside = np.empty(MAX_MOVES, dtype=np.int64)
    is_king = np.empty(MAX_MOVES, dtype=np.bool_)
    bad_exits = 0
    for x in range(lo, hi):
        j = x - lo
        occ = walk_to(desc, x, x == lo, sq, board, tmp)
        if occ == 0 or not is_legal(desc, sq, stm, occ):
            val[j] = ILLEGAL
            cnt[j] = 0
            continue
        m = successors(desc, sq, x, stm, board, occ, exit_id, exit_flip, exit_perm, subdesc, tmp, sub_sq,
                       o_sub, o_stm, o_idx, o_ep)
        if m == 0:
            if in_check(desc, sq, stm, occ):
                val[j] = DECIDED
                cnt[j] = 0
            else:
                val[j] = DRAW
                cnt[j] = CANT_LOSE
            continue
        n_in = 0
        for k in range(m):
            if o_sub[k] < 0:
                inside[n_in] = o_idx[k]
                is_king[n_in] = o_ep[k] == -2
                n_in += 1
        best_win, has_draw, worst_loss, bad = _exit_summary(subvals, suboff, o_sub, o_stm, o_idx, m)
        bad_exits += bad
        if best_win <= MAX_DEPTH:
            val[j] = TENT_WIN | np.uint16(best_win)
            cnt[j] = CANT_LOSE
        elif has_draw:
            val[j] = UNKNOWN
            cnt[j] = CANT_LOSE
        else:
            if not desc[D_PAWNFUL] and ON_DIAGONAL[sq[0]] and ON_DIAGONAL[sq[1]]:
                distinct = unique_small(inside, n_in)
            else:
                distinct = n_in - _king_move_repeats(inside, is_king, n_in)
            cnt[j] = np.uint8(distinct)
            val[j] = (TENT_LOSS | np.uint16(worst_loss)) if worst_loss > 0 else UNKNOWN
    return bad_exits


@njit(cache=True)
def expand(desc, stm, frontier):
    """Un-move every position of ``frontier`` (side to move ``stm``, all decided at the
    last ply): the distinct predecessors of each, side to move ``1 - stm``, concatenated."""
    sq = np.empty(16, dtype=np.int64)
    tmp = np.empty(16, dtype=np.int64)
    board = np.empty(64, dtype=np.int64)
    buf = np.empty(MAX_MOVES, dtype=np.int64)
    cap = max(64, frontier.shape[0] * 8)
    out = np.empty(cap, dtype=np.int64)
    k = 0
    for x in frontier:
        decode(desc, x, sq)
        occ = setup_board(desc, sq, board)
        m = unique_small(buf, predecessors(desc, sq, x, stm, board, occ, tmp, buf))
        if k + m > cap:
            cap = 2 * (k + m)
            out = grow(out[:k], cap)
        out[k:k + m] = buf[:m]
        k += m
    return out[:k]


@njit(cache=True)
def apply_wins(val, lo, preds, ply):
    """Predecessors of positions lost at ``ply - 1`` win at ``ply`` unless decided before.
    Returns the newly decided indices."""
    out = np.empty(preds.shape[0], dtype=np.int64)
    k = 0
    decided = DECIDED | np.uint16(ply)
    for x in preds:
        v = val[x - lo]
        if v == ILLEGAL or (v & np.uint16(0xF000)) == DECIDED:
            continue
        val[x - lo] = decided
        out[k] = x
        k += 1
    return out[:k]


@njit(cache=True)
def apply_losses(val, cnt, lo, preds, ply):
    """Predecessors of positions won at ``ply - 1`` lose one way out; those left with none
    lose at ``max(ply, slowest losing exit)``. Returns the indices decided now, and the
    indices (with their ply) whose losing exit is slower than ``ply``."""
    now = np.empty(preds.shape[0], dtype=np.int64)
    later = np.empty(preds.shape[0], dtype=np.int64)
    later_ply = np.empty(preds.shape[0], dtype=np.int64)
    a = 0
    b = 0
    for x in preds:
        j = x - lo
        v = val[j]
        c = cnt[j]
        if c == CANT_LOSE or c == 0 or v == ILLEGAL or (v & np.uint16(0xF000)) == DECIDED:
            continue
        c -= 1
        cnt[j] = c
        if c == 0:
            floor = np.int64(v & DEPTH_MASK) if (v & np.uint16(0xF000)) == TENT_LOSS else 0
            if floor <= ply:
                val[j] = DECIDED | np.uint16(ply)
                now[a] = x
                a += 1
            else:
                later[b] = x
                later_ply[b] = floor
                b += 1
    return now[:a], later[:b], later_ply[:b]


@njit(cache=True)
def decide_pending(val, lo, pending, ply):
    """Positions whose capture/promotion exit decides them at ``ply`` (a win found earlier
    by a faster in-table move is left alone). Returns the newly decided indices."""
    out = np.empty(pending.shape[0], dtype=np.int64)
    k = 0
    decided = DECIDED | np.uint16(ply)
    for x in pending:
        v = val[x - lo]
        if (v & np.uint16(0xF000)) == DECIDED and v != ILLEGAL:
            continue
        val[x - lo] = decided
        out[k] = x
        k += 1
    return out[:k]


@njit(cache=True)
def finalize(val):
    """Undecided positions are draws."""
    for j in range(val.shape[0]):
        v = val[j]
        if v != ILLEGAL and (v & np.uint16(0xF000)) != DECIDED:
            val[j] = DRAW


@njit(cache=True)
def verify_slice(desc, stm, lo, hi, own, other, exit_id, exit_flip, exit_perm, subdesc, subvals, suboff):
    """Re-check ``own`` (final values of ``[lo, hi)``, side to move ``stm``) against
    Romano's definitions from each position's successors: ``other`` holds the table's
    final values for the other side to move, ``subvals``/``suboff`` the sub-tables'.

    Returns the offsets (from ``lo``) of the positions that disagree.
    """
    sq = np.empty(16, dtype=np.int64)
    tmp = np.empty(16, dtype=np.int64)
    sub_sq = np.empty(16, dtype=np.int64)
    board = np.empty(64, dtype=np.int64)
    o_sub = np.empty(MAX_MOVES, dtype=np.int64)
    o_stm = np.empty(MAX_MOVES, dtype=np.int64)
    o_idx = np.empty(MAX_MOVES, dtype=np.int64)
    o_ep = np.empty(MAX_MOVES, dtype=np.int64)
    e_sub = np.empty(MAX_MOVES, dtype=np.int64)
    e_stm = np.empty(MAX_MOVES, dtype=np.int64)
    e_idx = np.empty(MAX_MOVES, dtype=np.int64)
    e_ep = np.empty(MAX_MOVES, dtype=np.int64)
    bad = np.empty(hi - lo, dtype=np.int64)
    nbad = 0
    for x in range(lo, hi):
        j = x - lo
        occ = walk_to(desc, x, x == lo, sq, board, tmp)
        if occ == 0 or not is_legal(desc, sq, stm, occ):
            if own[j] != ILLEGAL:
                bad[nbad] = j
                nbad += 1
            continue
        m = successors(desc, sq, x, stm, board, occ, exit_id, exit_flip, exit_perm, subdesc, tmp, sub_sq,
                       o_sub, o_stm, o_idx, o_ep)
        # Expected value: win in 1 + min over lost successors, else draw if any successor
        # is not a win for the opponent, else loss in 1 + max; no move: mate or stalemate.
        best_win = MAX_DEPTH + 1
        worst_loss = -1
        any_draw = False
        for k in range(m):
            if o_sub[k] < 0 and o_ep[k] >= 0:
                # A double step that allows en passant: the successor is the en-passant vertex.
                i = o_ep[k]
                frm = sq[i]
                to = frm + (16 if stm == 0 else -16)
                sq[i] = to
                occ2 = (occ ^ SQ_BIT[frm]) | SQ_BIT[to]
                ne = ep_exits(desc, sq, 1 - stm, occ2, i, exit_id, exit_flip, exit_perm, subdesc, tmp, sub_sq,
                              e_sub, e_stm, e_idx)
                w, dr, ls, nb = _exit_summary(subvals, suboff, e_sub, e_stm, e_idx, ne)
                q_moves = _has_moves(desc, sq, 1 - stm, occ2, exit_id, exit_flip, exit_perm, subdesc, tmp, sub_sq,
                                     e_sub, e_stm, e_idx, e_ep)
                sq[i] = frm
                v = ILLEGAL if nb else ep_vertex_value(other[o_idx[k]], q_moves, w, dr, ls)
            elif o_sub[k] < 0:
                v = other[o_idx[k]]
            else:
                v = subvals[suboff[o_sub[k], o_stm[k]] + o_idx[k]]
            if v == ILLEGAL:
                any_draw = True  # impossible successor: force a mismatch below
                best_win = -1
            elif v == DRAW:
                any_draw = True
            else:
                d = np.int64(v & DEPTH_MASK)
                if d % 2 == 0:
                    best_win = min(best_win, d + 1)
                else:
                    worst_loss = max(worst_loss, d + 1)
        if m == 0:
            expect = DECIDED if in_check(desc, sq, stm, occ) else DRAW
        elif best_win < 0:
            expect = ILLEGAL
        elif best_win <= MAX_DEPTH:
            expect = DECIDED | np.uint16(best_win)
        elif any_draw:
            expect = DRAW
        else:
            expect = DECIDED | np.uint16(worst_loss)
        if own[j] != expect:
            bad[nbad] = j
            nbad += 1
    return bad[:nbad]


def to_wdl_dtm(val: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Final values to (wdl int8, dtm int16, legal bool), python-chess conventions."""
    legal = val != ILLEGAL
    d = (val & DEPTH_MASK).astype(np.int16)
    decided = legal & ((val & np.uint16(0xF000)) == DECIDED)
    win = decided & (d % 2 == 1)
    loss = decided & (d % 2 == 0)
    wdl = np.zeros(val.shape, dtype=np.int8)
    wdl[win] = 1
    wdl[loss] = -1
    dtm = np.where(win, d, np.where(loss, -d, 0)).astype(np.int16)
    return wdl, dtm, legal


def from_wdl_dtm(wdl: np.ndarray, dtm: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Inverse of :func:`to_wdl_dtm`."""
    val = np.where(wdl != 0, DECIDED + np.abs(dtm.astype(np.int32)), DRAW).astype(np.uint16)
    val[~legal] = ILLEGAL
    return val
