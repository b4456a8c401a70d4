"""The policies: random, greedy and heuristic choices, and the heuristic's reply search.

An agent is a *spec*: a float64 row ``[id, p1, p2, ...]`` (``SPEC_COLS`` wide) whose
parameters, their defaults and ranges are the agent's entry in
:data:`.layout.AGENT_PARAMS`; kernels read them by name (``spec[P_HEUR_DANGER]``).
:func:`choose` is the choice of the agents that do not search; the heuristic's reply
search (:func:`reply_choose`) and the Monte Carlo agent (:mod:`.mc`) are dispatched by
:func:`.agents.take_turn`. Every choice is written into the game state's action word
(:mod:`.actions`) and draws only from the agents' stream (``rng[R_AGENTS]``).
"""

import numpy as np
from numba import types

from ._jit import External, keep, njit
from .actions import apply_action, apply_placement, fallback, set_fallback, set_place
from .board import (
    EMPTY,
    LX,
    NSHIFT,
    line_direction,
    line_points,
    lowest_bit_index,
    place_in_slot,
    popcount,
    scan_run,
    take_back_slot,
)
from .layout import (
    A_KIND,
    A_N,
    A_POINTS,
    A_QWIRKLES,
    A_TILE,
    B_ANCHORS,
    DEFAULT_SPECS,
    EXCHANGE,
    G_BAG,
    G_CURRENT,
    G_HAND,
    G_OPENING,
    G_OVER,
    G_PLAYERS,
    G_TURNS,
    GREEDY,
    HEURISTIC,
    M_CELL,
    M_N,
    M_SCORE,
    M_TILE,
    MAX_SAMPLES,
    MOVE_COLS,
    P_HEUR_BREADTH,
    P_HEUR_CYCLE,
    P_HEUR_DANGER,
    P_HEUR_DUP,
    P_HEUR_FITS,
    P_HEUR_FOLLOW,
    P_HEUR_GROUP,
    P_HEUR_HORIZON,
    P_HEUR_OUT,
    P_HEUR_REPLY,
    P_HEUR_SAMPLES,
    P_HEUR_SETUP,
    P_STATIC_DANGER,
    P_STATIC_EXCHANGE,
    P_STATIC_FITS,
    P_STATIC_FOLLOW,
    P_STATIC_LEAVE,
    P_STATIC_LEAVES,
    P_STATIC_SETUP,
    R_AGENTS,
    RANDOM,
    SPEC_COLS,
    SPEC_ID,
    STATIC,
)
from .leaves import MAX_LEAVE, kept_values, leave_tables
from .movegen import generate, generate_all
from .rng import below
from .state import HAND, NUM_TILE_TYPES, hand_mask, hidden_tiles, largest_group, opening_len, unseen_counts


@njit
def best_index(values, n, rng):
    """Index of the largest of ``values[:n]``, ties broken uniformly with one draw
    from the agents' stream (only when there is a tie)."""
    top = values[0]
    for i in range(1, n):
        top = max(top, values[i])
    ties = 0
    for i in range(n):
        ties += values[i] == top
    r = below(rng, R_AGENTS, ties) if ties > 1 else 0
    chosen = -1
    for i in range(n):
        if chosen < 0 and values[i] == top:
            if r == 0:
                chosen = i
            r -= 1
    keep(values, rng)
    return max(chosen, 0)


@njit
def _line_chances(p_other, leave, allowed, fits):
    """Risk and promise of one line of 4 or 5 whose missing tiles are ``allowed`` and
    of which ``fits`` fit an open end (see :func:`_open_lines`)."""
    risk = 0.0
    counts = False
    if popcount(allowed) == 1:  # a line of 5: its one missing tile, if it fits an end
        if fits:
            risk = p_other[lowest_bit_index(fits)]
            counts = True
    elif fits == allowed:  # a line of 4: both missing tiles, each fitting an end
        risk = 1.0
        rest = allowed
        while rest:
            low = rest & -rest
            risk *= p_other[lowest_bit_index(low)]
            rest ^= low
        counts = True
    keep(p_other)
    return risk, (1.0 - risk if counts and allowed & leave == allowed else 0.0)


