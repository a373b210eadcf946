"""Material keys: the one module that owns the material-key contract.

A material key names the pieces of a table Syzygy style, strong side first, each side
ordered K Q R B N P: ``KQvKR``. The white pieces of a table are the left-hand side;
positions where Black holds the left-hand side are probed through a colour flip.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

#: Piece letters in table order. The index of a letter is its piece code in the kernels.
PIECE_ORDER = "KQRBNP"
KING, QUEEN, ROOK, BISHOP, KNIGHT, PAWN = range(6)
WHITE, BLACK = 0, 1

#: Most pieces (kings included) a key may name. Indexing works beyond the 5 pieces we
#: generate on one machine; 7 covers every Syzygy table.
MAX_PIECES = 7


def _side_sort(side: str) -> str:
    return "".join(sorted(side, key=PIECE_ORDER.index))


def _strength(side: str) -> list[int]:
    return [PIECE_ORDER.index(c) for c in side]


def normalize_key(key: str) -> str:
    """Return the normal form of a material key.

    >>> normalize_key("KRvKQ")
    'KQvKR'
    >>> normalize_key("kpkq")
    Traceback (most recent call last):
    ...
    ValueError: bad material key 'kpkq': expected two sides separated by 'v', like 'KQvKR'
    """
    white, black = _split(key)
    # The same order as chess.syzygy.normalize_tablename: more pieces first, then the
    # stronger pieces (earlier in K Q R B N P) first.
    if (len(white), _strength(black)) < (len(black), _strength(white)):
        white, black = black, white
    return f"{white}v{black}"


def _split(key: str) -> tuple[str, str]:
    if not isinstance(key, str) or key.count("v") != 1:
        raise ValueError(f"bad material key {key!r}: expected two sides separated by 'v', like 'KQvKR'")
    white, black = key.split("v")
    for side in (white, black):
        bad = sorted(set(side) - set(PIECE_ORDER))
        if bad:
            raise ValueError(f"bad material key {key!r}: unknown piece letter {bad[0]!r} (use K Q R B N P)")
        if side.count("K") != 1:
            what = "no king" if "K" not in side else "two kings"
            raise ValueError(f"bad material key {key!r}: side {side!r} has {what}; each side needs exactly one")
    if len(white) + len(black) > MAX_PIECES:
        raise ValueError(
            f"bad material key {key!r}: {len(white) + len(black)} pieces, more than the {MAX_PIECES} supported")
    return _side_sort(white), _side_sort(black)


@dataclass(frozen=True)
class Material:
    """A normalised material: the white (strong) side and the black side.

    >>> m = Material.parse("KRvKQ")
    >>> m.key, m.white, m.black, m.num_pieces, m.has_pawns
    ('KQvKR', 'KQ', 'KR', 4, False)
    """

    white: str
    black: str

    @classmethod
    def parse(cls, key: str) -> "Material":
        white, black = normalize_key(key).split("v")
        return cls(white, black)

    @property
    def key(self) -> str:
        return f"{self.white}v{self.black}"

    def __str__(self) -> str:
        return self.key

    @property
    def num_pieces(self) -> int:
        return len(self.white) + len(self.black)

    @property
    def has_pawns(self) -> bool:
        return "P" in self.white or "P" in self.black

    @property
    def is_symmetric(self) -> bool:
        """Both sides hold the same pieces (``KQvKQ``): the colour flip maps the table onto itself."""
        return self.white == self.black

    def pieces(self) -> list[tuple[int, int]]:
        """The (colour, piece code) of each slot in index order: the two kings, then the
        white pieces, then the black ones, each in K Q R B N P order."""
        slots = [(WHITE, KING), (BLACK, KING)]
        slots += [(WHITE, PIECE_ORDER.index(c)) for c in self.white[1:]]
        slots += [(BLACK, PIECE_ORDER.index(c)) for c in self.black[1:]]
        return slots

    def direct_subtables(self) -> list["Material"]:
        """Tables reached by one capture or promotion (promotion to Q, R, B or N), sorted by key.

        >>> [m.key for m in Material.parse("KPvK").direct_subtables()]
        ['KBvK', 'KNvK', 'KQvK', 'KRvK', 'KvK']
        """
        return [Material.parse(k) for k in sorted(_direct_subtable_keys(self.key))]

    def subtables(self) -> list["Material"]:
        """Every table reachable by captures and promotions, dependencies first (a table
        comes after everything it needs).

        >>> [m.key for m in Material.parse("KQvKR").subtables()]
        ['KvK', 'KQvK', 'KRvK']
        """
        return [Material.parse(k) for k in dependency_order([self.key])[:-1]]


def material_of_counts(white: str, black: str) -> str:
    """Normalised key of a (possibly unsorted, possibly weak-side-first) pair of sides."""
    return normalize_key(f"{_side_sort(white)}v{_side_sort(black)}")


@functools.lru_cache(maxsize=None)
def _direct_subtable_keys(key: str) -> frozenset[str]:
    white, black = key.split("v")
    out = set()
    for side, other in ((white, black), (black, white)):
        # Captures by `side` remove one non-king piece of `other`.
        for i, c in enumerate(other):
            if c != "K":
                out.add(material_of_counts(side, other[:i] + other[i + 1:]))
        # Promotions of a pawn of `side` (with or without capture).
        if "P" in side:
            i = side.index("P")
            for promo in "QRBN":
                promoted = side[:i] + promo + side[i + 1:]
                out.add(material_of_counts(promoted, other))
                for j, c in enumerate(other):
                    # A promotion captures on the last rank, where pawns never stand.
                    if c not in "KP":
                        out.add(material_of_counts(promoted, other[:j] + other[j + 1:]))
    return frozenset(out)


def dependency_order(keys: list[str]) -> list[str]:
    """Every table the given keys need, themselves included, each after all its sub-tables.

    Ties are broken by piece count then key, so the order is deterministic.

    >>> dependency_order(["KRvK", "KQvK"])
    ['KvK', 'KQvK', 'KRvK']
    """
    needed: set[str] = set()
    stack = [normalize_key(k) for k in keys]
    while stack:
        k = stack.pop()
        if k not in needed:
            needed.add(k)
            stack.extend(_direct_subtable_keys(k))
    order: list[str] = []
    placed: set[str] = set()
    remaining = sorted(needed, key=lambda k: (len(k), k))
    while remaining:
        ready = [k for k in remaining if _direct_subtable_keys(k) <= placed]
        order.extend(ready)
        placed.update(ready)
        remaining = [k for k in remaining if k not in placed]
    return order


def all_materials(num_pieces: int) -> list[str]:
    """Every normalised material with exactly ``num_pieces`` pieces, kings included (>= 2).

    >>> all_materials(3)
    ['KBvK', 'KNvK', 'KPvK', 'KQvK', 'KRvK']
    """
    if num_pieces < 2:
        raise ValueError(f"a table has at least the two kings, not {num_pieces} pieces")
    keys = set()
    for n_white in range(num_pieces - 1):
        n_black = num_pieces - 2 - n_white
        for w in itertools.combinations_with_replacement("QRBNP", n_white):
            for b in itertools.combinations_with_replacement("QRBNP", n_black):
                keys.add(material_of_counts("K" + "".join(w), "K" + "".join(b)))
    return sorted(keys)


def board_material(board) -> tuple[str, bool]:
    """Key of a python-chess board's material, and whether the board must be colour-flipped
    (Black holds the table's strong side) to be looked up.

    >>> import chess
    >>> board_material(chess.Board("8/8/8/8/8/2k5/1q6/K7 w - - 0 1"))
    ('KQvK', True)
    """
    import chess

    sides = []
    for color in (chess.WHITE, chess.BLACK):
        s = ""
        for letter, piece_type in zip(PIECE_ORDER, (chess.KING, chess.QUEEN, chess.ROOK, chess.BISHOP,
                                                    chess.KNIGHT, chess.PAWN)):
            s += letter * len(board.pieces(piece_type, color))
        sides.append(s)
    white, black = sides
    for side in sides:
        if side.count("K") != 1:
            raise ValueError(f"board has {side.count('K')} kings of one colour: {board.fen()}")
    if len(white) + len(black) > MAX_PIECES:
        raise ValueError(f"board has {len(white) + len(black)} pieces, more than {MAX_PIECES}: {board.fen()}")
    key = material_of_counts(white, black)
    flipped = key != f"{white}v{black}"
    return key, flipped

