"""Syzygy's ``probe_wdl`` and ``probe_dtz`` over every legal position of a table, compiled.

python-chess's prober costs about 60 µs per ``probe_wdl`` and 1.6 ms per ``probe_dtz``
here: the 180 M legal positions of the 3-4 piece tables would take days. This module reads
the same files at compiled speed and gives, per position of our index, the values
python-chess's :class:`chess.syzygy.Tablebase` returns for it (:func:`syzygy_view`):

- the raw table values come from python-chess's own parse of each file (its
  ``WdlTable``/``DtzTable`` objects: piece orders, normalisation, pair data), decoded by
  kernels that follow its ``encode_piece``/``encode_pawn``/``decompress_pairs``;
- the search python-chess runs around them (the captures of ``probe_ab``, the winning pawn
  moves and the one-ply search of ``probe_dtz_no_ep`` for the side a DTZ file does not
  store) runs on our move generation, with each capture's and promotion's value taken from
  our sub-tables. Those are python-chess's values exactly where the sub-tables agree with
  Syzygy, which a run in dependency order checks first (:mod:`check_oracle`).

Its slow twin is python-chess itself: ``tests/test_syzygy_compiled.py`` compares the two
on samples of every kind of table (pawnless, pawns, symmetric, two identical pieces).
"""

from __future__ import annotations

from dataclasses import dataclass

import chess
import chess.syzygy as cs
import numpy as np
from numba import njit

from tablebase.endgame.index import IndexScheme, decode
from tablebase.endgame.material import WHITE, Material
from tablebase.generate.exact import load_subtable_classes, load_table
from tablebase.endgame.movegen import (KING_MOVE, PAWN_PUSH, ExitMap, scratch, setup_board, successors)
from tablebase.generate.kernels import _ep_vertex_class, _zero_class
from tablebase.generate.values import DECIDED, ILLEGAL

_PIECE_TYPES = (chess.KING, chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT, chess.PAWN)

TRIANGLE = np.array(cs.TRIANGLE, dtype=np.int64)
DIAG = np.array(cs.DIAG, dtype=np.int64)
LOWER = np.array(cs.LOWER, dtype=np.int64)
FLAP = np.array(cs.FLAP, dtype=np.int64)
PTWIST = np.array(cs.PTWIST, dtype=np.int64)
FILE_TO_FILE = np.array(cs.FILE_TO_FILE, dtype=np.int64)
KK_IDX = np.array(cs.KK_IDX, dtype=np.int64)
PAWNIDX = np.array(cs.PAWNIDX, dtype=np.int64)
WDL_TO_MAP = np.array(cs.WDL_TO_MAP, dtype=np.int64)
PA_FLAGS = np.array(cs.PA_FLAGS, dtype=np.int64)
BINOM = np.array([[cs.binom(x, y) for y in range(8)] for x in range(64)], dtype=np.int64)

#: Not stored in the DTZ file (python-chess then searches one ply).
NOT_STORED = -30000

# Columns of a table's per-(file, side) parameters.
P_VALID, P_INDEXTABLE, P_SIZETABLE, P_DATA, P_OFFSET, P_SYMPAT, P_BLOCKSIZE, P_IDXBITS, P_MINLEN, P_BASE, P_SYMLEN = \
    range(11)
# Columns of a table's scalars.
T_NUM, T_PAWNS, T_ENC, T_PAWNS0, T_PAWNS1, T_SYMMETRIC, T_MIRRORED, T_DTZ, T_PMAP = range(9)


