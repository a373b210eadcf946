"""Romano's depth-first WinTree search (Sec. 3) and the never-losing strategy (Thm 4.8).

This is a reconstruction from the statements the paper's results make, not from its
text. ``win_tree(game, g, root)`` asks "does g win from root?" with a depth-first
search that reads the game lazily (``successors``, ``turn``, ``is_sink``, ``win``), so
it works on implicit graphs far too big to materialise.

Colours: WHITE = not being searched (never visited, or visited with an undetermined
result), GRAY = on the current DFS path, BLACK = finished with a final status. Each
expanded vertex gets a status:

- a sink: True iff ``win(v) == g``, d = 0 (else INF);
- g to move: True as soon as one successor is True (the search stops there, so the
  move order decides which win tree is found), d = 1 + that child's d;
- the opponent to move: False as soon as one successor is False; True if all are
  True, d = 1 + the largest child d;
- a GRAY successor (a cycle back to the path) counts as "not a win for g", and a
  child whose status is NIL counts the same; if the vertex is not decided anyway by
  the rules above, its status is NIL (None).

A vertex with a final status (True/False) turns BLACK; a NIL vertex goes back to
WHITE, so a later visit recomputes it. ``black_first=True`` (Sec. 4.1) first looks at
the successors already BLACK, reusing their final results (at g's turn taking the
smallest d among the winning ones) before descending into the others.

Invariants (P = the GRAY path above v when v is expanded; "g wins from v avoiding P"
means g has a finite forcing tree from v that never enters P):

1. True => g wins from v, and d is the height of a forcing tree, so d >= d_g(v)
   (Thms 3.5, 3.6). It is built only from children that are BLACK True.
2. False => g does not win from v. It rests only on BLACK children (all False at g's
   turn, one False at the opponent's), never on a GRAY or NIL one.
3. NIL => g does not win from v avoiding P. A minimal-height forcing tree never
   revisits its own root, so "g wins from v avoiding P" holds iff it holds for some
   (g to move) / every (opponent to move) child avoiding P + {v}; GRAY children are
   in P + {v}, and NIL children fail by induction.

By 1 and 2 every BLACK status is the true one, whatever path produced it, which is
what makes reusing BLACK vertices (and sharing them between searches) sound
(Thm 3.2). At the root P is empty, so by 3 a NIL root is not won: it is recorded as
BLACK False, and ``root_win`` is exact whenever the search finishes (Thms 3.1, 3.4).
The cost of recomputing NIL vertices can be exponential; the result is exact.

Closing cycles (``close_cycles=True``, not in the paper). Invariant 3 is all the paper
keeps of a NIL vertex, so a cyclic game is searched again and again. Like Tarjan's
strongly connected components, each NIL vertex also records ``low``, the shallowest path
depth of the GRAY vertices its status rested on (directly or through NIL children), and
stays *pending*:

- a vertex v at depth j that ends NIL with ``low >= j`` rested on nothing above it: its
  search is the one a search rooted at v would run, so by invariant 3 with an empty
  path it is not won: BLACK False, as the root is. So are the vertices pending under v
  (those whose NIL reached v through NIL parents: a vertex that ends True or False
  discards the pending vertices under it). Each of them is NIL given only BLACK False
  vertices and members of this set (every successor at g's turn, one at the
  opponent's); a win needs a finite forcing tree, and none can stay inside such a set;
- a pending vertex met again counts as NIL, with the depth of the deepest path vertex
  it is pending under as its ``low``: it is finalized or discarded with that vertex or
  one above, and so is whatever rests on it;
- one NIL successor is enough to end the opponent's vertex as NIL (invariant 3 needs no
  more), instead of looking on for a False one; so the opponent first looks at the
  successors that need no search (GRAY, pending or BLACK), then descends.

The search uses an explicit stack, so depth is limited by memory, not by Python's
recursion limit. When ``max_nodes`` or ``max_seconds`` runs out, the vertices still on
the path go back to WHITE; every BLACK vertex is final either way.
"""

from __future__ import annotations

import bisect
import enum
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from tablebase.game.graph import INF, ExplicitGame, GameGraph

Order = Callable[[GameGraph, Hashable, Sequence[Hashable]], Sequence[Hashable]]


class Color(enum.Enum):
    """Search state of a vertex."""

    WHITE = "white"
    GRAY = "gray"
    BLACK = "black"


