"""The learned move scorer: a small network that scores each listed move of a position.

One architecture, three users: the ``net`` agent plays the move of the highest score,
the search (``eval`` ``net``) searches the moves of the highest scores, and the RL
policy (``qwirkle_core.env``) trains the same network with a value head beside it.
Training happens in torch (``qwirkle_core.batch.scorer``); play happens here, in
numba, from the weights file's arrays.

The input row of a move (``INPUT_NAMES``, float64, raw units): the move's feature row
of :mod:`.movelist` (``FEATURE_NAMES``: kind, points, tiles, Qwirkles, fives offered,
the leave's counts...), then ``static`` (the static agent's value of the move with
its default parameters: points, +6 for going out, the Qwirkle risk and setup terms
and the learned value of the tiles kept; an exchange the value of the tiles it keeps,
the pass 0), then the position's context, the same for every move: ``margin`` (the
mover's score minus the best other score), ``bag`` (tiles in the bag), ``players``
and ``rival_hand`` (tiles in the next player's hand).

The network (weights shared across moves, so it ranks any number of them)::

    z  = (x - shift) * scale                  D inputs
    h1 = relu(W1.T z + b1)                    H1 units
    h2 = relu(W2.T h1 + b2)                   H2 units
    score = w3 . h2 + b3                      points: the move's value to the mover

Weights are bound into a :class:`._jit.Table` as one flat float64 array of every file
loaded in this process (a *slot* each, slot 0 the shipped file), with a second table
of each slot's offset, so the kernels' machine code holds no address and a tournament
can seat two weight files. A slot's block: ``D, H1, H2``, ``shift[D]``, ``scale[D]``,
``W1[D, H1]``, ``b1[H1]``, ``W2[H1, H2]``, ``b2[H2]``, ``w3[H2]``, ``b3``.
"""

import json
import os
from pathlib import Path
from threading import Lock

import numpy as np
from numba import carray

from ._jit import Table, keep, njit
from .actions import apply_act, set_place
from .layout import (
    A_KIND,
    A_N,
    A_POINTS,
    A_QWIRKLES,
    A_TILE,
    DEFAULT_SPECS,
    EXCHANGE,
    G_BAG,
    G_CURRENT,
    G_HAND,
    G_PLAYERS,
    M_N,
    M_TILE,
    MAX_WEIGHT_SLOTS,
    MOVE_COLS,
    P_STATIC_LEAVE,
    PASS,
    PLACE,
    STATIC,
)
from .leaves import bind_leaves
from .mc import margin
from .movelist import FEATURE_NAMES, FEATURES, K_MOVES, MOVE_ROOM, move_list, new_move_scratch
from .policies import HEURISTIC_WORK, default_static_values, new_static_scratch

CONTEXT_NAMES = ("static", "margin", "bag", "players", "rival_hand")
INPUT_NAMES = FEATURE_NAMES + CONTEXT_NAMES
INPUTS = len(INPUT_NAMES)
I_STATIC, I_MARGIN, I_BAG, I_PLAYERS, I_RIVAL = range(FEATURES, INPUTS)
MAX_HIDDEN = 1024  # units per hidden layer a file may have (the kernels' scratch)
FORMAT = "qwirkle-core move scorer"
FORMAT_VERSION = 1
WEIGHTS_FILE = Path(__file__).with_name("net.npz")
ARRAYS = ("shift", "scale", "w1", "b1", "w2", "b2", "w3", "b3")

WEIGHTS = Table("net.weights", np.float64)
OFFSETS = Table("net.offsets", np.int64)
_weights_ptr, _offsets_ptr = WEIGHTS.get, OFFSETS.get  # what kernels call


# -- weight files (Python) ----------------------------------------------------------------


class WeightsError(ValueError):
    """A weights file that cannot be used (missing, not this format, wrong shapes)."""


