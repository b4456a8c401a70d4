"""Monte Carlo: determinization, playouts, move evaluation and the Monte Carlo agent.

A *sim* is a scratch game state (an agents ``gs`` tuple) that each playout rebuilds
from a *root* (the position being evaluated), so the root is never touched. The root's
board travels as a tile list in true coordinates: ``rows``, ``cols`` (int64) and
``tiles`` (int8), the first ``ntiles`` entries.

Determinization: the tiles the player to move cannot see (the other hands and the bag)
are shuffled together and dealt back: the other hands keep their sizes, the rest is the
bag in a random order. The player's own hand, the board and the scores stay. So a
playout never uses hidden information.

A playout applies one candidate action, then lets ``policy`` play every seat for
``depth`` more turns (0: to the end of the game) and returns the margin: the player's
score minus the best other score.
"""

import numpy as np
from numba import prange

from ._jit import njit
from .agents import (
    GREEDY,
    HEURISTIC,
    HEURISTIC_WEIGHTS,
    M_CELL,
    M_N,
    M_SCORE,
    M_TILE,
    MONTE_CARLO,
    SPEC_COLS,
    apply_act,
    best_index,
    heuristic_values,
    hidden_tiles,
    legal_moves,
    new_state,
    set_fallback,
    set_place,
    take_turn_simple,
)
from .board import B_MAXC, B_MAXR, B_MINC, B_MINR, B_TILES, cell_of, clear_board, new_undo, place_at, place_cells_undoable, take_back
from .movegen import generate_all
from .rng import below, mix64, next_u64
from .state import G_BAG, G_CURRENT, G_HAND, G_OVER, G_PLAYERS, G_SCORE, G_TURNS, MAX_TURNS, NTILES, _insert_sorted, hand_mask

# Candidate rows: [kind, n, points, 0, cells x6, tiles x6] like an action word.
CAND_COLS = 16
_PLAYOUT_SALT = np.uint64(0x632BE59BD9B4E019)


@njit
def board_tiles(board, bmeta, rows, cols, tiles):
    """Write the board's tiles (true coordinates) into the arrays; returns the count."""
    n = 0
    if bmeta[B_TILES] == 0:
        return 0
    for r in range(bmeta[B_MINR], bmeta[B_MAXR] + 1):
        for c in range(bmeta[B_MINC], bmeta[B_MAXC] + 1):
            t = board[cell_of(r, c)]
            if t >= 0:
                rows[n] = r
                cols[n] = c
                tiles[n] = t
                n += 1
    return n


@njit
def reset_sim(sim, rows, cols, tiles, ntiles, hands, bag, gmeta, cells):
    """Make ``sim`` a copy of the root position."""
    board, cross, anchors, bmeta = sim[0], sim[1], sim[2], sim[3]
    clear_board(board, cross, anchors, bmeta)
    if ntiles > 0:
        place_at(board, cross, anchors, bmeta, rows, cols, tiles, ntiles, cells)
    sim[4][:] = hands
    sim[5][:] = bag
    sim[6][:] = gmeta


@njit
def determinize(hands, bag, gmeta, viewer, rng, stream):
    """Re-deal everything ``viewer`` cannot see (other hands + bag), in place."""
    players = gmeta[G_PLAYERS]
    pool = np.empty(bag.shape[0], np.int8)
    n = hidden_tiles(hands, bag, gmeta, viewer, pool)
    for i in range(n - 1, 0, -1):
        j = below(rng, stream, i + 1)
        tmp = pool[i]
        pool[i] = pool[j]
        pool[j] = tmp
    k = 0
    for p in range(players):
        if p != viewer:
            for i in range(gmeta[G_HAND + p]):
                _insert_sorted(hands[p], i, pool[k])
                k += 1
    for i in range(gmeta[G_BAG]):
        bag[i] = pool[k]
        k += 1


@njit
def playout_seed(base, j):
    """The seed of playout ``j`` of an evaluation seeded ``base`` (uint64)."""
    return mix64(np.uint64(base) ^ mix64(np.uint64(j) + _PLAYOUT_SALT))


@njit
def margin(gmeta, player):
    """``player``'s score minus the best other score."""
    best = -(1 << 30)
    for p in range(gmeta[G_PLAYERS]):
        if p != player:
            best = max(best, gmeta[G_SCORE + p])
    return gmeta[G_SCORE + player] - best


