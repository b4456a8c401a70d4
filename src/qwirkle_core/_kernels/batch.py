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
from .actions import apply_action, new_state
from .agents import (
    mc_agent_turn,
    new_agent_scratch,
    search_agent_turn,
    search_turn,
    searches,
    take_turn,
)
from .board import clear_board
from .layout import (
    A_KIND,
    A_N,
    A_POINTS,
    A_TILE,
    EXCHANGE,
    G_BAG,
    G_CURRENT,
    G_HAND,
    G_OVER,
    G_TURNS,
    GREEDY,
    HEURISTIC,
    MONTE_CARLO,
    PLACE,
    RANDOM,
    SEARCH,
    SPEC_ID,
    STATIC,
    STATS,  # noqa: F401  (re-exported: the Python layer sizes the stats array with it)
)
from .leaves import BUCKETS, MAX_LEAVE, SCALE, bucket, rank_without
from .movegen import generate_all
from .policies import HEURISTIC_WORK, new_static_scratch, play_turns, static_choose
from .rng import game_seed, seed_streams
from .state import MAX_TURNS, hand_mask, new_game, opening_len, record_row


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
                None,
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
                None,
            )
            if gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:  # the Monte Carlo agent's turn
                moves = mc_agent_turn(specs[gmeta[G_CURRENT]], gs, moves, scratch)
        record_row(gmeta, g, scores, qwirkles, stats)


@njit(nogil=True)
def run_static(seeds, specs, rule_opening, scores, qwirkles, stats):
    """:func:`run_plain` for batches of random, greedy and static agents (the leave
    table bound: :func:`.leaves.bind_leaves`); the static agent's turns are played in
    the turn loop (:func:`.policies.play_turns`)."""
    gs, moves = new_state()
    board, cross, anchors, bmeta, hands, bag, gmeta, rng, st, act = gs
    values = np.zeros(1024, np.float64)
    work = np.zeros(HEURISTIC_WORK, np.float64)
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
            work,
            np.int64(MAX_TURNS),
            True,
            None,
            True,
        )
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


@njit(nogil=True)
def learn_games(seeds, spec, index, lvalues, rule_opening, sums, counts, scores, qwirkles, stats):
    """Play two-player games of the static agent ``spec`` against itself with the leave
    values ``lvalues`` (float64[BUCKETS * C]) and log what followed each leave a turn
    kept: the mover's next turn's points (+6 for going out) plus the value of the leave
    that turn kept; 0 when the game ended first. Added to ``sums`` int64[BUCKETS, C]
    (in 1/SCALE points) and ``counts`` int64[BUCKETS, C] by the bucket of the bag before
    the turn and the class of the leave. A placement of the whole hand that ends the game
    logs no leave. Rows of ``scores``, ``qwirkles``, ``stats`` as in
    :func:`.batch.run_plain`. Each game depends only on its seed."""
    gs, moves = new_state()
    board, cross, anchors, bmeta, hands, bag, gmeta, rng, st, act = gs
    values = np.zeros(1024, np.float64)
    work = np.zeros(HEURISTIC_WORK, np.float64)
    sscratch = new_static_scratch()
    pend_b = np.full(2, -1, np.int64)
    pend_c = np.full(2, -1, np.int64)
    for g in range(seeds.shape[0]):
        clear_board(board, cross, anchors, bmeta)
        seed_streams(rng, seeds[g])
        new_game(hands, bag, gmeta, rng, 2, rule_opening)
        pend_b[:] = -1
        while gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:
            p = gmeta[G_CURRENT]
            size = gmeta[G_HAND + p]
            b = bucket(gmeta[G_BAG])
            hand = hand_mask(hands, gmeta, p)
            moves, n = generate_all(board, cross, anchors, bmeta, hand, opening_len(gmeta), moves, st, False)
            if values.shape[0] < n:
                values = np.zeros(2 * n, np.float64)
            static_choose(
                spec,
                board,
                cross,
                anchors,
                bmeta,
                hands,
                bag,
                gmeta,
                rng,
                act,
                moves,
                n,
                values,
                work,
                index,
                lvalues,
                sscratch,
            )
            kind = act[A_KIND]
            k = act[A_N] if kind == PLACE or kind == EXCHANGE else 0
            rank = rank_without(hands, p, size, act, A_TILE, k) if size - k <= MAX_LEAVE else -1
            points = act[A_POINTS] if kind == PLACE else 0
            apply_action(board, cross, anchors, bmeta, hands, bag, gmeta, rng, act)
            if kind == PLACE and gmeta[G_HAND + p] == 0:
                points += 6
            follow = points * SCALE
            live = gmeta[G_OVER] == 0 and rank >= 0
            if live:
                follow += np.int64(np.round(lvalues[b * (lvalues.shape[0] // BUCKETS) + index[rank]] * SCALE))
            if pend_b[p] >= 0:
                sums[pend_b[p], pend_c[p]] += follow
                counts[pend_b[p], pend_c[p]] += 1
                pend_b[p] = -1
            if live:
                pend_b[p] = b
                pend_c[p] = index[rank]
        for q in range(2):  # the game ended before these leaves were used: nothing followed
            if pend_b[q] >= 0:
                counts[pend_b[q], pend_c[q]] += 1
        record_row(gmeta, g, scores, qwirkles, stats)
