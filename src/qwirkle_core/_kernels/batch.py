"""The batch loop: many complete games in parallel, one row of results per game."""

import numpy as np
from numba import prange

from ._jit import njit
from .agents import ACT_SIZE, take_turn
from .board import clear_board, new_board
from .movegen import MOVE_COLS, new_scratch_array
from .rng import game_seed, seed_streams
from .state import (
    G_CURRENT,
    G_OVER,
    G_PLACED,
    G_QWIRKLES,
    G_SCORE,
    G_STARTER,
    G_TURNS,
    G_WINNER,
    HAND,
    MAX_PLAYERS,
    NTILES,
    GMETA,
    new_game,
)

MAX_TURNS = 5000  # a game still running after this many turns is stopped as blocked

# Columns of the per-game int32 stats array.
S_WINNER, S_TURNS, S_PLACED, S_STARTER, S_TRUNCATED = 0, 1, 2, 3, 4
STATS = 5


@njit
def seeds_for(batch_seed, start, count):
    """uint64[count]: the seeds of games ``start .. start+count-1`` of a batch."""
    out = np.empty(count, np.uint64)
    for i in range(count):
        out[i] = game_seed(batch_seed, start + i)
    return out


@njit
def play_one(seed, agents, rule_opening, board, cross, anchors, bmeta, hands, bag, gmeta, rng, moves, st, act):
    """Play one game from ``seed`` to the end with ``agents[seat]``; returns the move buffer."""
    clear_board(board, cross, anchors, bmeta)
    seed_streams(rng, seed)
    new_game(hands, bag, gmeta, rng, agents.shape[0], rule_opening)
    while gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:
        moves = take_turn(agents[gmeta[G_CURRENT]], board, cross, anchors, bmeta, hands, bag, gmeta, rng, moves, st, act)
    return moves


@njit(parallel=True)
def run_games(seeds, agents, rule_opening, scores, qwirkles, stats, nchunks):
    """Play ``len(seeds)`` games, ``nchunks`` chunks in parallel, each with its own state.

    Outputs (one row per game): ``scores`` int32[G, P], ``qwirkles`` int16[G, P],
    ``stats`` int32[G, STATS]. The result of a game depends only on its seed.
    """
    ngames = seeds.shape[0]
    players = agents.shape[0]
    for ch in prange(nchunks):
        lo = ch * ngames // nchunks
        hi = (ch + 1) * ngames // nchunks
        board, cross, anchors, bmeta = new_board()
        hands = np.full((MAX_PLAYERS, HAND), -1, np.int8)
        bag = np.zeros(NTILES, np.int8)
        gmeta = np.zeros(GMETA, np.int64)
        rng = np.zeros(2, np.uint64)
        moves = np.zeros((1024, MOVE_COLS), np.int32)
        st = new_scratch_array()
        act = np.zeros(ACT_SIZE, np.int64)
        for g in range(lo, hi):
            moves = play_one(seeds[g], agents, rule_opening, board, cross, anchors, bmeta, hands, bag, gmeta, rng, moves, st, act)
            for p in range(players):
                scores[g, p] = gmeta[G_SCORE + p]
                qwirkles[g, p] = gmeta[G_QWIRKLES + p]
            truncated = gmeta[G_OVER] == 0
            stats[g, S_WINNER] = -1 if truncated else gmeta[G_WINNER]
            stats[g, S_TURNS] = gmeta[G_TURNS]
            stats[g, S_PLACED] = gmeta[G_PLACED]
            stats[g, S_STARTER] = gmeta[G_STARTER]
            stats[g, S_TRUNCATED] = 1 if truncated else 0
