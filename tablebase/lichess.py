"""Lichess's tablebase JSON (lila-tablebase's ``/standard`` and ``/standard/mainline``).

The one owner of that contract: the server and ``tablebase probe --json`` print what these
functions return. Conventions, as lila-tablebase's ``src/response.rs`` and
``src/tablebases.rs`` have them:

* the root describes the position; each entry of ``moves`` describes the position *after*
  that move, from the side to move there (so the best move has category ``loss`` and a
  negative ``dtm``), ordered best first by Lichess's sort key (:func:`move_sort_key`);
* ``dtm`` is plies, signed from the side to move, ``0`` for a draw and ``null`` for a
  checkmated side (Gaviota's ``Dtw(0)`` is kept for draws there); ``dtz`` and
  ``precise_dtz`` are the exact DTZ50'' (``null`` where no table answers);
* keys come in the order Lichess serialises them, ``variant_win`` / ``variant_loss`` /
  ``dtw`` / ``dtc`` included (``false`` / ``null`` in standard chess).

Every value of a position comes from :func:`position_values`: it is the one place that
reads the tables.

>>> import chess, tablebase
>>> with tablebase.open_tablebase("data/test-tables") as tb:
...     reply = probe_json(tb, chess.Board("4k3/6KP/8/8/8/8/7p/8 w - - 0 1"))
...
>>> reply["category"], reply["dtm"], reply["moves"][0]["san"], reply["moves"][0]["dtm"]
('win', 17, 'h8=Q+', -16)
"""

from __future__ import annotations

import chess

from .errors import MissingMetricError, MissingTableError, PositionError

__all__ = ["CATEGORIES", "mainline_json", "move_sort_key", "negate", "position_values", "probe_json"]

#: Lichess's categories, worst first for the side to move (lila-tablebase's
#: ``PessimisticUnknown`` order: an unknown result sorts just above a loss).
CATEGORIES = ("loss", "unknown", "syzygy-loss", "maybe-loss", "blessed-loss", "draw", "cursed-win", "maybe-win",
              "syzygy-win", "win")
_RANK = {c: i for i, c in enumerate(CATEGORIES)}
_POSITIVE = frozenset({"cursed-win", "maybe-win", "syzygy-win", "win"})
_NEGATION = {"loss": "win", "win": "loss", "syzygy-loss": "syzygy-win", "syzygy-win": "syzygy-loss",
             "maybe-loss": "maybe-win", "maybe-win": "maybe-loss", "blessed-loss": "cursed-win",
             "cursed-win": "blessed-loss", "draw": "draw", "unknown": "unknown"}
# A root category that settles an ambiguous (rounded DTZ) category of the moves leading
# the list: lila-tablebase's fix-up after sorting.
_SETTLED_BY_ROOT = {"win": ("syzygy-loss", "loss"), "cursed-win": ("syzygy-loss", "blessed-loss"),
                    "blessed-loss": ("syzygy-win", "cursed-win"), "loss": ("syzygy-win", "win")}


def negate(category: str) -> str:
    """The category of the same result seen from the other side.

    >>> negate("cursed-win"), negate("unknown")
    ('blessed-loss', 'unknown')
    """
    return _NEGATION[category]


def position_values(tb, board: chess.Board, halfmoves_before: int | None = None) -> dict:
    """Lichess's description of a position (its ``PositionInfo``): ``checkmate``,
    ``stalemate``, ``variant_win``, ``variant_loss``, ``insufficient_material``, ``dtz``,
    ``precise_dtz``, ``dtm``, ``dtw``, ``dtc``, ``category``, in that order.

    Values no table gives (castling rights, a missing table) are ``null`` and the category
    ``unknown``; so are ``dtz`` and a decided position's category in a table generated
    without DTZ. ``dtz`` and ``precise_dtz`` are both the exact DTZ50'' (python-chess's
    ``probe_dtz`` convention, -1 for a checkmated side: lila-tablebase's Syzygy values,
    never rounded here). The category is lila-tablebase's: with ``halfmoves_before`` (the
    clock of the position before, default the board's less one) at 100 or more, a decided
    position is a ``cursed-win`` / ``blessed-loss`` (a mate a ``blessed-loss``), else
    :meth:`~tablebase.probe.Tablebase.probe_category` with the board's clock (``win``,
    ``maybe-win``, ``cursed-win``, ``draw``, ...); from 150 plies on, the 75-move rule's draw.

    >>> import tablebase
    >>> with tablebase.open_tablebase("data/test-tables") as tb:
    ...     values = position_values(tb, chess.Board("8/8/8/8/8/8/8/K2kr3 w - - 0 1"))
    ...
    >>> values["category"], values["dtm"], values["dtz"]
    ('loss', -10, -10)
    """
    # One legal move found decides both mate and stalemate (is_checkmate and
    # is_stalemate would each look for one).
    has_move = any(board.generate_legal_moves())
    check = board.is_check()
    checkmate = not has_move and check
    stalemate = not has_move and not check
    insufficient = board.is_insufficient_material()
    before = max(board.halfmove_clock - 1, 0) if halfmoves_before is None else halfmoves_before
    dtm = dtz = None
    category = "unknown"
    drawn = False
    if not board.castling_rights:
        try:
            try:
                dtz = tb.probe_dtz(board)
                drawn = dtz == 0
            except MissingMetricError:  # a table generated without DTZ: its DTM still answers
                drawn = tb.probe_wdl(board) == 0
            dtm = None if checkmate else tb.probe_dtm(board)
        except (MissingTableError, PositionError):
            dtz = dtm = None  # unknown, as Lichess has a position its tables do not answer
            drawn = False
    if stalemate or insufficient or drawn or (board.halfmove_clock >= 150 and not checkmate):
        category = "draw"
    elif checkmate:
        category = "loss" if before < 100 else "blessed-loss"
    elif dtz is not None:
        if before >= 100:
            category = "blessed-loss" if dtz < 0 else "cursed-win"
        else:
            category = tb.probe_category(board)
    return {"checkmate": checkmate, "stalemate": stalemate, "variant_win": False, "variant_loss": False,
            "insufficient_material": insufficient, "dtz": dtz, "precise_dtz": dtz, "dtm": dtm, "dtw": None,
            "dtc": None, "category": category}


