"""The move and un-move kernels against python-chess.

Forward moves, as (table, side to move, index), must be python-chess's legal moves
mapped through ``board_index`` (as multisets); un-moves must be exactly the positions
whose moves reach a position; checkmate and stalemate flags must be python-chess's.
Every position of the 3-piece tables, random ones of bigger tables.

python-chess costs about 0.15 ms per sampled position, so CI checks 20,000 random
positions per 4-piece table and 10,000 per 5-piece table (half with each side to move);
TABLEBASE_FULL=1 checks 200,000 and 50,000, and the un-moves of all of them.
"""

from __future__ import annotations

import os

import chess
import numpy as np
import pytest
from numba import njit

from tablebase.endgame import (ExitMap, IndexScheme, Material, all_materials, board_index, predecessor_lists,
                               successor_lists)
from tablebase.endgame.board import ON_DIAGONAL
from tablebase.endgame.index import KK_SQUARES
from tablebase.endgame.material import PIECE_ORDER, material_of_counts
from tablebase.endgame.movegen import (MAX_MOVES, _predecessors_into, exits_counting, is_legal, may_exit, scratch,
                                       successors, unique_small, walk_to)

FULL = os.environ.get("TABLEBASE_FULL") == "1"
THREE = all_materials(3)
SAMPLES = {"KQvKR": 200_000, "KRvKP": 200_000, "KRPvKR": 50_000, "KQRvKR": 50_000, "KBNvKP": 50_000}
if not FULL:
    SAMPLES = {key: 20_000 if n > 50_000 else 10_000 for key, n in SAMPLES.items()}
#: Sampled positions whose un-moves are checked one by one (every one with TABLEBASE_FULL).
UNMOVE_SAMPLES = None if FULL else 2_000

PIECE_TYPES = (chess.KING, chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT, chess.PAWN)
UNREACHABLE_BUT_LEGAL = chess.STATUS_TOO_MANY_CHECKERS | chess.STATUS_IMPOSSIBLE_CHECK
# A move's target as one integer: table id, side to move, index.
IDX_BITS = 40


