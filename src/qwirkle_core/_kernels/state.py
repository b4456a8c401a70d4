"""Game flow: the bag, hands, scores, turns, exchanges, passes and the end.

Arrays of one game (besides the board arrays of :mod:`.board`):

``hands``  int8[6, 6]   the tiles of each seat (first ``gmeta[G_HAND + p]`` slots).
``bag``    int8[108]    the bag; tiles are drawn from the end (``bag[G_BAG - 1]``).
``gmeta``  int64[GMETA] the game's counters (``G_*`` in :mod:`.layout`).
``rng``    uint64[STREAMS] the game's random streams (``R_*``, :mod:`.rng`).
"""

import numpy as np

from ._jit import keep, njit
from .board import ALL, colour_count, shape_count
from .layout import (
    B_ANCHORS,
    B_TILES,
    G_BAG,
    G_CURRENT,
    G_HAND,
    G_OPEN_LEN,
    G_OPENING,
    G_OVER,
    G_PASSES,
    G_PLACED,
    G_PLAYERS,
    G_QWIRKLES,
    G_RULE_OPENING,
    G_SCORE,
    G_STARTER,
    G_TURNS,
    G_WINNER,
    GMETA,
    R_GAME,
    S_PLACED,
    S_STARTER,
    S_TRUNCATED,
    S_TURNS,
    S_WINNER,
    STREAMS,
)
from .rng import below

MAX_PLAYERS = 6
HAND = 6
NTILES = 108
NUM_TILE_TYPES = 36

MAX_TURNS = 5000  # a game still running after this many turns is stopped as blocked

OPENING_LARGEST_GROUP = 0
OPENING_ANY_LINE = 1


@njit
def new_game_arrays():
    """Fresh ``(hands, bag, gmeta, rng)`` arrays of one game."""
    return (
        np.full((MAX_PLAYERS, HAND), -1, np.int8),
        np.zeros(NTILES, np.int8),
        np.zeros(GMETA, np.int64),
        np.zeros(STREAMS, np.uint64),
    )


@njit
def hand_mask(hands, gmeta, p):
    m = 0
    for i in range(gmeta[G_HAND + p]):
        m |= 1 << hands[p, i]
    return m


@njit
def largest_group(mask):
    """Size of the largest set of distinct tiles in ``mask`` sharing a colour or a shape."""
    best = 0
    for i in range(6):
        best = max(best, colour_count(mask, i), shape_count(mask, i))
    return best


@njit
def insert_sorted(row, n, tile):
    """Insert ``tile`` into the sorted ``row[:n]``."""
    i = n
    while i > 0 and row[i - 1] > tile:
        row[i] = row[i - 1]
        i -= 1
    row[i] = tile


@njit(inline="always")  # into after_placement
def draw(hands, bag, gmeta, p, size):
    """Fill seat ``p``'s hand up to ``size`` tiles from the bag, as far as it allows.

    Hands are kept sorted, so a hand's slot order depends only on its tiles.
    """
    while gmeta[G_HAND + p] < size and gmeta[G_BAG] > 0:
        gmeta[G_BAG] -= 1
        tile = bag[gmeta[G_BAG]]
        i = gmeta[G_HAND + p]
        while i > 0 and hands[p, i - 1] > tile:
            hands[p, i] = hands[p, i - 1]
            i -= 1
        hands[p, i] = tile
        gmeta[G_HAND + p] += 1
    keep(hands, bag, gmeta)


@njit(inline="always")  # into after_placement
def remove_from_hand(hands, gmeta, p, tile):
    """Take one ``tile`` out of seat ``p``'s (sorted) hand; False if it is not there."""
    n = gmeta[G_HAND + p]
    i = 0
    while i < n and hands[p, i] != tile:
        i += 1
    found = i < n
    if found:
        for j in range(i, n - 1):
            hands[p, j] = hands[p, j + 1]
        hands[p, n - 1] = -1
        gmeta[G_HAND + p] = n - 1
    keep(hands, gmeta)
    return found


