"""Tables without the 50-move rule (``tablebase generate --no-dtz``): WDL and DTM only.

Their ``value`` column is the one a full table stores; the probes of the 50-move rule say
clearly that the table holds no DTZ, and a run that asks for DTZ regenerates them.
"""

from __future__ import annotations

import chess
import numpy as np
import pyarrow.parquet as pq
import pytest

import tablebase
from tablebase.cli import main
from tablebase.config import ConfigError, JobConfig
from tablebase.generate.exact import load_dtz_side, load_table
from tablebase.generate.pipeline import generate
from tablebase.generate.values import ILLEGAL
from tablebase.generate.verify import verify_table
from tablebase.lichess import probe_json
from tablebase.store import TableReader, read_manifest, table_complete
from tablebase.store.manifest import METRICS, METRICS_WITHOUT_DTZ

KEY = "KQvKR"
FEN = "8/8/8/8/2r5/8/2k5/K6Q w - - 0 1"


@pytest.fixture(scope="module")
def dtm_only(tmp_path_factory):
    out = tmp_path_factory.mktemp("dtm-only")
    stats = generate([KEY], out, dtz=False)
    assert [s.material for s in stats] == ["KvK", "KQvK", "KRvK", KEY]
    return out


def test_shards_hold_the_full_tables_value_column_and_no_dtz(dtm_only, tables_34):
    manifest = read_manifest(dtm_only / KEY)
    assert manifest.metrics == METRICS_WITHOUT_DTZ and not manifest.has_dtz
    assert manifest.longest_dtz == 0 and all(s.cursed_wins == s.blessed_losses == 0 for s in manifest.shards)
    assert pq.read_schema(dtm_only / KEY / manifest.shards[0].file).names == ["index", "value"]
    with TableReader(dtm_only / KEY, KEY) as ours, TableReader(tables_34 / KEY, KEY) as full:
        assert ours.orders == full.orders
        for stm in (0, 1):
            for a, b in zip(ours.shards[stm], full.shards[stm]):
                assert np.array_equal(a.read_all(), b.read_all())
        with pytest.raises(tablebase.MissingMetricError, match="--no-dtz"):
            ours.stored_dtz_slice(0, 0)
    assert sum(s.bytes for s in manifest.shards) < 0.6 * read_manifest(tables_34 / KEY).total_bytes
    assert verify_table(dtm_only, KEY).ok and not verify_table(dtm_only, KEY).has_dtz


def test_probes_answer_dtm_and_say_the_dtz_is_missing(dtm_only, tables_34):
    board = chess.Board(FEN)
    with tablebase.open_tablebase(dtm_only) as tb, tablebase.open_tablebase(tables_34) as full:
        assert (tb.probe_wdl(board), tb.probe_dtm(board)) == (full.probe_wdl(board), full.probe_dtm(board))
        for probe in (tb.probe_dtz, tb.probe_wdl50, tb.probe_category):
            with pytest.raises(tablebase.MissingMetricError, match=f"generate {KEY} --out"):
                probe(board)
        assert tb.get_dtz(board, "none") == "none"
        moves, full_moves = tb.probe_moves(board), full.probe_moves(board)
        assert [(m.move, m.wdl, m.dtm) for m in moves] == [(m.move, m.wdl, m.dtm) for m in full_moves]
        assert all(m.dtz is None and m.category is None for m in moves)
        assert tb.best_move(board) == full.best_move(board)
        with pytest.raises(tablebase.MissingMetricError):
            tb.best_move(board, fifty_move_rule=True)
        reply = probe_json(tb, board)
        assert (reply["dtz"], reply["dtm"], reply["category"]) == (None, full.probe_dtm(board), "unknown")
        board.push_uci("h1d5")  # Qd5? Rc5 wins the queen for the rook: a draw, known without DTZ
        reply = probe_json(tb, board)
        assert (reply["dtz"], reply["category"]) == (None, "draw")


def test_a_run_with_dtz_regenerates_them(dtm_only, tables_34, tmp_path):
    import shutil
    for key in ("KvK", "KQvK", "KRvK", KEY):
        shutil.copytree(dtm_only / key, tmp_path / key)
    assert table_complete(tmp_path / KEY, KEY) and not table_complete(tmp_path / KEY, KEY, dtz=True)
    stats = generate([KEY], tmp_path)
    assert not any(s.skipped for s in stats)
    assert read_manifest(tmp_path / KEY).metrics == METRICS
    own = load_table(tmp_path, KEY)
    for stm in (0, 1):
        illegal = own[stm] == ILLEGAL
        assert np.array_equal(load_dtz_side(tmp_path, KEY, stm, illegal), load_dtz_side(tables_34, KEY, stm, illegal))
    assert generate([KEY], tmp_path, dtz=False)[-1].skipped  # a table with DTZ serves a run without


def test_the_command_line_and_the_config_choose_it(tmp_path, capsys):
    assert main(["generate", "KQvK", "--out", str(tmp_path), "--local", "--no-dtz"]) == 0
    assert "DTZ    -" in capsys.readouterr().err
    assert not read_manifest(tmp_path / "KQvK").has_dtz
    assert JobConfig.from_dict({"dtz": False}).dtz is False
    with pytest.raises(ConfigError, match="'dtz' must be true or false"):
        JobConfig.from_dict({"dtz": "no"})
