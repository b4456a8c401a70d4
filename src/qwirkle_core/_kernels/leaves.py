"""Leaves: the tiles a player keeps after its turn, their canonical classes and learned values.

A *leave* is a multiset of at most five tiles (tile ``t`` has colour ``t // 6`` and
shape ``t % 6``). Two leaves are worth the same when one becomes the other by
relabelling the six colours (6! ways), the six shapes (6! ways) and perhaps swapping
colours with shapes: the game's rules do not tell them apart. The *class* of a leave is
its orbit under these 1,036,800 maps; its *code* (:func:`canonical_code`) is the least
of the codes of its orderings with colours and shapes renamed by first appearance,
which is the same for every leave of the class and different for different classes.

Fast lookup: a sorted leave of ``k`` tiles has a *rank* (:func:`leave_rank`, the
combinatorial number of the multiset, 0 .. ``N_RANKS - 1``); the *index* (int32[N_RANKS],
:func:`leave_codes` then ``numpy.unique`` in the Python layer) maps a rank to its class
id, -1 for a multiset no game can hold (a tile more than three times). The learned
*values* are float64[BUCKETS * classes]: row ``b`` (the bag-size bucket, :func:`bucket`)
holds the value of each class, in points.

The agents read the process's table through :data:`INDEX` and :data:`VALUES`
(:class:`._jit.Table` cells, bound by :func:`bind_leaves` from the shipped file
``leaves.json``); the learning kernel (:func:`learn_games`) takes the values it plays
with as arguments.
"""

import itertools
import json
from pathlib import Path

import numpy as np
from numba import carray

from ._jit import Table, keep, njit
from .actions import apply_action, fallback, new_state, set_place
from .board import clear_board
from .layout import (
    A_KIND,
    A_N,
    A_POINTS,
    A_QWIRKLES,
    A_TILE,
    EXCHANGE,
    G_BAG,
    G_CURRENT,
    G_HAND,
    G_OPENING,
    G_OVER,
    G_TURNS,
    HEURISTIC,
    M_N,
    M_TILE,
    P_HEUR_DANGER,
    P_HEUR_OUT,
    P_HEUR_SETUP,
    P_STATIC_DANGER,
    P_STATIC_EXCHANGE,
    P_STATIC_LEAVE,
    P_STATIC_SETUP,
    PLACE,
    SPEC_ID,
)
from .movegen import generate_all
from .policies import HEURISTIC_WORK, best_index, heuristic_fill
from .rng import seed_streams
from .state import HAND, MAX_TURNS, NUM_TILE_TYPES, hand_mask, new_game, opening_len, record_row

MAX_LEAVE = HAND - 1  # a turn places or exchanges at least one tile
BUCKET_EDGES = np.array([1, 12, 48], np.int64)  # bag sizes where a bucket starts (bucket 0: empty bag)
BUCKETS = BUCKET_EDGES.shape[0] + 1
SCALE = 1024  # outcomes are summed as integers in 1/SCALE points (exact in any order)

# binomial coefficients C(n, r), n < 48, r <= 6
_BIN = np.zeros((48, 7), np.int64)
for _n in range(48):
    for _r in range(min(_n, 6) + 1):
        _BIN[_n, _r] = 1 if _r in (0, _n) else _BIN[_n - 1, _r - 1] + _BIN[_n - 1, _r]
BIN = _BIN
# rank offset of the leaves of k tiles: multisets of k of 36 tile types, C(35 + k, k) each
OFFSETS = np.zeros(MAX_LEAVE + 2, np.int64)
for _k in range(MAX_LEAVE + 1):
    OFFSETS[_k + 1] = OFFSETS[_k] + BIN[NUM_TILE_TYPES - 1 + _k, _k]
N_RANKS = int(OFFSETS[MAX_LEAVE + 1])

