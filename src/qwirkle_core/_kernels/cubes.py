"""Qwirkle Cubes: the bag of coloured cubes, rolls and re-rolls, the turn of every agent
(with its re-roll policy), the Monte Carlo agent's playouts, and the batch loop.

A cube in a hand or on the board is the tile its top face shows, ``colour * 6 +
shape``, so the board arrays, the move generator and the scorer serve both games as
they are. A Cubes game (``gmeta[G_VARIANT] == CUBES``) differs from the tile game in:

``bag``    the first ``gmeta[G_BAG]`` entries are *colours* 0..5 (15 cubes of each, 90
           in all, at the start). A cube is rolled as it is drawn: the cubes about to
           be drawn get their faces just before the draw (:func:`roll_top`), so
           ``state.draw`` puts faces into the hand.
rolls      every face comes from the game stream (``R_GAME``), one ``below(6)`` per cube,
           in this order: the deal (seat 0's six cubes in drawing order, then seat
           1's...), a re-roll (its cubes in increasing tile order), the refill after a
           placement (in drawing order). So a seed and the actions replay exactly.
the turn   a re-roll of any of the player's cubes, once per turn (``G_REROLLED``),
           then a placement. A player with no placement re-rolls all its cubes, each
           roll one action, until it has one. When no face of any colour it holds fits
           any cell (:func:`stuck`) no roll can help: it swaps its cubes for cubes from
           the bag (:func:`swap`, an exchange of the tile game's kind, allowed only then)
           or, with an empty bag, passes. The game ends when every seat has passed in a
           row, or at once when no colour in the bag or any hand fits any cell
           (:func:`end_if_dead`). Under the largest-group opening the opener re-rolls all
           its cubes until two of them share a colour or a shape (:func:`opening_blocked`).

Agents act one action per call of :func:`take_turn` (the batch loop and
``Game.play_agent`` call it until the seat changes). Their re-roll policies
(:func:`reroll_choice`, measured in docs/agents.md): random re-rolls each cube with
probability 1/2; greedy, the heuristic and mc (as its playout policy) keep the cubes of
a highest-scoring placement and re-roll the others (that placement stays possible, so
the re-roll can only add placements), then choose their placement as in the tile game.
The tile game never runs these kernels, and none of them is compiled into its kernels.
"""

import numpy as np

from ._jit import njit
from .actions import legal_moves, new_state, set_fallback, set_place
from .agents import new_agent_scratch
from .board import COLOR_MASK, clear_board, place_cells
from .layout import (
    A_CELL,
    A_FACE,
    A_KIND,
    A_N,
    A_POINTS,
    A_QWIRKLES,
    A_TILE,
    B_ANCHORS,
    B_TILES,
    CUBES,
    DEFAULT_SPECS,
    EXCHANGE,
    G_BAG,
    G_CURRENT,
    G_HAND,
    G_OPEN_LEN,
    G_OPENING,
    G_OVER,
    G_PLAYERS,
    G_REROLLED,
    G_RULE_OPENING,
    G_TURNS,
    G_VARIANT,
    G_WINNER,
    GREEDY,
    HEURISTIC,
    M_N,
    M_SCORE,
    M_TILE,
    MONTE_CARLO,
    P_MC_CANDIDATES,
    P_MC_DEPTH,
    P_MC_PLAYOUTS,
    P_MC_POLICY,
    PLACE,
    R_AGENTS,
    R_GAME,
    RANDOM,
    REROLL,
    SPEC_ID,
)
from .mc import board_tiles, candidates_from_values, margin, playout_seed, reset_sim
from .policies import best_index, heuristic_fill_given
from .rng import below, mix64, next_u64, seed_streams
from .scoring import qwirkles_made
from .state import (
    HAND,
    MAX_TURNS,
    NUM_TILE_TYPES,
    OPENING_LARGEST_GROUP,
    after_placement,
    draw,
    fill_bag,
    finish_game,
    insert_sorted,
    pass_turn,
    record_row,
    remove_from_hand,
    set_opening,
)

