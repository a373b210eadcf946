"""Games: ``tablebase uci`` against Stockfish from random legal endgame positions.

    python -m benchmarks.games [--tables DIR] [--games N] [--movetime S] [--seed S]
                               [--materials KQvKR,...] [--max-plies N] [--stockfish PATH]

Both engines are driven through python-chess's ``chess.engine`` (the UCI client), each
thinking ``--movetime`` seconds a move. From each random legal start (seeded, uniform
over the table's legal positions, drawn with either colour to move) two games are
played, the engine taking the side to move in one and the other side in the other.
5-piece materials are played twice more over: with the start's own table loaded, and
with only the 3-4 piece tables loaded, so that the engine has to search (WinTree with
table leaves) until a capture brings the game into its tables.

A game ends only by checkmate, stalemate, insufficient material, threefold repetition
or ``--max-plies`` (Romano's game ignores the 50-move rule, and a won DTM game may take
more than 50 moves without a capture); games that reach the cap are counted as draws
and listed. The tables' verdict of each start, from the engine's side, splits the
results: the engine must never lose a start the tables do not score as lost, and must
win every start they score as won when the start's table is loaded; the script exits 1
when either fails.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine
import numpy as np

from tablebase.endgame.material import Material
from tablebase.endgame.pychess import index_board
from tablebase.online import sample_positions
from tablebase.probe import open_tablebase

ROOT = Path(__file__).resolve().parents[1]
MATERIALS = ("KQvKR", "KRvKP", "KQvKP", "KPvKP", "KQRvKR", "KRRvKR")
VERDICTS = ("win", "draw", "loss")


def find_stockfish(given: str | None = None) -> str | None:
    """The Stockfish executable: ``given``, else on PATH, else Debian's /usr/games/stockfish."""
    if given:
        return given
    return shutil.which("stockfish") or shutil.which("stockfish", path="/usr/games")


def engine_command(tables: Path) -> list[str]:
    """The command that starts this project's UCI engine on ``tables``."""
    return [sys.executable, "-m", "tablebase.cli", "uci", "--tables", str(tables)]


def small_tables(tables: Path, folder: Path) -> Path:
    """A folder that holds only the 3-4 piece tables of ``tables`` (links to them)."""
    for entry in sorted(tables.iterdir()):
        if (entry / "manifest.json").is_file() and len(Material.parse(entry.name).pieces()) <= 4:
            (folder / entry.name).symlink_to(entry.resolve())
    return folder


@dataclass
class Game:
    """One game: the start, the engine's colour, the tables' verdict of the start for the
    engine, the result for the engine (``win``/``draw``/``loss``), why it ended, plies."""

    material: str
    tables: str
    fen: str
    engine_white: bool
    verdict: str
    result: str
    ending: str
    plies: int


def starts(tb, material: str, count: int, seed: int) -> list[chess.Board]:
    """``count`` random legal positions of ``material`` that are not over, real colours
    drawn at random (the table's White is White or Black)."""
    rng = np.random.default_rng(seed)
    boards = []
    for stm, idx in sample_positions(tb, material, 4 * count + 8, seed):
        board = index_board(material, stm, idx)
        if rng.integers(0, 2):
            board = board.mirror()
        if board.is_valid() and not board.is_game_over(claim_draw=False) and not board.is_insufficient_material():
            boards.append(board)
        if len(boards) == count:
            break
    return boards


def play(engine: chess.engine.SimpleEngine, stockfish: chess.engine.SimpleEngine, start: chess.Board,
         engine_white: bool, movetime: float, max_plies: int) -> tuple[str, str, int]:
    """Play one game; (result for the engine, ending, plies)."""
    board = start.copy()
    limit = chess.engine.Limit(time=movetime)
    plies = 0
    game = object()  # a new game for both engines (python-chess sends ucinewgame)
    while True:
        if board.is_checkmate():
            engine_won = (board.turn == chess.BLACK) == engine_white
            return ("win" if engine_won else "loss"), "checkmate", plies
        if board.is_stalemate():
            return "draw", "stalemate", plies
        if board.is_insufficient_material():
            return "draw", "insufficient material", plies
        if board.is_repetition(3):
            return "draw", "threefold repetition", plies
        if plies >= max_plies:
            return "draw", "move cap", plies
        ours = (board.turn == chess.WHITE) == engine_white
        result = (engine if ours else stockfish).play(board, limit, game=game)
        if result.move is None or result.move not in board.legal_moves:
            raise RuntimeError(f"{'engine' if ours else 'stockfish'} gave no legal move in {board.fen()}: {result}")
        board.push(result.move)
        plies += 1


