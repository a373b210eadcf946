"""The cross-check: WinTree on a material with its own table hidden, against that table.

For random legal positions of a material whose table exists, the search runs over the
material's positions with only its sub-tables answering (a :class:`SearchGraph` never
uses the searched material's table), for both players g, and every finished result is
compared with the table:

- the root's status equals ``eval == g`` (Thms 3.1, 3.4);
- every BLACK position's status equals ``eval == g``: BLACK results are exact whatever
  the path that produced them (Thms 3.1, 3.2); in a search cut at ``r`` plies, a
  position not won has ``d_g > r``;
- ``d >= d_g`` at every BLACK win, the root included (Thm 3.6);
- the never-lose move of the side to move (Thm 4.8) leads to a position the table does
  not score as lost for it.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, fields

import numpy as np

from tablebase.endgame.index import IndexScheme
from tablebase.endgame.material import Material
from tablebase.probe import ILLEGAL_WDL, MissingTableError, Tablebase, open_tablebase
from .compiled import Facts
from .graph import SearchGraph, has_table, pack, unpack
from .search import make_searches, never_lose_move, prove

#: Examples of disagreements kept in a report (all are counted).
_EXAMPLES = 10


def sample_positions(tablebase: Tablebase, material: str, samples: int, seed: int = 0) -> list[tuple[int, int]]:
    """``samples`` distinct random legal positions ``(stm, index)`` of a material, drawn
    uniformly over its legal (side to move, index) pairs with a seeded generator.

    >>> from tablebase import open_tablebase
    >>> with open_tablebase("data/test-tables") as tb:
    ...     sample_positions(tb, "KQvK", 3, seed=1) == sample_positions(tb, "KQvK", 3, seed=1)
    True
    """
    key = Material.parse(material).key
    size = IndexScheme.of(key).size
    rng = np.random.default_rng(seed)
    found: dict[tuple[int, int], None] = {}
    tries = 0
    while len(found) < samples:
        n = max(64, 4 * (samples - len(found)))
        stm = rng.integers(0, 2, n)
        idx = rng.integers(0, size, n)
        wdl, _ = tablebase.probe_batch_indices(key, stm, idx)
        for s, i in zip(stm[wdl != ILLEGAL_WDL].tolist(), idx[wdl != ILLEGAL_WDL].tolist()):
            found.setdefault((s, i), None)
            if len(found) == samples:
                break
        tries += n
        if tries > 1000 * max(samples, 1) and not found:
            raise ValueError(f"{key}: no legal position found in {tries} random indices")
    return list(found)


@dataclass
class CrosscheckReport:
    """Counts of a cross-check (see the module docstring).

    ``searches`` = 2 per position (g = +1, -1); each finished one ``agreed`` or
    ``disagreed`` at the root, else it is ``unfinished``. ``black_checked`` BLACK
    positions were compared (``black_disagreed`` of them differ in status or break
    ``d >= d_g``). ``never_lose_*`` count the Thm 4.8 moves checked. ``ratios`` and
    ``excess`` are ``d / d_g`` and ``d - d_g`` at the finished winning roots with
    ``d_g > 0``.
    """

    material: str
    positions: int = 0
    searches: int = 0
    agreed: int = 0
    disagreed: int = 0
    unfinished: int = 0
    black_checked: int = 0
    black_disagreed: int = 0
    depth_violations: int = 0
    #: Finished searches whose answer came from iterative deepening (wins proved).
    deepened: int = 0
    never_lose_checked: int = 0
    never_lose_agreed: int = 0
    never_lose_disagreed: int = 0
    never_lose_unfinished: int = 0
    nodes: int = 0
    seconds: float = 0.0
    ratios: list[float] = field(default_factory=list)
    excess: list[int] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No disagreement of any kind."""
        return not (self.disagreed or self.black_disagreed or self.depth_violations or self.never_lose_disagreed)

    def add(self, other: "CrosscheckReport") -> None:
        """Add the counts of another report of the same material (its ``seconds`` aside)."""
        for f in fields(self):
            if f.name not in ("material", "seconds", "examples"):  # counts, and the lists of ratios and excess
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        for what in other.examples:
            self._fail(what)

    def _fail(self, what: str) -> None:
        if len(self.examples) < _EXAMPLES:
            self.examples.append(what)

    def summary(self) -> str:
        """The report as a few lines of text."""
        lines = [
            f"{self.material}: {self.positions} positions, {self.searches} searches (g = +1 and -1 each), "
            f"{self.nodes:,d} nodes in {self.seconds:.1f} s ({self.nodes / max(self.seconds, 1e-9):,.0f} nodes/s)",
            f"  root status:  agreed {self.agreed}, disagreed {self.disagreed}, unfinished within budget "
            f"{self.unfinished} ({self.deepened} of the finished proved by iterative deepening)",
            f"  BLACK vertices checked {self.black_checked:,d}, disagreed {self.black_disagreed}; "
            f"d < d_g: {self.depth_violations}",
            f"  never-lose moves: checked {self.never_lose_checked}, agreed {self.never_lose_agreed}, "
            f"disagreed {self.never_lose_disagreed}, unfinished {self.never_lose_unfinished}",
        ]
        if self.ratios:
            r = np.array(self.ratios)
            e = np.array(self.excess)
            lines.append(f"  d / d_g over {len(r)} proved wins: mean {r.mean():.3f}, max {r.max():.3f}, "
                         f"d = d_g in {int((e == 0).sum())}; d - d_g mean {e.mean():.2f}, max {int(e.max())}")
        lines += [f"  DISAGREEMENT {x}" for x in self.examples]
        return "\n".join(lines)