INDEX = Table("leaves.index", np.int32)
"""The process's rank -> class index (int32[N_RANKS]), bound by :func:`bind_leaves`."""
VALUES = Table("leaves.values", np.float64)
"""The process's learned values (float64[BUCKETS * classes]), bound by :func:`bind_leaves`."""
_index_ptr, _values_ptr = INDEX.get, VALUES.get  # what kernels call

TABLE_FILE = Path(__file__).with_name("leaves.json")


@njit(inline="always")
def bucket(bag):
    """The bag-size bucket of a bag of ``bag`` tiles: 0 (empty) .. BUCKETS - 1."""
    b = 0
    for e in range(BUCKET_EDGES.shape[0]):
        b += bag >= BUCKET_EDGES[e]
    return b


@njit(inline="always")
def leave_rank(tiles, k):
    """The rank of the sorted leave ``tiles[:k]`` (k <= MAX_LEAVE): ``OFFSETS[k]`` plus
    the combinatorial number of the multiset (``tiles[i] + i`` strictly increase)."""
    r = OFFSETS[k]
    for i in range(k):
        r += BIN[tiles[i] + i, i + 1]
    return r


@njit(inline="always")
def rank_without(hands, p, size, tiles, first, k):
    """The rank of seat ``p``'s (sorted) hand of ``size`` tiles without the ``k`` tiles
    ``tiles[first : first + k]`` (one copy each; all in the hand)."""
    used = 0
    for j in range(k):
        t = tiles[first + j]
        for i in range(size):
            if hands[p, i] == t and not (used >> i) & 1:
                used |= 1 << i
                break
    r = OFFSETS[size - k]
    c = 0
    for i in range(size):
        if not (used >> i) & 1:
            r += BIN[hands[p, i] + c, c + 1]
            c += 1
    keep(hands, tiles)
    return r


@njit
def _unrank(rank, out):
    """The sorted leave of ``rank`` into ``out``; returns its size."""
    k = 0
    while OFFSETS[k + 1] <= rank:
        k += 1
    r = rank - OFFSETS[k]
    for i in range(k - 1, -1, -1):  # largest b with C(b, i + 1) <= r
        b = i
        while BIN[b + 1, i + 1] <= r:
            b += 1
        out[i] = b - i
        r -= BIN[b, i + 1]
    return k


