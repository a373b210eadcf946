"""WinTree on chess: move orderings, budgets, the never-lose move and :func:`solve`.

The search itself is the generic :func:`tablebase.solve.win_tree`; this module chooses
how it orders moves, bounds it by nodes and seconds, and turns the result into what a
chess user asks: does a side win, in how many plies at most, and which move keeps at
least a draw (Thm 4.8).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

import chess

from tablebase.endgame.pychess import board_index
from tablebase.probe import Tablebase
from tablebase.solve import Color, WinTreeResult, WinTreeSearch

from .bounded import DepthBounded, bounded_order
from .graph import SearchGraph

#: Move orderings: ``natural`` (the move generator's order), ``black-first`` (Sec. 4.1:
#: finished successors before the others), ``heuristic`` (table leaves won by the side
#: searched for first, fastest first, then checks; at the opponent's turn its captures
#: that escape a loss first, then checks).
ORDERS = ("natural", "black-first", "heuristic", "heuristic+black-first")


# Positions whose move order heuristic_order keeps; past this many it starts again.
_ORDER_MEMO = 1 << 18


def heuristic_order(g: int) -> Callable[[SearchGraph, Hashable, Sequence[Hashable]], list[Hashable]]:
    """An ``order`` hook for :func:`~tablebase.solve.win_tree` searching for player ``g``.

    The side to move at a vertex tries first what ends the game in its favour, since one
    good move decides a vertex for whichever side needs only one (g at its turns while
    proving a win; the opponent at its turns while refuting one): checkmates and the
    captures and promotions into table positions it wins (fastest first; for the
    opponent, also those g does not win, and stalemates), then checks, then quiet moves,
    each by the fewest replies left to the other side, its king nearest the edge, the
    kings closest (a mating net narrows), and last what is bad for it. Python's sort is
    stable, so ties keep the move generator's order.
    """

    # A search cut at r plies meets one position with several r: sort each once.
    memo: dict[Hashable, list[Hashable]] = {}

    def order(game: SearchGraph, v: Hashable, successors: Sequence[Hashable]) -> list[Hashable]:
        if type(v) is not int:
            return list(successors)  # a leaf's depth chain: one successor
        known = memo.get(v)
        if known is not None:
            return known
        if len(memo) >= _ORDER_MEMO:
            memo.clear()
        memo[v] = ordered = sorted(successors, key=rank_from(game, v))
        return ordered

    def rank_from(game: SearchGraph, v: int) -> Callable[[Hashable], tuple[int, ...]]:
        mover = game.turn(v)
        mine = mover == g
        packed = game.packed_features(v)

        def rank(u: Hashable) -> tuple[int, ...]:
            if type(u) is not int:  # a leaf: the successors of a position are no chains
                w, plies = game.leaf_value(u)
                if w == mover:
                    return (0, plies)
                return (4, 0) if mine or w == g else (0, 1000)
            f = packed[u]
            replies = f & 255
            if replies == 0:
                if f >> 16:
                    return (0, 0)
                return (4, 0) if mine else (0, 1000)
            return (1 if f >> 16 else 2, replies, (f >> 8) & 3, (f >> 10) & 15)

        return rank

    return order


def _orders(order: str, g: int) -> tuple[bool, Callable | None]:
    if order not in ORDERS:
        raise ValueError(f"unknown move order {order!r}; choose one of {', '.join(ORDERS)}")
    return order in ("black-first", "heuristic+black-first"), heuristic_order(g) if order.startswith("heuristic") else None


def _search(graph: SearchGraph, g: int, order: str, close_cycles: bool) -> WinTreeSearch:
    black_first, hook = _orders(order, g)
    return WinTreeSearch(graph, g, black_first, hook, close_cycles)


def run_win_tree(graph: SearchGraph, g: int, root: Hashable | None = None, order: str = "heuristic",
                 max_nodes: int | None = None, max_seconds: float | None = None,
                 close_cycles: bool = True) -> WinTreeResult:
    """:func:`~tablebase.solve.win_tree` on ``graph`` with one of :data:`ORDERS`, closing
    cycles unless ``close_cycles`` is false (then it is the paper's search exactly)."""
    search = _search(graph, g, order, close_cycles)
    return search.search(graph.start if root is None else root, max_nodes, max_seconds)


@dataclass
class Proof:
    """What :func:`prove` found for player ``g``: ``win`` (None: the budget ran out
    first), ``d`` (the height of the win tree found, an upper bound on DTM, Thm 3.6),
    ``plies`` (the depth bound of the search that proved the win; None: the plain
    search), the nodes and seconds spent, the plain search's result ``tree``, and where
    g wins with g to move, ``move``: the root's successor that starts the win tree found.
    """

    g: int
    win: bool | None
    d: int | None
    plies: int | None
    nodes: int
    seconds: float
    tree: WinTreeResult = field(repr=False)
    move: Hashable | None = None

    @property
    def finished(self) -> bool:
        return self.win is not None


#: ``on_tree(plies, result)``: called with the result of each search :func:`prove` runs
#: once it stops (``plies`` None for the plain search, else the last depth bound the
#: deepening tried), for callers that inspect every result.
OnTree = Callable[[int | None, WinTreeResult], None]


def prove(graph: SearchGraph, g: int, root: Hashable | None = None, order: str = "heuristic",
          max_nodes: int | None = None, max_seconds: float | None = None, deepen: bool = True,
          on_tree: OnTree | None = None, close_cycles: bool = True) -> Proof:
    """Does ``g`` win from ``root``? Plain WinTree and (``deepen``) iterative deepening, in turns.

    The plain search settles the positions g does not win, a cycle back to the root
    being a proof (Thm 3.4); ``close_cycles`` (see :func:`~tablebase.solve.win_tree`)
    keeps it from searching a cycle's positions again and again. It proves long wins
    that convert into a table too, but may wander for long before it proves a mate
    inside the material: that is what WinTree on the game cut at ``r`` plies
    (:class:`~tablebase.online.bounded.DepthBounded`, table leaves and their chains not
    counted) proves, for r = 1, 3, 5, ... when g moves at the root, else 2, 4, 6, ... (a
    mate by g leaves the opponent to move, so mates have that parity), until one proves
    the win. The two take turns with budgets
    that double from turn to turn (twice as many nodes to the deepening, which finds
    the longest proofs), so neither starves the other; each keeps its final
    results from turn to turn, and each depth reuses those of the shallower ones (a
    position with ``r`` plies left means the same in each). ``max_nodes`` and
    ``max_seconds`` bound the whole.

    >>> import chess
    >>> from tablebase import open_tablebase
    >>> with open_tablebase("data/test-tables") as tb:
    ...     graph = SearchGraph.from_board(tb, chess.Board("8/8/8/7Q/8/k2K4/8/8 w - - 0 1"))
    ...     proof = prove(graph, 1, max_nodes=100_000)
    ...     proof.win, proof.d, proof.plies
    (True, 5, 5)
    """
    root = graph.start if root is None else root
    t0 = time.perf_counter()
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    black_first, hook = _orders(order, g)
    plain = WinTreeSearch(graph, g, black_first, hook, close_cycles)
    bounded = DepthBounded(graph, 0, root, free=graph.is_table_vertex)
    cut = WinTreeSearch(bounded, g, black_first, None if hook is None else bounded_order(hook))
    plies = 1 if graph.turn(root) == g else 2
    nodes = 0
    tree = cut_tree = None

    def left(share: int | None) -> tuple[int | None, float | None, bool]:
        """The budgets of the next search, and whether any is left."""
        spend = max_nodes if max_nodes is None else max_nodes - nodes
        if share is not None:
            spend = share if spend is None else min(spend, share)
        seconds = None if deadline is None else deadline - time.monotonic()
        return spend, seconds, (spend is None or spend > 0) and (seconds is None or seconds > 0)

    def done(win: bool | None, d: int | None, move: Hashable | None = None, deepened: bool = False) -> Proof:
        if on_tree is not None:
            on_tree(None, tree)
            if cut_tree is not None:
                on_tree(plies, cut_tree)
        return Proof(g, win, d, plies if deepened else None, nodes, time.perf_counter() - t0, tree, move)

    def first_move(result: WinTreeResult, successors: list) -> Hashable | None:
        won = [(result.d[u], k) for k, u in enumerate(successors) if result.color[u] is Color.BLACK and result.win[u]]
        return None if not won or graph.turn(root) != g else graph.successors(root)[min(won)[1]]

    share = 1024 if deepen else None
    while True:
        spend, seconds, any_left = left(share)
        if not any_left and tree is not None:
            return done(None, None)
        tree = plain.search(root, spend, seconds)
        nodes += tree.nodes
        if tree.finished:
            move = first_move(tree, list(graph.successors(root))) if tree.root_win else None
            return done(tree.root_win, int(tree.d[root]) if tree.root_win else None, move)
        if not deepen:
            return done(None, None)
        turn_nodes = 0
        while True:
            spend, seconds, any_left = left(2 * share - turn_nodes)
            if not any_left:
                break
            cut_tree = cut.search((root, plies), spend, seconds)
            nodes += cut_tree.nodes
            turn_nodes += cut_tree.nodes
            if not cut_tree.finished:
                break
            if cut_tree.root_win:
                move = first_move(cut_tree, [(u, plies - 1) for u in graph.successors(root)])
                return done(True, int(cut_tree.d[cut_tree.root]), move, deepened=True)
            plies += 2
        share *= 2


@dataclass
class NeverLoseMove:
    """What :func:`never_lose_move` found: ``vertex`` (the successor to play to; None
    when none was proved), whether the search that looked for it finished, and the
    nodes it spent beyond the root search."""

    vertex: Hashable | None
    finished: bool
    nodes: int


def never_lose_move(graph: SearchGraph, player: int, opponent_tree: WinTreeResult, order: str = "heuristic",
                    max_nodes: int | None = None, max_seconds: float | None = None,
                    close_cycles: bool = True) -> NeverLoseMove:
    """A move for ``player`` (to move at the root) after which the opponent does not win (Thm 4.8).

    ``opponent_tree`` is the opponent's WinTree search from the root. Where it proved
    that the opponent does not win, a successor the opponent does not win from exists:
    one its search already finished as such, else one that a new search from the
    successor proves (a finished search's root result is exact, Thms 3.1, 3.4, whatever
    the path above). Returns ``vertex=None`` when the opponent wins (``finished`` true),
    or when the budgets ran out first (``finished`` false).

    >>> import chess
    >>> from tablebase import open_tablebase
    >>> with open_tablebase("data/test-tables") as tb:
    ...     graph = SearchGraph.from_board(tb, chess.Board("8/8/8/8/8/8/2k5/K1r5 w - - 0 1"))
    ...     tree = run_win_tree(graph, -1)
    ...     move = never_lose_move(graph, 1, tree)
    ...     graph.board(move.vertex).fen()
    '8/8/8/8/8/8/2k5/1K6 b - - 0 1'
    """
    root = opponent_tree.root
    if opponent_tree.root_win is None:
        return NeverLoseMove(None, False, 0)
    if opponent_tree.root_win or graph.is_sink(root):
        return NeverLoseMove(None, True, 0)
    if graph.turn(root) != player or opponent_tree.g != -player:
        raise ValueError(f"the root is not player {player:+d}'s move, or the tree is not the opponent's")
    successors = list(graph.successors(root))
    for u in successors:
        if opponent_tree.color[u] is Color.BLACK and opponent_tree.win[u] is False:
            return NeverLoseMove(u, True, 0)
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    search = _search(graph, -player, order, close_cycles)  # one search: later moves reuse what earlier ones settled
    nodes = 0
    for u in successors:
        if opponent_tree.color[u] is Color.BLACK:
            continue  # won by the opponent
        left_nodes = None if max_nodes is None else max_nodes - nodes
        left_seconds = None if deadline is None else deadline - time.monotonic()
        if (left_nodes is not None and left_nodes <= 0) or (left_seconds is not None and left_seconds <= 0):
            return NeverLoseMove(None, False, nodes)
        tree = search.search(u, left_nodes, left_seconds)
        nodes += tree.nodes
        if tree.root_win is False:
            return NeverLoseMove(u, True, nodes)
        if tree.root_win is None:
            return NeverLoseMove(None, False, nodes)
    raise AssertionError("the opponent's search said it does not win, yet it wins after every move")


@dataclass
class Solution:
    """What :func:`solve` found from a board: one :class:`Proof` per player (the side to
    move first), the never-lose move of the side to move (None when it has none, or when
    it was not proved within the budget: ``never_lose_finished`` false) and the nodes
    that move's own searches took. Where the side to move's win is proved,
    ``winning_move`` starts the win tree found, and it is the never-lose move too (a
    winning move never loses; Thm 4.8's other moves may only draw)."""

    board: chess.Board
    material: str
    sides: list[Proof]
    never_lose: chess.Move | None
    never_lose_finished: bool
    never_lose_nodes: int
    winning_move: chess.Move | None = None


def solve(tablebase: Tablebase, board: chess.Board, order: str = "heuristic", max_nodes: int | None = 1_000_000,
          max_seconds: float | None = None, deepen: bool = True, close_cycles: bool = True) -> Solution:
    """Run WinTree for both players from ``board`` (see :func:`prove`), with the tables
    answering every capture and promotion, and find a never-lose move of the side to move.

    The budgets apply to each of the (up to three) searches. Errors are the probe
    library's: :exc:`~tablebase.probe.PositionError` for boards that cannot be searched,
    :exc:`~tablebase.probe.MissingTableError` when a table for the leaves is missing.

    >>> import chess
    >>> from tablebase import open_tablebase
    >>> with open_tablebase("data/test-tables") as tb:
    ...     s = solve(tb, chess.Board("8/8/8/8/8/2k5/1q6/K7 w - - 0 1"))
    ...     [(side.g, side.win, side.d) for side in s.sides], s.never_lose
    ([(1, False, None), (-1, True, 2)], None)
    """
    graph = SearchGraph.from_board(tablebase, board)
    root = graph.start
    player = graph.turn(root)
    sides = [prove(graph, g, root, order, max_nodes, max_seconds, deepen, close_cycles=close_cycles)
             for g in (player, -player)]
    winning = None if sides[0].move is None else move_to(graph, board, sides[0].move)
    if sides[1].win:
        found = NeverLoseMove(None, True, 0)
    elif sides[0].move is not None:
        found = NeverLoseMove(sides[0].move, True, 0)
    else:
        found = never_lose_move(graph, player, sides[1].tree, order, max_nodes, max_seconds, close_cycles)
    move = None if found.vertex is None else move_to(graph, board, found.vertex)
    return Solution(board, graph.key, sides, move, found.finished, found.nodes, winning)


def move_to(graph: SearchGraph, board: chess.Board, vertex: Hashable) -> chess.Move:
    """The legal move of ``board`` (the graph's root) that leads to ``vertex``."""
    for move in board.legal_moves:
        child = board.copy(stack=False)
        child.push(move)
        if _same_position(graph, child, vertex):
            return move
    raise ValueError(f"no legal move of {board.fen()} leads to {vertex!r}")


def _same_position(graph: SearchGraph, child: chess.Board, vertex: Hashable) -> bool:
    target = graph.board(vertex)
    # Vertices are symmetry classes: compare through the index, which maps the board's
    # symmetric images to one number.
    return _index_key(child) == _index_key(target)


def _index_key(board: chess.Board) -> tuple:
    ep = board.ep_square if board.has_legal_en_passant() else None
    keys = {board_index(board)}
    if ep is None:
        # A symmetric material (KRvKR) has both colourings in one table.
        keys.add(board_index(board.mirror()))
    return tuple(sorted(keys)), ep is not None
