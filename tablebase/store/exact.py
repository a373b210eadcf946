"""The exact codes of finished shards, kept beside the tables for the generation of the
tables above them.

A shard's don't-care rows read as lower bounds (see :mod:`tablebase.generate.values`), so
reading a table's exact values from its shards means generating its captures and
promotions into its own sub-tables, read exactly first, and so on down: the init of
KPvKP resolved 188 table sides that way, 10 of its 16 s. The generator knows each
shard's exact codes when it writes it, and leaves them in ``<tables>/.exact/<material>/``
(zstd, about the shards' own size): a later generation reads them instead, and resolves
only a shard whose copy is missing or does not match.

A copy is named by its shard's side, slice and sha256, so a shard written again (or
replaced by another table) never meets an old copy, and holds the sha256 of its codes:
a damaged one is ignored, never read as values. ``tablebase verify`` reads the shards
alone.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow as pa

from .files import atomic_write_bytes
from .manifest import ShardInfo

#: The folder of the copies, under the tables folder (beside the tables' own folders).
EXACT_FOLDER = ".exact"
_DIGEST = 32  # bytes of sha256 before the compressed codes


def exact_path(table_folder: Path, info: ShardInfo) -> Path:
    """Where the exact codes of the shard ``info`` of the table in ``table_folder`` are kept."""
    table_folder = Path(table_folder)
    return (table_folder.parent / EXACT_FOLDER / table_folder.name /
            f"{info.side}-{info.slice:05d}-{info.sha256[:16]}.zst")


def write_exact(table_folder: Path, info: ShardInfo, codes: np.ndarray) -> None:
    """Keep the exact codes (uint16, index order) of a shard just written, atomically; a
    folder that cannot take them (read-only, full) only costs a later reader the resolve."""
    codes = np.ascontiguousarray(codes, dtype=np.uint16)
    path = exact_path(table_folder, info)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for old in path.parent.glob(f"{info.side}-{info.slice:05d}-*.zst"):  # of a shard written before
            if old != path:
                old.unlink()
        atomic_write_bytes(path, hashlib.sha256(codes).digest() + pa.compress(codes, codec="zstd", asbytes=True))
    except OSError:
        pass


def read_exact(table_folder: Path, info: ShardInfo) -> np.ndarray | None:
    """The exact codes kept for shard ``info`` (index order), or None where there is no
    copy of this shard's bytes or the copy is damaged."""
    try:
        blob = exact_path(table_folder, info).read_bytes()
        codes = np.frombuffer(pa.decompress(blob[_DIGEST:], decompressed_size=2 * info.rows, codec="zstd",
                                            asbytes=True), dtype=np.uint16)
    except (OSError, pa.ArrowException, ValueError):
        return None
    if len(codes) != info.rows or hashlib.sha256(codes).digest() != blob[:_DIGEST]:
        return None
    return codes
