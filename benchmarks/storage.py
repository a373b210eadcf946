"""Storage codings side by side: bytes per legal position, and probe speed, per table.

    python -m benchmarks.storage [--tables DIR] [--work DIR] [--positions N] [MATERIAL ...]

Each table (default: KQvKR KRvKP KBNvK KPvKP KNPvK; five-piece tables such as KQRvKR too
when named, with their sub-tables in ``--tables``) is solved once in this process; its
finished values are then written in every candidate coding, and each candidate is
probed with the library (its sub-tables linked from ``--tables``), so every figure comes
from one run:

* ``format 1``: what version 0.1 wrote (nullable ``wdl`` int8 and ``dtm`` int16, the
  index's own order, zstd at pyarrow's default level); probed by a plain row reader kept
  here (that format has no reader any more), which is what 0.1's prober did.
* the current coding (``default``), and one choice changed at a time: no don't-care rows,
  don't-care only where the index is no legal position, the index's own order, row group
  size, zstd level, the value column's Parquet encoding, the dtz column's encoding and
  zstd level.
* ``value signed (format 3)``: the default's shards with ``value`` rewritten in format 3's
  signed coding (``+d`` a win, ``-(d + 1)`` a loss) by the same writer; bytes only (the
  library reads format 4 alone).
* ``one side``: only the side to move that compresses better, the other left to a
  one-ply search at probe time; its probe time is that of probing every move's child.

Bytes are the table's shards as written (manifests add about 1 kB a side). Probe times
are warm (best of three passes after a first pass filled the pool): single probes of
random legal positions through ``probe_dtm``, and ``probe_batch_indices`` over random
indices; ratios are against ``format 1`` in the same run.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import shutil
import time
from pathlib import Path

import chess
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tablebase.endgame.index import IndexScheme
from tablebase.endgame.material import dependency_order
from tablebase.endgame.pychess import index_board
from tablebase.generate.pipeline import LocalPartitions, choose_orders, run_dtz, run_passes, write_table_manifest
from tablebase.generate.values import ILLEGAL, to_wdl_dtm
from tablebase.probe import open_tablebase
from tablebase.store import DEFAULT_CODING, Coding
from tablebase.store.shards import write_columns

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ["KQvKR", "KRvKP", "KBNvK", "KPvKP", "KNPvK"]

CANDIDATES: list[tuple[str, Coding]] = [
    ("default", DEFAULT_CODING),
    ("dont_care=none", dataclasses.replace(DEFAULT_CODING, dont_care="none")),
    ("dont_care=illegal", dataclasses.replace(DEFAULT_CODING, dont_care="illegal")),
    ("order=natural", dataclasses.replace(DEFAULT_CODING, order="natural")),
    ("rows=16k", dataclasses.replace(DEFAULT_CODING, row_group_rows=1 << 14)),
    ("rows=64k", dataclasses.replace(DEFAULT_CODING, row_group_rows=1 << 16)),
    ("rows=128k", dataclasses.replace(DEFAULT_CODING, row_group_rows=1 << 17)),
    ("zstd=3", dataclasses.replace(DEFAULT_CODING, zstd_level=3)),
    ("zstd=6", dataclasses.replace(DEFAULT_CODING, zstd_level=6)),
    ("zstd=15", dataclasses.replace(DEFAULT_CODING, zstd_level=15)),
    ("zstd=19", dataclasses.replace(DEFAULT_CODING, zstd_level=19)),
    ("encoding=RLE_DICTIONARY", dataclasses.replace(DEFAULT_CODING, encoding="RLE_DICTIONARY")),
    ("encoding=RLE_DICTIONARY zstd=6", dataclasses.replace(DEFAULT_CODING, encoding="RLE_DICTIONARY", zstd_level=6)),
    ("encoding=PLAIN", dataclasses.replace(DEFAULT_CODING, encoding="PLAIN")),
    ("encoding=DELTA_BINARY_PACKED", dataclasses.replace(DEFAULT_CODING, encoding="DELTA_BINARY_PACKED")),
    ("dtz zstd=3", dataclasses.replace(DEFAULT_CODING, dtz_zstd_level=3)),
    ("dtz zstd=10", dataclasses.replace(DEFAULT_CODING, dtz_zstd_level=10)),
    ("dtz BYTE_STREAM_SPLIT zstd=10", dataclasses.replace(DEFAULT_CODING, dtz_encoding="BYTE_STREAM_SPLIT",
                                                          dtz_zstd_level=10)),
]


def format1_shards(key: str, exact: tuple[np.ndarray, np.ndarray], folder: Path) -> int:
    """Write ``key`` as format 1 did (one file per side and slice); return its bytes."""
    scheme = IndexScheme.of(key)
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for stm in (0, 1):
        for s in range(scheme.num_slices):
            lo, hi = scheme.slice_range(s)
            wdl, dtm, legal = to_wdl_dtm(exact[stm][lo:hi])
            table = pa.table({"wdl": pa.array(wdl, mask=~legal), "dtm": pa.array(dtm, mask=~legal)})
            path = folder / f"{'wb'[stm]}-{s:05d}.parquet"
            pq.write_table(table, path, compression="zstd", use_dictionary=True, row_group_size=1 << 15,
                           write_statistics=False)
            total += path.stat().st_size
    return total


class Format1Reader:
    """Format 1's point reads: the row group of a row decoded once (LRU-free: every
    block stays), the row taken at ``index - start``."""

    def __init__(self, key: str, folder: Path):
        self.scheme = IndexScheme.of(key)
        self.files = [[pq.ParquetFile(folder / f"{'wb'[stm]}-{s:05d}.parquet", memory_map=True)
                       for s in range(self.scheme.num_slices)] for stm in (0, 1)]
        self.blocks: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}

    def _block(self, stm: int, s: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        block = self.blocks.get((stm, s, b))
        if block is None:
            t = self.files[stm][s].read_row_group(b)
            block = self.blocks[stm, s, b] = (t.column("wdl").fill_null(-128).to_numpy(),
                                              t.column("dtm").fill_null(0).to_numpy())
        return block

    def probe(self, stm: int, idx: int) -> tuple[int, int]:
        s = int(self.scheme.slice_of(idx))
        b, r = divmod(idx - self.scheme.slice_range(s)[0], 1 << 15)
        wdl, dtm = self._block(stm, s, b)
        return int(wdl[r]), int(dtm[r])

    def batch(self, stm: np.ndarray, idx: np.ndarray) -> np.ndarray:
        out = np.empty(len(idx), dtype=np.int16)
        s = self.scheme.slice_of(idx)
        starts = np.array([self.scheme.slice_range(k)[0] for k in range(self.scheme.num_slices)])
        row = idx - starts[s]
        key = (stm * self.scheme.num_slices + s) * 4096 + row // (1 << 15)
        order = np.argsort(key, kind="stable")
        bounds = np.flatnonzero(np.diff(key[order])) + 1
        for chunk in np.split(order, bounds):
            k = int(key[chunk[0]])
            _, dtm = self._block(k // (4096 * self.scheme.num_slices), (k // 4096) % self.scheme.num_slices, k % 4096)
            out[chunk] = dtm[row[chunk] % (1 << 15)]
        return out


def best_of(function, repeats: int = 3) -> float:
    function()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - t)
    return best


def sample(key: str, exact, n: int, rng: random.Random) -> list[tuple[int, int, chess.Board]]:
    scheme = IndexScheme.of(key)
    out = []
    while len(out) < n:
        stm, idx = rng.randrange(2), rng.randrange(scheme.size)
        if exact[stm][idx] != ILLEGAL:
            out.append((stm, idx, index_board(key, stm, idx)))
    return out


def link_subtables(tables: Path, folder: Path, key: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for sub in dependency_order([key])[:-1]:
        if not (folder / sub).exists():
            os.symlink((tables / sub).resolve(), folder / sub)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("materials", nargs="*", default=DEFAULT)
    parser.add_argument("--tables", type=Path, default=ROOT / "data" / "test-tables",
                        help="complete tables holding every sub-table of the materials")
    parser.add_argument("--work", type=Path, default=ROOT / "data" / "bench-storage")
    parser.add_argument("--positions", type=int, default=2000, help="random legal positions per table for probes")
    parser.add_argument("--batch", type=int, default=200_000, help="random indices per table in the batch probes")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    rows: dict[str, dict[str, list[float]]] = {}
    legal_of: dict[str, int] = {}
    dtz_bytes: dict[str, int] = {}
    for key in args.materials:
        parts = LocalPartitions(key, args.tables)
        run_passes(key, parts)
        run_dtz(key, parts)
        parts.finish(None, (), DEFAULT_CODING)
        exact = parts.values()
        legal = int(sum(np.count_nonzero(v != ILLEGAL) for v in exact))
        legal_of[key] = legal
        rng = random.Random(args.seed)
        positions = sample(key, exact, args.positions, rng)
        nrng = np.random.default_rng(args.seed)
        b_stm = nrng.integers(0, 2, args.batch)
        b_idx = nrng.integers(0, IndexScheme.of(key).size, args.batch)

        folder = args.work / "format1" / key
        size = format1_shards(key, exact, folder)
        reader = Format1Reader(key, folder)
        single = best_of(lambda: [reader.probe(stm, idx) for stm, idx, _ in positions]) / len(positions)
        batch = best_of(lambda: reader.batch(b_stm, b_idx))
        rows.setdefault("format 1", {})[key] = [size, single, args.batch / batch, 0.0]

        side_bytes = [0, 0]
        for name, coding in CANDIDATES:
            out = args.work / name.replace("=", "-").replace(" ", "_")
            link_subtables(args.tables, out, key)
            t = time.perf_counter()
            orders = choose_orders(key, parts, coding)
            infos = parts.finish(out / key, orders, coding)
            write_table_manifest(out, key, infos, orders, coding)
            written = time.perf_counter() - t
            if name == "default":
                side_bytes = [sum(i.bytes for i in infos if i.side == side) for side in "wb"]
                dtz_bytes[key] = sum(column_bytes(out / key / i.file, "dtz") for i in infos)
                signed = sum(signed_value_bytes(out / key / i.file, args.work / "signed" / key / i.file)
                             for i in infos)
                rows.setdefault("value signed (format 3)", {})[key] = [signed, float("nan"), float("nan"), 0.0]
            with open_tablebase(out, cache_bytes=1 << 30) as tb:
                single = best_of(lambda: [tb.probe_dtm(board) for _, _, board in positions]) / len(positions)
                batch = best_of(lambda: tb.probe_batch_indices(key, b_stm, b_idx))
                if name == "default":
                    children = best_of(lambda: [[tb.probe_dtm(_after(board, m)) for m in board.legal_moves]
                                                for _, _, board in positions[:200]]) / min(200, len(positions))
            rows.setdefault(name, {})[key] = [sum(i.bytes for i in infos), single, args.batch / batch, written]
        rows.setdefault("one side", {})[key] = [min(side_bytes), children, float("nan"), 0.0]
        print(f"{key}: {legal:,d} legal positions", flush=True)

    keys = args.materials
    print(f"\n{'coding':28} " + " ".join(f"{k + ' bits':>12}" for k in keys)
          + f" {'total MB':>9} {'vs fmt 1':>8} {'single us':>9} {'batch M/s':>9} {'write s':>7}")
    base_total = sum(rows["format 1"][k][0] for k in keys)
    for name, per in rows.items():
        total = sum(per[k][0] for k in keys)
        legal_bits = [8 * per[k][0] / legal_of[k] for k in keys]
        single = np.mean([per[k][1] for k in keys]) * 1e6
        batch = np.mean([per[k][2] for k in keys]) / 1e6
        write = sum(per[k][3] for k in keys)
        print(f"{name:28} " + " ".join(f"{b:12.3f}" for b in legal_bits)
              + f" {total / 1e6:9.2f} {total / base_total:8.3f} {single:9.2f} {batch:9.2f} {write:7.1f}")
    print("\nof which the dtz column (default coding): " + " ".join(
        f"{k} {8 * dtz_bytes[k] / legal_of[k]:.3f} bits" for k in keys))
    print("\nbits: per legal position of the table (both sides to move); single: warm probe_dtm of a random legal "
          "position (for 'one side': probing every move's child, the one-ply search its other side needs); batch: "
          "probe_batch_indices of random indices, warm")


def signed_value_bytes(shard: Path, path: Path) -> int:
    """Bytes of ``shard`` rewritten to ``path`` with its ``value`` column in format 3's signed
    coding: ``d + 1`` (even: a win in ``d``, odd: a loss) to ``+d`` / ``-(d + 1)``."""
    table = pq.read_table(shard)
    code = table.column("value").to_numpy()
    signed = np.where(code == 0, 0, np.where(code % 2 == 0, code - 1, -code)).astype(np.int16)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_columns(table.set_column(table.column_names.index("value"), "value", pa.array(signed)), path)
    return path.stat().st_size


def column_bytes(path: Path, column: str) -> int:
    """Compressed bytes of one column of a Parquet file."""
    meta = pq.ParquetFile(path).metadata
    j = meta.schema.names.index(column)
    return sum(meta.row_group(g).column(j).total_compressed_size for g in range(meta.num_row_groups))


def _after(board: chess.Board, move: chess.Move) -> chess.Board:
    child = board.copy(stack=False)
    child.push(move)
    return child


if __name__ == "__main__":
    main()