class Table:
    """A material with its scheme and exits, and its kernels over chosen indices."""

    def __init__(self, key: str) -> None:
        self.material = Material.parse(key)
        self.scheme = IndexScheme.of(self.material)
        self.exits = ExitMap.of(self.material)
        #: Table ids of move targets: this table is 0, sub-table ``s`` is ``s + 1``.
        self.keys = [self.material.key] + [m.key for m in self.exits.subtables]

    def successors(self, stm: int, lo: int, hi: int):
        e = self.exits
        return successor_lists(self.scheme.desc, stm, lo, hi, e.arrays)

    def moves(self, stm: int, indices: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Flags, move counts and encoded targets of the given indices (None: all)."""
        if indices is None:
            lists = [self.successors(stm, 0, self.scheme.size)]
        else:
            lists = [self.successors(stm, i, i + 1) for i in indices.tolist()]
        counts = np.concatenate([np.diff(r[0]) for r in lists])
        codes = np.concatenate([encode_targets(r[1] + 1, r[2], r[3]) for r in lists])
        return np.concatenate([r[4] for r in lists]), counts, codes


def encode_targets(table_id: np.ndarray, side: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Move targets as one int64 each, to compare and sort them as a whole."""
    return (np.asarray(table_id, np.int64) << (IDX_BITS + 1)) | (np.asarray(side, np.int64) << IDX_BITS) | idx


def index_many(records: np.ndarray, keys: list[str]) -> np.ndarray:
    """board_index of many boards at once, from their bitboards (columns: White,
    Black, then K Q R B N P, then turn), as encoded targets; tables outside ``keys``
    get new ids past them (``keys`` is extended)."""
    colour_bb = records[:, :2]
    counts = np.bitwise_count(records[:, 2:8, None] & colour_bb[:, None, :]).astype(np.int64)  # (n, 6, 2)
    combos, which = np.unique(counts.reshape(len(records), 12), axis=0, return_inverse=True)
    out = np.empty(len(records), np.int64)
    for c, combo in enumerate(combos):
        rows = np.flatnonzero(which == c)
        sides = ["".join(PIECE_ORDER[t] * combo[2 * t + colour] for t in range(6)) for colour in (0, 1)]
        key = material_of_counts(*sides)
        flipped = key != f"{sides[0]}v{sides[1]}"
        material = Material.parse(key)
        squares = np.empty((len(rows), material.num_pieces), np.int64)
        left = {}
        for slot, (colour, ptype) in enumerate(material.pieces()):
            real = colour ^ int(flipped)
            bb = left.get((colour, ptype), records[rows, 2 + ptype] & colour_bb[rows, real])
            sq = np.bitwise_count((bb & -bb) - np.uint64(1)).astype(np.int64)  # lowest set bit
            left[(colour, ptype)] = bb & (bb - np.uint64(1))
            squares[:, slot] = sq ^ 56 if flipped else sq
        stm = (records[rows, 8] == 0).astype(np.int64) ^ int(flipped)
        if key not in keys:
            keys.append(key)
        out[rows] = encode_targets(keys.index(key), stm, IndexScheme.of(material).encode(squares))
    return out


def pychess_moves(material: Material, squares: np.ndarray, stm: np.ndarray, keys: list[str], check_every: int):
    """python-chess's view of each placement: legal, flags (as the kernels'), move
    counts and encoded targets of its legal moves. For every ``check_every``-th
    position, its moves also go through ``board_index`` itself, to tie
    :func:`index_many` to it."""
    pieces = [chess.Piece(PIECE_TYPES[ptype], colour == 0) for colour, ptype in material.pieces()]
    board = chess.Board(None)
    legal = np.zeros(len(squares), bool)
    flags = np.zeros(len(squares), np.int8)
    counts = np.zeros(len(squares), np.int64)
    records, checked = [], []
    for i, (row, s) in enumerate(zip(squares.tolist(), stm.tolist())):
        board.set_piece_map(dict(zip(row, pieces)))
        board.turn = s == 0
        if board.status() & ~UNREACHABLE_BUT_LEGAL != chess.STATUS_VALID:
            continue
        legal[i] = True
        moves = list(board.legal_moves)
        counts[i] = len(moves)
        flags[i] = 1 if moves else 2 if board.is_checkmate() else 3 if board.is_stalemate() else -1
        for move in moves:
            board.push(move)
            records.append((board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK], board.kings,
                            board.queens, board.rooks, board.bishops, board.knights, board.pawns, board.turn))
            if i % check_every == 0:
                checked.append((len(records) - 1, board_index(board)))
            board.pop()
    codes = index_many(np.array(records, dtype=np.uint64).reshape(-1, 9), keys)
    for r, (key, side, idx) in checked:
        assert codes[r] == encode_targets(keys.index(key), side, idx), (key, side, idx)
    return legal, flags, counts, codes


def compare_moves(table: Table, stm: int, indices: np.ndarray | None, check_every: int = 101) -> None:
    """The kernels and python-chess agree on legality, flags and moves of these indices
    (None: the whole table)."""
    flags, counts, codes = table.moves(stm, indices)
    if indices is None:
        indices = np.arange(table.scheme.size)
    squares, valid = table.scheme.decode(indices)
    assert not flags[~valid].any() and not counts[~valid].any()
    indices, squares, flags, counts = indices[valid], squares[valid], flags[valid], counts[valid]
    keys = list(table.keys)
    legal, their_flags, their_counts, their_codes = pychess_moves(
        table.material, squares, np.full(len(indices), stm), keys, check_every)
    assert legal.any()
    assert np.array_equal(flags != 0, legal), indices[(flags != 0) != legal][:5]
    assert np.array_equal(flags, their_flags), indices[flags != their_flags][:5]
    assert np.array_equal(counts, their_counts), indices[counts != their_counts][:5]
    # Multisets of targets, row by row: sort each row's codes and compare.
    row = np.repeat(np.arange(len(indices)), counts)
    ours, theirs = codes[np.lexsort((codes, row))], their_codes[np.lexsort((their_codes, row))]
    bad = np.unique(row[ours != theirs])
    assert len(bad) == 0, f"{table.material} stm {stm}: moves differ at indices {indices[bad[:5]].tolist()}"
    assert keys == table.keys, f"python-chess reached tables {keys[len(table.keys):]} the kernels cannot name"


