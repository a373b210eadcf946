"""WinTree on chess: move orderings, budgets, the never-lose move and :func:`solve`.

The search itself is the generic :func:`tablebase.solve.win_tree`; this module chooses
how it orders moves, bounds it by nodes and seconds, and turns the result into what a
chess user asks: does a side win, in how many plies at most, and which move keeps at
least a draw (Thm 4.8).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass, field

import chess

import numpy as np

from tablebase.endgame.pychess import board_index
from tablebase.probe import Tablebase
from tablebase.solve import Color, WinTreeResult, WinTreeSearch

from .bounded import DepthBounded, bounded_order
from .compiled import NOWIN, CompiledSearch, Facts, Run
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


#: The searches :func:`prove` can run: ``compiled`` (:class:`~tablebase.online.compiled.CompiledSearch`,
#: numba kernels) and ``python``, its slow twin (:class:`PythonSearch`).
ENGINES = ("compiled", "python")


class PythonSearch:
    """The slow twin of :class:`~tablebase.online.compiled.CompiledSearch`, with its face:
    :class:`~tablebase.solve.WinTreeSearch` on the graph (``plain``) and on its
    :class:`~tablebase.online.bounded.DepthBounded` cut (``cut``), each keeping its own
    BLACK results from search to search.

    >>> import chess
    >>> from tablebase import open_tablebase
    >>> with open_tablebase("data/test-tables") as tb:
    ...     graph = SearchGraph.from_board(tb, chess.Board("8/8/8/7Q/8/k2K4/8/8 w - - 0 1"))
    ...     search = PythonSearch(graph, 1)
    ...     search.cut(graph.start, 5).finished, search.status(graph.start), search.depth(graph.start)
    (True, True, 5)
    """

    def __init__(self, graph: SearchGraph, g: int, order: str = "heuristic", close_cycles: bool = True) -> None:
        black_first, hook = _orders(order, g)
        self.graph = graph
        self.g = g
        self.nodes = 0
        self._plain = WinTreeSearch(graph, g, black_first, hook, close_cycles)
        self._bounded = DepthBounded(graph, 0, graph.start, free=graph.is_table_vertex)
        self._cut = WinTreeSearch(self._bounded, g, black_first, None if hook is None else bounded_order(hook))
        self._plies: set[int] = set()  # the depth bounds searched, with one less (the root's successors)

    def plain(self, root: Hashable, max_nodes: int | None = None, deadline: float | None = None,
              stop: Callable[[], bool] | None = None) -> Run:
        tree = self._plain.search(root, max_nodes, _seconds_to(deadline))
        self.nodes += tree.nodes
        return Run(tree.finished, tree.nodes, "" if tree.finished else "budget")

    def cut(self, root: Hashable, plies: int, max_nodes: int | None = None, deadline: float | None = None,
            stop: Callable[[], bool] | None = None) -> Run:
        tree = self._cut.search((root, plies), max_nodes, _seconds_to(deadline))
        self._plies.update((plies, plies - 1))
        self.nodes += tree.nodes
        return Run(tree.finished, tree.nodes, "" if tree.finished else "budget")

    def status(self, v: Hashable) -> bool | None:
        """True g wins from ``v``, False g does not, None not proved."""
        if self._plain.color[v] is Color.BLACK:
            return self._plain.win[v]
        return True if self.depth(v) is not None else None

    def depth(self, v: Hashable) -> int | None:
        """``d`` of the smallest win tree found from ``v`` (None: no win proved)."""
        plain = self._plain
        found = [plain.d[v]] if plain.color[v] is Color.BLACK and plain.win[v] else []
        cut = self._cut
        found += [cut.d[(v, r)] for r in self._plies if cut.color[(v, r)] is Color.BLACK and cut.win[(v, r)]]
        return int(min(found)) if found else None

    def cut_status(self, v: Hashable, plies: int) -> bool | None:
        cut = self._cut
        return cut.win[(v, plies)] if cut.color[(v, plies)] is Color.BLACK else None

    def not_won_within(self, v: Hashable) -> int:
        """The largest depth bound searched at which ``v`` is not won (:data:`NOWIN`: not
        won at all; -1: nothing proved)."""
        if self._plain.color[v] is Color.BLACK and not self._plain.win[v]:
            return NOWIN
        return max((r for r in self._plies if self.cut_status(v, r) is False), default=-1)

    def facts(self) -> Facts:
        won, won_d, nowin, within, within_r = [], [], [], [], []
        for v, c in self._plain.color.items():
            if c is Color.BLACK and type(v) is int:
                if self._plain.win[v]:
                    won.append(v)
                    won_d.append(self._plain.d[v])
                else:
                    nowin.append(v)
        for (v, r), c in self._cut.color.items():
            if c is Color.BLACK and type(v) is int:
                if self._cut.win[(v, r)]:
                    won.append(v)
                    won_d.append(self._cut.d[(v, r)])
                else:
                    within.append(v)
                    within_r.append(r)
        return Facts(*(np.array(a, np.int64) for a in (won, won_d, nowin, within, within_r)))


def _seconds_to(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


Search = CompiledSearch | PythonSearch


def make_search(graph: SearchGraph, g: int, order: str = "heuristic", close_cycles: bool = True,
                engine: str = "compiled", max_bytes: int | None = None) -> Search:
    """The search for player ``g`` on ``graph`` that ``engine`` names (see :data:`ENGINES`)."""
    if engine == "compiled":
        return CompiledSearch(graph, g, order, close_cycles, max_bytes)
    if engine == "python":
        return PythonSearch(graph, g, order, close_cycles)
    raise ValueError(f"unknown search engine {engine!r}; choose one of {', '.join(ENGINES)}")


def make_searches(graph: SearchGraph, order: str = "heuristic", close_cycles: bool = True, engine: str = "compiled",
                  max_bytes: int | None = None) -> dict[int, Search]:
    """One search per player on ``graph`` (keys +1, -1); compiled searches are paired
    (:meth:`~tablebase.online.compiled.CompiledSearch.pair`), each reading the other's wins."""
    searches = {g: make_search(graph, g, order, close_cycles, engine, max_bytes) for g in (1, -1)}
    if engine == "compiled":
        searches[1].pair(searches[-1])
    return searches


