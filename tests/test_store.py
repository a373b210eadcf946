"""The shard format: storage orders, don't-care rows, format versions, and the compiled
prober against its slow twin (python-chess moves, whole slices, no pruning)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import shutil
from pathlib import Path

import chess
import numpy as np
import pyarrow.parquet as pq
import pytest

from tablebase.endgame.index import IndexScheme
from tablebase.endgame.material import all_materials, dependency_order
from tablebase.endgame.pychess import index_board
from tablebase.generate import values as V
from tablebase.generate.exact import load_side, load_table
from tablebase.generate.pipeline import generate_table
from tablebase.probe import open_tablebase
from tablebase.probing.reference import ReferenceProber
from tablebase.store import FORMAT_VERSION, TableFormatError, TableReader, read_manifest, table_complete
from tablebase.store.exact import EXACT_FOLDER, exact_path, read_exact
from tablebase.store.layout import candidate_orders, from_storage, storage_row, to_storage


def test_storage_rows_are_a_permutation_of_the_box():
    """The probe's row arithmetic (numba) agrees with numpy's transpose of the box."""
    for key in ("KvK", "KQvKR", "KRvKP", "KBBvK", "KPPvKP"):
        scheme = IndexScheme.of(key)
        for s in (0, scheme.num_slices - 1):
            lo, hi = scheme.slice_range(s)
            shape = scheme.slice_shape(s)
            for order in candidate_orders(scheme)[:6]:
                index = to_storage(np.arange(lo, hi), shape, order)
                assert np.array_equal(from_storage(index, shape, order), np.arange(lo, hi))
                o = np.full(8, -1, dtype=np.int64)
                o[:len(order)] = order
                for row in np.random.default_rng(1).integers(0, hi - lo, 50):
                    assert storage_row(scheme.desc, o, scheme.king_pairs_per_slice, index[row]) == (s, row)


def test_dont_care_fill_respects_each_rows_bound():
    """Free rows take any value; bounded rows only values not better for the side to
    move than their own; fixed rows keep theirs; runs get longer."""
    rng = np.random.default_rng(7)
    codes = np.array([0, 2, 4, 6, 10, 1, 3, 7, 11], dtype=np.int16)
    value = rng.choice(codes, 20000)
    kinds = rng.choice([V.FIXED, V.FREE, V.BOUNDED], 20000, p=[0.5, 0.2, 0.3]).astype(np.uint8)
    filled = value.copy()
    V.fill_dont_care(filled, kinds)
    rank = np.vectorize(V.rank_of_stored)
    fixed, bounded = kinds == V.FIXED, kinds == V.BOUNDED
    assert np.array_equal(filled[fixed], value[fixed])
    assert np.all(rank(filled[bounded]) <= rank(value[bounded]))
    assert np.count_nonzero(np.diff(filled)) < 0.6 * np.count_nonzero(np.diff(value))


def test_stored_ranks_are_the_probes_ranks_of_exact_codes():
    """The probes compare a row's rank with an exact code's: the two scales must agree."""
    from tablebase.probing.engine import _rank
    codes = np.arange(V.MAX_DEPTH + 2, dtype=np.int16)
    stored = [V.rank_of_stored(c) for c in codes]
    assert stored == [_rank(e) for e in V.exact_from_stored(codes)]
    wdl, dtm, _ = V.to_wdl_dtm(V.exact_from_stored(codes))
    assert sorted(codes, key=lambda c: stored[c]) == sorted(codes, key=lambda c: (wdl[c], -wdl[c] * abs(dtm[c])))


def every_finished_code() -> np.ndarray:
    """Each finished code a table holds (exit marks kept), at every depth, and ILLEGAL."""
    d = np.arange(V.MAX_DEPTH + 1, dtype=np.uint16)
    return np.concatenate([V.DECIDED | d, V.EXIT_DECIDED | d, [V.DRAW, V.EXIT_DRAW, V.ILLEGAL]]).astype(np.uint16)


def test_stored_coding_and_counts_match_numpy():
    """The compiled ``value`` coding and a shard's counts against numpy's expressions of
    them (the slow twins), on every finished code in a shuffled order."""
    val = np.random.default_rng(3).permutation(np.repeat(every_finished_code(), 3))
    d = (val & V.DEPTH_MASK).astype(np.int16)
    decided = ((val & V.DECIDED_KIND) == V.DECIDED) & (val != V.ILLEGAL)
    want_value = np.where(decided, d + 1, 0).astype(np.int16)
    want_kinds = np.full(val.shape, V.FIXED, dtype=np.uint8)
    want_kinds[((val & V.KIND_MASK) == V.EXIT_DECIDED) | (val == V.EXIT_DRAW)] = V.BOUNDED
    want_kinds[val == V.ILLEGAL] = V.FREE
    value, kinds = V.stored_coding(val)
    assert np.array_equal(value, want_value) and np.array_equal(kinds, want_kinds)
    assert np.array_equal(V.exact_from_stored(value)[val != V.ILLEGAL], V.plain(val)[val != V.ILLEGAL])

    wdl, dtm, legal = V.to_wdl_dtm(V.plain(val))
    want = (np.count_nonzero(wdl > 0), np.count_nonzero((wdl == 0) & legal), np.count_nonzero(wdl < 0),
            int(np.abs(dtm).max()))
    assert V.value_counts(val) == want
    assert want[0] > 0 and want[1] > 0 and want[2] > 0 and want[3] == V.MAX_DEPTH


def test_resolve_takes_the_better_of_row_and_exits():
    win = lambda d: V.DECIDED | np.uint16(d)  # noqa: E731 - d odd: a win, even: a loss
    none = V.MAX_DEPTH + 1
    assert V.resolve(win(9), 5, False, 0) == win(5)  # a faster capture
    assert V.resolve(win(5), 9, False, 0) == win(5)  # a slower one
    assert V.resolve(V.DRAW, 7, True, 0) == win(7)
    assert V.resolve(win(4), none, True, 0) == V.DRAW  # a losing row, a drawing capture
    assert V.resolve(win(4), none, False, 10) == win(10)  # the longest defence is a capture
    assert V.resolve(win(12), none, False, 10) == win(12)
    assert V.resolve(V.DRAW, none, False, 10) == V.DRAW


@pytest.mark.parametrize("key", ["KQvKR", "KRvKP", "KPvKP", "KBNvK"])
def test_shards_hold_no_row_better_than_its_value(tables_34, key):
    """Read as exact codes, rows of legal positions are never better for the side to
    move than the position's value: a don't-care row is a lower bound."""
    exact = load_table(tables_34, key)
    rank = np.vectorize(lambda v: _rank(int(v)))
    lowered = 0
    with TableReader(tables_34 / key, key) as reader:
        for stm in (0, 1):
            rows = np.concatenate([reader.stored_slice(stm, s) for s in range(reader.scheme.num_slices)])
            sample = np.flatnonzero(exact[stm] != V.ILLEGAL)[::97]
            assert np.all(rank(rows[sample]) <= rank(exact[stm][sample]))
            lowered += np.count_nonzero(rows[sample] != exact[stm][sample])
    assert lowered > 0  # some rows are don't-cares


def _rank(v: int) -> int:
    if v == V.DRAW:
        return 0
    d = v & int(V.DEPTH_MASK)
    return 32768 - d if d % 2 else d - 32768


def _boards(key: str, n: int, seed: int) -> list[chess.Board]:
    rng = np.random.default_rng(seed)
    scheme = IndexScheme.of(key)
    out = []
    while len(out) < n:
        stm, idx = int(rng.integers(2)), int(rng.integers(scheme.size))
        board = index_board(key, stm, idx)
        if board is not None and board.is_valid():
            out.append(board)
    return out


@pytest.mark.parametrize("key", all_materials(3) + all_materials(4))
def test_compiled_probes_equal_the_slow_twin(tables_34, key):
    reference = ReferenceProber(tables_34)
    with open_tablebase(tables_34) as tb:
        for board in _boards(key, 60, seed=len(key)):
            want = reference.value(board)
            assert (tb.probe_wdl(board), tb.probe_dtm(board)) == want, board.fen()
    reference.close()


# -- formats ----------------------------------------------------------------------------


def _copy(tables_34, tmp_path, key):
    for k in dependency_order([key]):
        shutil.copytree(tables_34 / k, tmp_path / k)
    return tmp_path


def test_a_table_of_format_1_is_named_and_replaced(tables_34, tmp_path):
    """A folder as format 1 wrote it (manifest.json beside w-/b- shards) is refused with
    both versions and the command that regenerates it; generate replaces it."""
    _copy(tables_34, tmp_path, "KRvK")
    old = tmp_path / "KRvK"
    shutil.rmtree(old)
    old.mkdir()
    (old / "manifest.json").write_text(json.dumps({"format_version": 1, "material": "KRvK"}))
    (old / "w-00000.parquet").write_bytes(b"PAR1")
    board = chess.Board("8/8/8/8/8/2k5/8/K2R4 w - - 0 1")
    with open_tablebase(tmp_path) as tb:
        with pytest.raises(TableFormatError) as e:
            tb.probe_wdl(board)
    text = str(e.value)
    assert "format 1" in text and f"reads format {FORMAT_VERSION}" in text
    assert f"tablebase generate KRvK --out {tmp_path}" in text
    assert not table_complete(old, "KRvK")
    stats = generate_table(tmp_path, "KRvK")
    assert not stats.skipped and table_complete(old, "KRvK")
    assert not (old / "manifest.json").exists() and not (old / "w-00000.parquet").exists()
    for info in read_manifest(old).shards:
        assert (old / info.file).read_bytes() == (tables_34 / "KRvK" / info.file).read_bytes()


def test_a_newer_format_is_refused_naming_both(tables_34, tmp_path):
    _copy(tables_34, tmp_path, "KRvK")
    path = tmp_path / "KRvK" / "side=w" / "manifest.parquet"
    meta = json.loads(pq.read_schema(path).metadata[b"tablebase.manifest"])
    meta["format_version"] = FORMAT_VERSION + 1
    table = pq.read_table(path).replace_schema_metadata({b"tablebase.manifest": json.dumps(meta)})
    pq.write_table(table, path)
    with pytest.raises(TableFormatError, match=f"format {FORMAT_VERSION + 1}, this version of tablebase reads "
                                                f"format {FORMAT_VERSION}"):
        read_manifest(tmp_path / "KRvK")


def _readme_sql() -> str:
    """The DuckDB recipe exactly as the README gives it."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = readme.split("### Reading the tables without this package")[1].split("```sql\n")[1].split("```")[0]
    return block.strip().rstrip(";")