@njit
def fill_bag(bag, count, copies, rng):
    """Put ``count`` pieces into ``bag``, ``copies`` of each kind (kind ``i // copies``),
    and shuffle them with the game's stream (Fisher-Yates, from the top)."""
    for i in range(count):
        bag[i] = i // copies
    for i in range(count - 1, 0, -1):
        j = below(rng, R_GAME, i + 1)
        tmp = bag[i]
        bag[i] = bag[j]
        bag[j] = tmp


@njit
def new_game(hands, bag, gmeta, rng, players, rule_opening):
    """Shuffle the bag (game stream), deal, and set up the opening.

    ``rng`` must already be seeded. The starter is the seat with the largest group
    (ties: the lowest seat) under the official rule, seat 0 under "any line".
    """
    gmeta[:] = 0
    hands[:] = -1
    fill_bag(bag, NTILES, 3, rng)
    gmeta[G_PLAYERS] = players
    gmeta[G_BAG] = NTILES
    gmeta[G_RULE_OPENING] = rule_opening
    gmeta[G_WINNER] = -2
    for p in range(players):
        draw(hands, bag, gmeta, p, HAND)
    set_opening(hands, gmeta, -1)


@njit
def set_opening(hands, gmeta, current):
    """Mark the opening as pending; choose the starter unless ``current`` >= 0."""
    gmeta[G_OPENING] = 1
    if current < 0:
        current = 0
        if gmeta[G_RULE_OPENING] == OPENING_LARGEST_GROUP:
            best = -1
            for p in range(gmeta[G_PLAYERS]):
                g = largest_group(hand_mask(hands, gmeta, p))
                if g > best:
                    best = g
                    current = p
    gmeta[G_CURRENT] = current
    gmeta[G_STARTER] = current
    if gmeta[G_RULE_OPENING] == OPENING_LARGEST_GROUP:
        gmeta[G_OPEN_LEN] = largest_group(hand_mask(hands, gmeta, current))
    else:
        gmeta[G_OPEN_LEN] = 0


@njit
def opening_len(gmeta):
    """The exact opening length to ask of the move generator (0 = any)."""
    return gmeta[G_OPEN_LEN] if gmeta[G_OPENING] else 0


@njit
def _next_seat(gmeta, p):
    """The seat after ``p`` (no division: see :func:`._jit.keep`)."""
    return p + 1 if p + 1 < gmeta[G_PLAYERS] else 0


@njit
def _next_turn(gmeta):
    gmeta[G_TURNS] += 1
    gmeta[G_CURRENT] = _next_seat(gmeta, gmeta[G_CURRENT])


@njit(inline="always")  # into after_placement
def finish_game(gmeta):
    """End the game: mark it over and set the winner (-1 for a tie on the best score)."""
    gmeta[G_OVER] = 1
    best = -1
    winner = -1
    for p in range(gmeta[G_PLAYERS]):
        s = gmeta[G_SCORE + p]
        if s > best:
            best = s
            winner = p
        elif s == best:
            winner = -1
    gmeta[G_WINNER] = winner


@njit(inline="always")  # into apply_placement
def after_placement(hands, bag, gmeta, tiles, n, score, qwirkles):
    """Book a placement already put on the board: hand, score, draw, end, next seat.

    Returns the points of the placement (without the going-out bonus).
    """
    p = gmeta[G_CURRENT]
    for i in range(n):
        remove_from_hand(hands, gmeta, p, tiles[i])
    gmeta[G_SCORE + p] += score
    gmeta[G_QWIRKLES + p] += qwirkles
    gmeta[G_PLACED] += n
    gmeta[G_OPENING] = 0
    gmeta[G_PASSES] = 0
    draw(hands, bag, gmeta, p, HAND)
    gmeta[G_TURNS] += 1
    if gmeta[G_HAND + p] == 0:
        gmeta[G_SCORE + p] += 6
        finish_game(gmeta)
    else:
        gmeta[G_CURRENT] = _next_seat(gmeta, p)
    keep(hands, bag, gmeta, tiles)
    return score


