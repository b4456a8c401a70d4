"""Exact endgame solver: negamax alpha-beta once the bag is empty (two players).

With an empty bag both hands are known to both players, so the rest of the game is a
two-player game of perfect information. A node is (board, both hands as multisets,
side to move, passes in a row); its *value* is the margin the side to move gains from
there on under best play (its future points minus the opponent's, the going-out bonus
included). So a placement worth ``s`` points is worth ``s + 6`` when it empties the
hand (the game ends) and ``s - value(child)`` otherwise; a pass is worth
``-value(child)``, and a pass after a pass ends the game (worth 0). Values do not
depend on the path to a node, so the transposition table stores them as they are and
reuses them across transpositions reached with different scores.

Search: fail-soft negamax alpha-beta over an explicit stack of frames (numba's
on-disk cache cannot hold recursive functions). Iterative deepening on placements (a
forced pass costs no depth): iterations 1 and 2, then one search to the end of the
game (depth ``FULL_DEPTH``; a game lasts at most as many placements as there are tiles
in the hands). Deeper intermediate iterations were measured to cost more than they
save: on 12 real endgames (hands of at most 5 tiles) iterating 1, 2, ..., n took 2.2
times the nodes of 1, 2 and then the end. Moves are ordered by the table's best move
(at the root: the previous iteration's best), then by points (+6 for going out), then
in generation order. A node at the horizon of iterations 1 and 2 is estimated by the
mover's best immediate points. A value is *complete* (exact) when no horizon estimate
was used below it.

Transposition table: ``2**tt_bits`` entries in buckets of two. Keys are Zobrist hashes
of the board's (cell, tile) pairs, of each hand as a multiset (one key per (seat, tile,
copies held)), of the side to move and of "the last turn was a pass"; an entry counts
only in the generation that wrote it (each :func:`solve` starts a new one, so nothing
needs clearing). Entry: value, bound (exact, lower, upper) + complete flag, draft (the
depth searched below it) and a signature of its best move. Replacement: the first slot
of a bucket keeps the entry of highest priority (draft, +64 when complete), the entry
it displaces moves to the second slot; anything else goes to the second slot.

Results (``solve`` returns one of these kinds): ``EXACT_VALUE`` when a search
completed; ``LOWER_BOUND`` when a node or time limit stopped the search to the end
after at least one root move was searched to the end: the best of those moves and its
exact value, which the side to move can therefore guarantee; ``ESTIMATE`` otherwise:
the best move and value of iteration 2 (or 1), or before any iteration completed, the
placement of the most points (the greedy choice) with its points.

Workspace ``ws`` (:func:`new_workspace`, reusable, one per thread) and the result:
after :func:`solve`, ``ws[W_BEST]`` (int64[20]) is the chosen action and the first
``pv_len`` rows of ``ws[W_PV]`` (int64[MAX_PLY, 20]) the principal variation, each
row ``[n, points, rows x6, cols x6, tiles x6]`` in true coordinates, ``n = 0`` for a
pass.
"""

import time

import numpy as np
from numba import objmode

from ._jit import njit
from .board import B_MAXC, B_MAXR, B_MINC, B_MINR, B_TILES, GMASK, GRID_BITS, new_undo, place_cells_undoable, take_back
from .movegen import M_CELL, M_N, M_SCORE, M_TILE, MOVE_COLS, generate, new_scratch_array
from .state import G_CURRENT, G_HAND, G_OPEN_LEN, G_OPENING, G_PASSES

MAX_PLY = 32  # plies of one line: at most 12 placements, a pass before each, and one more
FULL_DEPTH = MAX_PLY  # a search this deep never reaches its horizon
MOVE_CAP = 1 << 15  # rows of the shared move stack (a node that does not fit gets its own)
INF = 1 << 20
BONUS = 6  # for placing the last tile
OUT_COLS = 20
O_N, O_POINTS, O_ROW, O_COL, O_TILE = 0, 1, 2, 8, 14

