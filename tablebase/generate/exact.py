"""Exact values of complete tables, read back from their shards.

A shard's don't-care rows read as lower bounds (see :mod:`tablebase.generate.values`): a
position's exact value is the better of its row and its best capture or promotion, which
the sub-tables hold. So loading one side of a table loads, exactly and first, the sides
of its sub-tables that this side's exits reach, recursively; each is loaded once per call.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from ..endgame.index import IndexScheme
from ..endgame.material import Material
from ..endgame.movegen import ExitMap
from ..errors import MissingTableError
from ..store import CorruptTableError, TableReader, table_complete
from ..store.exact import read_exact, write_exact
from . import kernels as K
from .values import class_of_stored_dtz, zcodes_from_stored
from .partition import SubtableValues

Memo = dict[tuple[str, int], np.ndarray]


def load_side(out: Path, key: str, side: int, *, into: np.ndarray | None = None, hash_check: bool = True,
              memo: Memo | None = None, kept: bool = False) -> np.ndarray:
    """Exact codes of one side to move (0: White) of the complete table ``key`` under the
    tables folder ``out``, written into ``into`` when given (a caller that gathers tables
    then holds no second copy). ``memo`` shares sub-tables between calls. ``kept``: read
    the exact codes the generator kept of each shard (:mod:`tablebase.store.exact`) where
    they match it, resolving (and keeping) only the others; else resolve every shard."""
    out = Path(out)
    memo = {} if memo is None else memo
    size = IndexScheme.of(key).size
    if into is not None and len(into) != size:
        raise ValueError(f"{key}: {size} values per side, room for {len(into)}")
    known = memo.get((key, side))
    if known is not None:
        if into is None:
            return known
        into[:] = known
        return into
    val = np.empty(size, dtype=np.uint16) if into is None else into
    with TableReader(out / key, key, hash_check=hash_check) as reader:
        scheme = reader.scheme
        subs = None  # read only for a shard without its exact codes kept
        e = ExitMap.of(scheme.material)
        for sl in range(scheme.num_slices):
            lo, hi = scheme.slice_range(sl)
            codes = read_exact(out / key, reader.shards[side][sl].info) if kept else None
            if codes is not None:
                val[lo:hi] = codes
                continue
            if subs is None:
                subs = _exact_subtables(out, key, side, memo, hash_check, kept)
            bad = K.resolve_slice(scheme.desc, side, lo, hi, reader.stored_slice(side, sl), e.arrays, subs.values,
                                  subs.offsets, val[lo:hi])
            if bad:
                raise CorruptTableError(f"{out / key}: {bad} captures or promotions of slice {sl} lead to positions "
                                        "their sub-tables mark illegal (a sub-table was replaced?)")
            if kept:  # for the next reader
                write_exact(out / key, reader.shards[side][sl].info, val[lo:hi])
    pa.default_memory_pool().release_unused()  # Parquet's buffers: not needed again
    if into is None:
        memo[key, side] = val
    return val


def _exact_subtables(out: Path, key: str, side: int, memo: Memo, hash_check: bool, kept: bool) -> SubtableValues:
    exits = ExitMap.of(Material.parse(key))
    subs = exits.subtables
    for sub in subs:
        if not table_complete(out / sub.key, sub.key, hash_check=False):
            raise MissingTableError(sub.key, f"sub-table {sub.key} of {key} is missing or incomplete in {out}; "
                                             f"make it with: tablebase generate {sub.key} --out {out}")
    return SubtableValues.build([IndexScheme.of(sub.key).size for sub in subs], exits.sides_reached(side),
                                lambda i, s, into: load_side(out, subs[i].key, s, into=into, hash_check=hash_check,
                                                             memo=memo, kept=kept))


def load_table(out: Path, key: str, *, hash_check: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Exact codes of a complete table, one uint16 array per side to move (White, Black)."""
    memo: Memo = {}
    return (load_side(out, key, 0, hash_check=hash_check, memo=memo),
            load_side(out, key, 1, hash_check=hash_check, memo=memo))


def load_subtables(out: Path, key: str, stm: int, *, kept: bool = True) -> SubtableValues:
    """Exact values of the direct sub-tables of ``key`` under ``out``: the sides that the
    exits of side to move ``stm`` reach (what init reads); ``kept``: as :func:`load_side`."""
    return _exact_subtables(Path(out), key, stm, {}, True, kept)


def load_classes(out: Path, key: str, side: int, *, into: np.ndarray | None = None,
                 hash_check: bool = True) -> np.ndarray:
    """The classes (int8, python-chess's ``probe_wdl`` values at clock 0) of one side to
    move of the complete table ``key``, from its ``dtz`` column alone (illegal indices:
    any class)."""
    out = Path(out)
    scheme = IndexScheme.of(key)
    cls = np.empty(scheme.size, dtype=np.int8) if into is None else into
    with TableReader(out / key, key, hash_check=hash_check) as reader:
        for sl in range(scheme.num_slices):
            lo, hi = scheme.slice_range(sl)
            cls[lo:hi] = class_of_stored_dtz(reader.stored_dtz_slice(side, sl))
    pa.default_memory_pool().release_unused()
    return cls


def load_dtz_side(out: Path, key: str, side: int, illegal: np.ndarray) -> np.ndarray:
    """The DTZ codes of one side to move of a complete table, given where it is illegal."""
    scheme = IndexScheme.of(key)
    with TableReader(Path(out) / key, key) as reader:
        dtz = np.concatenate([reader.stored_dtz_slice(side, sl) for sl in range(scheme.num_slices)])
    return zcodes_from_stored(dtz, illegal)


def zeroing_sides(key: str, stm: int) -> list[tuple[int, int]]:
    """The sides of sub-tables a DTZ pass of side ``stm`` reads: those its captures and
    promotions reach, and with pawns on both sides every side (the en-passant captures of
    the other side, which its double steps allow)."""
    material = Material.parse(key)
    exits = ExitMap.of(material)
    if "P" in material.white and "P" in material.black:
        return [(sub, side) for sub in range(len(exits.subtables)) for side in (0, 1)]
    return exits.sides_reached(stm)


def load_subtable_classes(out: Path, key: str, stm: int) -> SubtableValues:
    """The classes of the direct sub-tables of ``key`` under ``out`` that a DTZ pass of
    side to move ``stm`` reads (:func:`zeroing_sides`)."""
    out = Path(out)
    subs = ExitMap.of(Material.parse(key)).subtables
    for sub in subs:
        if not table_complete(out / sub.key, sub.key, hash_check=False):
            raise FileNotFoundError(f"sub-table {sub.key} of {key} is missing or incomplete in {out}")
    return SubtableValues.build([IndexScheme.of(sub.key).size for sub in subs], zeroing_sides(key, stm),
                                lambda i, s, into: load_classes(out, subs[i].key, s, into=into), dtype=np.int8)
