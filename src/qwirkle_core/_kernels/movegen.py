"""Legal-move generation: every distinct placement of a hand, with its score.

For each anchor cell ``a`` and direction ``d``, placements are enumerated by their
first placed anchor (scanning along ``d``) and the number ``k`` of placed cells
before it, which must be empty cells with no neighbour. Every placement touches the
board, so it has exactly one such ``(a, k)``; a single tile is counted in direction 0
only. The line grows cell by cell in a depth-first search whose state is the set of
tiles the line still accepts (the AND of ``LX`` over its tiles); the perpendicular
constraint of each cell is its cross-check word. A line never holds a tile twice, so
the hand is a 36-bit set and duplicate tiles in a hand yield no duplicate moves.

Moves are written to an int32 array ``moves`` of shape (capacity, 14): column 0 the
number of tiles n, column 1 the score, columns 2..7 the wrapped cells, columns 8..13
the tiles. The return value is the total count, which may exceed the capacity (then
only the first ``capacity`` moves are written and the caller retries with more room).
"""

import numpy as np

from ._jit import njit
from .board import ALL, B_ANCHORS, B_TILES, COLOR_MASK, LX, SHAPE_MASK, scan_run, NSHIFT, line_points, lowest_bit_index, popcount, step

MOVE_COLS = 14
M_N, M_SCORE, M_CELL, M_TILE = 0, 1, 2, 8


def new_move_buffer(capacity=1024):
    return np.zeros((capacity, MOVE_COLS), np.int32)


@njit
def new_scratch_array():
    """The move generator's scratch: int64[8, 8] (rows 0-5 the search, 6-7 the hand's
    tile counts per colour and per shape)."""
    return np.zeros((8, 8), np.int64)


@njit
def _extend(board, cross, hand, s, d, k, need, allowed0, len0, min_n, exact_n, moves, count, st):
    """Depth-first search of the lines that start by placing on cell ``s``.

    The first ``k`` cells are empty cells before the anchor, which must take one of
    the tiles in ``need``: prefix tiles must share a colour or a shape with one of
    them, and a prefix whose line accepts none of them is cut off. A cell's candidates
    are the hand tiles the line accepts and both of its cross-check sets allow (the
    one along the line covers the tiles already next to it).

    ``st`` rows: 0 cell, 1 accepted set, 2 line length, 3 cross points, 4 candidate
    tiles left to try, 5 tile placed, each indexed by depth (tiles placed so far).
    """
    cap = moves.shape[0]
    perp = 1 - d
    st[0, 0] = s
    st[1, 0] = allowed0
    st[2, 0] = len0
    st[3, 0] = 0
    prefix = 0
    if k > 0:
        rest = need
        while rest:
            low = rest & -rest
            prefix |= LX[lowest_bit_index(low)]
            rest ^= low
    st[4, 0] = hand & allowed0 & cross[s, perp] & cross[s, d]
    if k > 0:
        st[4, 0] &= prefix
    depth = 0
    while depth >= 0:
        cand = st[4, depth]
        if cand == 0:
            depth -= 1
            continue
        low = cand & -cand
        st[4, depth] = cand ^ low
        t = lowest_bit_index(low)
        st[5, depth] = t
        p = st[0, depth]
        allowed = st[1, depth] & LX[t]
        length = st[2, depth] + 1
        xpts = st[3, depth]
        kx = cross[p, perp] >> NSHIFT
        if kx > 0:
            xpts += line_points(kx + 1)
        q = step(p, d, 1)
        ok = True
        while board[q] >= 0:
            u = board[q]
            if (allowed >> u) & 1 == 0:
                ok = False
                break
            allowed &= LX[u]
            length += 1
            q = step(q, d, 1)
        if not ok:
            continue
        nd = depth + 1
        if nd <= k and allowed & need == 0:
            continue
        if nd > k and nd >= min_n and (exact_n == 0 or nd == exact_n):
            if count < cap:
                score = xpts + line_points(length)
                moves[count, 0] = nd
                moves[count, 1] = score if score > 0 else 1
                for i in range(nd):
                    moves[count, M_CELL + i] = st[0, i]
                    moves[count, M_TILE + i] = st[5, i]
            count += 1
        if nd < 6 and (exact_n == 0 or nd < exact_n):
            nxt = hand & allowed & cross[q, perp] & cross[q, d]
            if nd < k:
                nxt &= prefix
            if nxt != 0:
                st[0, nd] = q
                st[1, nd] = allowed
                st[2, nd] = length
                st[3, nd] = xpts
                st[4, nd] = nxt
                depth = nd
    return count


@njit
def generate(board, cross, anchors, bmeta, hand, opening_len, moves, st):
    """Write every legal placement of the tile set ``hand`` (36-bit int) to ``moves``.

    On an empty board the openings are the horizontal lines starting at (0, 0) and
    running right, of exactly ``opening_len`` tiles (any length when 0).
    Returns the number of moves (see the module doc on capacity).
    """
    if hand == 0:
        return 0
    if bmeta[B_TILES] == 0:
        return _extend(board, cross, hand, 0, 0, 0, ALL, ALL, 0, 1, opening_len, moves, 0, st)
    for g in range(6):
        st[6, g] = popcount(hand & COLOR_MASK[g])
        st[7, g] = popcount(hand & SHAPE_MASK[g])
    count = 0
    for i in range(bmeta[B_ANCHORS]):
        a = anchors[i]
        need = hand & cross[a, 0] & cross[a, 1]
        if need == 0:
            continue
        # The longest line through ``a`` the hand could make bounds the cells before it.
        longest = 0
        for g in range(6):
            if need & COLOR_MASK[g]:
                longest = max(longest, st[6, g])
            if need & SHAPE_MASK[g]:
                longest = max(longest, st[7, g])
        for d in range(2):
            if d == 1 and longest < 2:
                break  # no line of 2+ through ``a``; its single tiles were counted in d = 0
            min_n = 1 if d == 0 else 2
            allowed, length, _ = scan_run(board, a, d, -1)
            # Starting at ``a``, a column placement needs a second cell past the run below.
            q = scan_run(board, a, d, 1)[2] if d == 1 else a
            if d == 0 or hand & cross[q, 0] & cross[q, 1] != 0:
                count = _extend(board, cross, hand, a, d, 0, need, allowed, length, min_n, 0, moves, count, st)
            if length > 0:
                continue
            s = a
            for k in range(1, longest):
                s = step(s, d, -1)
                if board[s] >= 0 or ((cross[s, 0] | cross[s, 1]) >> NSHIFT) != 0:
                    break
                count = _extend(board, cross, hand, s, d, k, need, ALL, 0, min_n, 0, moves, count, st)
    return count


@njit
def generate_all(board, cross, anchors, bmeta, hand, opening_len, moves, st):
    """:func:`generate` into a buffer grown until every move fits: ``(moves, n)``."""
    n = generate(board, cross, anchors, bmeta, hand, opening_len, moves, st)
    if n > moves.shape[0]:
        moves = np.zeros((2 * n, MOVE_COLS), np.int32)
        n = generate(board, cross, anchors, bmeta, hand, opening_len, moves, st)
    return moves, n
