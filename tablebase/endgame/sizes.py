"""Index sizes of every table: ``python -m tablebase.endgame.sizes [max_pieces]`` prints
them as a markdown table (docs/index-sizes.md holds the output for up to 5 pieces)."""

from __future__ import annotations

import sys
from typing import NamedTuple

from .index import IndexScheme
from .material import all_materials


class IndexSize(NamedTuple):
    key: str
    pieces: int
    king_pairs: int
    per_king_pair: int
    size: int
    slices: int


def index_sizes(max_pieces: int = 5) -> list[IndexSize]:
    """One row per table of 3 to ``max_pieces`` pieces: its king pairs, the positions
    per king pair, the index size per side to move and the number of slices.

    >>> index_sizes(3)[3]
    IndexSize(key='KQvK', pieces=3, king_pairs=462, per_king_pair=64, size=29568, slices=1)
    """
    rows = []
    for pieces in range(3, max_pieces + 1):
        for key in all_materials(pieces):
            s = IndexScheme.of(key)
            rows.append(IndexSize(key, pieces, s.num_king_pairs, s.positions_per_king_pair, s.size, s.num_slices))
    return rows


def markdown(rows: list[IndexSize]) -> str:
    """The rows as a markdown table, with a total per piece count."""
    lines = ["| table | pieces | king pairs | positions per king pair | index size per side | slices |",
             "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {r.key} | {r.pieces} | {r.king_pairs} | {r.per_king_pair:,} | {r.size:,} | {r.slices} |"
              for r in rows]
    lines += ["", "| pieces | tables | indices per side, all tables |", "|---:|---:|---:|"]
    for pieces in sorted({r.pieces for r in rows}):
        same = [r for r in rows if r.pieces == pieces]
        lines.append(f"| {pieces} | {len(same)} | {sum(r.size for r in same):,} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    print(markdown(index_sizes(int(args[0]) if args else 5)), end="")


if __name__ == "__main__":
    main()
