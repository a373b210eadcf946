"""Compiled kernels of the generation stages, each a pure function over one slice.

Values live in one uint16 per position, 2 bytes in all: :mod:`tablebase.generate.values`
owns that encoding. The positions decided at a ply are found again by their value, not
kept in lists.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..endgame.board import ON_DIAGONAL, ON_LONG_DIAGONAL
from ..endgame.index import D_N, D_PAWNFUL, decode, leaf
from ..endgame.movegen import (KING_MOVE, MAX_MOVES, PAWN_PUSH, SQ_BIT, _exits_counting, _exits_into,
                               _pawn_moves_into, _predecessors_into, _successors_into, _walk_to, attacked, ep_exits,
                               ep_predecessors, exits, grow, scratch, setup_board, successors, unique_small)
from .values import (CANT_LOSE, DECIDED, DEPTH_MASK, DRAW, EXIT_DECIDED, EXIT_DRAW, EXIT_LOSS, ILLEGAL, KIND_MASK,
                     MAX_DEPTH, MAX_EXIT_LOSS, MAX_WAYS, TENT_WIN, ZLOST, ZWON, exit_loss_code, is_decided, is_zdecided,
                     resolve, zero_code)

@njit(cache=True, inline="always")
def _exit_summary(subvals, suboff, o_sub, o_stm, o_idx, m):
    """Over the exits among ``m`` moves, from the mover's side: the fastest win (MAX_DEPTH + 1
    if none), whether one draws, the slowest loss (0 if none), and how many exits reach a
    position their sub-table marks illegal (or a side of it not loaded: offset -1)."""
    best_win = MAX_DEPTH + 1
    worst_loss = 0
    has_draw = False
    bad = 0
    for k in range(m):
        sid = o_sub[k]
        if sid < 0:
            continue
        off = suboff[sid, o_stm[k]]
        v = ILLEGAL if off < 0 else subvals[off + o_idx[k]]
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
def ep_pairs_slice(desc, stm, lo, hi, val, exit_map, subvals, suboff):
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
    s = scratch()
    sq, tmp, sub_sq, board, o_sub, o_stm, o_idx, o_ep = s.sq, s.tmp, s.sub_sq, s.board, s.o_sub, s.o_stm, s.o_idx, s.o_ep
    pred, slots = s.e_idx, s.e_ep  # the un-moves' double steps (the e_* lists are free here)
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
            q_moves = successors(desc, sq, x, stm, board, occ, exit_map, tmp, sub_sq, o_sub, o_stm, o_idx, o_ep) > 0
        for a in range(n):
            m = ep_exits(desc, sq, stm, occ, slots[a], exit_map, tmp, sub_sq, o_sub, o_stm, o_idx)
            w, dr, ls, bad = _exit_summary(subvals, suboff, o_sub, o_stm, o_idx, m)
            bad_exits += bad
            if k == cap:
                cap *= 2
                qs, ps, wins, losses = grow(qs, cap), grow(ps, cap), grow(wins, cap), grow(losses, cap)
                draws, moves = grow(draws, cap), grow(moves, cap)
            qs[k], ps[k], wins[k], draws[k], losses[k], moves[k] = x, pred[a], w, dr, ls, q_moves
            k += 1
    return qs[:k], ps[:k], wins[:k], draws[:k], losses[:k], moves[:k], bad_exits


@leaf
def _has_moves(desc, stm, occ, exit_map, s):
    """Whether ``stm`` has a legal move in the placement ``s.sq`` (its moves into the
    ``e_*`` lists, on ``s.board2``)."""
    setup_board(desc, s.sq, s.board2)
    # np.int64: a literal -1 would make numba compile the whole move generation a second
    # time, for that constant.
    return successors(desc, s.sq, np.int64(-1), stm, s.board2, occ, exit_map, s.tmp, s.sub_sq,
                      s.e_sub, s.e_stm, s.e_idx, s.e_ep) > 0


@njit(cache=True)
def ep_vertex_value(vq, q_has_moves, best_win, has_draw, worst_loss):
    """Final value of "q with an en-passant square" from q's final value and the
    en-passant captures' summary (side to move's view). A stalemated q adds no draw: the
    captures are then the vertex's only moves."""
    if not q_has_moves:
        if best_win <= MAX_DEPTH:
            return DECIDED | np.uint16(best_win)
        return DRAW if has_draw else DECIDED | np.uint16(worst_loss)
    q_decided = vq != ILLEGAL and is_decided(vq)
    dq = np.int64(vq & DEPTH_MASK)
    if q_decided and dq % 2 == 1:
        return DECIDED | np.uint16(min(dq, best_win))
    if best_win <= MAX_DEPTH:
        return DECIDED | np.uint16(best_win)
    if has_draw or not q_decided:
        return DRAW
    return DECIDED | np.uint16(max(dq, worst_loss))


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _all_distinct(desc, sq, stm):
    """Whether the in-table successors of placement ``sq`` surely reach distinct indices:
    two share one only through a symmetry fixing the king that does not move (see
    _predecessors_into), which a pawn, or that king off the long diagonal, rules out."""
    return desc[D_PAWNFUL] or not ON_LONG_DIAGONAL[sq[1 - stm]]