class _Truth:
    """The searched material's table values (the table the search does not see)."""

    def __init__(self, tablebase: Tablebase, graph: SearchGraph):
        self.tablebase = tablebase
        self.graph = graph

    def values(self, vertices: np.ndarray | list) -> tuple[np.ndarray, np.ndarray]:
        """(eval, d) of position vertices, eval in real colours, d = |dtm| (0 for draws)."""
        graph = self.graph
        vertices = np.asarray(vertices, np.int64)
        stm, idx, ep = unpack(vertices)
        wdl, dtm = self.tablebase.probe_batch_indices(graph.key, stm, idx)
        evals = wdl.astype(np.int64) * np.where(stm == graph.flip, 1, -1)
        depth = np.abs(dtm).astype(np.int64)
        for k in np.flatnonzero(ep >= 0).tolist():
            # An en-passant square: the probe library values it over its moves.
            board = graph.board(int(vertices[k]))
            evals[k] = self.tablebase.probe_wdl(board) * graph.turn(int(vertices[k]))
            depth[k] = abs(self.tablebase.probe_dtm(board))
        return evals, depth

    def value(self, v) -> tuple[int, int]:
        if self.graph.is_leaf(v):
            return self.graph.leaf_value(v)
        e, d = self.values([v])
        return int(e[0]), int(d[0])


def _check_facts(report: CrosscheckReport, truth: _Truth, g: int, facts: Facts, label: str) -> None:
    """Compare everything a search proved of the positions it settled with the table:
    a win is won by the table with ``d >= d_g``, a position not won is not won by the
    table, and one not won within ``r`` plies (counted to mate or to a table) has
    ``d_g > r``."""
    vertices = np.concatenate([facts.won, facts.nowin, facts.within])
    if not vertices.size:
        return
    evals, depth = truth.values(vertices)
    nw, nn = facts.won.size, facts.nowin.size
    won = evals[:nw] == g
    short = won & (facts.d < depth[:nw])
    wrong = np.concatenate([~won, evals[nw:nw + nn] == g,
                            (evals[nw + nn:] == g) & (depth[nw + nn:] <= facts.within_r)])
    report.black_checked += vertices.size
    report.black_disagreed += int(wrong.sum())
    report.depth_violations += int(short.sum())
    what = ["won"] * nw + ["not won"] * nn + [f"not won within {r}" for r in facts.within_r.tolist()]
    d = facts.d.tolist() + [0] * (vertices.size - nw)
    for k in np.flatnonzero(wrong | np.concatenate([short, np.zeros(vertices.size - nw, bool)]))[:2].tolist():
        report._fail(f"{label} g={g:+d}: {truth.graph.board(int(vertices[k])).fen()} search says {what[k]} "
                     f"(d={d[k]}), table eval={int(evals[k])} d_g={int(depth[k])}")