@njit
def playout(sim, moves, values, cand, policy, depth, seed):
    """One determinized playout of candidate ``cand`` from the (reset) ``sim``.

    Returns ``(margin, moves)``; the move buffer may have grown.
    """
    gmeta, rng, act = sim[6], sim[7], sim[9]
    player = gmeta[G_CURRENT]
    rng[0] = mix64(np.uint64(seed))
    rng[1] = mix64(np.uint64(seed) ^ _PLAYOUT_SALT)
    determinize(sim[4], sim[5], gmeta, player, rng, 1)
    act[:] = cand
    apply_act(sim)
    start = gmeta[G_TURNS]
    while gmeta[G_OVER] == 0 and (depth == 0 or gmeta[G_TURNS] - start < depth) and gmeta[G_TURNS] < MAX_TURNS:
        moves = take_turn_simple(policy, sim, moves, values)
    return margin(gmeta, player), moves


@njit
def candidates(gs, moves, n, values, spec, limit, out):
    """The ``limit`` best placements by ``spec``'s values (all if limit <= 0), or the
    fallback exchange/pass when there is none, as rows of ``out``; returns the count."""
    if n == 0:
        set_fallback(gs, True)
        out[0, :] = gs[9]
        return 1
    if int(spec[0]) == GREEDY:
        for i in range(n):
            values[i] = moves[i, M_SCORE]
    else:
        heuristic_values(gs, moves, n, spec, values)
    return candidates_from_values(moves, n, values, limit, out)


@njit
def candidates_from_values(moves, n, values, limit, out):
    """The ``limit`` placements with the largest ``values`` (all if limit <= 0) as
    action rows of ``out``, best first. Returns their number."""
    order = np.argsort(-values[:n], kind="mergesort")
    k = n if limit <= 0 else min(n, limit)
    for c in range(k):
        i = order[c]
        m = moves[i, M_N]
        out[c, :] = 0
        out[c, 1] = m
        out[c, 2] = moves[i, M_SCORE]
        for j in range(m):
            out[c, 4 + j] = moves[i, M_CELL + j]
            out[c, 10 + j] = moves[i, M_TILE + j]
    return k


