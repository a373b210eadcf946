"""The online solver: the chess search graph against python-chess and the probe library
(its slow twins), depth-bounded graphs against retrograde depths, and the cross-check
against the tables (0 disagreements)."""

from __future__ import annotations

import json

import chess
import numpy as np
import pytest

from tablebase import open_tablebase
from tablebase.cli import main
from tablebase.game import ExplicitGame, TugOfWar, as_explicit
from tablebase.endgame.pychess import board_index
from tablebase.online import (
    DepthBounded,
    SearchGraph,
    crosscheck,
    heuristic_order,
    never_lose_move,
    pack,
    prove,
    run_win_tree,
    sample_positions,
    solve,
)
from tablebase.probe import CastlingRightsError, IllegalPositionError, MissingTableError, TooManyPiecesError
from tablebase.online.search import move_to
from tablebase.solve import retrograde, win_tree


@pytest.fixture(scope="module")
def tb(tables_34):
    with open_tablebase(tables_34) as tablebase:
        yield tablebase


def _key(board: chess.Board) -> tuple:
    """A board's position up to the index's symmetries (and the colour flip)."""
    ep = board.has_legal_en_passant()
    keys = {board_index(board)} | (set() if ep else {board_index(board.mirror())})
    return tuple(sorted(keys)), ep


def _moves_by_python_chess(board: chess.Board) -> dict[tuple, bool]:
    out = {}
    for move in board.legal_moves:
        child = board.copy(stack=False)
        child.push(move)
        out[_key(child)] = child.is_check()
    return out


def _ep_positions(n: int, seed: int) -> list[chess.Board]:
    """Boards of KPvKP (and KRPvKP) just after a double step that can be taken en passant."""
    rng = np.random.default_rng(seed)
    boards = []
    while len(boards) < n:
        board = chess.Board(None)
        f = int(rng.integers(0, 8))
        g = f + (1 if f == 0 or (f < 7 and rng.integers(0, 2)) else -1)
        white_moves = bool(rng.integers(0, 2))
        if white_moves:  # a white pawn now on rank 4, a black one beside it
            board.set_piece_at(chess.square(f, 3), chess.Piece(chess.PAWN, chess.WHITE))
            board.set_piece_at(chess.square(g, 3), chess.Piece(chess.PAWN, chess.BLACK))
            board.ep_square, board.turn = chess.square(f, 2), chess.BLACK
        else:
            board.set_piece_at(chess.square(f, 4), chess.Piece(chess.PAWN, chess.BLACK))
            board.set_piece_at(chess.square(g, 4), chess.Piece(chess.PAWN, chess.WHITE))
            board.ep_square, board.turn = chess.square(f, 5), chess.WHITE
        free = [s for s in chess.SQUARES if board.piece_at(s) is None and s not in (board.ep_square,)]
        wk, bk = rng.choice(free, 2, replace=False)
        board.set_piece_at(int(wk), chess.Piece(chess.KING, chess.WHITE))
        board.set_piece_at(int(bk), chess.Piece(chess.KING, chess.BLACK))
        if board.is_valid() and board.has_legal_en_passant():
            boards.append(board)
    return boards


@pytest.mark.parametrize("material", ["KQvK", "KPvK", "KQvKR", "KRvKP", "KPvKP"])
def test_successors_match_python_chess(tb, material):
    graph = SearchGraph(tb, material)
    roots = [pack(stm, idx) for stm, idx in sample_positions(tb, material, 60, seed=3)]
    for v in roots:
        board = graph.board(v)
        expected = _moves_by_python_chess(board)
        successors = graph.successors(v)
        if graph.is_sink(v):
            assert successors == [v] and not expected
            assert graph.win(v) == (-graph.turn(v) if board.is_checkmate() else 0)
            assert board.is_checkmate() or board.is_stalemate()
            continue
        got = {_key(graph.board(u)): graph.gives_check(v, u) for u in successors}
        assert got == expected, board.fen()
        assert graph.turn(v) == (1 if board.turn == chess.WHITE else -1)
        for u in successors:
            assert graph.turn(u) == -graph.turn(v)
            if graph.is_leaf(u):  # probe_batch_indices, checked against the board probes
                leaf = graph.board(u)
                assert graph.leaf_value(u) == (tb.probe_eval(leaf), abs(tb.probe_dtm(leaf)))
            else:
                child = graph.board(u)
                replies = graph.features(v, u)[0]
                assert replies == sum(not child.is_en_passant(m) for m in child.legal_moves)


