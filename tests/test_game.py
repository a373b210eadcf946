"""Tests of tablebase.game: graph validation, the GameGraph protocol, the small games."""

from __future__ import annotations

import numpy as np
import pytest

from tablebase.game import (
    INF,
    ExplicitGame,
    GameGraph,
    InvalidGameError,
    Nim,
    SubtractionGame,
    TicTacToe,
    TugOfWar,
    as_explicit,
)

# Vertex v moves to v + 1 and v + 3 (mod 8), of the other parity; 6 and 7 are sinks.
# Each invalid case below breaks the graph at vertex 5 only.
TURN = [1, -1] * 4
BASE = [[1, 3], [2, 4], [3, 5], [4, 6], [5, 7], [6, 0], [6], [7]]
WIN = {6: 1, 7: -1}


def _with(successors_of_5=None, turn_of_5=None):
    successors = [list(s) for s in BASE]
    turn = list(TURN)
    if successors_of_5 is not None:
        successors[5] = successors_of_5
    if turn_of_5 is not None:
        turn[5] = turn_of_5
    return successors, turn


def _from_csr(successors, turn, win):
    indptr = np.cumsum([0] + [len(s) for s in successors])
    indices = np.array([u for s in successors for u in s], np.int64)
    win_array = np.zeros(len(successors), np.int8)
    for v, value in win.items():
        win_array[v] = value
    return ExplicitGame.from_csr(indptr, indices, np.array(turn), win_array)


INVALID = {
    "no successors": (_with(successors_of_5=[]), WIN, "no successors"),
    "self-loop": (_with(successors_of_5=[6, 5]), WIN, "self-loop"),
    "parallel self-loops": (_with(successors_of_5=[5, 5]), WIN, "self-loop"),
    "successor out of range": (_with(successors_of_5=[6, 99]), WIN, "out of range"),
    "turn value": (_with(turn_of_5=0), WIN, "turn must be"),
    "turn does not alternate": (_with(successors_of_5=[6, 1]), WIN, "alternate"),
    "sink missing from win": (_with(successors_of_5=[5]), WIN, "missing"),
    "win value": (_with(successors_of_5=[5]), {**WIN, 5: 2}, "win value 2"),
}


# A CSR win array has an entry for every vertex: nothing can be missing from it.
@pytest.mark.parametrize(
    "case, build",
    [(case, ExplicitGame) for case in INVALID]
    + [(case, _from_csr) for case in INVALID if case != "sink missing from win"],
)
def test_invalid_graphs_name_the_vertex(case, build):
    (successors, turn), win, problem = INVALID[case]
    with pytest.raises(ValueError, match=rf"vertex 5\b.*{problem}") as error:
        build(successors, turn, win)
    assert isinstance(error.value, InvalidGameError)
    assert error.value.vertex == 5


def test_valid_base_graph_and_its_arrays():
    game = ExplicitGame(BASE, TURN, WIN)
    assert game.num_vertices == 8 and game.num_arcs == 14
    assert game.indptr.dtype == np.int64 and game.indices.dtype == np.int32
    assert game.turn.dtype == np.int8 and game.win.dtype == np.int8 and game.is_sink.dtype == bool
    assert game.is_sink.tolist() == [False] * 6 + [True, True]
    assert game.win.tolist() == [0] * 6 + [1, -1]
    assert game.successors(5) == [6, 0] and game.successors(7) == [7]
    assert game.turn(5) == -1 and type(game.turn(5)) is int
    assert game.is_sink(6) is True and game.win(7) == -1
    with pytest.raises(ValueError):
        game.turn[0] = -1  # read-only: validation must stay true


def test_win_as_sequence_ignores_non_sinks():
    win = [None, 7, "ignored", None, None, None, 1, -1]
    game = ExplicitGame(BASE, TURN, win)
    assert game.win.tolist() == [0] * 6 + [1, -1]
    assert _from_csr(BASE, TURN, WIN).win.tolist() == game.win.tolist()


