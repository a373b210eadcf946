"""Shard files: writing them, and reading them back with every check in one place.

A shard holds one slice of one side to move (``side=w/00003.parquet``), its rows in the
side's storage order (:mod:`tablebase.store.layout`), with three columns (see
:mod:`tablebase.generate.values`): ``index`` (the row's index, int64); ``value`` (int16,
no 50-move rule): ``sign`` is the wdl, ``value`` plies to mate for a win, ``-value - 1``
for a loss; ``dtz`` (int16, Syzygy's DTZ50''): ``dtz`` plies to the next zeroing move for
a win (a cursed one past 100), ``-dtz - 1`` for a loss, 0 a draw. Rows of indices that
are no legal position hold don't-care values in both; rows of positions whose value a
capture or promotion gives hold one in ``value`` (see there): readers resolve them.

Every read goes through :class:`TableReader`, which checks a table once: manifests
(format, material, index scheme and size, coverage of the index range), each shard's
size, footer (material, side, range, order, schema, equal row groups) and, before the
first read of its values, its sha256.
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..endgame.index import IndexScheme
from ..generate.values import ILLEGAL, dtz_counts, dtz_stored, exact_from_stored, plain, value_counts
from .exact import write_exact
from .files import publish, sha256_of, temporary_name
from .layout import from_storage, stored_dtz_rows, stored_rows, to_storage
from ..errors import MissingMetricError
from .manifest import (FORMAT_VERSION, INDEX_SCHEME, SCHEMA, SCHEMA_WITHOUT_DTZ, SIDES, CorruptTableError, ShardInfo,
                       TableFormatError, format_error, read_manifest, schema_of, side_folder)


@dataclass(frozen=True)
class Coding:
    """How shards are written: the choices ``benchmarks/storage.py`` measures. The
    defaults are what it found smallest at the generation and probe speed we keep."""

    #: "exits": illegal rows and rows a capture or promotion decides hold don't-care
    #: values; "illegal": only illegal rows; "none": every row its own value.
    dont_care: str = "exits"
    #: "best": each side in the axis order that compresses best on sample slices;
    #: "natural": the index's own order.
    order: str = "best"
    row_group_rows: int = 1 << 15
    zstd_level: int = 10
    #: Parquet encoding of the value column: the byte streams split, zstd then sees the
    #: low bytes alone, byte-aligned (bit-packed dictionary indices straddle bytes).
    encoding: str = "BYTE_STREAM_SPLIT"
    #: The dtz column's encoding and zstd level: its few hundred distinct values as a
    #: dictionary compress smaller than split byte streams, and at level 6 over twice as
    #: fast as those at the value column's level (``benchmarks/storage.py``).
    dtz_encoding: str = "RLE_DICTIONARY"
    dtz_zstd_level: int = 6

    def as_dict(self) -> dict:
        return asdict(self)


DEFAULT_CODING = Coding()


def shard_file_name(side: int, slice_id: int) -> str:
    return f"{side_folder(SIDES[side])}/{slice_id:05d}.parquet"


def _footer(material: str, side: str, slice_id: int, start: int, stop: int, order) -> dict[str, str]:
    return {"tablebase.material": material, "tablebase.side": side, "tablebase.slice": str(slice_id),
            "tablebase.start": str(start), "tablebase.stop": str(stop),
            "tablebase.format_version": str(FORMAT_VERSION), "tablebase.index_scheme": INDEX_SCHEME,
            "tablebase.order": ",".join(map(str, order))}


def write_shard(folder: Path, material: str, side: int, slice_id: int, val: np.ndarray, zval: np.ndarray | None,
                order: tuple[int, ...], coding: Coding = DEFAULT_CODING) -> ShardInfo:
    """Write the finished DTM codes ``val`` (exit marks kept) and DTZ codes ``zval`` (index
    order; None: a table without the 50-move rule, no ``dtz`` column) of one slice
    atomically, its rows in ``order``; and keep its exact codes for the tables above it
    (:mod:`tablebase.store.exact`)."""
    scheme = IndexScheme.of(material)
    start, stop = scheme.slice_range(slice_id)
    shape = scheme.slice_shape(slice_id)
    if len(val) != stop - start or (zval is not None and len(zval) != stop - start):
        raise ValueError(f"{material}: slice {slice_id} has {stop - start} indices, not {len(val)} / "
                         f"{len(zval) if zval is not None else '-'}")
    folder = Path(folder)
    name = shard_file_name(side, slice_id)
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = {"index": to_storage(np.arange(start, stop, dtype=np.int64), shape, order),
               "value": stored_rows(val, shape, order, coding.dont_care)}
    if zval is not None:
        dtz = dtz_stored(zval)
        columns["dtz"] = stored_dtz_rows(dtz, zval == ILLEGAL, shape, order)
    schema = SCHEMA if zval is not None else SCHEMA_WITHOUT_DTZ
    table = pa.table(columns, schema=schema).replace_schema_metadata(
        _footer(material, SIDES[side], slice_id, start, stop, order))
    tmp = temporary_name(path)
    write_columns(table, tmp, coding)
    publish(tmp, path)
    wins, draws, losses, longest_dtm = value_counts(val)
    cursed, blessed, longest_dtz = dtz_counts(zval) if zval is not None else (0, 0, 0)
    info = ShardInfo(file=name, side=SIDES[side], slice=slice_id, start=start, stop=stop, rows=stop - start,
                     bytes=path.stat().st_size, sha256=sha256_of(path), wins=int(wins), draws=int(draws),
                     losses=int(losses), longest_dtm=int(longest_dtm),
                     cursed_wins=cursed, blessed_losses=blessed, longest_dtz=longest_dtz)
    write_exact(folder, info, plain(val))
    return info


def write_columns(table: pa.Table, path: Path, coding: Coding = DEFAULT_CODING) -> None:
    """Write a shard's columns to ``path`` with the encodings and levels of ``coding``."""
    encodings = {"index": "DELTA_BINARY_PACKED", "value": coding.encoding, "dtz": coding.dtz_encoding}
    encodings = {c: e for c, e in encodings.items() if c in table.column_names}
    levels = {c: coding.dtz_zstd_level if c == "dtz" else coding.zstd_level for c in table.column_names}
    pq.write_table(table, path, compression="zstd", compression_level=levels,
                   use_dictionary=[c for c, e in encodings.items() if e == "RLE_DICTIONARY"] or False,
                   column_encoding={c: e for c, e in encodings.items() if e != "RLE_DICTIONARY"},
                   row_group_size=coding.row_group_rows, write_statistics=False)