EXACT, LOWER, UPPER = 0, 1, 2  # bounds of table entries
COMPLETE = 4
ESTIMATE, LOWER_BOUND, EXACT_VALUE = 0, 1, 2  # kinds of result

# Positions in the workspace tuple.
W_KEY, W_VAL, W_FLAG, W_DRAFT, W_MOVE, W_GEN = 0, 1, 2, 3, 4, 5
W_MOVES, W_ORDER, W_UNDO, W_ST, W_BUCKET, W_COUNT, W_SIZE, W_HMASK = 6, 7, 8, 9, 10, 11, 12, 13
W_INFO, W_CLOCK, W_ROOT, W_BEST, W_PV, W_PVROWS = 14, 15, 16, 17, 18, 19
W_FRAMES, W_FHASH, W_FKEY = 20, 21, 22

# Columns of the search's frames (one row per ply, see _search).
F_P, F_PASSES, F_DEPTH, F_BASE, F_N, F_ALPHA, F_BETA, F_A, F_BEST, F_BEST_I, F_COMPLETE, F_K, F_MOVE = range(13)
# What the search loop does next.
_ENTER, _NEXT, _RETURN, _FINISH = 0, 1, 2, 3

# Fields of ws[W_INFO].
I_NODES, I_MAX_NODES, I_STOP, I_GEN, I_ROOT_SIG, I_REACHED = 0, 1, 2, 3, 4, 5

_SALT_CELL = np.uint64(0x1000000000)
_SALT_HAND = np.uint64(0x2000000000)
_Z_SIDE = np.uint64(0x8D1F6A5B39C2E407)
_Z_PASS = np.uint64(0x5E3C0B9A7D214F69)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


@njit(inline="always")
def _mix(x):
    """A bijective 64-bit mixer (the splitmix64 finaliser)."""
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


@njit(inline="always")
def _z_cell(cell, tile):
    return _mix(np.uint64((cell << 6) | tile) + _SALT_CELL)


@njit(inline="always")
def _z_hand(p, tile, copies):
    """Key of seat ``p`` holding ``copies`` (1..3) of ``tile``."""
    return _mix(np.uint64(((p * 36 + tile) << 2) | copies) + _SALT_HAND)


@njit(nogil=False)  # object mode takes the GIL anyway; saying so keeps numba quiet
def _now():
    """Seconds on a monotonic clock (object mode: about 0.4 us a call)."""
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


@njit
def new_workspace(tt_bits=20):
    """Everything :func:`solve` needs, preallocated: a table of ``2**tt_bits`` entries
    (28 bytes each), the move stack, one undo log per ply and the result arrays."""
    size = 1 << tt_bits
    u = new_undo()
    undo = (
        np.zeros((MAX_PLY,) + u[0].shape, u[0].dtype),
        np.zeros((MAX_PLY,) + u[1].shape, u[1].dtype),
        np.zeros((MAX_PLY,) + u[2].shape, u[2].dtype),
        np.zeros((MAX_PLY,) + u[3].shape, u[3].dtype),
    )
    return (
        np.zeros(size, np.uint64),  # W_KEY
        np.zeros(size, np.int32),  # W_VAL
        np.zeros(size, np.int8),  # W_FLAG: bound | COMPLETE
        np.zeros(size, np.int8),  # W_DRAFT
        np.zeros(size, np.int64),  # W_MOVE: signature of the best move
        np.zeros(size, np.int32),  # W_GEN
        np.zeros((MOVE_CAP, MOVE_COLS), np.int32),  # W_MOVES: the move stack
        np.zeros(MOVE_CAP, np.int32),  # W_ORDER: the order of each node's moves
        undo,  # W_UNDO: one undo log per ply
        new_scratch_array(),  # W_ST: the move generator's scratch
        np.zeros(129, np.int64),  # W_BUCKET: counting-sort scratch
        np.zeros((2, 36), np.int64),  # W_COUNT: copies of each tile in each hand
        np.zeros(2, np.int64),  # W_SIZE: tiles in each hand
        np.zeros(2, np.int64),  # W_HMASK: each hand as a 36-bit set
        np.zeros(8, np.int64),  # W_INFO
        np.zeros(1, np.float64),  # W_CLOCK: the deadline (0: none)
        np.zeros(MOVE_COLS, np.int32),  # W_ROOT: the root's best move in this iteration
        np.zeros(OUT_COLS, np.int64),  # W_BEST
        np.zeros((MAX_PLY, OUT_COLS), np.int64),  # W_PV
        np.zeros((MAX_PLY, MOVE_COLS), np.int32),  # W_PVROWS: the PV's moves as generated
        np.zeros((MAX_PLY + 1, 13), np.int64),  # W_FRAMES: the search's frames
        np.zeros(MAX_PLY + 1, np.uint64),  # W_FHASH: each frame's hash (board and hands)
        np.zeros(MAX_PLY + 1, np.uint64),  # W_FKEY: each frame's table key
    )


