"""``tablebase verify``: checksums, then every position re-checked against Romano's
definitions from its successors, and its DTZ50'' from its piece moves' DTZ and its
zeroing moves' classes (:func:`~tablebase.generate.kernels.zverify_slice`).

A table whose every position is consistent with its successors (a win of depth d has a
successor lost in d - 1 and none lost sooner; a loss of depth d has only successors won
for the opponent, the slowest in d - 1; a draw has no lost successor and one that is not
won; mates and stalemates are sinks) is exactly the least fixed point, by induction on
depth: this local check is the proof shipped with a table.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..endgame.index import IndexScheme
from ..endgame.movegen import ExitMap
from ..store import CorruptTableError, read_manifest
from . import kernels as K
from .exact import load_classes, load_dtz_side, load_subtable_classes, load_subtables, load_table
from .values import ILLEGAL


@dataclass
class VerifyResult:
    material: str
    positions: int = 0
    mismatches: int = 0
    dtz_mismatches: int = 0
    examples: list[tuple[int, int]] = field(default_factory=list)  # (side to move, index)
    error: str | None = None
    seconds: float = 0.0
    has_dtz: bool = True  # the table holds DTZ, re-checked too

    @property
    def ok(self) -> bool:
        return self.error is None and self.mismatches == 0 and self.dtz_mismatches == 0


def verify_table(out: Path, key: str) -> VerifyResult:
    """Check the shards' checksums and footers, then every position of the table (its
    DTM, and its DTZ where it holds one)."""
    t0 = time.perf_counter()
    result = VerifyResult(key)
    out = Path(out)
    scheme = IndexScheme.of(key)
    e = ExitMap.of(scheme.material)
    try:
        own = load_table(out, key)
        for stm in (0, 1):
            subs = load_subtables(out, key, stm, kept=False)  # the sides this side's exits reach, from their shards
            for s in range(scheme.num_slices):
                lo, hi = scheme.slice_range(s)
                bad = K.verify_slice(scheme.desc, stm, lo, hi, own[stm][lo:hi], own[1 - stm], e.arrays, subs.values,
                                     subs.offsets)
                result.mismatches += len(bad)
                result.examples += [(stm, lo + int(j)) for j in bad[:max(0, 5 - len(result.examples))]]
            result.positions += int(np.count_nonzero(own[stm] != ILLEGAL))
            del subs
        result.has_dtz = read_manifest(out / key).has_dtz
        if not result.has_dtz:
            result.seconds = time.perf_counter() - t0
            return result
        zown = [load_dtz_side(out, key, stm, own[stm] == ILLEGAL) for stm in (0, 1)]
        classes = [load_classes(out, key, stm) for stm in (0, 1)]
        for stm in (0, 1):
            subs = load_subtable_classes(out, key, stm)
            for s in range(scheme.num_slices):
                lo, hi = scheme.slice_range(s)
                bad = K.zverify_slice(scheme.desc, stm, lo, hi, zown[stm][lo:hi], zown[1 - stm], e.arrays, subs.values,
                                      subs.offsets, classes[1 - stm])
                result.dtz_mismatches += len(bad)
                result.examples += [(stm, lo + int(j)) for j in bad[:max(0, 5 - len(result.examples))]]
    except (CorruptTableError, FileNotFoundError) as err:
        result.error = str(err)
        return result
    result.seconds = time.perf_counter() - t0
    return result