class VertexMap(dict):
    """A dict that answers ``default`` for vertices it does not hold (without storing them)."""

    __slots__ = ("default",)

    def __init__(self, default: Any) -> None:
        super().__init__()
        self.default = default

    def __missing__(self, v: Hashable) -> Any:
        return self.default


@dataclass(eq=False)
class WinTreeResult:
    """What :func:`win_tree` found, per vertex.

    ``win[v]``: True (g wins from v), False (g does not), None (not determined:
    unvisited, or its result depended on the DFS path). ``d[v]``: the height of the
    win tree found (>= d_g(v)), INF unless ``win[v]`` is True. ``color[v]``: a
    :class:`Color`, None if never visited. For an :class:`~tablebase.game.ExplicitGame`
    these are lists indexed by vertex; otherwise dict-like objects that answer the
    defaults for unknown vertices.
    """

    g: int
    root: Hashable
    win: Any
    d: Any
    color: Any
    #: Vertex expansions (sinks included, BLACK reuses not).
    nodes: int
    #: False when ``max_nodes`` or ``max_seconds`` stopped the search.
    finished: bool

    @property
    def root_win(self) -> bool | None:
        """Whether g wins from the root; None if the search stopped before proving either."""
        return self.win[self.root]


class _Frame:
    """A GRAY vertex on the DFS stack and what its examined successors said so far."""

    __slots__ = ("v", "successors", "next", "mine", "decided", "nil", "best", "low", "mark")

    def __init__(self, v: Hashable, successors: Sequence[Hashable], mine: bool) -> None:
        self.v = v
        self.successors = successors
        self.next = 0
        self.mine = mine  # g to move
        # g to move: a winning child found; opponent to move: a non-winning child found.
        self.decided = False
        self.nil = False
        # g to move: smallest d of a winning child; opponent: largest d of the children.
        self.best = INF if mine else 0
        # The shallowest GRAY depth a NIL status rests on, and where this vertex's
        # NIL descendants start in the pending list (close_cycles).
        self.low = INF
        self.mark = 0

    def absorb(self, status: bool | None, d: int, low: int = INF) -> None:
        if status is None:
            self.nil = True
            self.low = min(self.low, low)
        elif self.mine:
            if status:
                self.decided = True
                self.best = min(self.best, d)
        elif status:
            self.best = max(self.best, d)
        else:
            self.decided = True

    def status(self) -> bool | None:
        if self.decided:
            return self.mine
        if self.nil:
            return None
        return not self.mine


