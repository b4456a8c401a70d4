"""The batch loop: many complete games in parallel, one row of results per game."""

import numpy as np
from numba import prange

from ._jit import njit
from .actions import new_state
from .agents import new_agent_scratch, searches, take_turn
from .board import clear_board
from .layout import (
    G_CURRENT,
    G_OVER,
    G_PLACED,
    G_QWIRKLES,
    G_SCORE,
    G_STARTER,
    G_TURNS,
    G_WINNER,
    S_PLACED,
    S_STARTER,
    S_TRUNCATED,
    S_TURNS,
    S_WINNER,
    STATS,  # noqa: F401  (re-exported: the Python layer sizes the stats array with it)
)
from .rng import game_seed, seed_streams
from .state import MAX_TURNS, new_game


@njit
def seeds_for(batch_seed, start, count):
    """uint64[count]: the seeds of games ``start .. start+count-1`` of a batch."""
    out = np.empty(count, np.uint64)
    for i in range(count):
        out[i] = game_seed(batch_seed, start + i)
    return out


@njit
def play_one(seed, specs, rule_opening, gs, moves, scratch):
    """Play one game from ``seed`` to the end, seat p played by ``specs[p]``.

    Returns the (maybe grown) move buffer.
    """
    gmeta = gs.gmeta
    clear_board(gs.board, gs.cross, gs.anchors, gs.bmeta)
    seed_streams(gs.rng, seed)
    new_game(gs.hands, gs.bag, gmeta, gs.rng, specs.shape[0], rule_opening)
    while gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:
        moves = take_turn(specs[gmeta[G_CURRENT]], gs, moves, scratch)
    return moves


@njit(parallel=True)
def run_games(seeds, specs, rule_opening, scores, qwirkles, stats, nchunks):
    """Play ``len(seeds)`` games, ``nchunks`` chunks in parallel, each with its own state.

    ``specs``: float64[players, SPEC_COLS], one agent spec per seat. Outputs (one row
    per game): ``scores`` int32[G, P], ``qwirkles`` int16[G, P], ``stats``
    int32[G, STATS] (columns ``S_*`` of :mod:`.layout`). The result of a game depends
    only on its seed.
    """
    ngames = seeds.shape[0]
    players = specs.shape[0]
    search = searches(specs)
    for ch in prange(nchunks):
        gs, moves = new_state()
        scratch = new_agent_scratch(search)
        gmeta = gs.gmeta
        for g in range(ch * ngames // nchunks, (ch + 1) * ngames // nchunks):
            moves = play_one(seeds[g], specs, rule_opening, gs, moves, scratch)
            for p in range(players):
                scores[g, p] = gmeta[G_SCORE + p]
                qwirkles[g, p] = gmeta[G_QWIRKLES + p]
            truncated = gmeta[G_OVER] == 0
            stats[g, S_WINNER] = -1 if truncated else gmeta[G_WINNER]
            stats[g, S_TURNS] = gmeta[G_TURNS]
            stats[g, S_PLACED] = gmeta[G_PLACED]
            stats[g, S_STARTER] = gmeta[G_STARTER]
            stats[g, S_TRUNCATED] = 1 if truncated else 0
