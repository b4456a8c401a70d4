"""Legal-move generation: every distinct placement of a hand, with its score.

Every placement touches the board, so along its direction ``d`` it has a first
*anchor* (an empty cell next to a tile); the cells before that anchor are empty cells
with no neighbour at all. For each anchor ``a`` and direction ``d`` the placements
whose first anchor is ``a`` are grown from ``a`` in a depth-first search: first
leftwards (``-d``) over neighbourless cells, then rightwards (``+d``), taking in the
tiles already on the board. Each placement is so found exactly once; a single tile is
counted in direction 0 only. The search state is the set of tiles the line still
accepts (the AND of ``LX`` over its tiles); the perpendicular constraint of each cell
is its cross-check word. A line never holds a tile twice, so the hand is a 36-bit set
and duplicate tiles in a hand yield no duplicate moves.

Moves are written to an int32 array ``moves`` of shape (capacity, MOVE_COLS), one row
per placement (columns ``M_*`` of :mod:`.layout`): the number of tiles n, the score,
the n wrapped cells and the n tiles. The return value is the total count, which may
exceed the capacity (then only the first ``capacity`` moves are written and the caller
retries with more room); :func:`.board.true_coords` gives the moves' true coordinates.
"""

import numpy as np

from ._jit import keep, njit
from .board import ALL, LINE_POINTS, LX, NSHIFT, group_of, line_points, lowest_bit_index, scan_run, step
from .layout import B_ANCHORS, B_TILES, M_CELL, M_N, M_SCORE, M_TILE, MOVE_COLS

# Columns of the search scratch, one row per depth (tiles placed so far): the state of a
# depth is contiguous (about 8% faster than a column per depth).
_CELL, _TILE, _ALLOWED, _LEN, _XPTS, _RIGHT, _LEFT, _CAND_LEFT, _CAND_RIGHT, _NLEFT, _BACK = range(11)
_BEST = 11  # st[0, _BEST]: the best score so far, when only the best moves are kept


def new_move_buffer(capacity=1024):
    return np.zeros((capacity, MOVE_COLS), np.int32)


@njit
def new_scratch_array():
    """The move generator's scratch: int64[8, 12] (see ``_grow``)."""
    return np.zeros((8, 12), np.int64)


@njit
def _free(board, cross, c):
    """Whether ``c`` is an empty cell with no neighbour (a line may extend into it
    before its first anchor)."""
    return board[c] < 0 and ((cross[c, 0] | cross[c, 1]) >> NSHIFT) == 0


