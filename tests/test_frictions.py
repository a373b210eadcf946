"""The frictions a new user met (issue 17), each fixed and held here: broken pipes, error
texts that name the input as given, a missing table's generate command, TABLEBASE_PATH
and the default folder, units, encode/decode, batch defaults, the errors module,
``info --stats`` / ``--sizes --json`` and ``generate --dry-run``."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import chess
import numpy as np
import pytest

import tablebase
from tablebase.cli import main
from tablebase.endgame.index import IndexScheme
from tablebase.errors import (BadFenError, CastlingRightsError, ConfigError, CorruptTableError, GenerationError,
                              IllegalPositionError, MissingTableError, PositionError, TableFormatError,
                              TablebaseError, TablesFolderError, TooManyPiecesError)
from tablebase.probe import ILLEGAL_WDL, open_tablebase

ROOT = Path(__file__).resolve().parents[1]
KQRVKR = "8/8/8/4k3/8/8/2Q5/K2Rr3 w - - 0 1"  # no 5-piece table among the test tables


def run_cli(args: list[str], *, cwd=None, env=None, close_stdout=False) -> subprocess.CompletedProcess:
    """The command in a fresh interpreter; ``close_stdout``: its reader goes away at once,
    as `| head` does once it has its lines."""
    env = dict(os.environ if env is None else env)
    cmd = [sys.executable, "-m", "tablebase.cli", *args]
    if not close_stdout:
        return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdout.close()  # before the command writes a byte
    err = p.stderr.read()
    p.wait(300)
    return subprocess.CompletedProcess(cmd, p.returncode, "", err)


# -- broken pipes -----------------------------------------------------------------------


@pytest.mark.parametrize("args", [["probe", "7k/8/6K1/8/8/1Q6/8/8 w - - 0 1"],
                                  ["probe", "7k/8/6K1/8/8/1Q6/8/8 w - - 0 1", "--json"],
                                  ["info", "--sizes"]], ids=["probe", "probe --json", "info --sizes"])
def test_broken_pipe_ends_quietly(tables_34, args):
    done = run_cli(args + (["--tables", str(tables_34)] if args[0] == "probe" else []), close_stdout=True)
    assert done.stderr == "" and done.returncode == 141, done.stderr


def test_head_of_a_pipe(tables_34):
    """The real thing: `tablebase info --sizes | head -5` prints 5 lines and nothing else."""
    done = subprocess.run(f"{sys.executable} -m tablebase.cli info --sizes | head -5", shell=True,
                          capture_output=True, text=True, timeout=300)
    assert len(done.stdout.splitlines()) == 5 and done.stderr == ""


# -- error texts: the input as given ----------------------------------------------------


@pytest.fixture(scope="module")
def tb(tables_34):
    with open_tablebase(tables_34) as t:
        yield t


def test_castling_rights_are_shown_as_given(tb):
    fen = "4k3/8/8/8/8/8/Q7/4K3 w K - 0 1"  # K, though no rook stands on h1
    with pytest.raises(CastlingRightsError) as e:
        tb.probe_wdl(chess.Board(fen))
    assert str(e.value).startswith("castling rights K ") and str(e.value).endswith(fen)
    with pytest.raises(CastlingRightsError, match="castling rights Qk: .*: r3k2r/8/8/8/8/8/8/R3K3 w Qk - 0 1"):
        tb.probe_wdl(chess.Board("r3k2r/8/8/8/8/8/8/R3K3 w Qk - 0 1"))


def test_impossible_en_passant_square_is_named(tb):
    fen = "8/8/8/8/8/8/8/K2kr3 w - e6 0 1"
    with pytest.raises(IllegalPositionError) as e:
        tb.probe_wdl(chess.Board(fen))
    assert "en-passant square e6 impossible" in str(e.value) and str(e.value).endswith(fen)


def test_too_many_pieces_names_the_largest_table(tb, tables_34):
    board = chess.Board("rnbqkbnr/pppppppp/8/8/8/8/8/4K3 w - - 0 1")
    with pytest.raises(TooManyPiecesError) as e:
        tb.probe_wdl(board)
    assert f"17 pieces: the largest table in {tables_34} has 4" in str(e.value) and "at most 7:" not in str(e.value)
    assert tb.largest_table() == 4


def test_missing_table_names_its_generate_command(tables_34, capsys):
    assert main(["probe", KQRVKR, "--tables", str(tables_34)]) == 2
    assert f"make it with: tablebase generate KQRvKR --out {tables_34}" in capsys.readouterr().err


def test_a_missing_subtable_during_generation(tmp_path):
    from tablebase.generate.pipeline import load_subtables
    with pytest.raises(MissingTableError, match=f"make it with: tablebase generate KQvK --out {tmp_path}"):
        load_subtables(tmp_path, "KQvKR", 0)


# -- TABLEBASE_PATH and the default folder ----------------------------------------------


def test_default_folder_absent(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TABLEBASE_PATH"}
    done = run_cli(["probe", "8/8/8/8/8/8/8/K2kr3 w - - 0 1"], cwd=tmp_path, env=env)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"tablebase: error: no tables folder data/tables (relative to {tmp_path})")
    assert "TABLEBASE_PATH" in line and "Errno" not in line


def test_tablebase_path_in_the_cli(tables_34, tmp_path):
    """Two folders, as Stockfish's SyzygyPath: the second holds what the first lacks."""
    first = tmp_path / "first"
    first.mkdir()
    env = dict(os.environ, TABLEBASE_PATH=os.pathsep.join([str(first), str(tables_34)]))
    done = run_cli(["probe", "8/8/8/8/8/8/8/K2kr3 w - - 0 1", "--json"], cwd=tmp_path, env=env)
    assert done.returncode == 0 and json.loads(done.stdout)["dtm"] == -10
    done = run_cli(["info"], cwd=tmp_path, env=env)
    assert done.returncode == 0 and "KQvKR" in done.stdout
    done = run_cli(["probe", "8/8/8/8/8/8/8/K2kr3 w - - 0 1", "--tables", str(tmp_path / "none")], env=env)
    assert done.returncode == 2 and f"no tables folder {tmp_path / 'none'}" in done.stderr


