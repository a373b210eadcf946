"""The 50-move rule: WDL50 and DTZ50'' beside eval and DTM.

The values themselves are checked against Syzygy in ``test_generate`` (a sample covering
every king pair of every 3-4 piece table, ``scripts/check_oracle.py``) and
``test_probe``; here: the generation's invariants, the halfmove clock's categories and
bad input.
"""

from __future__ import annotations

import chess
import numpy as np
import pytest

import tablebase
from tablebase.endgame.material import dependency_order
from tablebase.generate.exact import load_dtz_side, load_subtable_classes, load_table
from tablebase.generate.pipeline import LocalPartitions, run_dtz, run_passes
from tablebase.generate.values import ILLEGAL, KIND_MASK, ZLOST, ZWON, has_cursed
from tablebase.generate.verify import verify_table
from tablebase.store import DEFAULT_CODING, read_manifest

from test_generate import copy_tables


@pytest.fixture(scope="module")
def tb(tables_34):
    with tablebase.open_tablebase(tables_34, cache_bytes=64 << 20) as tb:
        yield tb


def test_dtz_does_not_depend_on_partitioning(tables_34):
    """Three partitions exchanging frontiers give the DTZ codes of the stored one-partition run."""
    key = "KRvKP"
    parts = LocalPartitions(key, tables_34, 3)
    run_passes(key, parts)
    run_dtz(key, parts)
    parts.finish(None, (), DEFAULT_CODING)
    own = load_table(tables_34, key)
    for stm, got in enumerate(parts.values("dtz")):
        assert np.array_equal(got, load_dtz_side(tables_34, key, stm, own[stm] == ILLEGAL))


@pytest.mark.parametrize("key", ["KRvKN", "KRPvK", "KPvKP"])
def test_dtz_init_from_dtm_init_is_zinit(tables_34, key, monkeypatch):
    """The DTZ init derived from the DTM init codes (no piece move generated; a side with
    pawns generating its pawn moves, en passant included) is the one :func:`zinit_slice`
    generates from every move: with the captures and promotions read from the codes, and
    read from the sub-tables' classes as where one of them holds a cursed win or blessed
    loss (forced here: the 3-4 piece tables' sub-tables hold none)."""
    assert not any(has_cursed(load_subtable_classes(tables_34, key, stm).values) for stm in (0, 1))
    codes = {}
    for way in ("generated", "codes", "classes"):
        if way == "classes":
            monkeypatch.setattr(tablebase.generate.values, "has_cursed", lambda classes: True)
        parts = LocalPartitions(key, tables_34, 2)
        run_passes(key, parts)
        assert all(len(p.init_packed[stm]) == len(p.slices) for p in parts.parts for stm in (0, 1))
        if way == "generated":
            for p in parts.parts:
                p.init_packed = [{}, {}]
        run_dtz(key, parts)
        parts.finish(None, (), DEFAULT_CODING)
        codes[way] = parts.values("dtz")
    for way in ("codes", "classes"):
        for derived, generated in zip(codes[way], codes["generated"]):
            assert np.array_equal(derived, generated), way
    own = load_table(tables_34, key)
    for stm in (0, 1):
        assert np.array_equal(codes["codes"][stm], load_dtz_side(tables_34, key, stm, own[stm] == ILLEGAL))


def test_dtz_result_is_the_dtm_result(tables_34):
    """Both games score every position alike: won (within the rule or cursed), drawn or lost."""
    for key in ("KQvK", "KPvK", "KRvKP", "KPvKP", "KBNvK"):
        own = load_table(tables_34, key)
        for stm in (0, 1):
            z = load_dtz_side(tables_34, key, stm, own[stm] == ILLEGAL)
            w, _, legal = tablebase.generate.values.to_wdl_dtm(own[stm])
            kind = z & KIND_MASK
            zw = np.where(kind == ZWON, 1, np.where(kind == ZLOST, -1, 0))
            assert np.array_equal(zw[legal], w[legal]), key
            assert (z[legal] != ILLEGAL).all()


