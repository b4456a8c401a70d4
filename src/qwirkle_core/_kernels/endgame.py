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
on-disk cache cannot hold recursive functions). Iterations 1 and 2 (in placements; a
forced pass costs no depth) give a first answer and an estimate; then MTD(f): null-
window searches to the end of the game (depth ``FULL_DEPTH``: a game lasts at most as
many placements as there are tiles in the hands) from that estimate until the lowest
upper bound meets the highest lower bound (MTD(f) took 30% fewer nodes than one full-
window search, deeper intermediate iterations more than they saved: docs/agents.md).
Moves are ordered by the table's best move (at the root: the best move so far), then
by points (+6 for going out), then in generation order. A node at the horizon of
iterations 1 and 2 is estimated by the mover's best immediate points. A value is
*complete* (exact) when no horizon estimate was used below it.

Transposition table: ``2**tt_bits`` entries in buckets of two, each int64[3]: the key,
the data (value in bits 0-31, bound in 32-33: exact, lower or upper, complete flag in
34, draft -- the depth searched below it -- in 40-47, generation in 48-62) and a
signature of the best move. Keys are Zobrist hashes of the board's (cell, tile) pairs,
of each hand as a multiset (one key per (seat, tile, copies held)), of the side to move
and of "the last turn was a pass". An entry counts only in the generation that wrote
it: each :func:`solve` starts a new one, so results never depend on earlier calls and
nothing needs clearing. Replacement: the first slot of a bucket keeps the entry of
highest priority (draft, +64 when complete), the entry it displaces moves to the
second slot; anything else goes to the second slot.

Results (``solve`` returns one of these kinds): ``EXACT_VALUE`` when the search
finished; ``LOWER_BOUND`` when a node or time limit stopped MTD(f) after some null-
window search failed high: its root move is proven to be worth at least its value, so
the side to move can guarantee it; ``ESTIMATE`` otherwise: the best move and value of
iteration 2 (or 1), or before any iteration completed, the placement of the most
points (the greedy choice) with its points.

Workspace ``ws`` (:func:`new_workspace`, reusable, one per thread) and the result:
after :func:`solve`, ``ws[W_BEST]`` (int64[20]) is the chosen action and the first
``pv_len`` rows of ``ws[W_PV]`` (int64[MAX_PLY, 20]) the principal variation, each
row ``[n, points, rows x6, cols x6, tiles x6]`` in true coordinates, ``n = 0`` for a
pass; ``ws[W_BEST_ROW]`` is the chosen action as the move generator wrote it (a move
row of :mod:`.movegen`: wrapped cells, ready for an action word).