def test_tablebase_path_in_open_tablebase(tables_34, monkeypatch, tmp_path):
    monkeypatch.setenv("TABLEBASE_PATH", os.pathsep.join([str(tmp_path), str(tables_34)]))
    with open_tablebase() as t:
        assert t.probe_dtm(chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1")) == -10
    monkeypatch.delenv("TABLEBASE_PATH")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TablesFolderError, match="no tables folder data/tables") as e:
        open_tablebase()
    assert isinstance(e.value, FileNotFoundError)


# -- units ------------------------------------------------------------------------------


def test_units():
    from tablebase.cli import plies_text
    assert plies_text(69) == "mate in 35, 69 plies"
    assert plies_text(-68) == "mated in 34, 68 plies"
    assert plies_text(1) == "mate in 1, 1 ply" and plies_text(0) == ""


# -- index <-> board --------------------------------------------------------------------


@pytest.mark.parametrize("key", ["KQvKR", "KPvKP", "KBBvK", "KRvKN"])
def test_decode_and_encode_are_inverses(tb, key):
    rng = random.Random(key)
    size = IndexScheme.of(key).size
    checked = 0
    for _ in range(600):
        side, index = rng.choice("wb"), rng.randrange(size)
        try:
            board = tablebase.decode(key, side, index)
        except ValueError:
            continue  # no placement
        if not board.is_valid() or board.has_legal_en_passant():
            continue
        assert tablebase.encode(board) == (key, side, index)
        wdl, dtm = tb.probe_batch_indices(key, "wb".index(side), [index])
        assert (tb.probe_wdl(board), tb.probe_dtm(board)) == (wdl[0], dtm[0])
        checked += 1
    assert checked > 200


def test_longest_wins_as_positions(tb):
    """What DuckDB could not show: the 10 longest wins of a table, as boards."""
    size = IndexScheme.of("KQvKR").size
    wdl, dtm = tb.probe_batch_indices("KQvKR", 0, np.arange(size))
    top = np.argsort(np.where(wdl == 1, dtm, -1))[-10:]
    assert dtm[top[-1]] == 69  # the longest win with White to move
    for index in top:
        board = tablebase.decode("KQvKR", "w", int(index))
        assert tb.probe_dtm(board) == dtm[index] and board.is_valid()
    flipped = chess.Board("8/8/8/8/8/2k5/1q6/K7 w - - 0 1")  # Black holds the queen: the table's sides swap
    assert tablebase.encode(flipped)[:2] == ("KQvK", "b")
    with pytest.raises(ValueError, match="side must be 'w' or 'b'"):
        tablebase.decode("KQvK", 0, 1)
    with pytest.raises(CastlingRightsError):
        tablebase.encode(chess.Board("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1"))


# -- batches with a default -------------------------------------------------------------


def test_batch_default(tb):
    ok = "8/8/8/8/8/8/8/K2kr3 w - - 0 1"
    batch = [ok, KQRVKR, "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1", "not a fen", "8/8/8/8/8/8/8/Kk6 w - - 0 1",
             "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1", chess.Board(ok)]
    assert tb.probe_wdl_batch(batch, default=ILLEGAL_WDL).tolist() == [-1] + [ILLEGAL_WDL] * 5 + [-1]
    assert tb.probe_dtm_batch(batch, default=999).tolist() == [-10] + [999] * 5 + [-10]
    with pytest.raises(TablebaseError):  # without a default: one error for the batch, as before
        tb.probe_wdl_batch(batch)
    with pytest.raises(ValueError, match="default must be an integer in"):
        tb.probe_wdl_batch(batch, default=1000)


