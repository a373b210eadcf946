"""Job configs and the generate / verify / info commands."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tablebase.cli import main
from tablebase.config import ConfigError, JobConfig

ROOT = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.toml"
    path.write_text(text)
    return path


def test_shipped_configs_are_valid():
    default = JobConfig.load(ROOT / "configs" / "default.toml")
    assert default.pieces == [3, 4] and default.out == Path("data/tables")
    assert len(default.tables()) == 35
    five = JobConfig.load(ROOT / "configs" / "five.toml")
    assert len(five.tables()) == 145 and five.checkpoint_seconds == 300
    six = JobConfig.load(ROOT / "configs" / "six.toml")
    assert six.tables() == ["KRRvKRR"] and not six.address and six.workers == 0


def test_cluster_yaml_installs_the_project_dependencies():
    import tomllib

    import yaml
    cluster = yaml.safe_load((ROOT / "jobs" / "cluster.yaml").read_text())
    assert cluster["provider"]["type"] == "local" and cluster["head_start_ray_commands"]
    setup = " ".join(cluster["setup_commands"])
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for dep in deps:
        name = dep.split(">")[0].split("=")[0].split("[")[0].strip()
        assert name in setup, f"jobs/cluster.yaml does not install {name}"


@pytest.mark.parametrize("text, message", [
    ("piece = [3]", "unknown key 'piece'"),
    ("pieces = [9]", "'pieces' must be"),
    ("pieces = 3", "'pieces' must be"),
    ("materials = ['KQvKX']", "unknown piece letter 'X'"),
    ("materials = ['KQvQ']", "has no king"),
    ("workers = -1", "'workers' must be an integer >= 0"),
    ("executor = 'spark'", "'executor' must be"),
    ("pieces = [3", "not valid TOML"),
    ("split_above = -5", "'split_above' must be a number >= 0"),
    ("checkpoint_seconds = 'often'", "'checkpoint_seconds' must be a number >= 0"),
    ("checkpoint_seconds = nan", "'checkpoint_seconds' must be a number >= 0"),
])
def test_bad_configs_are_named(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        JobConfig.load(write(tmp_path, text))


def test_cli_reports_config_errors_before_work(tmp_path, capsys):
    assert main(["generate", "--config", str(write(tmp_path, "colour = 'white'")), "--out", str(tmp_path)]) == 2
    assert "unknown key 'colour'" in capsys.readouterr().err
    assert main(["generate", "KQvKZ", "--out", str(tmp_path)]) == 2
    assert "unknown piece letter 'Z'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [tmp_path / "job.toml"]


def test_cli_generate_verify_info(tmp_path, capsys):
    assert main(["generate", "KRvK", "--out", str(tmp_path), "--local"]) == 0
    err = capsys.readouterr().err
    assert "KRvK" in err and "longest DTM   32" in err
    # The job's line after each table: KvK first (a sub-table), with an ETA for the rest.
    assert "job: 1 of 2 tables, 924 of 60,060 positions, ETA " in err
    assert err.count("job: 2 of 2 tables, 60,060 of 60,060 positions\n") == 1
    assert main(["verify", "--tables", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "KRvK       OK" in out and "KvK        OK" in out
    assert main(["info", "--tables", str(tmp_path), "--json"]) == 0
    rows = {r["material"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["KRvK"]["longest_dtm"] == 32 and rows["KRvK"]["counts"]["b"]["losses"] == 25260


def test_cli_verify_fails_on_a_truncated_shard(tmp_path, capsys):
    assert main(["generate", "KQvK", "--out", str(tmp_path), "--local"]) == 0
    shard = next((tmp_path / "KQvK").glob("side=w/0*.parquet"))
    shard.write_bytes(shard.read_bytes()[:-100])
    assert main(["verify", "KQvK", "--tables", str(tmp_path)]) == 1
    assert "truncated" in capsys.readouterr().out
    # In a pool of processes, the same verdicts in the tables' order: the good KvK (a
    # sub-table written beside it) and the truncated KQvK.
    assert main(["verify", "KvK", "KQvK", "--tables", str(tmp_path), "--workers", "2"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines] == [["KvK", "OK"], ["KQvK", "FAILED"]], lines
    assert "truncated" in lines[1]
    shutil.rmtree(tmp_path / "KQvK")


def test_job_eta_leaves_out_the_first_tables_compilation():
    """The first table of each worker pays the kernels' compilation: the ETA scales the
    plan's estimate by the rate measured after them, not by the time since the start
    (which said 225 h for a 10-minute job), and before then it is the plan's own estimate."""
    from tablebase.plan import PRIOR_SHARE, JobProgress, plan_job
    for workers in (1, 2):
        plan = plan_job(JobConfig(materials=["KQvKR"], workers=workers, out="/nonexistent"))
        seconds = {t.material: t.seconds for t in plan.tables}
        total = sum(seconds.values())
        job = JobProgress(plan)
        assert f"ETA {total:.0f} s" in job.text(now=0.0)
        compiled = ["KvK", "KQvK"][:workers]  # a thousand seconds of compilation each
        for i, key in enumerate(compiled):
            job.table_done(key, now=1000.0 * (i + 1))
        start = 1000.0 * workers
        left = total - sum(seconds[k] for k in compiled)
        assert job.text(now=start).endswith(f"ETA {left:.0f} s"), workers
        job.table_done("KRvK", now=start + 200 * seconds["KRvK"])  # then 200 times the estimate
        eta = job.text(now=start + 200 * seconds["KRvK"]).rsplit("ETA ", 1)[1]
        prior = PRIOR_SHARE * total
        rate = (200 * seconds["KRvK"] + prior) / (seconds["KRvK"] + prior)
        assert eta == f"{(left - seconds['KRvK']) * rate:.0f} s", workers


def test_job_eta_stays_near_the_truth_through_a_replayed_job():
    """A replay of the default job as a fresh install ran it: the first two tables pay a
    minute of compilation each (the second worker compiles too), then every table takes
    1.5x the plan's estimate. The ETA after every table stays within 2.5x of the time
    actually left; it said 29 h after the second table of a 5-minute job when it trusted
    only the time since the first table."""
    from tablebase.plan import JobProgress, plan_job
    plan = plan_job(JobConfig(pieces=[3, 4], workers=2, out="/nonexistent"))
    ends, now = [], 0.0
    for i, table in enumerate(plan.tables):
        now += 1.5 * table.seconds + (60.0 if i < 2 else 0.0)
        ends.append(now)
    job = JobProgress(plan)
    unit = {"s": 1, "min": 60, "h": 3600}
    for table, end in zip(plan.tables[:-1], ends):
        job.table_done(table.material, now=end)
        value, name = job.text(now=end).rsplit("ETA ", 1)[1].split()
        eta, truth = float(value) * unit[name], ends[-1] - end
        assert truth / 2.5 <= eta <= 2.5 * truth, (table.material, eta, truth)
