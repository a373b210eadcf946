"""Solvers for Romano's game graphs.

:func:`retrograde` solves an explicit graph completely (eval and both depths of
every vertex); :func:`reference_solution` is its slow, literal twin for tests;
:func:`win_tree` is Romano's depth-first WinTree search from one root, which reads
the game lazily; :func:`never_lose_strategy` turns it into a strategy (Thm 4.8).

>>> from tablebase.game import TugOfWar
>>> from tablebase.solve import retrograde, win_tree
>>> game = TugOfWar(7, 2, start=(2, 1))
>>> int(retrograde(game).eval[0]), win_tree(game, 1).root_win
(1, True)
"""

from tablebase.game.graph import INF
from tablebase.solve.explicit import Solution, reference_solution, retrograde
from tablebase.solve.wintree import (
    Color,
    NeverLoseStrategy,
    VertexMap,
    WinTreeResult,
    WinTreeSearch,
    never_lose_strategy,
    win_tree,
)

__all__ = [
    "INF",
    "Color",
    "NeverLoseStrategy",
    "Solution",
    "VertexMap",
    "WinTreeResult",
    "WinTreeSearch",
    "never_lose_strategy",
    "reference_solution",
    "retrograde",
    "win_tree",
]
