"""The index against python-chess: every legal position has an index, and an index
decodes to the position it was encoded from, up to the table's symmetries.

Random samples: 200,000 legal positions per 4-piece table, 50,000 per 5-piece table.
"""

from __future__ import annotations

import itertools

import chess
import numpy as np
import pytest

from tablebase.endgame import IndexScheme, Material, all_materials, board_index, index_board, successor_lists
from tablebase.endgame.board import SYMMETRY
from tablebase.endgame.movegen import ExitMap

THREE = all_materials(3)
SAMPLES = {"KQvKR": 200_000, "KRvKP": 200_000, "KRPvKR": 50_000, "KQRvKR": 50_000, "KBNvKP": 50_000}

PIECE_TYPES = (chess.KING, chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT, chess.PAWN)
#: Placements a tablebase holds although no game reaches them (as Syzygy does).
UNREACHABLE_BUT_LEGAL = chess.STATUS_TOO_MANY_CHECKERS | chess.STATUS_IMPOSSIBLE_CHECK


def make_board(material: Material, squares: np.ndarray, stm: int) -> chess.Board:
    """The board of a placement (slot squares), White holding the table's left side."""
    board = chess.Board(None)
    for (colour, ptype), sq in zip(material.pieces(), squares.tolist()):
        board.set_piece_at(sq, chess.Piece(PIECE_TYPES[ptype], colour == 0))
    board.turn = stm == 0
    return board


def pychess_legal(material: Material, squares: np.ndarray) -> np.ndarray:
    """python-chess's verdict on each placement (slot squares, White holding the
    table's left side): shape ``(n, 2)``, column ``stm`` for that side to move."""
    pieces = [chess.Piece(PIECE_TYPES[ptype], colour == 0) for colour, ptype in material.pieces()]
    board = chess.Board(None)
    out = np.empty((len(squares), 2), dtype=bool)
    for i, row in enumerate(squares.tolist()):
        board.set_piece_map(dict(zip(row, pieces)))
        for stm in (0, 1):
            board.turn = stm == 0
            out[i, stm] = board.status() & ~UNREACHABLE_BUT_LEGAL == chess.STATUS_VALID
    return out


def groups(material: Material) -> list[slice]:
    """Slot ranges of identical pieces."""
    out, slots, start = [], material.pieces(), 0
    for end in range(1, len(slots) + 1):
        if end == len(slots) or slots[end] != slots[start]:
            out.append(slice(start, end))
            start = end
    return out


def same_up_to_symmetry(material: Material, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise: is placement ``b`` a symmetry image of ``a`` (8 board symmetries
    pawnless, the left-right mirror with pawns), identical pieces in any order?"""
    def canonical(x):
        x = x.copy()
        for g in groups(material):
            x[:, g] = np.sort(x[:, g], axis=1)
        return x

    target = canonical(b)
    return np.any([(canonical(t[a]) == target).all(axis=1) for t in symmetries(material)], axis=0)


def symmetries(material: Material) -> np.ndarray:
    """The table's square maps: 8 board symmetries pawnless, the left-right mirror with pawns."""
    return SYMMETRY[[0, 1]] if material.has_pawns else SYMMETRY


def our_legal_flags(material: Material, stm: int) -> np.ndarray:
    """The move generator's verdict on every index: non-zero where legal."""
    scheme, exits = IndexScheme.of(material), ExitMap.of(material)
    return successor_lists(scheme.desc, stm, 0, scheme.size, exits.arrays)[4]


def random_placements(material: Material, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` placements with distinct squares, pawns on ranks 2-7, uniformly at random."""
    pawn = np.array([ptype == 5 for _, ptype in material.pieces()])
    squares = rng.integers(0, 64, (n, len(pawn)))
    squares[:, pawn] = rng.integers(8, 56, (n, pawn.sum()))
    distinct = np.array([len(set(row)) == len(row) for row in squares.tolist()])
    return squares[distinct]


@pytest.mark.parametrize("key", THREE + ["KQvKR", "KRvKP"])
def test_decode_then_encode_is_the_identity_on_valid_indices(key):
    # One index serves both sides to move, so this covers both.
    scheme = IndexScheme.of(key)
    indices = np.arange(scheme.size)
    squares, valid = scheme.decode(indices)
    assert valid.mean() > 0.9
    assert np.array_equal(scheme.encode(squares[valid]), indices[valid])


@pytest.mark.parametrize("key", THREE)
def test_every_placement_of_three_pieces(key):
    """All 64*63*62 placements, each side to move: legal exactly where python-chess
    says so, and every legal one encodes and decodes to an equivalent placement.
    Symmetric placements share one index, and the valid indices are exactly the
    encodings of placements: index and position classes are in bijection."""
    material = Material.parse(key)
    scheme = IndexScheme.of(material)
    squares = np.array([p for p in itertools.permutations(range(64), 3)], dtype=np.int64)
    idx = scheme.encode(squares)
    for t in symmetries(material):
        assert np.array_equal(scheme.encode(t[squares]), idx)
    legal = pychess_legal(material, squares)
    for stm in (0, 1):
        flags = our_legal_flags(material, stm)
        ours = (idx >= 0) & (flags[idx] != 0)
        theirs = legal[:, stm]
        bad = np.flatnonzero(ours != theirs)
        assert len(bad) == 0, [(squares[i].tolist(), stm, ours[i]) for i in bad[:5]]
    decoded, valid = scheme.decode(idx[idx >= 0])
    assert valid.all() and same_up_to_symmetry(material, squares[idx >= 0], decoded).all()
    assert np.array_equal(np.unique(idx[idx >= 0]), np.flatnonzero(scheme.decode(np.arange(scheme.size))[1]))


@pytest.mark.parametrize("key", list(SAMPLES))
def test_random_legal_positions_encode_and_decode(key):
    """Random placements python-chess calls legal (pawns on ranks 2-7), random side to
    move: each encodes, the same for its symmetric images, and decodes to one of them."""
    material = Material.parse(key)
    scheme = IndexScheme.of(material)
    rng = np.random.default_rng(sum(map(ord, key)))
    squares = np.empty((0, material.num_pieces), np.int64)
    stm = np.empty(0, np.int64)
    while len(squares) < SAMPLES[key]:
        more = random_placements(material, SAMPLES[key], rng)
        side = rng.integers(0, 2, len(more))
        legal = pychess_legal(material, more)[np.arange(len(more)), side]
        squares, stm = np.concatenate([squares, more[legal]]), np.concatenate([stm, side[legal]])
    squares, stm = squares[:SAMPLES[key]], stm[:SAMPLES[key]]
    idx = scheme.encode(squares)
    assert (idx >= 0).all()
    for t in symmetries(material):
        assert np.array_equal(scheme.encode(t[squares]), idx)
    decoded, valid = scheme.decode(idx)
    assert valid.all()
    assert same_up_to_symmetry(material, squares, decoded).all()

    # board_index finds the same index, also for the colour-flipped board, and
    # index_board gives the decoded placement back.
    for i in rng.choice(len(squares), 300, replace=False):
        board = make_board(material, squares[i], stm[i])
        expected = (material.key, int(stm[i]), int(idx[i]))
        assert board_index(board) == expected
        assert board_index(board.mirror()) == expected
        assert index_board(*expected) == make_board(material, decoded[i], stm[i])