@njit(parallel=True)
def evaluate(rows, cols, tiles, ntiles, hands, bag, gmeta, cands, ncand, policy, playouts, depth, seed, nchunks):
    """Margins of ``playouts`` playouts of each candidate: float64[ncand, playouts].

    Playout j of every candidate shares its determinization and random streams (common
    random numbers), so differences between candidates are measured with less noise.
    The work is split over ``nchunks`` parallel chunks; the result does not depend on it.
    """
    out = np.zeros((ncand, playouts), np.float64)
    total = ncand * playouts
    for ch in prange(nchunks):
        sim, moves = new_state()
        values = np.zeros(moves.shape[0], np.float64)
        cells = np.zeros(max(ntiles, 1), np.int64)
        for w in range(ch * total // nchunks, (ch + 1) * total // nchunks):
            c = w // playouts
            j = w % playouts
            reset_sim(sim, rows, cols, tiles, ntiles, hands, bag, gmeta, cells)
            m, moves = playout(sim, moves, values, cands[c], policy, depth, playout_seed(seed, j))
            out[c, j] = m
    return out


@njit
def mc_choose(spec, gs, moves, n, values, sim, smoves, svalues, root):
    """The Monte Carlo agent: best mean playout margin among the top candidates.

    ``spec``: [MONTE_CARLO, playouts, candidates, depth, policy id]. Candidates are
    the policy's best placements; a lone candidate (or a forced exchange/pass) is
    played without playouts. ``root`` is the scratch ``(rows, cols, tiles, cells,
    cands, policy_spec)``. Writes the chosen action into ``gs``'s ``act``.
    """
    playouts = int(spec[1])
    limit = int(spec[2])
    depth = int(spec[3])
    rows, cols, tiles, cells, cands, policy = root[0], root[1], root[2], root[3], root[4], root[5]
    policy[:] = 0
    policy[0] = spec[4]
    if int(spec[4]) == HEURISTIC:
        policy[1 : 1 + HEURISTIC_WEIGHTS.shape[0]] = HEURISTIC_WEIGHTS
    k = candidates(gs, moves, n, values, policy, limit, cands)
    act, rng = gs[9], gs[7]
    if k == 1 or playouts <= 0:
        act[:] = cands[0]
        return
    board, bmeta, hands, bag, gmeta = gs[0], gs[3], gs[4], gs[5], gs[6]
    ntiles = board_tiles(board, bmeta, rows, cols, tiles)
    means = np.zeros(k, np.float64)
    base = next_u64(rng, 1)
    for j in range(playouts):
        s = playout_seed(base, j)
        for c in range(k):
            reset_sim(sim, rows, cols, tiles, ntiles, hands, bag, gmeta, cells)
            m, smoves = playout(sim, smoves, svalues, cands[c], policy, depth, s)
            means[c] += m
    act[:] = cands[best_index(means, k, rng)]


@njit
def _best_reply(gs, hand, size, exact, moves):
    """The best points the next player could score with the tile set ``hand`` (of
    ``size`` tiles), +6 for going out when ``exact`` (the bag is empty). Returns
    ``(points, moves)``."""
    moves, n = generate_all(gs[0], gs[1], gs[2], gs[3], hand, 0, moves, gs[8])
    best = 0
    for i in range(n):
        best = max(best, moves[i, M_SCORE] + (6 if exact and moves[i, M_N] == size else 0))
    return best, moves


@njit
def reply_choose(spec, gs, moves, n, values, smoves, undo):
    """The heuristic agent late in the game (bag size <= ``horizon``, spec[7]): its
    ``breadth`` (spec[6]) best placements are also charged ``reply`` (spec[5]) times
    the next player's best reply (its points, +6 if it goes out). Once the bag is empty
    the next hand is known exactly; before that the reply is averaged over ``samples``
    (spec[8]) hands dealt from the unseen tiles, the same ones for every candidate.
    Each candidate is put on the board and taken back (no copy of the position)."""
    board, cross, anchors, bmeta, hands, bag, gmeta, rng, act = gs[0], gs[1], gs[2], gs[3], gs[4], gs[5], gs[6], gs[7], gs[9]
    if n == 0:
        set_fallback(gs, True)
        return
    heuristic_values(gs, moves, n, spec, values)
    order = np.argsort(-values[:n], kind="mergesort")[: max(int(spec[6]), 1)]
    player = gmeta[G_CURRENT]
    nxt = (player + 1) % gmeta[G_PLAYERS]
    size = gmeta[G_HAND + nxt]
    exact = gmeta[G_BAG] == 0
    samples = 1 if exact else max(int(spec[8]), 1)
    # The hands to try: the real one when exact, else deals from the unseen tiles.
    pool = np.empty(bag.shape[0], np.int64)
    npool = hidden_tiles(hands, bag, gmeta, player, pool)
    trial = np.zeros(samples, np.int64)
    for j in range(samples):
        if exact:
            trial[j] = hand_mask(hands, gmeta, nxt)
        else:
            for i in range(min(size, npool)):
                k = i + below(rng, 1, npool - i)
                pool[i], pool[k] = pool[k], pool[i]
                trial[j] |= 1 << pool[i]
    cells = np.empty(6, np.int64)
    tiles = np.empty(6, np.int64)
    adjusted = np.empty(order.shape[0], np.float64)
    for c in range(order.shape[0]):
        m = moves[order[c], M_N]
        for i in range(m):
            cells[i] = moves[order[c], M_CELL + i]
            tiles[i] = moves[order[c], M_TILE + i]
        place_cells_undoable(board, cross, anchors, bmeta, cells, tiles, m, undo)
        total = 0.0
        if not (exact and m == gmeta[G_HAND + player]):  # going out ends the game
            for j in range(samples):
                best, smoves = _best_reply(gs, trial[j], size, exact, smoves)
                total += best
        take_back(board, cross, anchors, bmeta, cells, m, undo)
        adjusted[c] = values[order[c]] - spec[5] * total / samples
    set_place(act, moves, order[best_index(adjusted, order.shape[0], rng)])


@njit
def new_agent_scratch():
    """Everything an agent may need beyond the game: values, a sim and root scratch."""
    sim, smoves = new_state()
    root = (
        np.zeros(NTILES, np.int64),
        np.zeros(NTILES, np.int64),
        np.zeros(NTILES, np.int8),
        np.zeros(NTILES, np.int64),
        np.zeros((64, CAND_COLS), np.int64),
        np.zeros(SPEC_COLS, np.float64),
        new_undo(),
    )
    return np.zeros(1024, np.float64), sim, smoves, np.zeros(1024, np.float64), root


@njit
def take_turn(spec, gs, moves, scratch):
    """One turn of agent ``spec`` for the current player of ``gs``.

    ``scratch`` is :func:`new_agent_scratch`'s tuple (used in place). Returns the
    (maybe grown) move buffer.
    """
    agent = int(spec[0])
    if agent != MONTE_CARLO and not (agent == HEURISTIC and spec[5] > 0 and gs[6][G_BAG] <= spec[7]):
        return take_turn_simple(spec, gs, moves, scratch[0])  # before unpacking: faster
    values, sim, smoves, svalues, root = scratch
    moves, n = legal_moves(gs, moves)
    if values.shape[0] < n:
        values = np.zeros(n, np.float64)
    if agent == MONTE_CARLO:
        mc_choose(spec, gs, moves, n, values, sim, smoves, svalues, root)
    else:
        reply_choose(spec, gs, moves, n, values, smoves, root[6])
    apply_act(gs)
    return moves