@dataclass
class CompiledTable:
    """One Syzygy file as arrays for the kernels (python-chess parses it)."""

    data: np.ndarray  # the file (a copy: the mapping closes with the prober)
    scalars: np.ndarray  # T_* columns
    params: np.ndarray  # [file, side, P_*]
    pieces: np.ndarray  # [file, side, 8] python-chess's piece codes (type | 8 for black)
    norm: np.ndarray
    factor: np.ndarray
    base: np.ndarray  # uint64, every pair data's ``base`` one after another
    symlen: np.ndarray
    flags: np.ndarray  # [file] (DTZ)
    map_idx: np.ndarray  # [file, 4] (DTZ)

    @classmethod
    def of(cls, table: cs.Table, key: str, dtz: bool) -> "CompiledTable":
        if dtz:
            table.init_table_dtz()
        else:
            table.init_table_wdl()
        files = 4 if table.has_pawns else 1
        params = np.zeros((files, 2, 11), dtype=np.int64)
        pieces = np.zeros((files, 2, 8), dtype=np.int64)
        norm = np.zeros((files, 2, 8), dtype=np.int64)
        factor = np.zeros((files, 2, 8), dtype=np.int64)
        base: list[int] = []
        symlen: list[int] = []
        for f in range(files):
            for side in ((0,) if dtz else (0, 1)):
                if table.has_pawns:
                    fd = table.files[f]
                    if dtz:
                        if not hasattr(fd, "precomp"):
                            continue
                        pd, pc, nm, fc = fd.precomp, fd.pieces, fd.norm, fd.factor
                    else:
                        if side not in fd.precomp:
                            continue
                        pd, pc, nm, fc = fd.precomp[side], fd.pieces[side], fd.norm[side], fd.factor[side]
                elif dtz:
                    pd, pc, nm, fc = table.precomp, table.pieces, table.norm, table.factor
                else:
                    if side not in table.precomp:
                        continue
                    pd, pc, nm, fc = table.precomp[side], table.pieces[side], table.norm[side], table.factor[side]
                if pd.idxbits:
                    params[f, side] = [1, pd.indextable, pd.sizetable, pd.data, pd.offset, pd.sympat, pd.blocksize,
                                       pd.idxbits, pd.min_len, len(base), len(symlen)]
                    base += pd.base
                    symlen += pd.symlen
                else:  # one value for the whole side
                    params[f, side, P_VALID], params[f, side, P_MINLEN] = 1, pd.min_len
                for i in range(table.num):
                    pieces[f, side, i] = pc[i]
                    norm[f, side, i] = nm[i]
                    factor[f, side, i] = fc[i]
        enc = getattr(table, "enc_type", 0)
        if not table.has_pawns and enc not in (0, 2):
            raise ValueError(f"{key}: Syzygy encoding type {enc} (tables without two kings) is not supported")
        flags = np.zeros(files, dtype=np.int64)
        map_idx = np.zeros((files, 4), dtype=np.int64)
        if dtz:
            fl = table.flags if table.has_pawns else [table.flags]
            flags[:len(fl)] = fl
            for f, row in enumerate(table.map_idx):
                map_idx[f, :len(row)] = row
        pawns = getattr(table, "pawns", [0, 0])
        scalars = np.array([table.num, int(table.has_pawns), enc, pawns[0], pawns[1], int(table.symmetric),
                            int(key != table.key), int(dtz), getattr(table, "p_map", 0)], dtype=np.int64)
        return cls(np.frombuffer(bytes(table.data), dtype=np.uint8), scalars, params, pieces, norm, factor,
                   np.array(base or [0], dtype=np.uint64), np.array(symlen or [0], dtype=np.int64), flags, map_idx)

    def args(self) -> tuple:
        return (self.data, self.scalars, self.params, self.pieces, self.norm, self.factor, self.base, self.symlen,
                self.flags, self.map_idx)


# -- python-chess's encoding and decompression, compiled ------------------------------------

@njit(cache=True)
def _u16(data, o):
    return np.int64(data[o]) | (np.int64(data[o + 1]) << 8)


@njit(cache=True)
def _u32(data, o):
    return _u16(data, o) | (_u16(data, o + 2) << 16)


@njit(cache=True)
def _u32_be(data, o):
    return (np.uint64(data[o]) << np.uint64(24)) | (np.uint64(data[o + 1]) << np.uint64(16)) | \
        (np.uint64(data[o + 2]) << np.uint64(8)) | np.uint64(data[o + 3])


@njit(cache=True)
def _offdiag(s):
    return (s >> 3) - (s & 7)


@njit(cache=True)
def _flipdiag(s):
    return ((s >> 3) | (s << 3)) & 63


@njit(cache=True)
def _sort_group(pos, lo, hi):
    for j in range(lo, hi):
        for k in range(j + 1, hi):
            if pos[j] > pos[k]:
                pos[j], pos[k] = pos[k], pos[j]