@njit
def exchange(hands, bag, gmeta, rng, tiles, n):
    """Exchange ``tiles[:n]`` (all in hand, n <= bag size): set aside, draw, put back.

    The set-aside tiles go back in increasing order (``tiles[:n]`` is sorted in
    place), each to a uniformly random place in the bag (game stream), so the bag
    depends only on which tiles were exchanged.
    """
    p = gmeta[G_CURRENT]
    size = gmeta[G_HAND + p]
    for i in range(n):
        remove_from_hand(hands, gmeta, p, tiles[i])
    draw(hands, bag, gmeta, p, size)
    for i in range(1, n):
        insert_sorted(tiles, i, tiles[i])
    for i in range(n):
        k = gmeta[G_BAG]
        j = below(rng, R_GAME, k + 1)
        bag[k] = bag[j]
        bag[j] = tiles[i]
        gmeta[G_BAG] = k + 1
    _next_turn(gmeta)
    keep(hands, bag, gmeta, rng, tiles)


@njit
def pass_turn(gmeta):
    """A pass (only legal with an empty bag and no placement); ends a blocked game."""
    gmeta[G_PASSES] += 1
    if gmeta[G_PASSES] >= gmeta[G_PLAYERS]:
        gmeta[G_TURNS] += 1
        finish_game(gmeta)
    else:
        _next_turn(gmeta)


@njit
def end_if_dead(cross, anchors, bmeta, hands, bag, gmeta):
    """End the game (no bonus) if no tile left in the bag or any hand fits any cell.

    Nobody could ever place again, so exchanges would go on for ever: the rule books'
    blocked-game end, extended to a non-empty bag. Returns True if the game ended.
    """
    held = 0
    for p in range(gmeta[G_PLAYERS]):
        held |= hand_mask(hands, gmeta, p)
    fits = 0
    dead = bmeta[B_TILES] > 0
    for i in range(bmeta[B_ANCHORS] if dead else 0):
        a = anchors[i]
        fits |= cross[a, 0] & cross[a, 1]
        if fits & held:  # a hand tile fits: the usual case, found at the first anchors
            dead = False
            break
    if dead:
        left = held
        for i in range(gmeta[G_BAG]):
            left |= 1 << bag[i]
        dead = fits & ALL & left == 0
    if dead:
        finish_game(gmeta)
    keep(cross, anchors, bmeta, hands, bag, gmeta)
    return dead


@njit
def hidden_tiles(hands, bag, gmeta, viewer, pool):
    """Write the tiles ``viewer`` cannot see (the bag, then the other hands) to
    ``pool``; returns their number. In a game that holds all 108 tiles their multiset
    is public: 3 copies of each tile minus the board and the viewer's hand."""
    n = 0
    for i in range(gmeta[G_BAG]):
        pool[n] = bag[i]
        n += 1
    for p in range(gmeta[G_PLAYERS]):
        if p != viewer:
            for i in range(gmeta[G_HAND + p]):
                pool[n] = hands[p, i]
                n += 1
    return n


@njit
def unseen_counts(hands, bag, gmeta, viewer, out):
    """How many copies of each tile ``viewer`` cannot see (:func:`hidden_tiles`) into
    ``out`` (int64[NUM_TILE_TYPES]); returns their total."""
    out[:] = 0
    total = gmeta[G_BAG]
    for i in range(total):
        out[bag[i]] += 1
    for p in range(gmeta[G_PLAYERS]):
        if p != viewer:
            for i in range(gmeta[G_HAND + p]):
                out[hands[p, i]] += 1
            total += gmeta[G_HAND + p]
    return total


@njit
def record_row(gmeta, g, scores, qwirkles, stats):
    """Write the row ``g`` of a batch's outputs for the finished (or truncated) game of
    ``gmeta``: ``scores`` int32[G, P], ``qwirkles`` int16[G, P], ``stats``
    int32[G, STATS] (columns ``S_*`` of :mod:`.layout`; the winner is -1 for a tie or a
    truncated game)."""
    for p in range(scores.shape[1]):
        scores[g, p] = gmeta[G_SCORE + p]
        qwirkles[g, p] = gmeta[G_QWIRKLES + p]
    truncated = gmeta[G_OVER] == 0
    stats[g, S_WINNER] = -1 if truncated else gmeta[G_WINNER]
    stats[g, S_TURNS] = gmeta[G_TURNS]
    stats[g, S_PLACED] = gmeta[G_PLACED]
    stats[g, S_STARTER] = gmeta[G_STARTER]
    stats[g, S_TRUNCATED] = 1 if truncated else 0
