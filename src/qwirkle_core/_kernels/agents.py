"""Agents: numba policies that choose an action inside the kernels.

An agent is a *spec*: a float64 row ``[id, p1, p2, ...]`` (``SPEC_COLS`` wide) whose
parameters depend on the id (see ``PARAMS``). :func:`choose` dispatches on the id;
to add an agent, give it an id, parameters, a branch in :func:`choose` (or in
:func:`.mc.take_turn` for agents that search) and a name in ``AGENTS``. The batch loop
does not change. Agents draw only from the agents' stream (``rng[1]``); the game's
bag draws from ``rng[0]``.

A game state ``gs`` is the tuple ``(board, cross, anchors, bmeta, hands, bag, gmeta,
rng, st, act)`` of :mod:`.board`, :mod:`.state` and :mod:`.movegen` arrays plus an
action word ``act`` (int64[ACT_SIZE]): ``act[0]`` kind (PLACE, EXCHANGE, PASS),
``act[1]`` tile count n, ``act[2]`` points, ``act[3]`` Qwirkles, ``act[4:10]`` wrapped
cells, ``act[10:16]`` tiles.
"""

import numpy as np

from ._jit import njit
from .board import B_ANCHORS, EMPTY, LX, NSHIFT, line_direction, line_points, lowest_bit_index, new_board, place_cells, popcount, scan_run
from .movegen import M_CELL, M_N, M_SCORE, M_TILE, MOVE_COLS, generate_all, new_scratch_array
from .rng import below
from .scoring import qwirkles_made
from .state import (
    G_BAG,
    G_CURRENT,
    G_HAND,
    G_PLAYERS,
    after_placement,
    end_if_dead,
    exchange,
    hand_mask,
    largest_group,
    new_game_arrays,
    opening_len,
    pass_turn,
)

RANDOM = 0
GREEDY = 1
HEURISTIC = 2
MONTE_CARLO = 3
AGENTS = {"random": RANDOM, "greedy": GREEDY, "heuristic": HEURISTIC, "mc": MONTE_CARLO}
SPEC_COLS = 12
# Parameter names and defaults per agent (spec columns 1, 2, ...).
# group, dup, danger, setup, reply, breadth, horizon, samples, follow (see heuristic_values, mc.reply_choose)
HEURISTIC_WEIGHTS = np.array([0.0, 0.5, 6.0, 6.0, 0.5, 4.0, 0.0, 1.0, 0.3])
PARAMS = {
    RANDOM: {},
    GREEDY: {},
    HEURISTIC: dict(zip(("group", "dup", "danger", "setup", "reply", "breadth", "horizon", "samples", "follow"), HEURISTIC_WEIGHTS.tolist())),
    MONTE_CARLO: {"playouts": 24.0, "candidates": 8.0, "depth": 4.0, "policy": float(HEURISTIC)},
}

PLACE = 0
EXCHANGE = 1
PASS = 2
ACT_SIZE = 16


def make_spec(agent_id, **params):
    """The spec row of an agent: its id and parameters (defaults for those not given)."""
    spec = np.zeros(SPEC_COLS, np.float64)
    spec[0] = agent_id
    names = PARAMS[agent_id]
    unknown = set(params) - set(names)
    if unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(sorted(unknown))}; this agent takes: {', '.join(names) or 'none'}")
    for i, (name, default) in enumerate(names.items(), start=1):
        spec[i] = float(params.get(name, default))
    return spec


@njit
def new_state():
    """A fresh game state tuple ``gs`` and a move buffer (see the module doc)."""
    board, cross, anchors, bmeta = new_board()
    hands, bag, gmeta, rng = new_game_arrays()
    gs = (board, cross, anchors, bmeta, hands, bag, gmeta, rng, new_scratch_array(), np.zeros(ACT_SIZE, np.int64))
    return gs, np.zeros((1024, MOVE_COLS), np.int32)


