"""Value codes: the one module that owns what a position's value looks like, while a table
is generated (uint16 codes), in the shards (int16 ``value`` column) and to users (``wdl``
and ``dtm``, python-chess conventions).

**In generation**, one uint16 per position:

* ``DECIDED + d``: decided at ply ``d``; the side to move wins if ``d`` is odd (it mates
  in ``d`` plies) and loses if ``d`` is even (``d = 0``: checkmated). This is Romano's
  ``d_g`` for the winner ``g``. ``EXIT_DECIDED + d`` is the same value, reached where a
  capture or promotion (an *exit*) achieves it: its shards may leave it to a probe of
  the exits (see below). :func:`is_decided` and :func:`depth` read both.
* ``1 .. MAX_WAYS``: not decided yet, and this many ways out are not known to lose: the
  moves that stay in the table, to distinct successors, not yet known to win for the
  opponent. At 0 the position is lost.
* ``exit_loss_code(e) + c``: the same count ``c``, plus one for the captures and
  promotions, which all lose, the slowest in ``e`` plies (``e`` is even): that way out
  goes at ply ``e``. The ply lives in the value rather than in a list.
* ``CANT_LOSE``: not decided, with a drawing exit: a draw unless a win is found
  (finished as ``EXIT_DRAW``). A stalemate is ``DRAW`` from the start: it has no exit.
* ``TENT_WIN + e``: not decided, but an exit wins in ``e`` plies.
* ``ILLEGAL``: not a legal position (or not a placement of the index).

Finished, a table holds ``DECIDED``/``EXIT_DECIDED + d``, ``DRAW``, ``EXIT_DRAW`` and
``ILLEGAL``; :func:`plain` drops the exit marks, giving the *exact* codes (``DECIDED + d``,
``DRAW``, ``ILLEGAL``) that sub-tables, ``verify`` and the probes work with.

**In the shards** (:func:`stored_coding`), the ``value`` column is int16, from the side to
move: ``0`` a draw, ``d + 1`` a position decided at ply ``d``: even for a win in ``d``
plies (``d`` odd), odd for a loss (``1`` is checkmated, ``3`` mated in 2). The code is
never negative, so below a depth of 255 every byte but the lowest is zero, which split
byte streams compress to nothing (the signed coding of format 3, ``+d`` / ``-(d + 1)``,
alternated 0x00 and 0xFF wherever wins and losses mix: 1.01-1.32x the bytes, measured in
``benchmarks/storage.py``). Two kinds of rows hold a *don't care* value, chosen by
:func:`fill_dont_care` to lengthen runs (Syzygy's trick):

* indices that are no legal position: any value;
* positions whose value a capture or promotion achieves: any value that is not better
  for the side to move than the true one. The true value is then the better of the
  stored value and the best exit (:func:`resolve`), which every reader computes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

DRAW = np.uint16(0)
DECIDED = np.uint16(0x1000)
TENT_WIN = np.uint16(0x8000)
EXIT_DECIDED = np.uint16(0x9000)
EXIT_DRAW = np.uint16(0xA000)
ILLEGAL = np.uint16(0xFFFF)
KIND_MASK = np.uint16(0xF000)
DEPTH_MASK = np.uint16(0x0FFF)
#: ``v & DECIDED_KIND == DECIDED`` for both DECIDED and EXIT_DECIDED codes, and no other.
DECIDED_KIND = np.uint16(0x7000)
#: ``v & UNMARKED`` turns EXIT_DECIDED + d into DECIDED + d (and no other code into one).
UNMARKED = np.uint16(0x7FFF)
MAX_DEPTH = 0x0FFF
CANT_LOSE = np.uint16(0x00FF)
#: Most ways out a value counts (7 bits, so that a count fits beside an exit's ply).
MAX_WAYS = 0x7F
EXIT_LOSS = np.uint16(0x2000)
#: Slowest losing exit a value holds: exit_loss_code(MAX_EXIT_LOSS) + MAX_WAYS is 0x7FFF.
MAX_EXIT_LOSS = 382

#: Kinds of stored rows (:func:`stored_coding`): the value as it is, any value, or any
#: value not better than it for the side to move.
FIXED, FREE, BOUNDED = 0, 1, 2


@njit(cache=True, inline="always")
def exit_loss_code(e):
    """Base of the values that count ways out plus a losing exit settled at (even) ply ``e``."""
    return EXIT_LOSS + np.uint16(e << 6)


@njit(cache=True, inline="always")
def is_decided(v):
    """Whether an in-generation code is decided (marked as reached by an exit or not)."""
    return (v & DECIDED_KIND) == DECIDED


@njit(cache=True, inline="always")
def decided_at(v, d):
    """Whether ``v`` was decided at ply ``d`` (the frontier of ply ``d + 1``)."""
    return (v & UNMARKED) == (DECIDED | np.uint16(d))


@njit(cache=True, inline="always")
def is_frontier(v, ply, dtz):
    """Whether ``v`` was decided at ply ``ply`` (the frontier of ply ``ply + 1``): a DTM
    code, or with ``dtz`` a DTZ code lost or won at distance ``ply``."""
    if dtz:
        return v == ZLOST | np.uint16(ply) or v == ZWON | np.uint16(ply)
    return decided_at(v, ply)


@njit(cache=True)
def count_frontier(val, ply, dtz, base, shift, hits):
    """Add to ``hits`` the positions of ``val`` decided at ``ply`` (:func:`is_frontier`),
    per block: ``val[j]`` counts in ``hits[(base + j) >> shift]``."""
    for j in range(val.shape[0]):
        if is_frontier(val[j], ply, dtz):
            hits[(base + j) >> shift] += 1


@njit(cache=True)
def frontier_in_blocks(val, ply, dtz, lo, shift, hits, start, budget):
    """The frontier of ply ``ply + 1`` (positions of ``val``, indices from ``lo``, decided
    at ``ply``) in the blocks of ``1 << shift`` positions from block ``start`` on, as far
    as a block that brings the count past ``budget``; ``hits[b]`` is how many block ``b``
    holds, and the others are never read. Returns the indices: DTM codes' all in one
    array, DTZ codes' lost ones and won ones apart; and the block to go on from."""
    stop = start
    n = 0
    while stop < hits.shape[0] and n < budget:
        n += hits[stop]
        stop += 1
    first = np.empty(n, dtype=np.int64)
    second = np.empty(n if dtz else 0, dtype=np.int64)
    n1 = n2 = 0
    for b in range(start, stop):
        if not hits[b]:
            continue
        a = b << shift
        block = val[a:a + (1 << shift)]
        if dtz:
            n1 = _gather(block, np.uint16(0xFFFF), ZLOST | np.uint16(ply), first, n1, lo + a)
            n2 = _gather(block, np.uint16(0xFFFF), ZWON | np.uint16(ply), second, n2, lo + a)
        elif hits[b] << 4 > block.shape[0]:  # dense: one pass that writes as it goes
            n1 = _gather_dense(block, UNMARKED, DECIDED | np.uint16(ply), first, n1, lo + a)
        else:
            n1 = _gather(block, UNMARKED, DECIDED | np.uint16(ply), first, n1, lo + a)
    return first[:n1], second[:n2], stop


