"""The search agent: exact endgames, and a determinized Monte Carlo search before them.

Once the bag is empty in a two-player game, the agent plays the move of the exact
endgame solver (:mod:`.endgame`) run within its budget. Before that (and in games of
3 to 6 players, to the end) it runs a determinized Monte Carlo search over the
heuristic's best placements:

- Candidates: the ``candidates`` placements of the highest heuristic value
  (:func:`.policies.heuristic_values` with the heuristic's default weights), best
  first. A lone candidate is played without a search; with no placement the agent
  exchanges (or passes) like greedy.
- Playouts: determinize (the tiles the mover cannot see are dealt afresh, as in
  :mod:`.mc`), apply the candidate, let ``policy`` play every seat for ``depth`` turns
  (0, or once the bag holds at most ``finish`` tiles: to the end of the game) and
  take the mover's margin (its score minus the best other score) plus, when the game
  goes on, ``outlook`` times the most the mover's hand could score on the board then
  minus its rival's (:func:`next_scores`: a value of the tiles each side holds at
  the horizon) and ``tempo`` times the best next score of the side to move there (it
  plays first: counted for the mover, against its rival). A playout that reaches the
  end of the game counts ``win`` points more when the mover won, ``win`` less when it
  lost (close games are played to be won, not only for margin). Playout j of every
  candidate shares its determinization and random streams (common random numbers).
  Playouts run on a scratch game that is set up once per decision; every placement is
  put down with an undo log and taken back after the playout, so no playout rebuilds
  the board.
- Allocation: sequential halving. The budget is split evenly over ``ceil(log2 k)``
  rounds; in each round every remaining candidate gets the same number of new
  playouts, then the better half (by mean value over all its playouts so far; ties
  keep the heuristic's order) goes on. The last one left is played.

Budget: ``time_ms`` is turned into a fixed amount of work by default (``budget``
``work``): ``WORK_PER_MS`` playout turns per millisecond for the Monte Carlo search,
``NODES_PER_MS`` positions per millisecond for the solver, constants set on this
project's reference machine (one thread) so that a default decision takes about four
fifths of its budget there (40 ms of 50 on average). A decision is then a pure
function of the position and the agents' random stream: batches and records replay
exactly, whatever the machine's speed or load. ``budget`` ``clock`` stops at the true
time instead (the search reads a monotonic clock between playouts; the solver every
256 positions); the moves then depend on the machine's speed and load, so games are
not reproducible.

The agent draws one number from the agents' stream per searched decision (the seed
of its playouts), and none in an endgame or for a lone candidate.
"""

import time
from collections import namedtuple

import numpy as np
from numba import objmode

from ._jit import njit
from .actions import apply_action, legal_moves, new_state, set_fallback, set_place
from .board import cell_of, new_undo_stack, place_in_slot, take_back_slot
from .endgame import MOVE_CAP, W_BEST_ROW, new_workspace, solve
from .layout import (
    A_CELL,
    A_KIND,
    A_N,
    A_POINTS,
    A_QWIRKLES,
    A_TILE,
    B_TILES,
    DEFAULT_SPECS,
    G_BAG,
    G_CURRENT,
    G_HAND,
    G_HISTORY,
    G_OVER,
    G_PLAYERS,
    G_SCORE,
    G_TURNS,
    GREEDY,
    H_CELL,
    H_N,
    H_POINTS,
    H_SEAT,
    H_SIZE,
    H_TILE,
    H_TURN,
    HEURISTIC,
    HISTORY,
    M_SCORE,
    MAX_CANDIDATES,
    MOVE_COLS,
    P_SEARCH_BUDGET,
    P_SEARCH_CANDIDATES,
    P_SEARCH_DEPTH,
    P_SEARCH_FINISH,
    P_SEARCH_INFER,
    P_SEARCH_OUTLOOK,
    P_SEARCH_POLICY,
    P_SEARCH_SOLVER,
    P_SEARCH_TEMPO,
    P_SEARCH_TIME,
    P_SEARCH_WIN,
    PLACE,
    R_AGENTS,
    R_GAME,
    SPEC_ID,
)
from .mc import board_tiles, candidates_from_values, determinize_keeping, margin, playout_seed, reset_sim
from .movegen import generate, generate_all
from .policies import choose, heuristic_values
from .rng import below, mix64, next_u64
from .scoring import qwirkles_made
from .state import HAND, MAX_TURNS, NTILES, after_placement, hand_mask, hidden_tiles, opening_len

