"""Property tests of tablebase.solve on random game graphs.

``retrograde`` is checked against the literal fixed point ``reference_solution``;
``win_tree`` and ``never_lose_strategy`` against Romano's theorems, with the
retrograde values as the truth.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, note, settings
from hypothesis import strategies as st

from tablebase.game import ExplicitGame
from tablebase.solve import INF, Color, never_lose_strategy, reference_solution, retrograde, win_tree


@st.composite
def games(draw, max_vertices=16):
    """Random valid game graphs: cycles, parallel arcs, sinks of every value.

    Bipartite by turn, so turns alternate along every arc; a vertex with nothing of
    the other turn to move to becomes a sink. Decoded from one byte string, which is
    several times faster to draw than a structure of lists and shrinks as well
    (zero bytes decode to the simplest choices).
    """
    stream = iter(draw(st.binary(min_size=8 * max_vertices, max_size=8 * max_vertices)))

    def take(modulus):
        return next(stream, 0) % modulus

    n = 1 + take(max_vertices)
    kinds = [take(30) for _ in range(n)]  # turn x win x (sink or not, 1:4)
    turn = [1 if kind % 2 == 0 else -1 for kind in kinds]
    win = [kind // 2 % 3 - 1 for kind in kinds]
    successors = []
    for v, kind in enumerate(kinds):
        others = [u for u in range(n) if turn[u] != turn[v]]
        if kind >= 24 or not others:
            successors.append([v])
        else:
            successors.append([others[take(len(others))] for _ in range(1 + take(3) // 2 + take(2))])
    note(f"ExplicitGame({successors}, {turn}, {win})")
    return ExplicitGame(successors, turn, win)


@st.composite
def games_with_root(draw):
    game = draw(games())
    return game, draw(st.integers(0, game.num_vertices - 1))


@settings(max_examples=2000, deadline=None)
@given(games())
def test_retrograde_equals_reference_and_lemma_2_9(game):
    fast = retrograde(game)
    slow = reference_solution(game)
    assert fast.eval.dtype == np.int8 and fast.depth(1).dtype == np.int64
    assert np.array_equal(fast.eval, slow.eval)
    for g in (1, -1):
        assert np.array_equal(fast.depth(g), slow.depth(g))
        # The reference computes eval without looking at the depths.
        assert np.array_equal(slow.eval == g, slow.depth(g) < INF)


def _check_win_tree(game, solution, g, root, **options):
    result = win_tree(game, g, root, **options)
    truth = solution.eval == g
    depth = solution.depth(g)
    assert result.finished
    assert result.root_win == truth[root]  # Thms 3.1, 3.4
    for v in range(game.num_vertices):
        assert result.color[v] in (None, Color.WHITE, Color.BLACK)
        if result.color[v] is Color.BLACK:
            assert result.win[v] == truth[v]  # Thm 3.2
        else:
            assert result.win[v] is None
        assert (result.d[v] < INF) == (result.win[v] is True)  # 3.5
        if result.win[v]:
            assert result.d[v] >= depth[v]  # Thm 3.6
    return result


@settings(max_examples=1500, deadline=None)
@given(games_with_root())
def test_win_tree_theorems(game_and_root):
    game, root = game_and_root
    solution = retrograde(game)
    for g in (1, -1):
        for black_first in (False, True):
            for close_cycles in (False, True):
                _check_win_tree(game, solution, g, root, black_first=black_first, close_cycles=close_cycles)
        reversed_order = _check_win_tree(
            game, solution, g, root, order=lambda game, v, successors: successors[::-1]
        )
        assert reversed_order.color[root] is Color.BLACK


@settings(max_examples=500, deadline=None)
@given(games_with_root(), st.integers(0, 6))
def test_win_tree_budget(game_and_root, max_nodes):
    game, root = game_and_root
    solution = retrograde(game)
    for g, close_cycles in ((1, False), (-1, False), (1, True), (-1, True)):
        full = win_tree(game, g, root, close_cycles=close_cycles)
        cut = win_tree(game, g, root, max_nodes=max_nodes, close_cycles=close_cycles)
        assert cut.nodes <= max_nodes
        assert cut.finished == (full.nodes <= max_nodes)
        if cut.finished:
            assert cut.root_win == full.root_win
        else:
            assert cut.root_win is None
        for v in range(game.num_vertices):
            assert cut.color[v] is not Color.GRAY
            if cut.color[v] is Color.BLACK:
                assert cut.win[v] == (solution.eval[v] == g)


def _play_all_replies(game, strategy, player, root):
    """Every position reachable from root while player follows strategy."""
    seen = {root}
    frontier = [root]
    while frontier:
        v = frontier.pop()
        yield v
        if game.is_sink(v):
            continue
        for u in [strategy.move(v)] if game.turn(v) == player else game.successors(v):
            if u not in seen:
                seen.add(u)
                frontier.append(u)


@settings(max_examples=1000, deadline=None)
@given(games_with_root(), st.sampled_from([1, -1]))
def test_never_lose_strategy_theorem_4_8(game_and_root, player):
    game, root = game_and_root
    solution = retrograde(game)
    if solution.eval[root] == -player:
        try:
            never_lose_strategy(game, player, root)
        except ValueError:
            return
        raise AssertionError("a lost root must raise ValueError")
    strategy = never_lose_strategy(game, player, root)
    for v in _play_all_replies(game, strategy, player, root):
        assert solution.eval[v] != -player
        if game.is_sink(v):
            assert game.win(v) != -player


def test_black_first_and_move_order_change_the_tree_found():
    # R (Black) -> x, v; x (White) -> S; v (White) -> a, S; a (Black) -> y; y (White) -> S.
    R, x, v, a, y, S = range(6)
    game = ExplicitGame(
        [[x, v], [S], [a, S], [y], [S], [S]], turn=[-1, 1, 1, -1, 1, -1], win={S: 1}, start=R
    )
    assert retrograde(game).depth(1)[R] == 2
    plain = win_tree(game, 1)
    assert plain.root_win and (plain.d[v], plain.d[R]) == (3, 4)
    # S is BLACK (through x) when v is expanded: Sec. 4.1 takes it first.
    black_first = win_tree(game, 1, black_first=True)
    assert black_first.root_win and (black_first.d[v], black_first.d[R]) == (1, 2)
    seen = []

    def sinks_first(game, vertex, successors):
        seen.append(vertex)
        return sorted(successors, key=lambda u: not game.is_sink(u))

    ordered = win_tree(game, 1, order=sinks_first)
    assert ordered.d[R] == 2 and seen == [R, x, v]
    assert ordered.color[a] is None  # never visited


def test_black_first_takes_the_shallowest_finished_win():
    # R (Black) -> x, v; x (White) -> a; a (Black) -> y; y (White) -> S; v (White) -> a, S, a.
    R, x, a, y, S, v = range(6)
    game = ExplicitGame(
        [[x, v], [a], [y], [S], [S], [a, S, a]], turn=[-1, 1, -1, 1, -1, 1], win={S: 1}, start=R
    )
    # a (d = 2) and S (d = 0) are both BLACK when v is expanded.
    assert win_tree(game, 1).d[v] == 3
    assert win_tree(game, 1, black_first=True).d[v] == 1


def test_cycle_result_is_nil_then_recomputed():
    # 0 (White) -> 1; 1 (Black) -> 0, 2; 2 (White) -> 3 (sink, White wins).
    game = ExplicitGame([[1], [0, 2], [3], [3]], turn=[1, -1, 1, -1], win={3: 1})
    result = win_tree(game, 1, root=1)
    # Seen from 1, vertex 0 only leads back to the path: NIL, hence WHITE again.
    assert result.root_win is False and result.color[0] is Color.WHITE and result.win[0] is None
    # Closing the cycle at 1 settles 0 with it: Black holds the draw by going back to 0.
    closed = win_tree(game, 1, root=1, close_cycles=True)
    assert closed.root_win is False and closed.color[0] is Color.BLACK and closed.win[0] is False
    assert win_tree(game, -1, root=0).root_win is False
    assert retrograde(game).eval.tolist() == [0, 0, 1, 1]


def _chain(n):
    # 0 -> 1 -> ... -> n - 1, turns alternating, the last vertex a sink won by White.
    indptr = np.arange(n + 1)
    indices = np.minimum(np.arange(1, n + 1), n - 1)
    turn = np.where(np.arange(n) % 2 == 0, 1, -1)
    win = np.zeros(n, np.int8)
    win[n - 1] = 1
    return ExplicitGame.from_csr(indptr, indices, turn, win)


class LazyChain:
    num_vertices = None
    start = 0

    def __init__(self, n):
        self.n = n

    def successors(self, v):
        return [min(v + 1, self.n - 1)]

    def turn(self, v):
        return 1 if v % 2 == 0 else -1

    def is_sink(self, v):
        return v == self.n - 1

    def win(self, v):
        return 1


def test_deep_graph_without_recursion():
    n = 200_000
    game = _chain(n)
    assert retrograde(game).depth(1)[0] == n - 1
    for chain, black_first in ((game, False), (game, True), (LazyChain(n), False)):
        result = win_tree(chain, 1, black_first=black_first)
        assert result.root_win is True and result.d[0] == n - 1 and result.nodes == n
    assert win_tree(game, -1).root_win is False


def test_win_tree_time_budget():
    # A clock that has already run out stops the search at once; a generous one changes nothing.
    game = LazyChain(1000)
    stopped = win_tree(game, 1, max_seconds=0)
    assert not stopped.finished and stopped.root_win is None and stopped.nodes == 0
    full = win_tree(game, 1)
    timed = win_tree(game, 1, max_seconds=3600)
    assert timed.finished and (timed.root_win, timed.d[0], timed.nodes) == (full.root_win, full.d[0], full.nodes)