@njit(inline="always")
def _undo_at(ws, ply):
    u = ws[W_UNDO]
    return (u[0][ply], u[1][ply], u[2][ply], u[3][ply])


@njit
def _signature(mv, i):
    """A nonzero int64 naming placement ``i`` of ``mv`` (its cells and tiles in order)."""
    s = np.int64(mv[i, M_N])
    for j in range(mv[i, M_N]):
        s = s * 1000003 + (np.int64(mv[i, M_CELL + j]) << 6) + mv[i, M_TILE + j]
    return s | 1


@njit(inline="always")
def _key(h, p, passes):
    k = h
    if p:
        k ^= _Z_SIDE
    if passes:
        k ^= _Z_PASS
    return k


@njit(inline="always")
def _bucket(ws, key):
    return np.int64(key & np.uint64(ws[W_KEY].shape[0] - 1)) & ~1


@njit
def _probe(ws, key):
    """The slot holding ``key`` in this generation, or -1."""
    keys, gens = ws[W_KEY], ws[W_GEN]
    gen = ws[W_INFO][I_GEN]
    i = _bucket(ws, key)
    for j in range(i, i + 2):
        if keys[j] == key and gens[j] == gen:
            return j
    return -1


@njit
def _priority(ws, j):
    if ws[W_GEN][j] != ws[W_INFO][I_GEN]:
        return -1
    return ws[W_DRAFT][j] + (64 if ws[W_FLAG][j] & COMPLETE else 0)


@njit
def _write(ws, j, key, value, flag, draft, move):
    ws[W_KEY][j] = key
    ws[W_VAL][j] = value
    ws[W_FLAG][j] = flag
    ws[W_DRAFT][j] = draft
    ws[W_MOVE][j] = move
    ws[W_GEN][j] = ws[W_INFO][I_GEN]


@njit
def _store(ws, key, value, flag, draft, move):
    i = _bucket(ws, key)
    new = draft + (64 if flag & COMPLETE else 0)
    j = _probe(ws, key)
    if j >= 0:
        if new >= _priority(ws, j):
            _write(ws, j, key, value, flag, draft, move)
    elif new >= _priority(ws, i):
        if _priority(ws, i) >= 0:  # the displaced entry moves to the second slot
            _write(ws, i + 1, ws[W_KEY][i], ws[W_VAL][i], ws[W_FLAG][i], ws[W_DRAFT][i], ws[W_MOVE][i])
        _write(ws, i, key, value, flag, draft, move)
    else:
        _write(ws, i + 1, key, value, flag, draft, move)