def verdict(tb, board: chess.Board, engine_white: bool) -> str:
    """The tables' value of the start for the engine."""
    value = tb.probe_eval(board) * (1 if engine_white else -1)
    return {1: "win", 0: "draw", -1: "loss"}[value]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=Path, default=ROOT / "data" / "tables",
                        help="every 3-4 piece table and the 5-piece ones played (default data/tables)")
    parser.add_argument("--games", type=int, default=10, help="random starts per material and tables (default 10)")
    parser.add_argument("--movetime", type=float, default=0.1, help="seconds a move, both engines (default 0.1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--materials", default=",".join(MATERIALS), help=f"default {','.join(MATERIALS)}")
    parser.add_argument("--max-plies", type=int, default=400, help="the move cap, in plies (default 400)")
    parser.add_argument("--stockfish", help="the Stockfish executable (default: on PATH or /usr/games/stockfish)")
    args = parser.parse_args()
    stockfish_path = find_stockfish(args.stockfish)
    if stockfish_path is None:
        print("stockfish not found: install it (apt-get install stockfish) or pass --stockfish", file=sys.stderr)
        return 2
    materials = [Material.parse(m).key for m in args.materials.split(",") if m]
    games: list[Game] = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, open_tablebase(args.tables) as tb:
        configs = [("own table", args.tables)]
        if any(len(Material.parse(m).pieces()) == 5 for m in materials):
            configs.append(("3-4 pieces", small_tables(args.tables, Path(tmp))))
        stockfish = chess.engine.SimpleEngine.popen_uci(stockfish_path)
        stockfish.configure({"Threads": 1, "Hash": 16})
        try:
            for name, folder in configs:
                engine = chess.engine.SimpleEngine.popen_uci(engine_command(folder), timeout=120)
                try:
                    for material in materials:
                        if name != "own table" and len(Material.parse(material).pieces()) != 5:
                            continue
                        for k, start in enumerate(starts(tb, material, args.games, args.seed)):
                            for engine_white in (start.turn == chess.WHITE, start.turn != chess.WHITE):
                                result, ending, plies = play(engine, stockfish, start, engine_white, args.movetime,
                                                             args.max_plies)
                                game = Game(material, name, start.fen(), engine_white,
                                            verdict(tb, start, engine_white), result, ending, plies)
                                games.append(game)
                                print(f"{material:7} {name:10} {'white' if engine_white else 'black':5} "
                                      f"{game.verdict:4} -> {result:4} ({ending}, {plies} plies)  {game.fen}",
                                      flush=True)
                finally:
                    engine.quit()
        finally:
            stockfish.quit()
    return report(games, time.perf_counter() - t0)


def report(games: list[Game], seconds: float) -> int:
    """Print wins / draws / losses per material and tables, by verdict; 1 on a failure."""
    print(f"\n{len(games)} games in {seconds:.0f} s; results for the engine, by the tables' verdict of the start")
    print(f"{'material':8} {'tables':10} {'verdict':7} {'games':>5} {'wins':>5} {'draws':>5} {'losses':>6}")
    keys = sorted({(g.material, g.tables) for g in games}, key=lambda k: (len(k[0]), k[0], k[1]))
    for material, tables in keys:
        for v in VERDICTS:
            sel = [g for g in games if (g.material, g.tables, g.verdict) == (material, tables, v)]
            if sel:
                c = Counter(g.result for g in sel)
                print(f"{material:8} {tables:10} {v:7} {len(sel):5d} {c['win']:5d} {c['draw']:5d} {c['loss']:6d}")
    bad_losses = [g for g in games if g.result == "loss" and g.verdict != "loss"]
    unwon = [g for g in games if g.verdict == "win" and g.tables == "own table" and g.result != "win"]
    capped = [g for g in games if g.ending == "move cap"]
    print(f"losses from starts not scored lost: {len(bad_losses)}")
    print(f"starts scored won, own table loaded, not won: {len(unwon)}")
    print(f"games that reached the move cap: {len(capped)}")
    for g in bad_losses + unwon + capped:
        print(f"  {g.material} {g.tables} engine {'white' if g.engine_white else 'black'} {g.verdict} -> "
              f"{g.result} ({g.ending}, {g.plies} plies): {g.fen}")
    return 1 if bad_losses or unwon else 0


if __name__ == "__main__":
    sys.exit(main())