@njit(cache=True)
def _group_sum(pos, i, t, below):
    """The combinatorial index of the ``t`` identical pieces at ``pos[i:i+t]``, each square
    counted without the ``i`` pieces placed before them, less ``below``."""
    _sort_group(pos, i, i + t)
    s = 0
    for m in range(i, i + t):
        p = pos[m]
        j = 0
        for k in range(i):
            if p > pos[k]:
                j += 1
        s += BINOM[p - j - below, m - i + 1]
    return s


@njit(cache=True)
def _pieces_sum(n, norm, factor, pos, i):
    """The index part of the piece groups from ``pos[i]`` on (``norm``: each group's size)."""
    idx = 0
    while i < n:
        idx += _group_sum(pos, i, norm[i], 0) * factor[i]
        i += norm[i]
    return idx


@njit(cache=True)
def _encode_piece(enc, n, norm, factor, pos):
    if pos[0] & 0x04:
        for i in range(n):
            pos[i] ^= 0x07
    if pos[0] & 0x20:
        for i in range(n):
            pos[i] ^= 0x38
    first = 0
    for first in range(n):
        if _offdiag(pos[first]):
            break
    if first < (3 if enc == 0 else 2) and _offdiag(pos[first]) > 0:
        for i in range(n):
            pos[i] = _flipdiag(pos[i])
    if enc == 0:
        i = 1 if pos[1] > pos[0] else 0
        j = (1 if pos[2] > pos[0] else 0) + (1 if pos[2] > pos[1] else 0)
        if _offdiag(pos[0]):
            idx = TRIANGLE[pos[0]] * 63 * 62 + (pos[1] - i) * 62 + (pos[2] - j)
        elif _offdiag(pos[1]):
            idx = 6 * 63 * 62 + DIAG[pos[0]] * 28 * 62 + LOWER[pos[1]] * 62 + pos[2] - j
        elif _offdiag(pos[2]):
            idx = 6 * 63 * 62 + 4 * 28 * 62 + DIAG[pos[0]] * 7 * 28 + (DIAG[pos[1]] - i) * 28 + LOWER[pos[2]]
        else:
            idx = 6 * 63 * 62 + 4 * 28 * 62 + 4 * 7 * 28 + DIAG[pos[0]] * 7 * 6 + (DIAG[pos[1]] - i) * 6 + \
                (DIAG[pos[2]] - j)
        i = 3
    else:
        idx = KK_IDX[TRIANGLE[pos[0]], pos[1]]
        i = 2
    return idx * factor[0] + _pieces_sum(n, norm, factor, pos, i)


@njit(cache=True)
def _pawn_file(npawns0, pos):
    for i in range(1, npawns0):
        if FLAP[pos[0]] > FLAP[pos[i]]:
            pos[0], pos[i] = pos[i], pos[0]
    return FILE_TO_FILE[pos[0] & 0x07]


@njit(cache=True)
def _encode_pawn(n, npawns0, npawns1, norm, factor, pos):
    if pos[0] & 0x04:
        for i in range(n):
            pos[i] ^= 0x07
    for i in range(1, npawns0):
        for j in range(i + 1, npawns0):
            if PTWIST[pos[i]] < PTWIST[pos[j]]:
                pos[i], pos[j] = pos[j], pos[i]
    t = npawns0 - 1
    idx = PAWNIDX[t, FLAP[pos[0]]]
    for i in range(t, 0, -1):
        idx += BINOM[PTWIST[pos[i]], t - i + 1]
    idx *= factor[0]
    i = npawns0
    if npawns1:
        idx += _group_sum(pos, i, npawns1, 8) * factor[i]
        i += npawns1
    return idx + _pieces_sum(n, norm, factor, pos, i)