def _tightening(metric: int | None) -> tuple:
    """lila-tablebase's ``tightening_metric_sort_key``: -1, -2, ..., then None and 0,
    then ..., 2, 1."""
    return ((0, -metric) if metric is not None and metric < 0 else (1, 0),
            (1, -metric) if metric is not None and metric > 0 else (0, 0))


def move_sort_key(move: dict) -> tuple:
    """Lichess's order of moves, best first (lila-tablebase ``MoveInfo::sort_key``): by the
    category after the move (the opponent's loss first), a mate, a stalemate or dead
    draw, the fastest mate / longest resistance (``dtm``), a conversion, then a zeroing
    move (wanted when winning, avoided when not) and ``dtz``, then the largest capture and
    promotion. ``move`` holds the keys of a move entry and ``capture`` / ``promotion``
    (python-chess piece types or None)."""
    positive = move["category"] in _POSITIVE
    dtz = move["dtz"]
    return (_RANK[move["category"]],
            (not move["checkmate"], not move["variant_loss"], move["variant_win"]),
            (not move["stalemate"], not move["insufficient_material"]),
            _tightening(move["dtm"]),
            (move["conversion"] != (not positive), _tightening(move["dtc"])),
            (move["zeroing"] != (not positive), (0, 0) if dtz is None else (1, -dtz)),
            tuple((1, 0) if role is None else (0, -role) for role in (move["capture"], move["promotion"])))


def _moves(tb, board: chess.Board) -> list[dict]:
    """Every legal move with the values after it, in Lichess's order."""
    moves = []
    child = board.copy(stack=False)
    for move in board.generate_legal_moves():
        capture = chess.PAWN if board.is_en_passant(move) else board.piece_type_at(move.to_square)
        entry = {"uci": move.uci(), "san": child.san_and_push(move), "zeroing": board.is_zeroing(move),
                 "conversion": capture is not None or move.promotion is not None}
        entry.update(position_values(tb, child, board.halfmove_clock))
        child.pop()
        entry["capture"], entry["promotion"] = capture, move.promotion
        moves.append(entry)
    moves.sort(key=move_sort_key)
    for m in moves:
        del m["capture"], m["promotion"]
    return moves


def probe_json(tb, board: chess.Board) -> dict:
    """lila-tablebase's ``/standard`` answer for ``board``: the root's
    :func:`position_values`, its ``category`` the negation of the best move's, and
    ``moves``, best first.

    >>> import tablebase
    >>> with tablebase.open_tablebase("data/test-tables") as tb:
    ...     reply = probe_json(tb, chess.Board("8/8/8/8/8/8/8/K2kr3 b - - 0 1"))
    ...
    >>> reply["category"], [(m["uci"], m["category"], m["dtm"]) for m in reply["moves"][:2]]
    ('win', [('d1c2', 'loss', -4), ('d1c1', 'loss', -4)])
    """
    moves = _moves(tb, board)
    root = position_values(tb, board)
    settle = _SETTLED_BY_ROOT.get(root["category"])
    if settle is not None:
        for m in moves:
            if m["category"] != settle[0]:
                break
            m["category"] = settle[1]
    if moves and moves[0]["category"] != "unknown":  # else the root's own (a table without DTZ)
        root["category"] = negate(moves[0]["category"])
    root["moves"] = moves
    return root


def mainline_json(tb, board: chess.Board) -> dict:
    """lila-tablebase's ``/standard/mainline`` answer: the line of best moves (the first of
    :func:`probe_json`'s list each time) until the game ends or the halfmove clock reaches
    100, each step with the ``dtz`` after it; ``winner`` ``"w"`` / ``"b"`` when the line ends
    in mate, else ``null``. A drawn root has an empty line.

    >>> import tablebase
    >>> with tablebase.open_tablebase("data/test-tables") as tb:
    ...     line = mainline_json(tb, chess.Board("8/8/8/8/8/8/8/K2kr3 b - - 0 1"))
    ...
    >>> len(line["mainline"]), line["winner"]
    (5, 'b')
    """
    root = position_values(tb, board)
    mainline = []
    position = board.copy(stack=False)
    if root["category"] not in ("draw", "unknown"):
        while position.halfmove_clock < 100:
            moves = _moves(tb, position)
            if not moves or moves[0]["category"] == "unknown":
                break
            best = moves[0]
            mainline.append({"uci": best["uci"], "san": best["san"], "dtz": best["dtz"],
                             "precise_dtz": best["precise_dtz"]})
            position.push_uci(best["uci"])
    winner = None
    if position.is_checkmate():
        winner = "b" if position.turn == chess.WHITE else "w"
    return {"mainline": mainline, "winner": winner, "dtz": root["dtz"], "precise_dtz": root["precise_dtz"]}