@njit(inline="always")  # inlined at its two call sites: about 7% faster
def _grow(board, cross, hand, d, s, first, left, allowed0, len0, min_n, exact_n, moves, count, st, best_only):
    """Depth-first search of the lines along ``d`` whose first tile (one of ``first``)
    goes on cell ``s``.

    The line already holds the ``len0`` tiles before ``s`` (accepting ``allowed0``).
    After the first tile it grows leftwards into ``left`` and the free cells before it
    (``left`` = -1: it may not), and then rightwards past any tiles on the board. A
    cell's candidates are the hand tiles the line accepts and, on the right, both of
    the cell's cross-check sets allow (the one along the line covers the tiles already
    next to it); free cells on the left have no neighbour to check.

    ``st`` rows are depths; columns: the cell and tile placed at that depth, and the
    line before it: accepted set, length, cross points, right and left cells, the
    candidate tiles left to try there, the number of tiles placed on the left, and
    the depth to go back to once they are all tried (the nearest one above with
    candidates left: no pass of the loop only finds a depth exhausted; about 7%
    faster).
    Moves list their cells in order along the line. With ``best_only`` only the moves
    of the best score so far are kept (``count`` restarts at 0 when it improves).
    """
    cap = moves.shape[0]
    perp = 1 - d
    best = st[0, _BEST]
    st[0, _ALLOWED] = allowed0
    st[0, _LEN] = len0
    st[0, _XPTS] = 0
    st[0, _RIGHT] = s
    st[0, _LEFT] = -1
    st[0, _CAND_LEFT] = 0
    st[0, _CAND_RIGHT] = first
    st[0, _NLEFT] = 0
    st[0, _BACK] = -1
    depth = 0
    while depth >= 0:  # a node with candidates left
        on_left = st[depth, _CAND_LEFT] != 0
        row = _CAND_LEFT if on_left else _CAND_RIGHT
        cand = st[depth, row]
        low = cand & -cand
        st[depth, row] = cand ^ low
        # the depth to go on from once this candidate's subtree is done
        back = st[depth, _BACK] if cand == low and (not on_left or st[depth, _CAND_RIGHT] == 0) else depth
        t = lowest_bit_index(low)
        p = st[depth, _LEFT if on_left else _RIGHT]
        allowed = st[depth, _ALLOWED] & LX[t]
        length = st[depth, _LEN] + 1
        xpts = st[depth, _XPTS]
        nleft = st[depth, _NLEFT]
        if on_left:  # a free cell: no neighbour, nothing to check across or beyond
            right = st[depth, _RIGHT]
            nleft += 1
            nl = step(p, d, -1)
            if not _free(board, cross, nl):
                nl = -1
        else:
            kx = cross[p, perp] >> NSHIFT
            if kx > 0:
                xpts += LINE_POINTS[kx + 1]
            right = step(p, d, 1)
            ok = True
            while board[right] >= 0:
                u = board[right]
                if (allowed >> u) & 1 == 0:
                    ok = False
                    break
                allowed &= LX[u]
                length += 1
                right = step(right, d, 1)
            if not ok:
                depth = back
                continue
            nl = left if depth == 0 else -1
        st[depth, _CELL] = p
        st[depth, _TILE] = t
        nd = depth + 1
        if nd >= min_n and (exact_n == 0 or nd == exact_n):
            score = max(xpts + LINE_POINTS[length], 1)
            keep = True
            if best_only:
                if score > best:
                    best = score
                    count = 0
                keep = score == best
            if keep:
                if count < cap:
                    moves[count, M_N] = nd
                    moves[count, M_SCORE] = score
                    for i in range(nd):
                        # depth 0 is the anchor, 1..nleft the cells before it (going left)
                        j = nleft - i if i < nleft else (0 if i == nleft else i)
                        moves[count, M_CELL + i] = st[j, _CELL]
                        moves[count, M_TILE + i] = st[j, _TILE]
                count += 1
        depth = back
        if nd < 6 and (exact_n == 0 or nd < exact_n):
            fits = hand & allowed
            cand_right = fits & cross[right, perp] & cross[right, d]
            cand_left = fits if nl >= 0 else 0
            if cand_right | cand_left:
                st[nd, _BACK] = back
                st[nd, _ALLOWED] = allowed
                st[nd, _LEN] = length
                st[nd, _XPTS] = xpts
                st[nd, _RIGHT] = right
                st[nd, _LEFT] = nl
                st[nd, _CAND_LEFT] = cand_left
                st[nd, _CAND_RIGHT] = cand_right
                st[nd, _NLEFT] = nleft
                depth = nd
    st[0, _BEST] = best
    return count


@njit(inline="always")  # one call site
def _bound(board, cross, hand, a, d, n_before, can_left, most):
    """An upper bound of the score of the placements grown from anchor ``a`` along
    ``d`` (:func:`_grow`) with at most ``most`` tiles (``can_left``: the line may also
    grow into the cells before the anchor).

    Their tiles fill ``a``, then the next empty cells along ``d`` (each must take a tile
    of the hand), and with ``can_left`` the free cells before ``a`` (which touch no
    tile). Walking the cells they could fill gives the longest line they could make (at
    most 6 tiles) and the most points of the lines they could make across it.
    """
    perp = 1 - d
    length = n_before
    placed = 0
    xpts = 0
    p = a
    while placed < most and hand & cross[p, 0] & cross[p, 1]:
        placed += 1
        length += 1
        k = cross[p, perp] >> NSHIFT
        if k:
            xpts += line_points(k + 1)
        p = step(p, d, 1)
        while board[p] >= 0:
            length += 1
            p = step(p, d, 1)
    if can_left:
        length += most - placed
    return max(xpts + line_points(min(length, 6)), 1)