@njit
def _generate(ws, stack, order, base, board, cross, anchors, bmeta, p, olen, best_only):
    """Seat ``p``'s placements (with ``best_only`` those of the most points) written to
    the move stack from row ``base``: ``(stack, order, n)``, the stack and its order
    array grown (a copy) when they do not fit."""
    ol = olen if bmeta[B_TILES] == 0 else 0
    hand = ws[W_HMASK][p]
    n = generate(board, cross, anchors, bmeta, hand, ol, stack[base:], ws[W_ST], best_only)
    if base + n > stack.shape[0]:
        bigger = np.zeros((2 * (base + n), MOVE_COLS), np.int32)
        bigger[:base] = stack[:base]
        stack = bigger
        longer = np.zeros(2 * (base + n), np.int32)
        longer[:base] = order[:base]
        order = longer
        n = generate(board, cross, anchors, bmeta, hand, ol, stack[base:], ws[W_ST], best_only)
    return stack, order, n


@njit(inline="always")
def _sort_key(mv, i, hand_size, top):
    """0 for the most points (+6 for going out), ``top`` for the fewest."""
    return top - min(mv[i, M_SCORE] + (BONUS if mv[i, M_N] == hand_size else 0), top)


@njit
def _sort(ws, mv, order, n, hand_size, first):
    """Order the moves: the one whose signature is ``first`` (if any), then by points
    (+6 for going out) from high to low, then in generation order (counting sort)."""
    bucket = ws[W_BUCKET]
    bucket[:] = 0
    top = bucket.shape[0] - 2
    for i in range(n):
        bucket[_sort_key(mv, i, hand_size, top) + 1] += 1
    for k in range(top + 1):
        bucket[k + 1] += bucket[k]
    for i in range(n):
        k = _sort_key(mv, i, hand_size, top)
        order[bucket[k]] = i
        bucket[k] += 1
    if first != 0:
        for k in range(n):
            if _signature(mv, order[k]) == first:
                i = order[k]
                for j in range(k, 0, -1):
                    order[j] = order[j - 1]
                order[0] = i
                break


@njit
def _play(ws, board, cross, anchors, bmeta, mv, i, p, ply, h):
    """Put placement ``i`` of ``mv`` down for seat ``p``; returns the new hash."""
    n = mv[i, M_N]
    cells = mv[i, M_CELL : M_CELL + n]
    tiles = mv[i, M_TILE : M_TILE + n]
    place_cells_undoable(board, cross, anchors, bmeta, cells, tiles, n, _undo_at(ws, ply))
    count, size, hmask = ws[W_COUNT], ws[W_SIZE], ws[W_HMASK]
    for j in range(n):
        t = tiles[j]
        c = count[p, t]
        h ^= _z_cell(cells[j], t) ^ _z_hand(p, t, c)
        if c > 1:
            h ^= _z_hand(p, t, c - 1)
        else:
            hmask[p] &= ~(np.int64(1) << t)
        count[p, t] = c - 1
    size[p] -= n
    return h


@njit
def _take_back(ws, board, cross, anchors, bmeta, mv, i, p, ply):
    """Undo :func:`_play` of the same move at the same ply."""
    n = mv[i, M_N]
    take_back(board, cross, anchors, bmeta, mv[i, M_CELL : M_CELL + n], n, _undo_at(ws, ply))
    count, size, hmask = ws[W_COUNT], ws[W_SIZE], ws[W_HMASK]
    for j in range(n):
        t = mv[i, M_TILE + j]
        count[p, t] += 1
        hmask[p] |= np.int64(1) << t
    size[p] += n


@njit
def _tick(ws):
    """Count a node; True when a limit is reached (then ``ws[W_INFO][I_STOP]`` is set).
    The clock is read every 256 nodes."""
    info = ws[W_INFO]
    info[I_NODES] += 1
    if info[I_MAX_NODES] > 0 and info[I_NODES] > info[I_MAX_NODES]:
        info[I_STOP] = 1
    elif (info[I_NODES] & 255) == 0 and ws[W_CLOCK][0] > 0 and _now() >= ws[W_CLOCK][0]:
        info[I_STOP] = 1
    return info[I_STOP] != 0