WORK_PER_MS = 224.0
"""Playout turns per millisecond of budget (the ``work`` budget of the Monte Carlo
search): with NODES_PER_MS, set so that the default search (``time_ms`` 50) takes
about 40 ms per move on average on the reference machine (one thread), leaving a
fifth of the budget for a slower or loaded machine (docs/agents.md)."""
NODES_PER_MS = 800.0
"""Solver positions per millisecond of budget (the ``work`` budget of the endgame
solver): four fifths of the solver's speed on one thread of the reference machine
(about 950 positions per millisecond)."""
WORK, CLOCK = 0, 1  # values of the budget parameter
TT_BITS = 16  # the solver's table: 2**16 entries (1.5 MB), ample for a move's budget
SLOTS = NTILES + 1  # undo logs: a playout puts down at most one placement per tile
_SALT = np.uint64(0x632BE59BD9B4E019)
_INFER_SALT = np.uint64(0x9E6C63D0676A9A99)
KEPT_ROWS = 128  # inferred sets of the rival's kept tiles per decision (playout j uses row j % KEPT_ROWS)
KEPT_TRIES = 16  # deals tried per set at most; then the likeliest one tried is taken
TRY_WORK = 0.3  # a move generation's cost in playout turns (the work budget): about 1.4 us against 4.5

SearchScratch = namedtuple("SearchScratch", "undo placed stats order endgame kept pool held before")
SearchScratch.__doc__ = """The search agent's scratch, one per thread: ``undo`` the undo
logs of a playout's placements (:func:`.board.new_undo_stack`, a slot per
placement), ``placed`` int64[SLOTS, 7] each placement's tile
count and cells, ``stats`` float64[MAX_CANDIDATES, 2] each candidate's playouts and
value sum, ``order`` int64[MAX_CANDIDATES] the candidates still in the race, best
first, ``endgame`` the solver's workspace (:func:`.endgame.new_workspace`), ``kept``
int8[KEPT_ROWS, HAND] the inferred sets of the rival's kept tiles, ``pool`` int8[NTILES]
the hidden tiles they are drawn from, ``held`` int8[HAND] a sampled hand and
``before`` a game (:class:`.layout.GameState`) holding the board before the rival's
placement before last."""


@njit
def new_search_scratch(full):
    """A :class:`SearchScratch` (about 4 MB); with ``full`` False a minimal one of the
    same types (a thread whose agents never search)."""
    slots = SLOTS if full else 1
    undo = new_undo_stack(slots)
    ws = new_workspace(TT_BITS, MOVE_CAP) if full else new_workspace(1, 1)
    rows = KEPT_ROWS if full else 1
    kept = np.zeros((rows, HAND), np.int8)
    return SearchScratch(undo, np.zeros((slots, 7), np.int64), np.zeros((MAX_CANDIDATES, 2), np.float64), np.zeros(MAX_CANDIDATES, np.int64), ws, kept, np.zeros(NTILES, np.int8), np.zeros(HAND, np.int8), new_state()[0])


@njit(nogil=False)  # object mode takes the GIL anyway
def now():
    """Seconds on a monotonic clock (object mode: about 0.4 us a call)."""
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


@njit(_nrt=False)  # no reference counts: see :mod:`._kernels`
def _apply(board, cross, anchors, bmeta, hands, bag, gmeta, rng, act, logs, anchors_copies, bmeta_copies, counts, placed, k):
    """Apply the action word ``act`` of a game's arrays; a placement is logged in slot
    ``k`` of the undo stack (``logs`` ... ``counts``) and ``placed`` (its tile count
    and cells). Returns the number of placements on the board after it."""
    if act[A_KIND] != PLACE:
        apply_action(board, cross, anchors, bmeta, hands, bag, gmeta, rng, act)
    else:
        n = act[A_N]
        placed[k, 0] = n
        for j in range(n):
            placed[k, 1 + j] = act[A_CELL + j]
        cells = placed[k, 1:]
        tiles = act[A_TILE:]
        place_in_slot(board, cross, anchors, bmeta, cells, tiles, n, logs, anchors_copies, bmeta_copies, counts, k)
        act[A_QWIRKLES] = qwirkles_made(board, cells, n)
        after_placement(hands, bag, gmeta, tiles, n, act[A_POINTS], act[A_QWIRKLES])
        k += 1
    return k