@njit(inline="always")  # into heuristic_fill_given: a call per placement cost a third of its time
def _open_lines(board, cross, moves, m, leave, p_other):
    """Risk and promise of the lines of 4 and 5 through placement ``m`` of a move
    buffer (for two tiles or more they are on ``board``, ``cross`` is still from
    before the placement).

    Such a line becomes a Qwirkle once its missing tiles (1 or 2) are added at its
    open ends. The next player holds a tile t with probability ``p_other[t]``
    (independently, as an estimate). Returns (expected Qwirkles the next player can
    complete, Qwirkles the mover can complete next turn with its ``leave`` (tile
    set) if the next player does not first). The end cells' masks are those from
    before the placement (an estimate). Lines across the placement are measured from
    the cross words and walked only when they have 4 or 5 tiles.
    """
    k = moves[m, M_N]
    d = line_direction(k, moves[m, M_CELL], moves[m, M_CELL + min(k - 1, 1)])
    risk = 0.0
    promise = 0.0
    for i in range(k + 1):
        j = max(i - 1, 0)
        cell = moves[m, M_CELL + j]
        dd = d if i == 0 else 1 - d
        if i > 0 or k == 1:
            n = 1 + (cross[cell, dd] >> NSHIFT)
            if n < 4 or n > 5:
                continue
        left, n_left, a = scan_run(board, cell, dd, -1)
        right, n_right, b = scan_run(board, cell, dd, 1)
        n = 1 + n_left + n_right
        if n < 4 or n > 5:
            continue
        allowed = LX[moves[m, M_TILE + j]] & left & right
        r, pr = _line_chances(p_other, leave, allowed, allowed & (cross[a, 1 - dd] | cross[b, 1 - dd]))
        risk += r
        promise += pr
    keep(board, cross, moves, p_other)
    return risk, promise


HEURISTIC_WORK = 2 * NUM_TILE_TYPES + 4  # float64 scratch of heuristic_fill


@njit(_nrt=False)  # no reference counts: see :mod:`._kernels` (it returns nothing, allocates nothing)
def heuristic_fill(board, cross, anchors, bmeta, hands, bag, gmeta, moves, n, spec, values, work):
    """Heuristic value of each of the ``n`` placements, into ``values[:n]``.

    value = points + cycle * (tiles placed) + group * (largest group in the leave)
    - dup * (duplicate tiles in the leave) - danger * (expected Qwirkles handed to the
    next player) + setup * (Qwirkles the mover could make next turn with its leave) +
    follow * (the best single-tile score a leave tile has on the board now) + fits *
    (distinct leave tiles that fit somewhere on the board now) + out * (1 if it
    places the whole hand with the bag empty: it goes out); see :func:`_open_lines`.
    The group and dup terms count only while the bag has tiles. (``reply``,
    ``breadth``, ``horizon`` and ``samples`` are used by :func:`reply_choose` late in
    the game.) ``work`` is a float64 scratch of HEURISTIC_WORK values (nothing is
    allocated per turn).
    """
    p_other = work[:NUM_TILE_TYPES]
    p_copies = work[2 * NUM_TILE_TYPES :]
    p = gmeta[G_CURRENT]
    total = unseen_counts(hands, bag, gmeta, p, p_other)  # the counts first, in place
    # Chance that the next player's h tiles, drawn from the U unseen ones, hold at least
    # one of the u copies of a tile: 1 - C(U - u, h) / C(U, h) (exact, hypergeometric;
    # 0 or 1 once the bag is empty and the unseen tiles are that hand); u is 0..3.
    h = gmeta[G_HAND + (p + 1) % gmeta[G_PLAYERS]]
    for u in range(4):
        miss = 1.0
        for i in range(h):
            miss *= max(total - u - i, 0) / max(total - i, 1)
        p_copies[u] = 1.0 - miss
    for t in range(NUM_TILE_TYPES):
        p_other[t] = p_copies[int(p_other[t])]
    heuristic_fill_given(board, cross, anchors, bmeta, hands, bag, gmeta, moves, n, spec, values, work)