@njit
def legal_moves(gs, moves, best_only=False):
    """Generate the current player's placements (``best_only``: those of the highest
    score) into ``moves`` (grown if needed). Returns ``(moves, n)``.
    """
    gmeta = gs[6]
    hand = hand_mask(gs[4], gmeta, gmeta[G_CURRENT])
    return generate_all(gs[0], gs[1], gs[2], gs[3], hand, opening_len(gmeta), moves, gs[8], best_only)


@njit
def set_place(act, moves, i):
    """Write placement ``i`` of ``moves`` into the action word."""
    k = moves[i, M_N]
    act[0] = PLACE
    act[1] = k
    act[2] = moves[i, M_SCORE]
    act[3] = 0
    for j in range(k):
        act[4 + j] = moves[i, M_CELL + j]
        act[10 + j] = moves[i, M_TILE + j]


@njit
def set_fallback(gs, exchange_all):
    """Write the action of a player with no placement: exchange, or pass (empty bag).

    Exchanges as many tiles as the bag allows, chosen at random, when
    ``exchange_all``; else a uniformly random number 1..that many.
    """
    hands, gmeta, rng, act = gs[4], gs[6], gs[7], gs[9]
    bag = gmeta[G_BAG]
    act[2] = 0
    act[3] = 0
    if bag == 0:
        act[0] = PASS
        act[1] = 0
        return
    p = gmeta[G_CURRENT]
    n = gmeta[G_HAND + p]
    most = min(n, bag)
    k = most if exchange_all else 1 + below(rng, 1, most)
    act[0] = EXCHANGE
    act[1] = k
    for i in range(n):
        act[10 + i] = hands[p, i]
    for i in range(k):
        j = i + below(rng, 1, n - i)
        tmp = act[10 + i]
        act[10 + i] = act[10 + j]
        act[10 + j] = tmp


@njit
def apply_act(gs):
    """Apply the action word ``gs``'s ``act`` for the current player (already legal)."""
    board, cross, anchors, bmeta, hands, bag, gmeta, rng, act = gs[0], gs[1], gs[2], gs[3], gs[4], gs[5], gs[6], gs[7], gs[9]
    if act[0] == PLACE:
        k = act[1]
        cells = act[4 : 4 + k]
        tiles = act[10 : 10 + k]
        place_cells(board, cross, anchors, bmeta, cells, tiles, k)
        act[3] = qwirkles_made(board, cells, k)
        after_placement(hands, bag, gmeta, tiles, k, act[2], act[3])
    elif act[0] == EXCHANGE:
        exchange(hands, bag, gmeta, rng, act[10 : 10 + act[1]], act[1])
        end_if_dead(cross, anchors, bmeta, hands, bag, gmeta)
    else:
        pass_turn(gmeta)


@njit
def best_index(values, n, rng):
    """Index of the largest of ``values[:n]``, ties broken uniformly with one draw
    from the agents' stream (only when there is a tie)."""
    top = values[0]
    for i in range(1, n):
        top = max(top, values[i])
    ties = 0
    for i in range(n):
        ties += values[i] == top
    r = below(rng, 1, ties) if ties > 1 else 0
    for i in range(n):
        if values[i] == top:
            if r == 0:
                return i
            r -= 1
    return 0


@njit
def _line_chances(p_other, leave, allowed, fits):
    """Risk and promise of one line of 4 or 5 whose missing tiles are ``allowed`` and
    of which ``fits`` fit an open end (see :func:`_open_lines`)."""
    if popcount(allowed) == 1:  # a line of 5: its one missing tile, if it fits an end
        if fits == 0:
            return 0.0, 0.0
        risk = p_other[lowest_bit_index(fits)]
    elif fits == allowed:  # a line of 4: both missing tiles, each fitting an end
        risk = 1.0
        rest = allowed
        while rest:
            low = rest & -rest
            risk *= p_other[lowest_bit_index(low)]
            rest ^= low
    else:
        return 0.0, 0.0
    return risk, (1.0 - risk if allowed & leave == allowed else 0.0)


