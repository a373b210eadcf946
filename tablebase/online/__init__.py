"""The online solver: Romano's WinTree on chess, with the tables answering captures and
promotions, and its cross-check against the tables.

>>> import chess
>>> from tablebase import open_tablebase
>>> from tablebase.online import solve
>>> with open_tablebase("data/test-tables") as tb:
...     solution = solve(tb, chess.Board("7k/8/6K1/8/8/8/8/1R6 w - - 0 1"))
...     solution.sides[0].win, solution.sides[0].d, solution.never_lose.uci()
(True, 1, 'b1b8')
"""

from .crosscheck import CrosscheckReport, crosscheck, sample_positions
from .graph import SearchGraph, has_table, pack, unpack
from .bounded import DepthBounded, bounded_order
from .compiled import CompiledSearch, Facts
from .search import (
    CHOICES,
    ENGINES,
    ORDERS,
    Choice,
    NeverLoseMove,
    Proof,
    PythonSearch,
    Solution,
    choose_move,
    heuristic_order,
    make_search,
    make_searches,
    never_lose_move,
    prove,
    run_win_tree,
    solve,
)

__all__ = [
    "CHOICES",
    "ENGINES",
    "ORDERS",
    "Choice",
    "CompiledSearch",
    "Facts",
    "PythonSearch",
    "choose_move",
    "make_search",
    "make_searches",
    "CrosscheckReport",
    "NeverLoseMove",
    "SearchGraph",
    "Proof",
    "DepthBounded",
    "bounded_order",
    "prove",
    "Solution",
    "crosscheck",
    "has_table",
    "heuristic_order",
    "never_lose_move",
    "pack",
    "run_win_tree",
    "sample_positions",
    "solve",
    "unpack",
]