@njit(cache=True, inline="always")
def _distinct(desc, sq, stm, inside, is_king, n_in):
    """How many distinct indices the ``n_in`` in-table successors ``inside`` reach."""
    if _all_distinct(desc, sq, stm):
        return n_in
    if ON_DIAGONAL[sq[0]] and ON_DIAGONAL[sq[1]]:
        return unique_small(inside, n_in)
    return n_in - _king_move_repeats(inside, is_king, n_in)


@njit(cache=True)
def init_slice(desc, stm, lo, hi, exit_map, subvals, suboff, val, settles):
    """First stage: classify every index of ``[lo, hi)`` and read its exits.

    Writes ``val`` and ``settles`` (length ``hi - lo``): the ply at which the exits decide
    something (:func:`settle_exits`: a capture or promotion wins, or the last losing one
    goes), 0 for none. Returns the number of exits that led to a position the sub-table
    marks illegal (a bug or a corrupted sub-table: must be 0) and of positions with more
    ways out, or a slower losing exit, than a value holds.
    """
    return _init_loop(desc, stm, lo, hi, exit_map, subvals, suboff, val, settles, scratch())


@leaf
def _init_loop(desc, stm, lo, hi, exit_map, subvals, suboff, val, settles, s):
    """:func:`init_slice` with its scratch arrays: one compiled loop, the move generation
    inlined (a call per position passes each array as seven words)."""
    sq, tmp, sub_sq, board, inside, is_king = s.sq, s.tmp, s.sub_sq, s.board, s.inside, s.is_king
    o_sub, o_stm, o_idx, o_ep = s.o_sub, s.o_stm, s.o_idx, s.o_ep
    bad_exits = 0
    overflow = 0
    for x in range(lo, hi):
        j = x - lo
        settles[j] = 0
        occ = _walk_to(desc, x, x == lo, sq, board, tmp)
        if occ == 0 or attacked(desc, sq, occ, sq[1 - stm], stm, -1):
            val[j] = ILLEGAL
            continue
        # m: the moves listed (the exits among them); n_in: the distinct in-table successors.
        if _all_distinct(desc, sq, stm):
            # How many moves stay in the table is all that matters of them: counted by
            # their target masks, not generated; the lists hold the exits alone.
            m, n_in = _exits_counting(desc, sq, stm, board, occ, exit_map, tmp, sub_sq, o_sub, o_stm, o_idx, True)
        else:
            m = _successors_into(desc, sq, x, stm, board, occ, exit_map, tmp, sub_sq, o_sub, o_stm, o_idx, 0, o_ep,
                                 True)
            n_in = 0
            for k in range(m):
                if o_sub[k] < 0:
                    inside[n_in] = o_idx[k]
                    is_king[n_in] = o_ep[k] == KING_MOVE
                    n_in += 1
            n_in = _distinct(desc, sq, stm, inside, is_king, n_in)
        if m == 0 and n_in == 0:
            # A stalemate is a draw with no exit (CANT_LOSE says a capture or promotion draws).
            val[j] = DECIDED if attacked(desc, sq, occ, sq[stm], 1 - stm, -1) else DRAW
            continue
        best_win, has_draw, worst_loss, bad = _exit_summary(subvals, suboff, o_sub, o_stm, o_idx, m)
        bad_exits += bad
        if best_win <= MAX_DEPTH:
            val[j] = TENT_WIN | np.uint16(best_win)
            settles[j] = best_win
        elif has_draw:
            val[j] = CANT_LOSE
        else:
            ways = n_in
            if worst_loss > 0:
                ways += 1
            if ways > MAX_WAYS or worst_loss > MAX_EXIT_LOSS:
                overflow += 1
                ways = min(ways, MAX_WAYS)
                worst_loss = min(worst_loss, MAX_EXIT_LOSS)
            if worst_loss > 0:
                val[j] = exit_loss_code(worst_loss) + np.uint16(ways)
                settles[j] = worst_loss
            else:
                val[j] = ways
    return bad_exits, overflow


