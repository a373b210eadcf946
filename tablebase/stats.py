"""What a table holds: positions per side to move, the longest win and its FEN, the DTM
distribution (``tablebase info --stats MATERIAL``), read through the probe API.

>>> import tablebase
>>> with tablebase.open_tablebase("data/test-tables") as tb:
...     stats = material_stats(tb, "KRvK")
...
>>> stats.sides["w"].wins, stats.longest_win.dtm, stats.longest_win.fen
(21959, 31, '8/8/8/8/8/2k5/1R6/K7 w - - 0 1')
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .endgame.index import IndexScheme
from .endgame.material import normalize_key
from .endgame.pychess import decode
from .probe import Tablebase

__all__ = ["LongestWin", "MaterialStats", "SideStats", "material_stats", "plot_distribution"]

#: Indices read per batch: bounds the memory of a scan whatever the table's size.
CHUNK = 1 << 22


@dataclass(frozen=True)
class LongestWin:
    """A won position with the longest DTM (plies) of its side to move, as a FEN."""

    dtm: int
    fen: str


@dataclass(frozen=True)
class SideStats:
    """Counts of one side to move (``"w"``: White to move in the table's orientation) and
    its DTM distribution: ``wins[d]`` positions won in ``d`` plies, ``losses[d]`` lost in
    ``d`` plies (``losses[0]``: checkmated)."""

    legal: int
    wins: int
    draws: int
    losses: int
    longest_win: LongestWin | None
    win_plies: dict[int, int]
    loss_plies: dict[int, int]


@dataclass(frozen=True)
class MaterialStats:
    material: str
    index_size: int
    sides: dict[str, SideStats]

    @property
    def longest_win(self) -> LongestWin | None:
        wins = [s.longest_win for s in self.sides.values() if s.longest_win is not None]
        return max(wins, key=lambda w: w.dtm, default=None)

    def as_dict(self) -> dict:
        out = asdict(self)
        out["longest_win"] = None if self.longest_win is None else asdict(self.longest_win)
        return out

    def text(self) -> str:
        lines = [f"{self.material}: {self.index_size:,d} indices per side to move",
                 f"{'to move':8} {'legal':>12} {'wins':>12} {'draws':>12} {'losses':>12}  longest win"]
        for side, s in self.sides.items():
            longest = "-" if s.longest_win is None else f"{_plies(s.longest_win.dtm)}: {s.longest_win.fen}"
            lines.append(f"{'White' if side == 'w' else 'Black':8} {s.legal:12,d} {s.wins:12,d} {s.draws:12,d} "
                         f"{s.losses:12,d}  {longest}")
        lines.append("DTM distribution (plies from the side to move: positions won / lost in that many plies)")
        lines.append(f"{'plies':>6} " + " ".join(f"{h:>12}" for h in ("White wins", "White loses", "Black wins",
                                                                          "Black loses")))
        plies = sorted({d for s in self.sides.values() for d in (*s.win_plies, *s.loss_plies)})
        for d in plies:
            counts = [s.win_plies.get(d, 0) if kind == "w" else s.loss_plies.get(d, 0)
                      for s in self.sides.values() for kind in "wl"]
            lines.append(f"{d:6d} " + " ".join(f"{c:12,d}" for c in counts))
        return "\n".join(lines)


def _plies(dtm: int) -> str:
    return f"mate in {(dtm + 1) // 2} ({dtm} plies)"


def material_stats(tb: Tablebase, material: str) -> MaterialStats:
    """Scan every index of both sides of ``material`` (in chunks of :data:`CHUNK`)."""
    key = normalize_key(material)
    size = IndexScheme.of(key).size
    sides = {}
    for stm, side in enumerate("wb"):
        wins = np.zeros(1, dtype=np.int64)
        losses = np.zeros(1, dtype=np.int64)
        draws = 0
        best_dtm, best_index = 0, -1
        for start in range(0, size, CHUNK):
            index = np.arange(start, min(start + CHUNK, size), dtype=np.int64)
            wdl, dtm = tb.probe_batch_indices(key, stm, index)
            won = wdl == 1
            draws += int(np.count_nonzero(wdl == 0))
            w = np.bincount(dtm[won], minlength=1)
            lost = np.bincount(-dtm[wdl == -1], minlength=1)
            wins = _add(wins, w)
            losses = _add(losses, lost)
            if won.any():
                at = int(np.argmax(np.where(won, dtm, -1)))
                if dtm[at] > best_dtm:
                    best_dtm, best_index = int(dtm[at]), start + at
        longest = None if best_index < 0 else LongestWin(best_dtm, decode(key, side, best_index).fen())
        nw, nl = int(wins.sum()), int(losses.sum())
        sides[side] = SideStats(nw + draws + nl, nw, draws, nl, longest,
                                {d: int(c) for d, c in enumerate(wins) if c},
                                {d: int(c) for d, c in enumerate(losses) if c})
    return MaterialStats(key, size, sides)


def _add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if b.size > a.size:
        a, b = b, a
    a = a.copy()
    a[:b.size] += b
    return a


def plot_distribution(stats: MaterialStats, path) -> None:
    """Draw the DTM distribution of ``stats`` into a PNG file (needs matplotlib)."""
    try:
        import matplotlib
    except ImportError as e:
        raise ValueError("--plot needs matplotlib: pip install 'tablebase[plot]'") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.5))
    for side, name, colour in (("w", "White", "#3a7"), ("b", "Black", "#37a")):
        s = stats.sides[side]
        for plies, sign, style in ((s.win_plies, 1, "-"), (s.loss_plies, -1, "--")):
            xs = sorted(plies)
            ax.step([sign * x for x in xs], [plies[x] for x in xs], style, where="mid", color=colour,
                    label=f"{name} to move, {'wins' if sign > 0 else 'loses'}")
    ax.set_yscale("log")
    ax.set_xlabel("DTM, plies from the side to move (negative: loses)")
    ax.set_ylabel("positions")
    ax.set_title(f"{stats.material}: DTM distribution")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