@dataclass
class Proof:
    """What :func:`prove` found for player ``g``: ``win`` (None: a budget ran out
    first), ``d`` (the height of the win tree found, an upper bound on DTM, Thm 3.6),
    ``plies`` (the depth bound of the search that proved the win; None: the plain
    search), the nodes and seconds spent, the ``search`` (its results, reusable), and
    where g wins with g to move, ``move``: the root's successor that starts the
    smallest win tree found.
    """

    g: int
    win: bool | None
    d: int | None
    plies: int | None
    nodes: int
    seconds: float
    search: Search = field(repr=False)
    move: Hashable | None = None

    @property
    def finished(self) -> bool:
        return self.win is not None


#: ``on_depth(plies, proof_so_far)``: called by :func:`prove` after each depth bound the
#: deepening finished, for progress reports (a UCI engine's ``info`` lines).
OnDepth = Callable[[int, "Proof"], None]


def prove(graph: SearchGraph, g: int, root: Hashable | None = None, order: str = "heuristic",
          max_nodes: int | None = None, max_seconds: float | None = None, deepen: bool = True,
          close_cycles: bool = True, engine: str = "compiled", search: Search | None = None,
          shortest: bool = False, max_plies: int | None = None, stop: Callable[[], bool] | None = None,
          on_depth: OnDepth | None = None) -> Proof:
    """Does ``g`` win from ``root``? Plain WinTree and (``deepen``) iterative deepening, in turns.

    The plain search settles the positions g does not win, a cycle back to the root
    being a proof (Thm 3.4); ``close_cycles`` (see :func:`~tablebase.solve.win_tree`)
    keeps it from searching a cycle's positions again and again. It proves long wins
    that convert into a table too, but may wander for long before it proves a mate
    inside the material: that is what WinTree on the game cut at ``r`` plies
    (:class:`~tablebase.online.bounded.DepthBounded`, table leaves and their chains not
    counted) proves, for r = 1, 3, 5, ... when g moves at the root, else 2, 4, 6, ... (a
    mate by g leaves the opponent to move, so mates have that parity), until one proves
    the win. The two take turns with budgets that double from turn to turn (twice as
    many nodes to the deepening, which finds the longest proofs), so neither starves the
    other; each keeps its final results from turn to turn, and each depth reuses those
    of the shallower ones. ``max_nodes`` and ``max_seconds`` bound the whole, ``stop()``
    ends it early, ``max_plies`` bounds the deepening (``win`` then stays None when
    neither search decides).

    ``engine`` picks the search (:data:`ENGINES`); ``search`` passes one made before
    (:func:`make_search`), whose results from earlier calls are reused. With
    ``shortest``, a win the plain search proves is searched again by the deepening,
    within the budgets, so that ``d`` is the smallest the deepening finds (``d = d_g``
    for a mate inside the material).

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
    if search is None:
        search = make_search(graph, g, order, close_cycles, engine)
    elif search.g != g or search.graph is not graph:
        raise ValueError("the search given is for another player or graph")
    plies = 1 if graph.turn(root) == g else 2
    nodes = 0

    def left(share: int | None) -> tuple[int | None, bool]:
        """The node budget of the next search, and whether any budget is left."""
        spend = max_nodes if max_nodes is None else max_nodes - nodes
        if share is not None:
            spend = share if spend is None else min(spend, share)
        return spend, ((spend is None or spend > 0) and (deadline is None or time.monotonic() < deadline)
                       and (stop is None or not stop()))

    def done(win: bool | None, deepened: bool = False) -> Proof:
        d = search.depth(root) if win else None
        move = None
        if win and graph.turn(root) == g and not graph.is_sink(root):
            won = [(search.depth(u), k) for k, u in enumerate(graph.successors(root)) if search.status(u)]
            move = graph.successors(root)[min(won)[1]] if won else None
        return Proof(g, win, d, plies if deepened else None, nodes, time.perf_counter() - t0, search, move)

    def deepened(run_budget: int | None) -> tuple[bool | None, int]:
        """Run the deepening for one turn: (the root's status at the last depth, nodes)."""
        nonlocal plies
        spent = 0
        while True:
            spend, any_left = left(None if run_budget is None else run_budget - spent)
            if not any_left or (max_plies is not None and plies > max_plies):
                return None, spent
            run = search.cut(root, plies, spend, deadline, stop)
            spent += run.nodes
            if not run.finished:
                return None, spent
            if search.cut_status(root, plies):
                return True, spent
            if search.status(root) is False:  # a sink, or the other player's win (paired searches)
                return False, spent
            if on_depth is not None:
                on_depth(plies, Proof(g, None, None, plies, nodes + spent, time.perf_counter() - t0, search))
            plies += 2

    if search.status(root) is not None:
        return done(search.status(root))
    share = 1024 if deepen else None
    while True:
        spend, any_left = left(share)
        if not any_left and nodes:
            return done(None)
        run = search.plain(root, spend, deadline, stop)
        nodes += run.nodes
        if run.finished:
            win = bool(search.status(root))
            if win and shortest and deepen:
                # No shorter proof than d: deepen while the bound is below it.
                while (max_plies is None or plies <= max_plies) and plies <= search.depth(root) \
                        and search.cut_status(root, plies) is not True:
                    found, spent = deepened(None)
                    nodes += spent
                    if found:
                        return done(True, deepened=True)
                    if found is None:
                        break
            return done(win)
        if not deepen or not run.nodes:
            return done(None)
        found, spent = deepened(2 * share)
        nodes += spent
        if found is not None:
            return done(found, deepened=found)
        if max_plies is not None and plies > max_plies:
            return done(None)  # the deepening went as deep as asked
        share *= 2


@dataclass
class NeverLoseMove:
    """What :func:`never_lose_move` found: ``vertex`` (the successor to play to; None
    when none was proved), whether the search that looked for it finished, and the
    nodes it spent beyond the root search."""

    vertex: Hashable | None
    finished: bool
    nodes: int


def never_lose_move(graph: SearchGraph, player: int, opponent: Proof, max_nodes: int | None = None,
                    max_seconds: float | None = None) -> NeverLoseMove:
    """A move for ``player`` (to move at the root) after which the opponent does not win (Thm 4.8).

    ``opponent`` is the opponent's :func:`prove` from the root. Where it proved that the
    opponent does not win, a successor the opponent does not win from exists: one its
    search already settled as such, else one that a new search from the successor
    proves (a finished search's root result is exact, Thms 3.1, 3.4, whatever the path
    above), each reusing what the opponent's search settled. Returns ``vertex=None``
    when the opponent wins (``finished`` true), or when the budgets ran out first
    (``finished`` false).

    >>> import chess
    >>> from tablebase import open_tablebase
    >>> with open_tablebase("data/test-tables") as tb:  # the queen is en prise: taking it draws
    ...     board = chess.Board("8/8/8/8/8/2k5/2Q5/5K2 b - - 0 1")
    ...     graph = SearchGraph.from_board(tb, board)
    ...     move = never_lose_move(graph, -1, prove(graph, 1))
    ...     move_to(graph, board, move.vertex).uci()
    'c3c2'
    """
    root = graph.start
    if opponent.win is None:
        return NeverLoseMove(None, False, 0)
    if opponent.win or graph.is_sink(root):
        return NeverLoseMove(None, True, 0)
    if graph.turn(root) != player or opponent.g != -player:
        raise ValueError(f"the root is not player {player:+d}'s move, or the proof is not the opponent's")
    search = opponent.search
    successors = list(graph.successors(root))
    for u in successors:
        if search.status(u) is False:
            return NeverLoseMove(u, True, 0)
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    nodes = 0
    for u in successors:
        if search.status(u) is not None:
            continue  # won by the opponent
        left_nodes = None if max_nodes is None else max_nodes - nodes
        if (left_nodes is not None and left_nodes <= 0) or (deadline is not None and time.monotonic() >= deadline):
            return NeverLoseMove(None, False, nodes)
        run = search.plain(u, left_nodes, deadline)
        nodes += run.nodes
        if search.status(u) is False:
            return NeverLoseMove(u, True, nodes)
        if not run.finished:
            return NeverLoseMove(None, False, nodes)
    raise AssertionError("the opponent's search said it does not win, yet it wins after every move")


#: What a :class:`Choice` is, best first: a move that keeps a proved win (the smallest
#: ``d``); one that keeps a proved draw; Thm 4.8's never-lose move (the opponent proved
#: not to win after it, one's own win neither proved nor refuted at the root); a move
#: nothing was proved of; the longest resistance in a proved loss.
CHOICES = ("win", "draw", "never-lose", "unproven", "loss")


@dataclass
class Choice:
    """The move :func:`choose_move` recommends, what it is (one of :data:`CHOICES`) and,
    for a win or a loss, ``d``: the plies to mate of the proof after the move, counting
    the move (None otherwise)."""

    move: chess.Move | None
    kind: str
    d: int | None = None
    vertex: Hashable | None = field(default=None, repr=False)


def choose_move(graph: SearchGraph, board: chess.Board, mine: Proof, theirs: Proof,
                allowed: Collection[chess.Move] | None = None) -> Choice:
    """The best move ``board``'s side to move knows of, from both sides' proofs at the root.

    Each move is ranked by what is proved of the position after it (leaves by their
    table values): won by the side to move (smallest ``d`` first); not won by the
    opponent, with one's own win not refuted there; not won by the opponent (a draw);
    nothing known; won by the opponent (largest ``d`` first). So no move is recommended
    that the known values show to be worse than another. Ties among the moves whose own
    win is open go to those after which the opponent has no capture or promotion into a
    table position it wins or draws (that hang nothing: ``Qd5+ Kxd5`` is a draw), then
    to those the opponent is proved not to win within the most plies. ``allowed`` restricts the moves considered
    (UCI's ``searchmoves``). ``move`` is None only where there is no move to choose.

    >>> import chess
    >>> from tablebase import open_tablebase
    >>> with open_tablebase("data/test-tables") as tb:
    ...     board = chess.Board("8/8/8/8/8/2k5/2Q5/5K2 b - - 0 1")
    ...     graph = SearchGraph.from_board(tb, board)
    ...     choice = choose_move(graph, board, prove(graph, -1), prove(graph, 1))
    ...     choice.move.uci(), choice.kind
    ('c3c2', 'draw')
    """
    root = graph.start
    if graph.is_sink(root):
        return Choice(None, "loss" if graph.win(root) else "draw")
    best = None
    for move, u in successor_moves(graph, board):
        if allowed is not None and move not in allowed:
            continue
        own, other = mine.search.status(u), theirs.search.status(u)
        if own:
            rank = (0, mine.search.depth(u))
        elif other is False:
            rank = (1, _leaf_danger(graph, u, -graph.turn(root))) if own is None else (2, 0)
        elif other is None:
            rank = (3, _leaf_danger(graph, u, -graph.turn(root)), -theirs.search.not_won_within(u))
        else:
            rank = (4, -theirs.search.depth(u))
        if best is None or rank < best[0]:
            best = (rank, move, u)
    if best is None:
        return Choice(None, "unproven")
    rank, move, u = best
    kind = ("win", "never-lose", "draw", "unproven", "loss")[rank[0]]
    if kind in ("never-lose", "draw"):
        kind = "draw" if mine.win is False and theirs.win is False else "never-lose"
    d = 1 + rank[1] if rank[0] == 0 else 1 - rank[1] if rank[0] == 4 else None
    return Choice(move, kind, d, u)


def _leaf_danger(graph: SearchGraph, u: Hashable, opponent: int) -> int:
    """What the best capture or promotion of ``opponent`` (to move at position ``u``)
    gives it by the tables: 2 a win, 1 a draw, 0 a loss or nothing to capture: among the
    moves nothing was proved of, the ones that hang nothing come first."""
    if type(u) is not int or graph.is_sink(u):
        return 0
    danger = 0
    for w in graph.successors(u):
        if graph.is_leaf(w):
            value = graph.leaf_value(w)[0]
            danger = max(danger, 2 if value == opponent else 1 if value == 0 else 0)
    return danger


def successor_moves(graph: SearchGraph, board: chess.Board) -> list[tuple[chess.Move, Hashable]]:
    """Every legal move of ``board`` (the graph's root) with the vertex it leads to.

    >>> import chess
    >>> from tablebase import open_tablebase
    >>> with open_tablebase("data/test-tables") as tb:
    ...     board = chess.Board("8/8/8/8/8/2k5/2Q5/5K2 b - - 0 1")
    ...     pairs = successor_moves(SearchGraph.from_board(tb, board), board)
    ...     len(pairs), [(m.uci(), v) for m, v in pairs if m.uci() == "c3c2"]
    (3, [('c3c2', ('KvK', 0, 98, 1))])
    """
    by_key = {_index_key(graph.board(u)): u for u in graph.successors(graph.start)}
    out = []
    for move in board.legal_moves:
        child = board.copy(stack=False)
        child.push(move)
        out.append((move, by_key[_index_key(child)]))
    return out


@dataclass
class Solution:
    """What :func:`solve` found from a board: one :class:`Proof` per player (the side to
    move first) and ``choice``, the move recommended (:func:`choose_move`). Where the
    side to move's win is proved, ``winning_move`` starts the smallest win tree found;
    ``never_lose`` is a move proved not to lose (the winning move, a drawing move or Thm
    4.8's; None when none was proved: ``never_lose_finished`` false when the budget ran
    out first) and ``never_lose_nodes`` the nodes its own searches took."""

    board: chess.Board
    material: str
    sides: list[Proof]
    never_lose: chess.Move | None
    never_lose_finished: bool
    never_lose_nodes: int
    winning_move: chess.Move | None = None
    choice: Choice | None = None


def solve(tablebase: Tablebase, board: chess.Board, order: str = "heuristic", max_nodes: int | None = 1_000_000,
          max_seconds: float | None = None, deepen: bool = True, close_cycles: bool = True,
          engine: str = "compiled") -> Solution:
    """Run WinTree for both players from ``board`` (see :func:`prove`, with ``shortest``),
    with the tables answering every capture and promotion, find a never-lose move of the
    side to move and choose the move to play (:func:`choose_move`).

    The budgets apply to each of the (up to three) searches. Errors are the probe
    library's: :exc:`~tablebase.probe.PositionError` for boards that cannot be searched,
    :exc:`~tablebase.probe.MissingTableError` when a table for the leaves is missing.

    >>> import chess
    >>> from tablebase import open_tablebase
    >>> with open_tablebase("data/test-tables") as tb:
    ...     s = solve(tb, chess.Board("8/8/8/8/8/2k5/1q6/K7 w - - 0 1"))
    ...     [(side.g, side.win, side.d) for side in s.sides], s.never_lose, s.choice.kind  # White is mated
    ([(1, False, None), (-1, True, 0)], None, 'loss')
    """
    graph = SearchGraph.from_board(tablebase, board)
    root = graph.start
    player = graph.turn(root)
    searches = make_searches(graph, order, close_cycles, engine)
    sides = [prove(graph, g, root, order, max_nodes, max_seconds, deepen, close_cycles, engine, searches[g],
                   shortest=True) for g in (player, -player)]
    winning = None if sides[0].move is None else move_to(graph, board, sides[0].move)
    if sides[1].win:
        found = NeverLoseMove(None, True, 0)
    elif sides[0].move is not None:
        found = NeverLoseMove(sides[0].move, True, 0)
    else:
        found = never_lose_move(graph, player, sides[1], max_nodes, max_seconds)
    choice = choose_move(graph, board, sides[0], sides[1])
    never_lose = None if found.vertex is None else move_to(graph, board, found.vertex)
    if never_lose is not None and choice.kind in ("win", "draw", "never-lose"):
        never_lose = choice.move  # as good, and no worse by what is known
    return Solution(board, graph.key, sides, never_lose, found.finished, found.nodes, winning, choice)


def move_to(graph: SearchGraph, board: chess.Board, vertex: Hashable) -> chess.Move:
    """The legal move of ``board`` (the graph's root) that leads to ``vertex``."""
    target = _index_key(graph.board(vertex))
    for move in board.legal_moves:
        child = board.copy(stack=False)
        child.push(move)
        if _index_key(child) == target:
            return move
    raise ValueError(f"no legal move of {board.fen()} leads to {vertex!r}")


def _index_key(board: chess.Board) -> tuple:
    """A board up to the index's symmetries: vertices are symmetry classes, and the index
    maps a board's symmetric images to one number."""
    ep = board.ep_square if board.has_legal_en_passant() else None
    keys = {board_index(board)}
    if ep is None:
        # A symmetric material (KRvKR) has both colourings in one table.
        keys.add(board_index(board.mirror()))
    return tuple(sorted(keys)), ep is not None
