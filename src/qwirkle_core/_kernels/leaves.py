"""Leaves: the tiles a player keeps after its turn, their canonical classes and learned values.

A *leave* is a multiset of at most five tiles (tile ``t`` has colour ``t // 6`` and
shape ``t % 6``). Two leaves are worth the same when one becomes the other by
relabelling the six colours (6! ways), the six shapes (6! ways) and perhaps swapping
colours with shapes: the game's rules do not tell them apart. The *class* of a leave is
its orbit under these 1,036,800 maps; its *code* (:func:`canonical_code`) is the least
of the codes of its orderings with colours and shapes renamed by first appearance,
which is the same for every leave of the class and different for different classes.

Fast lookup: a sorted leave of ``k`` tiles has a *rank* (:func:`leave_rank`, the
combinatorial number of the multiset, 0 .. ``N_RANKS - 1``); the *index* (int8[N_RANKS],
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
import os
from pathlib import Path
from threading import Lock

import numpy as np
from numba import carray

from ._jit import Table, keep, njit
from .layout import (
    G_BAG,
    G_CURRENT,
    G_HAND,
    MAX_WEIGHT_SLOTS,
)
from .state import HAND, NUM_TILE_TYPES

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

INDEX = Table("leaves.index", np.int8)
"""The process's rank -> class index (int8[N_RANKS]), bound by :func:`bind_leaves`."""
VALUES = Table("leaves.values", np.float64)
"""The process's learned values (float64[BUCKETS * classes]), bound by :func:`bind_leaves`."""
SIZE = Table("leaves.size", np.int64)
"""One value: the length of a slot's values in :data:`VALUES` (BUCKETS * classes)."""
_index_ptr, _values_ptr, _size_ptr = INDEX.get, VALUES.get, SIZE.get  # what kernels call

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
def unrank(rank, out):
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
        k = unrank(rank, tiles)
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
        for i in range(1, k):  # sort norm[:k] (insertion: no np.sort and slice assignment to compile)
            j = i
            while j > 0 and norm[j - 1] > norm[j]:
                norm[j - 1], norm[j] = norm[j], norm[j - 1]
                j -= 1
        nr = leave_rank(norm, k)
        if memo[nr] < 0:
            perms = perms1 if k <= 1 else perms2 if k == 2 else perms3 if k == 3 else perms4 if k == 4 else perms5
            memo[nr] = canonical_code(norm, k, perms)
        codes[rank] = memo[nr]
    return codes


def leave_codes_types():
    """The numba types of :func:`leave_codes`' arguments as :func:`classes` passes them."""
    import numba

    return (numba.typeof(permutations(1)),) * MAX_LEAVE


def permutations(k):
    """int64[k!, k]: every permutation of 0..k-1 (k >= 1)."""
    return np.array(list(itertools.permutations(range(k))), np.int64).reshape(-1, k)


_classes_cache = None


def classes():
    """``(codes, index)``: the canonical codes of the classes (int64[C], ascending: a
    class's id is its position) and the rank -> class index (int8[N_RANKS], -1 for an
    impossible leave). Computed once per process (about a second)."""
    global _classes_cache
    if _classes_cache is None:
        codes = leave_codes(*(permutations(k) for k in range(1, MAX_LEAVE + 1)))
        valid = codes >= 0
        uniq, inverse = np.unique(codes[valid], return_inverse=True)
        index = np.full(N_RANKS, -1, np.int8)
        assert uniq.shape[0] < 128  # class ids fit an int8 (83 classes): the index stays in cache
        index[valid] = inverse.astype(np.int8)
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


_lock = Lock()
_slots = []  # (key, float64[BUCKETS * C]): slot 0 the shipped (or given) table, then files by absolute path
_keep = []  # every array bound: a kernel on another thread may still read an old one


def _rebind():
    _, index = classes()
    flat = np.concatenate([v for _, v in _slots])
    size = np.array([_slots[0][1].shape[0]], np.int64)
    _keep.extend((flat, size))
    INDEX.bind(index)
    VALUES.bind(flat)
    SIZE.bind(size)


