"""The compiled Syzygy reader of the exhaustive oracle check (``scripts/syzygy_compiled.py``)
against its slow twin, python-chess's own prober, and the exhaustive check itself."""

from __future__ import annotations

import sys
from pathlib import Path

import chess.syzygy
import numpy as np
import pytest

from tablebase.endgame.pychess import index_board

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import check_oracle  # noqa: E402
import syzygy_compiled  # noqa: E402


# Pawnless with two unique pieces and with a pair (Syzygy's two piece encodings), DTZ files
# holding one side only, pawns on one side and on both (en passant, a symmetric file).
@pytest.mark.parametrize("key", ["KQvKR", "KNNvK", "KQPvK", "KPvKP"])
def test_compiled_reader_gives_python_chess_values(tables_34, oracle_dir, key):
    view = syzygy_compiled.syzygy_view(tables_34, key, oracle_dir / "syzygy")
    rng = np.random.default_rng(3)
    checked = not_stored = 0
    with chess.syzygy.open_tablebase(str(oracle_dir / "syzygy")) as tb:
        for stm in (0, 1):
            for x in rng.choice(np.flatnonzero(view.legal[stm]), 150, replace=False).tolist():
                board = index_board(key, stm, x)
                assert (view.wdl[stm][x], view.dtz[stm][x]) == (tb.probe_wdl(board), tb.probe_dtz(board)), board.fen()
                checked += 1
                not_stored += tb.probe_wdl(board) != 0 and tb.probe_dtz_table(board, tb.probe_wdl(board))[1] < 0
    assert checked == 300
    if key in ("KQvKR", "KQPvK"):  # the DTZ file holds White's side: Black's are one-ply searches
        assert not_stored > 0


@pytest.mark.parametrize("key", ["KQvK", "KPvK", "KNNvK"])
def test_exhaustive_check_passes(tables_34, oracle_dir, key):
    result = check_oracle.check_exhaustive(tables_34, key, oracle_dir)
    assert result.mismatches == []
    assert result.checked == sum(int(np.count_nonzero(v)) for v in
                                 syzygy_compiled.syzygy_view(tables_34, key, oracle_dir / "syzygy").legal)


def test_exhaustive_check_reports_a_disagreement(tables_34, oracle_dir, monkeypatch):
    """Syzygy's DTZ one ply short of ours passes (python-chess's rounding rule) unless the
    value is exact by construction; a WDL flipped is reported."""
    ours = check_oracle.dtz_of_stored_many(check_oracle.stored_dtz(tables_34, "KQvKR", 0))
    real = syzygy_compiled.syzygy_view
    x = y = -1

    def altered(*args, exact: bool, **kwargs):
        nonlocal x, y
        view = real(*args, **kwargs)
        x = int(np.flatnonzero(view.legal[0] & (ours >= 2) & (ours <= 100) & (view.dtz[0] == ours))[0])
        view.dtz[0][x] -= 1
        view.dtz_exact[0][x] = exact
        y = int(np.flatnonzero(view.legal[1] & (view.wdl[1] != 0))[0])
        view.wdl[1][y] = -view.wdl[1][y]
        return view

    for exact in (False, True):
        monkeypatch.setattr(syzygy_compiled, "syzygy_view", lambda *a, **k: altered(*a, exact=exact, **k))
        result = check_oracle.check_exhaustive(tables_34, "KQvKR", oracle_dir)
        fens = [index_board("KQvKR", 1, y).fen()] + ([index_board("KQvKR", 0, x).fen()] if exact else [])
        assert sorted(m.split(":")[0] for m in result.mismatches) == sorted(fens)
