"""The ``tablebase`` command.

    tablebase generate [MATERIAL...] [--config FILE] [--out DIR] [--workers N] [--local] [--no-dtz] [--dry-run [--json]]
    tablebase verify [MATERIAL...] [--tables DIR] [--workers N]
    tablebase info [MATERIAL...] [--tables DIR] [--sizes] [--stats MATERIAL [--plot FILE.png]] [--json]
    tablebase probe FEN [--tables DIR] [--json]
    tablebase serve [--tables DIR] [--host HOST] [--port PORT] [--workers N] [--cache-mb MB] [--preload]
    tablebase solve FEN [--tables DIR] [--max-nodes N] [--max-seconds S] [--order ORDER] [--no-deepen] [--json]
    tablebase crosscheck MATERIAL [--tables DIR] [--samples N] [--seed S] [--max-nodes N] [--order ORDER] [--workers N]
    tablebase uci [--tables DIR] [--hash MB] [--threads N]

``--tables`` takes one folder or several separated by ``os.pathsep`` (``:``); without it
the folders of the ``TABLEBASE_PATH`` environment variable, else ``data/tables``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .config import JobConfig
from .errors import ConfigError, TablebaseError

if TYPE_CHECKING:
    from .plan import JobProgress

DEFAULT_CONFIG = Path("configs/default.toml")


class ProgressDisplay:
    """Progress of a table (a :class:`~tablebase.generate.pipeline.Progress`: the ply, the
    positions resolved and the rate during the passes, the slices or shards done during the
    other stages): one live line on a terminal, a line every ``every`` seconds in a log; a
    summary line per finished table. With ``job``, the progress lines end with, and each
    table's line is followed by, where the whole run stands (tables, positions, ETA)."""

    def __init__(self, stream=None, every: float = 10.0, job: "JobProgress | None" = None):
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.every = every
        self.last = time.perf_counter()
        self.job = job

    def ply(self, key: str, ply: int, decided: int, total: int, legal: int, seconds: float) -> None:
        if self._due():
            rate = total / seconds if seconds > 0 else 0.0
            self._show(key, f"ply {ply:4d}  +{decided:<10,d} resolved {total:>13,d} of {legal:,d}  "
                            f"{rate / 1e6:6.2f} M/s", total / legal if legal else 0.0)

    def stage(self, key: str, text: str) -> None:
        if self._due():
            self._show(key, text, 0.0)

    def _due(self) -> bool:
        now = time.perf_counter()
        if not self.live and now - self.last < self.every:
            return False
        self.last = now
        return True

    def _show(self, key: str, text: str, fraction: float) -> None:
        line = f"{key:10} {text}"
        if self.job is not None:
            line += f"  ({self.job.text(key, fraction)})"
        self.stream.write(f"\r{line} " if self.live else line + "\n")
        self.stream.flush()

    def table(self, stats) -> None:
        if self.live:
            self.stream.write("\r" + " " * 100 + "\r")
        c = stats.counts
        if stats.skipped:
            what = "complete, skipped"
        else:
            what = (f"{stats.seconds:7.1f} s ({stats.pass_seconds:.1f} s passes, {stats.init_seconds:.1f} s init, "
                    f"{stats.write_seconds:.1f} s writing), {stats.plies} plies")
            what += f", peak {stats.worker_peak_bytes / 1e9:.2f} GB per worker"
            if stats.partitions > 1:
                what += (f", {stats.partitions} partitions on {stats.nodes} node{'s' * (stats.nodes > 1)}, "
                         f"{stats.node_peak_bytes / 1e9:.2f} GB per node")
            if stats.resumed_from:
                what += f", resumed from ply {stats.resumed_from}"
            if stats.restarts:
                what += f", {stats.restarts} restart{'s' * (stats.restarts > 1)}"
            if stats.has_dtz:
                what += f", DTZ {stats.dtz_seconds:.1f} s in {stats.dtz_passes} pass{'es' * (stats.dtz_passes > 1)}"
        self.stream.write(f"{stats.material:10} {what:42}  longest DTM {stats.longest_dtm:4d} DTZ "
                          f"{_dtz_text(stats.has_dtz, stats.longest_dtz)}  {stats.bytes / 1e6:7.2f} MB  "
                          f"{counts_text(c, stats.has_dtz)}\n")
        if self.job is not None and not stats.skipped:
            self.job.table_done(stats.material)
            self.stream.write(f"{self.job.text()}\n")
        self.stream.flush()


