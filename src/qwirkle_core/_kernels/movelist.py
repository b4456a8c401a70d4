"""Whole-move lists with a feature row per move (the environments' ``actions="moves"``).

:func:`move_list` lists the current player's legal whole moves of one game (the
placements, the exchanges worth listing, the pass when it is forced), at most ``K``
of them (the rows of its output arrays), and writes a feature row per move. When there
are more placements than room, the best-scoring ones are kept (ties in generation
order). The batched environment (:mod:`.vector`) calls it per env on the env's rows;
the Python layer (``qwirkle_core.env.movelist``) calls it for one ``Game``.

The exchanges listed (when the bag holds tiles and the opening is played): the whole
hand; for each colour and each shape in the hand, keeping one tile of each kind of
that colour (shape) and exchanging the rest; exchanging the duplicates only; and, when
the bag is too small for all of these, each single tile. Each set of slots once, none
larger than the bag; at most ``K // 2`` of them (the first in this order) when there
are placements. The pass is listed only when nothing else is legal.

The feature columns (float32, raw units; ``FEATURE_NAMES``): ``place``, ``exchange``,
``pass`` (one-hot kind); ``points`` (the points the move scores, the 6 for going out
included); ``tiles`` (tiles placed or exchanged); ``qwirkles`` (lines of 6 it
completes); ``fives`` (lines of exactly 5 it leaves through its tiles: a Qwirkle
offered); ``fives_open`` (of those, the ones whose missing tile the mover cannot see:
in the bag or another hand); ``fives_mine`` (the ones whose missing tile stays in
the mover's hand); ``goes_out`` (1: it ends the game with the 6 bonus); ``leave``
(tiles kept in hand before drawing); ``leave_colours``, ``leave_shapes`` (distinct
colours, shapes kept); ``leave_group`` (the most distinct kept tiles sharing a colour
or a shape: the longest line the leave makes); ``leave_dups`` (kept tiles that
duplicate another kept tile); ``points_gap`` (points minus the best points listed,
<= 0).
"""

from collections import namedtuple

import numpy as np

from ._jit import njit
from .board import ALL, LX, NSHIFT, POP6, colour_count, line_direction, lowest_bit_index, popcount, shape_count, step
from .layout import EXCHANGE, G_BAG, G_CURRENT, G_HAND, G_OPENING, M_CELL, M_N, M_SCORE, M_TILE, MOVE_COLS, PASS, PLACE
from .movegen import generate, new_scratch_array
from .state import NUM_TILE_TYPES, hand_mask, opening_len, unseen_counts

K_MOVES = 128  # moves listed per observation (the environments' default)
FEATURE_NAMES = (
    "place",
    "exchange",
    "pass",
    "points",
    "tiles",
    "qwirkles",
    "fives",
    "fives_open",
    "fives_mine",
    "goes_out",
    "leave",
    "leave_colours",
    "leave_shapes",
    "leave_group",
    "leave_dups",
    "points_gap",
)
FEATURES = len(FEATURE_NAMES)
(
    F_PLACE,
    F_EXCHANGE,
    F_PASS,
    F_POINTS,
    F_TILES,
    F_QWIRKLES,
    F_FIVES,
    F_FIVES_OPEN,
    F_FIVES_MINE,
    F_OUT,
    F_LEAVE,
    F_COLOURS,
    F_SHAPES,
    F_GROUP,
    F_DUPS,
    F_GAP,
) = range(FEATURES)
LEAVE_COLS = 5  # F_LEAVE .. F_DUPS
HBINS = 128  # score histogram bins for keeping the best placements (scores above share the last)
MOVE_ROOM = 4096  # placements the generation buffer holds at first (grown when a turn has more)

MoveScratch = namedtuple("MoveScratch", "gmoves gen unseen leave lknown hist xmasks tally tbits ltypes")
MoveScratch.__doc__ = """:func:`move_list`'s scratch: the placements buffer ``gmoves``
int32[room, MOVE_COLS] (grown by the caller when a turn has more), the move generator's
scratch ``gen``, ``unseen`` int64[36], the leave features per set of slots played
``leave`` float32[64, LEAVE_COLS] and whether each is known this turn ``lknown``
uint8[64], the score histogram ``hist`` int64[HBINS] and the exchange slot sets
``xmasks`` int64[64], the line counts ``tally`` int64[4], the hand slots holding each
tile ``tbits`` int64[36] (bits; zero between calls) and the tiles kept per set of slots
played ``ltypes`` int64[64] (36-bit sets, known with ``lknown``)."""


@njit
def new_move_scratch(room):
    """A :class:`MoveScratch` whose placements buffer holds ``room`` rows."""
    return MoveScratch(
        np.zeros((room, MOVE_COLS), np.int32),
        new_scratch_array(),
        np.zeros(NUM_TILE_TYPES, np.int64),
        np.zeros((64, LEAVE_COLS), np.float32),
        np.zeros(64, np.uint8),
        np.zeros(HBINS, np.int64),
        np.zeros(64, np.int64),
        np.zeros(4, np.int64),
        np.zeros(NUM_TILE_TYPES, np.int64),
        np.zeros(64, np.int64),
    )


