"""The search agent: exact endgames, and a determinized Monte Carlo search before them.

Once the bag is empty in a two-player game, the agent plays the move of the exact
endgame solver (:mod:`.endgame`) run within its budget. Before that (and in games of
3 to 6 players, to the end) it runs a determinized Monte Carlo search over the best
moves by its evaluation (``eval``):

- Candidates: with ``eval`` ``learned`` (the default), the ``candidates`` moves of
  the highest static value (:func:`rank_learned`: the static agent's points, learned
  leave values and Qwirkle terms), the exchange whose kept tiles are worth most
  competing with the placements while the bag has tiles; with ``eval`` ``heuristic``
  (the search before the learned values), the ``candidates`` placements of the highest
  heuristic value (:func:`.policies.heuristic_values` with the heuristic's default
  weights). Best first. A lone candidate is played without a search; with none the
  agent exchanges (or passes) like greedy.
- Playouts: determinize (the tiles the mover cannot see are dealt afresh, as in
  :mod:`.mc`), apply the candidate, let ``policy`` (random, greedy, heuristic or
  static: :func:`.policies.choose`) play every seat for ``depth`` turns
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
from numba import objmode, types

from . import endgame
from ._jit import External, copy_into, njit
from .actions import apply_action, legal_moves, new_state, set_fallback, set_place
from .board import new_undo_stack, place_in_slot, take_back_slot
from .endgame import MOVE_CAP, W_BEST_ROW, new_workspace
from .layout import (
    A_CELL,
    A_KIND,
    A_N,
    A_POINTS,
    A_QWIRKLES,
    A_TILE,
    CAND_COLS,
    DEFAULT_SPECS,
    EVAL_HEURISTIC,
    EVAL_LEARNED,
    EVAL_NET,
    G_BAG,
    G_CURRENT,
    G_OPENING,
    G_OVER,
    G_PLAYERS,
    G_SCORE,
    G_TURNS,
    GREEDY,
    HEURISTIC,
    M_SCORE,
    MAX_CANDIDATES,
    MOVE_COLS,
    P_HEUR_CYCLE,
    P_HEUR_DUP,
    P_HEUR_FITS,
    P_HEUR_GROUP,
    P_HEUR_OUT,
    P_SEARCH_BUDGET,
    P_SEARCH_CANDIDATES,
    P_SEARCH_DEPTH,
    P_SEARCH_EVAL,
    P_SEARCH_FINISH,
    P_SEARCH_LEAVES,
    P_SEARCH_OUTLOOK,
    P_SEARCH_PCYCLE,
    P_SEARCH_PDUP,
    P_SEARCH_PFITS,
    P_SEARCH_PGROUP,
    P_SEARCH_POLICY,
    P_SEARCH_POUT,
    P_SEARCH_SOLVER,
    P_SEARCH_TEMPO,
    P_SEARCH_TIME,
    P_SEARCH_WEIGHTS,
    P_SEARCH_WIN,
    P_STATIC_LEAVE,
    P_STATIC_LEAVES,
    PLACE,
    POLICY_AUTO,
    R_AGENTS,
    R_GAME,
    SPEC_ID,
    STATIC,
)
from .leaves import bind_leaves, leave_tables
from .mc import board_tiles, candidates_from_values, determinize, margin, playout_seed, reset_sim
from .movegen import generate, generate_all
from .net import bind_net, new_net_scratch, rank_net
from .policies import (
    bind_heuristic_fill,
    choose,
    default_static_values,
    exchange_choice,
    heuristic_values,
    new_static_scratch,
)
from .rng import mix64, next_u64
from .scoring import qwirkles_made
from .state import MAX_TURNS, NTILES, after_placement, hand_mask, opening_len

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

SearchScratch = namedtuple("SearchScratch", "undo placed stats order endgame static")
SearchScratch.__doc__ = """The search agent's scratch, one per thread: ``undo`` the undo
logs of a playout's placements (:func:`.board.new_undo_stack`, a slot per
placement), ``placed`` int64[SLOTS, 7] each placement's tile
count and cells, ``stats`` float64[MAX_CANDIDATES, 2] each candidate's playouts and
value sum, ``order`` int64[MAX_CANDIDATES] the candidates still in the race, best
first, ``endgame`` the solver's workspace (:func:`.endgame.new_workspace`) and
``static`` the static agent's scratch (:func:`.policies.new_static_scratch`: the
learned ranking's and the static playout policy's)."""


@njit
def new_search_scratch(full):
    """A :class:`SearchScratch` (about 4 MB); with ``full`` False a minimal one of the
    same types (a thread whose agents never search)."""
    slots = SLOTS if full else 1
    undo = new_undo_stack(slots)
    ws = new_workspace(np.int64(TT_BITS if full else 1), np.int64(MOVE_CAP if full else 1))  # one specialisation
    return SearchScratch(
        undo,
        np.zeros((slots, 7), np.int64),
        np.zeros((MAX_CANDIDATES, 2), np.float64),
        np.zeros(MAX_CANDIDATES, np.int64),
        ws,
        new_static_scratch(),
    )


@njit(nogil=False)  # object mode takes the GIL anyway
def now():
    """Seconds on a monotonic clock (object mode: about 0.4 us a call)."""
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


@njit(_nrt=False)  # no reference counts: see :mod:`._kernels`
def _apply(
    board, cross, anchors, bmeta, hands, bag, gmeta, rng, act, logs, anchors_copies, bmeta_copies, counts, placed, k
):
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
def _play(
    policy,
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
    index,
    lvalues,
    sscratch,
    until,
    logs,
    anchors_copies,
    bmeta_copies,
    counts,
    placed,
    k,
):
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
        choose(
            policy,
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
        k = _apply(
            board,
            cross,
            anchors,
            bmeta,
            hands,
            bag,
            gmeta,
            rng,
            act,
            logs,
            anchors_copies,
            bmeta_copies,
            counts,
            placed,
            k,
        )
    return k, 0


@njit
def _best_score(sim, moves, player):
    """``(points, moves)``: the most ``player``'s hand could score on ``sim``'s board
    now (0 without a placement), and the maybe grown move buffer."""
    gmeta = sim.gmeta
    hand = hand_mask(sim.hands, gmeta, player)
    moves, n = generate_all(
        sim.board, sim.cross, sim.anchors, sim.bmeta, hand, opening_len(gmeta), moves, sim.gen_scratch, np.bool_(True)
    )
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
def playout(sim, moves, values, work, cand, policy, depth, seed, ss, outlook, tempo, win):
    """One playout of candidate ``cand`` (an action word) from ``sim`` (a copy of the
    root; its board is left as it was, its hands, bag and counters are not); ``work``:
    the heuristic's scratch (HEURISTIC_WORK values).

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
    determinize(hands, bag, gmeta, player, rng, R_AGENTS)
    root_turn = gmeta[G_TURNS]
    copy_into(act, cand)
    k = _apply(
        board,
        cross,
        anchors,
        bmeta,
        hands,
        bag,
        gmeta,
        rng,
        act,
        logs,
        anchors_copies,
        bmeta_copies,
        counts,
        placed,
        np.int64(0),
    )
    index, lvalues = leave_tables(int(policy[P_STATIC_LEAVES]) if int(policy[SPEC_ID]) == STATIC else 0)
    start = gmeta[G_TURNS]
    until = root_turn + MAX_TURNS if depth == 0 else min(root_turn + MAX_TURNS, start + depth)
    while True:
        k, more = _play(
            policy,
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
            index,
            lvalues,
            ss.static,
            until,
            logs,
            anchors_copies,
            bmeta_copies,
            counts,
            placed,
            k,
        )
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
        take_back_slot(
            board, cross, anchors, bmeta, placed[i, 1:], placed[i, 0], logs, anchors_copies, bmeta_copies, counts, i
        )
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