def read_weights(path):
    """The arrays of the weights file ``path`` (``ARRAYS``, float64) and its provenance
    (a dict), checked: this format and version, the inputs of this version, hidden
    sizes of at most MAX_HIDDEN units, finite values. Raises :class:`WeightsError`."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            doc = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise WeightsError(f"no weights file {str(path)!r}") from None
    except (OSError, ValueError) as e:
        raise WeightsError(f"{str(path)!r} is not a weights file (.npz): {e}") from None
    if str(doc.get("format", "")) != FORMAT or int(doc.get("format_version", -1)) != FORMAT_VERSION:
        raise WeightsError(f"{str(path)!r} is not a {FORMAT} file of version {FORMAT_VERSION}")
    if tuple(str(n) for n in doc.get("inputs", ())) != INPUT_NAMES:
        raise WeightsError(f"{str(path)!r}: its inputs are not this version's ({', '.join(INPUT_NAMES)})")
    missing = [k for k in ARRAYS if k not in doc]
    if missing:
        raise WeightsError(f"{str(path)!r}: missing arrays {', '.join(missing)}")
    arrays = {k: np.asarray(doc[k], np.float64) for k in ARRAYS}
    d = INPUTS
    h1 = arrays["b1"].shape[0] if arrays["b1"].ndim == 1 else -1
    h2 = arrays["b2"].shape[0] if arrays["b2"].ndim == 1 else -1
    shapes = {
        "shift": (d,),
        "scale": (d,),
        "w1": (d, h1),
        "b1": (h1,),
        "w2": (h1, h2),
        "b2": (h2,),
        "w3": (h2,),
        "b3": (1,),
    }
    for k, shape in shapes.items():
        if arrays[k].shape != shape:
            raise WeightsError(f"{str(path)!r}: {k} has shape {arrays[k].shape}, not {shape}")
        if not np.all(np.isfinite(arrays[k])):
            raise WeightsError(f"{str(path)!r}: {k} holds values that are not finite")
    if not (1 <= h1 <= MAX_HIDDEN and 1 <= h2 <= MAX_HIDDEN):
        raise WeightsError(f"{str(path)!r}: hidden layers of 1..{MAX_HIDDEN} units, not {h1} and {h2}")
    try:
        provenance = json.loads(str(doc.get("provenance", "{}")))
    except ValueError:
        provenance = {}
    return arrays, provenance


def pack(arrays):
    """A slot's flat block (see the module doc) of the arrays of :func:`read_weights`."""
    d, h1 = arrays["w1"].shape
    h2 = arrays["w2"].shape[1]
    return np.concatenate([np.array([d, h1, h2], np.float64), *(arrays[k].ravel() for k in ARRAYS)])


_lock = Lock()
_slots = []  # (key, block): key "shipped" or an absolute path
_keep = []  # every array ever bound: a kernel on another thread may still read an old one


def _rebind():
    blocks = [b for _, b in _slots]
    offsets = np.cumsum([0] + [b.shape[0] for b in blocks[:-1]]).astype(np.int64)
    flat = np.concatenate(blocks)
    _keep.extend((flat, offsets))
    WEIGHTS.bind(flat)
    OFFSETS.bind(offsets)


def _key(weights):
    return "shipped" if weights == "shipped" else os.path.abspath(os.fspath(weights))


def bind_net(weights="shipped"):
    """Load the weights file ``weights`` (a path, or ``"shipped"``) into a slot of this
    process, once per file (as it was when first loaded), and return the slot. The
    shipped file is always slot 0. Also binds the leave table (the ``static`` input).
    Raises :class:`WeightsError`."""
    bind_leaves()
    with _lock:
        if not _slots and weights != "shipped":
            _slots.append(("shipped", pack(read_weights(WEIGHTS_FILE)[0])))
            _rebind()
        key = _key(weights)
        for i, (k, _) in enumerate(_slots):
            if k == key:
                return i
        if len(_slots) >= MAX_WEIGHT_SLOTS:
            raise WeightsError(f"at most {MAX_WEIGHT_SLOTS} weights files in one process")
        arrays, _ = read_weights(WEIGHTS_FILE if key == "shipped" else key)
        _slots.append((key, pack(arrays)))
        _rebind()
        return len(_slots) - 1


def slot_name(slot):
    """The key (``"shipped"`` or an absolute path) of a slot loaded in this process."""
    with _lock:
        if not 0 <= slot < len(_slots):
            raise WeightsError(f"no weights are loaded in slot {slot} of this process")
        return _slots[slot][0]


