"""The bridge between python-chess boards and (material, side to move, index).

This is the only module of the endgame package that imports python-chess.
"""

from __future__ import annotations

import chess
import numpy as np

from .index import IndexScheme, decode_many, encode_many
from .material import WHITE, Material, board_material

_PIECE_TYPES = (chess.KING, chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT, chess.PAWN)


def board_squares(board: chess.Board) -> tuple[Material, bool, int, np.ndarray]:
    """The table a board belongs to, whether it is colour-flipped, the side to move in
    the table (0 White, 1 Black) and the slot squares (table orientation, unnormalised).

    >>> m, flipped, stm, sq = board_squares(chess.Board("8/8/8/8/8/2k5/1q6/K7 w - - 0 1"))
    >>> m.key, flipped, stm, sq.tolist()
    ('KQvK', True, 1, [42, 56, 49])
    """
    key, flipped = board_material(board)
    material = Material.parse(key)
    slots = material.pieces()
    sq = np.empty(len(slots), dtype=np.int64)
    taken: dict[tuple[int, int], list[int]] = {}
    for i, (colour, ptype) in enumerate(slots):
        real_colour = chess.WHITE if (colour == WHITE) != flipped else chess.BLACK
        if (colour, ptype) not in taken:
            taken[(colour, ptype)] = sorted(board.pieces(_PIECE_TYPES[ptype], real_colour))
        s = taken[(colour, ptype)].pop()
        sq[i] = s ^ 56 if flipped else s
    stm = int(board.turn == chess.BLACK) ^ int(flipped)
    return material, flipped, stm, sq


def board_index(board: chess.Board) -> tuple[str, int, int]:
    """(material key, side to move in the table, index) of a board without castling rights.

    >>> board_index(chess.Board("8/8/8/8/8/2k5/1q6/K7 w - - 0 1"))[:2]
    ('KQvK', 1)
    """
    material, _, stm, sq = board_squares(board)
    idx = int(encode_many(IndexScheme.of(material).desc, sq[None, :])[0])
    return material.key, stm, idx


def index_board(material: Material | str, stm: int, idx: int) -> chess.Board | None:
    """The python-chess board of an index (White holding the table's left-hand side), or
    None for an index that is no placement."""
    scheme = IndexScheme.of(material)
    sq, valid = decode_many(scheme.desc, np.array([idx], dtype=np.int64))
    if not valid[0]:
        return None
    board = chess.Board(None)
    for (colour, ptype), s in zip(scheme.material.pieces(), sq[0]):
        board.set_piece_at(int(s), chess.Piece(_PIECE_TYPES[ptype], colour == WHITE))
    board.turn = chess.WHITE if stm == 0 else chess.BLACK
    return board
