"""Solving explicit game graphs: retrograde analysis and its slow reference twin.

Both compute Romano's eval (Def. 2.7, least fixed point) and the depths d_g
(Def. 2.8) of every vertex:

- sinks: eval = win(v), d_g = 0 if win(v) == g else INF;
- turn(v) == g: d_g = 1 + min over successors; otherwise 1 + max (INF if any is INF);
- eval(v) = g iff d_g(v) < INF (Lemma 2.9), 0 where neither side wins.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numba
import numpy as np

from tablebase.game.graph import INF, ExplicitGame, GameGraph, as_explicit


@dataclass(frozen=True, eq=False)
class Solution:
    """Values of every vertex of a game graph, indexed by vertex id.

    ``eval`` is int8 (+1 White wins, -1 Black wins, 0 draw); ``depth(g)`` the int64
    array of d_g, with :data:`INF` where g does not win. For a graph numbered by
    :func:`~tablebase.game.as_explicit`, ``index(v)`` gives the id of vertex ``v``.

    >>> from tablebase.game import SubtractionGame
    >>> from tablebase.solve import retrograde
    >>> solution = retrograde(SubtractionGame(9))
    >>> i = solution.index((9, 1))
    >>> int(solution.eval[i]), int(solution.depth(-1)[i])
    (-1, 6)
    """

    eval: np.ndarray
    depth_white: np.ndarray
    depth_black: np.ndarray
    vertex_ids: Sequence[Hashable] | None = None
    vertex_index: Mapping[Hashable, int] | None = None

    def depth(self, g: int) -> np.ndarray:
        """d_g for every vertex: g = +1 (White) or -1 (Black)."""
        if g == 1:
            return self.depth_white
        if g == -1:
            return self.depth_black
        raise ValueError(f"g must be +1 or -1, got {g!r}")

    def index(self, v: Hashable) -> int:
        """The array index of vertex ``v``."""
        return int(v) if self.vertex_index is None else self.vertex_index[v]


def retrograde(game: GameGraph) -> Solution:
    """Solves ``game`` by backward induction from the sinks, in O(V + E).

    For each side g, a breadth-first sweep backwards from the sinks g wins decides
    vertices in increasing order of d_g: a vertex where g moves is decided by its
    first decided successor (1 + min), one where the opponent moves when a counter of
    undecided arcs reaches zero (1 + max). Counting arcs, not distinct successors,
    keeps parallel arcs right. Non-explicit games are first materialised with
    :func:`~tablebase.game.as_explicit`.

    >>> from tablebase.game import ExplicitGame
    >>> from tablebase.solve import retrograde
    >>> game = ExplicitGame([[1, 2], [1], [0]], turn=[1, -1, -1], win={1: -1})
    >>> retrograde(game).eval.tolist()
    [0, -1, 0]
    """
    explicit = as_explicit(game)
    indptr = np.asarray(explicit.indptr)
    indices = np.asarray(explicit.indices)
    turn = np.asarray(explicit.turn)
    win = np.asarray(explicit.win)
    is_sink = np.asarray(explicit.is_sink)
    counts = np.bincount(indices, minlength=explicit.num_vertices)
    rev_indptr = np.zeros(explicit.num_vertices + 1, np.int64)
    np.cumsum(counts, out=rev_indptr[1:])
    rev_indices = _reverse_arcs(indptr, indices, rev_indptr)
    depths = {
        g: _depths(indptr, rev_indptr, rev_indices, turn, win, is_sink, np.int8(g), INF) for g in (1, -1)
    }
    return _solution(explicit, depths[1], depths[-1])


@numba.njit(cache=True)
def _reverse_arcs(indptr, indices, rev_indptr):  # pragma: no cover - compiled
    # Counting sort of the arcs by head: linear, unlike an argsort.
    fill = rev_indptr[:-1].copy()
    sources = np.empty(indices.size, indices.dtype)
    for v in range(indptr.size - 1):
        for a in range(indptr[v], indptr[v + 1]):
            u = indices[a]
            sources[fill[u]] = v
            fill[u] += 1
    return sources


@numba.njit(cache=True)
def _depths(indptr, rev_indptr, rev_indices, turn, win, is_sink, g, inf):  # pragma: no cover - compiled
    n = turn.size
    depth = np.full(n, inf, np.int64)
    # Arcs of an opponent's vertex not yet known to lead to a win for g.
    undecided = np.empty(n, np.int64)
    queue = np.empty(n, np.int64)
    tail = 0
    for v in range(n):
        undecided[v] = indptr[v + 1] - indptr[v]
        if is_sink[v] and win[v] == g:
            depth[v] = 0
            queue[tail] = v
            tail += 1
    # FIFO order pops vertices by non-decreasing depth, so the first decided
    # successor gives the min and the last one the max.
    head = 0
    while head < tail:
        u = queue[head]
        head += 1
        next_depth = depth[u] + 1
        for a in range(rev_indptr[u], rev_indptr[u + 1]):
            w = rev_indices[a]
            # Also skips a won sink's own self-loop: its depth is already 0.
            if depth[w] != inf:
                continue
            if turn[w] != g:
                undecided[w] -= 1
                if undecided[w] != 0:
                    continue
            depth[w] = next_depth
            queue[tail] = w
            tail += 1
    return depth


def reference_solution(game: GameGraph) -> Solution:
    """The slow twin of :func:`retrograde`: Defs. 2.7 and 2.8 iterated literally.

    eval starts at the sinks' values and 0 elsewhere, d_g at 0 / INF on sinks and INF
    elsewhere; each round applies the definitions to every vertex at once, until
    nothing changes. Both operators are monotone, so this reaches their least fixed
    points (round i decides exactly the vertices won within i plies). eval is
    computed on its own, not from the depths, so that the tests check Lemma 2.9.
    O(rounds x E): for tests only.

    >>> from tablebase.game import ExplicitGame
    >>> from tablebase.solve import reference_solution
    >>> game = ExplicitGame([[1, 2], [1], [0]], turn=[1, -1, -1], win={1: -1})
    >>> solution = reference_solution(game)
    >>> solution.eval.tolist(), int(solution.depth(-1)[1])
    ([0, -1, 0], 0)
    """
    explicit = as_explicit(game)
    starts = np.asarray(explicit.indptr[:-1])
    successors = np.asarray(explicit.indices)
    white = np.asarray(explicit.turn) == 1
    sink = np.asarray(explicit.is_sink)
    win = np.asarray(explicit.win).astype(np.int64)

    value = np.where(sink, win, 0)
    while True:
        # Every vertex has at least one arc, so no reduceat segment is empty.
        best_white = np.maximum.reduceat(value[successors], starts)
        best_black = np.minimum.reduceat(value[successors], starts)
        new_value = np.where(sink, win, np.where(white, best_white, best_black))
        if np.array_equal(new_value, value):
            break
        value = new_value

    depths = {}
    for g in (1, -1):
        to_move = white if g == 1 else ~white
        sink_depth = np.where(win == g, 0, INF)
        depth = np.where(sink, sink_depth, INF)
        while True:
            best = np.where(
                to_move,
                np.minimum.reduceat(depth[successors], starts),
                np.maximum.reduceat(depth[successors], starts),
            )
            new_depth = np.where(sink, sink_depth, np.where(best >= INF, INF, best + 1))
            if np.array_equal(new_depth, depth):
                break
            depth = new_depth
        depths[g] = depth
    return Solution(
        eval=value.astype(np.int8),
        depth_white=depths[1],
        depth_black=depths[-1],
        vertex_ids=explicit.vertex_ids,
        vertex_index=explicit.vertex_index,
    )


def _solution(explicit: ExplicitGame, depth_white: np.ndarray, depth_black: np.ndarray) -> Solution:
    value = np.zeros(explicit.num_vertices, np.int8)
    value[depth_white < INF] = 1
    value[depth_black < INF] = -1
    return Solution(
        eval=value,
        depth_white=depth_white,
        depth_black=depth_black,
        vertex_ids=explicit.vertex_ids,
        vertex_index=explicit.vertex_index,
    )
