"""Agents: numba policies that pick an action inside the batch kernel.

An agent is an int id. :func:`choose` dispatches on it; to add an agent, add an id,
a branch in :func:`choose` and its name in ``AGENTS`` (the batch loop does not change).
Agents draw only from the agents' stream (``rng[1]``), the game from ``rng[0]``.

Action kinds written by :func:`take_turn` into ``act`` (int64[16]):
``act[0]`` kind (PLACE, EXCHANGE, PASS), ``act[1]`` tile count n, ``act[2]`` points,
``act[3]`` Qwirkles, ``act[4:10]`` wrapped cells, ``act[10:16]`` tiles.
"""

import numpy as np

from ._jit import njit
from .board import place_cells
from .movegen import M_CELL, M_SCORE, M_TILE, MOVE_COLS, generate
from .rng import below
from .scoring import qwirkles_made
from .state import G_BAG, G_CURRENT, G_HAND, after_placement, end_if_dead, exchange, hand_mask, opening_len, pass_turn

RANDOM = 0
GREEDY = 1
AGENTS = {"random": RANDOM, "greedy": GREEDY}

PLACE = 0
EXCHANGE = 1
PASS = 2
ACT_SIZE = 16


@njit
def _random_slots(hands, gmeta, rng, p, k, act):
    """Choose ``k`` distinct tiles of seat ``p``'s hand at random into ``act[10:10+k]``."""
    n = gmeta[G_HAND + p]
    for i in range(n):
        act[10 + i] = hands[p, i]
    for i in range(k):
        j = i + below(rng, 1, n - i)
        tmp = act[10 + i]
        act[10 + i] = act[10 + j]
        act[10 + j] = tmp


@njit
def choose(agent, moves, n, hands, gmeta, rng, act):
    """Pick an action for the current player given the ``n`` legal placements in ``moves``.

    Placement: returns its index. Otherwise fills ``act`` with an exchange or a pass
    and returns -1.
    """
    p = gmeta[G_CURRENT]
    if n > 0:
        if agent == GREEDY:
            best = 0
            ties = 1
            for i in range(1, n):
                s = moves[i, M_SCORE]
                if s > moves[best, M_SCORE]:
                    best = i
                    ties = 1
                elif s == moves[best, M_SCORE]:
                    ties += 1
                    if below(rng, 1, ties) == 0:
                        best = i
            return best
        return below(rng, 1, n)
    bag = gmeta[G_BAG]
    if bag == 0:
        act[0] = PASS
        act[1] = 0
        return -1
    most = min(gmeta[G_HAND + p], bag)
    if agent == GREEDY:
        k = most
    else:
        k = 1 + below(rng, 1, most)
    act[0] = EXCHANGE
    act[1] = k
    _random_slots(hands, gmeta, rng, p, k, act)
    return -1


@njit
def take_turn(agent, board, cross, anchors, bmeta, hands, bag, gmeta, rng, moves, st, act):
    """Let ``agent`` play one turn for the current player; describe it in ``act``.

    Returns the move buffer, which is replaced by a larger one if it overflowed.
    """
    hand = hand_mask(hands, gmeta, gmeta[G_CURRENT])
    olen = opening_len(gmeta)
    n = generate(board, cross, anchors, bmeta, hand, olen, moves, st)
    if n > moves.shape[0]:
        moves = np.zeros((2 * n, MOVE_COLS), np.int32)
        n = generate(board, cross, anchors, bmeta, hand, olen, moves, st)
    i = choose(agent, moves, n, hands, gmeta, rng, act)
    if i >= 0:
        k = moves[i, 0]
        act[0] = PLACE
        act[1] = k
        act[2] = moves[i, M_SCORE]
        for j in range(k):
            act[4 + j] = moves[i, M_CELL + j]
            act[10 + j] = moves[i, M_TILE + j]
        cells = act[4 : 4 + k]
        tiles = act[10 : 10 + k]
        place_cells(board, cross, anchors, bmeta, cells, tiles, k)
        act[3] = qwirkles_made(board, cells, k)
        after_placement(hands, bag, gmeta, tiles, k, act[2], act[3])
    elif act[0] == EXCHANGE:
        act[2] = 0
        act[3] = 0
        exchange(hands, bag, gmeta, rng, act[10 : 10 + act[1]], act[1])
        end_if_dead(cross, anchors, bmeta, hands, bag, gmeta)
    else:
        act[2] = 0
        act[3] = 0
        pass_turn(gmeta)
    return moves