@njit(inline="always")  # a thin wrapper: one level less to re-optimise (see _jit)
def rank_candidates(gs, moves, n, values, limit, out):
    """The ``limit`` placements of ``moves[:n]`` of the highest heuristic value (the
    heuristic's default weights) as action rows of ``out``, best first; returns their
    number (0 when n is 0)."""
    if n == 0:
        return 0
    heuristic_values(gs, moves, n, DEFAULT_SPECS[HEURISTIC].copy(), values)  # a writable row: the batches' type
    return candidates_from_values(moves, n, values, limit, out)


@njit
def rank_learned(gs, moves, n, values, limit, out, work, sscratch, table=0):
    """The ``limit`` best moves by the static agent's values (its default parameters:
    points, the learned value of the tiles kept, the Qwirkle risk and setup terms;
    :func:`.policies.static_fill`) as action rows of ``out``, best first: the
    placements of ``moves[:n]`` and, while the bag has tiles after the opening, the
    exchange whose kept tiles are worth most, in its place by value when that is among
    the best ``limit`` (ties: after the placements). ``values``: float64[>= n];
    ``work``: HEURISTIC_WORK values; ``sscratch``: :func:`.policies.new_static_scratch`'s;
    ``table``: the leave table's slot (:func:`.leaves.leave_slot`). Returns their number (0:
    no placement and no exchange)."""
    w_leave = DEFAULT_SPECS[STATIC][P_STATIC_LEAVE]
    hands, gmeta = gs.hands, gs.gmeta
    index, lvalues = default_static_values(gs, moves, n, values, work, sscratch, table)
    kv = sscratch[0]
    cap = min(limit, out.shape[0])
    k = 0
    if n:
        k = candidates_from_values(moves, n, values, cap, out)
    if gmeta[G_BAG] > 0 and gmeta[G_OPENING] == 0:
        ex = np.zeros(out.shape[1], out.dtype)
        v = exchange_choice(hands, gmeta, index, lvalues, kv, w_leave, -np.inf, ex)
        if v > -np.inf:
            at = 0  # the placements worth at least as much go first
            for m in range(n):
                if values[m] >= v:
                    at += 1
            if at < cap:
                k = min(k + 1, cap)
                for c in range(k - 1, at, -1):
                    copy_into(out[c], out[c - 1])
                copy_into(out[at], ex)
    return k


