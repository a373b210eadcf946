"""``tablebase uci``: Romano's never-losing engine, speaking the Universal Chess Interface.

A position the tables hold is played from them (:meth:`Tablebase.best_move`: the
fastest win, else a draw, else the longest defence). A position of a material without
a table but whose captures and promotions lead to tables is searched with the compiled
WinTree (both players, within the time the ``go`` command gives), and the move is
:func:`~tablebase.online.choose_move`'s: one that keeps a proved win (the smallest
``d``), else one that keeps a proved draw, else Theorem 4.8's never-lose move. Anything
else (more pieces, castling rights, missing tables) gets a legal move chosen from what
the tables say of the positions after each move, or merely a legal one. ``bestmove`` is
always a legal move (``(none)`` only where there is none, as Stockfish says).

The engine reads its input on the main thread and searches on another, so ``stop``,
``isready`` and ``quit`` are answered while it thinks. Malformed input gets an ``info
string`` naming what was wrong, and the engine goes on. Commands (UCI, April 2006):
``uci``, ``debug``, ``isready``, ``setoption name TablePath|Hash|Threads value ...``,
``register``, ``ucinewgame``, ``position startpos|fen FEN [moves ...]``, ``go``
(``searchmoves``, ``ponder``, ``wtime``, ``btime``, ``winc``, ``binc``, ``movestogo``,
``depth``, ``nodes``, ``mate``, ``movetime``, ``infinite``), ``stop``, ``ponderhit``,
``quit``. Scores: ``mate N`` in moves for a proved result (a table's or the search's),
``cp 0`` for a proved draw, else ``cp`` by material.

>>> import io
>>> out = io.StringIO()
>>> engine = UciEngine(Engine("data/test-tables"), out)
>>> for line in ["uci", "position fen 8/8/8/8/8/2k5/2Q5/5K2 b - - 0 1", "go movetime 50", "quit"]:
...     engine.handle(line)
>>> engine.wait()
>>> [line for line in out.getvalue().splitlines() if line.startswith(("id name", "bestmove"))]
['id name tablebase 0.1.0 (Romano never-losing engine)', 'bestmove c3c2']
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import chess

from . import __version__
from .probe import CATEGORIES, MissingTableError, PositionError, Tablebase

#: The engine's name, as ``id name`` says it.
NAME = f"tablebase {__version__} (Romano never-losing engine)"
#: Default, smallest and largest ``Hash`` (MB for the search's tables of results).
HASH_MB, HASH_MIN, HASH_MAX = 256, 1, 1 << 16
THREADS, THREADS_MAX = 1, 64
# Time kept back from every move's budget for the reply to reach the GUI.
_MARGIN = 0.015
# Plies of a principal variation shown, at most.
_PV_PLIES = 10
_PIECE_CP = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 300, chess.ROOK: 500, chess.QUEEN: 900}


class UciError(ValueError):
    """A command the engine cannot follow (answered with ``info string``)."""


@dataclass
class Limits:
    """What a ``go`` command asked for (times in seconds)."""

    searchmoves: list[chess.Move] | None = None
    ponder: bool = False
    wtime: float | None = None
    btime: float | None = None
    winc: float = 0.0
    binc: float = 0.0
    movestogo: int | None = None
    depth: int | None = None
    nodes: int | None = None
    mate: int | None = None
    movetime: float | None = None
    infinite: bool = False

    def seconds(self, board: chess.Board) -> float | None:
        """The time to think about ``board``, None for as long as it takes (until stop)."""
        if self.infinite or self.ponder:
            return None
        if self.movetime is not None:
            return max(0.0, self.movetime - _MARGIN)
        left = self.wtime if board.turn == chess.WHITE else self.btime
        if left is None:
            return None
        inc = self.winc if board.turn == chess.WHITE else self.binc
        moves = self.movestogo or 30
        return max(0.0, min(left / 2, left / moves + 0.8 * inc) - _MARGIN)


def parse_go(tokens: list[str], board: chess.Board) -> Limits:
    """The :class:`Limits` of ``go``'s arguments; :exc:`UciError` for a bad one.

    >>> parse_go("wtime 1000 btime 2000 winc 10 binc 20".split(), chess.Board()).seconds(chess.Board())
    0.026333333333333334
    >>> parse_go(["movetime", "soon"], chess.Board())
    Traceback (most recent call last):
    ...
    tablebase.uci.UciError: go: movetime needs a number, not 'soon'
    """
    limits = Limits()
    numbers = {"wtime", "btime", "winc", "binc", "movetime"}
    counts = {"movestogo", "depth", "nodes", "mate"}
    i = 0
    while i < len(tokens):
        word = tokens[i]
        i += 1
        if word in numbers or word in counts:
            if i >= len(tokens):
                raise UciError(f"go: {word} needs a value")
            try:
                value = int(tokens[i])
            except ValueError:
                raise UciError(f"go: {word} needs a number, not {tokens[i]!r}") from None
            i += 1
            if value < 0 and word not in ("wtime", "btime"):  # clocks may run below zero
                raise UciError(f"go: {word} must not be negative, not {value}")
            setattr(limits, word, value / 1000 if word in numbers else value)
        elif word == "infinite":
            limits.infinite = True
        elif word == "ponder":
            limits.ponder = True
        elif word == "searchmoves":
            moves = []
            while i < len(tokens) and tokens[i] not in numbers | counts | {"infinite", "ponder"}:
                try:
                    moves.append(board.parse_uci(tokens[i]))
                except ValueError:
                    raise UciError(f"go: searchmoves: {tokens[i]!r} is no legal move in {board.fen()}") from None
                i += 1
            limits.searchmoves = moves or None
        else:
            raise UciError(f"go: unknown argument {word!r}")
    return limits


def parse_position(tokens: list[str]) -> chess.Board:
    """The board of ``position``'s arguments; :exc:`UciError` naming what is wrong.

    >>> parse_position("startpos moves e2e4 e7e5".split()).fen()
    'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2'
    >>> parse_position("fen 8/8/8/8/8/8/8/K2kr3 w - - 0 1 moves a1b2".split()).fen()
    '8/8/8/8/8/8/1K6/3kr3 b - - 1 1'
    """
    if not tokens:
        raise UciError("position: expected startpos or fen")
    if "moves" in tokens:
        at = tokens.index("moves")
        head, moves = tokens[:at], tokens[at + 1:]
    else:
        head, moves = tokens, []
    if head == ["startpos"]:
        board = chess.Board()
    elif head and head[0] == "fen":
        fen = " ".join(head[1:])
        try:
            board = chess.Board(fen)
        except ValueError as e:
            raise UciError(f"position: bad FEN {fen!r}: {e}") from None
        if not board.is_valid():
            raise UciError(f"position: illegal position {fen!r}")
    else:
        raise UciError(f"position: expected startpos or fen, not {' '.join(head)!r}")
    for text in moves:
        try:
            board.push(board.parse_uci(text))
        except ValueError:
            raise UciError(f"position: {text!r} is no legal move in {board.fen()}") from None
    return board


@dataclass
class Thought:
    """What :meth:`Engine.think` decided: the move (None only where there is none), the
    score (``("mate", n)`` in moves from the side to move, ``("cp", n)``), the principal
    variation, how it was found, and the search's depth and nodes."""

    move: chess.Move | None
    score: tuple[str, int]
    pv: list[chess.Move] = field(default_factory=list)
    how: str = ""
    depth: int = 0
    nodes: int = 0