def sample_indices(table: Table, stm: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random distinct indices with ``stm`` to move, drawn until ``n`` of them are legal
    (as the kernels judge: :func:`compare_moves` checks that verdict on every one), and
    which of them are."""
    drawn = rng.permutation(np.unique(rng.integers(0, table.scheme.size, 4 * n)))
    legal = np.array([table.successors(stm, i, i + 1)[4][0] != 0 for i in drawn.tolist()])
    assert legal.sum() >= n
    end = np.flatnonzero(legal)[n - 1] + 1
    return drawn[:end], legal[:end]


@pytest.mark.parametrize("key", THREE)
@pytest.mark.parametrize("stm", [0, 1])
def test_moves_flags_and_legality_of_every_three_piece_position(key, stm):
    compare_moves(Table(key), stm, None)


def test_every_exit_of_kpvk_is_reached():
    table = Table("KPvK")
    reached = set()
    for stm in (0, 1):
        _, _, codes = table.moves(stm, None)
        reached |= {table.keys[t] for t in np.unique(codes >> (IDX_BITS + 1)).tolist()}
    assert reached == {"KPvK", "KQvK", "KRvK", "KBvK", "KNvK", "KvK"}


@pytest.mark.parametrize("key", ["KQvKR", "KRvKR", "KPvKP", "KQvKP", "KPPvK", "KBNvK"])
@pytest.mark.parametrize("stm", [0, 1])
def test_sides_reached_are_the_exits_of_every_position(key, stm):
    """Init holds only the sub-table sides ``sides_reached`` names: they must be exactly
    the (sub-table, side to move) pairs of the exits of every position. Whole tables."""
    table = Table(key)
    reached = set()
    for s in range(table.scheme.num_slices):
        _, sub, side, _, _ = table.successors(stm, *table.scheme.slice_range(s))
        pairs = np.unique(sub[sub >= 0] * 2 + side[sub >= 0])
        reached |= {(int(p) // 2, int(p) % 2) for p in pairs}
    assert reached == set(table.exits.sides_reached(stm))
    assert reached or (key, stm) == ("KBNvK", 0)  # White takes nothing there


@pytest.mark.parametrize("key", list(SAMPLES))
@pytest.mark.parametrize("stm", [0, 1])
def test_moves_and_flags_of_random_positions(key, stm):
    table = Table(key)
    rng = np.random.default_rng([stm, *map(ord, key)])
    # Each side to move gets half of the table's sample.
    compare_moves(table, stm, sample_indices(table, stm, SAMPLES[key] // 2, rng)[0])


@pytest.mark.parametrize("key", THREE + ["KQvKR"])
def test_unmoves_invert_the_moves_exhaustively(key):
    """predecessor_lists, row by row, equals the in-table arcs of successor_lists reversed."""
    table = Table(key)
    size = table.scheme.size
    for stm in (0, 1):
        indptr, sub, _, idx, _ = table.successors(stm, 0, size)
        source = np.repeat(np.arange(size), np.diff(indptr))
        inside = sub < 0
        # (target, source) pairs, duplicates merged. Sorting beats np.unique, which
        # hashes and is 20x slower on 20M int64.
        arcs = np.sort(idx[inside] * size + source[inside])
        arcs = arcs[np.r_[True, arcs[1:] != arcs[:-1]]]
        back_ptr, back_idx = predecessor_lists(table.scheme.desc, 1 - stm, 0, size)
        target = np.repeat(np.arange(size), np.diff(back_ptr))
        assert len(arcs) > 0 and np.array_equal(target * size + back_idx, arcs)


@pytest.mark.parametrize("key", ["KRvKP", "KRPvKR", "KQRvKR", "KBNvKP"])
def test_unmoves_and_moves_agree_on_random_positions(key):
    """For sampled positions: each un-move's forward moves reach the position, and
    each forward move within the table has the position among its un-moves."""
    table = Table(key)
    desc = table.scheme.desc
    rng = np.random.default_rng([2, *map(ord, key)])
    checked = 0
    for stm in (0, 1):
        n = (SAMPLES[key] if UNMOVE_SAMPLES is None else UNMOVE_SAMPLES) // 2
        indices, legal = sample_indices(table, stm, n, rng)
        for p in indices[legal].tolist():
            for q in predecessor_lists(desc, stm, p, p + 1)[1].tolist():
                _, sub, side, idx, _ = table.successors(1 - stm, q, q + 1)
                assert ((sub == -1) & (side == stm) & (idx == p)).any(), (key, stm, p, q)
                checked += 1
            _, sub, side, idx, _ = table.successors(stm, p, p + 1)
            for r in idx[sub == -1].tolist():
                assert p in predecessor_lists(desc, 1 - stm, r, r + 1)[1], (key, stm, p, r)
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("key", ["KQvKR", "KRvKP", "KPvKP", "KPPvK", "KRRvK", "KRPvKR", "KQRvKR"])
@pytest.mark.parametrize("stm", [0, 1])
def test_odometer_walk_equals_decoding_every_index(key, stm):
    """successor_lists steps from index to index (next_placement); decoding every index
    afresh is its slow twin. Whole 4-piece tables; for 5-piece tables, ranges that start
    and end mid king pair, cross several king pairs (diagonal ones too) and end the table."""
    table = Table(key)
    size, per_kk = table.scheme.size, table.scheme.positions_per_king_pair
    e = table.exits
    if table.material.num_pieces <= 4:
        ranges = [(0, size), (size // 3 + 5, size // 3 + 6)]
    else:
        # The first king pair with both kings on the long diagonal (pawnless tables).
        diag = next(kk for kk, (w, b) in enumerate(KK_SQUARES[0]) if ON_DIAGONAL[w] and ON_DIAGONAL[b])
        ranges = [(0, per_kk + 17), (diag * per_kk - 9, (diag + 1) * per_kk + 9),
                  (size // 2 - per_kk // 3, size // 2 + 2 * per_kk + 7), (size - per_kk, size)]
    legal = 0
    for lo, hi in ranges:
        fast = successor_lists(table.scheme.desc, stm, lo, hi, e.arrays)
        slow = successor_lists(table.scheme.desc, stm, lo, hi, e.arrays, False)
        for a, b in zip(fast, slow):
            assert np.array_equal(a, b), (key, stm, lo, hi)
        legal += np.count_nonzero(fast[4])
    assert legal > 0


@njit(cache=True)
def _distinct_unmove_mismatches(desc, stm, lo, hi):
    """Positions of ``[lo, hi)`` where the un-moves listed once each (``distinct``, which
    looks for repeats only where a symmetry can make them) differ from all un-moves sorted
    and made unique; and how many positions were compared."""
    sq = np.empty(16, dtype=np.int64)
    tmp = np.empty(16, dtype=np.int64)
    board = np.empty(64, dtype=np.int64)
    fast = np.empty(MAX_MOVES, dtype=np.int64)
    slow = np.empty(MAX_MOVES, dtype=np.int64)
    bad = 0
    compared = 0
    for x in range(lo, hi):
        occ = walk_to(desc, x, x == lo, sq, board, tmp)
        if occ == 0 or not is_legal(desc, sq, stm, occ):
            continue
        m = _predecessors_into(desc, sq, x, stm, board, occ, tmp, fast, True, False)
        n = unique_small(slow, _predecessors_into(desc, sq, x, stm, board, occ, tmp, slow, False, False))
        compared += 1
        if m != n or not np.array_equal(np.sort(fast[:m]), slow[:n]):
            bad += 1
    return bad, compared


@pytest.mark.parametrize("key", ["KQvKR", "KBBvK", "KRvKP", "KPvKP"])
@pytest.mark.parametrize("stm", [0, 1])
def test_distinct_unmoves_are_the_unique_unmoves(key, stm):
    """The generator's loss plies count each predecessor once: it looks for repeated
    un-moves only where the king that stays stands on a long diagonal of a pawnless table;
    sorting and dropping repeats everywhere is the slow twin. Whole tables."""
    scheme = IndexScheme.of(key)
    bad, compared = _distinct_unmove_mismatches(scheme.desc, stm, 0, scheme.size)
    assert compared > 0 and bad == 0


@njit(cache=True)
def _counting_mismatches(desc, stm, lo, hi, exit_map):
    """Positions of ``[lo, hi)`` where :func:`exits_counting` (the exits listed, the moves
    that stay in the table counted by masks) differs from the exits and the number of
    in-table moves of :func:`successors`, or where :func:`may_exit` says none and there
    are some; how many legal positions were compared, and how many of them may_exit
    rules out."""
    s = scratch()
    e_sub, e_stm, e_idx = s.e_sub, s.e_stm, s.e_idx
    bad = 0
    compared = 0
    ruled_out = 0
    for x in range(lo, hi):
        occ = walk_to(desc, x, x == lo, s.sq, s.board, s.tmp)
        if occ == 0 or not is_legal(desc, s.sq, stm, occ):
            continue
        m = successors(desc, s.sq, x, stm, s.board, occ, exit_map, s.tmp, s.sub_sq, s.o_sub, s.o_stm, s.o_idx,
                       s.o_ep)
        n_exits, n_inside = exits_counting(desc, s.sq, stm, s.board, occ, exit_map, s.tmp, s.sub_sq, e_sub, e_stm,
                                           e_idx)
        compared += 1
        k = 0
        ok = may_exit(desc, s.sq, stm, occ) or n_exits == 0
        ruled_out += not may_exit(desc, s.sq, stm, occ)
        for j in range(m):
            if s.o_sub[j] < 0:
                continue
            if k >= n_exits or (s.o_sub[j], s.o_stm[j], s.o_idx[j]) != (e_sub[k], e_stm[k], e_idx[k]):
                ok = False
            k += 1
        if not ok or k != n_exits or m - k != n_inside:
            bad += 1
    return bad, compared, ruled_out


@pytest.mark.parametrize("key", ["KQvKR", "KRvKP", "KPvKP", "KPPvK", "KBNvK", "KRPvKR", "KQRvKR"])
@pytest.mark.parametrize("stm", [0, 1])
def test_counted_moves_are_the_in_table_moves(key, stm):
    """Init counts the moves that stay in the table by their target masks (pushes, double
    steps, pinned pieces, evasions) and lists the exits alone; successors lists them all
    (the slow twin): the same exits in the same order, as many in-table moves; and the
    probes' filter before the exits, may_exit, rules out only positions without any. Whole
    4-piece tables; a third of a king pair and more from three places of 5-piece tables."""
    table = Table(key)
    size, per_kk = table.scheme.size, table.scheme.positions_per_king_pair
    if table.material.num_pieces <= 4:
        ranges = [(0, size)]
    else:
        ranges = [(a, a + per_kk // 3) for a in (0, size // 2, size - per_kk)]
    compared = ruled_out = 0
    for lo, hi in ranges:
        bad, n, r = _counting_mismatches(table.scheme.desc, stm, lo, hi, table.exits.arrays)
        assert bad == 0, (key, stm, lo, hi, bad)
        compared += n
        ruled_out += r
    assert compared > 1000 and ruled_out > 0
