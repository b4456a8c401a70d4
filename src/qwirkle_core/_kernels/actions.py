"""The game state of the agents and its action word: create, list, write, apply.

A game state is a :class:`.layout.GameState` named tuple over the arrays of
:mod:`.board`, :mod:`.state` and :mod:`.movegen` plus an action word ``act``
(int64[ACT_SIZE], fields ``A_*`` of :mod:`.layout`). Agents write the action they
choose into ``act`` (:func:`set_place`, :func:`set_fallback`) and :func:`apply_act`
plays it, so every agent, the batch loop and :class:`qwirkle_core.Game` play a turn
the same way. Agents draw only from the agents' stream (``rng[R_AGENTS]``); the game's bag
draws from ``rng[R_GAME]``.
"""

import numpy as np

from ._jit import njit
from .board import new_board, place_cells
from .layout import A_CELL, A_KIND, A_N, A_POINTS, A_QWIRKLES, A_TILE, ACT_SIZE, EXCHANGE, G_BAG, G_CURRENT, G_HAND, M_CELL, M_N, M_SCORE, M_TILE, MOVE_COLS, PASS, PLACE, R_AGENTS, GameState
from .movegen import generate_all, new_scratch_array
from .rng import below
from .scoring import qwirkles_made
from .state import after_placement, end_if_dead, exchange, hand_mask, new_game_arrays, opening_len, pass_turn


@njit
def new_state():
    """A fresh :class:`.layout.GameState` and a move buffer int32[1024, MOVE_COLS]."""
    board, cross, anchors, bmeta = new_board()
    hands, bag, gmeta, rng = new_game_arrays()
    gs = GameState(board, cross, anchors, bmeta, hands, bag, gmeta, rng, new_scratch_array(), np.zeros(ACT_SIZE, np.int64))
    return gs, np.zeros((1024, MOVE_COLS), np.int32)


@njit
def legal_moves(gs, moves, best_only=False):
    """Generate the current player's placements (``best_only``: those of the highest
    score) into ``moves`` (grown if needed). Returns ``(moves, n)``.
    """
    gmeta = gs.gmeta
    hand = hand_mask(gs.hands, gmeta, gmeta[G_CURRENT])
    return generate_all(gs.board, gs.cross, gs.anchors, gs.bmeta, hand, opening_len(gmeta), moves, gs.gen_scratch, best_only)


@njit
def set_place(act, moves, i):
    """Write placement ``i`` of ``moves`` into the action word."""
    k = moves[i, M_N]
    act[A_KIND] = PLACE
    act[A_N] = k
    act[A_POINTS] = moves[i, M_SCORE]
    act[A_QWIRKLES] = 0
    for j in range(k):
        act[A_CELL + j] = moves[i, M_CELL + j]
        act[A_TILE + j] = moves[i, M_TILE + j]


@njit
def set_fallback(gs, exchange_all):
    """Write the action of a player with no placement: exchange, or pass (empty bag).

    Exchanges as many tiles as the bag allows, chosen at random, when
    ``exchange_all``; else a uniformly random number 1..that many.
    """
    hands, gmeta, rng, act = gs.hands, gs.gmeta, gs.rng, gs.act
    bag = gmeta[G_BAG]
    act[A_POINTS] = 0
    act[A_QWIRKLES] = 0
    if bag == 0:
        act[A_KIND] = PASS
        act[A_N] = 0
        return
    p = gmeta[G_CURRENT]
    n = gmeta[G_HAND + p]
    most = min(n, bag)
    k = most if exchange_all else 1 + below(rng, R_AGENTS, most)
    act[A_KIND] = EXCHANGE
    act[A_N] = k
    for i in range(n):
        act[A_TILE + i] = hands[p, i]
    for i in range(k):
        j = i + below(rng, R_AGENTS, n - i)
        tmp = act[A_TILE + i]
        act[A_TILE + i] = act[A_TILE + j]
        act[A_TILE + j] = tmp


@njit
def apply_act(gs):
    """Apply ``gs.act`` for the current player (already legal)."""
    act = gs.act
    k = act[A_N]
    if act[A_KIND] == PLACE:
        cells = act[A_CELL : A_CELL + k]
        tiles = act[A_TILE : A_TILE + k]
        place_cells(gs.board, gs.cross, gs.anchors, gs.bmeta, cells, tiles, k)
        act[A_QWIRKLES] = qwirkles_made(gs.board, cells, k)
        after_placement(gs.hands, gs.bag, gs.gmeta, tiles, k, act[A_POINTS], act[A_QWIRKLES])
    elif act[A_KIND] == EXCHANGE:
        exchange(gs.hands, gs.bag, gs.gmeta, gs.rng, act[A_TILE : A_TILE + k], k)
        end_if_dead(gs.cross, gs.anchors, gs.bmeta, gs.hands, gs.bag, gs.gmeta)
    else:
        pass_turn(gs.gmeta)