COLORS = 6
PER_COLOR = 15  # cubes of each colour
NCUBES = COLORS * PER_COLOR
FACES = 6
_PLAYOUT_SALT = np.uint64(0x3C6EF372FE94F82B)


# -- the bag, rolls and the game flow ------------------------------------------------------


@njit
def roll(rng, colour):
    """A face of a cube of ``colour``: the tile ``colour * 6 + shape``, shape from the game stream."""
    return colour * FACES + below(rng, R_GAME, FACES)


@njit
def roll_top(bag, gmeta, rng, k):
    """Roll the ``k`` cubes drawn next (the top of the bag, in drawing order, as far as
    it holds): their colours become faces."""
    for i in range(min(k, gmeta[G_BAG])):
        j = gmeta[G_BAG] - 1 - i
        bag[j] = roll(rng, bag[j])


@njit
def new_game(hands, bag, gmeta, rng, players, rule_opening):
    """Shuffle the 90 cubes (game stream), deal six to each seat, rolled as they are
    drawn, and set up the opening: seat 0 opens (``rng`` must already be seeded)."""
    gmeta[:] = 0
    hands[:] = -1
    fill_bag(bag, NCUBES, PER_COLOR, rng)
    gmeta[G_PLAYERS] = players
    gmeta[G_BAG] = NCUBES
    gmeta[G_RULE_OPENING] = rule_opening
    gmeta[G_WINNER] = -2
    gmeta[G_VARIANT] = CUBES
    for p in range(players):
        roll_top(bag, gmeta, rng, HAND)
        draw(hands, bag, gmeta, p, HAND)
    set_opening(hands, gmeta, 0)


@njit
def book_placement(hands, bag, gmeta, rng, tiles, n, score, qwirkles):
    """``state.after_placement`` for Cubes: the cubes drawn to refill the hand are rolled
    as they are drawn, and the next player's re-roll is unused. Returns the points."""
    p = gmeta[G_CURRENT]
    roll_top(bag, gmeta, rng, HAND - gmeta[G_HAND + p] + n)
    gmeta[G_REROLLED] = 0
    return after_placement(hands, bag, gmeta, tiles, n, score, qwirkles)