@njit
def _open_lines(board, cross, move, leave, p_other):
    """Risk and promise of the lines of 4 and 5 through a placement (a row of a move
    buffer; for two tiles or more they are on ``board``, ``cross`` is still from
    before the placement).

    Such a line becomes a Qwirkle once its missing tiles (1 or 2) are added at its
    open ends. The next player holds a tile t with probability ``p_other[t]``
    (independently, as an estimate). Returns (expected Qwirkles the next player can
    complete, Qwirkles the mover can complete next turn with its ``leave`` (tile
    set) if the next player does not first). The end cells' masks are those from
    before the placement (an estimate). Lines across the placement are measured from
    the cross words and walked only when they have 4 or 5 tiles.
    """
    k = move[M_N]
    d = line_direction(k, move[M_CELL], move[M_CELL + min(k - 1, 1)])
    risk = 0.0
    promise = 0.0
    for i in range(k + 1):
        j = max(i - 1, 0)
        cell = move[M_CELL + j]
        dd = d if i == 0 else 1 - d
        if i > 0 or k == 1:
            n = 1 + (cross[cell, dd] >> NSHIFT)
            if n < 4 or n > 5:
                continue
        left, n_left, a = scan_run(board, cell, dd, -1)
        right, n_right, b = scan_run(board, cell, dd, 1)
        n = 1 + n_left + n_right
        if n < 4 or n > 5:
            continue
        allowed = LX[move[M_TILE + j]] & left & right
        r, pr = _line_chances(p_other, leave, allowed, allowed & (cross[a, 1 - dd] | cross[b, 1 - dd]))
        risk += r
        promise += pr
    return risk, promise


@njit
def hidden_tiles(hands, bag, gmeta, viewer, pool):
    """Write the tiles ``viewer`` cannot see (the bag, then the other hands) to
    ``pool``; returns their number. In a game that holds all 108 tiles their multiset
    is public: 3 copies of each tile minus the board and the viewer's hand."""
    n = 0
    for i in range(gmeta[G_BAG]):
        pool[n] = bag[i]
        n += 1
    for p in range(gmeta[G_PLAYERS]):
        if p != viewer:
            for i in range(gmeta[G_HAND + p]):
                pool[n] = hands[p, i]
                n += 1
    return n


@njit
def _insert_by(order, n, t, key):
    """Insert ``t`` into ``order[:n]``, kept in decreasing order of ``key``."""
    i = n
    while i > 0 and key[order[i - 1]] < key[t]:
        order[i] = order[i - 1]
        i -= 1
    order[i] = t