Speed: numba counts references to arrays atomically, and that took over half the time
of a first version, so the search unpacks the workspace once and its helpers take
plain arrays and are inlined; the search loop (:func:`_run`) is compiled without
numba's runtime, and a node whose moves overflow the move stack hands the growth back
to :func:`_search`.
"""

import time

import numpy as np
from numba import objmode

from ._jit import copy_into, njit
from .board import (
    B_MAXC,
    B_MAXR,
    B_MINC,
    B_MINR,
    B_TILES,
    GMASK,
    GRID_BITS,
    new_undo_stack,
    place_in_slot,
    take_back_slot,
)
from .movegen import M_CELL, M_N, M_SCORE, M_TILE, MOVE_COLS, generate, new_scratch_array
from .state import G_CURRENT, G_HAND, G_OPEN_LEN, G_OPENING, G_PASSES

MAX_PLY = 32  # plies of one line: at most 12 placements, a pass before each, and one more
FULL_DEPTH = MAX_PLY  # a search this deep never reaches its horizon
MOVE_CAP = 1 << 15  # rows of the move stack (a search that needs more grows a copy)
INF = 1 << 20
BONUS = 6  # for placing the last tile
OUT_COLS = 20
O_N, O_POINTS, O_ROW, O_COL, O_TILE = 0, 1, 2, 8, 14

ESTIMATE, LOWER_BOUND, EXACT_VALUE = 0, 1, 2  # kinds of result

# Table entries.
T_KEY, T_DATA, T_MOVE = 0, 1, 2
EXACT, LOWER, UPPER = 0, 1, 2  # bounds
COMPLETE = 4
GEN_LIMIT = 1 << 15

# Positions in the workspace tuple.
W_TT, W_MOVES, W_ORDER, W_UNDO, W_ST, W_BUCKET, W_HANDS = 0, 1, 2, 3, 4, 5, 6
W_INFO, W_CLOCK, W_ROOT, W_BEST, W_PV, W_PVROWS, W_FRAMES, W_BEST_ROW = 7, 8, 9, 10, 11, 12, 13, 14
# Columns of ws[W_HANDS] (one row per seat) after the copies of each tile (0..35).
H_SIZE, H_MASK = 36, 37
# Fields of ws[W_INFO].
I_NODES, I_MAX_NODES, I_STOP, I_GEN, I_ROOT_SIG, I_REACHED, I_PLY = 0, 1, 2, 3, 4, 5, 6
# Columns of the search's frames (one row per ply, see _search).
F_P, F_PASSES, F_DEPTH, F_BASE, F_N, F_ALPHA, F_BETA, F_A, F_BEST, F_BEST_I = range(10)
F_COMPLETE, F_K, F_MOVE, F_HASH, F_KEY = range(10, 15)
# What the search loop does next.
_ENTER, _NEXT, _RETURN, _FINISH = 0, 1, 2, 3

_SALT_CELL = np.uint64(0x1000000000)
_SALT_HAND = np.uint64(0x2000000000)
_Z_SIDE = np.int64(0x0D1F6A5B39C2E407)
_Z_PASS = np.int64(0x5E3C0B9A7D214F69)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


@njit(inline="always")
def _mix(x):
    """A bijective 64-bit mixer (the splitmix64 finaliser), as int64 bits."""
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return np.int64(x ^ (x >> _S31))


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
def new_workspace(tt_bits=20, move_cap=MOVE_CAP):
    """Everything :func:`solve` needs, preallocated: a table of ``2**tt_bits`` entries
    (24 bytes each), a move stack of ``move_cap`` rows, one undo log per ply and the
    result arrays."""
    undo = new_undo_stack(MAX_PLY)
    return (
        np.zeros((1 << tt_bits, 3), np.int64),  # W_TT
        np.zeros((move_cap, MOVE_COLS), np.int32),  # W_MOVES: the move stack
        np.zeros(move_cap, np.int32),  # W_ORDER: the order of each node's moves
        undo,  # W_UNDO: one undo log per ply
        new_scratch_array(),  # W_ST: the move generator's scratch
        np.zeros(129, np.int64),  # W_BUCKET: counting-sort scratch
        np.zeros((2, 38), np.int64),  # W_HANDS: copies of each tile, size, 36-bit set
        np.zeros(8, np.int64),  # W_INFO
        np.zeros(1, np.float64),  # W_CLOCK: the deadline (0: none)
        np.zeros(MOVE_COLS, np.int32),  # W_ROOT: the root's best move in this search
        np.zeros(OUT_COLS, np.int64),  # W_BEST
        np.zeros((MAX_PLY, OUT_COLS), np.int64),  # W_PV
        np.zeros((MAX_PLY, MOVE_COLS), np.int32),  # W_PVROWS: the PV's moves as generated
        np.zeros((MAX_PLY + 1, 15), np.int64),  # W_FRAMES: the search's frames
        np.zeros(MOVE_COLS, np.int32),  # W_BEST_ROW: the chosen action as generated
    )


@njit(inline="always")
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
def _after(hands, p, stack, row, h):
    """The hash after seat ``p`` (hands ``hands``) plays ``stack[row]`` from hash ``h``."""
    for j in range(stack[row, M_N]):
        t = stack[row, M_TILE + j]
        c = hands[p, t]
        h ^= _z_cell(stack[row, M_CELL + j], t) ^ _z_hand(p, t, c)
        if c > 1:
            h ^= _z_hand(p, t, c - 1)
    return h


@njit(inline="always")
def _probe(tt, key, gen):
    """The slot holding ``key`` in generation ``gen``, or -1."""
    i = key & (tt.shape[0] - 1) & ~1
    for j in range(i, i + 2):
        if tt[j, T_KEY] == key and (tt[j, T_DATA] >> 48) == gen:
            return j
    return -1


@njit(inline="always")
def _value(data):
    return (data << 32) >> 32


@njit(inline="always")
def _flag(data):
    return (data >> 32) & 7


@njit(inline="always")
def _draft(data):
    return (data >> 40) & 255


@njit(inline="always")
def _priority(tt, j, gen):
    data = tt[j, T_DATA]
    if (data >> 48) != gen:
        return -1
    return _draft(data) + (64 if _flag(data) & COMPLETE else 0)


@njit(inline="always")
def _store(tt, gen, key, value, flag, draft, move):
    data = (value & 0xFFFFFFFF) | (flag << 32) | (draft << 40) | (gen << 48)
    i = key & (tt.shape[0] - 1) & ~1
    new = draft + (64 if flag & COMPLETE else 0)
    j = _probe(tt, key, gen)
    if j < 0:
        j = i + 1
        if new >= _priority(tt, i, gen):
            for f in range(3):  # the displaced entry moves to the second slot
                tt[i + 1, f] = tt[i, f]
            j = i
    elif new < _priority(tt, j, gen):
        return
    tt[j, T_KEY] = key
    tt[j, T_DATA] = data
    tt[j, T_MOVE] = move


@njit(inline="always")
def _generate(stack, order, base, board, cross, anchors, bmeta, hand, olen, st, best_only):
    """The placements of the 36-bit ``hand`` (with ``best_only`` those of the most
    points) written to the move stack from row ``base``: ``(stack, order, n)``, the stack
    and its order array grown (copies) when they do not fit."""
    ol = olen if bmeta[B_TILES] == 0 else 0
    n = generate(board, cross, anchors, bmeta, hand, ol, stack[base:], st, best_only)
    if base + n > stack.shape[0]:
        stack, order = _grown(stack, order, base + n)
        n = generate(board, cross, anchors, bmeta, hand, ol, stack[base:], st, best_only)
    return stack, order, n


@njit
def _grown(stack, order, rows):
    """Copies of the move stack and its order array with room for twice ``rows`` rows."""
    bigger = np.zeros((2 * rows, MOVE_COLS), np.int32)
    longer = np.zeros(2 * rows, np.int32)
    # Element by element: a slice assignment compiles numba's shape-mismatch error,
    # whose formatted message took 3 s of the search agent's cold start.
    for i in range(stack.shape[0]):
        for j in range(MOVE_COLS):
            bigger[i, j] = stack[i, j]
    for i in range(order.shape[0]):
        longer[i] = order[i]
    return bigger, longer


@njit(inline="always")
def _sort_key(stack, row, hand_size, top):
    """0 for the most points (+6 for going out), ``top`` for the fewest."""
    return top - min(stack[row, M_SCORE] + (BONUS if stack[row, M_N] == hand_size else 0), top)


@njit(inline="always")
def _sort(stack, order, base, n, hand_size, first, bucket):
    """Order the moves ``stack[base:base + n]`` (indices from ``base`` into ``order``):
    the one whose signature is ``first`` (if any), then by points (+6 for going out)
    from high to low, then in generation order (a counting sort)."""
    for k in range(bucket.shape[0]):
        bucket[k] = 0
    top = bucket.shape[0] - 2
    for i in range(n):
        bucket[_sort_key(stack, base + i, hand_size, top) + 1] += 1
    for k in range(top + 1):
        bucket[k + 1] += bucket[k]
    for i in range(n):
        k = _sort_key(stack, base + i, hand_size, top)
        order[base + bucket[k]] = i
        bucket[k] += 1
    if first != 0:
        for k in range(n):
            i = order[base + k]
            if _signature(stack, base + i) == first:
                for j in range(k, 0, -1):
                    order[base + j] = order[base + j - 1]
                order[base] = i
                break


@njit(inline="always")
def _play(board, cross, anchors, bmeta, undo, ply, stack, row, hands, p, h):
    """Put ``stack[row]`` down for seat ``p``, logging to ``undo[.][ply]``; returns the
    new hash."""
    n = stack[row, M_N]
    h = _after(hands, p, stack, row, h)
    place_in_slot(
        board,
        cross,
        anchors,
        bmeta,
        stack[row, M_CELL : M_CELL + n],
        stack[row, M_TILE : M_TILE + n],
        n,
        undo[0],
        undo[1],
        undo[2],
        undo[3],
        ply,
    )
    for j in range(n):
        t = stack[row, M_TILE + j]
        hands[p, t] -= 1
        if hands[p, t] == 0:
            hands[p, H_MASK] &= ~(np.int64(1) << t)
    hands[p, H_SIZE] -= n
    return h


@njit(inline="always")
def _take_back(board, cross, anchors, bmeta, undo, ply, stack, row, hands, p):
    """Undo :func:`_play` of the same move at the same ply."""
    n = stack[row, M_N]
    take_back_slot(
        board, cross, anchors, bmeta, stack[row, M_CELL : M_CELL + n], n, undo[0], undo[1], undo[2], undo[3], ply
    )
    for j in range(n):
        t = stack[row, M_TILE + j]
        hands[p, t] += 1
        hands[p, H_MASK] |= np.int64(1) << t
    hands[p, H_SIZE] += n


@njit(inline="always")
def _tick(info, clock):
    """Count a node; True when a limit is reached (then ``info[I_STOP]`` is set). The
    clock is read every 256 nodes."""
    info[I_NODES] += 1
    if info[I_MAX_NODES] > 0 and info[I_NODES] > info[I_MAX_NODES]:
        info[I_STOP] = 1
    elif (info[I_NODES] & 255) == 0 and clock[0] > 0 and _now() >= clock[0]:
        info[I_STOP] = 1
    return info[I_STOP] != 0


@njit(inline="always")
def _record(fr, ply, root, stack, row, v, c):
    """Book value ``v`` (complete: ``c``) of the move ``stack[row]`` at frame ``ply``;
    True on a beta cut-off."""
    if not c:
        fr[ply, F_COMPLETE] = 0
    if v > fr[ply, F_BEST]:
        fr[ply, F_BEST] = v
        fr[ply, F_BEST_I] = row - fr[ply, F_BASE]
        if ply == 0:
            for j in range(MOVE_COLS):
                root[j] = stack[row, j]
        if v > fr[ply, F_A]:
            fr[ply, F_A] = v
            if v >= fr[ply, F_BETA]:
                return True
    return False


@njit(inline="always")  # two call sites in solve: one level less to re-optimise (see _jit)
def _search(ws, board, cross, anchors, bmeta, p0, passes0, h0, depth0, olen, alpha0, beta0):
    """Negamax value of the root (seat ``p0`` to move after ``passes0`` passes in a row,
    hash ``h0``) searched ``depth0`` placements deep within ``(alpha0, beta0)``:
    ``(value, complete)``. Fail-soft: a value <= alpha0 is an upper bound, one >= beta0
    a lower bound. The best root move is left in ``ws[W_ROOT]``. After a stop the
    result means nothing, nothing more is stored, and the board is restored.

    The search itself is :func:`_run`, compiled without numba's runtime (reference
    counts took 28% of a solve); when a node's moves do not fit on the move stack it
    stops there, and this grows a copy of the stack (kept for this search only, so
    results never depend on earlier calls) and lets it go on from that node.
    """
    fr = ws[W_FRAMES]
    fr[0, F_P] = p0
    fr[0, F_PASSES] = passes0
    fr[0, F_DEPTH] = depth0
    fr[0, F_BASE] = 0
    fr[0, F_ALPHA] = alpha0
    fr[0, F_BETA] = beta0
    fr[0, F_HASH] = h0
    stack, order, undo = ws[W_MOVES], ws[W_ORDER], ws[W_UNDO]
    resume = False
    while True:
        v, c, need = _run(
            ws[W_TT],
            stack,
            order,
            undo,
            ws[W_ST],
            ws[W_BUCKET],
            ws[W_HANDS],
            ws[W_INFO],
            ws[W_CLOCK],
            ws[W_ROOT],
            fr,
            board,
            cross,
            anchors,
            bmeta,
            depth0,
            olen,
            resume,
        )
        if need == 0:
            return v, c
        stack, order = _grown(stack, order, need)
        resume = True


@njit(_nrt=False)  # no reference counts: see :mod:`._kernels`
def _run(
    tt, stack, order, undo, st, bucket, hands, info, clock, root, fr, board, cross, anchors, bmeta, depth0, olen, resume
):
    """:func:`_search` from the root set up in ``fr[0]`` (``resume``: from the node
    ``fr[info[I_PLY]]`` whose moves did not fit, already counted): ``(value, complete,
    0)``, or ``(0, False, rows)`` when a node needs ``rows`` rows of the move stack (the
    node's line stays on the board for the call that goes on)."""
    gen = info[I_GEN]
    ply = info[I_PLY] if resume else np.int64(0)
    mode = _ENTER
    v = np.int64(0)  # the value just returned by a child (RETURN mode)
    c = True
    while True:
        if mode == _ENTER:
            p, passes, depth, base = fr[ply, F_P], fr[ply, F_PASSES], fr[ply, F_DEPTH], fr[ply, F_BASE]
            alpha, beta = fr[ply, F_ALPHA], fr[ply, F_BETA]
            fr[ply, F_MOVE] = -1  # no move of this node on the board yet
            info[I_REACHED] = max(info[I_REACHED], depth0 - depth)
            if resume:
                resume = False  # this node was counted before the stack grew
            elif _tick(info, clock):
                break
            key = _key(fr[ply, F_HASH], p, passes)
            fr[ply, F_KEY] = key
            slot = _probe(tt, key, gen)
            hint = 0
            mode = _RETURN
            if slot >= 0:
                hint = tt[slot, T_MOVE]
                data = tt[slot, T_DATA]
                complete = (_flag(data) & COMPLETE) != 0
                if ply > 0 and (complete or _draft(data) >= depth):
                    tv = _value(data)
                    bound = _flag(data) & 3
                    if bound == EXACT or (bound == LOWER and tv >= beta) or (bound == UPPER and tv <= alpha):
                        v, c = tv, complete
                        continue
            if ply == 0 and hint == 0:
                hint = info[I_ROOT_SIG]
            n = generate(
                board,
                cross,
                anchors,
                bmeta,
                hands[p, H_MASK],
                olen if bmeta[B_TILES] == 0 else 0,
                stack[base:],
                st,
                depth <= 0,
            )
            if base + n > stack.shape[0]:
                info[I_PLY] = ply
                return np.int64(0), False, base + n
            fr[ply, F_N] = n
            if n == 0:
                if passes > 0:  # both passed: the game is over
                    v, c = np.int64(0), True
                    continue
                if ply == 0:
                    for j in range(MOVE_COLS):
                        root[j] = 0
                # A forced pass (no depth used): the child's value, negated on return.
                fr[ply + 1, F_P] = 1 - p
                fr[ply + 1, F_PASSES] = 1
                fr[ply + 1, F_DEPTH] = depth
                fr[ply + 1, F_BASE] = base
                fr[ply + 1, F_ALPHA] = -beta
                fr[ply + 1, F_BETA] = -alpha
                fr[ply + 1, F_HASH] = fr[ply, F_HASH]
                ply += 1
                mode = _ENTER
                continue
            if depth <= 0:  # the horizon: the best points now (only the best were generated)
                v, c = np.int64(stack[base, M_SCORE]), False
                continue
            _sort(stack, order, base, n, hands[p, H_SIZE], hint, bucket)
            fr[ply, F_K] = 0
            fr[ply, F_BEST] = -INF
            fr[ply, F_BEST_I] = order[base]
            fr[ply, F_COMPLETE] = 1
            fr[ply, F_A] = alpha
            mode = _NEXT
        elif mode == _RETURN:
            if ply == 0:
                return v, c, np.int64(0)
            ply -= 1
            if fr[ply, F_N] == 0:  # a pass node
                v = -v
                continue
            p, base = fr[ply, F_P], fr[ply, F_BASE]
            row = base + order[base + fr[ply, F_K]]
            _take_back(board, cross, anchors, bmeta, undo, ply, stack, row, hands, p)
            fr[ply, F_MOVE] = -1
            v = stack[row, M_SCORE] - v
            mode = _NEXT
            done = _record(fr, ply, root, stack, row, v, c)
            fr[ply, F_K] += 1
            if done:
                mode = _FINISH
        elif mode == _NEXT:
            p, base, n = fr[ply, F_P], fr[ply, F_BASE], fr[ply, F_N]
            size = hands[p, H_SIZE]
            mode = _FINISH
            while fr[ply, F_K] < n:
                i = order[base + fr[ply, F_K]]
                row = base + i
                s = np.int64(stack[row, M_SCORE])
                if stack[row, M_N] == size:  # goes out: the game ends
                    done = _record(fr, ply, root, stack, row, s + BONUS, True)
                    fr[ply, F_K] += 1
                    if done:
                        break
                    continue
                h = _play(board, cross, anchors, bmeta, undo, ply, stack, row, hands, p, fr[ply, F_HASH])
                fr[ply, F_MOVE] = i
                fr[ply + 1, F_P] = 1 - p
                fr[ply + 1, F_PASSES] = 0
                fr[ply + 1, F_DEPTH] = fr[ply, F_DEPTH] - 1
                fr[ply + 1, F_BASE] = base + n
                fr[ply + 1, F_ALPHA] = s - fr[ply, F_BETA]
                fr[ply + 1, F_BETA] = s - fr[ply, F_A]
                fr[ply + 1, F_HASH] = h
                ply += 1
                mode = _ENTER
                break
        else:  # _FINISH: every move tried or a cut-off; store and return the value
            best = fr[ply, F_BEST]
            bound = UPPER if best <= fr[ply, F_ALPHA] else (LOWER if best >= fr[ply, F_BETA] else EXACT)
            complete = fr[ply, F_COMPLETE] != 0
            sig = _signature(stack, fr[ply, F_BASE] + fr[ply, F_BEST_I])
            _store(tt, gen, fr[ply, F_KEY], best, bound | (COMPLETE if complete else 0), fr[ply, F_DEPTH], sig)
            v, c = best, complete
            mode = _RETURN
    # Stopped: take back the moves still on the board, deepest first.
    for q in range(ply - 1, -1, -1):
        if fr[q, F_N] > 0 and fr[q, F_MOVE] >= 0:
            _take_back(board, cross, anchors, bmeta, undo, q, stack, fr[q, F_BASE] + fr[q, F_MOVE], hands, fr[q, F_P])
    return np.int64(0), False, np.int64(0)


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
def _hash(board, bmeta, hands):
    """The Zobrist hash of the board's tiles and both hands."""
    h = np.int64(0)
    if bmeta[B_TILES] > 0:
        for r in range(bmeta[B_MINR], bmeta[B_MAXR] + 1):
            for c in range(bmeta[B_MINC], bmeta[B_MAXC] + 1):
                cell = ((r & GMASK) << GRID_BITS) | (c & GMASK)
                if board[cell] >= 0:
                    h ^= _z_cell(cell, board[cell])
    for p in range(2):
        for t in range(36):
            if hands[p, t] > 0:
                h ^= _z_hand(p, t, hands[p, t])
    return h


@njit(inline="always")  # one call site: one level less to re-optimise (see _jit)
def _principal_variation(ws, board, cross, anchors, bmeta, p, passes, h, olen, value):
    """Write to ``ws[W_PV]`` the chosen move and after it, move by move, a move the
    table proves to keep the exact ``value`` (as far as it holds the proofs); returns
    the length. Leaves the board and hands as they were."""
    tt, hands, pv, rows, undo = ws[W_TT], ws[W_HANDS], ws[W_PV], ws[W_PVROWS], ws[W_UNDO]
    gen = ws[W_INFO][I_GEN]
    played = np.full(MAX_PLY, -1, np.int64)  # the seat of each placement put down
    k = np.int64(0)
    while k < MAX_PLY:
        mv, _, n = _generate(
            ws[W_MOVES], ws[W_ORDER], 0, board, cross, anchors, bmeta, hands[p, H_MASK], olen, ws[W_ST], np.bool_(False)
        )
        if n == 0:  # a pass (the second in a row ends the game)
            rows[k, :] = 0
            _output(bmeta, rows[k], pv[k])
            k += 1
            if passes > 0:
                break
            p, passes, value = 1 - p, 1, -value
            continue
        size = hands[p, H_SIZE]
        found = -1
        for i in range(n):
            if k == 0:  # the move chosen
                keeps = _signature(mv, i) == ws[W_INFO][I_ROOT_SIG]
            elif mv[i, M_N] == size:
                keeps = mv[i, M_SCORE] + BONUS == value
            else:  # a complete upper bound u on the child: worth >= value, so exactly it
                slot = _probe(tt, _key(_after(hands, p, mv, i, h), 1 - p, 0), gen)
                data = tt[slot, T_DATA] if slot >= 0 else 0
                keeps = slot >= 0 and (_flag(data) & COMPLETE) != 0 and (_flag(data) & 3) != LOWER
                keeps = keeps and mv[i, M_SCORE] - _value(data) >= value
            if keeps:
                found = i
                break
        if found < 0:
            break
        copy_into(rows[k], mv[found])
        _output(bmeta, rows[k], pv[k])
        if mv[found, M_N] == size:  # goes out: the game ends
            k += 1
            break
        h = _play(board, cross, anchors, bmeta, undo, k, rows, k, hands, p, h)
        played[k] = p
        value = rows[k, M_SCORE] - value
        k += 1
        p, passes = 1 - p, 0
    for j in range(k - 1, -1, -1):
        if played[j] >= 0:
            _take_back(board, cross, anchors, bmeta, undo, j, rows, j, hands, played[j])
    return k


@njit
def _accept(ws, bmeta):
    """Take the root move of the search just done as the answer (so far)."""
    root = ws[W_ROOT]
    copy_into(ws[W_BEST_ROW], root)
    _output(bmeta, root, ws[W_BEST])
    ws[W_INFO][I_ROOT_SIG] = _signature(root.reshape((1, MOVE_COLS)), 0) if root[M_N] > 0 else 0


@njit
def solve(ws, board, cross, anchors, bmeta, hands, gmeta, max_nodes, time_ms):
    """Solve the two-player endgame of the position (the board arrays, ``hands``
    int8[6, 6] and ``gmeta`` of :mod:`.state`; the bag must be empty, the game running).

    ``max_nodes`` (0: none) and ``time_ms`` (0: none) limit the search. The board
    arrays are changed during the search and restored (anchors past the
    ``bmeta[B_ANCHORS]`` in use may differ, as after ``board.take_back_slot``).

    Returns ``(value, kind, depth, nodes, pv_len)``: the margin the side to move gains
    from here on (its future points minus the opponent's, +6 for going out included;
    add the current score difference for the final margin); its kind (``EXACT_VALUE``,
    ``LOWER_BOUND`` or ``ESTIMATE``, see the module doc); the longest line searched, in
    placements; the nodes searched; and the length of the principal variation. The
    chosen action is in ``ws[W_BEST]`` and the line in ``ws[W_PV]``.
    """
    info, held = ws[W_INFO], ws[W_HANDS]
    p = gmeta[G_CURRENT]
    passes = gmeta[G_PASSES]
    olen = gmeta[G_OPEN_LEN] if gmeta[G_OPENING] else 0
    held[:] = 0
    for q in range(2):
        held[q, H_SIZE] = gmeta[G_HAND + q]
        for j in range(gmeta[G_HAND + q]):
            held[q, hands[q, j]] += 1
            held[q, H_MASK] |= np.int64(1) << hands[q, j]
    h = _hash(board, bmeta, held)
    info[I_NODES] = 0
    info[I_MAX_NODES] = max_nodes
    info[I_STOP] = 0
    info[I_ROOT_SIG] = 0
    info[I_REACHED] = 0
    info[I_GEN] += 1  # forgets the table in O(1)
    if info[I_GEN] >= GEN_LIMIT:
        info[I_GEN] = 1
        ws[W_TT][:] = 0
    ws[W_CLOCK][0] = _now() + time_ms / 1000.0 if time_ms > 0 else 0.0
    # Until a search completes: the greedy choice, its points as the estimate.
    stack, order = ws[W_MOVES], ws[W_ORDER]
    stack, order, n = _generate(
        stack, order, 0, board, cross, anchors, bmeta, held[p, H_MASK], olen, ws[W_ST], np.bool_(False)
    )
    value = np.int64(0)
    ws[W_ROOT][:] = 0
    if n > 0:
        _sort(stack, order, 0, n, held[p, H_SIZE], 0, ws[W_BUCKET])
        copy_into(ws[W_ROOT], stack[order[0]])
        value = np.int64(stack[order[0], M_SCORE]) + (BONUS if stack[order[0], M_N] == held[p, H_SIZE] else 0)
    copy_into(ws[W_BEST_ROW], ws[W_ROOT])
    _output(bmeta, ws[W_ROOT], ws[W_BEST])
    kind = ESTIMATE
    depth = 0
    for d in (1, 2):
        v, complete = _search(ws, board, cross, anchors, bmeta, p, passes, h, d, olen, np.int64(-INF), np.int64(INF))
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
            v, _ = _search(ws, board, cross, anchors, bmeta, p, passes, h, np.int64(FULL_DEPTH), olen, b - 1, b)
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
        copy_into(ws[W_PV][0], ws[W_BEST])
        pv_len = 1
    return value, kind, depth, info[I_NODES], pv_len
