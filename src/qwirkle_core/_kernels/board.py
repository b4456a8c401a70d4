"""Board state: a 128 x 128 torus of cells with incremental cross-check masks.

Layout (all plain numpy arrays, one set per game):

``board``   int8[NCELLS]      tile on each cell, ``EMPTY`` (-1) when free.
``cross``   int64[NCELLS, 2]  for an empty cell and a direction d (0 = along a row,
                              1 = along a column): bits 0..35 are the tiles that may be
                              put there as far as the neighbouring tiles in direction d
                              are concerned (the "cross-check set"), bits 40..47 the
                              number of those neighbouring tiles. Kept up to date after
                              every placement; meaningless on occupied cells.
``anchors`` int32[MAX_ANCHORS] empty cells with at least one occupied neighbour that
                              some tile could still fill (the first ``bmeta[B_ANCHORS]``
                              entries; an empty cell with a neighbour but no fitting
                              tile is "dead" and dropped for good).
``bmeta``   int64[BMETA]      tile count, anchor count and the bounding box of the tiles
                              in true (unwrapped) coordinates (``B_*`` in :mod:`.layout`).

A cell index is ``((row & 127) << 7) | (col & 127)``: rows and columns wrap around.
A legal game never spans more than 108 rows or columns, and every cell a move can
reach lies within 7 of the bounding box, so the 128-wide torus never aliases and
true coordinates are recovered from the bounding box (:func:`unwrap`).
"""

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from ._jit import keep, njit
from .layout import B_ANCHORS, B_MAXC, B_MAXR, B_MINC, B_MINR, B_TILES, BMETA

GRID_BITS = 7
GRID = 1 << GRID_BITS
GMASK = GRID - 1
NCELLS = GRID * GRID
ROWBITS = NCELLS - GRID
EMPTY = -1
MAX_ANCHORS = 512

ALL = (1 << 36) - 1
NSHIFT = 40