@njit
def _search(ws, board, cross, anchors, bmeta, p0, passes0, h0, depth0, olen, alpha0, beta0):
    """Negamax value of the root (seat ``p0`` to move after ``passes0`` passes in a row,
    hash ``h0``) searched ``depth0`` placements deep: ``(value, complete)``.

    Fail-soft alpha-beta written as a loop over an explicit stack of frames, one per
    ply (numba's on-disk cache cannot hold recursive functions). After a stop the
    result means nothing, nothing more is stored, and the board is restored.
    """
    stack, order = ws[W_MOVES], ws[W_ORDER]
    fr, fh, fkey = ws[W_FRAMES], ws[W_FHASH], ws[W_FKEY]
    info = ws[W_INFO]
    ply = 0
    fr[0, F_P] = p0
    fr[0, F_PASSES] = passes0
    fr[0, F_DEPTH] = depth0
    fr[0, F_BASE] = 0
    fr[0, F_ALPHA] = alpha0
    fr[0, F_BETA] = beta0
    fh[0] = h0
    mode = _ENTER
    v = np.int64(0)  # the value just returned by a child (RETURN mode)
    c = True
    while True:
        if mode == _ENTER:
            p, passes, depth, base = fr[ply, F_P], fr[ply, F_PASSES], fr[ply, F_DEPTH], fr[ply, F_BASE]
            alpha, beta = fr[ply, F_ALPHA], fr[ply, F_BETA]
            fr[ply, F_MOVE] = -1  # no move of this node on the board yet
            info[I_REACHED] = max(info[I_REACHED], depth0 - depth)
            if _tick(ws):
                break
            key = _key(fh[ply], p, passes)
            fkey[ply] = key
            slot = _probe(ws, key)
            hint = 0
            mode = _RETURN
            if slot >= 0:
                hint = ws[W_MOVE][slot]
                flag = ws[W_FLAG][slot]
                complete = (flag & COMPLETE) != 0
                if ply > 0 and (complete or ws[W_DRAFT][slot] >= depth):
                    tv = np.int64(ws[W_VAL][slot])
                    kind = flag & 3
                    if kind == EXACT or (kind == LOWER and tv >= beta) or (kind == UPPER and tv <= alpha):
                        v, c = tv, complete
                        continue
            if ply == 0 and hint == 0:
                hint = info[I_ROOT_SIG]
            stack, order, n = _generate(ws, stack, order, base, board, cross, anchors, bmeta, p, olen, depth <= 0)
            fr[ply, F_N] = n
            if n == 0:
                if passes > 0:  # both passed: the game is over
                    v, c = np.int64(0), True
                    continue
                if ply == 0:
                    ws[W_ROOT][:] = 0
                # A forced pass (no depth used): the child's value, negated on return.
                fr[ply + 1, F_P] = 1 - p
                fr[ply + 1, F_PASSES] = 1
                fr[ply + 1, F_DEPTH] = depth
                fr[ply + 1, F_BASE] = base
                fr[ply + 1, F_ALPHA] = -beta
                fr[ply + 1, F_BETA] = -alpha
                fh[ply + 1] = fh[ply]
                ply += 1
                mode = _ENTER
                continue
            if depth <= 0:  # the horizon: the best points now (only the best were generated)
                v, c = np.int64(stack[base, M_SCORE]), False
                continue
            _sort(ws, stack[base : base + n], order[base : base + n], n, ws[W_SIZE][p], hint)
            fr[ply, F_K] = 0
            fr[ply, F_BEST] = -INF
            fr[ply, F_BEST_I] = order[base]
            fr[ply, F_COMPLETE] = 1
            fr[ply, F_A] = alpha
            mode = _NEXT
        elif mode == _RETURN:
            if ply == 0:
                return v, c
            ply -= 1
            if fr[ply, F_N] == 0:  # a pass node
                v = -v
                continue
            p, base = fr[ply, F_P], fr[ply, F_BASE]
            i = order[base + fr[ply, F_K]]
            _take_back(ws, board, cross, anchors, bmeta, stack, base + i, p, ply)
            fr[ply, F_MOVE] = -1
            v = stack[base + i, M_SCORE] - v
            mode = _NEXT
            done = _record(ws, stack, fr, ply, base + i, v, c)
            fr[ply, F_K] += 1
            if done:
                mode = _FINISH
        elif mode == _NEXT:
            p, base, n = fr[ply, F_P], fr[ply, F_BASE], fr[ply, F_N]
            size = ws[W_SIZE][p]
            mode = _FINISH
            while fr[ply, F_K] < n:
                i = order[base + fr[ply, F_K]]
                s = np.int64(stack[base + i, M_SCORE])
                if stack[base + i, M_N] == size:  # goes out: the game ends
                    done = _record(ws, stack, fr, ply, base + i, s + BONUS, True)
                    fr[ply, F_K] += 1
                    if done:
                        break
                    continue
                h = _play(ws, board, cross, anchors, bmeta, stack, base + i, p, ply, fh[ply])
                fr[ply, F_MOVE] = i
                fr[ply + 1, F_P] = 1 - p
                fr[ply + 1, F_PASSES] = 0
                fr[ply + 1, F_DEPTH] = fr[ply, F_DEPTH] - 1
                fr[ply + 1, F_BASE] = base + n
                fr[ply + 1, F_ALPHA] = s - fr[ply, F_BETA]
                fr[ply + 1, F_BETA] = s - fr[ply, F_A]
                fh[ply + 1] = h
                ply += 1
                mode = _ENTER
                break
        else:  # _FINISH: every move tried or a cut-off; store and return the value
            best = fr[ply, F_BEST]
            flag = UPPER if best <= fr[ply, F_ALPHA] else (LOWER if best >= fr[ply, F_BETA] else EXACT)
            complete = fr[ply, F_COMPLETE] != 0
            sig = _signature(stack, fr[ply, F_BASE] + fr[ply, F_BEST_I])
            _store(ws, fkey[ply], best, flag | (COMPLETE if complete else 0), fr[ply, F_DEPTH], sig)
            v, c = best, complete
            mode = _RETURN
    # Stopped: take back the moves still on the board, deepest first.
    for q in range(ply - 1, -1, -1):
        if fr[q, F_N] > 0 and fr[q, F_MOVE] >= 0:
            _take_back(ws, board, cross, anchors, bmeta, stack, fr[q, F_BASE] + fr[q, F_MOVE], fr[q, F_P], q)
    return np.int64(0), False