@njit(inline="always")  # into heuristic_fill (the tile game's code as before the split) and cubes.heuristic_fill
def heuristic_fill_given(board, cross, anchors, bmeta, hands, bag, gmeta, moves, n, spec, values, work):
    """:func:`heuristic_fill` with the next player's chances given: ``work[:NUM_TILE_TYPES]``
    holds the chance that the next player holds each tile (Qwirkle Cubes reckons it from
    the open hands); the rest of ``work`` is scratch."""
    w_group, w_dup, w_danger = spec[P_HEUR_GROUP], spec[P_HEUR_DUP], spec[P_HEUR_DANGER]
    w_setup, w_follow, w_cycle, w_fits = spec[P_HEUR_SETUP], spec[P_HEUR_FOLLOW], spec[P_HEUR_CYCLE], spec[P_HEUR_FITS]
    w_out = spec[P_HEUR_OUT]
    p_other = work[:NUM_TILE_TYPES]
    follow = work[NUM_TILE_TYPES : 2 * NUM_TILE_TYPES]
    p = gmeta[G_CURRENT]
    # The hand as a tile set, and the tiles it holds twice or more.
    hand = 0
    dups = 0
    size = gmeta[G_HAND + p]
    for i in range(size):
        bit = 1 << hands[p, i]
        dups |= hand & bit
        hand |= bit
    # The best single-tile score each hand tile has on the board now: a leave's
    # follow-up is the best of its tiles'.
    rest = hand
    while rest:
        low = rest & -rest
        follow[lowest_bit_index(low)] = 0.0
        rest ^= low
    fitmask = 0
    for i in range(bmeta[B_ANCHORS]):
        a = anchors[i]
        fits = cross[a, 0] & cross[a, 1] & hand
        fitmask |= fits
        if fits:
            points = float(line_points(1 + (cross[a, 0] >> NSHIFT)) + line_points(1 + (cross[a, 1] >> NSHIFT)))
            while fits:
                low = fits & -fits
                t = lowest_bit_index(low)
                follow[t] = max(follow[t], points)
                fits ^= low
    bag_left = gmeta[G_BAG] > 0
    for m in range(n):
        k = moves[m, M_N]
        leave = hand
        for j in range(k):
            t = moves[m, M_TILE + j]
            if not (dups >> t) & 1:
                leave ^= 1 << t
            if k > 1:  # the placement's own line is walked on the board
                board[moves[m, M_CELL + j]] = t
        v = float(moves[m, M_SCORE]) + w_cycle * k
        if k == size and not bag_left:  # it goes out: the game ends, with 6 more points
            v += w_out
        if bag_left:
            # Identical tiles never share a line: each extra copy in the leave is dead weight.
            v -= w_dup * (size - k - popcount(leave))
            if w_group != 0.0:
                v += w_group * largest_group(leave)
        if leave:
            best = -1.0
            rest = leave
            while rest:
                low = rest & -rest
                best = max(best, follow[lowest_bit_index(low)])
                rest ^= low
            v += w_follow * best
            if w_fits != 0.0:
                v += w_fits * popcount(leave & fitmask)
        risk, promise = _open_lines(board, cross, moves, m, leave, p_other)
        v += w_setup * promise - w_danger * risk
        values[m] = v
        if k > 1:
            for j in range(k):
                board[moves[m, M_CELL + j]] = EMPTY
    keep(board, cross, anchors, bmeta, hands, bag, gmeta, moves, spec, values, work, p_other, follow)
    return values


@njit(inline="always")  # a thin wrapper: one level less to re-optimise (see _jit)
def heuristic_values(gs, moves, n, spec, values):
    """:func:`heuristic_fill` for a game state (its scratch made here)."""
    work = np.empty(HEURISTIC_WORK, np.float64)
    heuristic_fill(gs.board, gs.cross, gs.anchors, gs.bmeta, gs.hands, gs.bag, gs.gmeta, moves, n, spec, values, work)
    return values


@njit
def simple_turn(agent, reply, horizon, bag, replies):
    """Whether an agent (its id, and for the heuristic its ``reply`` and ``horizon``
    parameters) plays this turn as a simple policy: random, greedy, or the heuristic --
    unless ``replies`` and its reply search is due (``bag`` tiles in the bag)."""
    if agent == HEURISTIC:
        return not (replies and reply > 0 and bag <= horizon)
    return agent == RANDOM or agent == GREEDY