def check_shard(folder: Path, info: ShardInfo, *, hash_check: bool = True) -> None:
    """Raise CorruptTableError unless the shard file matches its manifest entry."""
    path = Path(folder) / info.file
    if not path.exists():
        raise CorruptTableError(f"{path}: shard listed in the manifest is missing")
    size = path.stat().st_size
    if size != info.bytes:
        raise CorruptTableError(f"{path}: {size} bytes, the manifest says {info.bytes} (truncated or replaced)")
    if hash_check and sha256_of(path) != info.sha256:
        raise CorruptTableError(f"{path}: sha256 does not match the manifest (corrupted bytes)")


def table_complete(folder: Path, material: str, *, hash_check: bool = True, dtz: bool = False) -> bool:
    """Whether ``folder`` holds a complete, checksum-valid table of ``material`` in this
    format, with the 50-move rule's values where ``dtz`` (a table of another format, or
    without them where they are asked for, is not complete: it is to be regenerated)."""
    try:
        manifest = read_manifest(folder)
        if manifest is None or manifest.material != material or (dtz and not manifest.has_dtz):
            return False
        for info in manifest.shards:
            check_shard(folder, info, hash_check=hash_check)
    except CorruptTableError:
        return False
    return True


def remove_other_format(folder: Path) -> bool:
    """Remove the files of a table of another format from ``folder`` (so that it can be
    written again in this one); whether there were any."""
    folder = Path(folder)
    old = [p for p in (folder / "manifest.json", *folder.glob("[wb]-*.parquet")) if p.exists()]
    try:
        read_manifest(folder)
    except TableFormatError:
        old += list(folder.glob("side=*/*.parquet"))
    for path in old:
        path.unlink()
    return bool(old)