@njit
def _record(ws, stack, fr, ply, row, v, c):
    """Book value ``v`` (complete: ``c``) of the move in ``stack[row]`` at frame ``ply``;
    True on a beta cut-off."""
    if not c:
        fr[ply, F_COMPLETE] = 0
    if v > fr[ply, F_BEST]:
        fr[ply, F_BEST] = v
        fr[ply, F_BEST_I] = row - fr[ply, F_BASE]
        if ply == 0:
            ws[W_ROOT][:] = stack[row]
        if v > fr[ply, F_A]:
            fr[ply, F_A] = v
            if v >= fr[ply, F_BETA]:
                return True
    return False


@njit
def _true(w, lo):
    """The true coordinate of wrapped ``w`` (the board's cell layout: a legal cell lies
    within 8 below and 120 above the bounding box's low edge ``lo``)."""
    base = lo - 8
    return base + ((w - base) & GMASK)


@njit
def _output(bmeta, row, out):
    """Write a move row (wrapped cells, as generated; n = 0 for a pass) as an output row."""
    out[:] = 0
    n = row[M_N]
    out[O_N] = n
    out[O_POINTS] = row[M_SCORE]
    for j in range(n):
        cell = np.int64(row[M_CELL + j])
        out[O_ROW + j] = _true(cell >> GRID_BITS, bmeta[B_MINR])
        out[O_COL + j] = _true(cell & GMASK, bmeta[B_MINC])
        out[O_TILE + j] = row[M_TILE + j]