@njit
def canonical_code(tiles, k, perms):
    """The canonical code of the leave ``tiles[:k]`` (any order): the least over its
    orderings (``perms``: int64[k!, k], every permutation of 0..k-1), with and without
    colours and shapes swapped, of ``k`` then each tile renamed (colours and shapes
    numbered by first appearance) as a base-36 digit."""
    best = -1
    cmap = np.empty(6, np.int64)
    smap = np.empty(6, np.int64)
    for swap in range(2):
        for q in range(perms.shape[0]):
            cmap[:] = -1
            smap[:] = -1
            nc = 0
            ns = 0
            code = k
            for i in range(k):
                t = tiles[perms[q, i]]
                c, s = (t // 6, t % 6) if swap == 0 else (t % 6, t // 6)
                if cmap[c] < 0:
                    cmap[c] = nc
                    nc += 1
                if smap[s] < 0:
                    smap[s] = ns
                    ns += 1
                code = code * 36 + cmap[c] * 6 + smap[s]
            if best < 0 or code < best:
                best = code
    return best


@njit
def leave_codes(perms1, perms2, perms3, perms4, perms5):
    """int64[N_RANKS]: the canonical code of the leave of each rank, -1 for a multiset
    with a tile more than three times. ``permsK``: the permutations of 0..K-1. Codes are
    computed once per leave with colours and shapes renamed by first appearance (a
    cheap form shared by many leaves; memo by its rank)."""
    codes = np.full(N_RANKS, -1, np.int64)
    memo = np.full(N_RANKS, -1, np.int64)
    tiles = np.zeros(MAX_LEAVE, np.int64)
    norm = np.zeros(MAX_LEAVE, np.int64)
    cmap = np.empty(6, np.int64)
    smap = np.empty(6, np.int64)
    for rank in range(N_RANKS):
        k = _unrank(rank, tiles)
        bad = False
        for i in range(3, k):
            bad |= tiles[i] == tiles[i - 3]
        if bad:
            continue
        cmap[:] = -1
        smap[:] = -1
        nc = 0
        ns = 0
        for i in range(k):
            c, s = tiles[i] // 6, tiles[i] % 6
            if cmap[c] < 0:
                cmap[c] = nc
                nc += 1
            if smap[s] < 0:
                smap[s] = ns
                ns += 1
            norm[i] = cmap[c] * 6 + smap[s]
        norm[:k] = np.sort(norm[:k])
        nr = leave_rank(norm, k)
        if memo[nr] < 0:
            perms = perms1 if k <= 1 else perms2 if k == 2 else perms3 if k == 3 else perms4 if k == 4 else perms5
            memo[nr] = canonical_code(norm, k, perms)
        codes[rank] = memo[nr]
    return codes


def permutations(k):
    """int64[k!, k]: every permutation of 0..k-1 (k >= 1)."""
    return np.array(list(itertools.permutations(range(k))), np.int64).reshape(-1, k)


_classes_cache = None


def classes():
    """``(codes, index)``: the canonical codes of the classes (int64[C], ascending: a
    class's id is its position) and the rank -> class index (int32[N_RANKS], -1 for an
    impossible leave). Computed once per process (about a second)."""
    global _classes_cache
    if _classes_cache is None:
        codes = leave_codes(*(permutations(k) for k in range(1, MAX_LEAVE + 1)))
        valid = codes >= 0
        uniq, inverse = np.unique(codes[valid], return_inverse=True)
        index = np.full(N_RANKS, -1, np.int32)
        index[valid] = inverse.astype(np.int32)
        _classes_cache = (uniq, index)
    return _classes_cache


def load_table(path=TABLE_FILE):
    """The table file at ``path`` as ``(values float64[BUCKETS, C], document dict)``,
    its classes in the order of :func:`classes`. Raises ValueError for a file whose
    classes or buckets are not this version's."""
    doc = json.loads(Path(path).read_text())
    codes, _ = classes()
    if doc.get("buckets") != BUCKET_EDGES.tolist() or doc.get("classes") != codes.tolist():
        raise ValueError(f"{path}: its leave classes or bag buckets are not those of this version")
    values = np.array(doc["values"], np.float64)
    if values.shape != (BUCKETS, codes.shape[0]) or not np.all(np.isfinite(values)):
        raise ValueError(f"{path}: values must be {BUCKETS} rows of {codes.shape[0]} finite numbers")
    return values, doc


_bound = []


def bind_leaves(values=None):
    """Point the agents' leave lookups (:data:`INDEX`, :data:`VALUES`) at the class
    index and at ``values`` (float64[BUCKETS, C]; default: the shipped table), in this
    process, before a kernel that plays the static agent runs. Binding the shipped
    table again is free."""
    if values is None:
        if _bound == ["shipped"]:
            return
        values, _ = load_table()
        tag = "shipped"
    else:
        tag = "given"
    _, index = classes()
    INDEX.bind(index)
    VALUES.bind(np.ascontiguousarray(values, np.float64).ravel())
    _bound[:] = [tag]


@njit(inline="always")
def leave_tables():
    """The bound index and values (see :func:`bind_leaves`): ``(int32[N_RANKS],
    float64[BUCKETS * C])``; both empty when unbound."""
    ptr, n = _index_ptr()
    vptr, vn = _values_ptr()
    return carray(ptr, (n,)), carray(vptr, (vn,))


@njit(inline="always")
def _leave_row(lvalues, b):
    """The offset of bucket ``b``'s values."""
    return b * (lvalues.shape[0] // BUCKETS)


@njit
def static_fill(
    board, cross, anchors, bmeta, hands, bag, gmeta, moves, n, hspec, values, work, index, lvalues, w_leave
):
    """The static agent's value of each of the ``n`` placements, into ``values[:n]``:
    :func:`.policies.heuristic_fill` with the heuristic spec ``hspec`` (points, +6 for
    going out, the Qwirkle risk and setup terms) plus ``w_leave`` times the learned
    value of the leave (bucket of the bag now)."""
    heuristic_fill(board, cross, anchors, bmeta, hands, bag, gmeta, moves, n, hspec, values, work)
    p = gmeta[G_CURRENT]
    size = gmeta[G_HAND + p]
    row = _leave_row(lvalues, bucket(gmeta[G_BAG]))
    for m in range(n):
        r = rank_without(hands, p, size, moves[m], M_TILE, moves[m, M_N])
        values[m] += w_leave * lvalues[row + index[r]]
    keep(board, cross, anchors, bmeta, hands, bag, gmeta, moves, hspec, values, work, index, lvalues)


@njit
def exchange_choice(hands, gmeta, index, lvalues, w_leave, best_value, act):
    """Compare the exchanges (every subset of the hand, of at most as many tiles as the
    bag holds, in the order of their bit masks over the hand's slots) with
    ``best_value`` (the best placement's value; -inf for none): an exchange is worth
    ``w_leave`` times its leave's value. Writes the first best exchange into ``act``
    when it is worth more than ``best_value``. Returns True if it did."""
    p = gmeta[G_CURRENT]
    size = gmeta[G_HAND + p]
    bagn = gmeta[G_BAG]
    row = _leave_row(lvalues, bucket(bagn))
    best_mask = 0
    for mask in range(1, 1 << size):
        k = 0
        for i in range(size):
            k += (mask >> i) & 1
        if k > bagn or size - k > MAX_LEAVE:
            continue
        r = OFFSETS[size - k]
        c = 0
        for i in range(size):
            if not (mask >> i) & 1:
                r += BIN[hands[p, i] + c, c + 1]
                c += 1
        v = w_leave * lvalues[row + index[r]]
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
    keep(hands, gmeta, index, lvalues, act)
    return best_mask != 0


@njit
def static_choose(
    spec, board, cross, anchors, bmeta, hands, bag, gmeta, rng, act, moves, n, values, work, hspec, index, lvalues
):
    """The static agent's action into ``act``: the placement of the best
    :func:`static_fill` value (ties broken at random, agents' stream), or (parameter
    ``exchange``, or no placement) the exchange whose leave is worth more; a pass with
    nothing else. ``hspec``: a float64[SPEC_COLS] scratch (the heuristic's spec is made
    there); ``moves[:n]`` every legal placement; ``values`` float64[>= n]."""
    hspec[:] = 0.0
    hspec[SPEC_ID] = HEURISTIC
    hspec[P_HEUR_DANGER] = spec[P_STATIC_DANGER]
    hspec[P_HEUR_SETUP] = spec[P_STATIC_SETUP]
    hspec[P_HEUR_OUT] = 6.0
    w_leave = spec[P_STATIC_LEAVE]
    best = -np.inf
    if n:
        static_fill(
            board, cross, anchors, bmeta, hands, bag, gmeta, moves, n, hspec, values, work, index, lvalues, w_leave
        )
        i = best_index(values, n, rng)
        set_place(act, moves, i)
        best = values[i]
    exchanged = False
    if gmeta[G_BAG] > 0 and gmeta[G_OPENING] == 0 and (n == 0 or spec[P_STATIC_EXCHANGE] != 0):
        exchanged = exchange_choice(hands, gmeta, index, lvalues, w_leave, best, act)
    if n == 0 and not exchanged:
        fallback(hands, gmeta, rng, act, True)
    keep(spec, board, cross, anchors, bmeta, hands, bag, gmeta, rng, act, moves, values, work, hspec, index, lvalues)


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
    hspec = np.zeros(spec.shape[0], np.float64)
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
                hspec,
                index,
                lvalues,
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
                follow += np.int64(np.round(lvalues[_leave_row(lvalues, b) + index[rank]] * SCALE))
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
