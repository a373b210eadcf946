"""The chess adapter as a Romano game graph, solved by ``retrograde`` and checked
against the Syzygy (WDL) and Gaviota (DTM) oracles."""

from __future__ import annotations

import functools

import chess
import chess.gaviota
import chess.syzygy
import numpy as np
import pytest

from tablebase.endgame import index_board
from tablebase.endgame.graph import ChessGame
from tablebase.game import GameGraph, as_explicit
from tablebase.solve import INF, Solution, retrograde


def our_wdl_dtm(game: ChessGame, solution: Solution, stm: int) -> tuple[np.ndarray, np.ndarray]:
    """wdl and dtm (side-to-move conventions) of every legal position with ``stm`` to move."""
    v = game.vertices(stm, game.legal[stm])
    turn = 1 if stm == 0 else -1
    wdl = solution.eval[v].astype(np.int64) * turn
    mover, other = solution.depth(turn)[v], solution.depth(-turn)[v]
    assert (mover[wdl > 0] < INF).all() and (other[wdl < 0] < INF).all()
    return wdl, np.where(wdl > 0, mover, np.where(wdl < 0, -other, 0))


@pytest.mark.parametrize("key", ["KQvK", "KRvK"])
def test_wdl_and_dtm_equal_the_oracles_on_every_position(key, oracle_dir):
    game = ChessGame(key)
    solution = retrograde(game)
    with chess.syzygy.open_tablebase(str(oracle_dir / "syzygy")) as syzygy, \
            chess.gaviota.open_tablebase(str(oracle_dir / "gaviota")) as gaviota:
        for stm in (0, 1):
            wdl, dtm = our_wdl_dtm(game, solution, stm)
            # White to move always wins; Black to move loses or (stalemate, capture) draws.
            assert set(wdl.tolist()) == ({1} if stm == 0 else {-1, 0})
            boards = [index_board(key, stm, int(i)) for i in game.legal[stm]]
            their_wdl = np.sign([syzygy.probe_wdl(b) for b in boards])
            their_dtm = np.array([gaviota.probe_dtm(b) for b in boards])
            bad = np.flatnonzero((wdl != their_wdl) | (dtm != their_dtm))
            assert len(bad) == 0, [(boards[i].fen(), wdl[i], their_wdl[i], dtm[i], their_dtm[i]) for i in bad[:5]]


@functools.cache
def solved(key: str) -> np.ndarray:
    """eval of a table whose sub-tables are drawn by material, laid out by index."""
    game = ChessGame(key)
    return game.index_values(retrograde(game).eval)


@pytest.mark.parametrize("key", ["KPvK", "KQvKR"])
def test_exits_take_the_sub_tables_values(key, oracle_dir):
    """KPvK leaves by promotions; KQvKR into KQvK (White captured) and into KRvK
    colour-flipped (Black captured), whose exits must carry Black's wins as -1."""
    game = ChessGame(key, lambda sub, stm, idx: solved(sub)[stm, idx])
    exit_wins = game.to_explicit().win[game.num_positions:]
    assert set(exit_wins.tolist()) == ({0, 1} if key == "KPvK" else {-1, 0, 1})
    solution = retrograde(game)
    rng = np.random.default_rng(1)
    with chess.syzygy.open_tablebase(str(oracle_dir / "syzygy")) as syzygy:
        for stm in (0, 1):
            wdl, _ = our_wdl_dtm(game, solution, stm)
            sample = rng.choice(len(wdl), 1500, replace=False)
            theirs = [np.sign(syzygy.probe_wdl(index_board(key, stm, int(game.legal[stm][i])))) for i in sample]
            assert wdl[sample].tolist() == theirs


def test_vertices_positions_and_moves_agree_with_python_chess():
    game = ChessGame("KRvK")
    assert isinstance(game, GameGraph)
    assert as_explicit(game) is game.to_explicit()
    for v in range(game.num_vertices):
        key, stm, idx = game.position(v)
        if v < game.num_positions:
            assert key == "KRvK" and game.vertex(stm, idx) == v
        else:
            # Black took the rook: the exit is White to move, a turn after Black's.
            assert (key, stm) == ("KvK", 0) and game.turn(v) == 1
            assert game.is_sink(v) and game.win(v) == 0
    for v in range(0, game.num_positions, 97):
        board = index_board(*game.position(v))
        assert game.turn(v) == (1 if board.turn == chess.WHITE else -1)
        if board.is_checkmate():
            assert game.is_sink(v) and game.win(v) == -game.turn(v)
        elif board.is_stalemate():
            assert game.is_sink(v) and game.win(v) == 0
        else:
            assert not game.is_sink(v) and len(game.successors(v)) == board.legal_moves.count()
    with pytest.raises(KeyError, match="no legal position"):
        game.vertex(0, 0)
    assert game.vertices(0, [-1, game.scheme.size, 0]).tolist() == [-1, -1, -1]
    with pytest.raises(IndexError):
        game.position(game.num_vertices)


def test_sub_table_values_are_required_unless_drawn_by_material():
    with pytest.raises(ValueError, match="KPvK: sub-tables .* not all drawn by material"):
        ChessGame("KPvK")
    assert ChessGame("KvK").num_positions == 2 * 462
    assert (retrograde(ChessGame("KvK")).eval == 0).all()
    with pytest.raises(TypeError, match="returned shape"):
        ChessGame("KPvK", lambda sub, stm, idx: 0)