@njit
def play_turns(
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
    until,
    replies,
    heuristic,
    static,
):
    """Play the turns of simple policies on a game's arrays: the current seat's agent
    is ``specs[seat % len(specs)]`` (float64[k, SPEC_COLS]), until the game is over,
    its turn counter reaches ``until``, or the agent to play does not play a simple
    turn (:func:`simple_turn`; ``replies``: the heuristic's reply search counts as a
    search). ``heuristic``: True to play the heuristic too; None for a loop of random and
    greedy agents only, which then does not compile the heuristic (numba prunes a branch
    on an argument that is None before typing it, never one on a literal True or False;
    a False still works, but compiles the heuristic). ``static``: likewise True to play
    the static agent (its leave table bound, :func:`.leaves.bind_leaves`), None to
    compile none of it. Returns the move buffer and
    ``values`` (grown together when a position has more moves than they hold).

    Random: uniform over placements, else a random exchange. Greedy: the best score,
    ties broken at random (it lists only the best-scoring placements: the same choice,
    cheaper), else exchange as many tiles as the bag allows. Heuristic: the best
    :func:`heuristic_fill` value (``work``: HEURISTIC_WORK values), else like greedy.

    The turns are played in this one loop and its callees free nothing and keep
    their arrays to their one exit (:func:`._jit.keep`), so numba counts no array
    references per turn.
    """
    players = specs.shape[0]
    while gmeta[G_OVER] == 0 and gmeta[G_TURNS] < until:
        row = gmeta[G_CURRENT] % players
        agent = int(specs[row, SPEC_ID])
        plays_static = static is not None and static and agent == STATIC
        if not (
            plays_static
            or simple_turn(agent, specs[row, P_HEUR_REPLY], specs[row, P_HEUR_HORIZON], gmeta[G_BAG], replies)
        ):
            break
        greedy = agent == GREEDY
        hand = hand_mask(hands, gmeta, gmeta[G_CURRENT])
        n = generate(board, cross, anchors, bmeta, hand, opening_len(gmeta), moves, st, greedy)
        if n > moves.shape[0] or (
            ((heuristic is not None and heuristic) or (static is not None and static)) and n > values.shape[0]
        ):  # room, then again
            moves, values = np.zeros((2 * n, MOVE_COLS), np.int32), np.zeros(2 * n, np.float64)
            continue
        if static is not None and static and plays_static:  # None: pruned before typing
            index, lvalues = leave_tables(int(specs[row, P_STATIC_LEAVES]))
            sscratch = new_static_scratch()
            static_choose(
                specs[row],
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
        elif n == 0:
            fallback(hands, gmeta, rng, act, agent != RANDOM)
        elif agent == RANDOM:
            set_place(act, moves, below(rng, R_AGENTS, n))
        elif greedy:  # all of the same score: best_index's tie-break
            set_place(act, moves, below(rng, R_AGENTS, n) if n > 1 else 0)
        elif heuristic is not None and heuristic:  # None: pruned before typing (no heuristic compiled)
            heuristic_fill(board, cross, anchors, bmeta, hands, bag, gmeta, moves, n, specs[row], values, work)
            set_place(act, moves, best_index(values, n, rng))
        if n and not plays_static:
            apply_placement(board, cross, anchors, bmeta, hands, bag, gmeta, act)
        else:  # the static agent may exchange though it could place
            apply_action(board, cross, anchors, bmeta, hands, bag, gmeta, rng, act)
    return moves, values


HEURISTIC_FILL = External("policies.heuristic_fill", lambda *args: types.none)
""":func:`choose`'s call of :func:`heuristic_fill` (a playout policy of the heuristic):
not linked into the search's playouts (:class:`._jit.External`), which then compile
no heuristic unless a search plays out with it; :func:`bind_heuristic_fill` points it
at its machine code."""
_heuristic_fill = HEURISTIC_FILL.call  # what kernels call (numba types no External)


def bind_heuristic_fill(argtypes):
    """Point :func:`choose`'s calls of :func:`heuristic_fill` at its machine code in this
    process, compiled for the numba types ``argtypes`` that its caller passes (or loaded
    from the disk cache): before a playout plays the heuristic policy (it raises
    RuntimeError otherwise). Cheap once done."""
    if HEURISTIC_FILL.cell[1] == 0:
        HEURISTIC_FILL.bind(heuristic_fill, argtypes)


@njit(_nrt=False)  # no reference counts: see :mod:`._kernels`
def choose(
    spec, board, cross, anchors, bmeta, hands, bag, gmeta, rng, act, moves, n, values, work, index, lvalues, sscratch
):
    """The action of the one-pass policy ``spec`` (random, greedy, heuristic, or static
    with its leave table bound) for the current player of a game's arrays into its
    action word ``act``: the choice :func:`play_turns` makes (its loop has it inline),
    for callers that play one turn at a time (the search agent's playouts).
    ``moves[:n]``: the legal placements, for greedy only the best-scoring ones
    (``legal_moves(..., best_only=True)``);
    ``values``: float64[>= n]; ``work``: HEURISTIC_WORK values; ``index``, ``lvalues``
    and ``sscratch``: :func:`static_choose`'s (read by the static policy alone). The
    arrays are passed one by one, like :func:`play_turns`'s (see :mod:`.actions`).
    The heuristic is called unlinked: :func:`bind_heuristic_fill` before it plays."""
    agent = int(spec[SPEC_ID])
    if agent == STATIC:
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
    elif n == 0:
        fallback(hands, gmeta, rng, act, agent != RANDOM)
    elif agent == RANDOM:
        set_place(act, moves, below(rng, R_AGENTS, n))
    elif agent == GREEDY:  # all of the same score: best_index's tie-break
        set_place(act, moves, below(rng, R_AGENTS, n) if n > 1 else 0)
    else:  # the heuristic, unlinked (HEURISTIC_FILL: bound when a search plays out with it)
        _heuristic_fill(board, cross, anchors, bmeta, hands, bag, gmeta, moves, n, spec, values, work)
        set_place(act, moves, best_index(values, n, rng))


@njit
def _best_reply(gs, hand, size, exact, moves):
    """The best points the next player could score with the tile set ``hand`` (of
    ``size`` tiles), +6 for going out when ``exact`` (the bag is empty). Returns
    ``(points, moves)``."""
    moves, n = generate_all(
        gs.board, gs.cross, gs.anchors, gs.bmeta, hand, np.int64(0), moves, gs.gen_scratch, np.bool_(False)
    )
    best = 0
    for i in range(n):
        best = max(best, moves[i, M_SCORE] + (6 if exact and moves[i, M_N] == size else 0))
    return best, moves


@njit
def reply_choose(spec, gs, moves, n, values, smoves, undo):
    """The heuristic agent late in the game (bag size <= ``horizon``): its ``breadth``
    best placements are also charged ``reply`` times the next player's best reply (its
    points, +6 if it goes out). Once the bag is empty the next hand is known exactly;
    before that the reply is averaged over ``samples`` hands dealt from the unseen
    tiles, the same ones for every candidate (at most MAX_SAMPLES, whatever the spec
    says). Each candidate is put on the board and taken back (no copy of the
    position)."""
    board, cross, anchors, bmeta, hands, gmeta, rng = (
        gs.board,
        gs.cross,
        gs.anchors,
        gs.bmeta,
        gs.hands,
        gs.gmeta,
        gs.rng,
    )
    if n == 0:
        set_fallback(gs, True)
        return
    heuristic_values(gs, moves, n, spec, values)
    order = np.argsort(-values[:n], kind="mergesort")[: max(int(spec[P_HEUR_BREADTH]), 1)]
    player = gmeta[G_CURRENT]
    nxt = (player + 1) % gmeta[G_PLAYERS]
    size = gmeta[G_HAND + nxt]
    exact = gmeta[G_BAG] == 0
    samples = 1 if exact else min(max(int(spec[P_HEUR_SAMPLES]), 1), MAX_SAMPLES)
    # The hands to try: the real one when exact, else deals from the unseen tiles.
    pool = np.empty(gs.bag.shape[0], np.int64)
    npool = hidden_tiles(hands, gs.bag, gmeta, player, pool)
    trial = np.zeros(samples, np.int64)
    for j in range(samples):
        if exact:
            trial[j] = hand_mask(hands, gmeta, nxt)
        else:
            for i in range(min(size, npool)):
                k = i + below(rng, R_AGENTS, npool - i)
                pool[i], pool[k] = pool[k], pool[i]
                trial[j] |= 1 << pool[i]
    cells = np.empty(6, np.int64)
    tiles = np.empty(6, np.int64)
    adjusted = np.empty(order.shape[0], np.float64)
    for c in range(order.shape[0]):
        m = moves[order[c], M_N]
        for i in range(m):
            cells[i] = moves[order[c], M_CELL + i]
            tiles[i] = moves[order[c], M_TILE + i]
        place_in_slot(board, cross, anchors, bmeta, cells, tiles, m, undo[0], undo[1], undo[2], undo[3], np.int64(0))
        total = 0.0
        if not (exact and m == gmeta[G_HAND + player]):  # going out ends the game
            for j in range(samples):
                best, smoves = _best_reply(gs, trial[j], size, exact, smoves)
                total += best
        take_back_slot(board, cross, anchors, bmeta, cells, m, undo[0], undo[1], undo[2], undo[3], np.int64(0))
        adjusted[c] = values[order[c]] - spec[P_HEUR_REPLY] * total / samples
    set_place(gs.act, moves, order[best_index(adjusted, order.shape[0], rng)])


@njit
def static_fill(
    board, cross, anchors, bmeta, hands, bag, gmeta, moves, n, hspec, values, work, index, lvalues, kv, slot, w_leave
):
    """The static agent's value of each of the ``n`` placements, into ``values[:n]``:
    :func:`.policies.heuristic_fill` with the heuristic spec ``hspec`` (points, +6 for
    going out, the Qwirkle risk and setup terms) plus ``w_leave`` times the learned
    value of the leave (:func:`kept_values`' ``kv`` and ``slot``)."""
    heuristic_fill(board, cross, anchors, bmeta, hands, bag, gmeta, moves, n, hspec, values, work)
    full = (1 << gmeta[G_HAND + gmeta[G_CURRENT]]) - 1
    for m in range(n):
        used = 0
        for j in range(moves[m, M_N]):
            used |= slot[moves[m, M_TILE + j]]
        values[m] += w_leave * kv[full ^ used]
    keep(board, cross, anchors, bmeta, hands, bag, gmeta, moves, hspec, values, work, index, lvalues, kv, slot)


@njit
def exchange_choice(hands, gmeta, index, lvalues, kv, w_leave, best_value, act):
    """Compare the exchanges (every subset of the hand, of at most as many tiles as the
    bag holds, in the order of their bit masks over the hand's slots) with
    ``best_value`` (the best placement's value; -inf for none): an exchange is worth
    ``w_leave`` times its leave's value (:func:`kept_values`' ``kv``). Writes the first
    best exchange into ``act`` when it is worth more than ``best_value``. Returns the
    best value: ``best_value``, or the exchange's when it wrote one."""
    p = gmeta[G_CURRENT]
    size = gmeta[G_HAND + p]
    bagn = gmeta[G_BAG]
    full = (1 << size) - 1
    best_mask = 0
    for mask in range(1, 1 << size):
        k = 0
        for i in range(size):
            k += (mask >> i) & 1
        if k > bagn or size - k > MAX_LEAVE:
            continue
        v = w_leave * kv[full ^ mask]
        if v > best_value:
            best_value = v
            best_mask = mask
    if best_mask:
        k = 0
        for i in range(size):
            if (best_mask >> i) & 1:
                act[A_TILE + k] = hands[p, i]
                k += 1
        act[A_KIND] = EXCHANGE
        act[A_N] = k
        act[A_POINTS] = 0
        act[A_QWIRKLES] = 0
    keep(hands, gmeta, index, lvalues, kv, act)
    return best_value


@njit
def new_static_scratch():
    """The static agent's scratch ``(kv, slot, hspec)``: :func:`kept_values`' float64[64]
    and int64[NUM_TILE_TYPES + 64], and a heuristic spec row float64[SPEC_COLS]
    (:func:`static_heuristic_spec`). Made once by the callers of :func:`static_choose`,
    so that it allocates nothing (the playouts' kernels may not)."""
    return (
        np.empty(1 << HAND, np.float64),
        np.zeros(NUM_TILE_TYPES + (1 << HAND), np.int64),
        np.zeros(SPEC_COLS, np.float64),
    )


@njit
def static_heuristic_spec(spec, hspec):
    """Into ``hspec`` (float64[SPEC_COLS]) the heuristic spec row whose
    :func:`heuristic_fill` the static agent's values add the learned leave to: the
    static spec ``spec``'s ``danger``, ``setup``, ``follow`` and ``fits``, and 6 points
    for going out."""
    for i in range(hspec.shape[0]):  # element by element: no runtime (see :func:`choose`)
        hspec[i] = 0.0
    hspec[SPEC_ID] = HEURISTIC
    hspec[P_HEUR_DANGER] = spec[P_STATIC_DANGER]
    hspec[P_HEUR_SETUP] = spec[P_STATIC_SETUP]
    hspec[P_HEUR_FOLLOW] = spec[P_STATIC_FOLLOW]
    hspec[P_HEUR_FITS] = spec[P_STATIC_FITS]
    hspec[P_HEUR_OUT] = 6.0


@njit
def static_choose(
    spec, board, cross, anchors, bmeta, hands, bag, gmeta, rng, act, moves, n, values, work, index, lvalues, sscratch
):
    """The static agent's action into ``act``: the placement of the best
    :func:`static_fill` value (ties broken at random, agents' stream), or (parameter
    ``exchange``, or no placement) the exchange whose leave is worth more; a pass with
    nothing else. ``moves[:n]`` every legal placement; ``values`` float64[>= n];
    ``work`` HEURISTIC_WORK values; ``index`` and ``lvalues`` the leave table
    (:func:`.leaves.leave_tables`); ``sscratch`` :func:`new_static_scratch`'s. The
    weights go to :func:`heuristic_fill` as a heuristic spec made here."""
    kv, slot, hspec = sscratch
    static_heuristic_spec(spec, hspec)
    w_leave = spec[P_STATIC_LEAVE]
    kept_values(hands, gmeta, index, lvalues, kv, slot)
    best = -np.inf
    if n:
        static_fill(
            board,
            cross,
            anchors,
            bmeta,
            hands,
            bag,
            gmeta,
            moves,
            n,
            hspec,
            values,
            work,
            index,
            lvalues,
            kv,
            slot,
            w_leave,
        )
        i = best_index(values, n, rng)
        set_place(act, moves, i)
        best = values[i]
    exchanged = False
    if gmeta[G_BAG] > 0 and gmeta[G_OPENING] == 0 and (n == 0 or spec[P_STATIC_EXCHANGE] != 0):
        exchanged = exchange_choice(hands, gmeta, index, lvalues, kv, w_leave, best, act) > best
    if n == 0 and not exchanged:
        fallback(hands, gmeta, rng, act, True)
    keep(
        spec, board, cross, anchors, bmeta, hands, bag, gmeta, rng, act, moves, values, work, hspec, index, lvalues, kv
    )


@njit
def default_static_values(gs, moves, n, values, work, sscratch, table):
    """The static agent's values with its default weights and the leave table of slot
    ``table`` (:func:`.leaves.leave_slot`): of the ``n`` placements ``moves[:n]`` into
    ``values[:n]`` (:func:`static_fill`), and of keeping each set of hand slots into
    ``sscratch``'s ``kv`` (:func:`kept_values`, unweighted), for the exchanges. ``work``:
    HEURISTIC_WORK values; ``sscratch``: :func:`new_static_scratch`'s. Returns the
    table read ``(index, lvalues)``."""
    spec = DEFAULT_SPECS[STATIC]
    index, lvalues = leave_tables(table)
    kv, slot, hspec = sscratch
    kept_values(gs.hands, gs.gmeta, index, lvalues, kv, slot)
    if n:
        static_heuristic_spec(spec, hspec)
        static_fill(
            gs.board,
            gs.cross,
            gs.anchors,
            gs.bmeta,
            gs.hands,
            gs.bag,
            gs.gmeta,
            moves,
            n,
            hspec,
            values,
            work,
            index,
            lvalues,
            kv,
            slot,
            spec[P_STATIC_LEAVE],
        )
    return index, lvalues
