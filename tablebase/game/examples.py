"""Small games with known values, implemented lazily on the :class:`GameGraph` protocol.

They exist to test the solvers: each exposes ``eval(v)`` and, where it is easy,
``depth(v, g)`` computed without any solver.

A vertex is ``(state, player to move)`` with White = +1 moving first. In normal play
the player who cannot move loses: such a position is a sink won by the other player.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from tablebase.game.graph import INF

_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))

TicTacToeVertex = tuple[tuple[int, ...], int]


class TicTacToe:
    """Tic-tac-toe; X (White, +1) moves first. A draw with best play.

    A vertex is ``(board, player)``: ``board`` is a tuple of 9 cells, row by row, each
    +1 (X), -1 (O) or 0 (empty). A completed line or a full board is a sink, won by
    the line's owner or drawn. The game is acyclic and has 5478 reachable positions,
    958 of them final: 626 won by X, 316 by O, 16 drawn.

    ``eval`` and ``depth`` are plain memoised minimax over the game tree, which for
    an acyclic game *is* Defs. 2.7 and 2.8 (no fixed point needed): an oracle
    independent of the solvers.

    >>> from tablebase.game import TicTacToe
    >>> game = TicTacToe()
    >>> game.eval(game.start)
    0
    >>> game.eval(((1, 1, 0, -1, -1, 0, 0, 0, 0), 1)), game.depth(((1, 1, 0, -1, -1, 0, 0, 0, 0), 1), 1)
    (1, 1)
    """

    num_vertices = None
    start: TicTacToeVertex = ((0,) * 9, 1)

    def successors(self, v: TicTacToeVertex) -> list[TicTacToeVertex]:
        if self.is_sink(v):
            return [v]
        board, player = v
        return [
            (board[:i] + (player,) + board[i + 1 :], -player) for i, cell in enumerate(board) if cell == 0
        ]

    def turn(self, v: TicTacToeVertex) -> int:
        return v[1]

    def is_sink(self, v: TicTacToeVertex) -> bool:
        return _line_owner(v[0]) != 0 or 0 not in v[0]

    def win(self, v: TicTacToeVertex) -> int:
        return _line_owner(v[0])

    @functools.cache
    def eval(self, v: TicTacToeVertex) -> int:
        if self.is_sink(v):
            return self.win(v)
        values = [self.eval(u) for u in self.successors(v)]
        return max(values) if v[1] == 1 else min(values)

    @functools.cache
    def depth(self, v: TicTacToeVertex, g: int) -> int:
        if self.is_sink(v):
            return 0 if self.win(v) == g else INF
        depths = [self.depth(u, g) for u in self.successors(v)]
        best = min(depths) if v[1] == g else max(depths)
        return INF if best >= INF else best + 1


def _line_owner(board: tuple[int, ...]) -> int:
    for a, b, c in _LINES:
        if board[a] != 0 and board[a] == board[b] == board[c]:
            return board[a]
    return 0


NimVertex = tuple[tuple[int, ...], int]


class Nim:
    """Normal-play Nim: take any positive number of stones from one heap.

    A vertex is ``(heaps, player)`` with the heaps sorted, so that moves reaching the
    same multiset of heaps become parallel arcs (``(2, 2)`` has two arcs to
    ``(1, 2)``). All heaps empty is a sink lost by the player to move. By Bouton
    (1901) the player to move wins iff the XOR of the heaps is non-zero.

    >>> from tablebase.game import Nim
    >>> game = Nim((1, 2, 3))
    >>> game.eval(game.start), game.eval(((1, 2, 2), -1))
    (-1, -1)
    """

    num_vertices = None

    def __init__(self, heaps: Sequence[int]) -> None:
        self.start: NimVertex = (tuple(sorted(heaps)), 1)

    def successors(self, v: NimVertex) -> list[NimVertex]:
        heaps, player = v
        if self.is_sink(v):
            return [v]
        return [
            (tuple(sorted(heaps[:i] + (heap - take,) + heaps[i + 1 :])), -player)
            for i, heap in enumerate(heaps)
            for take in range(1, heap + 1)
        ]

    def turn(self, v: NimVertex) -> int:
        return v[1]

    def is_sink(self, v: NimVertex) -> bool:
        return not any(v[0])

    def win(self, v: NimVertex) -> int:
        return -v[1]

    def eval(self, v: NimVertex) -> int:
        heaps, player = v
        nim_sum = functools.reduce(int.__xor__, heaps, 0)
        return player if nim_sum else -player


SubtractionVertex = tuple[int, int]


class SubtractionGame:
    """Normal play on one heap of ``n`` stones; a move takes 1, 3 or 4 stones.

    A vertex is ``(stones, player)``; no stones is a sink lost by the player to move.
    The player to move loses iff ``stones % 7`` is 0 or 2 (check 0..6 by hand; moves
    of 1, 3, 4 from ``7k + r`` reach ``7(k - 1) + r'`` with the same pattern).

    Depths, in plies, with ``k = stones // 7``: a loser at 7k lasts ``4k`` plies and at
    7k + 2 ``4k + 2``; a winner at 7k + 1, 7k + 3, 7k + 4 wins in ``4k + 1`` and at
    7k + 5, 7k + 6 in ``4k + 3``. Proof by induction on ``stones``, from d(0) = 0: the
    winner moves to the losing position with the smallest depth, the loser to the
    winning one with the largest, e.g. d(7k) = 1 + max(d(7k - 1), d(7k - 3), d(7k - 4))
    = 1 + max(4k - 1, 4k - 3, 4k - 3) = 4k and d(7k + 3) = 1 + min(d(7k + 2), d(7k)) =
    4k + 1; the other five cases are alike.

    >>> from tablebase.game import SubtractionGame
    >>> game = SubtractionGame(9)
    >>> game.eval((9, 1)), game.depth((9, 1), -1), game.depth((5, -1), -1)
    (-1, 6, 3)
    """

    num_vertices = None
    moves = (1, 3, 4)

    def __init__(self, stones: int) -> None:
        self.start: SubtractionVertex = (stones, 1)

    def successors(self, v: SubtractionVertex) -> list[SubtractionVertex]:
        stones, player = v
        if stones == 0:
            return [v]
        return [(stones - take, -player) for take in self.moves if take <= stones]

    def turn(self, v: SubtractionVertex) -> int:
        return v[1]

    def is_sink(self, v: SubtractionVertex) -> bool:
        return v[0] == 0

    def win(self, v: SubtractionVertex) -> int:
        return -v[1]

    def eval(self, v: SubtractionVertex) -> int:
        stones, player = v
        return -player if stones % 7 in (0, 2) else player

    def depth(self, v: SubtractionVertex, g: int) -> int:
        stones, player = v
        if self.eval(v) != g:
            return INF
        k, r = divmod(stones, 7)
        return 4 * k + {0: 0, 1: 1, 2: 2, 3: 1, 4: 1, 5: 3, 6: 3}[r]


TugVertex = tuple[int, int]


class TugOfWar:
    """A game with cycles and draws: a token on squares 0..n, pulled both ways.

    A vertex is ``(k, player)``. Square 0 is White's goal and square n Black's: a
    token there is a sink won by White (+1), resp. Black (-1). Otherwise the player
    to move must move the token one square towards their goal, or pass (the vertex
    ``(k, -player)``, not a self-loop since the turn changes), and near their own goal
    may also jump two: White from k <= m to max(k - 2, 0), Black from k >= n - m to
    min(k + 2, n). From k = 1 White's step and jump both reach 0: parallel arcs.
    Requires ``1 <= m`` and ``2 m + 1 <= n``.

    Values (W = White to move, B = Black to move; Black's are the mirror image
    k -> n - k of White's):

    - eval = +1 at (k, W) for 1 <= k <= m and at (k, B) for 1 <= k <= m - 1;
      d_+1(k, W) = max(1, 2k - 3), d_+1(k, B) = 2k.
    - eval = -1 at (k, B) for n - m <= k <= n - 1 and at (k, W) for
      n - m + 1 <= k <= n - 1; with j = n - k: d_-1(k, B) = max(1, 2j - 3),
      d_-1(k, W) = 2j.
    - eval = 0 elsewhere off the goals: (k, W) for m < k <= n - m and (k, B) for
      m <= k < n - m. Every other d_g is infinite; the goals have d = 0 for their
      owner.

    Proof. White wins: by induction on k, (k, W) with k <= m jumps to k - 2; at
    k <= 2 that is the goal, otherwise (k - 2, B) with k - 2 <= m - 2, where Black's
    moves (a step to k - 1 or a pass; no jump, since k - 2 < m < n - m) all reach
    (j, W) with j <= m - 1, won by induction. Nothing else is: the set X of (k, W)
    with m < k < n, (k, B) with m <= k < n, and Black's goal is closed under all of
    White's moves (a step to (k - 1, B), k - 1 >= m, or a pass to (k, B); no jump
    above m) and under one of Black's (a step up), so from X Black keeps White off
    square 0 forever. Black's wins are the mirror image, and the sets are disjoint
    because n >= 2m + 1, which leaves the draws listed.
    Depths: Black's moves in White's region go to (k + 1, W) or (k, W), and
    d_+1(., W) grows with k, so d_+1(k, B) = 1 + d_+1(k + 1, W) = 1 + 2(k + 1) - 3 = 2k
    (and 1 + 1 = 2 at k = 1); White's best is the jump, which reaches the smallest
    square, so d_+1(k, W) = 1 + d_+1(k - 2, B) = 2k - 3 for 3 <= k <= m, and 1 at k = 1, 2,
    where the jump lands on the goal.

    >>> from tablebase.game import TugOfWar
    >>> game = TugOfWar(7, 2)
    >>> [game.eval((k, 1)) for k in range(8)]
    [1, 1, 1, 0, 0, 0, -1, -1]
    >>> game.depth((1, -1), 1), game.depth((6, -1), -1)
    (2, 1)
    """

    num_vertices = None

    def __init__(self, n: int, m: int, start: TugVertex | None = None) -> None:
        if not (m >= 1 and n >= 2 * m + 1):
            raise ValueError(f"TugOfWar needs 1 <= m and 2 m + 1 <= n, got n = {n}, m = {m}")
        self.n = n
        self.m = m
        self.start: TugVertex = (n // 2, 1) if start is None else start

    def successors(self, v: TugVertex) -> list[TugVertex]:
        k, player = v
        if self.is_sink(v):
            return [v]
        moves = [k - player, k]
        if player == 1 and k <= self.m:
            moves.append(max(k - 2, 0))
        if player == -1 and k >= self.n - self.m:
            moves.append(min(k + 2, self.n))
        return [(j, -player) for j in moves]

    def turn(self, v: TugVertex) -> int:
        return v[1]

    def is_sink(self, v: TugVertex) -> bool:
        return v[0] in (0, self.n)

    def win(self, v: TugVertex) -> int:
        return 1 if v[0] == 0 else -1

    def eval(self, v: TugVertex) -> int:
        for g in (1, -1):
            if self.depth(v, g) < INF:
                return g
        return 0

    def depth(self, v: TugVertex, g: int) -> int:
        k, player = v
        # Mirror Black's side onto White's: square k -> n - k, both colours swapped.
        if g == -1:
            k, player = self.n - k, -player
        if k == 0:
            return 0
        if k == self.n:
            return INF
        if player == 1 and k <= self.m:
            return max(1, 2 * k - 3)
        if player == -1 and k <= self.m - 1:
            return 2 * k
        return INF
