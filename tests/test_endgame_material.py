"""Material keys against python-chess's Syzygy naming, sub-tables, errors, colour flips."""

from __future__ import annotations

import itertools

import chess
import chess.syzygy
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablebase.endgame import Material, all_materials, board_material, dependency_order, normalize_key
from tablebase.endgame.material import MAX_PIECES


def spellings(key: str):
    """Every way to write a key: each side's letters in any order, either side first."""
    white, black = key.split("v")
    for w in set(itertools.permutations(white)):
        for b in set(itertools.permutations(black)):
            yield "".join(w) + "v" + "".join(b)
            yield "".join(b) + "v" + "".join(w)


@pytest.mark.parametrize("pieces", [3, 4, 5])
def test_every_key_normalises_like_syzygy(pieces):
    keys = all_materials(pieces)
    syzygy = [name for name in chess.syzygy.tablenames(piece_count=pieces) if len(name) == pieces + 1]
    assert sorted(keys) == sorted(syzygy)
    for key in keys:
        for spelling in spellings(key):
            assert normalize_key(spelling) == chess.syzygy.normalize_tablename(spelling) == key, spelling


@given(st.lists(st.sampled_from("QRBNP"), max_size=MAX_PIECES - 2), st.integers(0, MAX_PIECES - 2),
       st.randoms(use_true_random=False))
def test_random_keys_normalise_like_syzygy(pieces, split, random):
    random.shuffle(pieces)
    split = min(split, len(pieces))
    white, black = ["K", *pieces[:split]], ["K", *pieces[split:]]
    random.shuffle(white)
    random.shuffle(black)
    key = "".join(white) + "v" + "".join(black)
    normal = normalize_key(key)
    assert normal == chess.syzygy.normalize_tablename(key)
    assert normalize_key(normal) == normal and Material.parse(key).key == normal


def test_material_properties():
    m = Material.parse("KPvKRR")
    assert (m.white, m.black, m.num_pieces, m.has_pawns, m.is_symmetric) == ("KRR", "KP", 5, True, False)
    assert Material.parse("KQvKQ").is_symmetric and not Material.parse("KQvKR").has_pawns
    assert m.pieces() == [(0, 0), (1, 0), (0, 2), (0, 2), (1, 5)]


@pytest.mark.parametrize("key, expected", [
    # Captures of R or P by either side, and the pawn's promotions with and without
    # capturing the rook.
    ("KRPvKR", ["KRPvK", "KRvKP", "KRvKR", "KQRvKR", "KRRvKR", "KRBvKR", "KRNvKR",
                "KQRvK", "KRRvK", "KRBvK", "KRNvK"]),
    # A promoting pawn cannot capture a pawn: no KQvK and the like.
    ("KPvKP", ["KPvK", "KQvKP", "KRvKP", "KBvKP", "KNvKP"]),
    ("KPvK", ["KvK", "KQvK", "KRvK", "KBvK", "KNvK"]),
    ("KQvKR", ["KQvK", "KRvK"]),
    ("KvK", []),
    # Black's pawn promotes, also by capturing White's bishop or knight.
    ("KBNvKP", ["KBNvK", "KNvKP", "KBvKP", "KBNvKQ", "KBNvKR", "KBNvKB", "KBNvKN",
                "KQvKN", "KRvKN", "KBvKN", "KNvKN", "KQvKB", "KRvKB", "KBvKB"]),
    ("KPPvKP", ["KPPvK", "KPvKP", "KQPvKP", "KRPvKP", "KBPvKP", "KNPvKP",
                "KPPvKQ", "KPPvKR", "KPPvKB", "KPPvKN"]),
])
def test_direct_subtables(key, expected):
    assert [m.key for m in Material.parse(key).direct_subtables()] == sorted(expected)


def test_dependency_order_puts_every_table_after_its_subtables():
    order = dependency_order(["KRPvKR", "KQRvKR", "KBNvKP"])
    assert order[0] == "KvK" and len(order) == len(set(order))
    position = {key: i for i, key in enumerate(order)}
    for key in order:
        assert all(position[sub.key] < position[key] for sub in Material.parse(key).direct_subtables())
    assert [m.key for m in Material.parse("KQvKR").subtables()] == ["KvK", "KQvK", "KRvK"]
    assert set(order) >= {"KRPvKR", "KQRvKR", "KBNvKP", "KRRvK", "KPvK", "KQvKN"}


@pytest.mark.parametrize("key, problem", [
    ("QvKR", "side 'Q' has no king"),
    ("KKvK", "side 'KK' has two kings"),
    ("KXvK", "unknown piece letter 'X'"),
    ("KQRBvKQRB", f"8 pieces, more than the {MAX_PIECES} supported"),
    ("KQvKvK", "expected two sides separated by 'v'"),
])
def test_bad_keys_raise_value_errors_naming_the_key(key, problem):
    with pytest.raises(ValueError, match=f"bad material key '{key}': {problem}"):
        normalize_key(key)
    with pytest.raises(ValueError, match=f"'{key}'"):
        Material.parse(key)


def test_seven_pieces_are_supported():
    assert normalize_key("KRvKQRBN") == "KQRBNvKR"
    with pytest.raises(ValueError, match="at least the two kings"):
        all_materials(1)


@pytest.mark.parametrize("fen, key, flipped", [
    ("8/8/8/8/8/2k5/1q6/K7 w - - 0 1", "KQvK", True),
    ("8/8/8/8/8/2k5/1Q6/K7 w - - 0 1", "KQvK", False),
    ("8/8/3r4/8/8/2k5/1Q6/K7 w - - 0 1", "KQvKR", False),
    ("8/8/3R4/8/8/2k5/1q6/K7 b - - 0 1", "KQvKR", True),
    ("8/p7/3R4/8/8/2k5/1r6/K7 b - - 0 1", "KRPvKR", True),
    ("8/8/3r4/8/8/2k5/1R6/K7 b - - 0 1", "KRvKR", False),
    ("8/8/8/8/8/2k5/8/K7 b - - 0 1", "KvK", False),
])
def test_board_material(fen, key, flipped):
    board = chess.Board(fen)
    assert board_material(board) == (key, flipped)
    if key.split("v")[0] != key.split("v")[1]:
        assert board_material(board.mirror()) == (key, not flipped)


def test_board_material_rejects_boards_no_table_holds():
    with pytest.raises(ValueError, match="kings of one colour"):
        board_material(chess.Board("8/8/8/8/8/2K5/8/K6k w - - 0 1"))
    with pytest.raises(ValueError, match="more than 7"):
        board_material(chess.Board("8/8/3q4/8/1rbn4/2k5/7p/KQ6 w - - 0 1"))
