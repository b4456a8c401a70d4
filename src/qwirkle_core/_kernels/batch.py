"""The batch loop: many complete games, one row of results per game.

A batch is played by one of six kernels, the smallest that knows every agent of it
(:func:`kernel_for`), so a batch compiles only the agents it plays: :func:`run_plain`
(random and greedy), :func:`run_heuristic` (and the heuristic, with its reply search),
:func:`run_search` (random, greedy and the search agent), :func:`run_mc` (random,
greedy and Monte Carlo), :func:`run_static` (random, greedy and static) and :func:`run_any` (every agent, through
:func:`.agents.take_turn`). All three play a
game the same way (the same turns as ``Game.play_agent``), so a game's row depends
only on its seed and agents. A kernel plays its games one after the other and releases
the GIL: threads run ranges of a batch side by side (``qwirkle_core.batch.local``).
"""

import numpy as np

from ._jit import njit
from .actions import new_state
from .agents import (
    mc_agent_turn,
    new_agent_scratch,
    search_agent_turn,
    search_turn,
    searches,
    static_agent_turn,
    take_turn,
)
from .board import clear_board
from .layout import (
    G_CURRENT,
    G_OVER,
    G_TURNS,
    GREEDY,
    HEURISTIC,
    MONTE_CARLO,
    RANDOM,
    SEARCH,
    SPEC_ID,
    STATIC,
    STATS,  # noqa: F401  (re-exported: the Python layer sizes the stats array with it)
)
from .policies import play_turns
from .rng import game_seed, seed_streams
from .state import MAX_TURNS, new_game, record_row


@njit
def seeds_for(batch_seed, start, count):
    """uint64[count]: the seeds of games ``start .. start+count-1`` of a batch."""
    out = np.empty(count, np.uint64)
    for i in range(count):
        out[i] = game_seed(batch_seed, start + i)
    return out


@njit(inline="always")  # a thin wrapper: one level less to re-optimise (see _jit)
def _start(gs, seed, players, rule_opening):
    """Set ``gs`` up for a new game from ``seed``."""
    clear_board(gs.board, gs.cross, gs.anchors, gs.bmeta)
    seed_streams(gs.rng, seed)
    new_game(gs.hands, gs.bag, gs.gmeta, gs.rng, players, rule_opening)


@njit(nogil=True)
def run_plain(seeds, specs, rule_opening, scores, qwirkles, stats):
    """Play ``len(seeds)`` games of random and greedy agents, ``specs[p]`` (float64[
    players, SPEC_COLS]) in seat p. Outputs (one row per game): ``scores`` int32[G, P],
    ``qwirkles`` int16[G, P], ``stats`` int32[G, STATS] (columns ``S_*`` of
    :mod:`.layout`). The result of a game depends only on its seed."""
    gs, moves = new_state()
    board, cross, anchors, bmeta, hands, bag, gmeta, rng, st, act = gs
    values = np.zeros(0, np.float64)
    for g in range(seeds.shape[0]):
        _start(gs, seeds[g], specs.shape[0], rule_opening)
        moves, values = play_turns(
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
            values,
            np.int64(MAX_TURNS),
            True,
            None,
        )
        record_row(gmeta, g, scores, qwirkles, stats)


@njit(nogil=True)
def run_heuristic(seeds, specs, rule_opening, scores, qwirkles, stats):
    """:func:`run_plain` for batches with heuristic agents too."""
    gs, moves = new_state()
    board, cross, anchors, bmeta, hands, bag, gmeta, rng, st, act = gs
    scratch = new_agent_scratch(False)
    values, work = scratch.values, scratch.work
    for g in range(seeds.shape[0]):
        _start(gs, seeds[g], specs.shape[0], rule_opening)
        while gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:
            moves, values = play_turns(
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
                np.int64(MAX_TURNS),
                True,
                True,
            )
            if gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:  # a reply search is due
                moves = search_turn(specs[gmeta[G_CURRENT]], gs, moves, scratch, False)
        record_row(gmeta, g, scores, qwirkles, stats)