@njit(cache=True)
def _decompress(data, prm, base, symlen, is_dtz, idx):
    if not prm[P_IDXBITS]:
        return prm[P_MINLEN]
    bits = prm[P_IDXBITS]
    mainidx = idx >> bits
    litidx = (idx & ((1 << bits) - 1)) - (1 << (bits - 1))
    block = _u32(data, prm[P_INDEXTABLE] + 6 * mainidx)
    litidx += _u16(data, prm[P_INDEXTABLE] + 6 * mainidx + 4)
    sizetable = prm[P_SIZETABLE]
    if litidx < 0:
        while litidx < 0:
            block -= 1
            litidx += _u16(data, sizetable + 2 * block) + 1
    else:
        while litidx > _u16(data, sizetable + 2 * block):
            litidx -= _u16(data, sizetable + 2 * block) + 1
            block += 1
    ptr = prm[P_DATA] + (block << prm[P_BLOCKSIZE])
    m = prm[P_MINLEN]
    b0 = prm[P_BASE] - m
    s0 = prm[P_SYMLEN]
    code = (_u32_be(data, ptr) << np.uint64(32)) | _u32_be(data, ptr + 4)
    ptr += 8
    bitcnt = 0
    while True:
        ln = m
        while code < base[b0 + ln]:
            ln += 1
        sym = _u16(data, prm[P_OFFSET] + ln * 2) + np.int64((code - base[b0 + ln]) >> np.uint64(64 - ln))
        if litidx < symlen[s0 + sym] + 1:
            break
        litidx -= symlen[s0 + sym] + 1
        code <<= np.uint64(ln)
        bitcnt += ln
        if bitcnt >= 32:
            bitcnt -= 32
            code |= _u32_be(data, ptr) << np.uint64(bitcnt)
            ptr += 4
    sympat = prm[P_SYMPAT]
    while symlen[s0 + sym]:
        w = sympat + 3 * sym
        s1 = ((np.int64(data[w + 1]) & 0xf) << 8) | np.int64(data[w])
        if litidx < symlen[s0 + s1] + 1:
            sym = s1
        else:
            litidx -= symlen[s0 + s1] + 1
            sym = (np.int64(data[w + 2]) << 4) | (np.int64(data[w + 1]) >> 4)
    w = sympat + 3 * sym
    if is_dtz:
        return ((np.int64(data[w + 1]) & 0x0f) << 8) | np.int64(data[w])
    return np.int64(data[w])


@njit(cache=True)
def _fill_run(code, i, cmirror, mirror, sq, slot_type, slot_colour, pos):
    """python-chess's piece list from ``pos[i]`` on for one piece code: the squares of
    those pieces, ascending as ``scan_forward`` gives them, xor ``mirror``. Returns the
    next free place."""
    t = code & 7
    colour = (code ^ cmirror) >> 3
    lo = i
    for s in range(sq.shape[0]):
        if slot_type[s] == t and slot_colour[s] == colour:
            k = i
            while k > lo and pos[k - 1] > sq[s]:
                pos[k] = pos[k - 1]
                k -= 1
            pos[k] = sq[s]
            i += 1
    for k in range(lo, i):
        pos[k] ^= mirror
    return i


@njit(cache=True)
def _fill(pcs, i, n, cmirror, mirror, sq, slot_type, slot_colour, pos):
    while i < n:
        i = _fill_run(pcs[i], i, cmirror, mirror, sq, slot_type, slot_colour, pos)


@njit(cache=True)
def _read(data, scalars, params, pieces, norm, factor, base, symlen, flags, sq, stm, slot_type, slot_colour, pos):
    """(pawn file, value) python-chess's ``_probe_wdl_table`` / ``_probe_dtz_table`` decode
    from the file for the placement ``sq`` with ``stm`` to move (``pos``: scratch of 8);
    value NOT_STORED for the side a DTZ file does not hold."""
    n = scalars[T_NUM]
    is_dtz = scalars[T_DTZ] == 1
    if not scalars[T_SYMMETRIC]:
        if scalars[T_MIRRORED]:
            cmirror, mirror, bside = 8, 0x38, 1 - stm
        else:
            cmirror, mirror, bside = 0, 0, stm
    else:
        cmirror = 0 if stm == 0 else 8
        mirror = 0 if stm == 0 else 0x38
        bside = 0
    side = 0 if is_dtz else bside
    if not scalars[T_PAWNS]:
        f = 0
        if is_dtz and (flags[0] & 1) != bside and not scalars[T_SYMMETRIC]:
            return f, NOT_STORED
        _fill(pieces[0, side], 0, n, cmirror, 0, sq, slot_type, slot_colour, pos)
        idx = _encode_piece(scalars[T_ENC], n, norm[0, side], factor[0, side], pos)
    else:
        i = _fill_run(pieces[0, 0, 0], 0, cmirror, mirror, sq, slot_type, slot_colour, pos)
        f = _pawn_file(scalars[T_PAWNS0], pos)
        if is_dtz and (flags[f] & 1) != bside:
            return f, NOT_STORED
        _fill(pieces[f, side], i, n, cmirror, mirror, sq, slot_type, slot_colour, pos)
        idx = _encode_pawn(n, scalars[T_PAWNS0], scalars[T_PAWNS1], norm[f, side], factor[f, side], pos)
    if not params[f, side, P_VALID]:
        raise ValueError("the Syzygy file holds no pair data for this pawn file and side")
    return f, _decompress(data, params[f, side], base, symlen, is_dtz, idx)


