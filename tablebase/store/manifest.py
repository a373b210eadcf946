"""The manifest of a table: what a complete table holds, and the mark that it is complete.

A table folder holds one folder per side to move, ``side=w/`` and ``side=b/`` (a hive
partition, so that Polars, DuckDB and pyarrow read the side as a column), each with its
shards and a ``manifest.parquet``: a Parquet file of the shards' schema with no rows, whose
footer holds the side's manifest as JSON (format version, material, index scheme, storage
order, coding, and every shard's row range, size, sha256 and counts). Being Parquet, it
leaves the folder a clean dataset; having no rows, it adds nothing to a query. The
manifests are written last, so a table is complete only when both exist and every shard
they list matches them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import CorruptTableError, TableFormatError
from .files import publish, temporary_name

#: Version of the table format this code writes and reads. 1: ``manifest.json`` beside
#: ``w-*.parquet`` shards with nullable ``wdl``/``dtm`` columns. 2: hive folders per side,
#: one int16 ``value`` column with don't-care rows, storage orders, ``manifest.parquet``.
#: 3: the int16 ``dtz`` column beside it (the 50-move rule). 4: ``value`` holds ``d + 1``
#: for a position decided at ply ``d`` (3: ``+d`` a win, ``-(d + 1)`` a loss).
FORMAT_VERSION = 4
INDEX_SCHEME = "kk-combination-v1"
SIDES = "wb"
MANIFEST = "manifest.parquet"
METADATA_KEY = b"tablebase.manifest"
#: The columns of a shard (and of a manifest): the row's index, its stored value (DTM, no
#: 50-move rule) and its stored DTZ50'' (see :mod:`tablebase.generate.values`); a table
#: generated without the 50-move rule has no ``dtz`` column.
SCHEMA = pa.schema([("index", pa.int64()), ("value", pa.int16()), ("dtz", pa.int16())])
SCHEMA_WITHOUT_DTZ = pa.schema([("index", pa.int64()), ("value", pa.int16())])
#: What the columns hold: python-chess's names of the values they give.
METRICS = ["wdl", "dtm", "wdl50", "dtz"]
METRICS_WITHOUT_DTZ = ["wdl", "dtm"]


def schema_of(metrics: list[str]) -> pa.Schema:
    """The shards' columns of a table holding ``metrics``."""
    return SCHEMA if "dtz" in metrics else SCHEMA_WITHOUT_DTZ


def side_folder(side: str) -> str:
    return f"side={side}"


def format_error(folder: Path, found: int | str) -> TableFormatError:
    key = Path(folder).name
    return TableFormatError(
        f"{folder}: table {key} is in format {found}, this version of tablebase reads format {FORMAT_VERSION}; "
        f"regenerate it with `tablebase generate {key} --out {Path(folder).parent}` (it replaces the old files)")


@dataclass(frozen=True)
class ShardInfo:
    file: str  # relative to the table folder: side=w/00003.parquet
    side: str
    slice: int
    start: int
    stop: int
    rows: int
    bytes: int
    sha256: str
    wins: int
    draws: int
    losses: int
    longest_dtm: int
    cursed_wins: int
    blessed_losses: int
    longest_dtz: int


@dataclass
class TableManifest:
    material: str
    index_size: int
    shards: list[ShardInfo]
    orders: dict[str, list[int]] = field(default_factory=dict)  # per side: the storage order
    coding: dict = field(default_factory=dict)
    metrics: list[str] = field(default_factory=lambda: list(METRICS))
    format_version: int = FORMAT_VERSION
    index_scheme: str = INDEX_SCHEME
    generator: str = ""
    config: dict = field(default_factory=dict)

    def counts(self) -> dict[str, dict[str, int]]:
        out = {}
        for side in SIDES:
            shards = [s for s in self.shards if s.side == side]
            out[side] = {"wins": sum(s.wins for s in shards), "draws": sum(s.draws for s in shards),
                         "losses": sum(s.losses for s in shards),
                         "cursed_wins": sum(s.cursed_wins for s in shards),
                         "blessed_losses": sum(s.blessed_losses for s in shards)}
        return out

    @property
    def has_dtz(self) -> bool:
        """Whether the table holds the 50-move rule's values (its shards' ``dtz`` column)."""
        return "dtz" in self.metrics

    @property
    def longest_dtm(self) -> int:
        return max((s.longest_dtm for s in self.shards), default=0)

    @property
    def longest_dtz(self) -> int:
        return max((s.longest_dtz for s in self.shards), default=0)

    @property
    def total_bytes(self) -> int:
        """Bytes of the shards (the manifests add about a kilobyte a side)."""
        return sum(s.bytes for s in self.shards)

    def side_json(self, side: str) -> str:
        d = asdict(self)
        d["side"] = side
        d["shards"] = [asdict(s) for s in self.shards if s.side == side]
        d["order"] = d.pop("orders")[side]
        d["counts"] = self.counts()[side]
        return json.dumps(d, sort_keys=True)


def is_table_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a table's manifest: of this format, or of format 1 (so
    that readers can say which format it is)."""
    folder = Path(folder)
    return (folder / side_folder("w") / MANIFEST).is_file() or (folder / "manifest.json").is_file()


def write_manifest(folder: Path, manifest: TableManifest) -> None:
    """Write both sides' manifests, each atomically, after every shard: their presence
    marks the table complete."""
    for side in SIDES:
        path = Path(folder) / side_folder(side) / MANIFEST
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = temporary_name(path)
        empty = schema_of(manifest.metrics).empty_table().replace_schema_metadata({METADATA_KEY: manifest.side_json(side)})
        pq.write_table(empty, tmp)
        publish(tmp, path)


def read_manifest(folder: Path) -> TableManifest | None:
    """The manifest of a table folder, None where the table is missing or incomplete;
    :class:`TableFormatError` for a table of another format, CorruptTableError for an
    unreadable manifest."""
    folder = Path(folder)
    if (folder / "manifest.json").exists():
        raise format_error(folder, 1)
    paths = [folder / side_folder(side) / MANIFEST for side in SIDES]
    if not all(p.exists() for p in paths):
        return None
    parts = []
    for side, path in zip(SIDES, paths):
        try:
            d = json.loads(pq.read_schema(path).metadata[METADATA_KEY])
        except (OSError, pa.ArrowException, KeyError, TypeError, ValueError) as e:
            raise CorruptTableError(f"{path}: unreadable manifest ({e})") from e
        if d.get("format_version") != FORMAT_VERSION:
            raise format_error(folder, d.get("format_version", "unknown"))
        if d.get("side") != side:
            raise CorruptTableError(f"{path}: manifest of side {d.get('side')!r} in the folder of side {side!r}")
        parts.append(d)
    w, b = parts
    try:
        common = {k: w[k] for k in ("material", "index_size", "coding", "metrics", "format_version", "index_scheme",
                                    "generator", "config")}
        if any(b[k] != v for k, v in common.items()):
            raise CorruptTableError(f"{folder}: the two sides' manifests disagree")
        if common["metrics"] not in (METRICS, METRICS_WITHOUT_DTZ):
            raise CorruptTableError(f"{folder}: manifest lists metrics {common['metrics']}, expected {METRICS} "
                                    f"or {METRICS_WITHOUT_DTZ}")
        shards = [ShardInfo(**s) for d in parts for s in d["shards"]]
        return TableManifest(shards=shards, orders={"w": w["order"], "b": b["order"]}, **common)
    except (KeyError, TypeError) as e:
        raise CorruptTableError(f"{folder}: unreadable manifest ({e})") from e