@njit(_nrt=False)  # no reference counts: see :mod:`._kernels`
def _play(policy, board, cross, anchors, bmeta, hands, bag, gmeta, rng, st, act, moves, values, work, until, logs, anchors_copies, bmeta_copies, counts, placed, k):
    """Let ``policy`` play every seat until the game is over or its turn counter
    reaches ``until``, each placement logged from slot ``k`` on (:func:`_apply`): the
    playouts' turn loop. Returns ``(k, n)``: the placements logged, and 0 or, when a
    position has more moves than ``moves`` or ``values`` hold, their number (the
    caller grows both and calls again: the position is as it was)."""
    best_only = int(policy[SPEC_ID]) == GREEDY
    while gmeta[G_OVER] == 0 and gmeta[G_TURNS] < until:
        hand = hand_mask(hands, gmeta, gmeta[G_CURRENT])
        n = generate(board, cross, anchors, bmeta, hand, opening_len(gmeta), moves, st, best_only)
        if n > moves.shape[0] or n > values.shape[0]:
            return k, n
        choose(policy, board, cross, anchors, bmeta, hands, bag, gmeta, rng, act, moves, n, values, work)
        k = _apply(board, cross, anchors, bmeta, hands, bag, gmeta, rng, act, logs, anchors_copies, bmeta_copies, counts, placed, k)
    return k, 0


@njit
def _best_score(sim, moves, player):
    """``(points, moves)``: the most ``player``'s hand could score on ``sim``'s board
    now (0 without a placement), and the maybe grown move buffer."""
    gmeta = sim.gmeta
    return _most(sim, hand_mask(sim.hands, gmeta, player), opening_len(gmeta), moves)


@njit
def _most(sim, hand, opening, moves):
    """``(points, moves)``: the most the tiles of the mask ``hand`` could score on
    ``sim``'s board (``opening``: :func:`.state.opening_len`; 0 without a placement),
    and the maybe grown move buffer."""
    moves, n = generate_all(sim.board, sim.cross, sim.anchors, sim.bmeta, hand, opening, moves, sim.gen_scratch, np.bool_(True))
    return (moves[0, M_SCORE] if n else 0), moves


@njit
def next_scores(sim, moves, player):
    """``(mine, theirs, rival, moves)``: the best score ``player`` could make next on
    ``sim``'s board, the same for its rival, the rival (the other player of the highest
    score, the first of equals), and the maybe grown move buffer."""
    gmeta = sim.gmeta
    rival = np.int64(-1)
    for p in range(gmeta[G_PLAYERS]):
        if p != player and (rival < 0 or gmeta[G_SCORE + p] > gmeta[G_SCORE + rival]):
            rival = p
    mine, moves = _best_score(sim, moves, player)
    theirs, moves = _best_score(sim, moves, rival)
    return float(mine), float(theirs), rival, moves