@njit(nogil=True)
def run_search(seeds, specs, rule_opening, scores, qwirkles, stats):
    """:func:`run_plain` for batches of random, greedy and search agents: it compiles
    the search agent (and its endgame solver) but neither the Monte Carlo agent nor the
    heuristic's reply search (``run_any`` compiles every agent)."""
    gs, moves = new_state()
    board, cross, anchors, bmeta, hands, bag, gmeta, rng, st, act = gs
    scratch = new_agent_scratch(np.bool_(True))
    values, work = scratch.values, scratch.work
    for g in range(seeds.shape[0]):
        _start(gs, seeds[g], specs.shape[0], rule_opening)
        while gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:
            moves, values = play_turns(
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
                np.int64(MAX_TURNS),
                True,
                None,
            )
            if gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:  # the search agent's turn
                moves = search_agent_turn(specs[gmeta[G_CURRENT]], gs, moves, scratch)
        record_row(gmeta, g, scores, qwirkles, stats)


@njit(nogil=True)
def run_mc(seeds, specs, rule_opening, scores, qwirkles, stats):
    """:func:`run_search` for batches of random, greedy and Monte Carlo agents (it
    compiles neither the search agent nor the heuristic's reply search)."""
    gs, moves = new_state()
    board, cross, anchors, bmeta, hands, bag, gmeta, rng, st, act = gs
    scratch = new_agent_scratch(np.bool_(False))
    values, work = scratch.values, scratch.work
    for g in range(seeds.shape[0]):
        _start(gs, seeds[g], specs.shape[0], rule_opening)
        while gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:
            moves, values = play_turns(
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
                np.int64(MAX_TURNS),
                True,
                None,
            )
            if gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:  # the Monte Carlo agent's turn
                moves = mc_agent_turn(specs[gmeta[G_CURRENT]], gs, moves, scratch)
        record_row(gmeta, g, scores, qwirkles, stats)


@njit(nogil=True)
def run_static(seeds, specs, rule_opening, scores, qwirkles, stats):
    """:func:`run_search` for batches of random, greedy and static agents (the leave
    table bound: :func:`.leaves.bind_leaves`)."""
    gs, moves = new_state()
    board, cross, anchors, bmeta, hands, bag, gmeta, rng, st, act = gs
    scratch = new_agent_scratch(np.bool_(False))
    values, work = scratch.values, scratch.work
    for g in range(seeds.shape[0]):
        _start(gs, seeds[g], specs.shape[0], rule_opening)
        while gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:
            moves, values = play_turns(
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
                np.int64(MAX_TURNS),
                True,
                None,
            )
            if gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:  # the static agent's turn
                moves = static_agent_turn(specs[gmeta[G_CURRENT]], gs, moves, scratch)
        record_row(gmeta, g, scores, qwirkles, stats)


@njit(nogil=True)
def run_any(seeds, specs, rule_opening, scores, qwirkles, stats):
    """:func:`run_plain` for batches with any agents (each turn through
    :func:`.agents.take_turn`)."""
    gs, moves = new_state()
    scratch = new_agent_scratch(searches(specs))
    gmeta = gs.gmeta
    for g in range(seeds.shape[0]):
        _start(gs, seeds[g], specs.shape[0], rule_opening)
        while gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:
            moves = take_turn(specs[gmeta[G_CURRENT]], gs, moves, scratch)
        record_row(gmeta, g, scores, qwirkles, stats)


def kernel_for(specs):
    """The batch kernel for the agents of ``specs`` (spec rows, one per seat): the
    smallest that knows every agent of them."""
    agents = {int(row[SPEC_ID]) for row in specs}
    if agents <= {RANDOM, GREEDY}:
        return run_plain
    if agents <= {RANDOM, GREEDY, HEURISTIC}:
        return run_heuristic
    if agents <= {RANDOM, GREEDY, SEARCH}:
        return run_search
    if agents <= {RANDOM, GREEDY, MONTE_CARLO}:
        return run_mc
    if agents <= {RANDOM, GREEDY, STATIC}:
        return run_static
    return run_any


def run_games(seeds, specs, rule_opening, scores, qwirkles, stats):
    """Play the games of ``seeds`` with the kernel :func:`kernel_for` picks (see
    :func:`run_plain` for the arguments)."""
    kernel_for(specs)(seeds, specs, rule_opening, scores, qwirkles, stats)
