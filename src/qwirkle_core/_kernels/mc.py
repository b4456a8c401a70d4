"""Monte Carlo: determinization, playouts, move evaluation and the Monte Carlo agent.

A *sim* is a scratch game state (a :class:`.layout.GameState`) that each playout rebuilds
from a *root* (the position being evaluated), so the root is never touched. The root's
board travels as a tile list in true coordinates: ``rows``, ``cols`` (int64) and
``tiles`` (int8), the first ``ntiles`` entries.

Determinization: the tiles the player to move cannot see (the other hands and the bag)
are shuffled together and dealt back: the other hands keep their sizes, the rest is the
bag in a random order. The player's own hand, the board and the scores stay. So a
playout never uses hidden information.

A playout applies one candidate action, then lets ``policy`` play every seat for
``depth`` more turns (0: to the end of the game) and returns the margin: the player's
score minus the best other score. A playout stops after MAX_TURNS turns counted from
its root (like a game of the batch), whatever the root's own turn counter says.

Candidates are action words (:mod:`.layout`, ``CAND_COLS`` wide); the agent keeps at
most MAX_CANDIDATES of them, whatever its spec asks.
"""

import numpy as np
from numba import prange

from ._jit import copy_into, njit
from .actions import apply_act, new_state, set_fallback
from .board import cell_of, clear_board, place_at
from .layout import (
    A_CELL,
    A_KIND,
    A_N,
    A_POINTS,
    A_TILE,
    B_MAXC,
    B_MAXR,
    B_MINC,
    B_MINR,
    B_TILES,
    DEFAULT_SPECS,
    G_BAG,
    G_CURRENT,
    G_HAND,
    G_PLAYERS,
    G_SCORE,
    G_TURNS,
    GREEDY,
    HEURISTIC,
    M_CELL,
    M_N,
    M_SCORE,
    M_TILE,
    P_MC_CANDIDATES,
    P_MC_DEPTH,
    P_MC_PLAYOUTS,
    P_MC_POLICY,
    PLACE,
    R_AGENTS,
    R_GAME,
    SPEC_ID,
)
from .policies import HEURISTIC_WORK, best_index, heuristic_values, play_turns
from .rng import below, mix64, next_u64
from .state import MAX_TURNS, hidden_tiles, insert_sorted

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
    clear_board(sim.board, sim.cross, sim.anchors, sim.bmeta)
    if ntiles > 0:
        place_at(sim.board, sim.cross, sim.anchors, sim.bmeta, rows, cols, tiles, ntiles, cells)
    for p in range(hands.shape[0]):
        copy_into(sim.hands[p], hands[p])
    copy_into(sim.bag, bag)
    copy_into(sim.gmeta, gmeta)


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
                insert_sorted(hands[p], i, pool[k])
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
def playout(sim, moves, values, work, cand, policy, depth, seed):
    """One determinized playout of candidate ``cand`` from the (reset) ``sim``.

    ``values`` and ``work`` are the policy's scratch (:func:`.policies.play_simple`).
    Returns ``(margin, moves)``; the move buffer may have grown. The playout stops
    after ``depth`` turns past the candidate (0: at the end of the game), and at the
    latest MAX_TURNS turns after the root.
    """
    board, cross, anchors, bmeta, hands, bag, gmeta, rng, st, act = sim
    player = gmeta[G_CURRENT]
    rng[R_GAME] = mix64(np.uint64(seed))
    rng[R_AGENTS] = mix64(np.uint64(seed) ^ _PLAYOUT_SALT)
    determinize(hands, bag, gmeta, player, rng, R_AGENTS)
    root_turn = gmeta[G_TURNS]
    copy_into(act, cand)
    apply_act(sim)
    until = root_turn + MAX_TURNS
    if depth > 0:
        until = min(until, gmeta[G_TURNS] + depth)
    specs = policy.reshape((1, policy.shape[0]))
    moves, _ = play_turns(
        specs,
        board,
        cross,
        anchors,
        bmeta,
        hands,
        bag,
        gmeta,
        rng,
        st,
        act,
        moves,
        values,
        work,
        until,
        False,
        True,
        None,
    )
    return margin(gmeta, player), moves