@njit(cache=True, inline="always")
def _gather(block, mask, code, out, n, base):
    """Append to ``out`` from ``n`` on ``base + j`` for each ``block[j] & mask == code``;
    returns the new ``n``. By runs of 64: counting a run vectorises (a loop over a view's
    own range does, one over ``range(a, z)`` not), and most runs hold none."""
    for c in range(0, block.shape[0], 64):
        run = block[c:c + 64]
        k = 0
        for j in range(run.shape[0]):
            k += (run[j] & mask) == code
        if k:
            if n + k > out.shape[0]:
                raise ValueError("a block holds more of the frontier than its count")
            for j in range(run.shape[0]):
                if (run[j] & mask) == code:
                    out[n] = base + c + j
                    n += 1
    return n


@njit(cache=True, inline="always")
def _gather_dense(block, mask, code, out, n, base):
    """:func:`_gather` in one pass, for a block where most runs hold some."""
    for j in range(block.shape[0]):
        if (block[j] & mask) == code:
            if n == out.shape[0]:
                raise ValueError("a block holds more of the frontier than its count")
            out[n] = base + j
            n += 1
    return n


@njit(cache=True)
def finalize(val):
    """Undecided positions are draws: those with a drawing exit ``EXIT_DRAW``. Finished
    values stay as they are."""
    for j in range(val.shape[0]):
        v = val[j]
        if v != ILLEGAL and v != EXIT_DRAW and not is_decided(v):
            val[j] = EXIT_DRAW if v == CANT_LOSE else DRAW