@njit(inline="always")
def _leave(ms, hands, p, size, removed):
    """The leave features of keeping the slots not in ``removed`` (bits), computed once
    a turn per set (row ``removed`` of ``ms.leave``)."""
    row = ms.leave[removed]
    if ms.lknown[removed]:
        return row
    types = np.int64(0)
    n = 0
    for s in range(size):
        if (removed >> s) & 1 == 0:
            types |= np.int64(1) << hands[p, s]
            n += 1
    ms.ltypes[removed] = types
    colours = 0
    shapes = 0
    group = 0
    for c in range(6):
        k = colour_count(types, c)
        colours += k > 0
        group = max(group, k)
        k = shape_count(types, c)
        shapes += k > 0
        group = max(group, k)
    row[0] = n
    row[1] = colours
    row[2] = shapes
    row[3] = group
    row[4] = n - popcount(types)
    ms.lknown[removed] = 1
    return row


@njit(inline="always")
def _slots_of(tbits, gmoves, m):
    """The hand slots a placement plays (bits): for each tile the first slot holding it
    that is not taken yet (``tbits[t]``: the slots holding tile ``t``)."""
    removed = np.int64(0)
    for j in range(gmoves[m, M_N]):
        free = tbits[gmoves[m, M_TILE + j]] & ~removed
        removed |= free & -free
    return removed


@njit(inline="always")
def _line(length, allowed, unseen, kept, tally):
    """Count a line of ``length`` tiles the move leaves (``allowed``: the tiles it
    still accepts) into ``tally`` (qwirkles, fives, fives open, fives mine)."""
    if length == 6:
        tally[0] += 1
    elif length == 5:
        tally[1] += 1
        rest = allowed & ALL
        if rest:
            t = lowest_bit_index(rest & -rest)
            if unseen[t] > 0:
                tally[2] += 1
            if (kept >> t) & 1:
                tally[3] += 1


@njit(inline="always")
def _lines(board, cross, gmoves, m, unseen, kept, tally):
    """The lines through placement ``m`` of ``gmoves`` (not yet on ``board``)."""
    n = gmoves[m, M_N]
    c0 = np.int64(gmoves[m, M_CELL])
    for k in range(4):
        tally[k] = 0
    if n == 1:
        t = gmoves[m, M_TILE]
        for d in range(2):
            word = cross[c0, d]
            k = word >> NSHIFT
            if k > 0:
                _line(k + 1, word & LX[t], unseen, kept, tally)
        return
    d = line_direction(n, c0, np.int64(gmoves[m, M_CELL + 1]))
    perp = 1 - d
    allowed = np.int64(ALL)
    length = 0
    j = step(c0, d, -1)
    while board[j] >= 0:
        allowed &= LX[board[j]]
        length += 1
        j = step(j, d, -1)
    j = c0
    idx = 0
    while True:
        if idx < n and j == gmoves[m, M_CELL + idx]:
            t = gmoves[m, M_TILE + idx]
            idx += 1
        elif board[j] >= 0:
            t = board[j]
        else:
            break
        allowed &= LX[t]
        length += 1
        j = step(j, d, 1)
    _line(length, allowed, unseen, kept, tally)
    for q in range(n):
        cell = gmoves[m, M_CELL + q]
        word = cross[cell, perp]
        k = word >> NSHIFT
        if k > 0:
            _line(k + 1, word & LX[gmoves[m, M_TILE + q]], unseen, kept, tally)


