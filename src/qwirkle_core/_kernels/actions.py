"""The game state of the agents and its action word: create, list, write, apply.

A game state is a :class:`.layout.GameState` named tuple over the arrays of
:mod:`.board`, :mod:`.state` and :mod:`.movegen` plus an action word ``act``
(int64[ACT_SIZE], fields ``A_*`` of :mod:`.layout`). Agents write the action they
choose into ``act`` (:func:`set_place`, :func:`set_fallback`) and :func:`apply_act`
plays it, so every agent, the batch loop and :class:`qwirkle_core.Game` play a turn
the same way. Agents draw only from the agents' stream (``rng[R_AGENTS]``); the game's bag
draws from ``rng[R_GAME]``.

The turn loops pass the arrays one by one (:func:`fallback`, :func:`apply_action`)
rather than the tuple: numba counts the references of every array a call passes with
an atomic operation where it cannot prove them balanced, and a tuple of ten arrays
passed down a few calls per turn cost more than a third of a greedy turn.
"""

import numpy as np

from ._jit import keep, njit
from .board import new_board, place_cells
from .layout import (
    A_CELL,
    A_KIND,
    A_N,
    A_POINTS,
    A_QWIRKLES,
    A_TILE,
    ACT_SIZE,
    EXCHANGE,
    G_BAG,
    G_CURRENT,
    G_HAND,
    M_CELL,
    M_N,
    M_SCORE,
    M_TILE,
    MOVE_COLS,
    PASS,
    PLACE,
    R_AGENTS,
    GameState,
)
from .movegen import generate_all, new_scratch_array
from .rng import below
from .scoring import qwirkles_made
from .state import after_placement, end_if_dead, exchange, hand_mask, new_game_arrays, opening_len, pass_turn


@njit
def new_state():
    """A fresh :class:`.layout.GameState` and a move buffer int32[1024, MOVE_COLS]."""
    board, cross, anchors, bmeta = new_board()
    hands, bag, gmeta, rng = new_game_arrays()
    gs = GameState(
        board, cross, anchors, bmeta, hands, bag, gmeta, rng, new_scratch_array(), np.zeros(ACT_SIZE, np.int64)
    )
    return gs, np.zeros((1024, MOVE_COLS), np.int32)


@njit
def legal_moves(gs, moves, best_only):
    """Generate the current player's placements (``best_only``: those of the highest
    score) into ``moves`` (grown if needed). Returns ``(moves, n)``.
    """
    gmeta = gs.gmeta
    hand = hand_mask(gs.hands, gmeta, gmeta[G_CURRENT])
    return generate_all(
        gs.board, gs.cross, gs.anchors, gs.bmeta, hand, opening_len(gmeta), moves, gs.gen_scratch, best_only
    )


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
    keep(act, moves)


@njit
def fallback(hands, gmeta, rng, act, exchange_all):
    """Write the action of a player with no placement: exchange, or pass (empty bag).

    Exchanges as many tiles as the bag allows, chosen at random, when
    ``exchange_all``; else a uniformly random number 1..that many.
    """
    bag = gmeta[G_BAG]
    act[A_POINTS] = 0
    act[A_QWIRKLES] = 0
    act[A_KIND] = PASS
    act[A_N] = 0
    if bag > 0:
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
    keep(hands, gmeta, rng, act)


@njit
def set_fallback(gs, exchange_all):
    """:func:`fallback` for a game state."""
    fallback(gs.hands, gs.gmeta, gs.rng, gs.act, exchange_all)


@njit
def apply_placement(board, cross, anchors, bmeta, hands, bag, gmeta, act):
    """Apply the placement in the action word ``act`` for the current player (already
    legal): the tiles, the Qwirkles it made, score, hand, draw, turn."""
    k = act[A_N]
    cells = act[A_CELL : A_CELL + k]
    tiles = act[A_TILE : A_TILE + k]
    place_cells(board, cross, anchors, bmeta, cells, tiles, k)
    act[A_QWIRKLES] = qwirkles_made(board, cells, k)
    after_placement(hands, bag, gmeta, tiles, k, act[A_POINTS], act[A_QWIRKLES])
    keep(board, cross, anchors, bmeta, hands, bag, gmeta, act, cells, tiles)


@njit
def apply_action(board, cross, anchors, bmeta, hands, bag, gmeta, rng, act):
    """Apply the action word ``act`` for the current player (already legal)."""
    if act[A_KIND] == PLACE:
        apply_placement(board, cross, anchors, bmeta, hands, bag, gmeta, act)
    elif act[A_KIND] == EXCHANGE:
        exchange(hands, bag, gmeta, rng, act[A_TILE : A_TILE + act[A_N]], act[A_N])
        end_if_dead(cross, anchors, bmeta, hands, bag, gmeta)
    else:
        pass_turn(gmeta)


@njit
def apply_act(gs):
    """Apply ``gs.act`` for the current player (already legal)."""
    apply_action(gs.board, gs.cross, gs.anchors, gs.bmeta, gs.hands, gs.bag, gs.gmeta, gs.rng, gs.act)