def plain(val: np.ndarray) -> np.ndarray:
    """Finished codes without the exit marks: exact codes (``DECIDED + d``, ``DRAW``,
    ``ILLEGAL``)."""
    out = val & UNMARKED
    out[val == EXIT_DRAW] = DRAW
    out[val == ILLEGAL] = ILLEGAL
    return out


# -- the stored column --------------------------------------------------------------------

@njit(cache=True)
def stored_coding(val):
    """Finished codes (exit marks kept) to the int16 ``value`` column and the kind of each
    row (FIXED, FREE: no legal position, BOUNDED: an exit achieves the value), in one
    pass (numpy's expression of it, in the tests, takes 8 passes and 4 temporaries)."""
    n = val.shape[0]
    value = np.empty(n, dtype=np.int16)
    kinds = np.empty(n, dtype=np.uint8)
    for j in range(n):
        v = val[j]
        if v == ILLEGAL:
            value[j], kinds[j] = 0, FREE
            continue
        if (v & DECIDED_KIND) == DECIDED:
            value[j] = np.int16(v & DEPTH_MASK) + 1
        else:
            value[j] = 0
        kinds[j] = BOUNDED if (v & KIND_MASK) == EXIT_DECIDED or v == EXIT_DRAW else FIXED
    return value, kinds


@njit(cache=True)
def value_counts(val):
    """(wins, draws, losses, longest DTM) of finished codes, exit marks kept, for the side
    to move: what ``to_wdl_dtm(plain(val))`` counts, in one pass."""
    wins = draws = losses = longest = 0
    for j in range(val.shape[0]):
        v = val[j]
        if v == ILLEGAL:
            continue
        if (v & DECIDED_KIND) == DECIDED:
            d = np.int64(v & DEPTH_MASK)
            if d % 2 == 1:
                wins += 1
            else:
                losses += 1
            longest = max(longest, d)
        else:
            draws += 1
    return wins, draws, losses, longest


def exact_from_stored(value: np.ndarray) -> np.ndarray:
    """The ``value`` column to exact codes (what a row means when no exit betters it)."""
    v = value.astype(np.int32)
    return np.where(v == 0, DRAW, DECIDED + v - 1).astype(np.uint16)


@njit(cache=True, inline="always")
def rank_of_stored(s):
    """Larger is better for the side to move: wins by fewer plies, draws, losses by more
    (the probes' ranks of exact codes: ``32768 - d`` for a win in ``d``, ``d - 32768`` for a
    loss)."""
    if s == 0:
        return np.int64(0)
    if s % 2 == 0:
        return 32769 - np.int64(s)
    return np.int64(s) - 32769


@njit(cache=True)
def fill_dont_care(value, kinds):
    """Choose the don't-care rows of ``value`` (storage order; in place) to lengthen runs:
    each takes the value before it where its kind allows, else the next FIXED value where
    allowed, else keeps its own (always allowed)."""
    n = value.shape[0]
    nxt = np.empty(n, dtype=np.int32)  # the next FIXED value at or after j; 1 << 20: none
    follow = np.int32(1 << 20)
    for j in range(n - 1, -1, -1):
        if kinds[j] == FIXED:
            follow = np.int32(value[j])
        nxt[j] = follow
    prev = np.int32(1 << 20)
    for j in range(n):
        k = kinds[j]
        if k == FREE:
            if prev != 1 << 20:
                value[j] = prev
            elif nxt[j] != 1 << 20:
                value[j] = nxt[j]
        elif k == BOUNDED:
            limit = rank_of_stored(value[j])
            if prev != 1 << 20 and rank_of_stored(prev) <= limit:
                value[j] = prev
            elif nxt[j] != 1 << 20 and rank_of_stored(nxt[j]) <= limit:
                value[j] = nxt[j]
        prev = np.int32(value[j])