def test_verify_rederives_dtz_and_catches_a_wrong_one(tables_34, tmp_path):
    key = "KPvK"
    copy_tables(tables_34, tmp_path, dependency_order([key]))
    assert verify_table(tmp_path, key).ok
    # One win one ply longer: a position of the table whose DTZ then disagrees with its moves.
    import pyarrow.parquet as pq
    manifest = read_manifest(tmp_path / key)
    info = max(manifest.shards, key=lambda i: i.wins)
    path = tmp_path / key / info.file
    table = pq.read_table(path)
    dtz = table.column("dtz").to_numpy().copy()
    dtz[int(np.flatnonzero(dtz > 3)[0])] += 1
    import pyarrow as pa
    table = table.set_column(2, "dtz", pa.array(dtz, type=pa.int16()))
    pq.write_table(table.replace_schema_metadata(pq.read_schema(path).metadata), path, row_group_size=1 << 15)
    info_ok = verify_table(tmp_path, key)
    assert not info_ok.ok  # the checksum catches it first
    from dataclasses import replace
    from tablebase.store import write_manifest
    from tablebase.store.files import sha256_of
    shards = [replace(s, bytes=path.stat().st_size, sha256=sha256_of(path)) if s.file == info.file else s
              for s in manifest.shards]
    write_manifest(tmp_path / key, replace(manifest, shards=shards))
    result = verify_table(tmp_path, key)
    assert result.error is None and result.dtz_mismatches >= 1


def test_categories_follow_the_halfmove_clock(tb):
    """A win of DTZ n: clock 0 and 100 - n keep it, 101 - n and 99 let the defender claim
    first; the loser's side mirrors it; 150 plies is the 75-move rule's draw."""
    board = chess.Board("8/8/8/4k3/8/8/Q7/K7 w - - 0 1")  # KQvK, White to move wins
    n = tb.probe_dtz(board)
    assert tb.probe_wdl50(board) == 2 and 1 < n < 100
    categories = {}
    for clock in (0, 100 - n, 101 - n, 99, 149, 150):
        board.halfmove_clock = clock
        categories[clock] = tb.probe_category(board)
    assert categories == {0: "win", 100 - n: "win", 101 - n: "maybe-win", 99: "maybe-win", 149: "maybe-win",
                          150: "draw"}
    loser = chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1")  # KRvK, White to move loses
    m = -tb.probe_dtz(loser)
    assert tb.probe_wdl50(loser) == -2 and m > 1
    for clock, want in ((0, "loss"), (100 - m, "loss"), (101 - m, "maybe-loss"), (99, "maybe-loss"),
                        (150, "draw")):
        loser.halfmove_clock = clock
        assert tb.probe_category(loser) == want, clock
    mate = chess.Board("8/8/8/8/8/2k5/1q6/K7 w - - 120 1")
    assert mate.is_checkmate() and tb.probe_category(mate) == "loss" and tb.probe_dtz(mate) == -1


def test_move_values_carry_dtz_and_the_clock(tb):
    """A move's dtz counts the move (a zeroing move that keeps the win: 1); its category
    is the mover's with the clock the move leaves."""
    board = chess.Board("8/8/8/8/8/4k3/4p3/2K5 b - - 0 1")  # KPvK: Black wins by promoting
    moves = {m.move.uci(): m for m in tb.probe_moves(board)}
    for uci, m in moves.items():
        child = board.copy()
        child.push_uci(uci)
        if board.is_zeroing(chess.Move.from_uci(uci)):
            assert m.dtz == {2: -1, 0: 0, -2: 1}[tb.probe_wdl50(child)]
        elif m.wdl > 0:
            assert m.dtz == 1 - tb.probe_dtz(child) or (child.is_checkmate() and m.dtz == 1)
        assert m.category == {"win": "loss", "loss": "win", "draw": "draw", "maybe-win": "maybe-loss",
                              "maybe-loss": "maybe-win"}[tb.probe_category(child)]
    assert min(m.dtz for m in moves.values() if m.dtz > 0) == tb.probe_dtz(board)  # the best move's