class ShardReader:
    """One shard: its footer checked on opening, its sha256 before its first read. Its
    blocks (the unit a probe decodes) are its row groups."""

    def __init__(self, folder: Path, material: str, info: ShardInfo, order: tuple[int, ...], block_rows: int, *,
                 hash_check: bool = True, schema: pa.Schema = SCHEMA):
        self.folder, self.info, self.order, self.schema = folder, info, order, schema
        self.block_rows = block_rows
        self.path = folder / info.file
        check_shard(folder, info, hash_check=False)
        try:
            self.file = pq.ParquetFile(self.path, memory_map=True)
        except (OSError, pa.ArrowException) as e:
            raise CorruptTableError(f"{self.path}: unreadable Parquet footer ({e})") from e
        try:
            self._check_footer(material)
        except BaseException:
            self.file.close()
            raise
        self._lock = threading.Lock()
        self._verified = not hash_check

    def _check_footer(self, material: str) -> None:
        """Raise CorruptTableError unless the footer describes this shard."""
        info = self.info
        try:
            meta = self.file.schema_arrow.metadata or {}
            schema = self.file.schema_arrow.remove_metadata()
            num_rows = self.file.metadata.num_rows
            rg_rows = [self.file.metadata.row_group(i).num_rows for i in range(self.file.num_row_groups)]
        except (OSError, pa.ArrowException) as e:
            raise CorruptTableError(f"{self.path}: unreadable Parquet footer ({e})") from e
        found_format = meta.get(b"tablebase.format_version", b"").decode(errors="replace")
        if found_format != str(FORMAT_VERSION):
            raise format_error(self.folder, found_format or "unknown")
        expected = _footer(material, info.side, info.slice, info.start, info.stop, self.order)
        for k, v in expected.items():
            found = meta.get(k.encode(), b"").decode(errors="replace")
            if found != v:
                raise CorruptTableError(f"{self.path}: footer says {k.split('.')[1]}={found!r}, the manifest {v!r}")
        if not schema.equals(self.schema):
            expected = ", ".join(f"{f.name} {f.type}" for f in self.schema)
            raise CorruptTableError(f"{self.path}: columns {', '.join(f'{f.name} {f.type}' for f in schema)}, "
                                    f"the manifest's are {expected}")
        if num_rows != info.rows or info.rows != info.stop - info.start:
            raise CorruptTableError(f"{self.path}: {num_rows} rows, the manifest says {info.rows}")
        # Row groups of the table's size (the last may be shorter) make a row's block a division.
        if not rg_rows or any(r != self.block_rows for r in rg_rows[:-1]) or rg_rows[-1] > self.block_rows:
            raise CorruptTableError(f"{self.path}: row groups of sizes {rg_rows[:3]}...{rg_rows[-1:]}, "
                                    f"expected {self.block_rows} rows each")

    def _read(self, read):
        with self._lock:  # a ParquetFile is not safe for concurrent reads
            if not self._verified:
                check_shard(self.folder, self.info, hash_check=True)
                self._verified = True
            try:
                table = read()
            except (OSError, pa.ArrowException) as e:
                raise CorruptTableError(f"{self.path}: unreadable Parquet ({e})") from e
        column = table.column(0)
        if column.null_count:
            raise CorruptTableError(f"{self.path}: null values")
        return column.to_numpy()

    def read_block(self, block: int, column: str = "value") -> np.ndarray:
        """One column's stored values (int16, storage order) of one row group."""
        return self._read(lambda: self.file.read_row_group(block, columns=[column]))

    def read_all(self, column: str = "value") -> np.ndarray:
        """One column's stored values (int16, storage order) of the whole shard."""
        return self._read(lambda: self.file.read(columns=[column]))

    def close(self) -> None:
        self.file.close()