@njit
def playout(sim, moves, values, work, cand, policy, depth, seed, ss, outlook, tempo, win, seat, kept, k):
    """One playout of candidate ``cand`` (an action word) from ``sim`` (a copy of the
    root; its board is left as it was, its hands, bag and counters are not); ``work``:
    the heuristic's scratch (HEURISTIC_WORK values). The deal keeps seat ``seat``'s
    ``k`` tiles ``kept[:k]`` (:func:`.mc.determinize_keeping`; ``k`` 0: none).

    Returns ``(value, turns, moves, values)``: the mover's margin after ``depth`` turns
    past the candidate (0: at the end of the game; at the latest MAX_TURNS turns after
    the root) plus, when the game goes on, ``outlook`` times the mover's best next
    score minus its rival's (:func:`next_scores`) and ``tempo`` times the best next
    score of the side to move (for the mover, against its rival), or when the game is
    over, ``win`` (the mover ahead) or ``-win`` (behind); the turns played (the
    candidate's included) and the maybe grown buffers. With ``outlook``, ``tempo`` and
    ``win`` 0 the values are exactly the margins of :func:`.mc.playout` for the
    same seed (the same determinization and streams; the undo logs leave the board as
    a rebuilt one).
    """
    board, cross, anchors, bmeta, hands, bag, gmeta, rng, st, act = sim
    logs, anchors_copies, bmeta_copies, counts = ss.undo
    placed = ss.placed
    player = gmeta[G_CURRENT]
    rng[R_GAME] = mix64(np.uint64(seed))
    rng[R_AGENTS] = mix64(np.uint64(seed) ^ _SALT)
    determinize_keeping(hands, bag, gmeta, player, rng, R_AGENTS, seat, kept, k)
    root_turn = gmeta[G_TURNS]
    act[:] = cand
    k = _apply(board, cross, anchors, bmeta, hands, bag, gmeta, rng, act, logs, anchors_copies, bmeta_copies, counts, placed, np.int64(0))
    start = gmeta[G_TURNS]
    until = root_turn + MAX_TURNS if depth == 0 else min(root_turn + MAX_TURNS, start + depth)
    while True:
        k, more = _play(policy, board, cross, anchors, bmeta, hands, bag, gmeta, rng, st, act, moves, values, work, until, logs, anchors_copies, bmeta_copies, counts, placed, k)
        if more == 0:
            break
        moves, values = np.zeros((2 * more, MOVE_COLS), np.int32), np.zeros(2 * more, np.float64)  # room for every move
    turns = gmeta[G_TURNS] - start + 1
    m = float(margin(gmeta, player))
    if gmeta[G_OVER] == 0:
        if outlook != 0.0 or tempo != 0.0:
            mine, theirs, rival, moves = next_scores(sim, moves, player)
            m += outlook * (mine - theirs)
            if gmeta[G_CURRENT] == player:
                m += tempo * mine
            elif gmeta[G_CURRENT] == rival:
                m -= tempo * theirs
    elif m != 0.0:
        m += win if m > 0.0 else -win
    for i in range(k - 1, -1, -1):
        take_back_slot(board, cross, anchors, bmeta, placed[i, 1:], placed[i, 0], logs, anchors_copies, bmeta_copies, counts, i)
    return m, turns, moves, values


@njit
def _set_root(gs, scratch):
    """Make the agent scratch's sim game a copy of ``gs`` (its board put down once)."""
    root = scratch.root
    ntiles = board_tiles(gs.board, gs.bmeta, root.rows, root.cols, root.tiles)
    reset_sim(scratch.sim, root.rows, root.cols, root.tiles, ntiles, gs.hands, gs.bag, gs.gmeta, root.cells)


@njit(_nrt=False)  # no reference counts (20 arrays a playout): see :mod:`._kernels`
def _restore(sim, gs):
    """Reset the playout game ``sim`` to the root ``gs`` (hands, bag, counters; the
    playouts take their placements back). Element by element: a slice copy needs
    numba's runtime."""
    for p in range(gs.hands.shape[0]):
        for i in range(gs.hands.shape[1]):
            sim.hands[p, i] = gs.hands[p, i]
    for i in range(gs.bag.shape[0]):
        sim.bag[i] = gs.bag[i]
    for i in range(gs.gmeta.shape[0]):
        sim.gmeta[i] = gs.gmeta[i]


@njit
def rank_candidates(gs, moves, n, values, limit, out):
    """The ``limit`` placements of ``moves[:n]`` of the highest heuristic value (the
    heuristic's default weights) as action rows of ``out``, best first; returns their
    number (0 when n is 0)."""
    if n == 0:
        return 0
    heuristic_values(gs, moves, n, DEFAULT_SPECS[HEURISTIC].copy(), values)  # a writable row: the batches' type
    return candidates_from_values(moves, n, values, limit, out)


@njit
def _policy(spec, out):
    """The playout policy's spec row (its default parameters) into ``out``."""
    out[:] = DEFAULT_SPECS[int(spec[P_SEARCH_POLICY])]