def _recipe_by_pyarrow(folder: Path):
    """The README's pyarrow recipe: the dataset, then the same arithmetic with pyarrow.compute."""
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    t = ds.dataset(folder, format="parquet", partitioning="hive").to_table()
    dtz, value = t.column("dtz"), t.column("value")
    neg = pc.less(dtz, 0)
    draw, won = pc.equal(value, 0), pc.equal(pc.bit_wise_and(value, 1), 0)
    return {"side": t.column("side").to_numpy(zero_copy_only=False), "index": t.column("index").to_numpy(),
            "wdl": pc.sign(dtz).to_numpy(),
            "dtz": pc.if_else(neg, pc.min_element_wise(pc.add(dtz, 1), -1), dtz).to_numpy(),
            "dtm": pc.if_else(draw, 0, pc.if_else(won, pc.subtract(value, 1), pc.subtract(1, value))).to_numpy(),
            "wdl_of_value": pc.if_else(draw, 0, pc.if_else(won, 1, -1)).to_numpy()}


@pytest.mark.parametrize("engine", ["duckdb", "pyarrow"])
def test_the_readme_recipes_give_the_probe_librarys_values(tables_34, engine):
    """The folder is one dataset (the side a hive column, the zero-row manifests adding no
    rows); the README's recipes give every legal position's wdl, wdl50 and dtz, and the
    dtm of every position without a capture or promotion, as the probe library does."""
    key = "KRvKP"
    folder = tables_34 / key
    if engine == "duckdb":
        duckdb = pytest.importorskip("duckdb", reason="duckdb is in the test extra: pip install -e '.[test]'")
        sql = _readme_sql().replace("data/tables/KQvKR", str(folder))
        rows = duckdb.sql(sql).fetchnumpy()
        rows = {k: np.asarray(v) for k, v in rows.items()}
    else:
        rows = _recipe_by_pyarrow(folder)
    scheme = IndexScheme.of(key)
    assert len(rows["index"]) == 2 * scheme.size
    own = load_table(tables_34, key)
    rng = np.random.default_rng(3)
    checked = direct = 0
    with open_tablebase(tables_34) as tb:
        for stm, side in enumerate("wb"):
            mine = rows["side"] == side
            order = np.argsort(rows["index"][mine])
            # Each column of this side in index order.
            by_index = {name: column[mine][order] for name, column in rows.items()}
            assert np.array_equal(by_index["index"], np.arange(scheme.size))
            legal = np.flatnonzero(own[stm] != V.ILLEGAL)
            for x in rng.choice(legal, 400, replace=False):
                board = index_board(key, stm, int(x))
                assert by_index["wdl"][x] == tb.probe_wdl(board), board.fen()
                assert by_index["dtz"][x] == tb.probe_dtz(board), board.fen()
                if "wdl50" in rows:
                    assert by_index["wdl50"][x] == tb.probe_wdl50(board), board.fen()
                if not any(board.is_capture(m) or m.promotion for m in board.legal_moves):
                    assert by_index["dtm"][x] == tb.probe_dtm(board), board.fen()
                    if "wdl_of_value" in rows:  # the README's wdl for tables without dtz, from value
                        assert by_index["wdl_of_value"][x] == tb.probe_wdl(board), board.fen()
                    direct += 1
                checked += 1
    assert checked == 800 and direct > 100