@njit
def reroll(hands, gmeta, rng, tiles, n, faces):
    """Re-roll the current player's cubes that show ``tiles[:n]`` (all held; sorted in
    place): each gets a new face of its colour, in increasing tile order, written to
    ``faces[:n]``. The turn's re-roll is then used; during the opening the length the
    opening must have follows the new hand."""
    p = gmeta[G_CURRENT]
    for i in range(1, n):
        insert_sorted(tiles, i, tiles[i])
    for i in range(n):
        remove_from_hand(hands, gmeta, p, tiles[i])
    for i in range(n):
        faces[i] = roll(rng, tiles[i] // FACES)
        insert_sorted(hands[p], gmeta[G_HAND + p], faces[i])
        gmeta[G_HAND + p] += 1
    gmeta[G_REROLLED] = 1
    if gmeta[G_OPENING]:
        set_opening(hands, gmeta, p)


@njit
def pass_stuck(gmeta):
    """A pass (legal only when :func:`stuck` with an empty bag); the next player's
    re-roll is unused."""
    pass_turn(gmeta)
    gmeta[G_REROLLED] = 0


@njit
def swap(hands, bag, gmeta, rng, tiles, n):
    """The current player (:func:`stuck`) gives back the cubes showing ``tiles[:n]``
    (held, n <= the bag's cubes; sorted in place) and draws as many, rolled as they are
    drawn; then the given-back cubes go into the bag as colours, in increasing tile
    order, each to a uniformly random place (game stream), as the tile game's exchange.
    Ends the turn; the next player's re-roll is unused."""
    p = gmeta[G_CURRENT]
    size = gmeta[G_HAND + p]
    for i in range(1, n):
        insert_sorted(tiles, i, tiles[i])
    for i in range(n):
        remove_from_hand(hands, gmeta, p, tiles[i])
    roll_top(bag, gmeta, rng, n)
    draw(hands, bag, gmeta, p, size)
    for i in range(n):
        k = gmeta[G_BAG]
        j = below(rng, R_GAME, k + 1)
        bag[k] = bag[j]
        bag[j] = tiles[i] // FACES
        gmeta[G_BAG] = k + 1
    gmeta[G_TURNS] += 1
    gmeta[G_CURRENT] = (p + 1) % gmeta[G_PLAYERS]
    gmeta[G_REROLLED] = 0


@njit
def end_if_dead(cross, anchors, bmeta, hands, bag, gmeta):
    """End the game (no bonus) if no face of any colour in the bag or in any hand fits
    any cell: nobody could ever place again, and swaps would go on for ever. Returns
    True if the game ended."""
    if bmeta[B_TILES] == 0:
        return False
    fits = 0
    for i in range(bmeta[B_ANCHORS]):
        a = anchors[i]
        fits |= cross[a, 0] & cross[a, 1]
    colours = 0
    for i in range(gmeta[G_BAG]):
        colours |= COLOR_MASK[bag[i]]
    for p in range(gmeta[G_PLAYERS]):
        for i in range(gmeta[G_HAND + p]):
            colours |= COLOR_MASK[hands[p, i] // FACES]
    if fits & colours:
        return False
    finish_game(gmeta)
    return True


@njit
def stuck(cross, anchors, bmeta, hands, gmeta):
    """Whether no face of any colour the current player holds fits any cell, so that no
    roll could ever give it a placement on this board (never on an empty board): it
    then swaps its cubes (:func:`swap`), or passes with an empty bag."""
    if bmeta[B_TILES] == 0:
        return False
    p = gmeta[G_CURRENT]
    colours = 0
    for i in range(gmeta[G_HAND + p]):
        colours |= COLOR_MASK[hands[p, i] // FACES]
    for i in range(bmeta[B_ANCHORS]):
        a = anchors[i]
        if cross[a, 0] & cross[a, 1] & colours:
            return False
    return True


@njit
def opening_blocked(gmeta):
    """Whether the opener, under the largest-group rule, holds two or more cubes of which
    no two share a colour or a shape: it must then re-roll all of them."""
    p = gmeta[G_CURRENT]
    return (
        gmeta[G_OPENING] == 1
        and gmeta[G_RULE_OPENING] == OPENING_LARGEST_GROUP
        and gmeta[G_OPEN_LEN] < 2
        and gmeta[G_HAND + p] >= 2
    )


@njit
def apply_act(gs):
    """Apply ``gs.act`` (a placement, a re-roll, a swap or a pass, already legal) in a
    Cubes game; a re-roll's faces are written into the action word."""
    act = gs.act
    k = act[A_N]
    if act[A_KIND] == PLACE:
        cells = act[A_CELL : A_CELL + k]
        tiles = act[A_TILE : A_TILE + k]
        place_cells(gs.board, gs.cross, gs.anchors, gs.bmeta, cells, tiles, k)
        act[A_QWIRKLES] = qwirkles_made(gs.board, cells, k)
        book_placement(gs.hands, gs.bag, gs.gmeta, gs.rng, tiles, k, act[A_POINTS], act[A_QWIRKLES])
    elif act[A_KIND] == REROLL:
        reroll(gs.hands, gs.gmeta, gs.rng, act[A_TILE : A_TILE + k], k, act[A_FACE : A_FACE + k])
    elif act[A_KIND] == EXCHANGE:
        swap(gs.hands, gs.bag, gs.gmeta, gs.rng, act[A_TILE : A_TILE + k], k)
        end_if_dead(gs.cross, gs.anchors, gs.bmeta, gs.hands, gs.bag, gs.gmeta)
    else:
        pass_stuck(gs.gmeta)


# -- the agents --------------------------------------------------------------------------


@njit
def next_player_odds(hands, gmeta, p_other):
    """The chance that the next player shows each tile on its turn (hands are open, and
    it may re-roll): 1 for a face it shows, else 1 - (5/6)**k for its k cubes of that
    colour. Into ``p_other`` (float64[NUM_TILE_TYPES]; nothing is allocated)."""
    q = (gmeta[G_CURRENT] + 1) % gmeta[G_PLAYERS]
    shows = 0
    for i in range(gmeta[G_HAND + q]):
        shows |= 1 << hands[q, i]
    for c in range(COLORS):
        count = 0
        for i in range(gmeta[G_HAND + q]):
            count += hands[q, i] // FACES == c
        for t in range(c * FACES, (c + 1) * FACES):
            p_other[t] = 1.0 if (shows >> t) & 1 else 1.0 - (5.0 / 6.0) ** count


@njit
def heuristic_fill(gs, moves, n, spec, values, work):
    """The heuristic's values of the ``n`` placements in a Cubes game, into ``values[:n]``:
    those of the tile game (:func:`.policies.heuristic_fill_given`) with the next
    player's odds of :func:`next_player_odds`. ``work``: float64[HEURISTIC_WORK] scratch."""
    next_player_odds(gs.hands, gs.gmeta, work[:NUM_TILE_TYPES])
    return heuristic_fill_given(
        gs.board, gs.cross, gs.anchors, gs.bmeta, gs.hands, gs.bag, gs.gmeta, moves, n, spec, values, work
    )


@njit
def kept_placement(spec, gs, moves, n):
    """The placement (an index into ``moves[:n]``, n >= 1) whose cubes agent ``spec``
    keeps when it re-rolls: a uniform one for random, else one of the highest score
    (ties broken uniformly; agents' stream). Random also plays it if it does not re-roll."""
    if int(spec[SPEC_ID]) == RANDOM:
        return below(gs.rng, R_AGENTS, n)
    return best_index(moves[:, M_SCORE], n, gs.rng)


@njit
def reroll_choice(spec, gs, moves, keep):
    """Write into ``gs.act`` the re-roll agent ``spec`` makes now and return its cube
    count (0: none). ``keep`` is :func:`kept_placement` (-1: there is no placement).

    While the turn's re-roll is unused: random re-rolls each cube with probability 1/2
    (agents' stream); the others re-roll every cube not in placement ``keep``, which
    stays possible, so the re-roll can only add placements. After it (or when random
    picked none), only a player without a placement re-rolls: all its cubes, as the
    rules require.
    """
    act, hands, gmeta = gs.act, gs.hands, gs.gmeta
    p = gmeta[G_CURRENT]
    size = gmeta[G_HAND + p]
    k = 0
    if gmeta[G_REROLLED] == 0:
        if int(spec[SPEC_ID]) == RANDOM:
            for i in range(size):
                if below(gs.rng, R_AGENTS, 2):
                    act[A_TILE + k] = hands[p, i]
                    k += 1
        else:
            used = 0  # the tiles of placement keep already matched to a cube
            for i in range(size):
                t = hands[p, i]
                kept = False
                if keep >= 0:
                    for j in range(moves[keep, M_N]):
                        if (used >> j) & 1 == 0 and moves[keep, M_TILE + j] == t:
                            used |= 1 << j
                            kept = True
                            break
                if not kept:
                    act[A_TILE + k] = t
                    k += 1
    if k == 0 and keep < 0:
        for i in range(size):
            act[A_TILE + i] = hands[p, i]
        k = size
    if k > 0:
        act[A_KIND] = REROLL
        act[A_N] = k
        act[A_POINTS] = 0
        act[A_QWIRKLES] = 0
    return k


@njit
def placements(gs, moves, best_only):
    """The current player's legal placements ``(moves, n)`` (none while the opening is
    blocked), and whether it is stuck (must swap or pass)."""
    moves, n = legal_moves(gs, moves, best_only)
    if opening_blocked(gs.gmeta):
        return moves, 0, False
    return moves, n, n == 0 and stuck(gs.cross, gs.anchors, gs.bmeta, gs.hands, gs.gmeta)


@njit
def take_turn_simple(spec, gs, moves, values, work):
    """One action of a random, greedy or heuristic agent in a Cubes game: a re-roll (see
    :func:`reroll_choice`), else its placement (random: uniform; greedy: the best score;
    heuristic: the best :func:`heuristic_fill`); when stuck, a swap of as many cubes
    as the bag holds, chosen at random, or a pass (``actions.set_fallback``).
    ``values``: a float64 scratch (a larger one is made if it is too short); ``work``:
    the heuristic's (float64[HEURISTIC_WORK]). Returns the (maybe grown) move buffer."""
    agent = int(spec[SPEC_ID])
    moves, n, is_stuck = placements(gs, moves, agent == GREEDY)
    if is_stuck:
        set_fallback(gs, True)
    else:
        keep = kept_placement(spec, gs, moves, n) if n > 0 else -1
        if reroll_choice(spec, gs, moves, keep) == 0:
            if agent == HEURISTIC:
                keep = best_index(
                    heuristic_fill(
                        gs, moves, n, spec, values if values.shape[0] >= n else np.zeros(n, np.float64), work
                    ),
                    n,
                    gs.rng,
                )
            set_place(gs.act, moves, keep)
    apply_act(gs)
    return moves


@njit
def take_turn(spec, gs, moves, scratch):
    """One action of agent ``spec`` for the current player of a Cubes game (a turn is
    one call or more: its re-rolls, then a placement or a pass). ``scratch`` is
    :func:`.agents.new_agent_scratch`'s tuple. The Monte Carlo agent re-rolls as its
    playout policy would and chooses its placement by playouts (:func:`mc_place`).
    Returns the (maybe grown) move buffer."""
    if int(spec[SPEC_ID]) != MONTE_CARLO:
        return take_turn_simple(spec, gs, moves, scratch.values, scratch.work)
    policy = scratch.root.policy
    policy[:] = 0
    policy[SPEC_ID] = spec[P_MC_POLICY]
    if int(policy[SPEC_ID]) == HEURISTIC:
        policy[:] = DEFAULT_SPECS[HEURISTIC]
    moves, n, is_stuck = placements(gs, moves, False)
    values = scratch.values if scratch.values.shape[0] >= n else np.zeros(n, np.float64)
    if is_stuck:
        set_fallback(gs, True)
    elif reroll_choice(policy, gs, moves, kept_placement(policy, gs, moves, n) if n > 0 else -1) == 0:
        mc_place(spec, gs, moves, n, values, scratch)
    apply_act(gs)
    return moves


@njit
def determinize(bag, gmeta, rng, stream):
    """Shuffle the bag in place (stream ``stream``): with open hands, its order and the
    rolls to come are all a Cubes player cannot see."""
    for i in range(gmeta[G_BAG] - 1, 0, -1):
        j = below(rng, stream, i + 1)
        tmp = bag[i]
        bag[i] = bag[j]
        bag[j] = tmp


@njit
def playout(sim, moves, values, work, cand, policy, depth, seed):
    """One playout of candidate ``cand`` from the (reset) ``sim``: the bag's order and
    every later roll are sampled afresh from ``seed`` (the hands are open, so nothing
    else is hidden), then ``policy`` plays every seat (see :func:`.mc.playout`;
    ``values`` and ``work``: the policy's scratch, see :func:`take_turn_simple`).
    Returns ``(margin, moves)``."""
    gmeta, rng = sim.gmeta, sim.rng
    player = gmeta[G_CURRENT]
    rng[R_GAME] = mix64(np.uint64(seed))
    rng[R_AGENTS] = mix64(np.uint64(seed) ^ _PLAYOUT_SALT)
    determinize(sim.bag, gmeta, rng, R_AGENTS)
    root_turn = gmeta[G_TURNS]
    sim.act[:] = cand
    apply_act(sim)
    start = gmeta[G_TURNS]
    while (
        gmeta[G_OVER] == 0 and (depth == 0 or gmeta[G_TURNS] - start < depth) and gmeta[G_TURNS] - root_turn < MAX_TURNS
    ):
        moves = take_turn_simple(policy, sim, moves, values, work)
    return margin(gmeta, player), moves


@njit
def mc_place(spec, gs, moves, n, values, scratch):
    """The Monte Carlo agent's placement (n >= 1): its playout policy's (in
    ``scratch.root.policy``) ``candidates`` best placements, each played out
    ``playouts`` times (common random numbers across candidates, as in
    :func:`.mc.mc_choose`); the best mean margin goes into ``gs.act``."""
    playouts = int(spec[P_MC_PLAYOUTS])
    root = scratch.root
    policy, cands = root.policy, root.cands
    if int(policy[SPEC_ID]) == HEURISTIC:
        heuristic_fill(gs, moves, n, policy, values, scratch.work)
    else:
        for i in range(n):
            values[i] = moves[i, M_SCORE]
    k = candidates_from_values(moves, n, values, int(spec[P_MC_CANDIDATES]), cands)
    act, rng = gs.act, gs.rng
    if k == 1 or playouts <= 0:
        act[:] = cands[0]
        return
    rows, cols, tiles, cells = root.rows, root.cols, root.tiles, root.cells
    sim, smoves, svalues = scratch.sim, scratch.sim_moves, scratch.sim_values
    ntiles = board_tiles(gs.board, gs.bmeta, rows, cols, tiles)
    means = np.zeros(k, np.float64)
    base = next_u64(rng, R_AGENTS)
    depth = int(spec[P_MC_DEPTH])
    for j in range(playouts):
        s = playout_seed(base, j)
        for c in range(k):
            reset_sim(sim, rows, cols, tiles, ntiles, gs.hands, gs.bag, gs.gmeta, cells)
            m, smoves = playout(sim, smoves, svalues, scratch.work, cands[c], policy, depth, s)
            means[c] += m
    act[:] = cands[best_index(means, k, rng)]


# -- the batch loop ------------------------------------------------------------------------


@njit
def play_one(seed, specs, rule_opening, gs, moves, scratch):
    """Play one Cubes game from ``seed`` to the end (or the turn limit), seat p played
    by ``specs[p]``. Returns the (maybe grown) move buffer."""
    gmeta = gs.gmeta
    values, work = scratch.values, scratch.work
    clear_board(gs.board, gs.cross, gs.anchors, gs.bmeta)
    seed_streams(gs.rng, seed)
    new_game(gs.hands, gs.bag, gmeta, gs.rng, specs.shape[0], rule_opening)
    while gmeta[G_OVER] == 0 and gmeta[G_TURNS] < MAX_TURNS:
        spec = specs[gmeta[G_CURRENT]]
        # take_turn's own dispatch, with only the simple agents' scratch passed per
        # action (numba counts the references of every array of the scratch tuple)
        if int(spec[SPEC_ID]) == MONTE_CARLO:
            moves = take_turn(spec, gs, moves, scratch)
        else:
            moves = take_turn_simple(spec, gs, moves, values, work)
    return moves


@njit(nogil=True)
def run_games(seeds, specs, rule_opening, scores, qwirkles, stats):
    """:func:`.batch.run_plain` for Qwirkle Cubes, for every agent: the same arguments
    and rows. It plays its games one after the other and releases the GIL (threads run
    ranges of a batch side by side, as for the tile game's kernels); a game's row
    depends only on its seed."""
    gs, moves = new_state()
    scratch = new_agent_scratch(False)  # the search agent does not play Cubes (agents.check_cubes_agents)
    gmeta = gs.gmeta
    for g in range(seeds.shape[0]):
        moves = play_one(seeds[g], specs, rule_opening, gs, moves, scratch)
        record_row(gmeta, g, scores, qwirkles, stats)