# -- the kernels --------------------------------------------------------------------------


@njit(inline="always")
def weight_tables():
    """The bound weights and slot offsets: ``(float64[...], int64[slots])``."""
    ptr, n = _weights_ptr()
    optr, on = _offsets_ptr()
    return carray(ptr, (n,)), carray(optr, (on,))


@njit
def forward(w, off, x, count, h1, h2, out):
    """The scores of rows ``x[:count]`` (float64[K, INPUTS]) by the slot at offset ``off``
    of ``w`` into ``out[:count]``; ``h1``, ``h2`` float64[MAX_HIDDEN] scratch."""
    d = int(w[off])
    n1 = int(w[off + 1])
    n2 = int(w[off + 2])
    shift = off + 3
    scale = shift + d
    w1 = scale + d
    b1 = w1 + d * n1
    w2 = b1 + n1
    b2 = w2 + n1 * n2
    w3 = b2 + n2
    b3 = w3 + n2
    for m in range(count):
        for j in range(n1):
            h1[j] = w[b1 + j]
        for i in range(d):
            z = (x[m, i] - w[shift + i]) * w[scale + i]
            if z != 0.0:
                base = w1 + i * n1
                for j in range(n1):
                    h1[j] += z * w[base + j]
        for j in range(n2):
            h2[j] = w[b2 + j]
        for i in range(n1):
            a = h1[i]
            if a > 0.0:
                base = w2 + i * n2
                for j in range(n2):
                    h2[j] += a * w[base + j]
        s = w[b3]
        for j in range(n2):
            if h2[j] > 0.0:
                s += h2[j] * w[w3 + j]
        out[m] = s


@njit
def new_net_scratch():
    """The scratch of :func:`net_inputs` and :func:`net_choose`, made once per thread:
    ``(ms, moves, kind, feats, mask, prev, x, scores, h1, h2, svalues, work, sscratch)``
    (:func:`.movelist.new_move_scratch`'s, the move list's K_MOVES rows, the count it
    wrote last, the input rows float64[K_MOVES, INPUTS], their scores, the hidden
    units, the static values, the heuristic's work and the static agent's scratch)."""
    return (
        new_move_scratch(MOVE_ROOM),
        np.zeros((K_MOVES, MOVE_COLS), np.int32),
        np.zeros(K_MOVES, np.int8),
        np.zeros((K_MOVES, FEATURES), np.float32),
        np.zeros(K_MOVES, np.int8),
        np.zeros(1, np.int64),
        np.zeros((K_MOVES, INPUTS), np.float64),
        np.zeros(K_MOVES, np.float64),
        np.zeros(MAX_HIDDEN, np.float64),
        np.zeros(MAX_HIDDEN, np.float64),
        np.zeros(K_MOVES, np.float64),
        np.zeros(HEURISTIC_WORK, np.float64),
        new_static_scratch(),
    )


@njit
def _exchange_slots(hands, p, size, moves, i):
    """The hand slots (bits) an exchange row ``i`` of ``moves`` gives back: for each of
    its tiles the first slot holding it not taken yet."""
    used = 0
    for j in range(moves[i, M_N]):
        t = moves[i, M_TILE + j]
        for s in range(size):
            if hands[p, s] == t and (used >> s) & 1 == 0:
                used |= 1 << s
                break
    return used


@njit
def net_inputs(gs, ns):
    """List the current player's moves of ``gs`` (:func:`.movelist.move_list`, at most
    K_MOVES) and write their input rows into ``ns``'s ``x``. Returns the count."""
    ms, moves, kind, feats, mask, prev, x, _, _, _, svalues, work, sscratch = ns
    board, cross, anchors, bmeta, hands, bag, gmeta = (
        gs.board,
        gs.cross,
        gs.anchors,
        gs.bmeta,
        gs.hands,
        gs.bag,
        gs.gmeta,
    )
    count, n = move_list(board, cross, anchors, bmeta, hands, bag, gmeta, ms, moves, kind, feats, mask, prev[0])
    if count < 0:  # a turn with more placements than the buffer holds: a bigger one, this once
        count, n = move_list(
            board, cross, anchors, bmeta, hands, bag, gmeta, new_move_scratch(n), moves, kind, feats, mask, prev[0]
        )
    prev[0] = count
    fill_inputs(gs, moves, kind, feats, count, x, svalues, work, sscratch)
    return count


