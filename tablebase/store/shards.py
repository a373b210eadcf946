"""Shard files and the manifest.

Each shard holds one contiguous index range of one side to move: row ``i`` is index
``start + i``, so a probe reaches its row in O(1). Columns (python-chess conventions, from
the side to move): ``wdl`` int8 (+1 win, 0 draw, -1 loss) and ``dtm`` int16 (plies, signed;
0 for draws and for a mated side); both null where the index is no legal position.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import CorruptTableError  # noqa: F401  (raised here; re-exported for old imports)
from ..generate.kernels import from_wdl_dtm, to_wdl_dtm

FORMAT_VERSION = 1
INDEX_SCHEME = "kk-combination-v1"
SCHEMA = pa.schema([("wdl", pa.int8()), ("dtm", pa.int16())])
#: Rows per row group: small enough that a point probe decodes little.
ROW_GROUP_ROWS = 1 << 15
SIDES = "wb"


@dataclass(frozen=True)
class ShardInfo:
    file: str
    side: str
    start: int
    stop: int
    rows: int
    bytes: int
    sha256: str
    wins: int
    draws: int
    losses: int
    longest_dtm: int


@dataclass
class TableManifest:
    material: str
    index_size: int
    shards: list[ShardInfo]
    format_version: int = FORMAT_VERSION
    index_scheme: str = INDEX_SCHEME
    generator: str = ""
    config: dict = field(default_factory=dict)

    def counts(self) -> dict[str, dict[str, int]]:
        out = {}
        for side in SIDES:
            shards = [s for s in self.shards if s.side == side]
            out[side] = {"wins": sum(s.wins for s in shards), "draws": sum(s.draws for s in shards),
                         "losses": sum(s.losses for s in shards)}
        return out

    @property
    def longest_dtm(self) -> int:
        return max((s.longest_dtm for s in self.shards), default=0)

    @property
    def total_bytes(self) -> int:
        return sum(s.bytes for s in self.shards)

    def to_json(self) -> str:
        d = asdict(self)
        d["counts"] = self.counts()
        d["longest_dtm"] = self.longest_dtm
        return json.dumps(d, indent=1, sort_keys=True) + "\n"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def shard_file_name(side: int, slice_id: int) -> str:
    return f"{SIDES[side]}-{slice_id:05d}.parquet"


def write_shard(folder: Path, material: str, side: int, slice_id: int, start: int, val: np.ndarray) -> ShardInfo:
    """Write the final values ``val`` of indices ``[start, start + len(val))`` atomically."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    name = shard_file_name(side, slice_id)
    wdl, dtm, legal = to_wdl_dtm(val)
    mask = ~legal
    table = pa.table({"wdl": pa.array(wdl, mask=mask), "dtm": pa.array(dtm, mask=mask)}, schema=SCHEMA)
    table = table.replace_schema_metadata({
        "tablebase.material": material, "tablebase.side": SIDES[side], "tablebase.start": str(start),
        "tablebase.stop": str(start + len(val)), "tablebase.format_version": str(FORMAT_VERSION),
        "tablebase.index_scheme": INDEX_SCHEME})
    tmp = folder / f".{name}.tmp{os.getpid()}"
    pq.write_table(table, tmp, compression="zstd", use_dictionary=True, row_group_size=ROW_GROUP_ROWS,
                   write_statistics=False)
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, folder / name)
    decided_dtm = dtm[legal]
    return ShardInfo(file=name, side=SIDES[side], start=start, stop=start + len(val), rows=len(val),
                     bytes=(folder / name).stat().st_size, sha256=_sha256(folder / name),
                     wins=int((wdl[legal] > 0).sum()), draws=int((wdl[legal] == 0).sum()),
                     losses=int((wdl[legal] < 0).sum()),
                     longest_dtm=int(np.abs(decided_dtm).max()) if decided_dtm.size else 0)


def write_manifest(folder: Path, manifest: TableManifest) -> None:
    """Write ``manifest.json`` last: its presence marks the table complete."""
    _atomic_write_bytes(Path(folder) / "manifest.json", manifest.to_json().encode())