@njit
def _policy(spec, out):
    """The playout policy's spec row into ``out``: its default parameters, except that
    a heuristic policy takes its ``cycle``, ``fits``, ``group``, ``dup`` and ``out``
    from the search's ``pcycle``, ``pfits``, ``pgroup``, ``pdup`` and ``pout``, and a
    static policy its ``leaves`` from the search's. The policy ``auto`` is the heuristic
    with ``eval`` heuristic, else static."""
    policy = int(spec[P_SEARCH_POLICY])
    if policy == POLICY_AUTO:
        policy = HEURISTIC if spec[P_SEARCH_EVAL] == EVAL_HEURISTIC else STATIC
    copy_into(out, DEFAULT_SPECS[policy])
    if policy == STATIC:
        out[P_STATIC_LEAVES] = spec[P_SEARCH_LEAVES]
    if policy == HEURISTIC:
        out[P_HEUR_CYCLE] = spec[P_SEARCH_PCYCLE]
        out[P_HEUR_FITS] = spec[P_SEARCH_PFITS]
        out[P_HEUR_GROUP] = spec[P_SEARCH_PGROUP]
        out[P_HEUR_DUP] = spec[P_SEARCH_PDUP]
        out[P_HEUR_OUT] = spec[P_SEARCH_POUT]


SOLVE = External("endgame.solve", lambda *args: types.UniTuple(types.int64, 5))
"""The search's call of :func:`.endgame.solve`: not linked into the kernels above it
(:class:`._jit.External`), which :func:`bind_search` points at the solver."""
PLAYOUT = External("search.playout", lambda *args: types.Tuple((types.float64, types.int64, args[1], args[2])))
"""The search's call of :func:`playout`, likewise."""
RANK_NET = External("net.rank_net", lambda *args: types.int64)
"""The search's call of :func:`.net.rank_net` (``eval`` ``net``), likewise: the default
search never scores moves with the net, so its kernels do not compile the scorer (the
move list and the network); :func:`bind_rank_net` points it at the scorer."""
RANK_LEARNED = External("search.rank_learned", lambda *args: types.int64)
"""The search's call of :func:`rank_learned` (``eval`` ``learned``, the default),
likewise: the static agent's values are compiled once, with the playouts (whose
static policy shares them), not again into every kernel above the search;
:func:`bind_search` points it at its machine code."""
RANK_HEURISTIC = External("search.rank_candidates", lambda *args: types.int64)
"""The search's call of :func:`rank_candidates` (``eval`` ``heuristic``), likewise: the
default search does not compile the heuristic's values (:func:`bind_heuristic`)."""
_solve, _playout = SOLVE.call, PLAYOUT.call  # what kernels call (numba types no External)
_rank_learned, _rank_net, _rank_heuristic = RANK_LEARNED.call, RANK_NET.call, RANK_HEURISTIC.call


def playout_types():
    """The numba types of :func:`playout`'s arguments as the kernels pass them."""
    import numba

    sim, moves = new_state()
    ss = new_search_scratch(np.bool_(False))
    args = (sim, moves, np.zeros(1), np.zeros(1), np.zeros(1, np.int64), np.zeros(1))
    return (*map(numba.typeof, args), types.int64, types.uint64, numba.typeof(ss), *[types.float64] * 3)


