"""The bridge between python-chess boards and (material, side to move, index).

This is the only module of the endgame package that imports python-chess. :func:`encode`
and :func:`decode` are the public pair (``tablebase.encode`` / ``tablebase.decode``):

>>> board = chess.Board("8/8/8/4k3/8/8/2Q4r/K7 w - - 0 1")
>>> material, side, index = encode(board)
>>> material, side, decode(material, side, index) == board
('KQvKR', 'w', True)
"""

from __future__ import annotations

import chess
import numpy as np

from ..errors import CastlingRightsError, IllegalPositionError
from .index import IndexScheme, decode_many, encode_many
from .material import WHITE, Material, board_material

__all__ = ["board_index", "board_squares", "decode", "encode", "fen_as_given", "illegal_position_error", "index_board"]

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


def fen_as_given(board: chess.Board) -> str:
    """The FEN of a board with its own castling rights and en-passant square: ``board.fen()``
    drops rights without their king and rook and an en-passant square without a capture,
    which hides what a message is about.

    >>> fen_as_given(chess.Board("4k3/8/8/8/8/8/Q7/4K3 w K - 0 1"))
    '4k3/8/8/8/8/8/Q7/4K3 w K - 0 1'
    """
    rights = ""
    for colour, rank in ((chess.WHITE, 0), (chess.BLACK, 7)):
        for square in sorted(chess.scan_forward(board.castling_rights & chess.BB_RANKS[rank]), reverse=True):
            letter = {chess.H1: "k", chess.A1: "q", chess.H8: "k", chess.A8: "q"}.get(
                square, chess.FILE_NAMES[chess.square_file(square)])
            rights += letter.upper() if colour == chess.WHITE else letter
    ep = "-" if board.ep_square is None else chess.SQUARE_NAMES[board.ep_square]
    return (f"{board.board_fen()} {'w' if board.turn == chess.WHITE else 'b'} {rights or '-'} {ep} "
            f"{board.halfmove_clock} {board.fullmove_number}")


def illegal_position_error(board: chess.Board, status: chess.Status | None = None) -> IllegalPositionError:
    """The error for a board python-chess finds invalid, naming why and showing the FEN as
    given (see :func:`fen_as_given`)."""
    status = board.status() if status is None else status
    flags = []
    for flag in chess.Status:
        if flag & status:
            text = flag.name.lower().replace("_", " ")
            if flag == chess.STATUS_INVALID_EP_SQUARE:
                text = (f"en-passant square {chess.SQUARE_NAMES[board.ep_square]} impossible: no pawn can just "
                        "have moved two squares past it")
            flags.append(text)
    return IllegalPositionError(f"illegal position ({', '.join(flags)}): {fen_as_given(board)}")


def _side_to_move(side: str | bool) -> int:
    """0 for White to move, 1 for Black: from ``"w"`` / ``"b"`` (as in FENs and shard
    names) or ``chess.WHITE`` / ``chess.BLACK``."""
    if side in ("w", "b") and isinstance(side, str):
        return "wb".index(side)
    if isinstance(side, (bool, np.bool_)):
        return 0 if side else 1
    raise ValueError(f"side must be 'w' or 'b' (or chess.WHITE / chess.BLACK), not {side!r}")


def decode(material: Material | str, side: str | bool, index: int) -> chess.Board:
    """The board of table ``material``'s ``index`` with ``side`` to move (``"w"`` / ``"b"``
    or ``chess.WHITE`` / ``chess.BLACK``), White holding the material's left-hand side:
    the inverse of :func:`encode`. An index of an illegal placement (the side not to move
    in check) gives its board, which is not ``is_valid()``; an index that is no placement
    raises ValueError.

    >>> decode("KQvK", "w", 1000).fen()
    '8/8/Q7/8/8/5k2/8/K7 w - - 0 1'
    """
    scheme = IndexScheme.of(material)
    index = int(index)
    if not 0 <= index < scheme.size:
        raise ValueError(f"{scheme.material.key} has indices 0 to {scheme.size - 1}, not {index}")
    board = index_board(scheme.material, _side_to_move(side), index)
    if board is None:
        raise ValueError(f"index {index} of {scheme.material.key} is no placement of its pieces")
    return board


def encode(board: chess.Board) -> tuple[str, str, int]:
    """(material key, side to move in the table, index) of a board: the table that holds
    it (a board where Black has the stronger side is colour-flipped into it, and
    ``side`` is then the flipped side), the inverse of :func:`decode` on the table's
    orientation. Boards no table holds raise: castling rights
    (:exc:`~tablebase.errors.CastlingRightsError`), a legal en-passant capture (such
    positions are valued over their moves) or an illegal position
    (:exc:`~tablebase.errors.IllegalPositionError`).

    >>> encode(chess.Board("8/8/8/8/8/2k5/1q6/K7 w - - 0 1"))
    ('KQvK', 'b', 22217)
    """
    if board.castling_rights:
        raise CastlingRightsError(f"tables hold no positions with castling rights: {board.fen()}")
    if not board.is_valid():
        raise illegal_position_error(board)
    if board.has_legal_en_passant():
        raise IllegalPositionError(f"tables hold no positions with a legal en-passant capture (they are valued "
                                   f"over their moves): {board.fen()}")
    key, stm, index = board_index(board)
    return key, "wb"[stm], index