@njit(cache=True, inline="always")
def resolve(v, best_win, has_draw, worst_loss):
    """The exact code of a position whose stored value reads as the exact code ``v``,
    given its exits' summary from the mover's side (fastest win, MAX_DEPTH + 1 if none;
    any draw; slowest loss, 0 if none): the better of the two."""
    if best_win <= MAX_DEPTH:
        d = np.int64(v & DEPTH_MASK)
        if v != DRAW and d % 2 == 1 and d <= best_win:
            return v
        return DECIDED | np.uint16(best_win)
    if v == DRAW:
        return v
    d = np.int64(v & DEPTH_MASK)
    if d % 2 == 1:
        return v
    if has_draw:
        return DRAW
    if worst_loss > d:
        return DECIDED | np.uint16(worst_loss)
    return v


# -- the 50-move rule: DTZ50'' ---------------------------------------------------------------
#
# A second game over the same positions: its moves are the table's piece moves (those keep
# the halfmove clock running); a capture or pawn move *zeroes* the clock and ends a phase,
# worth what the position it reaches is worth at clock 0, its *class* (python-chess's
# ``probe_wdl``: 2 win, 1 cursed win, 0 draw, -1 blessed loss, -2 loss). Distances are
# Syzygy's DTZ50'': plies to the next zeroing move (or mate) under optimal play, where a
# zeroing move into a class +-1 position counts 101 plies, so that the winner first wins
# within the rule (a win whose distance is at most 100 is class 2, a longer one cursed),
# and the loser first makes it last past 100 (blessed). Codes, one uint16 per position:
#
# * ``ZWON + e`` / ``ZLOST + e``: decided, the side to move wins / loses at distance
#   ``e`` (``ZLOST + 0``: checkmated);
# * ``1 .. MAX_WAYS``, ``exit_loss_code(e) + c``, ``CANT_LOSE``, ``TENT_WIN + e``,
#   ``DRAW``, ``ILLEGAL``: as in generation above, the zeroing moves playing the exits'
#   part (``e`` is 1 or 101).
#
# Stored (int16 ``dtz`` column): ``+e`` a win, ``0`` a draw, ``-(e + 1)`` a loss (``-1``
# checkmated), so that the sign is the result and the class follows from the value alone.

ZWON = np.uint16(0xB000)
ZLOST = np.uint16(0xC000)
#: Distance of a zeroing move into a position of class -2 / -1 for the opponent.
ZERO_WIN, ZERO_CURSED = 1, 101
#: The longest distance of a class 2 win (and of a class -2 loss).
RULE_PLIES = 100


@njit(cache=True, inline="always")
def is_zdecided(v):
    k = v & KIND_MASK
    return v != ILLEGAL and (k == ZWON or k == ZLOST)


@njit(cache=True, inline="always")
def zero_code(c):
    """What a zeroing move into a position of class ``c`` (from the mover's side there)
    gives the mover: its distance, positive for a win, negative for a loss, 0 a draw."""
    if c == -2:
        return ZERO_WIN
    if c == -1:
        return ZERO_CURSED
    if c == 2:
        return -ZERO_WIN
    if c == 1:
        return -ZERO_CURSED
    return 0


@njit(cache=True)
def zfinalize(zval):
    """Positions no distance decided are draws."""
    for j in range(zval.shape[0]):
        v = zval[j]
        if v != ILLEGAL and not is_zdecided(v):
            zval[j] = DRAW


@njit(cache=True)
def dtz_stored(zval: np.ndarray) -> np.ndarray:
    """Finished DTZ codes to the int16 ``dtz`` column (illegal rows 0: don't care)."""
    out = np.empty(zval.shape[0], dtype=np.int16)
    for j in range(zval.shape[0]):
        v = zval[j]
        e = np.int16(v & DEPTH_MASK)
        kind = v & KIND_MASK
        out[j] = e if kind == ZWON else -e - 1 if kind == ZLOST else 0  # ILLEGAL is neither
    return out


