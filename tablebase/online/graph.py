"""Chess as a lazy Romano game graph: one material searched, every other one a table leaf.

:class:`SearchGraph` is what :func:`tablebase.solve.win_tree` reads when it searches
chess online. Its vertices are of three kinds:

- a position of the searched material (an ``int``: index, side to move and en-passant
  square packed together), expanded by the compiled move generator; checkmates and
  stalemates are sinks;
- a *leaf*: a position reached by a capture or a promotion, whose material has a table.
  The probe library values it: ``(material key, side to move, index, turn)`` in the
  searched table's orientation, ``turn`` the real side to move (+1 White);
- a *depth chain* vertex ``("#", win, plies, turn)``. A leaf the table scores as a win
  in ``k`` plies leads to a chain of ``k - 1`` such vertices ending in a sink won by the
  winner, so Romano's ``d_g`` of the leaf is the table's depth to mate and the search's
  ``d`` bounds DTM counted to the actual mate, across captures (Thm 3.6). Chains with
  the same ``(win, plies, turn)`` are one vertex, shared by every leaf, so they cost a
  search a few expansions in all. A drawn leaf, or one where the side to move is mated,
  is a sink itself.

The searched material's own table, where there is one, is never used: a search of its
positions is what a cross-check compares with that table.

>>> import chess
>>> from tablebase import open_tablebase
>>> from tablebase.solve import win_tree
>>> with open_tablebase("data/test-tables") as tb:
...     graph = SearchGraph.from_board(tb, chess.Board("7k/8/6K1/8/8/8/8/1R6 w - - 0 1"))
...     result = win_tree(graph, 1)
...     result.root_win, result.d[graph.start]
(True, 1)
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import chess
import numpy as np

from tablebase.endgame.index import IndexScheme
from tablebase.endgame.material import MAX_PIECES, Material
from tablebase.endgame.movegen import ExitMap
from tablebase.endgame.pychess import board_squares, index_board
from tablebase.probe import (
    ILLEGAL_WDL,
    CastlingRightsError,
    IllegalPositionError,
    MissingTableError,
    PositionError,
    Tablebase,
    TooManyPiecesError,
)

from . import kernels

#: The first item of a depth chain vertex; material keys never start with it.
CHAIN = "#"
# Leaf values kept for reuse; past this many the memo starts again (probes are cheap).
_LEAF_MEMO = 1 << 21
# Expansions kept: the search asks is_sink, successors and turn of a vertex in a row, and
# move ordering expands the children that the search opens next; a search cut at r plies
# meets a position again with another r.
_EXPANSION_MEMO = 1 << 16


def has_table(tablebase: Tablebase, key: str) -> bool:
    """Whether ``tablebase`` answers positions of material ``key`` (KvK always does)."""
    try:
        tablebase.probe_batch_indices(key, 0, np.zeros(0, np.int64))
    except MissingTableError:
        return False
    return True


def pack(stm: int, idx: int, ep: int = -1) -> int:
    """The vertex of the searched table's index ``idx`` with ``stm`` to move (table
    orientation) and en-passant square ``ep`` (-1: none).

    >>> unpack(pack(1, 1234, 28))
    (1, 1234, 28)
    """
    return (idx << 8) | (stm << 7) | (ep + 1)


def unpack(v: int | np.ndarray) -> tuple:
    """``(stm, index, ep)`` of a searched position's vertex (see :func:`pack`), or of an
    int64 array of them (three arrays)."""
    return (v >> 7) & 1, v >> 8, (v & 127) - 1


class SearchGraph:
    """The positions of one material, searched lazily, with table leaves (a :class:`~tablebase.game.GameGraph`).

    ``material`` is the searched material; ``flip`` is 1 when its table's White pieces
    are the real Black ones (the colours of a board with the weaker side on White), so
    that ``turn`` and ``win`` are in real colours as Romano's +1 = White. Every table a
    capture or promotion leads to must be in ``tablebase``, else
    :exc:`~tablebase.probe.MissingTableError` names the missing ones. Build one from a
    board with :meth:`from_board`.

    >>> from tablebase import open_tablebase
    >>> with open_tablebase("data/test-tables") as tb:
    ...     graph = SearchGraph(tb, "KQvK")
    ...     v = pack(0, 1000)
    ...     graph.turn(v), graph.is_sink(v), len(graph.successors(v))
    (1, False, 23)
    """

    num_vertices = None

    def __init__(self, tablebase: Tablebase, material: str | Material, flip: int = 0,
                 start: Hashable | None = None) -> None:
        self.tablebase = tablebase
        self.material = Material.parse(material) if isinstance(material, str) else material
        self.key = self.material.key
        self.scheme = IndexScheme.of(self.material)
        self.exits = ExitMap.of(self.material)
        self.flip = int(flip)
        self.start = start
        missing = [m.key for m in self.exits.subtables if not has_table(tablebase, m.key)]
        if missing:
            raise MissingTableError(missing[0], f"searching {self.key} needs the tables its captures and promotions "
                                                f"lead to; missing: {', '.join(missing)}")
        self._sub_keys = [m.key for m in self.exits.subtables]
        self._bufs = kernels.buffers()
        self._memo: dict[int, tuple[list, dict, int]] = {}  # vertex -> (successors, checks, flag)
        self._leaf: dict[tuple, tuple[int, int]] = {}
        #: Positions of the searched material expanded (each call of the move generator).
        self.expansions = 0

    @classmethod
    def from_board(cls, tablebase: Tablebase, board: chess.Board) -> "SearchGraph":
        """The graph that searches ``board``'s material, with ``board`` as ``start``.

        Raises :exc:`~tablebase.probe.PositionError` subclasses for castling rights, too
        many pieces and illegal positions, and
        :exc:`~tablebase.probe.MissingTableError` when a table for the leaves is missing.

        >>> from tablebase import open_tablebase
        >>> with open_tablebase("data/test-tables") as tb:
        ...     graph = SearchGraph.from_board(tb, chess.Board("8/8/8/8/8/2k5/1q6/K7 w - - 0 1"))
        ...     graph.key, graph.flip, graph.turn(graph.start), graph.is_sink(graph.start)
        ('KQvK', 1, 1, False)
        """
        if board.castling_rights:
            raise CastlingRightsError(f"positions with castling rights cannot be searched: {board.fen()}")
        pieces = chess.popcount(board.occupied)
        if pieces > MAX_PIECES:
            raise TooManyPiecesError(f"{pieces} pieces, the index holds at most {MAX_PIECES}: {board.fen()}")
        status = board.status()
        if status != chess.STATUS_VALID:
            raise IllegalPositionError(f"illegal position ({_status_words(status)}): {board.fen()}")
        material, flipped, stm, sq = board_squares(board)
        idx = int(IndexScheme.of(material).encode(sq[None, :])[0])
        if idx < 0:
            raise IllegalPositionError(f"illegal position: {board.fen()}")
        ep = -1
        if board.ep_square is not None and board.has_legal_en_passant():
            pawn = board.ep_square + (-8 if board.turn == chess.WHITE else 8)
            ep = pawn ^ 56 if flipped else pawn
            if (sq[0] & 7) > 3:  # the index mirrors files so that the white king is on a-d
                ep ^= 7
        graph = cls(tablebase, material, int(flipped), pack(stm, idx, ep))
        if graph._expand(graph.start)[2] < 0:
            raise IllegalPositionError(f"illegal position: {board.fen()}")
        return graph

    # -- the GameGraph protocol ---------------------------------------------------------

    def turn(self, v: Hashable) -> int:
        if type(v) is int:
            return 1 if ((v >> 7) & 1) == self.flip else -1
        return v[3]

    def is_sink(self, v: Hashable) -> bool:
        if type(v) is int:
            return self._expand(v)[2] != kernels.MOVES
        if v[0] == CHAIN:
            return v[2] == 0
        w, plies = self.leaf_value(v)
        return w == 0 or plies == 0

    def win(self, v: Hashable) -> int:
        if type(v) is int:
            flag = self._expand(v)[2]
            return -self.turn(v) if flag == kernels.CHECKMATE else 0
        if v[0] == CHAIN:
            return v[1]
        return self.leaf_value(v)[0]

    def successors(self, v: Hashable) -> Sequence[Hashable]:
        if type(v) is int:
            successors, _, flag = self._expand(v)
            return successors if flag == kernels.MOVES else [v]
        if v[0] == CHAIN:
            return [v] if v[2] == 0 else [(CHAIN, v[1], v[2] - 1, -v[3])]
        w, plies = self.leaf_value(v)
        return [v] if w == 0 or plies == 0 else [(CHAIN, w, plies - 1, -v[3])]

    # -- what move ordering and reports need ----------------------------------------------

    def is_leaf(self, v: Hashable) -> bool:
        """Whether ``v`` is a table leaf (a position of another material)."""
        return type(v) is tuple and v[0] != CHAIN

    @staticmethod
    def is_table_vertex(v: Hashable) -> bool:
        """Whether ``v`` is a leaf or a depth chain vertex: a table's value, not a search."""
        return type(v) is tuple

    def leaf_value(self, v: tuple) -> tuple[int, int]:
        """``(win, plies)`` of a leaf: its ``eval`` in real colours and its depth to mate
        (0 for draws and for a mated side to move)."""
        value = self._leaf.get(v)
        if value is None:
            self._probe_leaves([v])
            value = self._leaf[v]
        return value

    def gives_check(self, v: Hashable, u: Hashable) -> bool:
        """Whether the move from ``v`` (the position expanded last, as move ordering sees
        it) to ``u`` gives check."""
        return bool(self._expand(v)[1].get(u, 0) >> 16)

    def features(self, v: int, u: Hashable) -> tuple[int, int, int]:
        """What the move from ``v`` to a position ``u`` of the searched material leaves:
        ``u``'s number of legal moves but en-passant captures (0: checkmate or stalemate),
        how far the king of its side to move is from the edge (0-3) and the distance
        between the kings."""
        f = self._expand(v)[1][u]
        return f & 255, (f >> 8) & 3, (f >> 10) & 15

    def packed_features(self, v: int) -> dict[Hashable, int]:
        """Every successor of ``v`` with its :meth:`features` and :meth:`gives_check` in
        one int (bits 0-7 replies, 8-9 edge, 10-13 kings, 16 check; leaves: the check
        bit only), for move ordering that ranks all the moves of a position: read-only."""
        return self._expand(v)[1]

    def position(self, v: int) -> tuple[int, int, int]:
        """``(stm, index, ep)`` of a searched position, in the table's orientation."""
        return unpack(v)

    def board(self, v: Hashable) -> chess.Board:
        """The real board of a position or leaf vertex (colours as in the game searched)."""
        if type(v) is int:
            stm, idx, ep = unpack(v)
            board = index_board(self.material, stm, idx)
            if ep >= 0:
                board.ep_square = ep - 8 if stm == 1 else ep + 8
            flip = self.flip
        elif v[0] != CHAIN:
            key, stm, idx, turn = v
            board = index_board(key, stm, idx)
            # The leaf's table orientation is real when its table side to move is the real one.
            flip = int((stm == 0) != (turn == 1))
        else:
            raise ValueError(f"{v!r} is a depth chain vertex, not a position")
        return board.mirror() if flip else board

    # -- internals ----------------------------------------------------------------------

    def _expand(self, v: int) -> tuple[list, dict, int]:
        """(successors, checks, flag) of a searched position; flag < 0 for an illegal one."""
        memo = self._memo.get(v)
        if memo is not None:
            return memo
        if len(self._memo) >= _EXPANSION_MEMO:
            self._memo.clear()
        stm, idx, ep = unpack(v)
        exits = self.exits
        out_sub, out_stm, out_idx, out_ep, out_check, out_features = self._bufs
        m, flag = kernels.expand(self.scheme.desc, stm, idx, ep, exits.arrays, out_sub, out_stm, out_idx, out_ep,
                                 out_check, out_features)
        self.expansions += 1
        if m < 0:
            memo = self._memo[v] = ([], {}, m)
            return memo
        turn = self.turn(v)
        successors: list[Hashable] = ((out_idx[:m] << 8) | (out_stm[:m] << 7) | (out_ep[:m] + 1)).tolist()
        new_leaves = []
        for k in np.flatnonzero(out_sub[:m] >= 0).tolist():
            u = successors[k] = (self._sub_keys[out_sub[k]], int(out_stm[k]), int(out_idx[k]), -turn)
            if u not in self._leaf:
                new_leaves.append(u)
        if new_leaves:
            self._probe_leaves(new_leaves)
        # A check is a bit above the features' 14: one dict holds both. Symmetric
        # positions reach one index by several moves, with the same features: one arc.
        check_of = dict(zip(successors, (out_features[:m] | (out_check[:m].astype(np.int64) << 16)).tolist()))
        memo = self._memo[v] = (list(check_of), check_of, flag)
        return memo

    def _probe_leaves(self, leaves: list[tuple]) -> None:
        if len(self._leaf) + len(leaves) > _LEAF_MEMO:
            self._leaf.clear()
        by_key: dict[str, list[tuple]] = {}
        for u in leaves:
            by_key.setdefault(u[0], []).append(u)
        for key, group in by_key.items():
            wdl, dtm = self.tablebase.probe_batch_indices(key, np.array([u[1] for u in group], np.int64),
                                                          np.array([u[2] for u in group], np.int64))
            for u, w, d in zip(group, wdl.tolist(), dtm.tolist()):
                if w == ILLEGAL_WDL:
                    raise PositionError(f"{key}: index {u[2]} reached by a legal move is no legal position "
                                        "in the table (a corrupt or mismatched table?)")
                self._leaf[u] = (w * u[3], abs(d))


def _status_words(status: chess.Status) -> str:
    names = [flag.name.lower().replace("_", " ") for flag in chess.Status if flag and flag in status]
    return ", ".join(names) or "invalid"
