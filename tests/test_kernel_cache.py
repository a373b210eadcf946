"""numba's cache of the compiled kernels survives a copy of the package (a submitted Ray
job's working dir is one, fresh for every job) and is keyed by the package's source."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import tablebase

PACKAGE = Path(tablebase.__file__).parent
CHILD = """
import json, numpy as np, tablebase
from tablebase.generate.values import count_frontier
hits = np.zeros(1, dtype=np.int64)
count_frontier(np.zeros(4, dtype=np.uint16), 1, False, 0, 16, hits)
stats = count_frontier.stats
print(json.dumps({"file": tablebase.__file__, "path": stats.cache_path,
                  "hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values())}))
"""


def copy_of_the_package(where: Path, edit: str = "") -> Path:
    shutil.copytree(PACKAGE, where / "tablebase", ignore=shutil.ignore_patterns("__pycache__"))
    if edit:
        with open(where / "tablebase" / "cli.py", "a") as f:
            f.write(edit)
    return where


def run_kernel(src: Path, cache: Path) -> dict:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(src), "NUMBA_CACHE_DIR": str(cache), "HOME": str(cache)}
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=src, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_copy_of_the_package_finds_its_kernels_compiled_and_an_edit_does_not(tmp_path):
    cache = tmp_path / "cache"
    first = run_kernel(copy_of_the_package(tmp_path / "a"), cache)
    assert first["file"].startswith(str(tmp_path / "a"))
    assert first["misses"] >= 1 and first["hits"] == 0, first
    assert Path(first["path"]).parent.parent == cache and Path(first["path"]).name == "generate", first

    copy = run_kernel(copy_of_the_package(tmp_path / "b"), cache)
    assert copy["file"].startswith(str(tmp_path / "b"))
    assert copy["hits"] >= 1 and copy["misses"] == 0, copy
    assert copy["path"] == first["path"]

    edited = run_kernel(copy_of_the_package(tmp_path / "c", edit="\n# an edit elsewhere in the package\n"), cache)
    assert edited["misses"] >= 1 and edited["hits"] == 0, edited
    assert edited["path"] != first["path"]