@njit
def _endgame(spec, gs, ss):
    """The solver's move within the budget, into ``gs.act`` (two players, empty bag)."""
    time_ms = spec[P_SEARCH_TIME]
    if spec[P_SEARCH_BUDGET] == CLOCK:
        solve(ss.endgame, gs.board, gs.cross, gs.anchors, gs.bmeta, gs.hands, gs.gmeta, np.int64(0), time_ms)
    else:
        solve(ss.endgame, gs.board, gs.cross, gs.anchors, gs.bmeta, gs.hands, gs.gmeta, max(int(time_ms * NODES_PER_MS), 1), 0.0)
    row = ss.endgame[W_BEST_ROW]
    set_place(gs.act, row.reshape((1, MOVE_COLS)), 0)


@njit
def _better(stats, a, b):
    """Whether candidate ``a``'s mean playout value is above ``b``'s."""
    return stats[a, 1] * stats[b, 0] > stats[b, 1] * stats[a, 0]


@njit
def _entry(gmeta, turn):
    """The first counter of the history entry (``G_HISTORY``) of the placement after
    which the turn count was ``turn``, or -1 when turn ``turn`` was no placement or is
    no longer remembered."""
    if turn < 1:
        return -1
    e = G_HISTORY + (turn % HISTORY) * H_SIZE
    return e if gmeta[e + H_TURN] == turn and gmeta[e + H_N] > 0 else -1


@njit
def inferable(gs):
    """``(last, prev, k)``: the history entries (:func:`_entry`) of the rival's last
    placement and of its placement before (-1: none), and how many tiles it kept at
    the last; ``(-1, -1, 0)`` when there is nothing to infer. ``last`` is the last
    action when it was a placement on a board that already held tiles (not the
    opening), the bag still holds tiles (so every draw since was full) and its author
    kept some. ``prev`` is the same seat's placement two turns before it (so two
    players only), not the opening."""
    gmeta = gs.gmeta
    t = gmeta[G_TURNS]
    last = _entry(gmeta, t)
    if last < 0 or gmeta[G_BAG] == 0:
        return -1, -1, 0
    seat, n = gmeta[last + H_SEAT], gmeta[last + H_N]
    k = gmeta[G_HAND + seat] - n
    if seat == gmeta[G_CURRENT] or k <= 0 or gs.bmeta[B_TILES] <= n:
        return -1, -1, 0
    prev = _entry(gmeta, t - 2)
    if prev >= 0:
        mid = _entry(gmeta, t - 1)
        under = gs.bmeta[B_TILES] - n - gmeta[prev + H_N] - (gmeta[mid + H_N] if mid >= 0 else 0)
        if gmeta[prev + H_SEAT] != seat or under <= 0:
            prev = -1
    return last, prev, k


@njit
def _board_before(gs, scratch, sim, turn):
    """Make ``sim`` a copy of ``gs`` whose board lacks the placements of the history
    after which the turn count was ``turn`` or more (the board before the first)."""
    root, gmeta = scratch.root, gs.gmeta
    ntiles = board_tiles(gs.board, gs.bmeta, root.rows, root.cols, root.tiles)
    m = 0
    for i in range(ntiles):
        cell = cell_of(root.rows[i], root.cols[i])
        later = False
        for t in range(turn, gmeta[G_TURNS] + 1):
            e = _entry(gmeta, t)
            if e >= 0:
                for q in range(gmeta[e + H_N]):
                    later |= gmeta[e + H_CELL + q] == cell
        if not later:
            root.rows[m], root.cols[m], root.tiles[m] = root.rows[i], root.cols[i], root.tiles[i]
            m += 1
    reset_sim(sim, root.rows, root.cols, root.tiles, m, gs.hands, gs.bag, gmeta, root.cells)


@njit
def _accept(rng, gap, infer):
    """Whether a sampled hand with which a placement scored ``gap`` points below its
    best is kept: always for ``gap`` <= 0, else with probability exp(-``infer`` x gap)."""
    return gap <= 0 or float(next_u64(rng, R_AGENTS) >> np.uint64(11)) * 2.0**-53 < np.exp(-infer * gap)