@njit(cache=True)
def dtz_counts(zval: np.ndarray) -> tuple[int, int, int]:
    """(cursed wins, blessed losses, longest DTZ) of finished DTZ codes."""
    cursed = blessed = longest = 0
    for j in range(zval.shape[0]):
        v = zval[j]
        if v == ILLEGAL:
            continue
        e = np.int64(v & DEPTH_MASK)  # int() of an unsigned is uint64, and max(int64, uint64) a float
        kind = v & KIND_MASK
        if e > RULE_PLIES:
            if kind == ZWON:
                cursed += 1
            elif kind == ZLOST:
                blessed += 1
        longest = max(longest, e)
    return cursed, blessed, longest


def zcodes_from_stored(dtz: np.ndarray, illegal: np.ndarray) -> np.ndarray:
    """Inverse of :func:`dtz_stored`, given where the positions are illegal."""
    d = dtz.astype(np.int32)
    z = np.where(d > 0, ZWON + d, np.where(d < 0, ZLOST + (-d - 1), DRAW)).astype(np.uint16)
    z[illegal] = ILLEGAL
    return z


@njit(cache=True)
def class_of_stored_dtz(dtz: np.ndarray) -> np.ndarray:
    """The ``dtz`` column to classes (int8, -2 .. 2), python-chess's ``probe_wdl`` values."""
    out = np.empty(dtz.shape[0], dtype=np.int8)
    for j in range(dtz.shape[0]):
        d = int(dtz[j])
        out[j] = (2 if d <= RULE_PLIES else 1) if d > 0 else (-2 if -d - 1 <= RULE_PLIES else -1) if d < 0 else 0
    return out


@njit(cache=True)
def has_cursed(classes: np.ndarray) -> bool:
    """Whether ``classes`` (int8) hold a cursed win or a blessed loss (a loop: the numpy
    comparisons held three booleans per sub-table position, 1.3 GB for KRPvKR's)."""
    for j in range(classes.shape[0]):
        if classes[j] == 1 or classes[j] == -1:
            return True
    return False


def class_of_dtm(val: np.ndarray) -> np.ndarray:
    """Exact DTM codes to the classes a DTZ pass assumes at first (int8): every win and
    loss within the rule (a pass then corrects the cursed ones)."""
    wdl, _, _ = to_wdl_dtm(val)
    return (2 * wdl).astype(np.int8)


@njit(cache=True)
def class_of_finished(val: np.ndarray) -> np.ndarray:
    """:func:`class_of_dtm` of finished codes, exit marks kept (``class_of_dtm(plain(val))``)
    in one loop, without its temporaries."""
    out = np.empty(val.shape[0], dtype=np.int8)
    for j in range(val.shape[0]):
        v = val[j]
        if v == ILLEGAL or v == EXIT_DRAW or (v & DECIDED_KIND) != DECIDED:
            out[j] = 0
        else:
            out[j] = 2 if (v & DEPTH_MASK) % 2 == 1 else -2
    return out


def dtz_of_stored(s: int) -> tuple[int, int]:
    """(wdl50, dtz) of one stored ``dtz`` value, as python-chess's ``probe_wdl`` and
    ``probe_dtz`` give them (a checkmated side: -2, -1)."""
    if s > 0:
        return (2 if s <= RULE_PLIES else 1), s
    if s < 0:
        e = -s - 1
        return (-2 if e <= RULE_PLIES else -1), -max(e, 1)
    return 0, 0


# -- users' values ------------------------------------------------------------------------

def to_wdl_dtm(val: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact codes to (wdl int8, dtm int16, legal bool), python-chess conventions."""
    legal = val != ILLEGAL
    d = (val & DEPTH_MASK).astype(np.int16)
    decided = legal & ((val & KIND_MASK) == DECIDED)
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


def decode_value(v: int) -> tuple[int, int]:
    """(wdl, dtm) of one exact code (not ILLEGAL), as Python ints."""
    if v == _DRAW:
        return 0, 0
    d = v & _DEPTH_MASK
    return (1, d) if d & 1 else (-1, -d)


_DRAW, _DEPTH_MASK = int(DRAW), int(DEPTH_MASK)