def read_manifest(folder: Path) -> TableManifest | None:
    """The manifest of a table folder, None if there is none; CorruptTableError if unreadable."""
    path = Path(folder) / "manifest.json"
    if not path.exists():
        return None
    try:
        d = json.loads(path.read_text())
        d.pop("counts", None)
        d.pop("longest_dtm", None)
        d["shards"] = [ShardInfo(**s) for s in d["shards"]]
        manifest = TableManifest(**d)
    except (ValueError, TypeError, KeyError) as e:
        raise CorruptTableError(f"{path}: unreadable manifest ({e})") from e
    if manifest.format_version != FORMAT_VERSION:
        raise CorruptTableError(f"{path}: format version {manifest.format_version}, this reader knows {FORMAT_VERSION}")
    return manifest


def check_shard(folder: Path, info: ShardInfo, *, hash_check: bool = True) -> None:
    """Raise CorruptTableError unless the shard file matches its manifest entry."""
    path = Path(folder) / info.file
    if not path.exists():
        raise CorruptTableError(f"{path}: shard listed in the manifest is missing")
    size = path.stat().st_size
    if size != info.bytes:
        raise CorruptTableError(f"{path}: {size} bytes, the manifest says {info.bytes} (truncated or replaced)")
    if hash_check and _sha256(path) != info.sha256:
        raise CorruptTableError(f"{path}: sha256 does not match the manifest (corrupted bytes)")


def table_complete(folder: Path, material: str, *, hash_check: bool = True) -> bool:
    """Whether ``folder`` holds a complete, checksum-valid table of ``material``."""
    try:
        manifest = read_manifest(folder)
        if manifest is None or manifest.material != material:
            return False
        for info in manifest.shards:
            check_shard(folder, info, hash_check=hash_check)
    except CorruptTableError:
        return False
    return True


def read_shard_values(folder: Path, info: ShardInfo, material: str, *, hash_check: bool = True) -> np.ndarray:
    """Final values (uint16, see generate.kernels) of one shard, after checking it."""
    check_shard(folder, info, hash_check=hash_check)
    path = Path(folder) / info.file
    try:
        pf = pq.ParquetFile(path)
        meta = pf.schema_arrow.metadata or {}
        expected = {b"tablebase.material": material.encode(), b"tablebase.side": info.side.encode(),
                    b"tablebase.start": str(info.start).encode(), b"tablebase.stop": str(info.stop).encode()}
        for k, v in expected.items():
            if meta.get(k) != v:
                raise CorruptTableError(f"{path}: footer says {k.decode()}={meta.get(k)!r}, expected {v.decode()!r}")
        table = pf.read()
    except (OSError, pa.ArrowException) as e:
        raise CorruptTableError(f"{path}: unreadable Parquet ({e})") from e
    if table.num_rows != info.rows:
        raise CorruptTableError(f"{path}: {table.num_rows} rows, the manifest says {info.rows}")
    wdl = table.column("wdl")
    legal = wdl.is_valid().to_numpy(zero_copy_only=False)
    wdl = wdl.fill_null(0).to_numpy()
    dtm = table.column("dtm").fill_null(0).to_numpy()
    return from_wdl_dtm(wdl, dtm, legal)


def load_side(folder: Path, material: str, side: int, *, hash_check: bool = True,
              into: np.ndarray | None = None) -> np.ndarray:
    """Final values (uint16) of one side to move (0: White) of a complete table, written
    into the array ``into`` when given (so that a caller that gathers tables holds no
    second copy)."""
    manifest = read_manifest(folder)
    if manifest is None:
        raise FileNotFoundError(f"{folder}: no manifest.json: table {material} is missing or incomplete")
    if manifest.material != material:
        raise CorruptTableError(f"{folder}: manifest is for {manifest.material}, not {material}")
    if into is not None and len(into) != manifest.index_size:
        raise ValueError(f"{material}: {manifest.index_size} values per side, room for {len(into)}")
    val = np.full(manifest.index_size, 0xFFFF, dtype=np.uint16) if into is None else into
    covered = 0
    for info in manifest.shards:
        if info.side == SIDES[side]:
            val[info.start:info.stop] = read_shard_values(folder, info, material, hash_check=hash_check)
            covered += info.rows
    if covered != manifest.index_size:
        raise CorruptTableError(f"{folder}: shards of side {SIDES[side]} cover {covered} of "
                                f"{manifest.index_size} indices")
    return val


def load_table(folder: Path, material: str, *, hash_check: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Final values of a complete table, one uint16 array per side to move (White, Black)."""
    return (load_side(folder, material, 0, hash_check=hash_check),
            load_side(folder, material, 1, hash_check=hash_check))