def test_best_move_keeps_the_win_in_hand(tb):
    """With the clock near 100, the 50-move best move zeroes (or mates) in time where the
    fastest mate would let the clock run out."""
    found = 0
    for fen in ("8/8/8/8/8/4k3/4p3/2K5 b - - 0 1", "8/8/8/2k5/8/8/1P6/1K6 w - - 0 1",
                "8/8/8/8/3k4/8/2P5/2K5 w - - 0 1"):
        board = chess.Board(fen)
        n = tb.probe_dtz(board)
        if tb.probe_wdl50(board) != 2:
            continue
        board.halfmove_clock = 100 - n
        assert tb.probe_category(board) == "win"
        move = tb.best_move(board, fifty_move_rule=True)
        chosen = next(m for m in tb.probe_moves(board) if m.move == move)
        assert chosen.category == "win"
        found += 1
    assert found


def test_bad_clocks_are_clear_errors(tb):
    for fen in ("8/8/8/4k3/8/8/Q7/K7 w - - x 1", "8/8/8/4k3/8/8/Q7/K7 w - - -3 1"):
        with pytest.raises(tablebase.probe.BadFenError, match="half-move clock"):
            tb.probe_wdl_batch([fen])
    board = chess.Board("8/8/8/4k3/8/8/Q7/K7 w - - 0 1")
    board.halfmove_clock = -3
    with pytest.raises(tablebase.probe.PositionError, match="halfmove clock -3 is negative"):
        tb.probe_category(board)


def test_generate_summary_counts_cursed_and_blessed(tables_34):
    manifest = read_manifest(tables_34 / "KQvK")
    counts = manifest.counts()
    assert {"cursed_wins", "blessed_losses"} <= set(counts["w"])
    assert manifest.metrics == ["wdl", "dtm", "wdl50", "dtz"]
    assert manifest.longest_dtz > 0


def test_dtz_column_kernels_equal_their_numpy_twins():
    """The compiled conversions of finished DTZ codes against the plain numpy formulas."""
    from tablebase.generate.values import DEPTH_MASK, DRAW, RULE_PLIES, class_of_stored_dtz, dtz_counts, dtz_stored
    rng = np.random.default_rng(5)
    kinds = rng.choice(np.array([ZWON, ZLOST, DRAW, ILLEGAL], dtype=np.uint16), 100_000)
    zval = np.where((kinds == ZWON) | (kinds == ZLOST), kinds | rng.integers(0, 300, kinds.size).astype(np.uint16),
                    kinds).astype(np.uint16)
    e = (zval & DEPTH_MASK).astype(np.int32)
    stored = np.where(kinds == ZWON, e, np.where(kinds == ZLOST, -e - 1, 0))
    assert np.array_equal(dtz_stored(zval), stored.astype(np.int16))
    classes = np.where(stored > 0, np.where(stored <= RULE_PLIES, 2, 1),
                       np.where(stored < 0, np.where(-stored - 1 <= RULE_PLIES, -2, -1), 0))
    assert np.array_equal(class_of_stored_dtz(stored.astype(np.int16)), classes.astype(np.int8))
    legal = zval != ILLEGAL
    counts = dtz_counts(zval)
    assert counts == (int(np.count_nonzero(classes == 1)), int(np.count_nonzero(classes == -1)), int(e[legal].max()))
    assert all(type(c) is int for c in counts)


def test_has_cursed_finds_a_cursed_or_blessed_class():
    from tablebase.generate.values import has_cursed
    classes = np.array([2, 0, -2, 2], dtype=np.int8)
    assert not has_cursed(classes)
    for c in (1, -1):
        assert has_cursed(np.append(classes, np.int8(c)))


def test_class_of_finished_dtm_codes_equals_its_numpy_twin():
    """The first DTZ pass's classes, from finished DTM codes with their exit marks."""
    from tablebase.generate.values import (DECIDED, DEPTH_MASK, DRAW, EXIT_DECIDED, EXIT_DRAW, class_of_dtm,
                                           class_of_finished, plain)
    rng = np.random.default_rng(6)
    kinds = rng.choice(np.array([DECIDED, EXIT_DECIDED, DRAW, EXIT_DRAW, ILLEGAL], dtype=np.uint16), 100_000)
    depth = rng.integers(0, 600, kinds.size).astype(np.uint16) & DEPTH_MASK
    val = np.where((kinds == DECIDED) | (kinds == EXIT_DECIDED), kinds | depth, kinds).astype(np.uint16)
    assert np.array_equal(class_of_finished(val), class_of_dtm(plain(val)))
    assert set(np.unique(class_of_finished(val))) == {-2, 0, 2}