@njit
def generate(board, cross, anchors, bmeta, hand, opening_len, moves, st, best_only):
    """Write every legal placement of the tile set ``hand`` (36-bit int) to ``moves``,
    or with ``best_only`` just those of the highest score (in the same order).

    On an empty board the openings are the horizontal lines starting at (0, 0) and
    running right, of exactly ``opening_len`` tiles (any length when 0).
    Returns the number of moves (see the module doc on capacity).

    With ``best_only`` the search starts from the best single tile's score (a score
    some move reaches) and skips an anchor and direction whose bound (:func:`_bound`)
    is below the best score found so far: none of its moves could be kept, so the
    moves kept and their order are those of the full search.
    """
    empty = bmeta[B_TILES] == 0
    nanchors = 0 if hand == 0 else bmeta[B_ANCHORS]
    # Tiles of the hand that share a line with another of its tiles: only they can
    # start a line of two or more; and the largest group of the hand.
    paired = 0
    biggest = 0
    rest = hand
    while rest:
        low = rest & -rest
        t = lowest_bit_index(low)
        if LX[t] & hand:
            paired |= low
        if best_only:
            biggest = max(biggest, group_of(hand, t))
        rest ^= low
    best = 0
    if best_only and not empty:
        for i in range(nanchors):
            a = anchors[i]
            w0, w1 = cross[a, 0], cross[a, 1]
            if hand & w0 & w1:
                best = max(best, line_points(1 + (w0 >> NSHIFT)) + line_points(1 + (w1 >> NSHIFT)))
    count = np.int64(0)  # not a literal 0: that would type (and compile) the search twice
    # One search per job: the opening on an empty board, else an anchor and a direction
    # (one call site, so the inlined search is compiled once).
    jobs = (1 if hand else 0) if empty else 2 * nanchors
    job = -1
    while job + 1 < jobs:
        job += 1
        if empty:
            a, d, first, left, allowed, n_before, min_n, exact_n = 0, 0, hand, -1, ALL, 0, 1, opening_len
        else:
            a = anchors[job >> 1]
            d = job & 1
            need = hand & cross[a, 0] & cross[a, 1]
            if need == 0:  # nor along a column: on to the next anchor
                job |= 1
                continue
            first = need if d == 0 else need & paired
            if first == 0:
                continue
            word = cross[a, d]
            after = step(a, d, 1)
            if board[after] < 0:  # the word counts the run before the anchor only
                allowed, n_before = word & ALL, word >> NSHIFT
                before = step(a, d, -1 - n_before)
            else:
                allowed, n_before, before = scan_run(board, a, d, -1)
            if best_only:
                # The line holds tiles of one colour or one shape that every tile next to
                # the anchor along d accepts.
                if word >> NSHIFT:
                    most = group_of(hand & word & ALL, board[step(a, d, -1)] if n_before else board[after])
                else:
                    most = biggest
                if _bound(board, cross, hand, a, d, n_before, n_before == 0, most) < best:
                    continue
            left = before if n_before == 0 and _free(board, cross, before) else -1
            # A column of two or more needs a cell above it or one below its run.
            if d == 1 and left < 0:
                below = step(a, 1, 1 + (word >> NSHIFT) - n_before)
                if hand & cross[below, 0] & cross[below, 1] == 0:
                    continue
            min_n, exact_n = 1 + d, 0
        st[0, _BEST] = best
        count = _grow(
            board, cross, hand, d, a, first, left, allowed, n_before, min_n, exact_n, moves, count, st, best_only
        )
        best = st[0, _BEST]
    keep(board, cross, anchors, bmeta, moves, st)
    return count


@njit
def generate_all(board, cross, anchors, bmeta, hand, opening_len, moves, st, best_only):
    """:func:`generate` into a buffer grown until every move fits: ``(moves, n)``."""
    n = generate(board, cross, anchors, bmeta, hand, opening_len, moves, st, best_only)
    if n > moves.shape[0]:
        moves = np.zeros((2 * n, MOVE_COLS), np.int32)
        n = generate(board, cross, anchors, bmeta, hand, opening_len, moves, st, best_only)
    return moves, n