@njit(cache=True, inline="always")
def _apply_one(other, j, ply, win):
    """Apply to offset ``j`` of ``other`` a successor decided at ``ply - 1``: lost (``win``:
    ``j`` wins at ``ply`` unless decided before) or won (``j`` loses a way out, and at
    none left loses at ``ply``). Returns whether ``j`` is decided now."""
    v = other[j]
    if win:
        if v == ILLEGAL or is_decided(v):
            return False
        # Marked where a capture or promotion wins as fast: its shards may leave it to the exits.
        other[j] = (EXIT_DECIDED if v == TENT_WIN | np.uint16(ply) else DECIDED) | np.uint16(ply)
        return True
    if not (0 < v < CANT_LOSE or EXIT_LOSS <= v < TENT_WIN):  # decided, can't lose, wins, illegal
        return False
    if v == 1:
        other[j] = DECIDED | np.uint16(ply)
        return True
    other[j] = v - np.uint16(1)
    return False


@njit(cache=True, inline="always")
def _zapply_one(other, j, e, win):
    """:func:`_apply_one` for DTZ codes: ``win`` says whether the successor decided at
    ``e - 1`` was lost (distances have no parity)."""
    v = other[j]
    if win:
        if v == ILLEGAL or is_zdecided(v):
            return False
        other[j] = ZWON | np.uint16(e)
        return True
    if not (0 < v < CANT_LOSE or EXIT_LOSS <= v < TENT_WIN):
        return False
    if v == 1:
        other[j] = ZLOST | np.uint16(e)
        return True
    other[j] = v - np.uint16(1)
    return False


@njit(cache=True)
def retro_step(desc, stm, frontier, lo, hi, other, ply, win, dtz, shift, hits):
    """One ply's backward step from ``frontier`` (indices of side ``stm`` decided at ``ply - 1``,
    lost if ``win``, else won): un-move each, and apply every predecessor (side ``1 - stm``)
    that falls in ``[lo, hi)`` to ``other`` (its values from ``lo``: DTM codes, or with
    ``dtz`` DTZ codes and only the piece moves), counting the positions decided per slice
    per block in ``hits`` (index ``y`` in ``hits[(y - lo) >> shift]``).

    Returns how many positions it decided and the predecessors outside ``[lo, hi)``, for
    the partitions that own them (to :func:`apply_predecessors`).
    """
    s = scratch()  # its board is kept from position to position: see _retro_loop
    # Grown as needed: the caller keeps what this returns, so it should not pin more than
    # about twice that (most un-moves of a partition land in it).
    remote = np.empty(4 * MAX_MOVES, dtype=np.int64)
    # Typed, not literal 0: numba would compile _retro_loop a second time for the constants.
    done = np.int64(0)
    decided = 0
    n_remote = np.int64(0)
    while done < frontier.shape[0]:
        if n_remote + MAX_MOVES > remote.shape[0]:
            remote = grow(remote[:n_remote], 2 * remote.shape[0])
        done, d, n_remote = _retro_loop(desc, stm, frontier, done, lo, hi, other, ply, win, dtz, shift, hits,
                                        remote, n_remote, s)
        decided += d
    return decided, remote[:n_remote]


@leaf
def _retro_loop(desc, stm, frontier, start, lo, hi, other, ply, win, dtz, shift, hits, remote, n_remote, s):
    """:func:`retro_step` from ``frontier[start]`` until done or ``remote`` has room for
    fewer than MAX_MOVES more; returns where it stopped, how many it decided, the new
    ``n_remote``."""
    sq, tmp, board, buf = s.sq, s.tmp, s.board, s.inside
    n = desc[D_N]
    decided = 0
    i = start
    cap = remote.shape[0]
    while i < frontier.shape[0] and n_remote + MAX_MOVES <= cap:
        x = frontier[i]
        i += 1
        # The board is cleared square by square: filling all 64 costs more.
        for j in range(n):
            board[sq[j]] = -1
        decode(desc, x, sq)
        occ = np.uint64(0)
        for j in range(n):
            board[sq[j]] = j
            occ |= SQ_BIT[sq[j]]
        # Duplicates only matter where a way out is counted: at the plies that find losses.
        m = _predecessors_into(desc, sq, x, stm, board, occ, tmp, buf, not win, dtz)
        for a in range(m):
            y = buf[a]
            if y < lo or y >= hi:
                remote[n_remote] = y
                n_remote += 1
            elif _zapply_one(other, y - lo, ply, win) if dtz else _apply_one(other, y - lo, ply, win):
                hits[(y - lo) >> shift] += 1
                decided += 1
    return i, decided, n_remote


