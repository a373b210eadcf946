"""The order of a shard's rows.

A slice's indices form a box (:meth:`~tablebase.endgame.index.IndexScheme.slice_shape`):
its king pairs, then one axis per group of identical pieces; index ``lo + i`` is element
``i`` of the box in C order. A shard stores the box with its axes in an ``order`` (slowest
first) chosen per table and side to move: the one whose rows compress best on sample
slices (Syzygy tries piece orders the same way). Measured in ``benchmarks/storage.py``:
the best order saves up to a third of a pawn table's bytes over the index's own order.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
from numba import njit

from ..endgame.index import D_GROUP, D_NGROUPS, D_NKK, D_R, IndexScheme
from ..generate.values import FIXED, FREE, fill_dont_care, stored_coding


def natural_order(scheme: IndexScheme) -> tuple[int, ...]:
    return tuple(range(1 + len(scheme.group_radices)))


def candidate_orders(scheme: IndexScheme) -> list[tuple[int, ...]]:
    """Every order of the box's axes (6 for 4 pieces, 24 for 5, 120 for 6)."""
    return list(itertools.permutations(natural_order(scheme)))


def to_storage(values: np.ndarray, shape: tuple[int, ...], order: tuple[int, ...]) -> np.ndarray:
    """A slice's values (index order) in storage order (a new array)."""
    return np.ascontiguousarray(values.reshape(shape).transpose(order)).ravel()


def from_storage(rows: np.ndarray, shape: tuple[int, ...], order: tuple[int, ...]) -> np.ndarray:
    """Inverse of :func:`to_storage`."""
    return np.ascontiguousarray(rows.reshape([shape[a] for a in order]).transpose(np.argsort(order))).ravel()


def stored_rows(val: np.ndarray, shape: tuple[int, ...], order: tuple[int, ...],
                dont_care: str) -> np.ndarray:
    """The ``value`` column of a slice (finished codes ``val``, index order) in storage
    order, its don't-care rows filled (``dont_care``: "none", "illegal", or "exits":
    illegal rows and the rows whose value a capture or promotion achieves)."""
    value, kinds = stored_coding(val)
    value, kinds = to_storage(value, shape, order), to_storage(kinds, shape, order)
    if dont_care == "illegal":
        kinds[kinds != FREE] = FIXED
    if dont_care != "none":
        fill_dont_care(value, kinds)
    return value


def order_cost(val: np.ndarray, shape: tuple[int, ...], order: tuple[int, ...], dont_care: str) -> int:
    """Bytes of a slice's rows in ``order`` under a fast compressor: the proxy by which
    orders are compared (it ranks them as the shards' own coding does, within 1 % of the
    best on the 3-4 piece tables)."""
    return len(pa.compress(stored_rows(val, shape, order, dont_care), codec="zstd", asbytes=True))


def order_sample(scheme: IndexScheme) -> list[int]:
    """The slices whose rows choose a table's orders (a third and two thirds in)."""
    n = scheme.num_slices
    return sorted({n // 3, (2 * n) // 3})


@njit(cache=True, inline="always")
def _axis(desc, a, kk_local, n_kk, rest):
    """(digit, size) of box axis ``a`` for an index whose king pair is ``kk_local`` in a
    slice of ``n_kk`` king pairs and whose rest is ``rest``."""
    if a == 0:
        return kk_local, n_kk
    g = a - 1
    mult = desc[D_GROUP + 4 * g + 3]
    size = (desc[D_R] if g == 0 else desc[D_GROUP + 4 * (g - 1) + 3]) // mult
    return (rest // mult) % size, size


@njit(cache=True, inline="always")
def storage_row(desc, order, kk_per_slice, idx):
    """(slice, row within its shard) of index ``idx`` for a table side stored in
    ``order`` (int64 array of the box's axes, slowest first)."""
    r_size = desc[D_R]
    span = kk_per_slice * r_size
    s = idx // span
    local = idx - s * span
    kk_local = local // r_size
    rest = local - kk_local * r_size
    n_kk = min(kk_per_slice, desc[D_NKK] - s * kk_per_slice)  # the last slice may be short
    row = 0
    for k in range(desc[D_NGROUPS] + 1):
        digit, size = _axis(desc, order[k], kk_local, n_kk, rest)
        row = row * size + digit
    return s, row