@njit
def _hash(board, bmeta, count):
    """The Zobrist hash of the board's tiles and both hands."""
    h = np.uint64(0)
    if bmeta[B_TILES] > 0:
        for r in range(bmeta[B_MINR], bmeta[B_MAXR] + 1):
            for c in range(bmeta[B_MINC], bmeta[B_MAXC] + 1):
                cell = ((r & GMASK) << GRID_BITS) | (c & GMASK)
                if board[cell] >= 0:
                    h ^= _z_cell(cell, board[cell])
    for p in range(2):
        for t in range(36):
            if count[p, t] > 0:
                h ^= _z_hand(p, t, count[p, t])
    return h


@njit
def _child_bound(ws, stack, i, p, h):
    """The table's complete upper bound on the value of the position after seat ``p``
    plays ``stack[i]`` from the position of hash ``h``, or INF if it holds none."""
    count = ws[W_COUNT]
    for j in range(stack[i, M_N]):
        t = stack[i, M_TILE + j]
        c = count[p, t]
        h ^= _z_cell(stack[i, M_CELL + j], t) ^ _z_hand(p, t, c)
        if c > 1:
            h ^= _z_hand(p, t, c - 1)
    slot = _probe(ws, _key(h, 1 - p, 0))
    if slot >= 0 and (ws[W_FLAG][slot] & COMPLETE) != 0 and (ws[W_FLAG][slot] & 3) != LOWER:
        return np.int64(ws[W_VAL][slot])
    return INF


@njit
def _principal_variation(ws, board, cross, anchors, bmeta, p, passes, h, olen, value):
    """Write to ``ws[W_PV]`` the chosen move and after it, move by move, a move the
    table proves to keep the exact ``value`` (as far as it holds the proofs); returns
    the length. Leaves the board and hands as they were."""
    pv, rows = ws[W_PV], ws[W_PVROWS]
    played = np.full(MAX_PLY, -1, np.int64)  # the seat of each placement put down
    k = 0
    while k < MAX_PLY:
        mv, _, n = _generate(ws, ws[W_MOVES], ws[W_ORDER], 0, board, cross, anchors, bmeta, p, olen, False)
        if n == 0:  # a pass (the second in a row ends the game)
            rows[k, :] = 0
            _output(bmeta, rows[k], pv[k])
            k += 1
            if passes > 0:
                break
            p, passes, value = 1 - p, 1, -value
            continue
        size = ws[W_SIZE][p]
        found = -1
        for i in range(n):
            if k == 0:  # the move chosen
                keeps = _signature(mv, i) == ws[W_INFO][I_ROOT_SIG]
            elif mv[i, M_N] == size:
                keeps = mv[i, M_SCORE] + BONUS == value
            else:  # worth at least the value, so exactly it
                keeps = mv[i, M_SCORE] - _child_bound(ws, mv, i, p, h) >= value
            if keeps:
                found = i
                break
        if found < 0:
            break
        rows[k, :] = mv[found]
        _output(bmeta, rows[k], pv[k])
        if mv[found, M_N] == size:  # goes out: the game ends
            k += 1
            break
        h = _play(ws, board, cross, anchors, bmeta, rows, k, p, k, h)
        played[k] = p
        value = rows[k, M_SCORE] - value
        k += 1
        p, passes = 1 - p, 0
    for j in range(k - 1, -1, -1):
        if played[j] >= 0:
            _take_back(ws, board, cross, anchors, bmeta, rows, j, played[j], j)
    return k


@njit
def _accept(ws, bmeta):
    """Take the root move of the search just done as the answer (so far)."""
    _output(bmeta, ws[W_ROOT], ws[W_BEST])
    ws[W_INFO][I_ROOT_SIG] = _signature(ws[W_ROOT].reshape((1, MOVE_COLS)), 0) if ws[W_ROOT][M_N] > 0 else 0


