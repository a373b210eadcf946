"""Every error the tablebase package raises for a user to catch, with one base class.

``except tablebase.errors.TablebaseError`` catches them all. Each also keeps the built-in
class a python-chess user expects, so old habits hold:

* ``KeyError``, as ``chess.syzygy`` raises it: :exc:`MissingTableError`,
  :exc:`CastlingRightsError`, :exc:`TooManyPiecesError`;
* ``ValueError``: every :exc:`PositionError` (castling rights, too many pieces, an illegal
  position), :exc:`BadFenError`, :exc:`CorruptTableError` (and its :exc:`TableFormatError`),
  :exc:`ConfigError`;
* ``FileNotFoundError``: :exc:`TablesFolderError`, a tables folder that does not exist.

>>> import chess, tablebase
>>> with tablebase.open_tablebase("data/test-tables") as tb:
...     try:
...         tb.probe_wdl(chess.Board("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1"))
...     except KeyError as e:  # as with chess.syzygy
...         print(type(e).__name__, isinstance(e, TablebaseError))
...
CastlingRightsError True

This module imports nothing from the package, so every layer can raise its errors.
"""

from __future__ import annotations

__all__ = [
    "BadFenError",
    "CastlingRightsError",
    "ConfigError",
    "CorruptTableError",
    "GenerationError",
    "IllegalPositionError",
    "MissingTableError",
    "PositionError",
    "TableFormatError",
    "TablebaseError",
    "TablesFolderError",
    "TooManyPiecesError",
]


class TablebaseError(Exception):
    """The base class of the package's errors. Its text is the message as written (a
    ``KeyError`` would quote it)."""

    def __str__(self) -> str:
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()


class MissingTableError(TablebaseError, KeyError):
    """No table of the board's material was found in the opened folders; the message
    names the ``tablebase generate`` command that makes it. ``material`` is its key."""

    def __init__(self, material: str, message: str):
        super().__init__(message)
        self.material = material


class MissingMetricError(MissingTableError):
    """The board's table is there but holds no 50-move-rule values (WDL50, DTZ): it was
    generated with ``--no-dtz``. The message names the command that adds them."""


class PositionError(TablebaseError, ValueError):
    """A board the tables cannot answer (the ``get_*`` methods return their default)."""


class CastlingRightsError(PositionError, KeyError):
    """The board has castling rights; tables hold positions without them."""


class TooManyPiecesError(PositionError, KeyError):
    """The board has more pieces than any opened table."""


class IllegalPositionError(PositionError):
    """The board is not a legal position (``board.is_valid()`` is false)."""


class BadFenError(TablebaseError, ValueError):
    """A FEN python-chess cannot parse."""


class CorruptTableError(TablebaseError, ValueError):
    """A shard or manifest does not match what was written: missing, truncated, flipped
    bytes, or a footer that names another table."""


class TableFormatError(CorruptTableError):
    """A table written in another format version than this code reads; the message names
    both versions and the ``tablebase generate`` command that rewrites it."""


class TablesFolderError(TablebaseError, FileNotFoundError):
    """A folder of tables that does not exist (given, from ``TABLEBASE_PATH``, or the
    default)."""


class ConfigError(TablebaseError, ValueError):
    """A job configuration that cannot run: unknown key, bad value, unreadable file."""


class GenerationError(TablebaseError, RuntimeError):
    """A table could not be generated (workers lost again and again, inconsistent sub-tables);
    complete tables and the last checkpoint are kept, so a re-run resumes."""