@njit(cache=True)
def route_predecessors(preds, owner, span, parts):
    """Group predecessors by the partition that owns them: ``preds`` (indices, or ``-y - 1``
    for DTZ's won ones) reordered so that partition ``p``'s are ``out[at[p]:at[p + 1]]``,
    each group in its order. ``owner[slice]`` is the partition of a slice of ``span``
    indices. One array the size of ``preds``, where numpy's masks and index arrays took
    about six: at a KQRvKR partition's largest plies, a third of its peak memory."""
    at = np.zeros(parts + 1, dtype=np.int64)
    for y in preds:
        at[owner[(y ^ (y >> 63)) // span] + 1] += 1
    for p in range(parts):
        at[p + 1] += at[p]
    fill = at[:parts].copy()
    out = np.empty_like(preds)
    for y in preds:
        d = owner[(y ^ (y >> 63)) // span]
        out[fill[d]] = y
        fill[d] += 1
    return out, at


@njit(cache=True)
def apply_predecessors(other, lo, preds, ply, win, dtz, shift, hits):
    """Apply predecessors (all in ``[lo, hi)``) of positions decided at ``ply - 1``, as
    :func:`retro_step` does; ``win``: their successor was lost. Returns how many it decided."""
    decided = 0
    for y in preds:
        if _zapply_one(other, y - lo, ply, win) if dtz else _apply_one(other, y - lo, ply, win):
            hits[(y - lo) >> shift] += 1
            decided += 1
    return decided


@njit(cache=True)
def settle_exits(val, ply, base, shift, hits):
    """What the exits decide at ``ply`` in ``val``: at an odd ply a capture or promotion
    wins; at an even one the slowest of all-losing exits goes as a way out (and the
    position is lost if it was the last). Counts those it decides per block, ``val[j]`` in
    ``hits[(base + j) >> shift]``, and returns how many."""
    decided = 0
    now = TENT_WIN | np.uint16(ply)
    code = exit_loss_code(ply)
    a = 0
    while a < val.shape[0]:  # block by block: an increment of hits per position costs 4x the loop
        z = _block_end(val.shape[0], base, shift, a)
        run = val[a:z]  # a loop over a view's own range vectorises, one over range(a, z) does not
        n = 0
        if ply % 2 == 1:
            for j in range(run.shape[0]):
                if run[j] == now:
                    run[j] = EXIT_DECIDED | np.uint16(ply)
                    n += 1
        else:
            for j in range(run.shape[0]):
                v = run[j]
                if code <= v <= code + MAX_WAYS:
                    if v == code + 1:
                        run[j] = EXIT_DECIDED | np.uint16(ply)
                        n += 1
                    else:
                        run[j] = v - code - np.uint16(1)
        hits[(base + a) >> shift] += n
        decided += n
        a = z
    return decided


@njit(cache=True, inline="always")
def _block_end(n, base, shift, a):
    """The end of the run of ``range(n)`` from ``a`` in one block (``j`` in block
    ``(base + j) >> shift``)."""
    return min(n, ((((base + a) >> shift) + 1) << shift) - base)


@njit(cache=True)
def verify_slice(desc, stm, lo, hi, own, other, exit_map, subvals, suboff):
    """Re-check ``own`` (final values of ``[lo, hi)``, side to move ``stm``) against
    Romano's definitions from each position's successors: ``other`` holds the table's
    final values for the other side to move, ``subvals``/``suboff`` the sub-tables'.

    Returns the offsets (from ``lo``) of the positions that disagree.
    """
    bad = np.empty(hi - lo, dtype=np.int64)
    nbad = _verify_loop(desc, stm, lo, hi, own, other, exit_map, subvals, suboff, scratch(), bad)
    return bad[:nbad]


@leaf
def _verify_loop(desc, stm, lo, hi, own, other, exit_map, subvals, suboff, s, bad):
    """:func:`verify_slice` with its scratch arrays, one compiled loop like init's; returns
    how many offsets it wrote to ``bad``."""
    sq, tmp, sub_sq, board = s.sq, s.tmp, s.sub_sq, s.board
    o_sub, o_stm, o_idx, o_ep, e_sub, e_stm, e_idx = s.o_sub, s.o_stm, s.o_idx, s.o_ep, s.e_sub, s.e_stm, s.e_idx
    nbad = 0
    for x in range(lo, hi):
        j = x - lo
        occ = _walk_to(desc, x, x == lo, sq, board, tmp)
        if occ == 0 or attacked(desc, sq, occ, sq[1 - stm], stm, -1):
            if own[j] != ILLEGAL:
                bad[nbad] = j
                nbad += 1
            continue
        m = _successors_into(desc, sq, x, stm, board, occ, exit_map, tmp, sub_sq, o_sub, o_stm, o_idx, 0, o_ep, True)
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
                ne = ep_exits(desc, sq, 1 - stm, occ2, i, exit_map, tmp, sub_sq, e_sub, e_stm, e_idx)
                w, dr, ls, nb = _exit_summary(subvals, suboff, e_sub, e_stm, e_idx, ne)
                q_moves = _has_moves(desc, 1 - stm, occ2, exit_map, s)
                sq[i] = frm
                v = ILLEGAL if nb else ep_vertex_value(other[o_idx[k]], q_moves, w, dr, ls)
            elif o_sub[k] < 0:
                v = other[o_idx[k]]
            else:
                off = suboff[o_sub[k], o_stm[k]]
                v = ILLEGAL if off < 0 else subvals[off + o_idx[k]]
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
            expect = DECIDED if attacked(desc, sq, occ, sq[stm], 1 - stm, -1) else DRAW
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
    return nbad


@njit(cache=True)
def resolve_slice(desc, stm, lo, hi, stored, exit_map, subvals, suboff, out):
    """Exact codes of ``[lo, hi)`` (side to move ``stm``) into ``out``, from the shards'
    codes ``stored`` (:func:`~tablebase.generate.values.exact_from_stored` of the
    ``value`` column, index order): ILLEGAL where the index is no legal position, else
    the better of the stored value and the best capture or promotion, whose values the
    sub-tables ``subvals``/``suboff`` hold (exact). Returns how many exits reached a
    position their sub-table marks illegal or a side not loaded (must be 0)."""
    return _resolve_loop(desc, stm, lo, hi, stored, exit_map, subvals, suboff, out, scratch())


@leaf
def _resolve_loop(desc, stm, lo, hi, stored, exit_map, subvals, suboff, out, s):
    sq, tmp, sub_sq, board, o_sub, o_stm, o_idx = s.sq, s.tmp, s.sub_sq, s.board, s.o_sub, s.o_stm, s.o_idx
    bad_exits = 0
    for x in range(lo, hi):
        j = x - lo
        occ = _walk_to(desc, x, x == lo, sq, board, tmp)
        if occ == 0 or attacked(desc, sq, occ, sq[1 - stm], stm, -1):
            out[j] = ILLEGAL
            continue
        v = stored[j]
        m = _exits_into(desc, sq, stm, board, occ, exit_map, tmp, sub_sq, o_sub, o_stm, o_idx)
        if m:
            best_win, has_draw, worst_loss, bad = _exit_summary(subvals, suboff, o_sub, o_stm, o_idx, m)
            bad_exits += bad
            v = resolve(v, best_win, has_draw, worst_loss)
        out[j] = v
    return bad_exits


# -- the 50-move rule (see values: DTZ50'') -------------------------------------------------

@njit(cache=True, inline="always")
def _zero_class(subcls, suboff, sid, stm, idx):
    """A sub-table position's class from its side to move (3: a side not loaded)."""
    off = suboff[sid, stm]
    return np.int64(3) if off < 0 else np.int64(subcls[off + idx])


@njit(cache=True)
def zinit_slice(desc, stm, lo, hi, exit_map, subcls, suboff, them_cls, zval, settles):
    """First stage of a DTZ pass over ``[lo, hi)`` (side to move ``stm``): classify each
    index and value its zeroing moves. ``subcls``/``suboff``: the sub-tables' classes
    (:class:`~tablebase.generate.partition.SubtableValues` of int8), both sides of those a
    capture or an en-passant capture reaches; ``them_cls``: this table's classes for the
    other side to move (all of it), which its pawn moves reach; those of a position with an
    en-passant square come from its moves here. Writes ``zval`` and ``settles`` (the
    distance at which the zeroing moves decide something, 0 for none); returns how many
    zeroing moves reached a side not loaded (must be 0) and of positions with more ways
    out than a value holds."""
    return _zinit_loop(desc, stm, lo, hi, exit_map, subcls, suboff, them_cls, zval, settles, scratch())


@leaf
def _zinit_loop(desc, stm, lo, hi, exit_map, subcls, suboff, them_cls, zval, settles, s):
    """:func:`zinit_slice` with its scratch arrays, one compiled loop as :func:`_init_loop`."""
    sq, tmp, sub_sq, board, inside, is_king = s.sq, s.tmp, s.sub_sq, s.board, s.inside, s.is_king
    o_sub, o_stm, o_idx, o_ep = s.o_sub, s.o_stm, s.o_idx, s.o_ep
    bad = 0
    overflow = 0
    for x in range(lo, hi):
        j = x - lo
        settles[j] = 0
        occ = _walk_to(desc, x, x == lo, sq, board, tmp)
        if occ == 0 or attacked(desc, sq, occ, sq[1 - stm], stm, -1):
            zval[j] = ILLEGAL
            continue
        # Called, not inlined (half a minute less to compile): this loop runs only where
        # the DTM init's codes were not kept (Partition.dtz_init).
        m = successors(desc, sq, x, stm, board, occ, exit_map, tmp, sub_sq, o_sub, o_stm, o_idx, o_ep)
        if m == 0:
            zval[j] = ZLOST if attacked(desc, sq, occ, sq[stm], 1 - stm, -1) else DRAW
            continue
        fastest_win = MAX_DEPTH + 1
        has_draw = False
        slowest_loss = 0
        n_in = 0
        for k in range(m):
            c = _move_class(desc, stm, occ, k, exit_map, subcls, suboff, them_cls, s)
            if c == PIECE_MOVE:
                inside[n_in] = o_idx[k]
                is_king[n_in] = o_ep[k] == KING_MOVE
                n_in += 1
                continue
            if c == 3:
                bad += 1
                continue
            fastest_win, has_draw, slowest_loss = _tally(c, fastest_win, has_draw, slowest_loss)
        ways = 0
        if fastest_win > MAX_DEPTH and not has_draw:
            ways = _distinct(desc, sq, stm, inside, is_king, n_in)
            if ways + (1 if slowest_loss else 0) > MAX_WAYS:
                overflow += 1
                ways = MAX_WAYS - (1 if slowest_loss else 0)
        zval[j], settles[j] = _zinit_code(fastest_win, has_draw, slowest_loss, ways)
    return bad, overflow


@njit(cache=True, inline="always")
def _tally(c, fastest_win, has_draw, slowest_loss):
    """Add a zeroing move into a position of class ``c`` to the summary of the zeroing moves."""
    z = zero_code(c)
    if z > 0:
        fastest_win = min(fastest_win, z)
    elif z < 0:
        slowest_loss = max(slowest_loss, -z)
    else:
        has_draw = True
    return fastest_win, has_draw, slowest_loss


@njit(cache=True, inline="always")
def _zinit_code(fastest_win, has_draw, slowest_loss, ways):
    """The DTZ init code of a position with moves, from its zeroing moves' summary and its
    ``ways`` out by piece moves, and the distance at which the zeroing moves settle it."""
    if fastest_win <= MAX_DEPTH:
        return TENT_WIN | np.uint16(fastest_win), fastest_win
    if has_draw:
        return CANT_LOSE, 0
    if slowest_loss:
        return exit_loss_code(slowest_loss) + np.uint16(ways + 1), slowest_loss
    return np.uint16(ways), 0


@njit(cache=True)
def zinit_from_dtm(desc, stm, lo, hi, init, final, read_exits, pawn_moves, exit_map,
                   subcls, suboff, them_cls, zval, settles):
    """:func:`zinit_slice` from the slice's DTM init codes ``init`` (:func:`init_slice`'s,
    before any pass) and its finished DTM codes ``final``, generating no piece move. A
    draw without the 50-move rule is one with it (the rule takes wins away, it gives
    none), and no DTZ pass changes a DRAW code (no successor of a draw is lost, and a won
    one takes no way out of it): ``final``'s draws are DRAW at once. The others' ways out
    by piece moves are the DTM init's in-table moves less the pawn moves among them (with
    pawns no two moves reach one index). Its exits are the captures and promotions: where
    no sub-table class is cursed or blessed (``read_exits`` False) the code's summary of
    them says it all (a winning one wins at distance 1, a drawing one draws, a losing one
    loses at 1), else they are generated and their classes read. ``pawn_moves``: the side
    has pawns, whose moves that stay in the table are generated (valued by ``them_cls``,
    an en-passant vertex by its captures too). Returns how many zeroing moves reached a side not loaded (must be 0)."""
    return _zinit_dtm_loop(desc, stm, lo, hi, init, final, read_exits, pawn_moves, exit_map, subcls, suboff,
                           them_cls, zval, settles, scratch())


@leaf
def _zinit_dtm_loop(desc, stm, lo, hi, init, final, read_exits, pawn_moves, exit_map,
                    subcls, suboff, them_cls, zval, settles, s):
    sq, tmp, sub_sq, board, e_sub, e_stm, e_idx = s.sq, s.tmp, s.sub_sq, s.board, s.e_sub, s.e_stm, s.e_idx
    p_idx, p_ep = s.o_idx, s.o_ep  # the pawn moves (the o_* lists are free here)
    bad = 0
    walk = read_exits or pawn_moves
    occ = np.uint64(0)
    for x in range(lo, hi):
        j = x - lo
        settles[j] = 0
        if walk:
            occ = _walk_to(desc, x, x == lo, sq, board, tmp)
        v = init[j]
        if v == ILLEGAL or v == DRAW:  # DRAW: a stalemate (a position with moves has a code of them)
            zval[j] = v
            continue
        if final[j] == DRAW or final[j] == EXIT_DRAW:
            zval[j] = DRAW
            continue
        if v == DECIDED:
            zval[j] = ZLOST
            continue
        exit_win = (v & KIND_MASK) == TENT_WIN
        exit_loss = not exit_win and v >= EXIT_LOSS
        # The DTM init's ways: its in-table moves, and one more for its losing exits (none
        # held beside a winning or drawing exit, where no ways are needed).
        ways = np.int64(v & MAX_WAYS) - (1 if exit_loss else 0)
        fastest_win = MAX_DEPTH + 1
        has_draw = False
        slowest_loss = 0
        # A position without exits has none to read; a drawing exit (CANT_LOSE: none wins)
        # draws whatever the classes.
        if read_exits and (exit_win or exit_loss):
            # Called, not inlined: a rare path (cursed sub-tables), and the exits inlined
            # here took numba half a minute to compile.
            m = exits(desc, sq, stm, board, occ, exit_map, tmp, sub_sq, e_sub, e_stm, e_idx)
            for k in range(m):
                c = _zero_class(subcls, suboff, e_sub[k], e_stm[k], e_idx[k])
                if c == 3:
                    bad += 1
                    continue
                fastest_win, has_draw, slowest_loss = _tally(c, fastest_win, has_draw, slowest_loss)
        else:
            fastest_win = 1 if exit_win else fastest_win
            has_draw = v == CANT_LOSE
            slowest_loss = 1 if exit_loss else 0
        if pawn_moves and fastest_win > 1:  # no pawn move wins faster than a zeroing win
            n = _pawn_moves_into(desc, sq, x, stm, board, occ, tmp, p_idx, p_ep)
            for k in range(n):
                if p_ep[k] == PAWN_PUSH:
                    c = np.int64(them_cls[p_idx[k]])
                else:
                    c = _ep_vertex_class(desc, stm, occ, p_ep[k], p_idx[k], exit_map, subcls, suboff, them_cls, s)
                    if c == 3:
                        bad += 1
                        continue
                fastest_win, has_draw, slowest_loss = _tally(c, fastest_win, has_draw, slowest_loss)
            ways -= n
        zval[j], settles[j] = _zinit_code(fastest_win, has_draw, slowest_loss, ways)
    return bad


#: What :func:`_move_class` gives a piece move (which keeps the clock running).
PIECE_MOVE = -9


@njit(cache=True, inline="always")
def _move_class(desc, stm, occ, k, exit_map, subcls, suboff, them_cls, s):
    """The class of the position move ``k`` of the successor lists (``s.o_*``) leads to,
    from the side to move there, where it zeroes the clock (3: a sub-table side not
    loaded); PIECE_MOVE for a piece move."""
    o_sub, o_stm, o_idx, o_ep = s.o_sub, s.o_stm, s.o_idx, s.o_ep
    if o_sub[k] >= 0:
        return _zero_class(subcls, suboff, o_sub[k], o_stm[k], o_idx[k])
    if o_ep[k] == PAWN_PUSH:
        return np.int64(them_cls[o_idx[k]])
    if o_ep[k] >= 0:
        return _ep_vertex_class(desc, stm, occ, o_ep[k], o_idx[k], exit_map, subcls, suboff, them_cls, s)
    return np.int64(PIECE_MOVE)


@njit(cache=True, inline="always")
def _ep_vertex_class(desc, stm, occ, slot, q, exit_map, subcls, suboff, them_cls, s):
    """The class of "q with an en-passant square" (``q``: the index after the double step
    of the pawn in ``slot`` of ``stm`` in the placement ``s.sq``; side to move ``1 - stm``):
    the better of q's and that of its en-passant captures (q's alone counts only if q has
    a move). Uses the ``e_*`` lists."""
    sq, e_sub, e_stm, e_idx = s.sq, s.e_sub, s.e_stm, s.e_idx
    them = 1 - stm
    frm = sq[slot]
    to = frm + (16 if stm == 0 else -16)
    sq[slot] = to
    occ2 = (occ ^ SQ_BIT[frm]) | SQ_BIT[to]
    n = ep_exits(desc, sq, them, occ2, slot, exit_map, s.tmp, s.sub_sq, e_sub, e_stm, e_idx)
    best = np.int64(-3)
    for k in range(n):
        c = _zero_class(subcls, suboff, e_sub[k], e_stm[k], e_idx[k])
        if c == 3:
            best = 3
            break
        best = max(best, -c)
    if best != 3 and _has_moves(desc, them, occ2, exit_map, s):
        best = max(best, np.int64(them_cls[q]))
    sq[slot] = frm
    return best


@njit(cache=True)
def zsettle_exits(zval, e, base, shift, hits):
    """What the zeroing moves decide at distance ``e``: one wins, or the slowest of losing
    ones goes as a way out (the position is lost if it was the last). Counts and returns
    those it decides, as :func:`settle_exits`."""
    decided = 0
    now = TENT_WIN | np.uint16(e)
    code = exit_loss_code(e)
    a = 0
    while a < zval.shape[0]:
        z = _block_end(zval.shape[0], base, shift, a)
        run = zval[a:z]
        n = 0
        for j in range(run.shape[0]):
            v = run[j]
            if v == now:
                run[j] = ZWON | np.uint16(e)
                n += 1
            elif code <= v <= code + MAX_WAYS:
                if v == code + 1:
                    run[j] = ZLOST | np.uint16(e)
                    n += 1
                else:
                    run[j] = v - code - np.uint16(1)
        hits[(base + a) >> shift] += n
        decided += n
        a = z
    return decided


@njit(cache=True)
def zverify_slice(desc, stm, lo, hi, own, other, exit_map, subcls, suboff, them_cls):
    """Re-check the finished DTZ codes ``own`` of ``[lo, hi)`` (side to move ``stm``) from
    each position's successors: ``other`` the table's DTZ codes for the other side to move
    (its piece moves), ``them_cls`` their classes and ``subcls``/``suboff`` the sub-tables'
    (its zeroing moves, as :func:`zinit_slice` reads them). Returns the offsets that disagree."""
    bad = np.empty(hi - lo, dtype=np.int64)
    nbad = _zverify_loop(desc, stm, lo, hi, own, other, exit_map, subcls, suboff, them_cls, scratch(), bad)
    return bad[:nbad]


@leaf
def _zverify_loop(desc, stm, lo, hi, own, other, exit_map, subcls, suboff, them_cls, s, bad):
    """:func:`zverify_slice` with its scratch arrays; returns how many offsets it wrote to ``bad``."""
    sq, tmp, sub_sq, board, o_sub, o_stm, o_idx, o_ep = s.sq, s.tmp, s.sub_sq, s.board, s.o_sub, s.o_stm, s.o_idx, s.o_ep
    nbad = 0
    for x in range(lo, hi):
        j = x - lo
        occ = _walk_to(desc, x, x == lo, sq, board, tmp)
        if occ == 0 or attacked(desc, sq, occ, sq[1 - stm], stm, -1):
            if own[j] != ILLEGAL:
                bad[nbad] = j
                nbad += 1
            continue
        m = _successors_into(desc, sq, x, stm, board, occ, exit_map, tmp, sub_sq, o_sub, o_stm, o_idx, 0, o_ep, True)
        fastest_win = MAX_DEPTH + 1
        slowest_loss = -1
        has_draw = False
        broken = False
        for k in range(m):
            c = _move_class(desc, stm, occ, k, exit_map, subcls, suboff, them_cls, s)
            if c == PIECE_MOVE:
                v = other[o_idx[k]]
                if v == ILLEGAL:
                    broken = True
                elif is_zdecided(v):
                    d = np.int64(v & DEPTH_MASK) + 1
                    if (v & KIND_MASK) == ZLOST:
                        fastest_win = min(fastest_win, d)
                    else:
                        slowest_loss = max(slowest_loss, d)
                else:
                    has_draw = True
                continue
            if c == 3:
                broken = True
                continue
            z = zero_code(c)
            if z > 0:
                fastest_win = min(fastest_win, z)
            elif z < 0:
                slowest_loss = max(slowest_loss, -z)
            else:
                has_draw = True
        if m == 0:
            expect = ZLOST if attacked(desc, sq, occ, sq[stm], 1 - stm, -1) else DRAW
        elif broken:
            expect = ILLEGAL
        elif fastest_win <= MAX_DEPTH:
            expect = ZWON | np.uint16(fastest_win)
        elif has_draw:
            expect = DRAW
        else:
            expect = ZLOST | np.uint16(slowest_loss)
        if own[j] != expect:
            bad[nbad] = j
            nbad += 1
    return nbad