def _mate_score(wdl: int, dtm: int) -> tuple[str, int]:
    """UCI's score of a table value: moves to mate, negative when the side to move is mated."""
    if wdl == 0:
        return "cp", 0
    return "mate", (dtm + 1) // 2 if wdl > 0 else -(abs(dtm) // 2)


def _material(board: chess.Board) -> int:
    """Centipawns of material, from the side to move."""
    score = 0
    for piece_type, cp in _PIECE_CP.items():
        score += cp * (len(board.pieces(piece_type, board.turn)) - len(board.pieces(piece_type, not board.turn)))
    return score


class Engine:
    """The chess of the UCI engine: a move for a board within :class:`Limits`.

    ``tables`` is the folder of tables (``TablePath``; None: none), ``hash_mb`` bounds the
    search's tables of results, ``threads`` >= 2 runs the two players' searches at once.
    The searches of the material being played keep their results from move to move
    (they are final, Thm 3.2) until :meth:`new_game`.
    """

    def __init__(self, tables: str | os.PathLike | None = "data/tables", hash_mb: int = HASH_MB,
                 threads: int = THREADS) -> None:
        self.hash_mb = hash_mb
        self.threads = threads
        self.tablebase: Tablebase | None = None
        self.tables: Path | None = None
        self._searches: dict[tuple[str, int], tuple] = {}  # (material, flip) -> (graph, {g: search})
        if tables is not None:
            self.set_tables(tables)

    def set_tables(self, path: str | os.PathLike) -> int:
        """Use the tables of ``path`` (a folder, or ``""`` for none); returns how many."""
        if self.tablebase is not None:
            self.tablebase.close()
            self.tablebase = None
        self._searches.clear()
        self.tables = None
        if str(path) in ("", "<empty>"):
            return 0
        path = Path(path)
        if not path.is_dir():
            raise UciError(f"TablePath: {str(path)!r} is no folder")
        self.tablebase = Tablebase()
        self.tables = path
        return self.tablebase.add_directory(path)

    def new_game(self) -> None:
        """Forget the searches' results."""
        self._searches.clear()

    # -- thinking ------------------------------------------------------------------------

    def think(self, board: chess.Board, limits: Limits, stop: threading.Event | None = None,
              report: Callable[[str], None] | None = None) -> Thought:
        """The move to play in ``board``: from the tables, else from the search, else a
        legal move. ``stop`` ends the thinking early; ``report(line)`` receives ``info``
        lines (without the word ``info``) as the search deepens."""
        t0 = time.monotonic()
        seconds = limits.seconds(board)
        deadline = None if seconds is None else t0 + seconds
        stopped = (lambda: False) if stop is None else stop.is_set
        legal = list(board.legal_moves)
        allowed = [m for m in limits.searchmoves if m in legal] if limits.searchmoves else legal
        if not legal:
            return Thought(None, ("mate", 0) if board.is_checkmate() else ("cp", 0), how="no legal move")
        thought = self._from_tables(board, allowed)
        if thought is None:
            thought = self._from_search(board, allowed, limits, deadline, stopped, report)
        if thought is None:
            thought = self._fallback(board, allowed)
        return thought

    def _from_tables(self, board: chess.Board, allowed: list[chess.Move]) -> Thought | None:
        tb = self.tablebase
        if tb is None:
            return None
        try:
            # As best_move(board, fifty_move_rule=True) among the allowed moves: the halfmove
            # clock counts, the win kept in hand before the clock runs out.
            moves = [m for m in tb.probe_moves(board) if m.move in allowed]
            if any(m.category is None for m in moves):
                move = moves[0].move  # tables without DTZ: DTM-optimal, the clock unseen
            else:
                move = max(moves, key=lambda m: CATEGORIES.index(m.category)).move
            score = _mate_score(tb.probe_wdl(board), tb.probe_dtm(board))
        except (MissingTableError, PositionError):
            return None
        return Thought(move, score, self._table_pv(board, move), how="tables", depth=1, nodes=1)

    def _table_pv(self, board: chess.Board, move: chess.Move) -> list[chess.Move]:
        pv = [move]
        child = board.copy(stack=False)
        child.push(move)
        while len(pv) < _PV_PLIES and not child.is_game_over():
            best = self.tablebase.get_wdl(child) is not None and self.tablebase.best_move(child)
            if not best:
                break
            pv.append(best)
            child.push(best)
        return pv

    def _searches_for(self, board: chess.Board):
        """(graph, {g: search}) for ``board``'s material, kept for the game; raises the
        probe library's errors where it cannot be searched."""
        from .online import SearchGraph, make_searches
        graph = SearchGraph.from_board(self.tablebase, board)
        key = (graph.key, graph.flip)
        known = self._searches.get(key)
        if known is None:
            # Captures only lose material: searches of other materials will not serve again.
            self._searches.clear()
            each = self.hash_mb * (1 << 20) // 2
            known = self._searches[key] = (graph, make_searches(graph, max_bytes=each))
        known[0].start = graph.start
        return known

    def _from_search(self, board: chess.Board, allowed: list[chess.Move], limits: Limits, deadline: float | None,
                     stopped: Callable[[], bool], report: Callable[[str], None] | None) -> Thought | None:
        from .online import choose_move, prove
        if self.tablebase is None:
            return None
        begun = time.monotonic()
        try:
            graph, searches = self._searches_for(board)
        except (MissingTableError, PositionError):
            return None
        t0 = time.monotonic()
        if deadline is not None:
            # The first search of a material reads its sub-tables' values: leave the
            # search a part of the time all the same.
            deadline = max(deadline, t0 + 0.25 * (deadline - begun))
        root = graph.start
        player = graph.turn(root)
        max_plies = None if limits.mate is None else 2 * limits.mate - 1
        if limits.depth is not None:
            max_plies = limits.depth if max_plies is None else min(max_plies, limits.depth)
        before = sum(s.nodes for s in searches.values())
        depth = [0]

        def on_depth(plies: int, proof) -> None:
            depth[0] = max(depth[0], plies)
            if report is not None:
                nodes = sum(s.nodes for s in searches.values()) - before
                elapsed = max(time.monotonic() - t0, 1e-6)
                report(f"depth {plies} nodes {nodes} nps {int(nodes / elapsed)} time {int(1000 * elapsed)}")

        def run(g: int, seconds: float | None, nodes: int | None):
            return prove(graph, g, root, max_nodes=nodes, max_seconds=seconds, search=searches[g],
                         shortest=g == player, max_plies=max_plies, stop=stopped, on_depth=on_depth)

        proofs = self._prove_both(graph, player, deadline, limits.nodes, run, stopped, max_plies is not None)
        mine, theirs = proofs[player], proofs[-player]
        choice = choose_move(graph, board, mine, theirs, allowed)
        if choice.move is None:
            return None
        nodes = sum(s.nodes for s in searches.values()) - before
        if choice.kind == "win":
            score = ("mate", (choice.d + 1) // 2)
        elif choice.kind == "loss":
            score = ("mate", -(choice.d // 2))
        elif choice.kind in ("draw", "never-lose"):
            score = ("cp", 0)
        else:
            score = ("cp", _material(board))
        pv = self._search_pv(graph, board, choice, searches, player)
        return Thought(choice.move, score, pv, how=f"search ({choice.kind})", depth=max(depth[0], 1), nodes=nodes)

    def _prove_both(self, graph, player: int, deadline: float | None, nodes: int | None, run, stopped,
                    bounded: bool):
        """Both players' proofs within the time: at once on two threads (``threads`` >= 2
        and no node limit), else in turns with doubling shares, the side to move first.
        ``bounded``: the deepening has a depth bound (``go depth``, ``go mate``), reached
        in one turn each."""
        searches = self._searches[(graph.key, graph.flip)][1]
        if self.threads >= 2 and nodes is None:
            # Paired searches read each other's tables: not while both write them.
            for search in searches.values():
                search.partner = None
            seconds = None if deadline is None else max(0.0, deadline - time.monotonic())
            proofs = {}
            workers = [threading.Thread(target=lambda g=g: proofs.__setitem__(g, run(g, seconds, None)))
                       for g in (player, -player)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            searches[1].pair(searches[-1])
            return proofs
        proofs = {}
        share = 0.125 if deadline is None else max(0.002, (deadline - time.monotonic()) / 8)
        node_share = None if nodes is None else max(1, nodes // 8)
        spent = 0
        while True:
            for g in (player, -player):
                if g in proofs and proofs[g].finished:
                    continue
                left = None if deadline is None else deadline - time.monotonic()
                seconds = share if left is None else max(0.0, min(share, left))
                budget = None if nodes is None else max(0, min(node_share, nodes - spent))
                proofs[g] = run(g, seconds, budget)
                spent += proofs[g].nodes
            done = proofs[player].win or all(p.finished for p in proofs.values())
            out_of_time = deadline is not None and time.monotonic() >= deadline
            if done or out_of_time or stopped() or bounded or (nodes is not None and spent >= nodes):
                return proofs
            share *= 2
            if node_share is not None:
                node_share *= 2

    def _search_pv(self, graph, board: chess.Board, choice, searches, player: int) -> list[chess.Move]:
        """The moves of the proof after ``choice`` while it lasts inside the material: the
        winner's fastest win, the loser's longest defence."""
        from .online.search import successor_moves
        pv = [choice.move]
        if choice.kind not in ("win", "loss"):
            return pv
        winner = player if choice.kind == "win" else -player
        search = searches[winner]
        child = board.copy(stack=False)
        child.push(choice.move)
        vertex = choice.vertex
        keep = graph.start
        try:
            while len(pv) < _PV_PLIES and type(vertex) is int and not graph.is_sink(vertex):
                graph.start = vertex
                pairs = [(m, u) for m, u in successor_moves(graph, child) if search.status(u)]
                if graph.turn(vertex) == winner:
                    if not pairs:
                        break
                    move, vertex = min(pairs, key=lambda p: search.depth(p[1]))
                else:
                    pairs = successor_moves(graph, child)
                    if not all(search.status(u) for _, u in pairs):
                        break
                    move, vertex = max(pairs, key=lambda p: search.depth(p[1]))
                pv.append(move)
                child.push(move)
        finally:
            graph.start = keep
        return pv

    def _fallback(self, board: chess.Board, allowed: list[chess.Move]) -> Thought:
        """A legal move, the best by what the tables say of the position after each move
        (a win for the mover by the fastest mate, a draw, nothing known, a loss by the
        slowest), nothing known ranked by the piece it captures."""
        tb = self.tablebase

        def rank(move: chess.Move) -> tuple[int, int]:
            child = board.copy(stack=False)
            child.push(move)
            wdl = None if tb is None else tb.get_wdl(child)
            if wdl is None:
                captured = board.piece_type_at(move.to_square) if board.is_capture(move) else None
                return 1, _PIECE_CP.get(captured, 0)
            plies = abs(tb.get_dtm(child))
            return {-1: (3, -plies), 0: (2, 0), 1: (0, plies)}[wdl]  # the child's side to move is the opponent

        best = max(allowed, key=rank)
        return Thought(best, ("cp", _material(board)), [best], how="no table or search: a legal move")


class UciEngine:
    """The UCI protocol around an :class:`Engine`: :meth:`handle` one line at a time (the
    caller reads them), answers written to ``out``. A ``go`` starts a search thread;
    :meth:`wait` waits for it to end."""

    def __init__(self, engine: Engine, out: IO[str]) -> None:
        self.engine = engine
        self.out = out
        self.board = chess.Board()
        self.debug = False
        self.quit = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ponderhit = threading.Event()
        self._thread: threading.Thread | None = None

    def send(self, line: str) -> None:
        with self._lock:
            self.out.write(line + "\n")
            self.out.flush()

    def error(self, message: str) -> None:
        self.send(f"info string error: {message}")

    def handle(self, line: str) -> None:
        """Follow one line of input; malformed ones are answered with ``info string``."""
        tokens = line.split()
        # An unknown token is skipped and the rest parsed (UCI: "joho debug on").
        while tokens and tokens[0] not in _COMMANDS:
            tokens.pop(0)
            if not tokens:
                self.error(f"unknown command {line.strip()!r}")
        if not tokens:
            return
        try:
            getattr(self, "cmd_" + tokens[0])(tokens[1:])
        except UciError as e:
            self.error(str(e))
        except Exception as e:  # a bug must not kill a game: say it and go on
            self.error(f"{tokens[0]}: {type(e).__name__}: {e}")

    def cmd_uci(self, args: list[str]) -> None:
        self.send(f"id name {NAME}")
        self.send("id author the tablebase authors")
        self.send(f"option name TablePath type string default {self.engine.tables or '<empty>'}")
        self.send(f"option name Hash type spin default {self.engine.hash_mb} min {HASH_MIN} max {HASH_MAX}")
        self.send(f"option name Threads type spin default {self.engine.threads} min 1 max {THREADS_MAX}")
        self.send("uciok")

    def cmd_debug(self, args: list[str]) -> None:
        self.debug = args[:1] == ["on"]

    def cmd_isready(self, args: list[str]) -> None:
        self.send("readyok")

    def cmd_register(self, args: list[str]) -> None:
        pass  # nothing to register

    def cmd_setoption(self, args: list[str]) -> None:
        if not args or args[0] != "name":
            raise UciError("setoption: expected 'name'")
        at = args.index("value") if "value" in args else len(args)
        name, value = " ".join(args[1:at]), " ".join(args[at + 1:])
        self._join()  # options change between searches
        low = name.lower()  # option names are case-insensitive
        if low == "tablepath":
            found = self.engine.set_tables(value)
            self.send(f"info string TablePath {value or '<empty>'}: {found} tables")
        elif low in ("hash", "threads"):
            try:
                number = int(value)
            except ValueError:
                raise UciError(f"setoption: {name} needs a number, not {value!r}") from None
            lo, hi = (HASH_MIN, HASH_MAX) if low == "hash" else (1, THREADS_MAX)
            if not lo <= number <= hi:
                raise UciError(f"setoption: {name} must be in [{lo}, {hi}], not {number}")
            if low == "hash":
                self.engine.hash_mb = number
                self.engine.new_game()
            else:
                self.engine.threads = number
        else:
            raise UciError(f"setoption: unknown option {name!r} (TablePath, Hash, Threads)")

    def cmd_ucinewgame(self, args: list[str]) -> None:
        self._join()
        self.engine.new_game()

    def cmd_position(self, args: list[str]) -> None:
        self.board = parse_position(args)

    def cmd_go(self, args: list[str]) -> None:
        limits = parse_go(args, self.board)
        self._join()
        self._stop.clear()
        self._ponderhit.clear()
        board = self.board.copy()
        self._thread = threading.Thread(target=self._search, args=(board, limits), name="search", daemon=True)
        self._thread.start()

    def cmd_stop(self, args: list[str]) -> None:
        self._stop.set()
        self._join()

    def cmd_ponderhit(self, args: list[str]) -> None:
        self._ponderhit.set()

    def cmd_quit(self, args: list[str]) -> None:
        self._stop.set()
        self._join()
        self.quit = True

    def _join(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None

    def wait(self) -> None:
        """Wait for the search thread (if any) to send its ``bestmove``."""
        if self._thread is not None:
            self._thread.join()

    def _search(self, board: chess.Board, limits: Limits) -> None:
        t0 = time.monotonic()
        try:
            if limits.ponder:
                # Think until ponderhit (then on the clock given) or stop.
                self.engine.think(board, Limits(infinite=True, searchmoves=limits.searchmoves), self._ponder_stop(),
                                  self._info)
                if self._ponderhit.is_set() and not self._stop.is_set():
                    limits.ponder = False
                    thought = self.engine.think(board, limits, self._stop, self._info)
                else:
                    thought = self.engine.think(board, Limits(movetime=0, searchmoves=limits.searchmoves))
            else:
                thought = self.engine.think(board, limits, self._stop, self._info)
        except Exception as e:  # never no move: say what broke, play a legal one
            self.error(f"go: {type(e).__name__}: {e}")
            legal = list(board.legal_moves)
            thought = Thought(legal[0] if legal else None, ("cp", 0), legal[:1], how="error")
        elapsed = max(time.monotonic() - t0, 1e-6)
        kind, value = thought.score
        pv = " ".join(m.uci() for m in thought.pv)
        self.send(f"info depth {thought.depth} nodes {thought.nodes} nps {int(thought.nodes / elapsed)} "
                  f"time {int(1000 * elapsed)} score {kind} {value}" + (f" pv {pv}" if pv else ""))
        self.send(f"info string {thought.how}")
        if limits.infinite:
            self._stop.wait()  # UCI: no bestmove before stop in infinite mode
        self.send(f"bestmove {thought.move.uci() if thought.move is not None else '(none)'}")

    def _ponder_stop(self) -> threading.Event:
        """An event set by stop or by ponderhit: what ends pondering."""
        event = threading.Event()

        def watch() -> None:
            while not (self._stop.is_set() or self._ponderhit.is_set()):
                self._stop.wait(0.005)
            event.set()

        threading.Thread(target=watch, daemon=True).start()
        return event

    def _info(self, line: str) -> None:
        self.send("info " + line)


_COMMANDS = frozenset(name[4:] for name in dir(UciEngine) if name.startswith("cmd_"))


def main(tables: str | os.PathLike | None = "data/tables", hash_mb: int = HASH_MB, threads: int = THREADS,
         stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Run the engine on ``stdin``/``stdout`` until ``quit`` or the end of input."""
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    engine = Engine(None, hash_mb, threads)
    uci = UciEngine(engine, stdout)
    if tables is not None and Path(tables).is_dir():
        engine.set_tables(tables)
    for line in stdin:
        uci.handle(line)
        if uci.quit:
            break
    uci.cmd_quit([])
    return 0
