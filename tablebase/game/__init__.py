"""Romano's game model: the :class:`GameGraph` protocol, explicit CSR graphs, small games.

>>> from tablebase.game import ExplicitGame, as_explicit, Nim
>>> as_explicit(Nim((1, 2))).num_vertices
7
"""

from tablebase.game.examples import Nim, SubtractionGame, TicTacToe, TugOfWar
from tablebase.game.graph import INF, ExplicitGame, GameGraph, InvalidGameError, VertexArray, as_explicit

__all__ = [
    "INF",
    "ExplicitGame",
    "GameGraph",
    "InvalidGameError",
    "Nim",
    "SubtractionGame",
    "TicTacToe",
    "TugOfWar",
    "VertexArray",
    "as_explicit",
]