@njit(cache=True)
def raw_wdl(data, scalars, params, pieces, norm, factor, base, symlen, flags, map_idx, sq, stm, slot_type,
            slot_colour, pos):
    """``_probe_wdl_table``: the WDL file's value of a placement."""
    return _read(data, scalars, params, pieces, norm, factor, base, symlen, flags, sq, stm, slot_type, slot_colour,
                 pos)[1] - 2


@njit(cache=True)
def raw_dtz(data, scalars, params, pieces, norm, factor, base, symlen, flags, map_idx, sq, stm, slot_type,
            slot_colour, wdl, pos):
    """``_probe_dtz_table`` given the position's ``wdl``: (the DTZ file's value or
    NOT_STORED, whether the file holds it to the ply; a value it holds in units of two plies
    is where Syzygy's DTZ may be one ply short)."""
    f, res = _read(data, scalars, params, pieces, norm, factor, base, symlen, flags, sq, stm, slot_type, slot_colour,
                   pos)
    if res == NOT_STORED:
        return res, False
    fl = flags[f]
    if fl & 2:
        o = map_idx[f, WDL_TO_MAP[wdl + 2]] + res
        res = np.int64(data[scalars[T_PMAP] + o]) if not fl & 16 else _u16(data, scalars[T_PMAP] + 2 * o)
    if (not (fl & PA_FLAGS[wdl + 2])) or (wdl & 1):
        return 2 * res, False
    return res, True


# -- python-chess's search around the raw values, on our move generation -----------------

@njit(cache=True)
def _before_zeroing(wdl):
    return (1 if wdl == 2 else 101) if wdl > 0 else (-1 if wdl == -2 else -101)


@njit(cache=True)
def wdl_pass(desc, stm, own, exit_map, subcls, suboff, is_capture,
             data, scalars, params, pieces, norm, factor, base, symlen, flags, map_idx, slot_type, slot_colour,
             raw_out, cap_out):
    """Per legal position of side ``stm`` (``own``: our exact codes): the raw WDL value of
    the file and the best of its captures for the mover (``probe_ab``'s, -3 for none),
    each capture valued by the sub-tables' classes. Returns how many captures reached a
    sub-table side not loaded (must be 0)."""
    n = desc[0]
    s = scratch()
    sq, tmp, sub_sq, board, o_sub, o_stm, o_idx, o_ep = s.sq, s.tmp, s.sub_sq, s.board, s.o_sub, s.o_stm, s.o_idx, s.o_ep
    pos = np.empty(8, dtype=np.int64)
    bad = 0
    for x in range(own.shape[0]):
        raw_out[x] = 0
        cap_out[x] = -3
        if own[x] == ILLEGAL:
            continue
        decode(desc, x, sq)
        occ = setup_board(desc, sq, board)
        raw_out[x] = raw_wdl(data, scalars, params, pieces, norm, factor, base, symlen, flags, map_idx, sq[:n], stm,
                             slot_type, slot_colour, pos)
        m = successors(desc, sq, x, stm, board, occ, exit_map, tmp, sub_sq, o_sub, o_stm, o_idx, o_ep)
        cap = -3
        for k in range(m):
            sid = o_sub[k]
            if sid >= 0 and is_capture[sid]:
                c = _zero_class(subcls, suboff, sid, o_stm[k], o_idx[k])
                if c == 3:
                    bad += 1
                cap = max(cap, -c)
        cap_out[x] = cap
    return bad