@njit
def solve(ws, board, cross, anchors, bmeta, hands, gmeta, max_nodes, time_ms):
    """Solve the two-player endgame of the position (the board arrays, ``hands``
    int8[6, 6] and ``gmeta`` of :mod:`.state`; the bag must be empty, the game running).

    ``max_nodes`` (0: none) and ``time_ms`` (0: none) limit the search. The board
    arrays are changed during the search and restored exactly.

    Returns ``(value, kind, depth, nodes, pv_len)``: the margin the side to move gains
    from here on (its future points minus the opponent's, +6 for going out included;
    add the current score difference for the final margin); its kind (``EXACT_VALUE``,
    ``LOWER_BOUND`` or ``ESTIMATE``, see the module doc); the longest line searched, in
    placements; the nodes searched; and the length of the principal variation. The
    chosen action is in ``ws[W_BEST]`` and the line in ``ws[W_PV]``.
    """
    info = ws[W_INFO]
    count, size, hmask = ws[W_COUNT], ws[W_SIZE], ws[W_HMASK]
    p = gmeta[G_CURRENT]
    passes = gmeta[G_PASSES]
    olen = gmeta[G_OPEN_LEN] if gmeta[G_OPENING] else 0
    count[:] = 0
    hmask[:] = 0
    for q in range(2):
        size[q] = gmeta[G_HAND + q]
        for j in range(size[q]):
            count[q, hands[q, j]] += 1
            hmask[q] |= np.int64(1) << hands[q, j]
    h = _hash(board, bmeta, count)
    info[I_NODES] = 0
    info[I_MAX_NODES] = max_nodes
    info[I_STOP] = 0
    info[I_ROOT_SIG] = 0
    info[I_REACHED] = 0
    info[I_GEN] += 1  # forgets the table in O(1)
    if info[I_GEN] >= (1 << 30):
        info[I_GEN] = 1
        ws[W_GEN][:] = 0
    ws[W_CLOCK][0] = _now() + time_ms / 1000.0 if time_ms > 0 else 0.0
    # Until a search completes: the greedy choice, its points as the estimate.
    mv, order, n = _generate(ws, ws[W_MOVES], ws[W_ORDER], 0, board, cross, anchors, bmeta, p, olen, False)
    value = np.int64(0)
    ws[W_ROOT][:] = 0
    if n > 0:
        _sort(ws, mv, order, n, size[p], 0)
        ws[W_ROOT][:] = mv[order[0]]
        value = np.int64(mv[order[0], M_SCORE]) + (BONUS if mv[order[0], M_N] == size[p] else 0)
    _output(bmeta, ws[W_ROOT], ws[W_BEST])
    kind = ESTIMATE
    depth = 0
    for d in (1, 2):
        v, complete = _search(ws, board, cross, anchors, bmeta, p, passes, h, d, olen, -INF, INF)
        if info[I_STOP]:
            break
        _accept(ws, bmeta)
        value, depth = v, info[I_REACHED]
        if complete:
            kind = EXACT_VALUE
            break
    if kind != EXACT_VALUE and not info[I_STOP]:
        # MTD(f): null-window searches to the end, from the estimate, until the lowest
        # upper bound meets the highest lower bound. A search that fails high proves
        # its root move worth at least its value.
        lo, hi, guess = -INF, INF, value
        while lo < hi:
            b = max(guess, lo + 1)
            v, _ = _search(ws, board, cross, anchors, bmeta, p, passes, h, FULL_DEPTH, olen, b - 1, b)
            if info[I_STOP]:
                break
            if v < b:
                hi = v
            else:
                lo = v
                _accept(ws, bmeta)
                value, depth, kind = v, info[I_REACHED], LOWER_BOUND
            guess = v
        if lo == hi:
            kind = EXACT_VALUE
    if kind == EXACT_VALUE:
        pv_len = _principal_variation(ws, board, cross, anchors, bmeta, p, passes, h, olen, value)
    else:
        ws[W_PV][0] = ws[W_BEST]
        pv_len = 1
    return value, kind, depth, info[I_NODES], pv_len
