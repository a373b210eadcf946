"""Romano's game graph: the :class:`GameGraph` protocol and explicit CSR graphs.

A game graph is G = <V, E, v0, win, turn> (F. Romano, "How to program a
never-losing chess engine", Def. 2.6): sinks are the vertices whose only arc is a
self-loop, ``turn(v)`` in {+1, -1} alternates along every other arc, and ``win``
gives every sink its value, +1 White wins, -1 Black wins, 0 draw.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

#: Romano's infinite depth, d_g(v) for a vertex that g does not win. Large enough to
#: add 1 to without overflowing int64, and a plain ``int`` so it compares with
#: Python ints and numpy arrays alike.
INF: int = np.iinfo(np.int64).max // 4


@runtime_checkable
class GameGraph(Protocol):
    """What a solver needs to know about a game: Romano's Def. 2.6, read lazily.

    Vertices may be any hashable. A sink answers ``successors(v) == [v]`` and is the
    only vertex ``win(v)`` is asked about. ``num_vertices`` is ``None`` for implicit
    graphs too big to count.

    >>> from tablebase.game import GameGraph, SubtractionGame
    >>> isinstance(SubtractionGame(5), GameGraph)
    True
    """

    num_vertices: int | None
    start: Hashable

    def successors(self, v: Any) -> Sequence[Hashable]: ...

    def turn(self, v: Any) -> int: ...

    def is_sink(self, v: Any) -> bool: ...

    def win(self, v: Any) -> int: ...


class InvalidGameError(ValueError):
    """A graph that breaks Def. 2.6, with the offending vertex in :attr:`vertex`.

    The message names the vertex, and the other end of the arc where an arc is at
    fault (:attr:`successor`).
    """

    def __init__(self, vertex: Hashable, problem: str, successor: Hashable | None = None) -> None:
        self.vertex = vertex
        self.problem = problem
        self.successor = successor
        if successor is not None:
            problem = problem.format(successor=repr(successor))
        super().__init__(f"vertex {vertex!r}: {problem}")

    def relabel(self, names: Sequence[Hashable]) -> InvalidGameError:
        """The same error with vertex ids ``i`` replaced by ``names[i]``."""
        successor = None if self.successor is None else names[self.successor]
        # self.problem still holds the {successor} placeholder for the new name.
        return InvalidGameError(names[self.vertex], self.problem, successor)


class VertexArray(np.ndarray):
    """A read-only numpy array that can also be called like a :class:`GameGraph` method.

    ``game.turn[v]`` (or any numpy operation on ``game.turn``) sees the int8 array,
    ``game.turn(v)`` returns a plain Python ``int`` (``bool`` for ``is_sink``).
    """

    # ndarray.item(v) goes straight to a Python scalar: several times faster than self[v].item().
    __call__ = np.ndarray.item


def _frozen(array: np.ndarray, callable_: bool = False) -> np.ndarray:
    view = array.view(VertexArray) if callable_ else array.view()
    view.flags.writeable = False
    return view


class ExplicitGame:
    """A materialised game graph in CSR form; vertices are ``0 .. num_vertices - 1``.

    ``successors[v]`` lists the successors of ``v`` (parallel arcs allowed), ``turn[v]``
    is +1 or -1, and ``win`` gives the value of every sink, either as a mapping or as
    a sequence indexed by vertex whose entries for non-sinks are ignored. The graph is
    checked against Def. 2.6; a violation raises :class:`InvalidGameError` (a
    ``ValueError``) naming the first offending vertex.

    Arrays: ``indptr`` (int64, length n + 1), ``indices`` (int32, int64 from 2**31
    vertices on), ``turn`` and ``win`` (int8; ``win`` is 0 for non-sinks) and
    ``is_sink`` (bool). ``turn``, ``win`` and ``is_sink`` are also callable, so an
    ``ExplicitGame`` is a :class:`GameGraph`. All arrays are read-only.

    >>> from tablebase.game import ExplicitGame
    >>> game = ExplicitGame([[1, 2], [1], [0]], turn=[1, -1, -1], win={1: 1})
    >>> game.successors(0), game.turn(2), game.is_sink(1), game.win(1)
    ([1, 2], -1, True, 1)
    """

    #: For graphs numbered by :func:`as_explicit`: ``vertex_ids[i]`` is the original
    #: vertex of id ``i`` and ``vertex_index`` the inverse mapping.
    vertex_ids: Sequence[Hashable] | None = None
    vertex_index: Mapping[Hashable, int] | None = None

    def __init__(
        self,
        successors: Sequence[Sequence[int]],
        turn: Sequence[int] | npt.ArrayLike,
        win: Mapping[int, int] | Sequence[int | None] | npt.ArrayLike,
        start: int = 0,
    ) -> None:
        n = len(successors)
        degree = np.fromiter((len(s) for s in successors), np.int64, count=n)
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(degree, out=indptr[1:])
        indices = np.fromiter(
            itertools.chain.from_iterable(successors), np.int64, count=int(indptr[-1])
        )
        if not isinstance(win, Mapping) and len(win) != n:
            raise ValueError(f"win needs one entry per vertex ({n}), got {len(win)}")
        self._init(indptr, indices, np.asarray(turn), functools.partial(_user_sink_values, win, n), start)

    @classmethod
    def from_csr(
        cls,
        indptr: npt.ArrayLike,
        indices: npt.ArrayLike,
        turn: npt.ArrayLike,
        win: npt.ArrayLike,
        start: int = 0,
    ) -> ExplicitGame:
        """Builds a graph from CSR arrays, validated with vectorised numpy only.

        The successors of ``v`` are ``indices[indptr[v]:indptr[v + 1]]``; ``win`` is an
        integer array of length n whose entries count only at sinks. ``indptr`` and
        ``indices`` arrays that already have the stored dtypes are used without copying.

        >>> import numpy as np
        >>> from tablebase.game import ExplicitGame
        >>> game = ExplicitGame.from_csr(np.array([0, 2, 3, 4]), np.array([1, 2, 1, 0]),
        ...                              np.array([1, -1, -1]), np.array([0, 1, 0]))
        >>> game.num_vertices, game.num_arcs, game.is_sink.tolist()
        (3, 4, [False, True, False])
        """
        game = cls.__new__(cls)
        turn = np.asarray(turn)
        win = np.asarray(win)
        if win.shape != turn.shape or win.dtype.kind not in "biu":
            raise ValueError(f"win must be an integer array shaped like turn, got {win.dtype} {win.shape}")
        sink_values = functools.partial(_array_sink_values, win)
        game._init(np.asarray(indptr), np.asarray(indices), turn, sink_values, start)
        return game

    def _init(
        self,
        indptr: np.ndarray,
        indices: np.ndarray,
        turn: np.ndarray,
        sink_values: Callable[[np.ndarray], np.ndarray],
        start: int,
    ) -> None:
        if indptr.ndim != 1 or indptr.size == 0 or indptr.dtype.kind not in "iu":
            raise ValueError("indptr must be a non-empty 1-D integer array")
        if indices.ndim != 1 or (indices.size and indices.dtype.kind not in "iu"):
            raise ValueError("indices must be a 1-D integer array")
        n = indptr.size - 1
        if turn.shape != (n,):
            raise ValueError(f"turn needs one entry per vertex ({n}), got shape {turn.shape}")
        if indptr[0] != 0 or indptr[-1] != indices.size:
            raise ValueError(f"indptr must run from 0 to len(indices) = {indices.size}")
        indptr = indptr.astype(np.int64, copy=False)
        degree = np.diff(indptr)
        _first_error(degree < 0, "has a negative number of successors (indptr decreases)")
        _first_error((turn != 1) & (turn != -1), "turn must be +1 or -1")
        bad_arc = (indices < 0) | (indices >= n)
        if bad_arc.any():
            arc = int(np.argmax(bad_arc))
            vertex = int(np.searchsorted(indptr, arc, side="right")) - 1
            raise InvalidGameError(vertex, f"successor {{successor}} is out of range [0, {n})", int(indices[arc]))
        _first_error(degree == 0, "is not a sink and has no successors")
        # Narrow ids to int32 where they fit: half the memory traffic in the solvers.
        indices = indices.astype(np.int32 if n < 2**31 else np.int64, copy=False)
        source = np.repeat(np.arange(n, dtype=indices.dtype), degree)
        loop = indices == source
        is_sink = (degree == 1) & loop[indptr[:-1]]
        _first_arc_error(loop & ~np.repeat(is_sink, degree), source, indices,
                         "is not a sink but has a self-loop (a sink's only successor is itself)")
        win = np.zeros(n, np.int8)
        sinks = np.flatnonzero(is_sink)
        win[sinks] = sink_values(sinks)
        turn = turn.astype(np.int8)
        turn_of_source = np.repeat(turn, degree)
        _first_arc_error((turn[indices] == turn_of_source) & ~loop, source, indices,
                         "turn does not alternate along the arc to {successor} (both have the same turn)")
        if not 0 <= int(start) < n:
            raise ValueError(f"start vertex {start} is out of range [0, {n})")
        self.num_vertices: int = n
        self.start: int = int(start)
        self.indptr = _frozen(indptr)
        self.indices = _frozen(indices)
        self.turn = _frozen(turn, callable_=True)
        self.win = _frozen(win, callable_=True)
        self.is_sink = _frozen(is_sink, callable_=True)

    @property
    def num_arcs(self) -> int:
        """Number of arcs, parallel arcs and the sinks' self-loops included."""
        return int(self.indices.size)

    def successors(self, v: int) -> list[int]:
        """The successors of ``v`` in CSR order (``[v]`` for a sink)."""
        bound = self.indptr.item
        return self.indices[bound(v) : bound(v + 1)].tolist()

    def __repr__(self) -> str:
        return f"<ExplicitGame with {self.num_vertices} vertices, {self.num_arcs} arcs, start {self.start}>"