def counts_text(c: dict, has_dtz: bool = True) -> str:
    """Wins (cursed ones among them), draws and losses (blessed ones) per side to move
    (without the 50-move rule's values: no cursed or blessed counts)."""
    if not has_dtz:
        return "  ".join(f"{side}: +{c[side]['wins']:,} ={c[side]['draws']:,} -{c[side]['losses']:,}"
                         for side in ("w", "b"))
    return "  ".join(f"{side}: +{c[side]['wins']:,} (cursed {c[side]['cursed_wins']:,}) ={c[side]['draws']:,} "
                     f"-{c[side]['losses']:,} (blessed {c[side]['blessed_losses']:,})" for side in ("w", "b"))


def _dtz_text(has_dtz: bool, longest: int) -> str:
    return f"{longest:4d}" if has_dtz else "   -"


def _config_from_args(args) -> JobConfig:
    if args.config is not None:
        cfg = JobConfig.load(args.config)
    elif not args.materials and DEFAULT_CONFIG.exists():
        cfg = JobConfig.load(DEFAULT_CONFIG)
    else:
        cfg = JobConfig()
    if args.materials:
        cfg.materials = JobConfig.from_dict({"materials": args.materials}, "command line").materials
        cfg.pieces = []
    if args.out is not None:
        cfg.out = args.out
    if args.workers is not None:
        cfg.workers = JobConfig.from_dict({"workers": args.workers}, "--workers").workers
    if args.local:
        cfg.executor = "local"
    if not args.dtz:
        cfg.dtz = False
    if args.address is not None:
        cfg.address = args.address
    if not cfg.tables():
        raise ConfigError("nothing to generate: name materials or give a config with 'materials' or 'pieces'")
    return cfg