def crosscheck(tablebase: Tablebase, material: str, samples: int = 100, seed: int = 0, order: str = "heuristic",
               max_nodes: int | None = 100_000, max_seconds: float | None = None, deepen: bool = True,
               progress: Callable[[int, CrosscheckReport], None] | None = None,
               close_cycles: bool = True, engine: str = "compiled", workers: int = 1) -> CrosscheckReport:
    """Cross-check WinTree against ``material``'s table on ``samples`` random positions.

    The budgets bound each search (two per position, plus the never-lose move's; each
    a :func:`~tablebase.online.search.prove`, with iterative deepening unless
    ``deepen`` is false; closing cycles unless ``close_cycles`` is false; ``engine``
    the compiled search or its Python twin). Each position starts from an empty table of
    results, so positions are independent: ``workers`` processes (0: one per CPU) share
    them out, and the report is the same for any number of workers. A search that runs
    out is counted ``unfinished``; what it settled is still checked, since it is final.
    ``progress(i, report)`` is called after each position, in the order drawn.

    >>> from tablebase import open_tablebase
    >>> with open_tablebase("data/test-tables") as tb:
    ...     report = crosscheck(tb, "KRvK", samples=3, seed=0)
    ...     report.ok, report.agreed + report.unfinished
    (True, 6)
    """
    key = Material.parse(material).key
    if not has_table(tablebase, key):
        raise MissingTableError(key, f"no table for {key}: the cross-check compares the search with it")
    if workers < 0:
        raise ValueError(f"workers must be >= 0, not {workers}")
    options = (order, max_nodes, max_seconds, deepen, close_cycles, engine)
    positions = sample_positions(tablebase, key, samples, seed)
    workers = min(workers or os.cpu_count() or 1, len(positions))
    report = CrosscheckReport(key)
    t_start = time.perf_counter()
    if workers == 1:
        checker = _Checker(tablebase, key)
        reports = (checker.position(stm, idx, options) for stm, idx in positions)
        pool = None
    else:
        # spawn, not fork: a forked child of a process that has run numba's threads may hang.
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        where = (tuple(tablebase.directories), tablebase.cache_bytes, key)
        reports = pool.map(_check_in_worker, itertools.repeat(where), positions, itertools.repeat(options))
    try:
        for i, part in enumerate(reports):
            report.add(part)
            report.seconds = time.perf_counter() - t_start
            if progress is not None:
                progress(i, report)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    report.seconds = time.perf_counter() - t_start
    return report


class _Checker:
    """The search graph and the table's values of one material, for checking its positions."""

    def __init__(self, tablebase: Tablebase, key: str):
        self.graph = SearchGraph(tablebase, key)
        self.truth = _Truth(tablebase, self.graph)

    def position(self, stm: int, idx: int, options: tuple) -> CrosscheckReport:
        """The report of one position: both players' searches, the never-lose move, and
        every result they settled, against the table."""
        order, max_nodes, max_seconds, deepen, close_cycles, engine = options
        graph, truth = self.graph, self.truth
        report = CrosscheckReport(graph.key)
        root = pack(stm, idx)
        graph.start = root
        label = graph.board(root).fen()
        root_eval, root_depth = truth.value(root)
        proofs = {}
        searches = make_searches(graph, order, close_cycles, engine)
        for g in (1, -1):
            proof = prove(graph, g, root, order, max_nodes, max_seconds, deepen, close_cycles, engine, searches[g])
            proofs[g] = proof
            report.searches += 1
            report.nodes += proof.nodes
            if not proof.finished:
                report.unfinished += 1
                continue
            if proof.plies is not None:
                report.deepened += 1
            if proof.win == (root_eval == g):
                report.agreed += 1
            else:
                report.disagreed += 1
                report._fail(f"{label} g={g:+d}: search says win={proof.win}, table eval={root_eval}")
            if proof.win and root_eval == g:
                if proof.d < root_depth:
                    report.depth_violations += 1
                    report._fail(f"{label} g={g:+d}: d={proof.d} < d_g={root_depth}")
                if root_depth > 0:
                    report.ratios.append(proof.d / root_depth)
                    report.excess.append(proof.d - root_depth)
        player = graph.turn(root)
        if root_eval != -player and not graph.is_sink(root):
            found = never_lose_move(graph, player, proofs[-player], max_nodes, max_seconds)
            report.nodes += found.nodes
            report.never_lose_checked += 1
            if found.vertex is None and not found.finished:
                report.never_lose_unfinished += 1
            elif found.vertex is None:
                report.never_lose_disagreed += 1
                report._fail(f"{label}: no never-lose move found, yet the table does not score it lost")
            else:
                after = truth.value(found.vertex)[0]
                if after == -player:
                    report.never_lose_disagreed += 1
                    report._fail(f"{label}: never-lose move to {graph.board(found.vertex).fen()} loses by the table")
                else:
                    report.never_lose_agreed += 1
        for g in (1, -1):  # after the never-lose search, which adds to the opponent's results
            _check_facts(report, truth, g, proofs[g].search.facts(), label)
        report.positions += 1
        return report


# A worker process's checker, made at its first position: (folders, cache bound, material) -> checker.
_WORKER_CHECKERS: dict[tuple, _Checker] = {}


def _check_in_worker(where: tuple, position: tuple[int, int], options: tuple) -> CrosscheckReport:
    """:meth:`_Checker.position` in a worker process of :func:`crosscheck`."""
    checker = _WORKER_CHECKERS.get(where)
    if checker is None:
        folders, cache_bytes, key = where
        checker = _WORKER_CHECKERS[where] = _Checker(open_tablebase(list(folders), cache_bytes=cache_bytes), key)
    return checker.position(*position, options)