def _tables():
    color_mask = np.zeros(6, np.int64)
    shape_mask = np.zeros(6, np.int64)
    for t in range(36):
        color_mask[t // 6] |= 1 << t
        shape_mask[t % 6] |= 1 << t
    # LX[t]: the tiles that may share a line with t (same colour or same shape), t excluded.
    lx = np.array([(color_mask[t // 6] | shape_mask[t % 6]) & ~(1 << t) for t in range(36)], np.int64)
    return color_mask, shape_mask, lx


COLOR_MASK, SHAPE_MASK, LX = _tables()


@njit
def lowest_bit_index(low):
    """Index of the single set bit of ``low`` (a power of two below 2**63): the CPU's
    count of trailing zeros (LLVM's cttz; a De Bruijn table lookup before)."""
    return trailing_zeros(low)


@njit
def popcount(x):
    """The number of set bits of ``x`` (0 <= x < 2**62), without a loop."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((x * 0x0101010101010101) >> 56) & 127


# A tile set's tiles of colour c are its 6 bits from 6c; those of shape s every sixth
# bit from s (SHAPE_BITS << s). POP6[m]: the set bits of a 6-bit m.
POP6 = np.array([bin(m).count("1") for m in range(64)], np.int64)
SHAPE_BITS = 0x41041041


@njit
def colour_count(tiles, colour):
    """The tiles of the set ``tiles`` of colour ``colour``."""
    return POP6[(tiles >> (6 * colour)) & 63]


@njit
def shape_count(tiles, shape):
    """The tiles of the set ``tiles`` of shape ``shape`` (the six bits summed into bits
    30..32 by one multiplication)."""
    return ((((tiles >> shape) & SHAPE_BITS) * SHAPE_BITS) >> 30) & 7


@njit
def group_of(tiles, t):
    """The most tiles of the set ``tiles`` that share tile ``t``'s colour, or its shape."""
    return max(colour_count(tiles, t // 6), shape_count(tiles, t % 6))


@njit
def cell_of(row, col):
    return ((row & GMASK) << GRID_BITS) | (col & GMASK)


@njit
def step(idx, d, sign):
    """The cell ``sign`` steps from ``idx`` along direction ``d`` (0 row, 1 column)."""
    if d == 0:
        return (idx & ROWBITS) | ((idx + sign) & GMASK)
    return (idx + sign * GRID) & (NCELLS - 1)


@njit
def unwrap(w, lo):
    """The true coordinate in ``[lo - 8, lo + 120)`` whose wrapped value is ``w``."""
    base = lo - 8
    return base + ((w - base) & GMASK)


@njit
def new_board():
    board = np.full(NCELLS, EMPTY, np.int8)
    cross = np.full((NCELLS, 2), ALL, np.int64)
    anchors = np.zeros(MAX_ANCHORS, np.int32)
    bmeta = np.zeros(BMETA, np.int64)
    return board, cross, anchors, bmeta


@njit
def clear_board(board, cross, anchors, bmeta):
    """Reset a board to empty in place (cost proportional to the tiles on it)."""
    n = bmeta[B_TILES]
    if n == 0:
        return
    for r in range(bmeta[B_MINR] - 1, bmeta[B_MAXR] + 2):
        for c in range(bmeta[B_MINC] - 1, bmeta[B_MAXC] + 2):
            i = cell_of(r, c)
            board[i] = EMPTY
            cross[i, 0] = ALL
            cross[i, 1] = ALL
    bmeta[:] = 0


@njit
def line_direction(n, first, second):
    """The direction of a placement of ``n`` tiles whose first two cells are ``first``
    and ``second``: 0 (a row) for a single tile or a row, 1 for a column."""
    return 0 if n == 1 or (first >> GRID_BITS) == (second >> GRID_BITS) else 1


@njit
def scan_run(board, cell, d, sign):
    """The run of tiles next to ``cell`` going ``sign`` along ``d``: (the AND of their
    ``LX`` masks, their number, the first empty cell past them)."""
    accepted = ALL
    n = 0
    j = step(cell, d, sign)
    while board[j] >= 0:
        accepted &= LX[board[j]]
        n += 1
        j = step(j, d, sign)
    return accepted, n, j


@njit(inline="always")  # into _put's loop (a call there costs its callers reference counts)
def segment_cross(board, idx, d):
    """Cross-check word of empty cell ``idx`` for direction ``d`` (see module doc)."""
    allowed = ALL
    n = 0
    for sign in (-1, 1):
        j = step(idx, d, sign)
        while board[j] >= 0:
            t = board[j]
            if (allowed >> t) & 1:
                allowed &= LX[t]
            else:
                allowed = 0
            n += 1
            j = step(j, d, sign)
    return allowed | (n << NSHIFT)


@njit
def _grow_bbox(bmeta, r, c):
    if bmeta[B_TILES] == 0:
        bmeta[B_MINR] = r
        bmeta[B_MAXR] = r
        bmeta[B_MINC] = c
        bmeta[B_MAXC] = c
    else:
        bmeta[B_MINR] = min(bmeta[B_MINR], r)
        bmeta[B_MAXR] = max(bmeta[B_MAXR], r)
        bmeta[B_MINC] = min(bmeta[B_MINC], c)
        bmeta[B_MAXC] = max(bmeta[B_MAXC], c)


@njit(inline="always")  # into the three placing kernels
def _put(board, cross, anchors, bmeta, cells, tiles, n, one_line, log):
    """Put the tiles down and update the masks and anchors. ``one_line``: the tiles
    are one placement (one line), whose two ends need updating only once. When
    ``log`` (int64[k, 3]) is not empty, every cross word changed is first written to
    it as (cell, word 0, word 1); returns the number of entries written. Callers that
    keep no log pass ``cross[:0]``, an empty int64 2-D view, so no array is allocated
    per placement."""
    logged = 0
    for i in range(n):
        board[cells[i]] = tiles[i]
    # The ends of a placement's own line are the same from each of its tiles.
    line = line_direction(n, cells[0], cells[min(n - 1, 1)]) if one_line else -1
    for i in range(n):
        for d in range(2):
            if d == line and i > 0:
                continue
            for sign in (-1, 1):
                j = step(cells[i], d, sign)
                while board[j] >= 0:
                    j = step(j, d, sign)
                if log.shape[0] > 0:
                    log[logged, 0] = j
                    log[logged, 1] = cross[j, 0]
                    log[logged, 2] = cross[j, 1]
                    logged += 1
                was_anchor = ((cross[j, 0] | cross[j, 1]) >> NSHIFT) != 0
                cross[j, d] = segment_cross(board, j, d)
                if not was_anchor:
                    anchors[bmeta[B_ANCHORS]] = j
                    bmeta[B_ANCHORS] += 1
    # Keep the anchors that are still empty and can still take some tile: masks only
    # shrink as tiles arrive, so a dead anchor stays dead.
    k = 0
    for i in range(bmeta[B_ANCHORS]):
        a = anchors[i]
        if board[a] < 0 and (cross[a, 0] & cross[a, 1] & ALL) != 0:
            anchors[k] = a
            k += 1
    bmeta[B_ANCHORS] = k
    return logged


@njit(inline="always")
def _grow_bbox_cells(bmeta, cells, n):
    """Count ``n`` new tiles on wrapped ``cells`` into the tile count and bounding box."""
    for i in range(n):
        _grow_bbox(bmeta, unwrap(cells[i] >> GRID_BITS, bmeta[B_MINR]), unwrap(cells[i] & GMASK, bmeta[B_MINC]))
        bmeta[B_TILES] += 1


@njit(inline="always")  # into apply_placement
def place_cells(board, cross, anchors, bmeta, cells, tiles, n):
    """Put ``tiles[:n]`` on wrapped ``cells[:n]`` (already checked legal) and update masks."""
    _grow_bbox_cells(bmeta, cells, n)
    log = cross[:0]  # empty: no copy kept
    _put(board, cross, anchors, bmeta, cells, tiles, n, True, log)
    keep(board, cross, anchors, bmeta, cells, tiles, log)


@njit
def place_at(board, cross, anchors, bmeta, rows, cols, tiles, n, cells_scratch):
    """Like :func:`place_cells` with true coordinates (used to set up positions)."""
    for i in range(n):
        _grow_bbox(bmeta, rows[i], cols[i])
        bmeta[B_TILES] += 1
        cells_scratch[i] = cell_of(rows[i], cols[i])
    _put(board, cross, anchors, bmeta, cells_scratch, tiles, n, False, cross[:0])


@njit
def new_undo_stack(slots):
    """Scratch to take back up to ``slots`` placements made one after the other (a
    playout's, a search line's), a slot each: the changed cross words
    int64[slots, 24, 3], a copy of the anchors int32[slots, MAX_ANCHORS] and of bmeta
    int64[slots, BMETA], and the count of cross words int64[slots, 1]."""
    return (
        np.zeros((slots, 24, 3), np.int64),
        np.zeros((slots, MAX_ANCHORS), np.int32),
        np.zeros((slots, BMETA), np.int64),
        np.zeros((slots, 1), np.int64),
    )


@njit(_nrt=False)  # no reference counts: see :mod:`._kernels`
def place_in_slot(board, cross, anchors, bmeta, cells, tiles, n, logs, anchors_copies, bmeta_copies, counts, slot):
    """:func:`place_cells`, remembering in slot ``slot`` of a :func:`new_undo_stack`
    (its four arrays passed one by one) what it changed. Copies are made element by
    element: a slice copy needs numba's runtime."""
    for i in range(bmeta[B_ANCHORS]):
        anchors_copies[slot, i] = anchors[i]
    for i in range(BMETA):
        bmeta_copies[slot, i] = bmeta[i]
    _grow_bbox_cells(bmeta, cells, n)
    counts[slot, 0] = _put(board, cross, anchors, bmeta, cells, tiles, n, True, logs[slot])


@njit(_nrt=False)
def take_back_slot(board, cross, anchors, bmeta, cells, n, logs, anchors_copies, bmeta_copies, counts, slot):
    """Undo the :func:`place_in_slot` of ``cells[:n]`` in slot ``slot``, the last
    placement not yet taken back."""
    for i in range(counts[slot, 0] - 1, -1, -1):
        cross[logs[slot, i, 0], 0] = logs[slot, i, 1]
        cross[logs[slot, i, 0], 1] = logs[slot, i, 2]
    for i in range(n):
        board[cells[i]] = EMPTY
    for i in range(BMETA):
        bmeta[i] = bmeta_copies[slot, i]
    for i in range(bmeta[B_ANCHORS]):
        anchors[i] = anchors_copies[slot, i]


def true_coords(bmeta, cells):
    """``(rows, cols)``: the true coordinates of the wrapped ``cells`` (an integer
    array of any shape) on the board ``bmeta``, as two int64 arrays of that shape:
    :func:`unwrap` of each cell's row and column, in plain numpy for the Python layer
    (nothing to compile)."""
    cells = np.asarray(cells, np.int64)
    rbase, cbase = int(bmeta[B_MINR]) - 8, int(bmeta[B_MINC]) - 8
    return rbase + (((cells >> GRID_BITS) - rbase) & GMASK), cbase + (((cells & GMASK) - cbase) & GMASK)


@njit
def line_points(length):
    """Points for one line of ``length`` tiles (0 for no line, +6 for a Qwirkle)."""
    if length < 2:
        return 0
    if length == 6:
        return 12
    return length


LINE_POINTS = np.array([line_points.py_func(n) for n in range(7)], np.int64)
"""``line_points`` of lines of 0 to 6 tiles as a table: a load instead of two branches
(the move search is about 3% faster)."""
