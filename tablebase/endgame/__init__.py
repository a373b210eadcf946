"""Chess endgames: material keys, the index, move and un-move generation, and the
bridge to python-chess boards.

A table is one material (``KQvKR``: White holds the left-hand side) and one side to
move (0 White, 1 Black); its positions are numbered by a dense index. The kernels work
on contiguous index ranges; :class:`ChessGame` turns a whole table into a Romano game
graph.

>>> import chess
>>> from tablebase.endgame import board_index, index_board
>>> key, stm, idx = board_index(chess.Board("8/8/8/8/8/2k5/1q6/K7 w - - 0 1"))
>>> key, stm
('KQvK', 1)
>>> index_board(key, stm, idx).fen()
'8/8/8/8/8/2K5/1Q6/k7 b - - 0 1'
"""

from .graph import ChessGame
from .index import IndexScheme
from .material import Material, all_materials, board_material, dependency_order, normalize_key
from .movegen import ExitMap, predecessor_lists, successor_lists
from .pychess import board_index, index_board

__all__ = [
    "ChessGame",
    "ExitMap",
    "IndexScheme",
    "Material",
    "all_materials",
    "board_index",
    "board_material",
    "dependency_order",
    "index_board",
    "normalize_key",
    "predecessor_lists",
    "successor_lists",
]