def _first_error(mask: np.ndarray, problem: str) -> None:
    if mask.any():
        raise InvalidGameError(int(np.argmax(mask)), problem)


def _first_arc_error(mask: np.ndarray, source: np.ndarray, indices: np.ndarray, problem: str) -> None:
    if mask.any():
        arc = int(np.argmax(mask))
        raise InvalidGameError(int(source[arc]), problem, int(indices[arc]))


def _array_sink_values(win: np.ndarray, sinks: np.ndarray) -> np.ndarray:
    values = win[sinks]
    bad = (values != 1) & (values != 0) & (values != -1)
    if bad.any():
        i = int(np.argmax(bad))
        raise InvalidGameError(int(sinks[i]), f"win value {values[i]} is not -1, 0 or +1")
    return values


def _user_sink_values(win: Mapping[int, int] | Sequence[int | None], n: int, sinks: np.ndarray) -> np.ndarray:
    """The sinks' entries of a user's ``win``; entries of other vertices are never read."""
    if isinstance(win, Mapping):
        for v in win:
            if not 0 <= v < n:
                raise ValueError(f"win names vertex {v!r}, which is not in the graph (0 .. {n - 1})")
        values = [win.get(v) for v in sinks.tolist()]
    else:
        values = [win[v] for v in sinks.tolist()]
    for v, value in zip(sinks.tolist(), values):
        if value is None:
            raise InvalidGameError(v, "is a sink missing from win")
        if value not in (-1, 0, 1):
            raise InvalidGameError(v, f"win value {value!r} is not -1, 0 or +1")
    return np.array(values, np.int8)