@njit(inline="always")
def _exchanges(hands, p, size, bag, xm):
    """The slot sets worth exchanging (see the module doc) into ``xm``; returns their
    number."""
    full = (1 << size) - 1
    seen = np.int64(0)
    nx = 0
    firsts = 0  # the first slot of each kind of tile
    types = np.int64(0)
    for s in range(size):
        t = hands[p, s]
        if (types >> t) & 1 == 0:
            firsts |= 1 << s
            types |= np.int64(1) << t
    for option in range(14):
        if option == 0:
            x = full
        elif option == 1:
            x = full & ~firsts
        else:
            a = option - 2  # 0..5 a colour, 6..11 a shape
            keep = 0
            for s in range(size):
                t = hands[p, s]
                if (firsts >> s) & 1 and ((a < 6 and t // 6 == a) or (a >= 6 and t % 6 == a - 6)):
                    keep |= 1 << s
            if keep == 0:
                continue
            x = full & ~keep
        if x != 0 and POP6[x] <= bag and (seen >> x) & 1 == 0:
            seen |= np.int64(1) << x
            xm[nx] = x
            nx += 1
    if nx == 0:
        for s in range(size):
            if (firsts >> s) & 1:
                xm[nx] = 1 << s
                nx += 1
    return nx


@njit(_nrt=False)
def move_list(board, cross, anchors, bmeta, hands, bag, gmeta, ms, out_moves, out_kind, out_feats, out_mask, prev):
    """List the current player's whole moves of one game (the board arrays of
    :mod:`.board`, the game arrays of :mod:`.state`; read only) with their features.

    Writes ``out_moves`` int32[K, MOVE_COLS] (a placement's row as the move generator
    writes it, board cells; an exchange's ``M_N`` tiles in the ``M_TILE`` columns; the
    pass empty), ``out_kind`` int8[K] (PLACE, EXCHANGE or PASS), ``out_feats``
    float32[K, FEATURES] and ``out_mask`` int8[K] (1 for the listed rows), rows from the
    count up to ``prev`` (the count written last time) cleared. ``ms``: a
    :class:`MoveScratch`. Returns ``(count, placements)``: the moves listed and the
    placements generated; ``count`` -1 when they are more than ``ms.gmoves`` holds
    (nothing written: grow it to ``placements`` rows and call again)."""
    k_max = out_kind.shape[0]
    p = gmeta[G_CURRENT]
    size = gmeta[G_HAND + p]
    nbag = gmeta[G_BAG]
    gm = ms.gmoves
    n = generate(board, cross, anchors, bmeta, hand_mask(hands, gmeta, p), opening_len(gmeta), gm, ms.gen, False)
    if n > gm.shape[0]:
        return -1, n
    xm = ms.xmasks
    nx = 0
    if nbag > 0 and gmeta[G_OPENING] == 0:
        nx = _exchanges(hands, p, size, nbag, xm)
    nx = min(nx, k_max // 2 if n > 0 else k_max)
    room = k_max - nx
    # the placements kept: all, or the best ``room`` by score
    threshold = -1
    at_threshold = room  # placements of the threshold score still taken
    if n > room:
        hist = ms.hist
        hist[:] = 0
        for m in range(n):
            hist[min(gm[m, M_SCORE], HBINS - 1)] += 1
        above = 0
        threshold = HBINS - 1
        while above + hist[threshold] < room:
            above += hist[threshold]
            threshold -= 1
        at_threshold = room - above
    for r in range(64):
        ms.lknown[r] = 0
    unseen = ms.unseen
    unseen_counts(hands, bag, gmeta, p, unseen)
    tally = ms.tally
    tbits = ms.tbits
    for s in range(size):
        tbits[hands[p, s]] |= np.int64(1) << s
    count = 0
    best = 0
    for m in range(n):
        score = gm[m, M_SCORE]
        if n > room:
            b = min(score, HBINS - 1)
            if b < threshold:
                continue
            if b == threshold:
                if at_threshold == 0:
                    continue
                at_threshold -= 1
        row = out_moves[count]
        for c in range(MOVE_COLS):
            row[c] = gm[m, c]
        cnt = gm[m, M_N]
        removed = _slots_of(tbits, gm, m)
        lv = _leave(ms, hands, p, size, removed)
        kept = ms.ltypes[removed]
        f = out_feats[count]
        out = nbag == 0 and cnt == size
        points = score + (6 if out else 0)
        best = max(best, points)
        f[F_PLACE] = 1
        f[F_EXCHANGE] = 0
        f[F_PASS] = 0
        f[F_POINTS] = points
        f[F_TILES] = cnt
        _lines(board, cross, gm, m, unseen, kept, tally)
        f[F_QWIRKLES] = tally[0]
        f[F_FIVES] = tally[1]
        f[F_FIVES_OPEN] = tally[2]
        f[F_FIVES_MINE] = tally[3]
        f[F_OUT] = out
        for c in range(LEAVE_COLS):
            f[F_LEAVE + c] = lv[c]
        out_kind[count] = PLACE
        out_mask[count] = 1
        count += 1
    for s in range(size):
        tbits[hands[p, s]] = 0
    for e in range(nx):
        x = xm[e]
        row = out_moves[count]
        row[:] = 0
        j = 0
        for s in range(size):
            if (x >> s) & 1:
                row[M_TILE + j] = hands[p, s]
                j += 1
        row[M_N] = j
        f = out_feats[count]
        f[:] = 0
        f[F_EXCHANGE] = 1
        f[F_TILES] = j
        lv = _leave(ms, hands, p, size, x)
        for c in range(LEAVE_COLS):
            f[F_LEAVE + c] = lv[c]
        out_kind[count] = EXCHANGE
        out_mask[count] = 1
        count += 1
    if count == 0:
        out_moves[0, :] = 0
        f = out_feats[0]
        f[:] = 0
        f[F_PASS] = 1
        lv = _leave(ms, hands, p, size, 0)
        for c in range(LEAVE_COLS):
            f[F_LEAVE + c] = lv[c]
        out_kind[0] = PASS
        out_mask[0] = 1
        count = 1
    for r in range(count):
        out_feats[r, F_GAP] = out_feats[r, F_POINTS] - best
    for r in range(count, max(prev, count)):
        out_feats[r, :] = 0
        out_mask[r] = 0
        out_kind[r] = PASS
    return count, n
