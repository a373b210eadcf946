"""WinTree compiled: the plain search (closing cycles) and the depth-cut search as numba kernels.

The same searches as :class:`tablebase.solve.WinTreeSearch` on a
:class:`~tablebase.online.graph.SearchGraph` (plain) and on its
:class:`~tablebase.online.bounded.DepthBounded` cut (iterative deepening), which stay
their slow twins: the same rules, statuses and invariants (see ``solve/wintree.py``),
over the same packed vertices (:func:`~tablebase.online.graph.pack`), with

- an explicit stack of frames and an arena of their successors (numpy arrays that grow
  between calls), so a search is resumable: a call runs until it finishes or has
  expanded a given number of positions, and the next call goes on where it stopped.
  Budgets of time and a ``stop`` request are checked between such chunks;
- one table of results per player, an open-addressing hash table keyed by vertex that
  both searches read and write (32 bytes a position). A position's entry holds what is
  proved of it, each a statement about the game that does not depend on the search
  that proved it (invariants 1 and 2 of ``solve/wintree.py``, Thm 3.2), so reusing it
  anywhere is sound:

  * ``wr``, ``wd``: g has a forcing tree from the position of height ``wd`` that counts
    ``wr`` plies to mate or to a table leaf (``wr <= wd``): the plain search's BLACK
    True, and in the game cut at ``r`` plies the position is won for every ``r >= wr``;
  * ``lo``: the position is not won within ``lo`` counted plies (a cut search's BLACK
    False at ``r = lo``: ``d_g > lo``), or :data:`NOWIN` (the plain search's BLACK
    False, sinks not won by g included);
  * a hint: which successor decided the position the last time it was searched (the
    winning move, the refutation), tried first the next time, as a chess engine's hash
    move; it only orders;
  * the plain search's GRAY (with its path depth) and pending (closing cycles, with its
    place in the pending list and its ``low``) states, which live only while a plain
    search runs.

  Paired with the other player's search (:meth:`CompiledSearch.pair`), a position the
  other player is proved to win is one g does not win (``eval`` has one value);
- table leaves valued from dense arrays of the sub-tables' values (2 bytes a position,
  read once through :meth:`~tablebase.probe.Tablebase.probe_batch_indices`): a capture
  or promotion is final at once, with ``d`` its depth to mate (the shared depth chain of
  the Python graph, which costs nothing here);
- move orders from what is cheap to know. ``natural``: the move generator's order (at
  the opponent's turn with cycles closed, what needs no search first: Python's rule).
  ``black-first`` (Sec. 4.1): every successor that needs no search (leaves, settled
  positions, and in the plain search those on the path or pending) is absorbed when
  the position is expanded, before any descent, one table look-up each. ``heuristic``
  (and ``heuristic+black-first``): that, with, at g's turn, the hint first, then the
  moves that give check (those that leave the king the fewest moves first), then the
  pawn moves, then the king's moves toward its target first; at the opponent's turn
  the pawn moves first, then the hint, then (in the plain search) the checks, then its
  king's moves toward its pawn (:func:`_forcing_first`).
  Ranking moves by the replies they leave, as the Python twin's heuristic does, cost
  more time here than it saved nodes.

``nodes`` counts positions expanded (move generation calls, sinks included).

>>> import chess
>>> from tablebase import open_tablebase
>>> from tablebase.online import SearchGraph
>>> with open_tablebase("data/test-tables") as tb:
...     graph = SearchGraph.from_board(tb, chess.Board("8/8/8/4k3/8/8/Q7/K7 w - - 0 1"))
...     search = CompiledSearch(graph, 1)
...     run = search.cut(graph.start, 17)
...     run.finished, search.status(graph.start), search.depth(graph.start)
(True, True, 17)
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from tablebase.endgame.index import IndexScheme, decode
from tablebase.endgame.movegen import MAX_MOVES
from tablebase.probe import ILLEGAL_WDL, PositionError, Tablebase

from . import kernels
from .graph import SearchGraph

#: ``lo`` of a position g does not win at all; ``wr``/``wd`` of a position not known won.
NOWIN = INF = 1 << 30
# What a kernel call returns.
DONE, SPENT, ROOM, BAD_LEAF, BAD_VERTEX = 0, 1, 2, 3, 4
# ctl: the scalars of a search that survive between calls.
C_SP, C_ATOP, C_PN, C_USED, C_NODES, C_ROOT, C_PLIES, C_ERROR, C_LEN = range(9)
# Frame columns. F_HINT: the successor (its place in generation order) that decided it.
F_V, F_R, F_START, F_N, F_NEXT, F_FLAGS, F_BEST, F_BESTC, F_LOW, F_MARK, F_SLOT, F_HINT, F_LEN = range(13)
_MINE, _DECIDED, _NIL = 1, 2, 4
# Arena columns: the successor's vertex (-1: a leaf), a leaf's d when g wins it (else
# -1; a position's: _PAWN_MOVE where a pawn move reaches it, read only by move
# ordering), the successor's place in generation order.
A_V, A_LEAF, A_IDX, A_LEN = range(4)
_PAWN_MOVE = -4
#: Move orders the kernels know (``black_first`` is a separate switch).
ORDER_NATURAL, ORDER_HEURISTIC = 0, 1

# The table: one row of four int64 per slot.
T_KEY, T_WIN, T_LO, T_STATE = range(4)
# T_WIN = wr | wd << 32; T_LO = (lo + 1) | (hint + 1) << 32;
# T_STATE = state | aux << 2 | low << 33 (aux: path depth or pending place; low < 2^30).
# A slot's key is its vertex + 1 and an empty slot's 0, so that a new table is zeros:
# memory the system gives page by page as it is touched, so a table sized at once for a
# search's whole budget costs only the pages the search reaches.
_EMPTY = 0
_M32 = (1 << 32) - 1
_M31 = (1 << 31) - 1
_FREE, _GRAY, _PENDING = 0, 1, 2
#: Bytes a slot of the table of results costs.
SLOT_BYTES = 32

# Room a call needs beyond what it has used: one more frame, one position's moves, one entry.
_ARENA_ROOM = MAX_MOVES + 8
_LEAF_ILLEGAL = -32768
# What _expand returns for a leaf without a value (kernels.moves uses -1 and -2).
_NO_LEAF_VALUE = -3


# -- the table of results ---------------------------------------------------------------


@njit(cache=True, inline="always")
def _hash(v, mask):
    x = np.uint64(v)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(29)
    return np.int64(x & np.uint64(mask))


@njit(cache=True, inline="always")
def _find(tt, v):
    """The slot of vertex ``v``, or -1."""
    mask = tt.shape[0] - 1
    s = _hash(v, mask)
    while True:
        k = tt[s, T_KEY]
        if k == v + 1:
            return s
        if k == _EMPTY:
            return -1
        s = (s + 1) & mask


@intrinsic
def _prefetch(typingctx, tt, row):
    """Ask the CPU to bring row ``row`` of ``tt`` into the cache (LLVM's prefetch): the
    look-ups of a position's successors miss the cache one after another otherwise."""

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        array = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, array_type, array,
                                           [args[1], context.get_constant(types.intp, 0)])
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        # read, high locality, data cache
        builder.call(fn, [builder.bitcast(pointer, byte_pointer), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(tt, row), codegen


@njit(cache=True, inline="always")
def _insert(tt, ctl, v):
    """The slot of vertex ``v``, made if new (the caller made sure there is room)."""
    mask = tt.shape[0] - 1
    s = _hash(v, mask)
    while True:
        k = tt[s, T_KEY]
        if k == v + 1:
            return s
        if k == _EMPTY:
            tt[s, T_KEY] = v + 1
            tt[s, T_WIN] = INF | (INF << 32)
            tt[s, T_LO] = 0
            tt[s, T_STATE] = 0
            ctl[C_USED] += 1
            return s
        s = (s + 1) & mask


@njit(cache=True, inline="always")
def _wr(tt, s):
    return tt[s, T_WIN] & _M32


@njit(cache=True, inline="always")
def _wd(tt, s):
    return tt[s, T_WIN] >> 32


@njit(cache=True, inline="always")
def _lo(tt, s):
    return (tt[s, T_LO] & _M32) - 1


@njit(cache=True, inline="always")
def _set_lo(tt, s, lo):
    tt[s, T_LO] = (tt[s, T_LO] & ~_M32) | (lo + 1)


@njit(cache=True, inline="always")
def _hint(tt, s):
    return (tt[s, T_LO] >> 32) - 1


@njit(cache=True, inline="always")
def _state(tt, s):
    return tt[s, T_STATE] & 3


@njit(cache=True, inline="always")
def _aux(tt, s):
    return (tt[s, T_STATE] >> 2) & _M31


@njit(cache=True, inline="always")
def _low(tt, s):
    return tt[s, T_STATE] >> 33


@njit(cache=True, inline="always")
def _set_state(tt, s, state, aux, low):
    tt[s, T_STATE] = state | (aux << 2) | (min(low, INF - 1) << 33)


@njit(cache=True, inline="always")
def _record_win(tt, s, d, c):
    # The tree that counts fewer plies serves more cut searches; then the lower one.
    wr = _wr(tt, s)
    if c < wr or (c == wr and d < _wd(tt, s)):
        tt[s, T_WIN] = c | (d << 32)


@njit(cache=True)
def _rehash(tt, new):
    mask = new.shape[0] - 1
    for i in range(tt.shape[0]):
        if tt[i, T_KEY] == _EMPTY:
            continue
        s = _hash(tt[i, T_KEY] - 1, mask)
        while new[s, T_KEY] != _EMPTY:
            s = (s + 1) & mask
        for c in range(4):
            new[s, c] = tt[i, c]


# What is known of a successor, for the search looking at it: won by g, not won, and,
# in the plain search, on the path (GRAY) or pending.
_WON, _NOT, _UNSEEN, _ON_PATH, _PEND = 1, 0, -1, 2, 3


@njit(cache=True, inline="always")
def _other_wins(other, u):
    o = _find(other, u)
    return o >= 0 and _wr(other, o) < INF


@njit(cache=True, inline="always")
def _plain_state(tt, other, u):
    """(slot of ``u`` or -1, what the plain search knows of it). A position the other
    player's search proved won is not won by g."""
    t = _find(tt, u)
    if t >= 0:
        state = _state(tt, t)
        if state == _GRAY:
            return t, _ON_PATH
        if _wr(tt, t) < INF:
            return t, _WON
        if _lo(tt, t) == NOWIN:
            return t, _NOT
        if state == _PENDING:
            return t, _PEND
    return t, _NOT if _other_wins(other, u) else _UNSEEN


@njit(cache=True, inline="always")
def _cut_state(tt, other, u, r):
    """(slot of ``u`` or -1, what the cut search knows of it with ``r`` plies left)."""
    t = _find(tt, u)
    if t >= 0:
        if _wr(tt, t) <= r:
            return t, _WON
        if _lo(tt, t) >= r:
            return t, _NOT
    return t, _NOT if _other_wins(other, u) else _UNSEEN


@njit(cache=True, inline="always")
def _cut_successor_state(tt, other, desc, gs, u, r, sq):
    """:func:`_cut_state` of a successor ``u`` with ``r`` plies left, where a position with
    none left that cannot be a mate by g (g to move, or its side to move not in check)
    is known not won without expanding it: at the last ply of a cut only checks can win,
    as in any mate search. ``sq``: scratch for the check test."""
    t, state = _cut_state(tt, other, u, r)
    if state == _UNSEEN and r == 0:
        stm = (u >> 7) & 1
        if stm == gs or not kernels.in_check_at(desc, stm, u >> 8, sq):
            return t, _NOT
    return t, state


# -- expanding a position ---------------------------------------------------------------


@njit(cache=True, inline="always")
def _expand(desc, exit_map, leaf_val, leaf_off, v, mine, arena, at, sq, tmp, sub_sq,
            board, out_sub, out_stm, out_idx, out_ep, seen, stamp, hint):
    """Write the successors of position ``v`` to ``arena`` from row ``at``: positions as
    vertices, leaves with their ``d`` when g wins them (else -1), a move's duplicates
    (symmetric positions) dropped (``seen``: a small hash set whose rows are live where
    they hold ``stamp``, unique per expansion), the successor ``hint`` (a place in
    generation order; -1 none) first. Returns ``(count, flag)`` as
    :func:`kernels.moves`, or ``(_NO_LEAF_VALUE, 0)`` when a leaf has no value in its
    table."""
    stm = (v >> 7) & 1
    m, flag = kernels.moves(desc, stm, v >> 8, (v & 127) - 1, exit_map, sq, tmp,
                            sub_sq, board, out_sub, out_stm, out_idx, out_ep)
    if m <= 0:
        return m, flag
    n = 0
    mask = seen.shape[0] - 1
    for k in range(m):
        row = at + n
        if out_sub[k] < 0:
            ep = out_ep[k]
            u = (out_idx[k] << 8) | (out_stm[k] << 7) | (max(ep, -1) + 1)
            h = _hash(u, mask)
            dup = False
            while seen[h, 0] == stamp:
                if seen[h, 1] == u:
                    dup = True
                    break
                h = (h + 1) & mask
            if dup:
                continue
            seen[h, 0] = stamp
            seen[h, 1] = u
            arena[row, A_V] = u
            arena[row, A_LEAF] = _PAWN_MOVE if ep != -1 else -1
        else:
            code = np.int64(leaf_val[leaf_off[out_sub[k], out_stm[k]] + out_idx[k]])
            if code == _LEAF_ILLEGAL:
                return _NO_LEAF_VALUE, 0
            # code: +(plies + 1) the leaf's side to move wins, -(plies + 1) it loses, 0 a draw.
            # At g's turn the leaf's side to move is the opponent: g wins it where it loses.
            arena[row, A_V] = -1
            won = code < 0 if mine else code > 0
            arena[row, A_LEAF] = (abs(code) - 1) if won else -1
        arena[row, A_IDX] = n
        n += 1
    if 0 < hint < n:
        # The hint first, the others in their order.
        a, b = arena[at + hint, A_V], arena[at + hint, A_LEAF]
        for i in range(at + hint, at, -1):
            arena[i, A_V], arena[i, A_LEAF], arena[i, A_IDX] = arena[i - 1, A_V], arena[i - 1, A_LEAF], arena[i - 1, A_IDX]
        arena[at, A_V], arena[at, A_LEAF], arena[at, A_IDX] = a, b, hint
    return n, flag


@njit(cache=True, inline="always")
def _open(desc, exit_map, leaf_val, leaf_off, gs, order, tt, other, arena, ctl, v, sq,
          tmp, sub_sq, board, out_sub, out_stm, out_idx, out_ep, seen):
    """Expand vertex ``v`` (one node) into the arena's free rows, its entry made, the
    successors' slots in both tables prefetched: (slot, g to move, first row, hint,
    count, flag), count < 0 as :func:`_expand`."""
    ctl[C_NODES] += 1
    s = _insert(tt, ctl, v)
    mine = ((v >> 7) & 1) == gs
    at = ctl[C_ATOP]
    hint = _hint(tt, s) if order == ORDER_HEURISTIC else -1
    n, flag = _expand(desc, exit_map, leaf_val, leaf_off, v, mine, arena, at, sq, tmp,
                      sub_sq, board, out_sub, out_stm, out_idx, out_ep, seen, ctl[C_NODES], hint)
    mask, other_mask = tt.shape[0] - 1, other.shape[0] - 1
    for i in range(at, at + max(n, 0)):
        u = arena[i, A_V]
        if u >= 0:
            _prefetch(tt, _hash(u, mask))
            _prefetch(other, _hash(u, other_mask))
    return s, mine, at, hint, n, flag


# The ranks of _forcing_first at g's turn: the hint 0, a check 1 + the king's flights
# after it (0-8), a pawn move 10, the rest 11 + a king distance (0-7).
_CHECKS, _PAWNS, _REST = 1, 10, 11


@njit(cache=True, inline="always")
def _forcing_first(desc, arena, lo, hi, child_stm, mine, hint, checks, sq, scratch):
    """Reorder the successors in arena rows [lo, hi) (positions of this table with
    ``child_stm`` to move), each group in its order: at g's turn the ``hint`` (a place in
    generation order), then the moves that give check (with ``checks``; those that leave
    the checked king the fewest moves first, as a mate search orders them), then the pawn
    moves, then the rest by how near they leave g's king to the other side's pawn closest
    to promotion, else to its king; at the opponent's turn the pawn moves before the
    hint, then the checks, then the rest by how near they leave its king to its own pawn
    closest to promotion. A pawn move cannot be taken back: a refutation that pushes a
    pawn to its promotion (a table leaf) ends where a king's wandering has to close its
    cycles, or to reach the depth cut, first; the hint, when the cut search left it,
    names a move that only held out for some plies; and a king wins a pawn, or drives the
    other king, by walking up to it (a defending king, by staying by its pawn).
    ``scratch`` holds 3 * (hi - lo) int64; every position's ``A_LEAF`` is -1 afterwards.
    Without ``checks`` and pawn moves it returns at once (the king distances are not
    read): the order is then _expand's, the hint first."""
    if not checks:
        pawns = False
        for i in range(lo, hi):
            pawns |= arena[i, A_LEAF] == _PAWN_MOVE
        if not pawns:
            return  # _expand put the hint first
    k = 0
    for i in range(lo, hi):
        x = arena[i, A_V] >> 8
        check = checks and kernels.in_check_at(desc, child_stm, x, sq)  # sq: x's placement
        pawn = arena[i, A_LEAF] == _PAWN_MOVE
        if mine:
            rank = 0 if arena[i, A_IDX] == hint else _CHECKS if check else _PAWNS if pawn else _REST
            if rank == _CHECKS:
                rank += kernels.king_flights(desc, sq, child_stm)
            elif rank == _REST and checks:
                target = kernels.promoting_pawn(desc, sq, child_stm)
                rank += kernels.square_distance(sq[1 - child_stm], sq[child_stm] if target < 0 else target)
        else:
            rank = 0 if pawn else 1 if arena[i, A_IDX] == hint else 2 if check else 3
            if rank == 3:
                if not checks:
                    decode(desc, x, sq)
                target = kernels.promoting_pawn(desc, sq, 1 - child_stm)
                if target >= 0:
                    rank += kernels.square_distance(sq[1 - child_stm], target)
        scratch[3 * k] = arena[i, A_V]
        scratch[3 * k + 1] = arena[i, A_IDX]
        scratch[3 * k + 2] = rank
        k += 1
    row = lo
    for rank in range(_REST + 8):  # a king distance adds at most 7
        for j in range(k):
            if scratch[3 * j + 2] == rank:
                arena[row, A_V] = scratch[3 * j]
                arena[row, A_LEAF] = -1
                arena[row, A_IDX] = scratch[3 * j + 1]
                row += 1


@njit(cache=True, inline="always")
def _absorb(frames, f, status, d, c, low, idx):
    """A successor's result into frame ``f``: status 1 won by g, 0 not, -1 NIL (with its
    low); ``idx`` its place in generation order, kept as the frame's hint when it
    decides the frame (or, at the opponent's turn, is its first NIL)."""
    flags = frames[f, F_FLAGS]
    if status < 0:
        frames[f, F_FLAGS] = flags | _NIL
        if low < frames[f, F_LOW]:
            frames[f, F_LOW] = low
        if not flags & (_MINE | _NIL):
            frames[f, F_HINT] = idx
    elif flags & _MINE:
        if status == 1:
            frames[f, F_FLAGS] = flags | _DECIDED
            if d < frames[f, F_BEST]:
                frames[f, F_BEST] = d
                frames[f, F_BESTC] = c
                frames[f, F_HINT] = idx
    elif status == 1:
        if d > frames[f, F_BEST]:
            frames[f, F_BEST] = d
        if c > frames[f, F_BESTC]:
            frames[f, F_BESTC] = c
    else:
        frames[f, F_FLAGS] = flags | _DECIDED
        frames[f, F_HINT] = idx


@njit(cache=True, inline="always")
def _push(frames, sp, v, r, start, n, mine, mark, slot):
    frames[sp, F_V] = v
    frames[sp, F_R] = r
    frames[sp, F_START] = start
    frames[sp, F_N] = n
    frames[sp, F_NEXT] = 0
    frames[sp, F_FLAGS] = _MINE if mine else 0
    frames[sp, F_BEST] = INF if mine else 0
    frames[sp, F_BESTC] = INF if mine else 0
    frames[sp, F_LOW] = INF
    frames[sp, F_MARK] = mark
    frames[sp, F_SLOT] = slot
    frames[sp, F_HINT] = -1


@njit(cache=True, inline="always")
def _pop_slot(tt, frames, f):
    """The frame's slot in the table (kept in the frame, found again after a rehash), and
    its hint recorded."""
    s = frames[f, F_SLOT]
    if tt[s, T_KEY] != frames[f, F_V] + 1:
        s = _find(tt, frames[f, F_V])
    hint = frames[f, F_HINT]
    if hint >= 0:
        tt[s, T_LO] = (tt[s, T_LO] & _M32) | ((hint + 1) << 32)
    return s


@njit(cache=True, inline="always")
def _settle(tt, pend, lo, hi, final):
    """The pending vertices pend[lo:hi] leave the pending state; with ``final`` they are
    not won (a closed cycle). Their rows are prefetched a few ahead."""
    mask = tt.shape[0] - 1
    for j in range(lo, min(hi, lo + 8)):
        _prefetch(tt, _hash(pend[j], mask))
    for j in range(lo, hi):
        if j + 8 < hi:
            _prefetch(tt, _hash(pend[j + 8], mask))
        t = _find(tt, pend[j])
        _set_state(tt, t, _FREE, 0, 0)
        if final:
            _set_lo(tt, t, NOWIN)


@njit(cache=True, inline="always")
def _under(frames, sp, place):
    """The deepest frame whose pending mark is at most ``place`` (bisect over the marks)."""
    a, b = 0, sp
    while a < b:
        mid = (a + b) >> 1
        if frames[mid, F_MARK] <= place:
            a = mid + 1
        else:
            b = mid
    return a - 1


@njit(cache=True, inline="always")
def _room(tt, frames, arena, pend, ctl):
    return (ctl[C_SP] + 2 <= frames.shape[0] and ctl[C_ATOP] + _ARENA_ROOM <= arena.shape[0]
            and ctl[C_PN] + 2 <= pend.shape[0] and 2 * (ctl[C_USED] + 2) <= tt.shape[0])


def _scratch() -> tuple[np.ndarray, ...]:
    """A kernel call's scratch arrays (made here: the kernels allocate nothing, so they run
    without numba's reference counting, whose atomic operations on every array they touch
    took 40 % of a search's time): a placement, index scratch, a board, a position's
    moves, the duplicate set of :func:`_expand` (empty: its stamps are the node counts of
    one table's life, which a new table restarts) and the ranks of :func:`_forcing_first`."""
    return (np.empty(16, np.int64), np.empty(16, np.int64), np.empty(16, np.int64), np.empty(64, np.int64),
            np.empty(MAX_MOVES + 8, np.int64), np.empty(MAX_MOVES + 8, np.int64), np.empty(MAX_MOVES + 8, np.int64),
            np.empty(MAX_MOVES + 8, np.int64), np.full((256, 2), -1, np.int64), np.empty(4 * MAX_MOVES + 32, np.int64))


# -- the plain search --------------------------------------------------------------------


@njit(cache=True, nogil=True, _nrt=False)
def plain_run(desc, exit_map, leaf_val, leaf_off, gs, close, black_first, order,
              tt, other, frames, arena, pend, ctl, node_limit, scratch):
    """Plain WinTree for the player whose table side to move is ``gs``, from ``ctl[C_ROOT]``
    when no frame is open, else going on with the open frames; ``close`` closes cycles.
    ``tt`` is the table of results, ``other`` the other player's (its wins are positions g
    does not win).

    Returns :data:`DONE` (the root's result is in the table), :data:`SPENT` (the
    positions expanded reached ``node_limit``), :data:`ROOM` (an array needs to grow:
    the caller grows it and calls again) or :data:`BAD_LEAF` / :data:`BAD_VERTEX` (a
    leaf without a value, an illegal root; the vertex in ``ctl[C_ERROR]``). The rules
    are :meth:`tablebase.solve.WinTreeSearch.run`'s."""
    sq, tmp, sub_sq, board, out_sub, out_stm, out_idx, out_ep, seen, ranks = scratch
    opened = -1  # the vertex to expand next (the root, or the successor the top frame chose)
    if ctl[C_SP] == 0:
        v = ctl[C_ROOT]
        if not _room(tt, frames, arena, pend, ctl):
            return ROOM
        t, state = _plain_state(tt, other, v)
        if state == _NOT and t < 0:
            _set_lo(tt, _insert(tt, ctl, v), NOWIN)  # the other player wins it
        if state == _WON or state == _NOT:
            return DONE
        opened = v
    while True:
        if opened >= 0:
            # A sink is settled at once, anything else becomes the new top frame.
            v = opened
            opened = -1
            s, mine, at, hint, n, flag = _open(desc, exit_map, leaf_val, leaf_off, gs,
                                               order, tt, other, arena, ctl, v, sq, tmp, sub_sq, board, out_sub,
                                               out_stm, out_idx, out_ep, seen)
            if n < 0:
                ctl[C_ERROR] = v
                return BAD_LEAF if n == _NO_LEAF_VALUE else BAD_VERTEX
            sp = ctl[C_SP]
            if flag != kernels.MOVES:
                # A sink: g wins it iff the side to move is mated and is not g.
                status = 1 if flag == kernels.CHECKMATE and not mine else 0
                if status:
                    _record_win(tt, s, 0, 0)
                else:
                    _set_lo(tt, s, NOWIN)
                if sp == 0:
                    return DONE
                _absorb(frames, sp - 1, status, 0, 0, INF,
                        arena[frames[sp - 1, F_START] + frames[sp - 1, F_NEXT] - 1, A_IDX])
                continue
            _push(frames, sp, v, 0, at, n, mine, ctl[C_PN], s)
            _set_state(tt, s, _GRAY, sp, 0)
            ctl[C_SP] = sp + 1
            ctl[C_ATOP] = at + n
            if black_first or (close and not mine):
                # What needs no search is absorbed before any descent: the settled
                # successors (Sec. 4.1) and, the opponent stopping at one NIL successor
                # when cycles are closed, those on the path or pending too.
                k = at
                for i in range(at, at + n):
                    u = arena[i, A_V]
                    idx = arena[i, A_IDX]
                    if u < 0:
                        d = arena[i, A_LEAF]
                        _absorb(frames, sp, 1 if d >= 0 else 0, d, 0, INF, idx)
                    else:
                        t, state = _plain_state(tt, other, u)
                        if state == _WON:
                            _absorb(frames, sp, 1, _wd(tt, t), _wr(tt, t), INF, idx)
                        elif state == _NOT:
                            _absorb(frames, sp, 0, 0, 0, INF, idx)
                        elif state == _ON_PATH:
                            _absorb(frames, sp, -1, 0, 0, _aux(tt, t) if close else INF, idx)
                        elif state == _PEND and close:
                            _absorb(frames, sp, -1, 0, 0, min(_low(tt, t), _under(frames, sp + 1, _aux(tt, t))), idx)
                        else:
                            for col in range(A_LEN):
                                arena[k, col] = arena[i, col]
                            k += 1
                    flags = frames[sp, F_FLAGS]
                    if flags & _DECIDED or (close and not mine and flags & _NIL):
                        break
                frames[sp, F_N] = k - at
                ctl[C_ATOP] = k
                if order == ORDER_HEURISTIC and not frames[sp, F_FLAGS] & _DECIDED:
                    _forcing_first(desc, arena, at, k, 1 - ((v >> 7) & 1), mine, hint, True, sq, ranks)
        sp = ctl[C_SP]
        f = sp - 1
        mine = frames[f, F_FLAGS] & _MINE
        nil_stops = close and not mine
        start = frames[f, F_START]
        n = frames[f, F_N]
        while not frames[f, F_FLAGS] & _DECIDED and not (nil_stops and frames[f, F_FLAGS] & _NIL) \
                and frames[f, F_NEXT] < n:
            i = start + frames[f, F_NEXT]
            u = arena[i, A_V]
            idx = arena[i, A_IDX]
            if u < 0:
                frames[f, F_NEXT] += 1
                d = arena[i, A_LEAF]
                _absorb(frames, f, 1 if d >= 0 else 0, d, 0, INF, idx)
                continue
            t, state = _plain_state(tt, other, u)
            if state == _ON_PATH:
                frames[f, F_NEXT] += 1
                _absorb(frames, f, -1, 0, 0, _aux(tt, t) if close else INF, idx)
            elif state == _WON:
                frames[f, F_NEXT] += 1
                _absorb(frames, f, 1, _wd(tt, t), _wr(tt, t), INF, idx)
            elif state == _NOT:
                frames[f, F_NEXT] += 1
                _absorb(frames, f, 0, 0, 0, INF, idx)
            elif state == _PEND and close:
                frames[f, F_NEXT] += 1
                _absorb(frames, f, -1, 0, 0, min(_low(tt, t), _under(frames, sp, _aux(tt, t))), idx)
            else:
                if ctl[C_NODES] >= node_limit:
                    return SPENT
                if not _room(tt, frames, arena, pend, ctl):
                    return ROOM
                frames[f, F_NEXT] += 1
                opened = u
                break
        if opened >= 0:
            continue
        # Every successor examined, or the frame decided: pop it (a NIL one may join the pending list).
        if ctl[C_PN] + 2 > pend.shape[0]:
            return ROOM
        flags = frames[f, F_FLAGS]
        v = frames[f, F_V]
        s = _pop_slot(tt, frames, f)
        if flags & _DECIDED:
            status = 1 if mine else 0
        elif flags & _NIL:
            status = -1
        else:
            status = 0 if mine else 1
        mark = frames[f, F_MARK]
        ctl[C_SP] = f
        ctl[C_ATOP] = start
        _set_state(tt, s, _FREE, 0, 0)
        if status < 0 and (f == 0 or (close and frames[f, F_LOW] >= f)):
            # Invariant 3 with an empty path: the root (or a closed cycle's top) is not won,
            # and so is every vertex pending under it.
            status = 0
            _settle(tt, pend, mark, ctl[C_PN], True)
            ctl[C_PN] = mark
        elif status < 0:
            if close:
                _set_state(tt, s, _PENDING, ctl[C_PN], frames[f, F_LOW])
                pend[ctl[C_PN]] = v
                ctl[C_PN] += 1
        else:
            _settle(tt, pend, mark, ctl[C_PN], False)
            ctl[C_PN] = mark
        d = c = 0
        if status == 1:
            d = 1 + frames[f, F_BEST]
            c = 1 + frames[f, F_BESTC]
            _record_win(tt, s, d, c)
        elif status == 0:
            _set_lo(tt, s, NOWIN)
        if f == 0:
            return DONE
        _absorb(frames, f - 1, status, d, c, frames[f, F_LOW], arena[frames[f - 1, F_START] + frames[f - 1, F_NEXT] - 1,
                                                                    A_IDX])


# -- the depth-cut search -----------------------------------------------------------------


@njit(cache=True, nogil=True, _nrt=False)
def cut_run(desc, exit_map, leaf_val, leaf_off, gs, black_first, order,
            tt, other, frames, arena, pend, ctl, node_limit, scratch):
    """WinTree on the game cut at ``ctl[C_PLIES]`` plies (see
    :class:`~tablebase.online.bounded.DepthBounded`; leaves do not count), from
    ``ctl[C_ROOT]`` when no frame is open, else going on. The game is acyclic: no GRAY
    or NIL. A position with ``r`` plies left is won where its entry has ``wr <= r``, not
    won where ``lo >= r``; the search adds ``wr`` and ``lo`` as it settles positions.
    Arguments and results as :func:`plain_run`'s."""
    sq, tmp, sub_sq, board, out_sub, out_stm, out_idx, out_ep, seen, ranks = scratch
    opened = -1
    opened_r = 0
    if ctl[C_SP] == 0:
        v = ctl[C_ROOT]
        r = ctl[C_PLIES]
        if _cut_state(tt, other, v, r)[1] != _UNSEEN:
            return DONE
        if not _room(tt, frames, arena, pend, ctl):
            return ROOM
        opened = v
        opened_r = r
    while True:
        if opened >= 0:
            v = opened
            r = opened_r
            opened = -1
            s, mine, at, hint, n, flag = _open(desc, exit_map, leaf_val, leaf_off, gs,
                                               order, tt, other, arena, ctl, v, sq, tmp, sub_sq, board, out_sub,
                                               out_stm, out_idx, out_ep, seen)
            if n < 0:
                ctl[C_ERROR] = v
                return BAD_LEAF if n == _NO_LEAF_VALUE else BAD_VERTEX
            sp = ctl[C_SP]
            if flag != kernels.MOVES or r == 0:
                status = 1 if flag == kernels.CHECKMATE and not mine else 0
                if status:
                    _record_win(tt, s, 0, 0)
                elif flag != kernels.MOVES:
                    _set_lo(tt, s, NOWIN)  # a sink g does not win is not won at any depth
                elif _lo(tt, s) < 0:
                    _set_lo(tt, s, 0)  # no ply left
                if sp == 0:
                    return DONE
                _absorb(frames, sp - 1, status, 0, 0, INF,
                        arena[frames[sp - 1, F_START] + frames[sp - 1, F_NEXT] - 1, A_IDX])
                continue
            _push(frames, sp, v, r, at, n, mine, 0, s)
            ctl[C_SP] = sp + 1
            ctl[C_ATOP] = at + n
            if black_first:
                k = at
                for i in range(at, at + n):
                    u = arena[i, A_V]
                    idx = arena[i, A_IDX]
                    if u < 0:
                        d = arena[i, A_LEAF]
                        _absorb(frames, sp, 1 if d >= 0 else 0, d, 0, INF, idx)
                    else:
                        t, state = _cut_successor_state(tt, other, desc, gs, u, r - 1, sq)
                        if state == _WON:
                            _absorb(frames, sp, 1, _wd(tt, t), _wr(tt, t), INF, idx)
                        elif state == _NOT:
                            _absorb(frames, sp, 0, 0, 0, INF, idx)
                        else:
                            for col in range(A_LEN):
                                arena[k, col] = arena[i, col]
                            k += 1
                    if frames[sp, F_FLAGS] & _DECIDED:
                        break
                frames[sp, F_N] = k - at
                ctl[C_ATOP] = k
            if order == ORDER_HEURISTIC and not frames[sp, F_FLAGS] & _DECIDED:
                _forcing_first(desc, arena, at, at + frames[sp, F_N], 1 - ((v >> 7) & 1), mine, hint, mine, sq,
                               ranks)
        sp = ctl[C_SP]
        f = sp - 1
        mine = frames[f, F_FLAGS] & _MINE
        r = frames[f, F_R]
        start = frames[f, F_START]
        n = frames[f, F_N]
        while not frames[f, F_FLAGS] & _DECIDED and frames[f, F_NEXT] < n:
            i = start + frames[f, F_NEXT]
            u = arena[i, A_V]
            idx = arena[i, A_IDX]
            if u < 0:
                frames[f, F_NEXT] += 1
                d = arena[i, A_LEAF]
                _absorb(frames, f, 1 if d >= 0 else 0, d, 0, INF, idx)
                continue
            t, state = _cut_successor_state(tt, other, desc, gs, u, r - 1, sq)
            if state == _WON:
                frames[f, F_NEXT] += 1
                _absorb(frames, f, 1, _wd(tt, t), _wr(tt, t), INF, idx)
            elif state == _NOT:
                frames[f, F_NEXT] += 1
                _absorb(frames, f, 0, 0, 0, INF, idx)
            else:
                if ctl[C_NODES] >= node_limit:
                    return SPENT
                if not _room(tt, frames, arena, pend, ctl):
                    return ROOM
                frames[f, F_NEXT] += 1
                opened = u
                opened_r = r - 1
                break
        if opened >= 0:
            continue
        flags = frames[f, F_FLAGS]
        s = _pop_slot(tt, frames, f)
        won = (flags & _DECIDED) != 0 if mine else not flags & _DECIDED
        ctl[C_SP] = f
        ctl[C_ATOP] = start
        d = c = 0
        if won:
            d = 1 + frames[f, F_BEST]
            c = 1 + frames[f, F_BESTC]
            _record_win(tt, s, d, c)
        elif r > _lo(tt, s):
            _set_lo(tt, s, r)
        if f == 0:
            return DONE
        _absorb(frames, f - 1, 1 if won else 0, d, c, INF, arena[frames[f - 1, F_START] + frames[f - 1, F_NEXT] - 1,
                                                                A_IDX])


@njit(cache=True)
def _abandon(tt, frames, pend, ctl):
    """Drop a stopped search's path and pending vertices (they go back to no state)."""
    for f in range(ctl[C_SP]):
        s = _find(tt, frames[f, F_V])
        if s >= 0:
            _set_state(tt, s, _FREE, 0, 0)
    for j in range(ctl[C_PN]):
        s = _find(tt, pend[j])
        if s >= 0:
            _set_state(tt, s, _FREE, 0, 0)
    ctl[C_SP] = 0
    ctl[C_ATOP] = 0
    ctl[C_PN] = 0


# -- the sub-tables' values --------------------------------------------------------------


# Leaf values per tablebase and material: {key: (values, offsets)}; dropped with the tablebase.
_LEAF_TABLES: "weakref.WeakKeyDictionary[Tablebase, dict]" = weakref.WeakKeyDictionary()
_LEAF_LOCK = threading.Lock()
# Indices read per probe_batch_indices call while building them.
_READ_CHUNK = 1 << 20


def _leaf_code(tablebase: Tablebase, key: str) -> tuple[np.ndarray, np.ndarray]:
    """A sub-table's values for both sides to move (int16: +(plies + 1) the side to move
    wins, -(plies + 1) it loses, 0 a draw, -32768 no legal position)."""
    size = IndexScheme.of(key).size
    sides = []
    for stm in (0, 1):
        code = np.empty(size, np.int16)
        for a in range(0, size, _READ_CHUNK):
            idx = np.arange(a, min(size, a + _READ_CHUNK), dtype=np.int64)
            wdl, dtm = tablebase.probe_batch_indices(key, stm, idx)
            part = wdl.astype(np.int16) * (np.abs(dtm).astype(np.int16) + 1)
            part[wdl == ILLEGAL_WDL] = _LEAF_ILLEGAL
            code[a:a + idx.size] = part
        sides.append(code)
    return sides[0], sides[1]


def leaf_values(graph: SearchGraph) -> tuple[np.ndarray, np.ndarray]:
    """``(values, offsets)`` of the tables ``graph``'s captures and promotions lead to:
    ``values[offsets[sub, stm] + index]`` is the leaf's value code. Each sub-table is read
    once per tablebase, 2 bytes a position of both sides to move (KQRvKR's three 4-piece
    sub-tables: 22 MB), and shared by every search."""
    tablebase = graph.tablebase
    with _LEAF_LOCK:
        cache = _LEAF_TABLES.setdefault(tablebase, {})
    keys = [m.key for m in graph.exits.subtables]
    parts, offsets, at = [], np.zeros((max(1, len(keys)), 2), np.int64), 0
    for i, key in enumerate(keys):
        with _LEAF_LOCK:
            sides = cache.get(key)
        if sides is None:
            sides = _leaf_code(tablebase, key)
            with _LEAF_LOCK:
                cache[key] = sides
        for stm in (0, 1):
            offsets[i, stm] = at
            parts.append(sides[stm])
            at += sides[stm].size
    values = np.concatenate(parts) if parts else np.zeros(1, np.int16)
    return values, offsets


# -- the Python face ---------------------------------------------------------------------


@dataclass
class Run:
    """One search call's outcome: whether it finished, the positions it expanded, and
    what ended it first when it did not (``"nodes"``, ``"time"``, ``"stop"``,
    ``"memory"``; the Python twin says ``"budget"``)."""

    finished: bool
    nodes: int
    reason: str = ""


@dataclass
class Facts:
    """What a search proved of the positions it settled, for checks against the tables:
    ``won`` (with ``d``, the height of the win tree found), ``nowin`` (g does not win),
    ``within`` (not won within ``within_r`` plies counted to mate or to a table)."""

    won: np.ndarray
    d: np.ndarray
    nowin: np.ndarray
    within: np.ndarray
    within_r: np.ndarray


# The other player's table where a search has no partner: empty.
_NO_TABLE = np.zeros((1, 4), np.int64)
#: Positions a kernel call expands before the budgets are checked again (a few ms).
CHUNK = 1 << 13
# Starting sizes; each grows by doubling.
_START_SLOTS = 1 << 14
# The most slots a budget reserves at once (128 MB); past it the table doubles as it fills.
_RESERVE_SLOTS = 1 << 22
_START_FRAMES = 256
_START_ARENA = 1 << 13
_START_PENDING = 1 << 10


def _new_table(slots: int) -> np.ndarray:
    return np.zeros((slots, 4), np.int64)  # every slot empty; the other columns are set when one is taken


class CompiledSearch:
    """WinTree for player ``g`` on ``graph``'s material, compiled; the results of every
    search it runs are kept and reused (Thm 3.2), by both its plain and its cut searches.

    ``order`` is one of :data:`~tablebase.online.search.ORDERS`; ``close_cycles`` as for
    :func:`~tablebase.solve.win_tree`. ``max_bytes`` bounds the table of results (a search
    that would need more stops unfinished, its reason ``"memory"``); None: no bound.
    Vertices are ``graph``'s (:func:`~tablebase.online.graph.pack`); ``graph.flip`` says
    which table side is ``g``.
    """

    def __init__(self, graph: SearchGraph, g: int, order: str = "heuristic", close_cycles: bool = True,
                 max_bytes: int | None = None) -> None:
        from .search import ORDERS
        if g not in (1, -1):
            raise ValueError(f"g must be +1 or -1, got {g!r}")
        if order not in ORDERS:
            raise ValueError(f"unknown move order {order!r}; choose one of {', '.join(ORDERS)}")
        self.graph = graph
        self.g = g
        self.gs = graph.flip if g == 1 else 1 - graph.flip  # the table side to move that is g
        # In the kernels "heuristic" is the forcing moves first (_forcing_first) with
        # black-first's scan: ranking moves by their replies, as the Python order does,
        # costs more than it saves here.
        self.order = ORDER_HEURISTIC if order.startswith("heuristic") else ORDER_NATURAL
        self.black_first = order != "natural"
        self.close_cycles = close_cycles
        self.max_bytes = max_bytes
        self.leaf_val, self.leaf_off = leaf_values(graph)
        exits = graph.exits
        self._graph_args = (graph.scheme.desc, exits.arrays, self.leaf_val, self.leaf_off)
        self.tt = _new_table(_START_SLOTS)
        self.frames = np.zeros((_START_FRAMES, F_LEN), np.int64)
        self.arena = np.zeros((_START_ARENA, A_LEN), np.int64)
        self.pend = np.zeros(_START_PENDING, np.int64)
        self.ctl = np.zeros(C_LEN, np.int64)
        self._scratch = _scratch()
        #: Positions expanded by every search so far.
        self.nodes = 0
        #: The other player's search on the same graph (see :meth:`pair`), or None.
        self.partner: CompiledSearch | None = None

    def pair(self, other: "CompiledSearch") -> None:
        """Let this search and ``other`` (the other player's, on the same graph) read each
        other's proved wins: a position one player wins, the other does not (``eval`` has
        one value), so each win is the other search's BLACK False."""
        if other.graph is not self.graph or other.g != -self.g:
            raise ValueError("a search pairs with the other player's search on the same graph")
        self.partner, other.partner = other, self

    # -- what is known -------------------------------------------------------------------

    @property
    def entries(self) -> int:
        """Positions the table holds."""
        return int(self.ctl[C_USED])

    @property
    def table_bytes(self) -> int:
        return self.tt.shape[0] * SLOT_BYTES

    def _slot(self, v: int) -> int:
        return int(_find(self.tt, np.int64(v)))

    def _won(self, v: int) -> bool:
        s = self._slot(v)
        return s >= 0 and int(self.tt[s, T_WIN] & _M32) < INF

    def _lo(self, v: int) -> int:
        s = self._slot(v)
        return -1 if s < 0 else int(self.tt[s, T_LO] & _M32) - 1

    def status(self, v: Hashable) -> bool | None:
        """What is proved of vertex ``v``: True g wins, False g does not, None not known
        (a leaf: its table value)."""
        if type(v) is not int:
            return self.graph.leaf_value(v)[0] == self.g if self.graph.is_leaf(v) else None
        if self._won(v):
            return True
        if self._lo(v) == NOWIN or (self.partner is not None and self.partner._won(v)):
            return False
        return None

    def depth(self, v: Hashable) -> int | None:
        """``d`` of the win proved from ``v`` (the height of its forcing tree, >= d_g), or None."""
        if type(v) is not int:
            w, plies = self.graph.leaf_value(v)
            return plies if w == self.g else None
        s = self._slot(v)
        return int(self.tt[s, T_WIN] >> 32) if self._won(v) else None

    def not_won_within(self, v: int) -> int:
        """The largest ``r`` such that ``v`` is proved not won within ``r`` counted plies
        (:data:`NOWIN`: not won at all; -1: nothing proved)."""
        return NOWIN if self.partner is not None and self.partner._won(v) else self._lo(v)

    def cut_status(self, v: int, plies: int) -> bool | None:
        """Whether ``v`` is won within ``plies`` counted plies, as far as proved."""
        s = self._slot(v)
        if s >= 0 and int(self.tt[s, T_WIN] & _M32) <= plies:
            return True
        if self._lo(v) >= plies or (self.partner is not None and self.partner._won(v)):
            return False
        return None

    def facts(self) -> Facts:
        """Every position something is proved of (see :class:`Facts`)."""
        tt = self.tt
        used = tt[:, T_KEY] != _EMPTY
        wr, wd, lo = tt[:, T_WIN] & _M32, tt[:, T_WIN] >> 32, (tt[:, T_LO] & _M32) - 1
        won = used & (wr < INF)
        nowin = used & (lo == NOWIN)
        within = used & (lo >= 0) & (lo < NOWIN)
        keys = tt[:, T_KEY] - 1
        return Facts(keys[won], wd[won], keys[nowin], keys[within], lo[within])

    def clear(self) -> None:
        """Forget every result (a new game, or the memory bound reached)."""
        self.tt = _new_table(_START_SLOTS)
        self.ctl[:] = 0
        self._scratch = _scratch()

    # -- searching -----------------------------------------------------------------------

    def plain(self, root: int, max_nodes: int | None = None, deadline: float | None = None,
              stop: Callable[[], bool] | None = None) -> Run:
        """Plain WinTree from ``root`` (a position vertex) within ``max_nodes`` expansions,
        until ``time.monotonic()`` passes ``deadline`` or ``stop()`` is true; a search
        that stops early forgets its path (every result it settled is kept)."""
        return self._run(False, root, 0, max_nodes, deadline, stop)

    def cut(self, root: int, plies: int, max_nodes: int | None = None, deadline: float | None = None,
            stop: Callable[[], bool] | None = None) -> Run:
        """WinTree on the game cut at ``plies`` plies from ``root`` (see :meth:`plain`)."""
        if plies < 0:
            raise ValueError(f"plies must be >= 0, not {plies}")
        return self._run(True, root, plies, max_nodes, deadline, stop)

    def _run(self, cut: bool, root: int, plies: int, max_nodes: int | None, deadline: float | None,
             stop: Callable[[], bool] | None) -> Run:
        ctl = self.ctl
        ctl[C_SP] = ctl[C_ATOP] = ctl[C_PN] = 0
        ctl[C_ROOT] = root
        ctl[C_PLIES] = plies
        before = int(ctl[C_NODES])
        limit = None if max_nodes is None else before + max_nodes
        if max_nodes is not None:
            self._reserve(max_nodes)
        while True:
            if deadline is not None and time.monotonic() >= deadline:
                return self._stop(before, "time")
            if stop is not None and stop():
                return self._stop(before, "stop")
            chunk = int(ctl[C_NODES]) + CHUNK if limit is None else min(limit, int(ctl[C_NODES]) + CHUNK)
            other = _NO_TABLE if self.partner is None else self.partner.tt
            if cut:
                code = cut_run(*self._graph_args, self.gs, self.black_first, self.order, self.tt, other,
                               self.frames, self.arena, self.pend, ctl, chunk, self._scratch)
            else:
                code = plain_run(*self._graph_args, self.gs, self.close_cycles, self.black_first, self.order,
                                 self.tt, other, self.frames, self.arena, self.pend, ctl, chunk, self._scratch)
            if code == DONE:
                self.nodes += int(ctl[C_NODES]) - before
                return Run(True, int(ctl[C_NODES]) - before)
            if code == SPENT:
                if limit is not None and ctl[C_NODES] >= limit:
                    return self._stop(before, "nodes")
            elif code == ROOM:
                if not self._grow():
                    return self._stop(before, "memory")
            else:
                v = int(ctl[C_ERROR])
                self._stop(before, "error")
                raise PositionError(f"{self.graph.key}: " + (
                    f"a capture or promotion from {self.graph.board(v).fen()} reaches no legal position of its table "
                    "(a corrupt or mismatched table?)" if code == BAD_LEAF else f"vertex {v} is no legal position"))

    def _stop(self, before: int, reason: str) -> Run:
        _abandon(self.tt, self.frames, self.pend, self.ctl)
        nodes = int(self.ctl[C_NODES]) - before
        self.nodes += nodes
        return Run(False, nodes, reason)

    def _grow(self) -> bool:
        ctl = self.ctl
        if ctl[C_SP] + 2 > self.frames.shape[0]:
            self.frames = np.concatenate([self.frames, np.zeros_like(self.frames)])
        if ctl[C_ATOP] + _ARENA_ROOM > self.arena.shape[0]:
            self.arena = np.concatenate([self.arena, np.zeros_like(self.arena)])
        if ctl[C_PN] + 2 > self.pend.shape[0]:
            self.pend = np.concatenate([self.pend, np.zeros_like(self.pend)])
        if 2 * (ctl[C_USED] + 2) > self.tt.shape[0]:
            if self.max_bytes is not None and 2 * self.table_bytes > self.max_bytes:
                return False
            self._resize(2 * self.tt.shape[0])
        return True

    def _reserve(self, nodes: int) -> None:
        """Size the table at once for ``nodes`` more expansions (an entry each at most), up
        to :data:`_RESERVE_SLOTS` and ``max_bytes``: doubling it as it fills, each time
        moving every entry, took a fifth of a 1 M-node search."""
        slots = 1 << (2 * (int(self.ctl[C_USED]) + nodes + 2) - 1).bit_length()
        slots = min(slots, _RESERVE_SLOTS)
        if self.max_bytes is not None:
            slots = min(slots, 1 << (max(1, self.max_bytes // SLOT_BYTES).bit_length() - 1))
        if slots > self.tt.shape[0]:
            self._resize(slots)

    def _resize(self, slots: int) -> None:
        new = _new_table(slots)
        _rehash(self.tt, new)
        self.tt = new
