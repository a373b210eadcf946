"""One chess material as a Romano game graph, closed under its sub-tables.

:class:`ChessGame` numbers the legal positions of a material (both sides to move)
densely and adds one sink per position reachable by a capture or a promotion, valued
by the sub-table. Checkmates and stalemates are sinks themselves. The whole graph is
built at construction with the compiled move generator and vectorised numpy, so it is
meant for tables that fit in memory a few times over (up to 4 pieces), as the
reference the generator is checked against.

>>> import chess
>>> from tablebase.endgame import ChessGame, board_index
>>> from tablebase.solve import retrograde
>>> game = ChessGame("KQvK")
>>> solution = retrograde(game)
>>> key, stm, idx = board_index(chess.Board("k7/7Q/1K6/8/8/8/8/8 w - - 0 1"))  # Qb7#
>>> v = game.vertex(stm, idx)
>>> int(solution.eval[v]), int(solution.depth(1)[v])
(1, 1)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from tablebase.game import ExplicitGame

from .index import IndexScheme
from .material import Material
from .movegen import ExitMap, successor_lists

#: ``subtable_values(sub_key, stm, indices) -> evals``: the eval (+1 the sub-table's
#: White wins, -1 its Black wins, 0 draw; in the sub-table's own orientation) of the
#: given indices of one sub-table with ``stm`` to move, as an array of the same length.
SubtableEvals = Callable[[str, int, np.ndarray], npt.ArrayLike]

#: Sub-tables in which no side can ever mate: every exit into them is a draw.
DRAWN_BY_MATERIAL = frozenset({"KvK", "KBvK", "KNvK"})

# Bits of an exit's sort key: sub-table id, side to move there, side that moved, index.
_IDX_BITS = 40


class ChessGame:
    """The game graph of one material, with captures and promotions as valued sinks.

    Vertices ``0 .. num_positions - 1`` are the legal positions, White to move first,
    each side in index order; ``turn`` is +1 where White moves. Checkmates are sinks
    with ``win = -turn``, stalemates sinks with ``win = 0``. Vertices from
    ``num_positions`` on are *exit* sinks, one per distinct position a capture or a
    promotion reaches; their ``win`` is that position's eval in this table's colours
    (the sub-table's value, negated where the sub-table holds it colour-flipped).

    ``subtable_values`` gives the sub-tables' values (see :data:`SubtableEvals`); it
    may be left out only when every sub-table is in :data:`DRAWN_BY_MATERIAL`.

    Depths follow Romano's d_g on this graph: an arc into an exit sink is one ply and
    the sink's depth is 0, so d_g counts plies to a capture into a won sub-table
    position, not on to the mate. Where every exit is drawn (KQvK, KRvK, ...), d_g is
    the exact depth to mate.

    Positions carry no en-passant square: with pawns of both colours, a double step
    that allows an en-passant capture leads to the position without that right (as in
    :func:`successor_lists`), so such tables are not exact here.

    >>> game = ChessGame("KRvK")
    >>> game.num_positions, game.num_vertices - game.num_positions
    (50015, 462)
    >>> ChessGame("KPvK")
    Traceback (most recent call last):
    ...
    ValueError: KPvK: sub-tables KBvK, KNvK, KQvK, KRvK, KvK are not all drawn by material; pass subtable_values
    """

    def __init__(self, key: str | Material, subtable_values: SubtableEvals | None = None) -> None:
        self.material = Material.parse(key) if isinstance(key, str) else key
        self.scheme = IndexScheme.of(self.material)
        self.exits = ExitMap.of(self.material)
        sub_keys = [m.key for m in self.exits.subtables]
        if subtable_values is None and not DRAWN_BY_MATERIAL.issuperset(sub_keys):
            raise ValueError(f"{self.material}: sub-tables {', '.join(sub_keys)} are not all drawn by material; "
                             "pass subtable_values")
        size = self.scheme.size
        moves = [successor_lists(self.scheme.desc, stm, 0, size, self.exits.arrays) for stm in (0, 1)]
        flags = [m[4] for m in moves]
        #: ``legal[stm]``: the sorted indices of the legal positions with ``stm`` to move.
        self.legal = [np.flatnonzero(f) for f in flags]
        self.num_positions = len(self.legal[0]) + len(self.legal[1])
        self._offset = (0, len(self.legal[0]))
        # Dense index -> vertex maps: one look-up per arc, where a search would cost a
        # cache miss per halving.
        self._vertex_of = np.full((2, size), -1, np.int64)
        for stm in (0, 1):
            self._vertex_of[stm, self.legal[stm]] = self._offset[stm] + np.arange(len(self.legal[stm]))

        # Exits: one sink per distinct (sub-table, its side to move, index, side that
        # moved). The side that moved fixes the sink's turn and whether the sub-table
        # is colour-flipped, so two parents of one sink always agree on both.
        exit_keys = []
        for stm, (_, sub, side, idx, _) in enumerate(moves):
            out = sub >= 0
            exit_keys.append((((sub[out] << 1 | side[out]) << 1 | stm) << _IDX_BITS) | idx[out])
        unique_exits, exit_vertex = np.unique(np.concatenate(exit_keys), return_inverse=True)
        exit_vertex += self.num_positions
        self._exit_sub = unique_exits >> (_IDX_BITS + 2)
        self._exit_side = (unique_exits >> (_IDX_BITS + 1)) & 1
        mover = (unique_exits >> _IDX_BITS) & 1
        self._exit_idx = unique_exits & ((1 << _IDX_BITS) - 1)
        n_exits = len(unique_exits)
        self.num_vertices = self.num_positions + n_exits
        self.start = 0

        # Rows: the moves of each legal position in index order, a self-loop for
        # checkmates, stalemates and exits.
        pos_flags = np.concatenate([flags[s][self.legal[s]] for s in (0, 1)])
        pos_sink = pos_flags >= 2
        move_count = np.concatenate([np.diff(moves[s][0])[self.legal[s]] for s in (0, 1)])
        degree = np.concatenate([np.where(pos_sink, 1, move_count), np.ones(n_exits, np.int64)])
        indptr = np.zeros(self.num_vertices + 1, np.int64)
        np.cumsum(degree, out=indptr[1:])
        indices = np.empty(indptr[-1], np.int64)
        sinks = np.concatenate([np.flatnonzero(pos_sink), np.arange(self.num_positions, self.num_vertices)])
        indices[indptr[sinks]] = sinks
        first_exit = 0
        for stm, (row_ptr, sub, _, idx, _) in enumerate(moves):
            # A side's arcs come in index order, so they fill its movers' rows in order.
            movers = self.legal[stm][flags[stm][self.legal[stm]] == 1]
            rows = self.vertices(stm, movers)
            out = sub >= 0
            target = np.empty(len(sub), np.int64)
            target[~out] = self.vertices(1 - stm, idx[~out])
            target[out] = exit_vertex[first_exit:first_exit + out.sum()]
            first_exit += out.sum()
            indices[_ranges(indptr[rows], np.diff(row_ptr)[movers])] = target

        turn = np.concatenate([np.ones(len(self.legal[0]), np.int8), -np.ones(len(self.legal[1]), np.int8),
                               np.where(mover == 0, -1, 1).astype(np.int8)])
        win = np.zeros(self.num_vertices, np.int8)
        mated = np.flatnonzero(pos_flags == 2)
        win[mated] = -turn[mated]
        # The sub-table is colour-flipped when its side to move is not the one that
        # did not move: its White is our Black.
        flipped = self._exit_side != (1 - mover)
        win[self.num_positions:] = np.where(flipped, -1, 1) * self._subtable_evals(subtable_values)
        self._explicit = ExplicitGame.from_csr(indptr, indices, turn, win, start=self.start)

    def _subtable_evals(self, subtable_values: SubtableEvals | None) -> np.ndarray:
        evals = np.zeros(len(self._exit_idx), np.int8)
        if subtable_values is None:
            return evals
        for sid, sub in enumerate(self.exits.subtables):
            for side in (0, 1):
                which = np.flatnonzero((self._exit_sub == sid) & (self._exit_side == side))
                if len(which) == 0:
                    continue
                values = np.asarray(subtable_values(sub.key, side, self._exit_idx[which]))
                if values.shape != which.shape:
                    raise TypeError(f"subtable_values({sub.key!r}, {side}, indices) returned shape {values.shape}, "
                                    f"expected one value per index {which.shape}")
                evals[which] = values
        return evals

    # GameGraph protocol: the explicit graph answers.

    def successors(self, v: int) -> list[int]:
        return self._explicit.successors(v)

    def turn(self, v: int) -> int:
        return self._explicit.turn(v)

    def is_sink(self, v: int) -> bool:
        return self._explicit.is_sink(v)

    def win(self, v: int) -> int:
        return self._explicit.win(v)

    def to_explicit(self) -> ExplicitGame:
        """The CSR graph the solvers read (built once, at construction)."""
        return self._explicit

    # Vertex ids and positions.

    def vertices(self, stm: int, indices: npt.ArrayLike) -> np.ndarray:
        """Vertex ids of indices with ``stm`` to move (0 White, 1 Black); -1 where an
        index is no legal position.

        >>> ChessGame("KQvK").vertices(1, [0, 8]).tolist()
        [-1, 18087]
        """
        indices = np.asarray(indices, dtype=np.int64)
        inside = (indices >= 0) & (indices < self.scheme.size)
        return np.where(inside, self._vertex_of[stm, np.where(inside, indices, 0)], -1)

    def vertex(self, stm: int, idx: int) -> int:
        """The vertex id of one legal position; KeyError for any other index."""
        v = int(self.vertices(stm, [idx])[0])
        if v < 0:
            raise KeyError(f"{self.material}: index {idx} with {'White' if stm == 0 else 'Black'} to move "
                           "is no legal position")
        return v

    def position(self, v: int) -> tuple[str, int, int]:
        """``(material key, stm, index)`` of a vertex: a position of this table, or for
        an exit sink the sub-table position it stands for (in the sub-table's
        orientation)."""
        if not 0 <= v < self.num_vertices:
            raise IndexError(f"vertex {v} out of range 0..{self.num_vertices - 1}")
        if v < self.num_positions:
            stm = int(v >= self._offset[1])
            return self.material.key, stm, int(self.legal[stm][v - self._offset[stm]])
        e = v - self.num_positions
        return self.exits.subtables[self._exit_sub[e]].key, int(self._exit_side[e]), int(self._exit_idx[e])

    def index_values(self, values: npt.ArrayLike, fill: int = 0) -> np.ndarray:
        """Per-vertex ``values`` laid out by index: shape ``(2, scheme.size)``, row
        ``stm``; ``fill`` where an index is no legal position. Its rows, indexed by a
        sub-table's indices, are what :data:`SubtableEvals` asks for.

        >>> from tablebase.solve import retrograde
        >>> game = ChessGame("KQvK")
        >>> table = game.index_values(retrograde(game).eval)
        >>> int(table[0, 8]), int(table[1, 0])
        (1, 0)
        """
        values = np.asarray(values)
        out = np.full((2, self.scheme.size), fill, dtype=values.dtype)
        for stm in (0, 1):
            out[stm, self.legal[stm]] = values[self._offset[stm]:self._offset[stm] + len(self.legal[stm])]
        return out

    def __repr__(self) -> str:
        return (f"<ChessGame {self.material}: {self.num_positions} positions, "
                f"{self.num_vertices - self.num_positions} exits>")


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(s, s + n)`` for each start and length."""
    total = int(lengths.sum())
    ends = np.cumsum(lengths)
    return np.arange(total) - np.repeat(ends - lengths - starts, lengths)