class WinTreeSearch:
    """WinTree for player ``g`` on ``game``, run from one root after another:
    BLACK results are final, so every :meth:`search` reuses those of the earlier ones.

    The options are :func:`win_tree`'s.

    >>> from tablebase.game import SubtractionGame
    >>> search = WinTreeSearch(SubtractionGame(8), g=1)
    >>> [search.search((n, 1)).root_win for n in (4, 5, 8)]
    [False, True, True]
    """

    def __init__(self, game: GameGraph, g: int, black_first: bool = False, order: Order | None = None,
                 close_cycles: bool = False) -> None:
        if g not in (1, -1):
            raise ValueError(f"g must be +1 or -1, got {g!r}")
        self.game = game
        self.g = g
        self.black_first = black_first
        self.order = order
        self.close_cycles = close_cycles
        self.explicit = isinstance(game, ExplicitGame)
        if self.explicit:
            n = game.num_vertices
            self.win: Any = [None] * n
            self.d: Any = [INF] * n
            self.color: Any = [None] * n
        else:
            self.win, self.d, self.color = VertexMap(None), VertexMap(INF), VertexMap(None)
        self.nodes = 0

    def vertex(self, v: Hashable) -> Hashable:
        if not self.explicit:
            return v
        i = int(v)
        if not 0 <= i < self.game.num_vertices:
            raise ValueError(f"vertex {v!r} is out of range [0, {self.game.num_vertices})")
        return i

    def _open(self, v: Hashable) -> _Frame | None:
        """Expands v: decides a sink at once (None), else returns its GRAY frame."""
        self.nodes += 1
        game = self.game
        if game.is_sink(v):
            won = game.win(v) == self.g
            self.color[v] = Color.BLACK
            self.win[v] = won
            self.d[v] = 0 if won else INF
            return None
        self.color[v] = Color.GRAY
        successors = game.successors(v)
        if self.order is not None:
            successors = list(self.order(game, v, successors))
        frame = _Frame(v, successors, game.turn(v) == self.g)
        if self.black_first:
            rest = []
            for u in successors:
                if self.color[u] is Color.BLACK:
                    frame.absorb(self.win[u], self.d[u])
                    if frame.decided and not frame.mine:
                        break
                else:
                    rest.append(u)
            frame.successors = rest
        return frame

    def _spent(self, max_nodes: int | None, deadline: float | None) -> bool:
        if max_nodes is not None and self.nodes >= max_nodes:
            return True
        # Reading the clock costs about as much as a small expansion: every 256th will do.
        return deadline is not None and self.nodes & 255 == 0 and time.monotonic() >= deadline

    def run(self, root: Hashable, max_nodes: int | None = None, deadline: float | None = None) -> bool:
        """Searches from root (no GRAY vertex may exist); False if max_nodes ran out or
        ``time.monotonic()`` passed deadline."""
        color, win, d = self.color, self.win, self.d
        if color[root] is Color.BLACK:
            return True
        if self._spent(max_nodes, deadline) or (deadline is not None and time.monotonic() >= deadline):
            return False
        budget = max_nodes is not None or deadline is not None
        close = self.close_cycles
        depth_of: dict[Hashable, int] = {}  # GRAY vertex -> its depth on the path
        pending: list[Hashable] = []  # NIL vertices that a cycle's closing may finalize
        pending_low: dict[Hashable, tuple[int, int]] = {}  # -> (place in pending, low)
        frame = self._open(root)
        stack = [] if frame is None else [frame]
        marks = [0] * len(stack)  # the stack's marks, for bisect
        depth_of[root] = 0

        def settle(mark: int, final: bool) -> None:
            for u in pending[mark:]:
                del pending_low[u]
                if final:
                    color[u], win[u], d[u] = Color.BLACK, False, INF
            del pending[mark:]

        while stack:
            frame = stack[-1]
            child = None
            nil_stops = close and not frame.mine
            if nil_stops and frame.next == 0:
                known = [u for u in frame.successors if color[u] in (Color.GRAY, Color.BLACK) or u in pending_low]
                if known:
                    first = set(known)
                    frame.successors = known + [u for u in frame.successors if u not in first]
            while not frame.decided and not (nil_stops and frame.nil) and frame.next < len(frame.successors):
                u = frame.successors[frame.next]
                frame.next += 1
                c = color[u]
                if c is Color.GRAY:
                    frame.nil = True
                    if close:
                        frame.low = min(frame.low, depth_of[u])
                elif c is Color.BLACK:
                    frame.absorb(win[u], d[u])
                elif close and u in pending_low:
                    place, low = pending_low[u]
                    under = bisect.bisect_right(marks, place) - 1
                    frame.nil = True
                    frame.low = min(frame.low, low, under)
                else:
                    if budget and self._spent(max_nodes, deadline):
                        for open_frame in stack:
                            color[open_frame.v] = Color.WHITE
                        return False
                    child = self._open(u)
                    if child is not None:
                        break
                    frame.absorb(win[u], d[u])
            if child is not None:
                if close:
                    child.mark = len(pending)
                    depth_of[child.v] = len(stack)
                    marks.append(child.mark)
                stack.append(child)
                continue
            stack.pop()
            v = frame.v
            status = frame.status()
            if status is None and (not stack or (close and frame.low >= len(stack))):
                # Invariant 3 with an empty path: the root (or a closed cycle's top) is not won.
                status = False
                settle(frame.mark, True)
            elif status is None:
                color[v] = Color.WHITE
                if close:
                    pending_low[v] = (len(pending), frame.low)
                    pending.append(v)
            else:
                settle(frame.mark, False)
            if close:
                del depth_of[v]
                marks.pop()
            if status is not None:
                color[v] = Color.BLACK
                win[v] = status
                d[v] = 1 + frame.best if status else INF
            if stack:
                stack[-1].absorb(status, d[v], frame.low)
        return True

    def search(self, root: Hashable, max_nodes: int | None = None, max_seconds: float | None = None) -> WinTreeResult:
        """WinTree from ``root`` with budgets for this search alone (see :func:`win_tree`);
        the result's ``nodes`` counts this search's expansions."""
        root = self.vertex(root)
        before = self.nodes
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        finished = self.run(root, None if max_nodes is None else before + max_nodes, deadline)
        result = self.result(root, finished)
        result.nodes -= before
        return result

    def result(self, root: Hashable, finished: bool) -> WinTreeResult:
        return WinTreeResult(self.g, root, self.win, self.d, self.color, self.nodes, finished)