def solve_types():
    """The numba types of :func:`.endgame.solve`'s arguments as the search passes them."""
    import numba

    gs, _ = new_state()
    ws = new_search_scratch(np.bool_(False)).endgame
    board = (gs.board, gs.cross, gs.anchors, gs.bmeta, gs.hands, gs.gmeta)
    return (numba.typeof(ws), *map(numba.typeof, board), types.int64, types.float64)


def rank_learned_types():
    """The numba types of :func:`rank_learned`'s arguments as the search passes them."""
    import numba

    gs, moves = new_state()
    floats = numba.typeof(np.zeros(1))
    cands = numba.typeof(np.zeros((MAX_CANDIDATES, CAND_COLS), np.int64))
    static = numba.typeof(new_static_scratch())
    return (numba.typeof(gs), numba.typeof(moves), types.int64, floats, types.int64, cands, floats, static, types.int64)


def rank_net_types():
    """The numba types of :func:`.net.rank_net`'s arguments as the search passes them."""
    import numba

    gs, _ = new_state()
    cands = np.zeros((MAX_CANDIDATES, CAND_COLS), np.int64)
    return (types.int64, numba.typeof(gs), numba.typeof(new_net_scratch()), types.int64, numba.typeof(cands))


def bind_rank_net():
    """Point the search's calls of :func:`.net.rank_net` (``eval`` ``net``) at its machine
    code in this process (compiled, or loaded from the disk cache) and bind the shipped
    weights (:func:`.net.bind_net`): before a kernel plays a search with ``eval`` ``net``
    (it raises RuntimeError otherwise). Cheap once done."""
    bind_net()
    if RANK_NET.cell[1] == 0:
        RANK_NET.bind(rank_net, rank_net_types())


def uses_heuristic(spec):
    """Whether the search agent's spec row ``spec`` ranks its candidates with the
    heuristic (``eval`` ``heuristic``) or plays its playouts with it (``policy``
    ``heuristic``, or ``auto`` with ``eval`` ``heuristic``)."""
    return spec[P_SEARCH_EVAL] == EVAL_HEURISTIC or int(spec[P_SEARCH_POLICY]) == HEURISTIC


def heuristic_types():
    """The numba types of :func:`rank_candidates`' arguments as the search passes them,
    and of :func:`.policies.heuristic_fill`'s as the playouts' policy passes them."""
    import numba

    gs, moves = new_state()
    board = tuple(map(numba.typeof, (gs.board, gs.cross, gs.anchors, gs.bmeta, gs.hands, gs.bag, gs.gmeta)))
    floats = numba.typeof(np.zeros(1))
    cands = numba.typeof(np.zeros((MAX_CANDIDATES, CAND_COLS), np.int64))
    mtype = numba.typeof(moves)
    rank = (numba.typeof(gs), mtype, types.int64, floats, types.int64, cands)
    fill = (*board, mtype, types.int64, floats, floats, floats)
    return rank, fill


def bind_heuristic():
    """Point the search's unlinked calls of the heuristic (:func:`rank_candidates` for
    ``eval`` ``heuristic``, :func:`.policies.heuristic_fill` for playouts of the
    heuristic policy) at their machine code in this process (compiled, or loaded from
    the disk cache): before a kernel plays a search that :func:`uses_heuristic`, or
    plays out candidates with the heuristic (it raises RuntimeError otherwise). Cheap
    once done."""
    if RANK_HEURISTIC.cell[1] == 0:
        rank, fill = heuristic_types()
        RANK_HEURISTIC.bind(rank_candidates, rank)
        bind_heuristic_fill(fill)


def bind_search(solver=True):
    """Point the search agent's calls of :func:`playout`, of :func:`rank_learned` and
    (``solver``) of the endgame solver at their machine code in this process, compiling them for the types the
    kernels pass or loading them from the disk cache, and bind the leave table that its
    learned evaluation reads (:func:`.leaves.bind_leaves`): before a kernel that may play
    the search agent runs (it raises RuntimeError otherwise). Cheap once done."""
    bind_leaves()
    if PLAYOUT.cell[1] == 0:
        PLAYOUT.bind(playout, playout_types())
    if RANK_LEARNED.cell[1] == 0:
        RANK_LEARNED.bind(rank_learned, rank_learned_types())
    if solver and SOLVE.cell[1] == 0:
        SOLVE.bind(endgame.solve, solve_types())