def bind_leaves(values=None):
    """Point the agents' leave lookups (:data:`INDEX`, :data:`VALUES`) at the class
    index and, in slot 0, at ``values`` (float64[BUCKETS, C]; default: the shipped
    table), in this process, before a kernel that plays the static agent runs. Binding
    the shipped table again is free."""
    with _lock:
        if values is None:
            if _slots and _slots[0][0] == "shipped":
                return
            values, _ = load_table()
            key = "shipped"
        else:
            key = "given"
        flat = np.ascontiguousarray(values, np.float64).ravel().copy()
        if _slots:
            _slots[0] = (key, flat)
        else:
            _slots.append((key, flat))
        _rebind()


def leave_slot(table):
    """The slot of this process holding the leave table file ``table`` (``"shipped"``,
    slot 0, or a path: loaded once, as it was then; :func:`load_table` checks it and
    raises ValueError). The kernels read a slot's values with :func:`leave_tables`."""
    bind_leaves()
    if table == "shipped":
        return 0
    key = os.path.abspath(os.fspath(table))
    with _lock:
        for i, (k, _) in enumerate(_slots):
            if i and k == key:
                return i
        if len(_slots) >= MAX_WEIGHT_SLOTS:
            raise ValueError(f"at most {MAX_WEIGHT_SLOTS} leave tables in one process")
        try:
            values, _ = load_table(key)
        except FileNotFoundError:
            raise ValueError(f"no leave table file {str(table)!r}") from None
        except (OSError, KeyError, TypeError, json.JSONDecodeError) as e:
            raise ValueError(f"{str(table)!r} is not a leave table file (qwirkle learn): {e}") from None
        _slots.append((key, np.ascontiguousarray(values, np.float64).ravel()))
        _rebind()
        return len(_slots) - 1


def leave_slot_name(slot):
    """The key (``"shipped"``, ``"given"`` or an absolute path) of a slot loaded here."""
    with _lock:
        if not 0 <= slot < len(_slots):
            raise ValueError(f"no leave table is loaded in slot {slot} of this process")
        return _slots[slot][0]


@njit(inline="always")
def leave_tables(slot=0):
    """The bound index and the values of slot ``slot`` (see :func:`bind_leaves`,
    :func:`leave_slot`): ``(int8[N_RANKS], float64[BUCKETS * C])``; both empty when
    unbound."""
    ptr, n = _index_ptr()
    vptr, vn = _values_ptr()
    sptr, sn = _size_ptr()
    size = carray(sptr, (sn,))[0] if sn else 0
    return carray(ptr, (n,)), carray(vptr, (vn,))[slot * size : (slot + 1) * size]


@njit(inline="always")
def _leave_row(lvalues, b):
    """The offset of bucket ``b``'s values."""
    return b * (lvalues.shape[0] // BUCKETS)


@njit(inline="always")
def _high(mask):
    """The highest set bit of a mask of hand slots (0 < mask < 64)."""
    h = HAND - 1
    while not (mask >> h) & 1:
        h -= 1
    return h


@njit
def kept_values(hands, gmeta, index, lvalues, kv, slot):
    """The current player's leave values by the hand slots kept: ``kv[mask]`` (float64[64])
    the value of keeping the slots of ``mask`` (at most MAX_LEAVE of them; bucket of the
    bag now), and ``slot[t]`` (int64[NUM_TILE_TYPES]) the bit of the first slot holding
    tile ``t``. A placement holds a tile at most once (identical tiles never share a
    line), so it uses the first slot of each of its tiles."""
    p = gmeta[G_CURRENT]
    size = gmeta[G_HAND + p]
    row = _leave_row(lvalues, bucket(gmeta[G_BAG]))
    for i in range(size - 1, -1, -1):
        slot[hands[p, i]] = 1 << i
    # the combinatorial number of a mask's tiles: that of the mask without its highest
    # slot plus the term of that slot's tile, the last of the sorted leave (in
    # slot[NUM_TILE_TYPES + mask] as scratch), then the class's value
    ranks = slot[NUM_TILE_TYPES:]
    ranks[0] = 0
    kv[0] = lvalues[row + index[0]]
    for mask in range(1, (1 << size) - 1):  # not the whole hand
        hi = _high(mask)
        c = 1
        rest = mask ^ (1 << hi)
        m = rest
        while m:
            m &= m - 1
            c += 1
        r = ranks[rest] + BIN[hands[p, hi] + c - 1, c]
        ranks[mask] = r
        kv[mask] = lvalues[row + index[r + OFFSETS[c]]]
    keep(hands, gmeta, index, lvalues, kv, slot, ranks)