def _log_to_stderr() -> None:
    """Show the generator's own messages (resumed from a checkpoint, a lost partition)."""
    logger = logging.getLogger("tablebase")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def cmd_generate(args) -> int:
    from .plan import JobProgress, plan_job
    cfg = _config_from_args(args)
    plan = plan_job(cfg)
    if args.dry_run:
        print(json.dumps(plan.as_dict(), indent=1) if args.json else plan.text())
        return 0
    _log_to_stderr()
    display = ProgressDisplay(job=JobProgress(plan))
    cfg.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    from .errors import GenerationError
    try:
        results = _run_generate(cfg, display)
    except GenerationError as e:
        print(f"tablebase: error: {e}\ncomplete tables and checkpoints are kept: re-run to resume", file=sys.stderr)
        return 1
    made = [r for r in results if not r.skipped]
    total_bytes = sum(r.bytes for r in results)
    print(f"{len(results)} tables in {cfg.out} ({len(made)} generated, {len(results) - len(made)} already complete), "
          f"{total_bytes / 1e6:.1f} MB on disk, {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


def _run_generate(cfg: JobConfig, display: ProgressDisplay) -> list:
    if cfg.executor == "local":
        from .generate.pipeline import generate
        return generate(cfg.tables(), cfg.out, progress=display, on_table=display.table, config=cfg.as_dict(),
                        checkpoint_seconds=cfg.checkpoint_seconds, dtz=cfg.dtz)
    import ray

    from .distributed import generate_on_ray
    if cfg.address:
        ray.init(address=cfg.address, log_to_driver=True)
    else:
        # address="local": a new instance even where `ray start` left one running here.
        ray.init(address="local", num_cpus=cfg.cpus(), include_dashboard=False, log_to_driver=True)
    try:
        workers = cfg.workers or int(ray.cluster_resources().get("CPU", 1))
        return generate_on_ray(cfg.tables(), cfg.out, workers=workers, progress=display, on_table=display.table,
                               config=cfg.as_dict(), split_above=cfg.split_above,
                               checkpoint_seconds=cfg.checkpoint_seconds, dtz=cfg.dtz)
    finally:
        ray.shutdown()


def _folders(text: str | None) -> list[Path]:
    """The folders of ``--tables`` (several separated by os.pathsep), else TABLEBASE_PATH's,
    else data/tables; a missing folder is an error naming it."""
    from .probe import require_folder, table_folders
    return [require_folder(f) for f in table_folders(None if text is None else
                                                     [p for p in text.split(os.pathsep) if p])]


def _tables_in(folders: list[Path], materials: list[str]) -> list[tuple[Path, str]]:
    """(folder, material) of each table named, or of every table in the folders; a named
    material is read from the first folder holding it (the first folder if none does)."""
    from .endgame.material import normalize_key
    if materials:
        found = []
        for key in (normalize_key(m) for m in materials):
            found.append((next((f for f in folders if (f / key).is_dir()), folders[0]), key))
        return found
    from .store import is_table_folder
    seen: dict[str, Path] = {}
    for folder in folders:
        for p in folder.iterdir():
            if is_table_folder(p):
                seen.setdefault(p.name, folder)
    return [(seen[k], k) for k in sorted(seen, key=lambda k: (len(k), k))]


def cmd_verify(args) -> int:
    from .generate.verify import verify_table
    folders = _folders(args.tables)
    keys = _tables_in(folders, args.materials)
    if not keys:
        print(f"no tables found in {', '.join(map(str, folders))}", file=sys.stderr)
        return 1
    failed = 0
    for r in _map_tables(verify_table, keys, args.workers):
        key = r.material
        if r.ok:
            what = "DTM and DTZ" if r.has_dtz else "DTM; no DTZ held"
            print(f"{key:10} OK      {r.positions:>12,d} positions re-checked ({what}) in {r.seconds:.1f} s")
        else:
            failed += 1
            detail = r.error or (f"{r.mismatches} DTM and {r.dtz_mismatches} DTZ values disagree with their "
                                 f"successors, e.g. {r.examples}")
            print(f"{key:10} FAILED  {detail}")
    return 1 if failed else 0


def _map_tables(func, keys: list[tuple[Path, str]], workers: int):
    """``func(folder, key)`` of each table, in the order given: in this process for one
    worker, else in a pool of ``workers`` processes (0: one per CPU), a table each."""
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(keys) == 1:
        yield from (func(folder, key) for folder, key in keys)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    # spawn, not fork: a forked child of a process that has run numba's threads may hang.
    with ProcessPoolExecutor(min(workers, len(keys)), mp_context=multiprocessing.get_context("spawn")) as pool:
        yield from pool.map(func, *zip(*keys))


def cmd_info(args) -> int:
    from .endgame.index import IndexScheme
    from .store import read_manifest
    if args.sizes:
        from .endgame.material import all_materials
        sizes = [{"material": key, "king_pairs": s.num_king_pairs, "per_king_pair": s.positions_per_king_pair,
                  "index_size": s.size, "slices": s.num_slices}
                 for n in range(2, 6) for key in all_materials(n) for s in [IndexScheme.of(key)]]
        if args.json:
            print(json.dumps(sizes, indent=1))
            return 0
        print(f"{'material':10} {'king pairs':>10} {'per pair':>10} {'index size':>14} {'slices':>6}")
        for r in sizes:
            print(f"{r['material']:10} {r['king_pairs']:10d} {r['per_king_pair']:10d} {r['index_size']:14,d} "
                  f"{r['slices']:6d}")
        return 0
    if args.stats:
        return _info_stats(args)
    if args.plot:
        raise ValueError("--plot draws the DTM distribution of --stats MATERIAL: give --stats too")
    rows = []
    for folder, key in _tables_in(_folders(args.tables), args.materials):
        m = read_manifest(folder / key)
        if m is None:
            rows.append({"material": key, "complete": False})
            continue
        rows.append({"material": key, "complete": True, "index_size": m.index_size, "counts": m.counts(),
                     "longest_dtm": m.longest_dtm, "longest_dtz": m.longest_dtz, "metrics": m.metrics,
                     "bytes": m.total_bytes, "shards": len(m.shards)})
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    total = 0
    for r in rows:
        if not r["complete"]:
            print(f"{r['material']:10} incomplete (no manifest)")
            continue
        total += r["bytes"]
        c = r["counts"]
        legal = sum(v["wins"] + v["draws"] + v["losses"] for v in c.values())
        has_dtz = "dtz" in r["metrics"]
        print(f"{r['material']:10} {legal:>12,d} positions  longest DTM {r['longest_dtm']:4d} DTZ "
              f"{_dtz_text(has_dtz, r['longest_dtz'])}  {counts_text(c, has_dtz)}  "
              f"{r['bytes']:>12,d} bytes  {8 * r['bytes'] / max(1, 2 * r['index_size']):.2f} bits/index")
    print(f"total {total:,d} bytes in {len(rows)} tables")
    return 0


def _info_stats(args) -> int:
    from .probe import open_tablebase
    from .stats import material_stats, plot_distribution
    with open_tablebase(_folders(args.tables)) as tablebase:
        stats = material_stats(tablebase, args.stats)
    if args.plot:
        plot_distribution(stats, args.plot)
    if args.json:
        print(json.dumps(stats.as_dict(), indent=1))
    else:
        print(stats.text())
    if args.plot:
        print(f"DTM distribution drawn in {args.plot}", file=sys.stderr)
    return 0


def plies_text(dtm: int | None) -> str:
    """DTM with its units, from the side to move: "mate in 9, 17 plies" when it wins,
    "mated in 8, 16 plies" when it loses, "" for a draw or no value.

    >>> plies_text(69), plies_text(-68), plies_text(0)
    ('mate in 35, 69 plies', 'mated in 34, 68 plies', '')
    """
    if not dtm:
        return ""
    n = abs(dtm)
    return f"{'mate' if dtm > 0 else 'mated'} in {(n + 1) // 2}, {n} {'ply' if n == 1 else 'plies'}"


def _parse_fen(fen: str):
    """The board of ``fen`` (``_`` may stand for spaces, as in Lichess URLs); a bad FEN is a
    :class:`~tablebase.errors.BadFenError` naming it."""
    import chess

    from .errors import BadFenError
    try:
        return chess.Board(fen.replace("_", " "))
    except ValueError as e:
        raise BadFenError(f"bad FEN {fen!r}: {e}") from e


def cmd_probe(args) -> int:
    from .endgame.material import board_material
    from .lichess import negate, probe_json
    from .probe import open_tablebase
    board = _parse_fen(args.fen)
    with open_tablebase(_folders(args.tables)) as tablebase:
        tablebase.probe_dtm(board)  # raises for a board no table answers
        reply = probe_json(tablebase, board)
        moves = {m.move.uci(): m for m in tablebase.probe_moves(board)}
        result = reply["category"]
        if reply["dtz"] is None and result == "unknown":  # a table without DTZ: Romano's eval alone
            result = f"{_RESULT[tablebase.probe_wdl(board)]} (no DTZ in this table: the clock not counted)"
    if args.json:  # lila-tablebase's JSON: each move describes the position after it
        print(json.dumps(reply, indent=1))
        return 0
    side = "White" if board.turn else "Black"  # chess.WHITE is True
    what = "checkmated" if reply["checkmate"] else "stalemate" if reply["stalemate"] else plies_text(reply["dtm"])
    clock = f" (halfmove clock {board.halfmove_clock})" if board.halfmove_clock else ""
    print(f"{board.fen()}  {board_material(board)[0]}, {side} to move: {result}{clock}"
          + (f", {what}" if what else "") + (f", DTZ {reply['dtz']}" if reply["dtz"] and not reply["checkmate"] else ""))
    if reply["moves"]:
        print(f"{'move':8} {'result for ' + side:17} {'DTZ':>4}  DTM")
        for m in reply["moves"]:
            # The mover's result: the position after the move, seen from the other side.
            dtm = m["dtm"]
            mover = None if dtm is None else -dtm + (1 if dtm < 0 else -1 if dtm > 0 else 0)
            mark = "checkmate" if m["checkmate"] else "stalemate" if m["stalemate"] else plies_text(mover)
            mv = moves[m["uci"]]
            result = negate(m["category"]) if mv.category is not None else _RESULT[mv.wdl]
            print(f"{m['san']:8} {result:17} {'-' if mv.dtz is None else mv.dtz:>4}  {mark}")
    return 0


_RESULT = {1: "win", 0: "draw", -1: "loss"}


def cmd_serve(args) -> int:
    try:
        from .server import serve
    except ImportError as e:
        raise TablebaseError(f"tablebase serve needs the serve extra ({e.name} is missing): "
                             "pip install 'tablebase[serve]'") from e
    serve(_folders(args.tables), host=args.host, port=args.port, workers=args.workers,
          table_cache_bytes=args.cache_mb << 20, preload_tables=args.preload)
    return 0


def _side_name(g: int) -> str:
    return "White" if g == 1 else "Black"


#: How ``solve`` names each kind of recommended move (see tablebase.online.CHOICES).
_CHOICE_WORDS = {
    "win": "winning move (keeps the win proved, the smallest d known)",
    "draw": "drawing move (keeps the draw proved)",
    "never-lose": "never-lose move (Thm 4.8: the opponent is proved not to win after it; the own win is not proved)",
    "unproven": "no move proved not to lose within the budget; the move known best",
    "loss": "every move loses (proved); the longest resistance",
}


def cmd_solve(args) -> int:
    from .online import solve
    from .probe import MissingTableError, open_tablebase
    board = _parse_fen(args.fen)
    try:
        with open_tablebase(_folders(args.tables)) as tablebase:
            s = solve(tablebase, board, order=args.order, max_nodes=args.max_nodes, max_seconds=args.max_seconds,
                      deepen=args.deepen, engine=args.engine)
            table = tablebase.get_wdl(board)
            choice = s.choice
            after = None
            if choice.move is not None:
                child = board.copy(stack=False)
                child.push(choice.move)
                after = (tablebase.get_wdl(child), tablebase.get_dtm(child))
    except MissingTableError as e:  # a KeyError, which main() leaves alone
        print(f"tablebase: error: {e}", file=sys.stderr)
        return 2
    sides = [{"g": p.g, "side": _side_name(p.g).lower(), "win": p.win, "d": p.d, "finished": p.finished,
              "deepening_plies": p.plies, "nodes": p.nodes, "seconds": round(p.seconds, 3)} for p in s.sides]
    result = {"fen": board.fen(), "material": s.material, "order": args.order, "engine": args.engine,
              "max_nodes": args.max_nodes, "sides": sides,
              "move": None if choice.move is None else choice.move.uci(), "move_kind": choice.kind,
              "move_d": choice.d,
              "winning_move": None if s.winning_move is None else s.winning_move.uci(),
              "never_lose_move": None if s.never_lose is None else s.never_lose.uci(),
              "never_lose_finished": s.never_lose_finished, "never_lose_nodes": s.never_lose_nodes,
              # The searched material's own table is never used by the search; shown when present.
              "table_wdl": table,
              "table_after_move": None if after is None or after[0] is None else {"wdl": -after[0], "dtm": after[1]}}
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{board.fen()}  {s.material}, {_side_name(s.sides[0].g)} to move")
    for p in s.sides:
        if p.win:
            how = f"WIN proved, d = {p.d} plies (>= DTM)" + (f", by deepening to {p.plies} plies" if p.plies else "")
        elif p.win is False:
            how = "no win (proved)"
        else:
            how = "unknown: the budget ran out"
        print(f"  {_side_name(p.g):5}: {how:55} {p.nodes:>10,d} nodes {p.seconds:8.2f} s")
    if choice.move is None:
        print("  no move: the side to move is mated or stalemated")
    else:
        d = f", d = {choice.d} plies" if choice.d is not None else ""
        print(f"  {_CHOICE_WORDS[choice.kind]}: {board.san(choice.move)} ({choice.move.uci()}){d}")
    if table is not None:
        print(f"  the table of {s.material} (not used by the search) says: wdl {table:+d} for the side to move"
              + ("" if after is None or after[0] is None else
                 f"; after {choice.move.uci()}: wdl {-after[0]:+d} for the mover, dtm {after[1]}"))
    return 0


def cmd_crosscheck(args) -> int:
    from .online import crosscheck
    from .probe import MissingTableError, open_tablebase
    if args.samples < 1:
        raise ValueError(f"--samples must be >= 1, not {args.samples}")

    def progress(i, report):
        if (i + 1) % 25 == 0:
            print(f"  {i + 1} positions: agreed {report.agreed}, disagreed {report.disagreed}, "
                  f"unfinished {report.unfinished}, {report.seconds:.0f} s", file=sys.stderr, flush=True)

    try:
        with open_tablebase(_folders(args.tables)) as tablebase:
            report = crosscheck(tablebase, args.material, samples=args.samples, seed=args.seed, order=args.order,
                                max_nodes=args.max_nodes, max_seconds=args.max_seconds, deepen=args.deepen,
                                progress=progress, engine=args.engine, workers=args.workers)
    except MissingTableError as e:
        print(f"tablebase: error: {e}", file=sys.stderr)
        return 2
    print(report.summary())
    return 0 if report.ok else 1


def cmd_uci(args) -> int:
    from .uci import HASH_MB, THREADS, main as uci_main
    if args.tables_given and not args.tables.is_dir():
        print(f"tablebase: error: --tables {args.tables}: no such folder", file=sys.stderr)
        return 2
    return uci_main(args.tables, hash_mb=args.hash or HASH_MB, threads=args.threads or THREADS)


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, not {value}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, not {value}")
    return value


def _tables_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tables", metavar="DIR", help=f"folder of tables, or several separated by '{os.pathsep}' "
                                                        "(default: $TABLEBASE_PATH, else data/tables)")


