"""The cluster path as a new user takes it: a head started with ``ray start --head``, then
``ray job submit`` of ``jobs/generate.py`` with the checkout as the working dir.

It needs the ``cluster`` extra (``pip install -e ".[cluster]"``: Ray's jobs CLI and
dashboard); without it the test skips, saying so.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tablebase.generate.exact import load_table
from tablebase.store import table_complete

from conftest import free_port

ROOT = Path(__file__).resolve().parents[1]
RAY = [sys.executable, "-m", "ray.scripts.scripts"]
TABLES = ["KvK", "KQvK", "KRvK", "KQvKR"]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("aiohttp") is None or importlib.util.find_spec("aiohttp_cors") is None,
    reason="the cluster extra is not installed (Ray's jobs CLI and dashboard): pip install -e '.[cluster]'")


@pytest.fixture(scope="module")
def head(tmp_path_factory):
    """A local head node of its own (its own ports), stopped at the end: its jobs address
    and its temp dir (where Ray unpacks a job's working dir)."""
    temp = tmp_path_factory.mktemp("ray")
    dashboard = free_port()
    process = subprocess.Popen(
        RAY + ["start", "--head", "--block", "--disable-usage-stats", "--num-cpus", "2", "--port", str(free_port()),
               "--include-dashboard", "true", "--dashboard-host", "127.0.0.1", "--dashboard-port", str(dashboard),
               "--dashboard-agent-listen-port", str(free_port()), "--ray-client-server-port", str(free_port()),
               "--temp-dir", str(temp)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    address = f"http://127.0.0.1:{dashboard}"
    deadline = time.monotonic() + 180
    while subprocess.run(RAY + ["job", "list", "--address", address], capture_output=True).returncode != 0:
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"ray start --head did not serve jobs at {address}: {process.communicate()[0][-3000:]}")
        time.sleep(2)
    yield address, temp
    process.terminate()
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()


def submit(address: str, out: Path) -> tuple[str, float]:
    """``ray job submit`` of the README's cluster command (the checkout as working dir);
    its output and seconds."""
    env = json.dumps({"working_dir": str(ROOT), "excludes": [".git"]})
    t = time.perf_counter()
    run = subprocess.run(RAY + ["job", "submit", "--address", address, "--runtime-env-json", env, "--",
                                sys.executable, "jobs/generate.py", "KQvKR", "--out", str(out), "--workers", "2"],
                         capture_output=True, text=True, timeout=900)
    text = run.stdout + run.stderr
    assert run.returncode == 0 and "succeeded" in text.lower(), text[-3000:]
    return text, time.perf_counter() - t


def compiled_kernels() -> dict[str, int]:
    """numba's cache files of this code (the folder ``import tablebase`` chose), with their times."""
    folder = Path(os.environ["NUMBA_CACHE_DIR"])
    return {p.relative_to(folder).as_posix(): p.stat().st_mtime_ns for p in folder.rglob("*.nb[ic]")}


def test_a_submitted_job_reuses_compiled_kernels_writes_the_tables_and_a_resubmitted_one_skips_them(head, tables_34, tmp_path):
    # The same job run locally first: the submitted one, in a fresh copy of the checkout
    # (Ray's working dir), must find every kernel compiled.
    local = subprocess.run([sys.executable, "-m", "tablebase.cli", "generate", "KQvKR", "--out", str(tmp_path / "local"),
                            "--workers", "2"], capture_output=True, text=True, timeout=900)
    assert local.returncode == 0, local.stderr[-3000:]
    kernels = compiled_kernels()
    assert kernels, "the local run left no compiled kernel in the cache"
    address, ray_temp = head
    out = tmp_path / "tables"
    text, first = submit(address, out)
    assert compiled_kernels() == kernels, "the submitted job compiled kernels a local run of the same code had compiled"
    assert not any(ray_temp.rglob("*.nbc")), "the submitted job cached kernels inside its working dir"
    assert "4 tables in" in text and "(4 generated, 0 already complete)" in text, text[-3000:]
    for key in TABLES:
        assert table_complete(out / key, key)
        for ours, full in zip(load_table(out, key), load_table(tables_34, key)):
            assert np.array_equal(ours, full)
    text, again = submit(address, out)
    assert "(0 generated, 4 already complete)" in text, text[-3000:]
    print(f"first submission {first:.1f} s, the same job again {again:.1f} s")