def test_batch_default_with_a_missing_subtable(tb, tables_34, tmp_path):
    """KQvKR without KQvK: a position whose search of captures needs KQvK gets the default,
    the others their value, as single probes answer them."""
    for key in ("KQvKR", "KRvK", "KvK"):
        shutil.copytree(tables_34 / key, tmp_path / key)
    rng = random.Random(7)
    boards = []
    while len(boards) < 300:
        try:
            board = tablebase.decode("KQvKR", rng.choice("wb"), rng.randrange(IndexScheme.of("KQvKR").size))
        except ValueError:
            continue
        if board.is_valid():
            boards.append(board)
    with open_tablebase(tmp_path) as partial:
        batch = partial.probe_dtm_batch(boards, default=999).tolist()
        single = [partial.get_dtm(b, default=999) for b in boards]
    assert batch == single
    full = tb.probe_dtm_batch(boards).tolist()
    assert [d for d in batch if d != 999] == [f for d, f in zip(batch, full) if d != 999]
    assert 0 < batch.count(999) < len(boards)  # both kinds among the positions


# -- one errors module ------------------------------------------------------------------


def test_errors_share_a_base_and_python_chess_habits_hold(tb):
    for error in (MissingTableError, PositionError, CastlingRightsError, TooManyPiecesError, IllegalPositionError,
                  BadFenError, CorruptTableError, TableFormatError, TablesFolderError, ConfigError, GenerationError):
        assert issubclass(error, TablebaseError)
    # chess.syzygy raises KeyError for a missing table, castling rights and too many pieces.
    for fen in (KQRVKR, "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1", "rnbqkbnr/pppppppp/8/8/8/8/8/4K3 w - - 0 1"):
        with pytest.raises(KeyError):
            tb.probe_wdl(chess.Board(fen))
    import tablebase.probe as probe
    import tablebase.store.shards as shards
    assert probe.MissingTableError is MissingTableError and probe.PositionError is PositionError
    assert shards.CorruptTableError is CorruptTableError and tablebase.TablebaseError is TablebaseError
    import tablebase.store as store
    assert store.TableFormatError is TableFormatError and probe.TableFormatError is TableFormatError
    assert str(MissingTableError("KQvK", "no table")) == "no table"  # not KeyError's quotes


# -- info --stats, --sizes --json -------------------------------------------------------


def test_info_stats(tables_34, capsys, tmp_path):
    from tablebase.store.shards import read_manifest
    assert main(["info", "--stats", "KQvKR", "--tables", str(tables_34), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    manifest = read_manifest(tables_34 / "KQvKR")
    counts = manifest.counts()
    for side in "wb":
        s = stats["sides"][side]
        # values vs the manifest's counts
        assert {k: s[k] for k in ("wins", "draws", "losses")} == {k: counts[side][k] for k in ("wins", "draws",
                                                                                               "losses")}
        assert sum(s["win_plies"].values()) == s["wins"] and sum(s["loss_plies"].values()) == s["losses"]
    longest = stats["longest_win"]
    assert longest["dtm"] == max(int(d) for s in stats["sides"].values() for d in s["win_plies"])
    with open_tablebase(tables_34) as t:
        assert t.probe_dtm(chess.Board(longest["fen"])) == longest["dtm"] == 69
    assert main(["info", "--stats", "KQvKR", "--tables", str(tables_34), "--plot", str(tmp_path / "d.png")]) == 0
    out = capsys.readouterr().out
    assert "longest win" in out and "mate in 35 (69 plies)" in out and longest["fen"] in out
    assert (tmp_path / "d.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_info_plot_without_matplotlib(tables_34, capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as where it is not installed
    assert main(["info", "--stats", "KRvK", "--tables", str(tables_34), "--plot", str(tmp_path / "d.png")]) == 2
    assert "--plot needs matplotlib: pip install 'tablebase[plot]'" in capsys.readouterr().err


def test_info_sizes_json(capsys):
    assert main(["info", "--sizes", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by_key = {r["material"]: r for r in rows}
    assert by_key["KQRvKR"]["index_size"] == IndexScheme.of("KQRvKR").size and len(rows) > 100


# -- generate --dry-run -----------------------------------------------------------------


def test_generate_dry_run(tmp_path, capsys):
    from tablebase.generate.partition import table_memory
    out = tmp_path / "tables"
    assert main(["generate", "KQRvKR", "--out", str(out), "--workers", "2", "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert not out.exists()  # nothing ran, nothing was written
    tables = {t["material"]: t for t in plan["tables"]}
    assert list(tables)[-1] == "KQRvKR" and {"KvK", "KQvK", "KQRvK", "KQvKR", "KRvKR"} <= set(tables)
    big = tables["KQRvKR"]
    assert big["positions"] == 2 * IndexScheme.of("KQRvKR").size and big["split"]
    assert big["memory_per_worker"] == table_memory("KQRvKR", 2) // 2
    assert big["seconds"] > tables["KQvKR"]["seconds"] > 0 and big["disk_bytes"] > 0
    assert plan["wall_seconds"] >= sum(t["seconds"] for t in plan["tables"]) / 2
    assert main(["generate", "KQRvKR", "--out", str(out), "--workers", "2", "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("dry run: 7 tables to generate") and "nothing was run" in text and "GB" in text


def test_dry_run_skips_complete_tables(tables_34, capsys):
    assert main(["generate", "KQvKR", "--out", str(tables_34), "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["tables"] == [] and "KQvKR" in plan["complete"]