def test_other_invalid_inputs():
    with pytest.raises(ValueError, match="start vertex 8"):
        ExplicitGame(BASE, TURN, WIN, start=8)
    with pytest.raises(ValueError, match="vertex 12"):
        ExplicitGame(BASE, TURN, {**WIN, 12: 1})
    with pytest.raises(ValueError, match="one entry per vertex"):
        ExplicitGame(BASE, TURN[:-1], WIN)
    with pytest.raises(ValueError, match="indptr"):
        ExplicitGame.from_csr(np.array([0, 2]), np.array([0]), np.array([1]), np.array([0]))


def test_gamegraph_protocol():
    for game in (ExplicitGame(BASE, TURN, WIN), TicTacToe(), Nim((1, 2)), SubtractionGame(4), TugOfWar(5, 2)):
        assert isinstance(game, GameGraph)


class Corridor:
    """A lazy game: White walks right from 0 to the sink at length, Black passes."""

    num_vertices = None
    start = ("square", 0, 1)

    def __init__(self, length, bad_vertex=None):
        self.length = length
        self.bad_vertex = bad_vertex

    def successors(self, v):
        _, k, player = v
        if self.is_sink(v):
            return [v]
        return [("square", k + (player == 1), -player)]

    def turn(self, v):
        return 0 if v == self.bad_vertex else v[2]

    def is_sink(self, v):
        return v[1] == self.length

    def win(self, v):
        return 1


def test_as_explicit_numbers_vertices_breadth_first():
    game = as_explicit(Corridor(2))
    assert game.vertex_ids == [("square", 0, 1), ("square", 1, -1), ("square", 1, 1), ("square", 2, -1)]
    assert game.vertex_index[("square", 2, -1)] == 3
    assert game.start == 0 and game.is_sink.tolist() == [False, False, False, True]
    assert as_explicit(game) is game


def test_as_explicit_errors_name_original_vertices():
    with pytest.raises(ValueError, match=r"vertex \('square', 1, 1\): turn must be"):
        as_explicit(Corridor(3, bad_vertex=("square", 1, 1)))


def test_as_explicit_uses_to_explicit():
    explicit = ExplicitGame(BASE, TURN, WIN)

    class Wrapped(Corridor):
        def to_explicit(self):
            return explicit

    assert as_explicit(Wrapped(2)) is explicit


def test_tictactoe_known_counts():
    game = as_explicit(TicTacToe())
    sinks = np.asarray(game.is_sink)
    wins = np.asarray(game.win)[sinks]
    # 5478 legal positions, 958 final: X wins 626, O wins 316, 16 draws.
    assert game.num_vertices == 5478
    assert (sinks.sum(), (wins == 1).sum(), (wins == -1).sum(), (wins == 0).sum()) == (958, 626, 316, 16)
    assert TicTacToe().eval(TicTacToe.start) == 0


@pytest.mark.parametrize(
    "game",
    [TicTacToe(), Nim((1, 2, 3)), Nim((2, 2, 5)), SubtractionGame(30), TugOfWar(9, 3), TugOfWar(6, 2)],
    ids=["tictactoe", "nim-1-2-3", "nim-2-2-5", "subtraction-30", "tug-9-3", "tug-6-2"],
)
def test_closed_forms_satisfy_defs_2_7_and_2_8_locally(game):
    # A necessary condition independent of any solver: the stated values are a
    # fixed point of the definitions at every reachable vertex.
    explicit = as_explicit(game)
    for v in explicit.vertex_ids:
        successors = game.successors(v)
        if game.is_sink(v):
            assert game.eval(v) == game.win(v)
            continue
        values = [game.eval(u) for u in successors]
        assert game.eval(v) == (max(values) if game.turn(v) == 1 else min(values))
        if not hasattr(game, "depth"):
            continue
        for g in (1, -1):
            depths = [game.depth(u, g) for u in successors]
            best = min(depths) if game.turn(v) == g else max(depths)
            assert game.depth(v, g) == (INF if best >= INF else best + 1)
            assert (game.depth(v, g) < INF) == (game.eval(v) == g)


def test_tug_of_war_has_draws_and_cycles():
    game = TugOfWar(7, 2)
    assert game.eval((3, 1)) == 0 and game.eval((3, -1)) == 0
    assert (3, 1) in game.successors((3, -1)) and (3, -1) in game.successors((3, 1))
    assert game.successors((1, 1)).count((0, -1)) == 2  # parallel arcs
    with pytest.raises(ValueError):
        TugOfWar(4, 2)