@njit(cache=True)
def dtz_stored_pass(desc, stm, own, exit_map, subcls, suboff, is_capture, wdl_own,
                    wdl_them, raw, cap, data, scalars, params, pieces, norm, factor, base, symlen, flags, map_idx,
                    slot_type, slot_colour, out, exact):
    """``probe_dtz_no_ep`` up to its table read: a draw, a winning capture, a winning pawn
    move, or the DTZ file's value; NOT_STORED where the file holds the other side (the
    one-ply search, :func:`dtz_search_pass`, fills those). ``wdl_own``/``wdl_them``: the
    Syzygy WDL of both sides (pawn moves reach ``wdl_them``). ``exact``: where the value
    is exact by construction (a draw, a zeroing move, a file value held to the ply)."""
    n = desc[0]
    s = scratch()
    sq, tmp, sub_sq, board, o_sub, o_stm, o_idx, o_ep = s.sq, s.tmp, s.sub_sq, s.board, s.o_sub, s.o_stm, s.o_idx, s.o_ep
    pos = np.empty(8, dtype=np.int64)
    for x in range(own.shape[0]):
        out[x] = 0
        exact[x] = True
        w = np.int64(wdl_own[x])
        if own[x] == ILLEGAL or w == 0:
            continue
        if cap[x] > 0 and cap[x] >= raw[x]:
            out[x] = _before_zeroing(w)
            continue
        decode(desc, x, sq)
        occ = setup_board(desc, sq, board)
        if w > 0:
            m = successors(desc, sq, x, stm, board, occ, exit_map, tmp, sub_sq, o_sub, o_stm, o_idx, o_ep)
            found = False
            for k in range(m):
                sid = o_sub[k]
                if sid >= 0:
                    if is_capture[sid]:
                        continue
                    c = _zero_class(subcls, suboff, sid, o_stm[k], o_idx[k])
                elif o_ep[k] == PAWN_PUSH:
                    c = np.int64(wdl_them[o_idx[k]])
                elif o_ep[k] >= 0:  # probe_wdl of a position with an en-passant square
                    c = _ep_vertex_class(desc, stm, occ, o_ep[k], o_idx[k], exit_map, subcls, suboff, wdl_them, s)
                else:
                    continue
                if -c == w:
                    found = True
                    break
            if found:
                out[x] = _before_zeroing(w)
                continue
        r, exact[x] = raw_dtz(data, scalars, params, pieces, norm, factor, base, symlen, flags, map_idx, sq[:n], stm,
                              slot_type, slot_colour, w, pos)
        out[x] = NOT_STORED if r == NOT_STORED else _before_zeroing(w) + (r if w > 0 else -r)


@njit(cache=True)
def dtz_search_pass(desc, stm, own, own_them, exit_map, subcls, suboff, wdl_own, wdl_them, dtz_them, out):
    """``probe_dtz_no_ep``'s one-ply search where the DTZ file holds the other side: over
    the piece moves of a win, over every move of a loss (``dtz_them``: the other side's
    values, which the file holds). Returns how many moves reached a position without a
    value (must be 0)."""
    s = scratch()
    sq, tmp, sub_sq, board, o_sub, o_stm, o_idx, o_ep = s.sq, s.tmp, s.sub_sq, s.board, s.o_sub, s.o_stm, s.o_idx, s.o_ep
    bad = 0
    for x in range(own.shape[0]):
        if own[x] == ILLEGAL or out[x] != NOT_STORED:
            continue
        w = np.int64(wdl_own[x])
        decode(desc, x, sq)
        occ = setup_board(desc, sq, board)
        m = successors(desc, sq, x, stm, board, occ, exit_map, tmp, sub_sq, o_sub, o_stm, o_idx, o_ep)
        if w > 0:
            best = 0xffff
            for k in range(m):
                if o_sub[k] >= 0 or not (o_ep[k] == -1 or o_ep[k] == KING_MOVE):
                    continue
                z = np.int64(dtz_them[o_idx[k]])
                if z == NOT_STORED:
                    bad += 1
                v = -z
                if v == 1 and own_them[o_idx[k]] == DECIDED:  # checkmate
                    best = 1
                elif 0 < v and v + 1 < best:
                    best = v + 1
        else:
            best = -1
            for k in range(m):
                sid = o_sub[k]
                if sid >= 0 or o_ep[k] == PAWN_PUSH or o_ep[k] >= 0:
                    if w == -2:
                        v = -1
                    else:  # probe_ab, which skips en-passant captures
                        c = _zero_class(subcls, suboff, sid, o_stm[k], o_idx[k]) if sid >= 0 else \
                            np.int64(wdl_them[o_idx[k]])
                        v = 0 if c == 2 else -101
                else:
                    z = np.int64(dtz_them[o_idx[k]])
                    if z == NOT_STORED:
                        bad += 1
                    v = -z - 1
                best = min(best, v)
        out[x] = best
    return bad