def win_tree(
    game: GameGraph,
    g: int,
    root: Hashable | None = None,
    black_first: bool = False,
    order: Order | None = None,
    max_nodes: int | None = None,
    max_seconds: float | None = None,
    close_cycles: bool = False,
) -> WinTreeResult:
    """Romano's WinTreeRecursion: does player ``g`` win from ``root`` (default: the start)?

    A depth-first search that only reads the game through the
    :class:`~tablebase.game.GameGraph` methods (see the module docstring for the
    rules and invariants). ``black_first`` selects the Sec. 4.1 variant that reuses
    finished (BLACK) successors before descending. ``order(game, v, successors)``
    may reorder the successors of every expanded vertex (move ordering: the first
    winning move found is the one kept). ``max_nodes`` caps the number of vertex
    expansions and ``max_seconds`` the wall-clock time (checked every 256 expansions);
    when either runs out the result has ``finished = False`` and ``root_win = None``.
    ``close_cycles`` finalizes the NIL vertices of a cycle once its top is settled (see
    the module docstring): the same results, far fewer expansions on cyclic games.

    >>> from tablebase.game import SubtractionGame
    >>> from tablebase.solve import win_tree
    >>> result = win_tree(SubtractionGame(8), g=1)
    >>> result.root_win, result.d[(8, 1)], result.finished
    (True, 5, True)
    """
    search = WinTreeSearch(game, g, black_first, order, close_cycles)
    return search.search(game.start if root is None else root, max_nodes, max_seconds)


class NeverLoseStrategy:
    """A strategy for ``player`` that never gives the opponent a win (Thm 4.8).

    Built by :func:`never_lose_strategy`; :attr:`tree` is the opponent's WinTree
    result from the root, which grows (WHITE or unvisited vertices turning BLACK) as
    :meth:`move` searches further.
    """

    def __init__(
        self, game: GameGraph, player: int, root: Hashable, search: WinTreeSearch, tree: WinTreeResult
    ) -> None:
        self.game = game
        self.player = player
        self.root = root
        self.tree = tree
        self._search = search

    def move(self, v: Hashable) -> Hashable:
        """A successor of ``v`` (``player`` to move) from which the opponent does not win.

        Successors whose opponent search is already final are preferred; the others
        are searched on demand, reusing every final result found so far. Raises
        ``ValueError`` if ``v`` is not ``player``'s move or every successor is lost,
        which cannot happen at positions reached while following the strategy.
        """
        search = self._search
        v = search.vertex(v)
        if self.game.is_sink(v) or self.game.turn(v) != self.player:
            raise ValueError(f"{v!r} is not a position with player {self.player:+d} to move")
        successors = self.game.successors(v)
        for u in successors:
            if search.color[u] is Color.BLACK and search.win[u] is False:
                return u
        for u in successors:
            if search.color[u] is not Color.BLACK:
                search.run(u)
                if search.win[u] is False:
                    return u
        raise ValueError(f"every move from {v!r} loses for player {self.player:+d}")


def never_lose_strategy(game: GameGraph, player: int, root: Hashable | None = None) -> NeverLoseStrategy:
    """Theorem 4.8 made constructive: a strategy that keeps at least a draw from ``root``.

    Runs :func:`win_tree` for the opponent (-player) from ``root`` (default: the
    start). If the opponent wins from the root, there is nothing to keep and this
    raises ``ValueError``. Otherwise ``strategy.move(v)``, at any position reachable
    while ``player`` follows it, returns a successor the opponent does not win from:
    at the opponent's turns no move leads to an opponent's win either (else the
    position itself would be one), so play never reaches a position, sink or not,
    that ``player`` loses.

    >>> from tablebase.game import TicTacToe
    >>> from tablebase.solve import never_lose_strategy
    >>> game = TicTacToe()
    >>> strategy = never_lose_strategy(game, player=1)
    >>> board, to_move = strategy.move(game.start)
    >>> to_move, sum(board)
    (-1, 1)
    """
    if player not in (1, -1):
        raise ValueError(f"player must be +1 or -1, got {player!r}")
    search = WinTreeSearch(game, -player, black_first=True)
    root = search.vertex(game.start if root is None else root)
    search.run(root)
    tree = search.result(root, finished=True)
    if tree.root_win:
        raise ValueError(f"player {-player:+d} wins from {root!r}: no strategy avoids losing")
    return NeverLoseStrategy(game, player, root, search, tree)