class TableReader:
    """A complete table's shards by side to move and slice, checked (see the module;
    ``hash_check=False`` skips the sha256s)."""

    def __init__(self, folder: Path, material: str, *, hash_check: bool = True):
        folder = Path(folder)
        manifest = read_manifest(folder)
        if manifest is None:
            raise FileNotFoundError(f"{folder}: no manifests: table {material} is missing or incomplete")
        if manifest.material != material:
            raise CorruptTableError(f"{folder}: manifest is for {manifest.material}, not {material}")
        self.material, self.manifest = material, manifest
        self.scheme = scheme = IndexScheme.of(material)
        if manifest.index_size != scheme.size or manifest.index_scheme != INDEX_SCHEME:
            raise CorruptTableError(f"{folder}: manifest index {manifest.index_scheme} of size {manifest.index_size}, "
                                    f"this reader's is {INDEX_SCHEME} of size {scheme.size}")
        self.orders = tuple(tuple(manifest.orders.get(side, ())) for side in SIDES)
        self.block_rows = manifest.coding.get("row_group_rows", 0)
        if not isinstance(self.block_rows, int) or self.block_rows < 1:
            raise CorruptTableError(f"{folder}: manifest gives row groups of {self.block_rows!r} rows")
        for side, order in zip(SIDES, self.orders):
            if sorted(order) != list(range(1 + len(scheme.group_radices))):
                raise CorruptTableError(f"{folder}: storage order {list(order)} of side {side} is no order of the "
                                        f"{1 + len(scheme.group_radices)} axes")
        self.shards: tuple[list[ShardReader], list[ShardReader]] = ([], [])
        try:
            for info in sorted(manifest.shards, key=lambda s: s.start):
                if info.side not in SIDES:
                    raise CorruptTableError(f"{folder}: shard {info.file} has side {info.side!r}")
                stm = SIDES.index(info.side)
                side = self.shards[stm]
                if (info.slice != len(side) or info.slice >= scheme.num_slices
                        or (info.start, info.stop) != scheme.slice_range(info.slice)):
                    raise CorruptTableError(f"{folder}: shard {info.file} holds [{info.start}, {info.stop}), "
                                            f"not slice {len(side)}'s range: a gap or an overlap")
                side.append(ShardReader(folder, material, info, self.orders[stm], self.block_rows,
                                        hash_check=hash_check, schema=schema_of(manifest.metrics)))
            for side, shards in zip(SIDES, self.shards):
                if len(shards) != scheme.num_slices:
                    raise CorruptTableError(f"{folder}: {len(shards)} shards of side {side}, the index has "
                                            f"{scheme.num_slices} slices")
        except BaseException:
            self.close()
            raise
        self.starts = tuple([s.info.start for s in shards] for shards in self.shards)

    def shard_of(self, stm: int, idx: int) -> ShardReader:
        return self.shards[stm][bisect.bisect_right(self.starts[stm], idx) - 1]

    def stored_slice(self, stm: int, slice_id: int) -> np.ndarray:
        """A slice's stored values as exact codes (what each row reads as, before its
        exits are consulted), in index order."""
        rows = self.shards[stm][slice_id].read_all()
        return exact_from_stored(from_storage(rows, self.scheme.slice_shape(slice_id), self.orders[stm]))

    def stored_dtz_slice(self, stm: int, slice_id: int) -> np.ndarray:
        """A slice's ``dtz`` column in index order (illegal rows: any value)."""
        if not self.manifest.has_dtz:
            raise self.missing_dtz()
        rows = self.shards[stm][slice_id].read_all("dtz")
        return from_storage(rows, self.scheme.slice_shape(slice_id), self.orders[stm])

    def missing_dtz(self) -> MissingMetricError:
        """The error for a DTZ asked of this table where it holds none."""
        folder = self.shards[0][0].folder
        return MissingMetricError(self.material, f"{self.material}: the table in {folder} holds no DTZ or WDL50 "
                                  "(it was generated with --no-dtz); `tablebase generate "
                                  f"{self.material} --out {folder.parent}` adds them")

    def close(self) -> None:
        for shards in self.shards:
            for shard in shards:
                shard.close()

    def __enter__(self) -> "TableReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