@njit(inline="always")  # a thin wrapper: one level less to re-optimise (see _jit)
def _endgame(spec, gs, ss):
    """The solver's move within the budget, into ``gs.act`` (two players, empty bag)."""
    time_ms = spec[P_SEARCH_TIME]
    if spec[P_SEARCH_BUDGET] == CLOCK:
        _solve(ss.endgame, gs.board, gs.cross, gs.anchors, gs.bmeta, gs.hands, gs.gmeta, np.int64(0), time_ms)
    else:
        _solve(
            ss.endgame,
            gs.board,
            gs.cross,
            gs.anchors,
            gs.bmeta,
            gs.hands,
            gs.gmeta,
            max(int(time_ms * NODES_PER_MS), 1),
            0.0,
        )
    row = ss.endgame[W_BEST_ROW]
    set_place(gs.act, row.reshape((1, MOVE_COLS)), np.int64(0))  # not a literal: one specialisation


@njit
def _better(stats, a, b):
    """Whether candidate ``a``'s mean playout value is above ``b``'s."""
    return stats[a, 1] * stats[b, 0] > stats[b, 1] * stats[a, 0]


@njit(inline="always")  # into its callers: one library less to re-optimise (see _jit)
def search_choose(spec, gs, moves, n, values, scratch):
    """The search agent's action for the current player of ``gs`` into ``gs.act``.

    ``moves[:n]`` are the legal placements, ``values`` a float64 scratch of length >=
    n, ``scratch`` the :class:`.layout.AgentScratch` (its sim, root and search scratch
    are used). See the module doc.
    """
    ss = scratch.search
    gmeta = gs.gmeta
    if n and gmeta[G_BAG] == 0 and gmeta[G_PLAYERS] == 2 and spec[P_SEARCH_SOLVER] != 0:
        _endgame(spec, gs, ss)
        return
    cands = scratch.root.cands
    if spec[P_SEARCH_EVAL] == EVAL_NET:
        k = _rank_net(int(spec[P_SEARCH_WEIGHTS]), gs, scratch.net, int(spec[P_SEARCH_CANDIDATES]), cands)
    elif spec[P_SEARCH_EVAL] == EVAL_LEARNED:
        k = _rank_learned(
            gs,
            moves,
            n,
            values,
            int(spec[P_SEARCH_CANDIDATES]),
            cands,
            scratch.work,
            ss.static,
            int(spec[P_SEARCH_LEAVES]),
        )
    else:  # unlinked: the default search compiles no heuristic (bind_heuristic)
        k = _rank_heuristic(gs, moves, n, values, int(spec[P_SEARCH_CANDIDATES]), cands)
    if k == 0:
        set_fallback(gs, np.bool_(True))  # not a literal: the type play_turns compiles
        return
    if k == 1:
        copy_into(gs.act, cands[0])
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
    _set_root(gs, scratch)
    stats, order = ss.stats, ss.order
    stats[:k] = 0
    for c in range(k):
        order[c] = c
    alive = k
    rounds = 0
    while (1 << rounds) < k:
        rounds += 1
    base = next_u64(gs.rng, R_AGENTS)
    start = now() if clock else 0.0
    used = 0.0
    j = 0
    for r in range(rounds):
        target = start + budget * (r + 1) / rounds if clock else used + (budget - used) / (rounds - r)
        while True:
            seed = playout_seed(base, j)
            j += 1
            for a in range(alive):
                c = order[a]
                _restore(sim, gs)
                m, turns, smoves, svalues = _playout(
                    sim, smoves, svalues, scratch.work, cands[c], policy, depth, seed, ss, outlook, tempo, win
                )
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
    copy_into(gs.act, cands[order[0]])


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
            m, _, smoves, svalues = _playout(
                sim, smoves, svalues, scratch.work, cands[c], policy, depth, s, scratch.search, outlook, tempo, win
            )
            out[c, j] = m


@njit
def engine_candidates(gs, limit, scratch, out):
    """The search's candidates in the position ``gs`` (left unchanged): the ``limit``
    placements of the highest heuristic value as action rows of ``out``, best first;
    returns their number (0 when the player to move cannot place)."""
    moves, n = legal_moves(gs, scratch.sim_moves, np.bool_(False))
    values = scratch.values if scratch.values.shape[0] >= n else np.zeros(n, np.float64)
    return rank_candidates(gs, moves, n, values, limit, out)