@njit
def infer_kept(gs, scratch, moves, last, prev, k, infer, seed):
    """Sample KEPT_ROWS sets of the ``k`` tiles the rival kept at its last placement
    (history entry ``last``, :func:`inferable`) into ``scratch.search.kept``.

    Each set is drawn uniformly from the tiles the mover cannot see; with the tiles
    placed it makes the rival's hand at that placement, kept with probability
    exp(-``infer`` x g), g the points the placement scored below the best placement
    of that hand on the board before it. With ``prev`` (its placement before, entry
    ``prev``) a kept hand is then taken back to that placement: the n tiles it drew
    after it are n of the hand's tiles at random (the draws are uniform, so any n are
    equally likely), the tiles it placed then go back in, and the hand is kept again
    with probability exp(-``infer`` x g) of that placement on the board before it. So
    a set's weight is the likelihood of both placements (Bayes' rule with a uniform
    prior). After KEPT_TRIES refused sets the one of the smallest g tried is taken.
    ``seed`` (uint64) seeds the draws. Returns ``(generations, moves)``: the move
    generations run and the maybe grown move buffer."""
    gmeta, ss, sim = gs.gmeta, scratch.search, scratch.sim
    t = gmeta[G_TURNS]
    _board_before(gs, scratch, sim, t)
    if prev >= 0:
        _board_before(gs, scratch, ss.before, t - 2)
    n = gmeta[last + H_N]
    played = 0
    for q in range(n):
        played |= 1 << gmeta[last + H_TILE + q]
    n0 = gmeta[prev + H_N] if prev >= 0 else 0
    earlier = 0
    for q in range(n0):
        earlier |= 1 << gmeta[prev + H_TILE + q]
    pool, held = ss.pool, ss.held
    npool = hidden_tiles(gs.hands, gs.bag, gmeta, gmeta[G_CURRENT], pool)
    rng = sim.rng
    rng[R_AGENTS] = mix64(seed ^ _INFER_SALT)
    runs = 0
    for row in range(KEPT_ROWS):
        least = 1 << 30
        for _ in range(KEPT_TRIES):
            hand = played
            for q in range(k):  # a uniform k-subset of the pool: pool[:k]
                j = q + below(rng, R_AGENTS, npool - q)
                pool[q], pool[j] = pool[j], pool[q]
                hand |= 1 << pool[q]
            best, moves = _most(sim, hand, np.int64(0), moves)
            runs += 1
            gap = best - gmeta[last + H_POINTS]
            accept = _accept(rng, gap, infer)
            if accept and prev >= 0:
                for q in range(n):
                    held[q] = gmeta[last + H_TILE + q]
                for q in range(k):
                    held[n + q] = pool[q]
                hand = earlier
                for q in range(n + k):  # held[:n0]: the tiles drawn since the placement before
                    if q < n0:
                        j = q + below(rng, R_AGENTS, n + k - q)
                        held[q], held[j] = held[j], held[q]
                    else:
                        hand |= 1 << held[q]
                best, moves = _most(ss.before, hand, np.int64(0), moves)
                runs += 1
                gap0 = best - gmeta[prev + H_POINTS]
                accept = _accept(rng, gap0, infer)
                gap += gap0
            if accept or gap < least:
                least = gap
                for q in range(k):
                    ss.kept[row, q] = pool[q]
            if accept:
                break
    return runs, moves