def _search_options(parser: argparse.ArgumentParser, max_nodes: int) -> None:
    from .online import ENGINES, ORDERS
    _tables_option(parser)
    parser.add_argument("--max-nodes", type=_positive_int, default=max_nodes,
                        help=f"node budget of each search (default {max_nodes:,d})")
    parser.add_argument("--max-seconds", type=float, help="time budget of each search (default: none)")
    parser.add_argument("--order", choices=ORDERS, default="heuristic", help="move ordering (default: heuristic)")
    parser.add_argument("--no-deepen", dest="deepen", action="store_false",
                        help="plain WinTree only, without iterative deepening after it")
    parser.add_argument("--engine", choices=ENGINES, default="compiled",
                        help="the compiled search (default) or its Python twin")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tablebase", description="Chess endgame tablebases: exact WDL and DTM.")
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("generate", help="generate tables (and the sub-tables they need)")
    g.add_argument("materials", nargs="*", help="material keys like KQvKR (default: the config's tables)")
    g.add_argument("--config", type=Path, help=f"TOML job config (default: {DEFAULT_CONFIG} when no material is named)")
    g.add_argument("--out", type=Path, help="output folder (default: the config's, else data/tables)")
    g.add_argument("--workers", type=int, help="CPUs to use (default: the config's, 0 = all)")
    g.add_argument("--local", action="store_true", help="run in this process, without Ray")
    g.add_argument("--address", help="Ray cluster address (default: start Ray locally)")
    g.add_argument("--no-dtz", dest="dtz", action="store_false",
                   help="WDL and DTM only, without the 50-move rule's WDL50 and DTZ (about 40%% fewer bytes, 25-40%% "
                        "less time); a later run without it adds them")
    g.add_argument("--dry-run", action="store_true", help="print the tables, positions, peak memory per worker, "
                                                          "disk and time the run would take, and run nothing")
    g.add_argument("--json", action="store_true", help="with --dry-run: the plan as JSON")
    g.set_defaults(func=cmd_generate)

    v = sub.add_parser("verify", help="check checksums and re-check every position from its successors")
    v.add_argument("materials", nargs="*")
    _tables_option(v)
    v.add_argument("--workers", type=_non_negative_int, default=1,
                   help="tables verified at once, each in its own process (default 1; 0: one per CPU); each "
                        "holds a table and the sub-tables it reads")
    v.set_defaults(func=cmd_verify)

    i = sub.add_parser("info", help="what the tables folder holds; --sizes: index size of every 2-5 piece table")
    i.add_argument("materials", nargs="*")
    _tables_option(i)
    i.add_argument("--sizes", action="store_true")
    i.add_argument("--stats", metavar="MATERIAL", help="positions per side, the longest win and its FEN, the DTM "
                                                       "distribution of one table")
    i.add_argument("--plot", metavar="FILE.png", help="with --stats: draw the DTM distribution (needs matplotlib: "
                                                      "pip install 'tablebase[plot]')")
    i.add_argument("--json", action="store_true")
    i.set_defaults(func=cmd_info)

    p = sub.add_parser("probe", help="value and DTM of a position and of each of its moves (moves: the mover's "
                                     "result, best first)")
    p.add_argument("fen", help="the position, e.g. '8/8/8/8/8/8/8/K2kr3 w - - 0 1'")
    _tables_option(p)
    p.add_argument("--json", action="store_true", help="lila-tablebase's JSON (each move describes the position "
                                                       "after it)")
    p.set_defaults(func=cmd_probe)

    w = sub.add_parser("serve", help="an HTTP server answering like tablebase.lichess.ovh (/standard?fen=..., "
                                     "/standard/mainline?fen=...) with a page at /")
    _tables_option(w)
    w.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    w.add_argument("--port", type=int, default=9000, help="port (default 9000, as lila-tablebase)")
    w.add_argument("--workers", type=_positive_int, default=1, help="server processes sharing the port (default 1)")
    w.add_argument("--cache-mb", type=_positive_int, default=1024,
                   help="MB of decoded table values each process keeps (default 1024)")
    w.add_argument("--preload", action="store_true", help="decode the tables into that cache before serving, "
                                                           "smallest first, as many as fit")
    w.set_defaults(func=cmd_serve)

    s = sub.add_parser("solve", help="Romano's WinTree from a position, with the tables answering captures and "
                                     "promotions: wins, depth bound, a never-lose move")
    s.add_argument("fen", help="the position; its own material's table is not used")
    _search_options(s, 1_000_000)
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_solve)

    c = sub.add_parser("crosscheck", help="WinTree with a material's own table hidden, checked against that table")
    c.add_argument("material", help="a material whose table exists, e.g. KQvKR")
    c.add_argument("--samples", type=int, default=100, help="random legal positions (default 100)")
    c.add_argument("--seed", type=int, default=0)
    _search_options(c, 100_000)
    c.add_argument("--workers", type=_non_negative_int, default=0,
                   help="processes that share the positions out (default 0: one per CPU); the report does not "
                        "depend on it")
    c.set_defaults(func=cmd_crosscheck)

    u = sub.add_parser("uci", help="a UCI chess engine: plays from the tables, else searches with WinTree; for GUIs, "
                                   "tournament managers and python-chess")
    u.add_argument("--tables", type=Path, help="tables folder (default data/tables; also the TablePath option)")
    u.add_argument("--hash", type=_positive_int, help="MB for the search's tables of results (default 256)")
    u.add_argument("--threads", type=_positive_int, help="2: the two players' searches at once (default 1)")
    u.set_defaults(func=cmd_uci, tables_given=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "uci":
        args.tables_given = args.tables is not None
        args.tables = Path("data/tables") if args.tables is None else args.tables
    try:
        code = args.func(args)
        sys.stdout.flush()  # inside the try: a closed pipe is seen here, not at exit
        return code
    except BrokenPipeError:
        # The reader went away (`tablebase probe FEN | head -5`): end quietly, as a tool
        # killed by SIGPIPE does, and point stdout at /dev/null so that the interpreter's
        # own flush at exit finds no pipe to complain about.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (TablebaseError, ValueError, FileNotFoundError) as e:
        print(f"tablebase: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tablebase: interrupted; complete tables are kept, re-run to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