# -- per table ------------------------------------------------------------------------------

@dataclass
class SyzygyView:
    """What python-chess's Syzygy prober returns for every index of both sides to move of a
    table: ``wdl[stm]`` (int8, ``probe_wdl``) and ``dtz[stm]`` (int32, ``probe_dtz``; None
    without DTZ), 0 at illegal indices (``legal[stm]``). ``dtz_exact[stm]``: where the DTZ
    is exact by construction, not possibly one ply short (python-chess's rounding rule)."""

    wdl: list[np.ndarray]
    dtz: list[np.ndarray] | None
    dtz_exact: list[np.ndarray] | None
    legal: list[np.ndarray]


def syzygy_view(tables, key: str, oracle, *, with_dtz: bool = True, own=None) -> SyzygyView:
    """Syzygy's values of every legal position of our table ``key`` (in ``tables``, with
    its sub-tables: their classes value the captures and promotions) from the files in
    ``oracle`` (a folder of ``.rtbw``/``.rtbz`` files). ``own``: the table's exact codes
    (:func:`~tablebase.generate.exact.load_table`), if the caller holds them already."""
    scheme = IndexScheme.of(key)
    material = Material.parse(key)
    desc = scheme.desc
    slots = material.pieces()
    slot_type = np.array([_PIECE_TYPES[t] for _, t in slots], dtype=np.int64)
    slot_colour = np.array([0 if c == WHITE else 1 for c, _ in slots], dtype=np.int64)
    exits = ExitMap.of(material)
    is_capture = np.array([len(sub.pieces()) < len(slots) for sub in exits.subtables] or [False])
    em = exits.arrays
    own = load_table(tables, key) if own is None else own
    legal = [own[s] != ILLEGAL for s in (0, 1)]
    with cs.open_tablebase(str(oracle)) as tb:
        subs = [load_subtable_classes(tables, key, s) for s in (0, 1)]
        wtab = CompiledTable.of(tb.wdl[key], key, dtz=False)
        raw = [np.zeros(scheme.size, dtype=np.int8) for _ in (0, 1)]
        cap = [np.zeros(scheme.size, dtype=np.int8) for _ in (0, 1)]
        for s in (0, 1):
            bad = wdl_pass(desc, s, own[s], em, subs[s].values, subs[s].offsets, is_capture, *wtab.args(),
                           slot_type, slot_colour, raw[s], cap[s])
            if bad:
                raise RuntimeError(f"{key}: {bad} captures reached a sub-table side not loaded")
        wdl = [np.where(legal[s], np.maximum(raw[s], cap[s]), 0).astype(np.int8) for s in (0, 1)]
        if not with_dtz:
            return SyzygyView(wdl, None, None, legal)
        ztab = CompiledTable.of(tb.dtz[key], key, dtz=True)
        dtz = [np.zeros(scheme.size, dtype=np.int32) for _ in (0, 1)]
        exact = [np.zeros(scheme.size, dtype=np.bool_) for _ in (0, 1)]
        for s in (0, 1):
            dtz_stored_pass(desc, s, own[s], em, subs[s].values, subs[s].offsets, is_capture, wdl[s], wdl[1 - s],
                            raw[s], cap[s], *ztab.args(), slot_type, slot_colour, dtz[s], exact[s])
            exact[s] &= dtz[s] != NOT_STORED  # the one-ply search reads values that may be short
        for s in (0, 1):
            bad = dtz_search_pass(desc, s, own[s], own[1 - s], em, subs[s].values, subs[s].offsets, wdl[s],
                                  wdl[1 - s], dtz[1 - s], dtz[s])
            if bad:
                raise RuntimeError(f"{key}: {bad} moves of the one-ply search reached a side the file does not hold")
    return SyzygyView(wdl, dtz, exact, legal)
