"""Checking one placement against the rules and scoring it."""

from ._jit import njit
from .board import ALL, LX, NSHIFT, cell_of, line_direction, line_points, scan_run, step
from .layout import B_TILES

OK = 0
NOT_IN_LINE = 1
CELL_TAKEN = 2
GAP = 3
NOT_TOUCHING = 4
BAD_LINE = 5
BAD_CROSS = 6
OPENING_PLACE = 7
OPENING_LENGTH = 8
TOO_LONG = 9


@njit
def check_placement(board, cross, bmeta, rows, cols, tiles, n, opening_len, cells):
    """Check placing ``tiles[:n]`` at true coordinates ``(rows, cols)`` and score it.

    ``cells`` is an int64 scratch of length >= n that receives the wrapped cells.
    ``opening_len`` applies to an empty board only: the exact number of tiles the
    opening must have, or 0 for any. Returns ``(code, score, qwirkles, where)``:
    ``code`` is ``OK`` or one of the error codes above, ``where`` the index of the
    placed tile the error is about (or -1).
    """
    if n > 6:
        return TOO_LONG, 0, 0, -1
    same_row = True
    same_col = True
    for i in range(n):
        cells[i] = cell_of(rows[i], cols[i])
        if board[cells[i]] >= 0:
            return CELL_TAKEN, 0, 0, i
        same_row = same_row and rows[i] == rows[0]
        same_col = same_col and cols[i] == cols[0]
    if not (same_row or same_col):
        return NOT_IN_LINE, 0, 0, -1
    d = 0 if same_row else 1
    # Positions along the line and the extent of the placement.
    lo = 0
    hi = 0
    for i in range(n):
        pos = cols[i] if d == 0 else rows[i]
        if pos < (cols[lo] if d == 0 else rows[lo]):
            lo = i
        if pos > (cols[hi] if d == 0 else rows[hi]):
            hi = i
    span = (cols[hi] - cols[lo]) if d == 0 else (rows[hi] - rows[lo])
    if span > 11:
        return GAP, 0, 0, -1
    if bmeta[B_TILES] == 0:
        if not (same_row and rows[0] == 0 and cols[lo] == 0 and span == n - 1):
            return OPENING_PLACE, 0, 0, -1
        if opening_len > 0 and n != opening_len:
            return OPENING_LENGTH, 0, 0, -1
    # Walk the whole line: existing tiles before, between and after the placed ones.
    start = cells[lo]
    j = step(start, d, -1)
    while board[j] >= 0:
        start = j
        j = step(j, d, -1)
    allowed = ALL
    length = 0
    touching = False
    j = start
    covered = 0
    while True:
        t = -1
        placed = -1
        if board[j] >= 0:
            t = board[j]
            touching = True
        else:
            for i in range(n):
                if cells[i] == j:
                    placed = i
                    t = tiles[i]
            if placed < 0:
                break
            covered += 1
        if (allowed >> t) & 1 == 0:
            return BAD_LINE, 0, 0, placed
        allowed &= LX[t]
        length += 1
        j = step(j, d, 1)
    if covered < n:
        return GAP, 0, 0, -1
    score = line_points(length)
    qwirkles = 1 if length == 6 else 0
    perp = 1 - d
    for i in range(n):
        word = cross[cells[i], perp]
        if (word >> tiles[i]) & 1 == 0:
            return BAD_CROSS, 0, 0, i
        k = word >> NSHIFT
        if k > 0:
            touching = True
            score += line_points(k + 1)
            if k == 5:
                qwirkles += 1
    if bmeta[B_TILES] == 0:
        return OK, max(score, 1), qwirkles, -1
    if not touching:
        return NOT_TOUCHING, 0, 0, -1
    return OK, score, qwirkles, -1


@njit
def _run_length(board, idx, d):
    return 1 + scan_run(board, idx, d, -1)[1] + scan_run(board, idx, d, 1)[1]


@njit(inline="always")  # into apply_placement
def qwirkles_made(board, cells, n):
    """Lines of 6 through the just-placed ``cells[:n]`` (each line counted once)."""
    d = line_direction(n, cells[0], cells[min(n - 1, 1)])
    q = 1 if _run_length(board, cells[0], d) == 6 else 0
    for i in range(n):
        if _run_length(board, cells[i], 1 - d) == 6:
            q += 1
    return q
