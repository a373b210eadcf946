"""numba's cache of the compiled kernels survives a copy of the package (a submitted Ray
job's working dir is one, fresh for every job) and is keyed by the package's source."""

from __future__ import annotations

import ast
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
    """A copy of the package, with a comment appended to the module ``edit`` names."""
    shutil.copytree(PACKAGE, where / "tablebase", ignore=shutil.ignore_patterns("__pycache__"))
    if edit:
        with open(where / "tablebase" / edit, "a") as f:
            f.write("\n# an edit\n")
    return where


def run_kernel(src: Path, cache: Path) -> dict:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(src), "NUMBA_CACHE_DIR": str(cache), "HOME": str(cache)}
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=src, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_copy_of_the_package_finds_its_kernels_compiled_and_an_edit_does_not(tmp_path):
    """A copy hits the cache; an edit to a module the kernels import (material.py holds
    constants they freeze, without importing numba itself) misses it; an edit to the CLI
    does not."""
    cache = tmp_path / "cache"
    first = run_kernel(copy_of_the_package(tmp_path / "a"), cache)
    assert first["file"].startswith(str(tmp_path / "a"))
    assert first["misses"] >= 1 and first["hits"] == 0, first
    assert Path(first["path"]).parent.parent == cache and Path(first["path"]).name == "generate", first

    copy = run_kernel(copy_of_the_package(tmp_path / "b"), cache)
    assert copy["file"].startswith(str(tmp_path / "b"))
    assert copy["hits"] >= 1 and copy["misses"] == 0, copy
    assert copy["path"] == first["path"]

    edited = run_kernel(copy_of_the_package(tmp_path / "c", edit="endgame/material.py"), cache)
    assert edited["misses"] >= 1 and edited["hits"] == 0, edited
    assert edited["path"] != first["path"]

    cli_edited = run_kernel(copy_of_the_package(tmp_path / "d", edit="cli.py"), cache)
    assert cli_edited["hits"] >= 1 and cli_edited["misses"] == 0, cli_edited
    assert cli_edited["path"] == first["path"]


def imports_by_syntax(path: Path) -> set[str]:
    """The package modules a file imports, read by Python's own parser (the slow twin of
    the regular expression in :func:`tablebase.kernel_sources`)."""
    name = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = name[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = (package[:len(package) - node.level + 1] if node.level else ()) + tuple((node.module or "").split("."))
            base = tuple(p for p in base if p)
            found |= {".".join(base)} | {".".join(base + (a.name,)) for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def test_kernel_sources_are_the_import_closure_of_the_modules_that_use_numba():
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    todo = [n for n, p in modules.items() if {"numba"} & {m.split(".")[0] for m in imports_by_syntax(p)}]
    seen = set(todo)
    while todo:
        for name in (imports_by_syntax(modules[todo.pop()]) & modules.keys()) - seen:
            seen.add(name)
            todo.append(name)
    assert {modules[n] for n in seen} == set(tablebase.kernel_sources(PACKAGE))
    assert modules["tablebase.endgame.movegen"] in set(tablebase.kernel_sources(PACKAGE))
    assert modules["tablebase.cli"] not in set(tablebase.kernel_sources(PACKAGE))