@njit
def search_choose(spec, gs, moves, n, values, scratch):
    """The search agent's action for the current player of ``gs`` into ``gs.act``.

    ``moves[:n]`` are the legal placements, ``values`` a float64 scratch of length >=
    n, ``scratch`` the :class:`.layout.AgentScratch` (its sim, root and search scratch
    are used). See the module doc.
    """
    ss = scratch.search
    gmeta = gs.gmeta
    if n == 0:
        set_fallback(gs, True)
        return
    if gmeta[G_BAG] == 0 and gmeta[G_PLAYERS] == 2 and spec[P_SEARCH_SOLVER] != 0:
        _endgame(spec, gs, ss)
        return
    cands = scratch.root.cands
    k = rank_candidates(gs, moves, n, values, int(spec[P_SEARCH_CANDIDATES]), cands)
    if k == 1:
        gs.act[:] = cands[0]
        return
    clock = spec[P_SEARCH_BUDGET] == CLOCK
    budget = spec[P_SEARCH_TIME] * (1e-3 if clock else WORK_PER_MS)
    depth = int(spec[P_SEARCH_DEPTH])
    outlook, tempo, win = spec[P_SEARCH_OUTLOOK], spec[P_SEARCH_TEMPO], spec[P_SEARCH_WIN]
    if gmeta[G_BAG] <= spec[P_SEARCH_FINISH]:
        depth = 0  # the rest of the game is short
    policy = scratch.root.policy
    _policy(spec, policy)
    sim, smoves, svalues = scratch.sim, scratch.sim_moves, scratch.sim_values
    base = next_u64(gs.rng, R_AGENTS)
    start = now() if clock else 0.0
    used = 0.0
    last, prev, kept = inferable(gs) if spec[P_SEARCH_INFER] > 0 else (-1, -1, 0)
    seat = gmeta[last + H_SEAT] if kept else -1
    if kept:
        runs, smoves = infer_kept(gs, scratch, smoves, last, prev, kept, spec[P_SEARCH_INFER], base)
        used = runs * TRY_WORK
    _set_root(gs, scratch)
    stats, order = ss.stats, ss.order
    stats[:k] = 0
    for c in range(k):
        order[c] = c
    alive = k
    rounds = 0
    while (1 << rounds) < k:
        rounds += 1
    j = 0
    for r in range(rounds):
        target = start + budget * (r + 1) / rounds if clock else used + (budget - used) / (rounds - r)
        while True:
            seed = playout_seed(base, j)
            row = ss.kept[j % KEPT_ROWS]
            j += 1
            for a in range(alive):
                c = order[a]
                _restore(sim, gs)
                m, turns, smoves, svalues = playout(sim, smoves, svalues, scratch.work, cands[c], policy, depth, seed, ss, outlook, tempo, win, seat, row, kept)
                stats[c, 0] += 1
                stats[c, 1] += m
                used += turns
            if (now() if clock else used) >= target:
                break
        for a in range(1, alive):  # insertion sort by mean value, ties in heuristic order
            b = a
            while b > 0 and _better(stats, order[b], order[b - 1]):
                order[b], order[b - 1] = order[b - 1], order[b]
                b -= 1
        alive = (alive + 1) // 2
    gs.act[:] = cands[order[0]]


@njit
def evaluate_candidates(gs, cands, k, policy, playouts, depth, seed, scratch, out, outlook=0.0, tempo=0.0, win=0.0):
    """Values of ``playouts`` playouts of each of the ``k`` candidate action words
    ``cands`` from the position ``gs`` (left unchanged) into ``out`` float64[k, >=
    playouts], ``policy`` playing every seat for ``depth`` turns (0: to the end): the
    values of :func:`playout` (with ``outlook``, ``tempo`` and ``win`` 0, the margins).
    Playout j of every candidate shares its determinization and random streams, drawn
    from ``seed`` (uint64). ``scratch``: a :class:`.layout.AgentScratch`."""
    sim, smoves, svalues = scratch.sim, scratch.sim_moves, scratch.sim_values
    _set_root(gs, scratch)
    for j in range(playouts):
        s = playout_seed(seed, j)
        for c in range(k):
            _restore(sim, gs)
            m, _, smoves, svalues = playout(sim, smoves, svalues, scratch.work, cands[c], policy, depth, s, scratch.search, outlook, tempo, win, np.int64(-1), scratch.search.pool, np.int64(0))
            out[c, j] = m


@njit
def engine_candidates(gs, limit, scratch, out):
    """The search's candidates in the position ``gs`` (left unchanged): the ``limit``
    placements of the highest heuristic value as action rows of ``out``, best first;
    returns their number (0 when the player to move cannot place)."""
    moves, n = legal_moves(gs, scratch.sim_moves, np.bool_(False))
    values = scratch.values if scratch.values.shape[0] >= n else np.zeros(n, np.float64)
    return rank_candidates(gs, moves, n, values, limit, out)