def test_en_passant_vertices_match_python_chess(tb):
    for board in _ep_positions(25, seed=5):
        graph = SearchGraph.from_board(tb, board)
        assert graph.position(graph.start)[2] >= 0  # an en-passant vertex
        assert _key(graph.board(graph.start)) == _key(board)
        got = {_key(graph.board(u)) for u in graph.successors(graph.start)}
        assert got == set(_moves_by_python_chess(board)), board.fen()
        # The table's value of the board (the probe library's en-passant rule) is what the search finds.
        value = tb.probe_eval(board)
        for g in (1, -1):
            proof = prove(graph, g, max_nodes=2_000)
            if proof.finished:
                assert proof.win == (value == g), board.fen()


def test_board_errors(tb, tmp_path):
    with pytest.raises(CastlingRightsError):
        SearchGraph.from_board(tb, chess.Board("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1"))
    with pytest.raises(TooManyPiecesError):
        SearchGraph.from_board(tb, chess.Board("4k3/pppp4/8/8/8/8/PPPP4/4K3 w - - 0 1"))
    with pytest.raises(IllegalPositionError):  # the side not to move is in check
        SearchGraph.from_board(tb, chess.Board("4k2R/8/8/8/8/8/8/4K3 w - - 0 1"))
    with open_tablebase(tmp_path) as empty:
        with pytest.raises(MissingTableError, match="KQvK, KRvK"):
            SearchGraph.from_board(empty, chess.Board("8/8/8/8/8/2k5/1q6/K6R w - - 0 1"))


def test_depth_bounded_game_matches_retrograde_depths():
    # A small cyclic game: a search cut at r plies costs exponentially in r.
    game = as_explicit(TugOfWar(7, 2, start=(2, 1)))
    solution = retrograde(game)
    for g in (1, -1):
        depth = solution.depth(g)
        for v in range(game.num_vertices):
            d = int(depth[v])
            for r in range(0, 7):
                bounded = DepthBounded(game, r, v)
                result = win_tree(bounded, g, root=bounded.start)
                assert result.finished and result.root_win == (d <= r), (v, g, r, d)
                if result.root_win:
                    assert d <= result.d[bounded.start] <= r


def test_depth_bounded_does_not_count_free_vertices():
    # 0 -> 1 -> 2 -> 3, a sink won by White; 1 and 2 stand for a table leaf and its chain.
    game = ExplicitGame([[1], [2], [3], [3]], turn=[1, -1, 1, -1], win={3: 1})
    free = DepthBounded(game, 1, 0, free=lambda v: v in (1, 2))
    result = win_tree(free, 1, root=free.start)
    assert result.root_win is True and result.d[free.start] == 3  # d counts every ply
    counted = DepthBounded(game, 1, 0)
    assert win_tree(counted, 1, root=counted.start).root_win is False


def test_heuristic_order_is_a_permutation(tb):
    graph = SearchGraph(tb, "KQvKR")
    for stm, idx in sample_positions(tb, "KQvKR", 30, seed=1):
        v = pack(stm, idx)
        if graph.is_sink(v):
            continue
        successors = graph.successors(v)
        for g in (1, -1):
            ordered = heuristic_order(g)(graph, v, successors)
            assert sorted(map(repr, ordered)) == sorted(map(repr, successors))


@pytest.mark.parametrize("order", ["natural", "black-first", "heuristic", "heuristic+black-first"])
@pytest.mark.parametrize("material", ["KQvK", "KPvK", "KRvK"])
def test_crosscheck_has_no_disagreement(tb, material, order):
    report = crosscheck(tb, material, samples=4, seed=11, order=order, max_nodes=4_000)
    assert report.ok, report.summary()
    assert report.positions == 4 and report.searches == 8
    assert report.agreed + report.unfinished == 8 and report.black_checked > 0
    if order.startswith("heuristic") or material == "KRvK":  # the lone king's searches end quickly
        assert report.agreed > 0
    paper = crosscheck(tb, material, samples=4, seed=11, order=order, max_nodes=4_000, close_cycles=False)
    assert paper.ok, paper.summary()