@njit
def candidates(gs, moves, n, values, spec, limit, out):
    """The ``limit`` best placements by ``spec``'s values (see
    :func:`candidates_from_values`), or the fallback exchange/pass when there is none,
    as rows of ``out``; returns the count."""
    if n == 0:
        set_fallback(gs, True)
        copy_into(out[0], gs.act)
        return 1
    if int(spec[SPEC_ID]) == GREEDY:
        for i in range(n):
            values[i] = moves[i, M_SCORE]
    else:
        heuristic_values(gs, moves, n, spec, values)
    return candidates_from_values(moves, n, values, limit, out)


@njit
def candidates_from_values(moves, n, values, limit, out):
    """The ``limit`` placements with the largest ``values`` (all if limit <= 0) as
    action rows of ``out``, best first; never more than ``out`` has rows, whatever
    ``limit`` says. Returns their number."""
    k = min(n, out.shape[0])
    if limit > 0:
        k = min(k, limit)
    # The first k of a stable sort by value, high to low (ties in move order): each
    # pick is the best of the moves after the previous pick in that order. A scan per
    # candidate, not np.argsort: its merge sort cost a second of the first compile.
    i = -1
    for c in range(k):
        prev = values[i] if i >= 0 else 0.0
        best = -1
        for q in range(n):
            v = values[q]
            if i >= 0 and not (v < prev or (v == prev and q > i)):
                continue  # picked already
            if best < 0 or v > values[best]:
                best = q
        i = best
        m = moves[i, M_N]
        out[c, :] = 0
        out[c, A_KIND] = PLACE
        out[c, A_N] = m
        out[c, A_POINTS] = moves[i, M_SCORE]
        for j in range(m):
            out[c, A_CELL + j] = moves[i, M_CELL + j]
            out[c, A_TILE + j] = moves[i, M_TILE + j]
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
        work = np.zeros(HEURISTIC_WORK, np.float64)
        cells = np.zeros(max(ntiles, 1), np.int64)
        for w in range(ch * total // nchunks, (ch + 1) * total // nchunks):
            c = w // playouts
            j = w % playouts
            reset_sim(sim, rows, cols, tiles, ntiles, hands, bag, gmeta, cells)
            m, moves = playout(sim, moves, values, work, cands[c], policy, depth, playout_seed(seed, j))
            out[c, j] = m
    return out


@njit
def mc_choose(spec, gs, moves, n, values, scratch):
    """The Monte Carlo agent: best mean playout margin among the top candidates.

    ``spec``: its ``playouts``, ``candidates``, ``depth`` and ``policy`` (an agent id).
    Candidates are the policy's best placements (at most MAX_CANDIDATES); a lone
    candidate (or a forced exchange/pass) is played without playouts. ``scratch`` is
    the :class:`.layout.AgentScratch` (its sim and root are used). Writes the chosen
    action into ``gs.act``.
    """
    playouts = int(spec[P_MC_PLAYOUTS])
    limit = int(spec[P_MC_CANDIDATES])
    depth = int(spec[P_MC_DEPTH])
    root = scratch.root
    policy, cands = root.policy, root.cands
    policy[:] = 0
    policy[SPEC_ID] = spec[P_MC_POLICY]
    if int(policy[SPEC_ID]) == HEURISTIC:
        copy_into(policy, DEFAULT_SPECS[HEURISTIC])
    k = candidates(gs, moves, n, values, policy, limit, cands)
    act, rng = gs.act, gs.rng
    if k == 1 or playouts <= 0:
        copy_into(act, cands[0])
        return
    rows, cols, tiles, cells = root.rows, root.cols, root.tiles, root.cells
    sim, smoves, svalues = scratch.sim, scratch.sim_moves, scratch.sim_values
    ntiles = board_tiles(gs.board, gs.bmeta, rows, cols, tiles)
    means = np.zeros(k, np.float64)
    base = next_u64(rng, R_AGENTS)
    for j in range(playouts):
        s = playout_seed(base, j)
        for c in range(k):
            reset_sim(sim, rows, cols, tiles, ntiles, gs.hands, gs.bag, gs.gmeta, cells)
            m, smoves = playout(sim, smoves, svalues, scratch.work, cands[c], policy, depth, s)
            means[c] += m
    copy_into(act, cands[best_index(means, k, rng)])
