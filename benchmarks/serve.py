"""Load on ``tablebase serve``: requests per second and latency at a given concurrency,
beside the same positions probed in-process.

    python benchmarks/serve.py [--tables DIR[:DIR]] [--requests 10000] [--concurrency 32]
                               [--distinct 2000] [--workers 1] [--pieces 3 4 5] [--seed 0]

Draws ``--distinct`` random legal positions, evenly over the tables of ``--pieces`` pieces
found in the folders (default: ``TABLEBASE_PATH``, else ``data/tables`` and
``data/test-tables``), starts ``tablebase serve`` on a free localhost port with
``--workers`` processes, and sends ``--requests`` GET ``/standard?fen=...`` requests (the
positions in turn, so each is asked ``requests / distinct`` times: the first time is
computed, the others come from the server's cache) over ``--concurrency`` keep-alive
connections. Prints throughput, p50 / p99 / max latency and errors (any status but 200),
and, as the baseline measured in the same run, the same positions answered in this
process (``tablebase.lichess.probe_json``, no HTTP, no cache): positions per second and
p50 / p99 per position. ``--distinct`` equal to ``--requests`` measures a cold server.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tablebase import decode, open_tablebase  # noqa: E402
from tablebase.endgame.index import IndexScheme  # noqa: E402
from tablebase.endgame.material import Material  # noqa: E402
from tablebase.lichess import probe_json  # noqa: E402
from tablebase.probe import TABLEBASE_PATH  # noqa: E402
from tablebase.server import TABLE_CACHE_BYTES  # noqa: E402


def sample_positions(tb, pieces: list[int], count: int, seed: int) -> list[str]:
    """``count`` FENs of random legal positions, evenly over the piece counts ``pieces``, then
    evenly over the tables of each."""
    rng = random.Random(seed)
    keys = {n: [k for k in tb.materials() if Material.parse(k).num_pieces == n] for n in pieces}
    missing = [n for n, ks in keys.items() if not ks]
    if missing:
        raise SystemExit(f"no tables with {missing} pieces in the folders (make one: tablebase generate KQRvKR)")
    fens = []
    while len(fens) < count:
        n = pieces[len(fens) % len(pieces)]
        key = rng.choice(keys[n])
        side = rng.choice("wb")
        index = rng.randrange(IndexScheme.of(key).size)
        try:
            board = decode(key, side, index)
        except ValueError:
            continue  # no placement
        if board.is_valid() and not board.has_legal_en_passant():
            fens.append(board.fen())
    return fens


def percentiles(seconds: list[float]) -> str:
    ms = np.array(seconds) * 1e3
    return f"p50 {np.percentile(ms, 50):6.2f} ms  p99 {np.percentile(ms, 99):6.2f} ms  max {ms.max():7.2f} ms"


async def load(port: int, paths: list[str], concurrency: int) -> tuple[list[float], int, float]:
    """(latencies, errors, wall seconds) of GET ``paths`` over ``concurrency`` keep-alive
    connections, each taking the next path when its last answer has arrived."""
    queue = iter(paths)
    latencies: list[float] = []
    errors = 0

    async def client() -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for path in queue:
            t = time.perf_counter()
            writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - t)
            if not head.startswith(b"HTTP/1.1 200"):
                errors += 1
        writer.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    return latencies, errors, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", help=f"folders separated by '{os.pathsep}'")
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--distinct", type=int, default=2000, help="distinct positions (default 2000)")
    parser.add_argument("--workers", type=int, default=1, help="server processes (default 1)")
    parser.add_argument("--pieces", type=int, nargs="+", default=[3, 4, 5])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-mb", type=int, default=TABLE_CACHE_BYTES >> 20,
                        help="the server's block cache per column, MB (default: the server's)")
    parser.add_argument("--preload", action="store_true", help="start the server with --preload (tables decoded "
                                                               "into its cache before it serves)")
    args = parser.parse_args()
    tables = args.tables or os.environ.get(TABLEBASE_PATH) or os.pathsep.join(
        str(p) for p in (ROOT / "data" / "tables", ROOT / "data" / "test-tables") if p.is_dir())
    folders = [p for p in tables.split(os.pathsep) if p]

    with open_tablebase(folders, cache_bytes=args.cache_mb << 20) as tb:  # the server's cache
        fens = sample_positions(tb, args.pieces, args.distinct, args.seed)
        counts = {n: sum(1 for f in fens if sum(c.isalpha() for c in f.split()[0]) == n) for n in args.pieces}
        print(f"{len(fens)} distinct positions ({', '.join(f'{c} of {n} pieces' for n, c in counts.items())}) "
              f"from {len(tb.materials())} tables in {', '.join(folders)}")
        import chess
        times = []
        t0 = time.perf_counter()
        for fen in fens:
            t = time.perf_counter()
            probe_json(tb, chess.Board(fen))
            times.append(time.perf_counter() - t)
        cold = time.perf_counter() - t0
        times = []
        t0 = time.perf_counter()
        for fen in fens:  # again: the tables' blocks are cached now, as in the server
            t = time.perf_counter()
            probe_json(tb, chess.Board(fen))
            times.append(time.perf_counter() - t)
        warm = time.perf_counter() - t0
    print(f"in-process (probe_json, no HTTP, no answer cache): {len(fens) / cold:8.0f} positions/s first pass, "
          f"{len(fens) / warm:8.0f} positions/s second pass  {percentiles(times)}")

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "tablebase.cli", "serve", "--tables", os.pathsep.join(folders),
                               "--port", str(port), "--workers", str(args.workers), "--cache-mb", str(args.cache_mb)]
                              + ["--preload"] * args.preload,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300  # preloading takes a while
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the server did not start: {server.stderr.read().decode()}")
                time.sleep(0.2)
        paths = [f"/standard?fen={urllib.parse.quote(fens[i % len(fens)].replace(' ', '_'))}"
                 for i in range(args.requests)]
        latencies, errors, wall = asyncio.run(load(port, paths, args.concurrency))
    finally:
        server.terminate()
        server.wait(10)
    print(f"server ({args.workers} process{'es' * (args.workers > 1)}{', preloaded' * args.preload}), {args.requests} requests at concurrency "
          f"{args.concurrency}, each position asked {args.requests / len(fens):.1f} times: "
          f"{len(latencies) / wall:8.0f} requests/s  {percentiles(latencies)}  errors {errors}")
    print(f"ratio: server throughput / in-process second pass = {len(latencies) / wall / (len(fens) / warm):.2f}")


if __name__ == "__main__":
    main()