@njit
def heuristic_values(gs, moves, n, spec, values):
    """Heuristic value of each of the ``n`` placements, into ``values[:n]``.

    value = points + group * (largest group in the leave) - dup * (duplicate tiles
    in the leave) - danger * (expected Qwirkles handed to the next player) + setup *
    (Qwirkles the mover could make next turn with its leave) + follow * (the best
    single-tile score a leave tile has on the board now); see :func:`_open_lines`.
    The group and dup terms count only while the bag has tiles. (``reply``,
    ``breadth``, ``horizon`` and ``samples``, spec[5:9], are used by
    :func:`.mc.reply_choose` late in the game; ``follow`` is spec[9].)
    """
    board, cross, hands, bag, gmeta = gs[0], gs[1], gs[4], gs[5], gs[6]
    w_group, w_dup, w_danger, w_setup, w_follow = spec[1], spec[2], spec[3], spec[4], spec[9]
    p = gmeta[G_CURRENT]
    pool = np.empty(bag.shape[0], np.int64)
    total = hidden_tiles(hands, bag, gmeta, p, pool)
    unseen = np.zeros(36, np.int64)
    for i in range(total):
        unseen[pool[i]] += 1
    # Chance that the next player's h tiles, drawn from the U unseen ones, hold at least
    # one of the u copies of a tile: 1 - C(U - u, h) / C(U, h) (exact, hypergeometric;
    # 0 or 1 once the bag is empty and the unseen tiles are that hand); u is 0..3.
    h = gmeta[G_HAND + (p + 1) % gmeta[G_PLAYERS]]
    p_copies = np.empty(4, np.float64)
    for u in range(4):
        miss = 1.0
        for i in range(h):
            miss *= max(total - u - i, 0) / max(total - i, 1)
        p_copies[u] = 1.0 - miss
    p_other = np.empty(36, np.float64)
    for t in range(36):
        p_other[t] = p_copies[unseen[t]]
    held = np.zeros(36, np.int64)
    size = gmeta[G_HAND + p]
    for i in range(size):
        held[hands[p, i]] += 1
    hand = hand_mask(hands, gmeta, p)
    # The best single-tile score each hand tile has on the board now, and the hand's
    # tiles from the best to the worst by it: a leave's follow-up is its first one.
    follow = np.zeros(36, np.float64)
    anchors, bmeta = gs[2], gs[3]
    for i in range(bmeta[B_ANCHORS]):
        a = anchors[i]
        fits = cross[a, 0] & cross[a, 1] & hand
        if fits:
            points = float(line_points(1 + (cross[a, 0] >> NSHIFT)) + line_points(1 + (cross[a, 1] >> NSHIFT)))
            while fits:
                low = fits & -fits
                t = lowest_bit_index(low)
                follow[t] = max(follow[t], points)
                fits ^= low
    order = np.empty(6, np.int64)
    distinct = 0
    rest = hand
    while rest:
        low = rest & -rest
        _insert_by(order, distinct, lowest_bit_index(low), follow)
        distinct += 1
        rest ^= low
    for m in range(n):
        k = moves[m, M_N]
        leave = hand
        for j in range(k):
            t = moves[m, M_TILE + j]
            if held[t] == 1:
                leave ^= 1 << t
            if k > 1:  # the placement's own line is walked on the board
                board[moves[m, M_CELL + j]] = t
        v = float(moves[m, M_SCORE])
        if gmeta[G_BAG] > 0:
            # Identical tiles never share a line: each extra copy in the leave is dead weight.
            v -= w_dup * (size - k - popcount(leave))
            if w_group != 0.0:
                v += w_group * largest_group(leave)
        for i in range(distinct):
            if (leave >> order[i]) & 1:
                v += w_follow * follow[order[i]]
                break
        risk, promise = _open_lines(board, cross, moves[m], leave, p_other)
        v += w_setup * promise - w_danger * risk
        values[m] = v
        if k > 1:
            for j in range(k):
                board[moves[m, M_CELL + j]] = EMPTY
    return values


@njit
def choose(spec, gs, moves, n, values):
    """Write the action of agent ``spec`` for the current player into ``gs``'s ``act``.

    ``moves[:n]`` are the legal placements; ``values`` is a float64 scratch of length
    >= n. Random: uniform over placements, else a random exchange. Greedy: the best
    score, ties broken at random, else exchange as many tiles as the bag allows.
    Heuristic: the best :func:`heuristic_values`, else like greedy.
    """
    agent = int(spec[0])
    rng, act = gs[7], gs[9]
    if n == 0:
        set_fallback(gs, agent != RANDOM)
        return
    if agent == RANDOM:
        set_place(act, moves, below(rng, 1, n))
        return
    if agent == HEURISTIC:
        set_place(act, moves, best_index(heuristic_values(gs, moves, n, spec, values), n, rng))
    else:
        set_place(act, moves, best_index(moves[:, M_SCORE], n, rng))


@njit(inline="always")  # inlined into the turn loops: about 20% faster
def take_turn_simple(spec, gs, moves, values):
    """One turn of a non-searching agent. ``values`` is a float64 scratch (a larger one
    is made for this turn if it is too short). Returns the (maybe grown) move buffer.
    Greedy sees only the best-scoring placements: the same choice, cheaper."""
    moves, n = legal_moves(gs, moves, int(spec[0]) == GREEDY)
    choose(spec, gs, moves, n, values if values.shape[0] >= n else np.zeros(n, np.float64))
    apply_act(gs)
    return moves
