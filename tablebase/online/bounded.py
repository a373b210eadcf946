"""A game graph cut at a depth: what iterative deepening runs WinTree on.

``DepthBounded(game, plies)`` has a vertex ``(v, r)`` for a vertex ``v`` of ``game``
with ``r`` plies left: its successors are ``(u, r - 1)``, a sink of ``game`` stays a
sink with its value, and a non-sink with no plies left is a drawn sink. It is acyclic,
so WinTree on it never meets a GRAY vertex and every result is final at once; and a
forcing tree in it is one in ``game``, of the same height:

- ``(v, r)`` won by g  <=>  ``d_g(v) <= r`` in ``game`` (so a proved win is a real one,
  with ``d`` still an upper bound on ``d_g``);
- ``(v, r)`` not won by g  <=>  ``d_g(v) > r``: no proof that g does not win at all.

On a cyclic game such as chess, plain WinTree proves "g does not win" quickly (a cycle
back to the root settles it, Thm 3.4) but can wander for exponentially long before it
proves a long win, every vertex that touches the path being recomputed; a search cut at
``r`` plies has no such wandering. :func:`tablebase.online.search.prove` uses both.

The module knows nothing of chess.

>>> from tablebase.game import SubtractionGame
>>> from tablebase.solve import win_tree
>>> game = SubtractionGame(8)
>>> [win_tree(DepthBounded(game, r), 1, root=(game.start, r)).root_win for r in (4, 5)]
[False, True]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from tablebase.game.graph import GameGraph

Order = Callable[[Any, Hashable, Sequence[Hashable]], Sequence[Hashable]]


class DepthBounded:
    """``game`` with at most ``plies`` plies from ``start`` (a :class:`~tablebase.game.GameGraph`).

    ``free(v)``, where given, names vertices whose moves the bound does not count and
    that no bound cuts: a vertex reached by a counted move keeps its ``r`` along them.
    A table leaf and its depth chain are such: the bound is then on the plies to mate
    *or to a table*, and ``(v, r)`` won implies only that g wins from ``v`` (the
    forcing tree is a real one, of height ``d >= d_g(v)``); ``d_g(v) <= r`` still
    implies ``(v, r)`` won.
    """

    num_vertices = None

    def __init__(self, game: GameGraph, plies: int, start: Hashable | None = None,
                 free: Callable[[Hashable], bool] | None = None) -> None:
        if plies < 0:
            raise ValueError(f"plies must be >= 0, not {plies}")
        self.game = game
        self.plies = plies
        self.start = (game.start if start is None else start, plies)
        self.free = free

    def turn(self, v: tuple[Hashable, int]) -> int:
        return self.game.turn(v[0])

    def is_sink(self, v: tuple[Hashable, int]) -> bool:
        if self.game.is_sink(v[0]):
            return True
        return v[1] == 0 and (self.free is None or not self.free(v[0]))

    def win(self, v: tuple[Hashable, int]) -> int:
        return self.game.win(v[0]) if self.game.is_sink(v[0]) else 0

    def successors(self, v: tuple[Hashable, int]) -> Sequence[tuple[Hashable, int]]:
        if self.is_sink(v):
            return [v]
        r = v[1] if self.free is not None and self.free(v[0]) else v[1] - 1
        return [(u, r) for u in self.game.successors(v[0])]


def bounded_order(order: Order) -> Order:
    """The ``order`` hook of a :class:`DepthBounded` graph that orders like ``order`` on the game."""

    def wrapped(bounded: DepthBounded, v: tuple[Hashable, int], successors: Sequence[tuple[Hashable, int]]) -> list:
        r = dict(successors)
        return [(u, r[u]) for u in order(bounded.game, v[0], list(r))]

    return wrapped
