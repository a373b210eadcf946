"""The solvers against the known values of the small games in tablebase.game."""

from __future__ import annotations

import random

import pytest

from tablebase.game import INF, Nim, SubtractionGame, TicTacToe, TugOfWar, as_explicit
from tablebase.solve import Color, never_lose_strategy, reference_solution, retrograde, win_tree

GAMES = {
    "tictactoe": TicTacToe(),
    "nim-1-2-3": Nim((1, 2, 3)),
    "nim-2-2-5": Nim((2, 2, 5)),
    "nim-3-4-5": Nim((3, 4, 5)),
    "subtraction-60": SubtractionGame(60),
    "tug-3-1": TugOfWar(3, 1),
    "tug-7-2": TugOfWar(7, 2),
    "tug-12-4": TugOfWar(12, 4),
    "tug-15-7": TugOfWar(15, 7, start=(1, -1)),
}


@pytest.mark.parametrize("solver", [retrograde, reference_solution])
@pytest.mark.parametrize("name", GAMES)
def test_solvers_match_closed_forms(name, solver):
    game = GAMES[name]
    solution = solver(game)
    vertices = as_explicit(game).vertex_ids
    assert len(vertices) == len(solution.eval)
    for v in vertices:
        i = solution.index(v)
        assert solution.eval[i] == game.eval(v), v
        if hasattr(game, "depth"):
            for g in (1, -1):
                assert solution.depth(g)[i] == game.depth(v, g), (v, g)


def test_tictactoe_is_a_draw():
    game = GAMES["tictactoe"]
    solution = retrograde(game)
    assert solution.eval[solution.index(game.start)] == 0
    for g in (1, -1):
        for black_first in (False, True):
            assert win_tree(game, g, black_first=black_first).root_win is False


@pytest.mark.parametrize("name", GAMES)
def test_win_tree_on_lazy_games(name):
    game = GAMES[name]
    vertices = as_explicit(game).vertex_ids
    # Every vertex of the small games; a sample of tic-tac-toe's 5478.
    roots = random.Random(name).sample(vertices, 150) if len(vertices) > 1000 else vertices
    for v in roots:
        for g in (1, -1):
            for black_first, close_cycles in ((False, False), (True, False), (False, True)):
                result = win_tree(game, g, root=v, black_first=black_first, close_cycles=close_cycles)
                assert result.root_win == (game.eval(v) == g), (v, g)
                for u, color in result.color.items():
                    if color is Color.BLACK:
                        assert result.win[u] == (game.eval(u) == g)
                    if result.win[u] and hasattr(game, "depth"):
                        assert game.depth(u, g) <= result.d[u] < INF


@pytest.mark.parametrize("name", ["tictactoe", "tug-7-2", "tug-12-4", "subtraction-60", "nim-3-4-5"])
def test_never_lose_strategy_on_games(name):
    game = GAMES[name]
    for player in (1, -1):
        if game.eval(game.start) == -player:
            with pytest.raises(ValueError, match="wins from"):
                never_lose_strategy(game, player)
            continue
        strategy = never_lose_strategy(game, player)
        seen = {game.start}
        frontier = [game.start]
        while frontier:
            v = frontier.pop()
            assert game.eval(v) != -player, v
            if game.is_sink(v):
                continue
            moves = [strategy.move(v)] if game.turn(v) == player else game.successors(v)
            for u in moves:
                if u not in seen:
                    seen.add(u)
                    frontier.append(u)