def test_closing_cycles_settles_what_the_paper_wanders_in(tb):
    # KRvK: the lone king (Black in the table) never wins. Plain WinTree meets cycles
    # everywhere; closing them settles each position as BLACK False once.
    graph = SearchGraph(tb, "KRvK")
    for stm, idx in sample_positions(tb, "KRvK", 5, seed=3):
        v = pack(stm, idx)
        if graph.is_sink(v):
            continue
        closed = run_win_tree(graph, -1, v, max_nodes=20_000)
        paper = run_win_tree(graph, -1, v, max_nodes=20_000, close_cycles=False)
        assert closed.finished and closed.root_win is False
        assert closed.nodes * 5 < paper.nodes, (closed.nodes, paper.nodes)


def test_crosscheck_with_captures_into_tables(tb):
    report = crosscheck(tb, "KQvKR", samples=6, seed=2, max_nodes=4_000)
    assert report.ok, report.summary()
    assert report.agreed > 0 and report.never_lose_agreed > 0


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_never_lose_move_keeps_the_draw(tb, engine):
    # KQvK, Black to move with the queen en prise: taking it is the only move that does not lose.
    board = chess.Board("8/8/8/8/8/2k5/2Q5/5K2 b - - 0 1")
    graph = SearchGraph.from_board(tb, board)
    proof = prove(graph, 1, max_nodes=5_000, engine=engine)
    found = never_lose_move(graph, -1, proof, max_nodes=5_000)
    assert proof.win is False and found.finished
    after = graph.board(found.vertex)
    assert tb.probe_eval(after) != 1, after.fen()
    assert set(tb.never_lose_moves(board)) == {move_to(graph, board, found.vertex)}


def test_budgets(tb):
    graph = SearchGraph.from_board(tb, chess.Board("8/4k3/8/8/2Q5/8/8/3K4 w - - 0 1"))
    assert prove(graph, 1, max_seconds=0).finished is False
    cut = prove(graph, 1, max_nodes=300)
    assert not cut.finished and cut.nodes <= 300


def test_solve_example(tb):
    s = solve(tb, chess.Board("7k/8/5K2/8/8/8/8/6Q1 w - - 0 1"), max_nodes=20_000)
    white, black = s.sides
    assert (white.win, black.win) == (True, False)
    assert white.d >= tb.probe_depth(s.board, 1)
    after = s.board.copy()
    after.push(s.never_lose)
    assert tb.probe_eval(after) == 1


def test_cli_solve_and_crosscheck(tables_34, capsys):
    assert main(["solve", "8/8/8/8/8/2k5/1q6/K7 w - - 0 1", "--tables", str(tables_34), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(s["side"], s["win"]) for s in out["sides"]] == [("white", False), ("black", True)]
    assert out["never_lose_move"] is None and out["table_wdl"] == -1
    assert main(["crosscheck", "KRvK", "--tables", str(tables_34), "--samples", "3", "--max-nodes", "5000"]) == 0
    assert "disagreed 0" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["solve", "not a fen"], "bad FEN"),
    (["solve", "r3k3/8/8/8/8/8/8/4K3 b q - 0 1"], "castling rights"),
    (["solve", "8/8/8/8/8/2k5/1q6/K6R w - - 0 1", "--tables", "EMPTY"], "missing: KQvK, KRvK"),
    (["solve", "8/8/8/8/8/2k5/1q6/K7 w - - 0 1", "--order", "random"], None),
    (["crosscheck", "KQvKQ", "--tables", "EMPTY"], "no table for KQvKQ"),
    (["crosscheck", "KQvK", "--samples", "0"], "--samples"),
])
def test_cli_errors(tables_34, tmp_path, capsys, args, message):
    args = [str(tmp_path) if a == "EMPTY" else a for a in args]
    if "--tables" not in args:
        args = args + ["--tables", str(tables_34)]
    if message is None:  # argparse rejects it
        with pytest.raises(SystemExit):
            main(args)
        return
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("tablebase: error:") and message in err and "Traceback" not in err