@njit
def fill_inputs(gs, moves, kind, feats, count, x, svalues, work, sscratch):
    """The input rows ``x[:count]`` (float64 or float32 [K, INPUTS]) of the ``count``
    moves the current player of ``gs`` has listed (``moves``, ``kind`` and ``feats``
    of :func:`.movelist.move_list`, placements first); ``svalues`` float64[K],
    ``work`` and ``sscratch`` scratch (:func:`new_net_scratch`'s)."""
    hands, gmeta = gs.hands, gs.gmeta
    places = 0
    while places < count and kind[places] == PLACE:
        places += 1
    default_static_values(gs, moves, places, svalues, work, sscratch, 0)
    kv = sscratch[0]
    w_leave = DEFAULT_SPECS[STATIC][P_STATIC_LEAVE]
    p = gmeta[G_CURRENT]
    size = gmeta[G_HAND + p]
    full = (1 << size) - 1
    for i in range(places, count):
        svalues[i] = 0.0
        if kind[i] == EXCHANGE:
            svalues[i] = w_leave * kv[full ^ _exchange_slots(hands, p, size, moves, i)]
    lead = margin(gmeta, p)
    rival = (p + 1) % gmeta[G_PLAYERS]
    for i in range(count):
        for c in range(FEATURES):
            x[i, c] = feats[i, c]
        x[i, I_STATIC] = svalues[i]
        x[i, I_MARGIN] = lead
        x[i, I_BAG] = gmeta[G_BAG]
        x[i, I_PLAYERS] = gmeta[G_PLAYERS]
        x[i, I_RIVAL] = gmeta[G_HAND + rival]
    keep(hands, gmeta, kv)


@njit
def net_scores(gs, ns, slot):
    """:func:`net_inputs`, then the scores of the moves by the weights of ``slot`` into
    ``ns``'s ``scores``. Returns the count."""
    count = net_inputs(gs, ns)
    w, offsets = weight_tables()
    forward(w, offsets[slot], ns[6], count, ns[8], ns[9], ns[7])
    return count


@njit
def set_listed(act, moves, kind, i):
    """Write row ``i`` of a move list (``moves``, ``kind``) into the action word."""
    if kind[i] == PLACE:
        set_place(act, moves, i)
        return
    act[A_KIND] = kind[i]
    act[A_N] = moves[i, M_N] if kind[i] == EXCHANGE else 0
    act[A_POINTS] = 0
    act[A_QWIRKLES] = 0
    for j in range(act[A_N]):
        act[A_TILE + j] = moves[i, M_TILE + j]


@njit
def net_choose(slot, gs, ns):
    """The net agent's action into ``gs.act``: the listed move of the highest score
    (the first of equal ones)."""
    count = net_scores(gs, ns, slot)
    scores = ns[7]
    best = 0
    for i in range(1, count):
        if scores[i] > scores[best]:
            best = i
    set_listed(gs.act, ns[1], ns[2], best)


@njit
def net_turn(slot, gs, ns):
    """One turn of the net agent with the weights of ``slot``: choose and apply."""
    net_choose(slot, gs, ns)
    apply_act(gs)


@njit
def rank_net(slot, gs, ns, limit, out):
    """The ``limit`` listed moves of the highest scores as action rows of ``out``, best
    first (ties in list order); returns their number, 0 when the only move is a pass
    (the search then passes as it would)."""
    count = net_scores(gs, ns, slot)
    scores, moves, kind = ns[7], ns[1], ns[2]
    if count == 1 and kind[0] == PASS:
        return 0
    k = min(count, limit, out.shape[0])
    taken = ns[10]  # the static values are not needed any more: marks of the rows taken
    for i in range(count):
        taken[i] = 0.0
    for c in range(k):
        best = -1
        for i in range(count):
            if taken[i] == 0.0 and (best < 0 or scores[i] > scores[best]):
                best = i
        taken[best] = 1.0
        for j in range(out.shape[1]):
            out[c, j] = 0
        set_listed(out[c], moves, kind, best)
    return k