def test_orders_are_chosen_per_side_and_recorded(tables_34):
    orders = set()
    for key in ("KNPvK", "KQvKR", "KRvKP"):
        manifest = read_manifest(tables_34 / key)
        for side in "wb":
            order = tuple(manifest.orders[side])
            assert sorted(order) == list(range(len(order)))
            orders.add(order)
    assert len(orders) > 1  # not one fixed order for every table


def test_candidate_orders_cover_every_permutation():
    assert len(candidate_orders(IndexScheme.of("KQRvKR"))) == len(list(itertools.permutations(range(4))))


# -- the exact codes kept beside the tables ------------------------------------------------


def test_kept_exact_codes_are_the_resolved_ones_and_a_damaged_copy_is_ignored(tables_34, tmp_path):
    """What the generator keeps of each shard reads as what resolving the shard through
    its sub-tables gives (the slow twin); a copy with a flipped byte, a truncated one and
    one of other bytes than the shard's are each ignored, the shard resolved instead."""
    folder = _copy(tables_34, tmp_path, "KRvKP")  # the tables alone: a first load resolves them and keeps copies
    for key in ("KRvK", "KRvKP"):
        for side in (0, 1):
            first = load_side(folder, key, side, kept=True)
            with TableReader(folder / key, key) as reader:
                assert all(read_exact(folder / key, shard.info) is not None for shard in reader.shards[side])
            resolved = load_side(folder, key, side)
            assert np.array_equal(first, resolved) and np.array_equal(load_side(folder, key, side, kept=True), resolved)
    with TableReader(folder / "KRvKP", "KRvKP") as reader:
        info = reader.shards[0][1].info
    path = exact_path(folder / "KRvKP", info)
    good = path.read_bytes()
    for damaged in (good[:-1] + bytes([good[-1] ^ 1]), good[:len(good) // 2], good[:40] + good[41:]):
        path.write_bytes(damaged)
        assert read_exact(folder / "KRvKP", info) is None
        assert np.array_equal(load_side(folder, "KRvKP", 0, kept=True), load_side(folder, "KRvKP", 0))
        assert path.read_bytes() == good  # resolved, and kept again
    other = dataclasses.replace(info, sha256="0" * 64)
    assert read_exact(folder / "KRvKP", other) is None


def test_a_table_generated_from_kept_codes_is_the_one_generated_from_shards(tables_34, tmp_path):
    """KPvKP's init reads 10 sub-table sides, and those read 20 more: from their kept
    exact codes, the shards are byte for byte those generated by resolving every one."""
    folder = _copy(tables_34, tmp_path, "KPvKP")
    shutil.rmtree(folder / EXACT_FOLDER, ignore_errors=True)
    shutil.rmtree(folder / "KPvKP")
    generate_table(folder, "KPvKP")
    resolved = {i.file: i.sha256 for i in read_manifest(folder / "KPvKP").shards}
    kept = list((folder / EXACT_FOLDER).glob("*/*.zst"))
    assert {p.parent.name for p in kept} >= {"KQvKP", "KPvK", "KQvKQ"}, sorted({p.parent.name for p in kept})
    shutil.rmtree(folder / "KPvKP")
    generate_table(folder, "KPvKP")
    assert {i.file: i.sha256 for i in read_manifest(folder / "KPvKP").shards} == resolved