def as_explicit(game: GameGraph) -> ExplicitGame:
    """The explicit form of ``game``.

    An :class:`ExplicitGame` is returned as is; an object with a ``to_explicit()``
    method is asked for it; any other :class:`GameGraph` is explored breadth-first
    from ``game.start`` and its reachable vertices numbered in visiting order (the
    start is 0). The result's ``vertex_ids`` and ``vertex_index`` translate between
    ids and the original vertices, and validation errors name original vertices.

    >>> from tablebase.game import SubtractionGame, as_explicit
    >>> game = as_explicit(SubtractionGame(3))
    >>> game.vertex_ids[:3]
    [(3, 1), (2, -1), (0, -1)]
    """
    if isinstance(game, ExplicitGame):
        return game
    to_explicit = getattr(game, "to_explicit", None)
    if callable(to_explicit):
        return to_explicit()
    ids: list[Hashable] = [game.start]
    index: dict[Hashable, int] = {game.start: 0}
    rows: list[list[int]] = []
    turns: list[int] = []
    wins: list[int | None] = []
    for v in ids:  # grows while we walk it: breadth-first order
        successors = list(game.successors(v))
        sink = bool(game.is_sink(v))
        if sink and successors != [v]:
            raise InvalidGameError(v, f"is_sink() is true but the successors are {successors!r}, not [v]")
        row = []
        for u in successors:
            i = index.get(u)
            if i is None:
                i = index[u] = len(ids)
                ids.append(u)
            row.append(i)
        rows.append(row)
        turns.append(game.turn(v))
        wins.append(game.win(v) if sink else None)
    try:
        explicit = ExplicitGame(rows, turns, wins)
    except InvalidGameError as error:
        raise error.relabel(ids) from None
    explicit.vertex_ids = ids
    explicit.vertex_index = index
    return explicit
