"""The batch loop: many complete games, one row of results per game.

A batch is played by one of seven kernels, the smallest that knows every agent of it
(:func:`kernel_for`), so a batch compiles only the agents it plays: :func:`run_plain`
(random and greedy), :func:`run_heuristic` (and the heuristic, with its reply search),
:func:`run_search` (random, greedy and the search agent), :func:`run_mc` (random,
greedy and Monte Carlo), :func:`run_static` (random, greedy and static), :func:`run_net` (and the
net agent) and :func:`run_any` (every agent, through
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
    CAND_COLS,
    DEFAULT_SPECS,
    EXCHANGE,
    G_BAG,
    G_CURRENT,
    G_HAND,
    G_OVER,
    G_TURNS,
    GREEDY,
    HEURISTIC,
    MAX_CANDIDATES,
    MONTE_CARLO,
    NET,
    P_NET_WEIGHTS,
    P_SEARCH_DEPTH,
    P_SEARCH_FINISH,
    P_SEARCH_OUTLOOK,
    P_SEARCH_TEMPO,
    P_SEARCH_WIN,
    PLACE,
    R_AGENTS,
    RANDOM,
    SEARCH,
    SPEC_ID,
    STATIC,
    STATS,  # noqa: F401  (re-exported: the Python layer sizes the stats array with it)
)
from .leaves import BUCKETS, MAX_LEAVE, SCALE, bucket, rank_without
from .movegen import generate_all
from .movelist import K_MOVES
from .net import net_scores, net_turn, new_net_scratch, set_listed
from .policies import HEURISTIC_WORK, new_static_scratch, play_turns, static_choose
from .rng import below, game_seed, next_u64, seed_streams
from .search import evaluate_candidates
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
def run_net(seeds, specs, rule_opening, scores, qwirkles, stats):
    """:func:`run_static` for batches of random, greedy, static and net agents (the
    weights bound: :func:`.net.bind_net`); the net agent's turns between the turn
    loop's."""
    gs, moves = new_state()
    board, cross, anchors, bmeta, hands, bag, gmeta, rng, st, act = gs
    values = np.zeros(1024, np.float64)
    work = np.zeros(HEURISTIC_WORK, np.float64)
    ns = new_net_scratch()
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
                True,
            )
            if gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:  # the net agent's turn
                net_turn(int(specs[gmeta[G_CURRENT], P_NET_WEIGHTS]), gs, ns)
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
    if agents <= {RANDOM, GREEDY, STATIC, NET}:
        return run_net
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


@njit(nogil=True)
def net_games(
    seeds, players, rule_opening, slot, top, extra, playouts, sspec, xs, vs, gs_out, counts, scores, qwirkles, stats
):
    """Self-play games that record what the move scorer learns from (expert iteration;
    ``qwirkle_core.batch.netlearn``). Every turn of every seat: list the moves and score
    them with the weights of ``slot`` (:func:`.net.net_scores`); the ``top`` best and
    ``extra`` others drawn at random (agents' stream) are the candidates; each gets
    ``playouts`` playouts as the search plays them with its spec ``sspec`` (the static
    agent plays every seat for ``depth`` turns, to the end once the bag holds at most
    ``finish`` tiles; ``outlook``, ``tempo`` and ``win`` as in
    :func:`.search.playout`; common random numbers across the candidates); the
    candidate of the best mean value is played. A turn with one listed move is played
    without a search and records nothing.

    Records, while they fit: each candidate's input row into ``xs`` float32[R, INPUTS],
    its mean playout value into ``vs`` float32[R] and the number of its position in
    this call into ``gs_out`` int32[R]; ``counts`` int64[2] gets the rows and positions
    written. Rows of ``scores``, ``qwirkles``, ``stats`` as in :func:`run_plain`. Each
    game depends only on its seed and the weights."""
    gs, _ = new_state()
    gmeta = gs.gmeta
    scratch = new_agent_scratch(np.bool_(True))
    ns = scratch.net
    policy = DEFAULT_SPECS[STATIC].copy()
    cands = np.zeros((MAX_CANDIDATES, CAND_COLS), np.int64)
    rows = np.zeros(MAX_CANDIDATES, np.int64)
    taken = np.zeros(K_MOVES, np.uint8)
    vals = np.zeros((MAX_CANDIDATES, max(playouts, 1)), np.float64)
    means = np.zeros(MAX_CANDIDATES, np.float64)
    depth0 = int(sspec[P_SEARCH_DEPTH])
    finish = sspec[P_SEARCH_FINISH]
    outlook, tempo, win = sspec[P_SEARCH_OUTLOOK], sspec[P_SEARCH_TEMPO], sspec[P_SEARCH_WIN]
    r = 0
    positions = 0
    for g in range(seeds.shape[0]):
        _start(gs, seeds[g], players, rule_opening)
        while gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:
            count = net_scores(gs, ns, slot)
            moves, kind, scored = ns[1], ns[2], ns[7]
            if count == 1:
                set_listed(gs.act, moves, kind, 0)
                apply_action(gs.board, gs.cross, gs.anchors, gs.bmeta, gs.hands, gs.bag, gmeta, gs.rng, gs.act)
                continue
            for i in range(count):
                taken[i] = 0
            k = 0
            for _ in range(min(top, count, MAX_CANDIDATES)):
                best = -1
                for i in range(count):
                    if taken[i] == 0 and (best < 0 or scored[i] > scored[best]):
                        best = i
                taken[best] = 1
                rows[k] = best
                k += 1
            for _ in range(min(extra, count - k, MAX_CANDIDATES - k)):
                j = below(gs.rng, R_AGENTS, count - k)  # the j-th row not taken
                for i in range(count):
                    if taken[i] == 0:
                        if j == 0:
                            taken[i] = 1
                            rows[k] = i
                            k += 1
                            break
                        j -= 1
            for c in range(k):
                cands[c, :] = 0
                set_listed(cands[c], moves, kind, rows[c])
            depth = 0 if gmeta[G_BAG] <= finish else depth0
            seed = next_u64(gs.rng, R_AGENTS)
            evaluate_candidates(gs, cands, k, policy, playouts, depth, seed, scratch, vals, outlook, tempo, win)
            best = 0
            for c in range(k):
                total = 0.0
                for j in range(playouts):
                    total += vals[c, j]
                means[c] = total / playouts
                if means[c] > means[best]:
                    best = c
            if r + k <= xs.shape[0]:
                for c in range(k):
                    for q in range(xs.shape[1]):
                        xs[r, q] = ns[6][rows[c], q]
                    vs[r] = means[c]
                    gs_out[r] = positions
                    r += 1
                positions += 1
            for q in range(gs.act.shape[0]):
                gs.act[q] = cands[best, q]
            apply_action(gs.board, gs.cross, gs.anchors, gs.bmeta, gs.hands, gs.bag, gmeta, gs.rng, gs.act)
        record_row(gmeta, g, scores, qwirkles, stats)
    counts[0] = r
    counts[1] = positions
