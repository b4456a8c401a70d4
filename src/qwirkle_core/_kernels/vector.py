"""The batched environment: many games stepped in one call (``qwirkle_core.env.vector``).

The N games live in arrays with a leading env axis (:class:`VecState`): the game arrays
of :mod:`.board` and :mod:`.state`, the turn being built (its legal placements, which of
them the tiles put down so far are part of, those tiles) and the observation arrays the
Python layer hands out. One call of :func:`step_self` (no opponents), :func:`step_plain`
(random and greedy opponents), :func:`step_heuristic` (the heuristic too) or
:func:`step_any` (every agent) steps the envs ``lo .. hi-1``: it resets those marked to
reset (and those whose game ended at the previous step), applies the others' actions,
plays the built-in opponents until the learner is to move again, and writes the
observations and exact action masks.

The encoding is the AEC environment's (docs/env.md): an action puts down one tile (hand
slot x cell of the W x W window), ends the placement (DONE), exchanges a set of slots or
passes. A turn's legal placements are generated once, at its start, into ``moves[i]``
(window cells instead of board cells); a place action keeps those that contain it
(moved to the front), and the mask is cleared and set again from them, so a step
touches only the mask entries it changes. A turn with more placements than ``moves``
holds (an opening of six tiles of one colour has 720) is generated again into the
thread's scratch for each tile put down (and DONE), until a tile narrows it to fit.

Memory: the cross-check masks (:mod:`.board`, 256 KiB a game) are not kept per env. A
thread has one set, empty, and loads an env's non-empty entries (those of the empty
cells next to its tiles, listed once each in ``bcells`` and ``bwords``) before it
changes or reads the env's board, and saves and clears them after; an env takes about
89 KiB at W = 40.
"""

from collections import namedtuple

import numba
import numpy as np
from numba.core import types

from ._jit import External, copy_into, njit, prefetch
from .actions import apply_action
from .agents import new_agent_scratch, search_turn, take_turn
from .board import (
    ALL,
    BMETA,
    GMASK,
    GRID_BITS,
    MAX_ANCHORS,
    NCELLS,
    cell_of,
    clear_board,
    lowest_bit_index,
    popcount,
    unwrap,
)
from .layout import (
    A_CELL,
    A_KIND,
    A_N,
    A_POINTS,
    A_QWIRKLES,
    A_TILE,
    ACT_SIZE,
    B_ANCHORS,
    B_MAXC,
    B_MAXR,
    B_MINC,
    B_MINR,
    B_TILES,
    EXCHANGE,
    G_BAG,
    G_CURRENT,
    G_HAND,
    G_OPENING,
    G_OVER,
    G_PLAYERS,
    G_SCORE,
    G_TURNS,
    GMETA,
    M_CELL,
    M_N,
    M_SCORE,
    M_TILE,
    MOVE_COLS,
    PASS,
    PLACE,
    STREAMS,
    GameState,
)
from .movegen import generate, new_scratch_array
from .movelist import FEATURES, MoveScratch, move_list
from .net import fill_inputs
from .policies import play_turns
from .rng import game_seed, seed_streams
from .state import HAND, NTILES, NUM_TILE_TYPES, hand_mask, new_game, opening_len, unseen_counts

REACH = 5  # a legal placement lies at most 5 cells beyond the tiles' bounding box
PLANES = 13  # 6 colours, 6 shapes, tiles put down this turn
EXCHANGES = 63
TURN_MOVES = 512  # placements a turn keeps per env (more: generated again until a tile narrows them)
LEGAL = 1024  # legal actions listed per env (more: the mask alone holds them)
BORDER = 4 * NTILES  # the empty cells next to the tiles: at most four a tile
ALL_SLOTS = (1 << HAND) - 1  # every hand slot, as bits
KEEP = 2  # resets[i] == KEEP: env i is left as it is (a reset of other envs)
R_POINTS, R_MARGIN, R_WIN = 0, 1, 2  # the reward kinds (config[CFG_REWARD])
CFG_REWARD = 0
ROLE_LEARNER, ROLE_POLICY, ROLE_KERNEL = 0, 1, 2  # who plays a seat (actions="moves": roles[i, q])

VecState = namedtuple(
    "VecState",
    "board anchors bmeta hands bag gmeta rng tcells bcells bwords nborder saved "
    "moves nmoves partial npartial origin drawn seeds episodes game_seeds pending "
    "planes hand scores hand_sizes bag_size unseen mask legal nlegal observer rewards reward terminated truncated "
    "credit config lmoves lkind feats lmask nlisted",
)
VecState.__doc__ = """The arrays of N games (leading axis N), one per field:

- the game arrays of :mod:`.board` and :mod:`.state`, stacked: ``board`` int8[N, NCELLS],
  ``anchors`` int32[N, MAX_ANCHORS], ``bmeta`` int64[N, BMETA], ``hands`` int8[N, 6, 6],
  ``bag`` int8[N, 108], ``gmeta`` int64[N, GMETA], ``rng`` uint64[N, STREAMS];
  ``tcells`` int16[N, 108] the cells of the tiles in the order they were placed (the
  first ``bmeta[i, B_TILES]``), ``bcells`` int16[N, BORDER] the empty cells next to them
  and ``bwords`` int64[N, BORDER, 2] their cross-check masks (the first ``nborder[i]``,
  int64[N]; see the module doc), ``saved`` int64[N] the tiles they were saved for;
- the turn: ``moves`` int32[N, TURN_MOVES, MOVE_COLS] its legal placements (``M_CELL``
  columns hold window cells ``(row - r0) * W + (col - c0)``), ``nmoves`` int64[N] their
  number (the first ``nmoves[i]`` rows: those the tiles put down so far are part of;
  above TURN_MOVES: the turn's, not kept, until a tile narrows them to TURN_MOVES),
  ``partial`` int64[N, 6, 3] those tiles (slot, window cell, tile), ``npartial``
  int64[N], ``origin`` int64[N, 2] the window's (r0, c0), ``drawn`` int64[N] the tiles
  drawn in the board planes;
- the episodes: ``seeds`` uint64[N] each env's seed, ``episodes`` uint64[N] its episode
  counter, ``game_seeds`` uint64[N] the seed of the game in play
  (``game_seed(seeds[i], episodes[i])``), ``pending`` uint8[N] 1 when the game ended at
  the last step (the next step resets it);
- the outputs: ``planes`` int8[N, 13, W, W], ``hand`` int8[N, 6, 13], ``scores``
  int32[N, P], ``hand_sizes`` int8[N, P], ``bag_size`` int32[N, 1], ``unseen``
  int8[N, 36], ``mask`` int8[N, 6 W^2 + 65], ``legal`` int32[N, LEGAL] its ones (the
  first ``nlegal[i]`` int64[N], in no order; all of them when ``nlegal[i] <= LEGAL``),
  ``observer`` int64[N] the seat observed, ``rewards`` int32[N, P] each seat's points
  this step, ``reward`` float32[N] the acting seat's, ``terminated`` and ``truncated``
  bool[N];
- the rewards: ``credit`` int32[N, P] each seat's reward value (``config[CFG_REWARD]``:
  R_POINTS its score, R_MARGIN its score minus the best other score, R_WIN its outcome
  +1/0/-1 once the game is over) as far as ``rewards`` handed it out (set to 0 at a new
  game and brought up to date at each turn committed: a step's ``rewards[i, q]`` is
  the change since, so they sum to the final value over an episode, an opening played
  by opponents in the step that dealt the game included); ``config`` int64[4];
- the move lists (``actions="moves"``; K 1 otherwise): ``lmoves`` int32[N, K, MOVE_COLS],
  ``lkind`` int8[N, K], ``feats`` float32[N, K, FEATURES], ``lmask`` int8[N, K] (see
  :func:`.movelist.move_list`) and ``nlisted`` int64[N] the moves listed."""

Scratch = namedtuple("Scratch", "cross moves values rmoves gen act tslots unseen agent seen")
Scratch.__doc__ = """One thread's scratch: the cross-check masks ``cross`` int64[NCELLS, 2]
(all ``ALL`` between steps), the opponents' move buffer ``moves`` int32[k, MOVE_COLS] and
their ``values`` float64[k], the buffer ``rmoves`` int32[k, MOVE_COLS] of the turns
generated again (the step kernels return these three, grown as needed), the move
generator's scratch ``gen``, an action word ``act``, ``tslots`` int64[36] (hand slots
per tile), ``unseen`` int64[36], the agents' :class:`.layout.AgentScratch`
``agent`` and ``seen`` uint8[W * W] (zero between steps: the hand slots whose mask
entry is set, per window cell, while a mask is being set)."""


def new_vec_state(n, players, window, k=0, reward=0):
    """The zeroed :class:`VecState` of ``n`` games of ``players`` seats and a window of
    side ``window`` (plain numpy: nothing to compile); ``k`` > 0: lists of ``k`` whole
    moves (the tile actions' mask is then not kept); ``reward``: R_POINTS, R_MARGIN or
    R_WIN."""
    w = window
    actions = HAND * w * w + 1 + EXCHANGES + 1 if k == 0 else 1
    rows = max(k, 1)
    config = np.zeros(4, np.int64)
    config[CFG_REWARD] = reward
    return VecState(
        np.full((n, NCELLS), -1, np.int8),
        np.zeros((n, MAX_ANCHORS), np.int32),
        np.zeros((n, BMETA), np.int64),
        np.full((n, HAND, HAND), -1, np.int8),
        np.zeros((n, NTILES), np.int8),
        np.zeros((n, GMETA), np.int64),
        np.zeros((n, STREAMS), np.uint64),
        np.zeros((n, NTILES), np.int16),
        np.zeros((n, BORDER), np.int16),
        np.zeros((n, BORDER, 2), np.int64),
        np.zeros(n, np.int64),
        np.zeros(n, np.int64),
        np.zeros((n, TURN_MOVES, MOVE_COLS), np.int32),
        np.zeros(n, np.int64),
        np.zeros((n, HAND, 3), np.int64),
        np.zeros(n, np.int64),
        np.zeros((n, 2), np.int64),
        np.zeros(n, np.int64),
        np.zeros(n, np.uint64),
        np.zeros(n, np.uint64),
        np.zeros(n, np.uint64),
        np.zeros(n, np.uint8),
        np.zeros((n, PLANES, w, w), np.int8),
        np.zeros((n, HAND, PLANES), np.int8),
        np.zeros((n, players), np.int32),
        np.zeros((n, players), np.int8),
        np.zeros((n, 1), np.int32),
        np.zeros((n, NUM_TILE_TYPES), np.int8),
        np.zeros((n, actions), np.int8),
        np.zeros((n, LEGAL if k == 0 else 1), np.int32),
        np.zeros(n, np.int64),
        np.zeros(n, np.int64),
        np.zeros((n, players), np.int32),
        np.zeros(n, np.float32),
        np.zeros(n, np.bool_),
        np.zeros(n, np.bool_),
        np.zeros((n, players), np.int32),
        config,
        np.zeros((n, rows, MOVE_COLS), np.int32),
        np.full((n, rows), PASS, np.int8),
        np.zeros((n, rows, FEATURES), np.float32),
        np.zeros((n, rows), np.int8),
        np.zeros(n, np.int64),
    )


@njit
def new_scratch(search, window):
    """A thread's :class:`Scratch` for a window of side ``window`` (``search``: room for
    the search agent)."""
    cross = np.empty((NCELLS, 2), np.int64)
    cross.fill(ALL)
    return Scratch(
        cross,
        np.zeros((1024, MOVE_COLS), np.int32),
        np.zeros(1024, np.float64),
        np.zeros((1024, MOVE_COLS), np.int32),
        new_scratch_array(),
        np.zeros(ACT_SIZE, np.int64),
        np.zeros(NUM_TILE_TYPES, np.int64),
        np.zeros(NUM_TILE_TYPES, np.int64),
        new_agent_scratch(search),
        np.zeros(window * window, np.uint8),
    )


# -- the board: the window, the planes, the cross-check masks ---------------------------


@njit(_nrt=False, inline="always")
def _window(bmeta, w):
    """``(r0, c0, fits)``: the window of side ``w`` centred on the tiles' bounding box
    with a margin of REACH on each side (the AEC environment's), and whether it fits."""
    minr = maxr = minc = maxc = np.int64(0)
    if bmeta[B_TILES] > 0:
        minr, maxr, minc, maxc = bmeta[B_MINR], bmeta[B_MAXR], bmeta[B_MINC], bmeta[B_MAXC]
    need_r = maxr - minr + 1 + 2 * REACH
    need_c = maxc - minc + 1 + 2 * REACH
    return minr - REACH - (w - need_r) // 2, minc - REACH - (w - need_c) // 2, need_r <= w and need_c <= w


@njit(_nrt=False, inline="always")
def _neighbour(cell, d):
    """The cell next to ``cell`` in direction ``d`` (0 up, 1 down, 2 left, 3 right)."""
    r, c = cell >> GRID_BITS, cell & GMASK
    if d == 0:
        r -= 1
    elif d == 1:
        r += 1
    elif d == 2:
        c -= 1
    else:
        c += 1
    return cell_of(r, c)


@njit(_nrt=False, inline="always")
def _load(vs, i, cross):
    """Write env ``i``'s cross-check masks into the (empty) thread set ``cross``."""
    for k in range(vs.nborder[i]):
        cell = vs.bcells[i, k]
        cross[cell, 0] = vs.bwords[i, k, 0]
        cross[cell, 1] = vs.bwords[i, k, 1]


@njit(_nrt=False, inline="always")
def _clear(vs, i, cross):
    """Empty ``cross`` after env ``i``'s masks were loaded into it (no tile put down
    since)."""
    for k in range(vs.nborder[i]):
        cell = vs.bcells[i, k]
        cross[cell, 0] = ALL
        cross[cell, 1] = ALL


@njit(_nrt=False, inline="always")
def _save_cell(vs, i, cross, cell, j):
    """List ``cell`` as env ``i``'s ``j``-th border cell when it is empty and its masks
    in ``cross`` are not yet listed (not ``ALL``: an empty cell next to a tile counts
    its neighbours in them), then empty its entry. Returns the new count."""
    w0, w1 = cross[cell, 0], cross[cell, 1]
    if vs.board[i, cell] < 0 and (w0 != ALL or w1 != ALL):
        vs.bcells[i, j] = cell
        vs.bwords[i, j, 0] = w0
        vs.bwords[i, j, 1] = w1
        j += 1
    cross[cell, 0] = ALL
    cross[cell, 1] = ALL
    return j


@njit(_nrt=False, inline="always")
def _save(vs, i, cross):
    """Keep env ``i``'s cross-check masks from ``cross`` and empty it again. The cells
    that may hold them: those listed before and, for the tiles put down since, their
    own cells (no longer listed) and their neighbours."""
    tiles = vs.bmeta[i, B_TILES]
    if vs.saved[i] == tiles:
        _clear(vs, i, cross)
        return
    j = 0
    for k in range(vs.nborder[i]):  # j <= k: a cell is read before its slot is written
        j = _save_cell(vs, i, cross, vs.bcells[i, k], j)
    for k in range(vs.saved[i], tiles):
        cell = vs.tcells[i, k]
        j = _save_cell(vs, i, cross, cell, j)
        for d in range(4):
            j = _save_cell(vs, i, cross, _neighbour(cell, d), j)
    vs.nborder[i] = j
    vs.saved[i] = tiles


@njit(_nrt=False, inline="always")
def _record(vs, i, act, before):
    """Note the cells of a placement just applied (``before``: the tiles before it)."""
    for j in range(vs.bmeta[i, B_TILES] - before):
        vs.tcells[i, before + j] = act[A_CELL + j]


@njit(_nrt=False, inline="always")
def _paint(vs, i, k, value):
    """Draw (``value`` 1) or erase (0) board tile ``k`` in env ``i``'s planes."""
    cell = vs.tcells[i, k]
    t = vs.board[i, cell]
    r = unwrap(cell >> GRID_BITS, vs.bmeta[i, B_MINR]) - vs.origin[i, 0]
    c = unwrap(cell & GMASK, vs.bmeta[i, B_MINC]) - vs.origin[i, 1]
    vs.planes[i, t // 6, r, c] = value
    vs.planes[i, 6 + t % 6, r, c] = value


@njit(_nrt=False, inline="always")
def _redraw(vs, i, r0, c0, fits):
    """Bring the board planes up to date for the window at ``(r0, c0)``: the tiles drawn
    at another origin are erased and drawn again, new tiles drawn; nothing when the
    window does not hold the board (the AEC environment's empty planes)."""
    if vs.origin[i, 0] != r0 or vs.origin[i, 1] != c0 or not fits:
        for k in range(vs.drawn[i]):
            _paint(vs, i, k, 0)
        vs.drawn[i] = 0
        vs.origin[i, 0] = r0
        vs.origin[i, 1] = c0
    if fits:
        for k in range(vs.drawn[i], vs.bmeta[i, B_TILES]):
            _paint(vs, i, k, 1)
        vs.drawn[i] = vs.bmeta[i, B_TILES]


# -- the turn's moves and the mask ------------------------------------------------------


@njit(_nrt=False, inline="always")
def _to_window(moves, n, bmeta, r0, c0, w):
    """Rewrite the board cells of ``moves[:n]`` as window cells."""
    for m in range(n):
        for j in range(moves[m, M_N]):
            cell = moves[m, M_CELL + j]
            r = unwrap(cell >> GRID_BITS, bmeta[B_MINR])
            c = unwrap(cell & GMASK, bmeta[B_MINC])
            moves[m, M_CELL + j] = (r - r0) * w + (c - c0)


@njit(_nrt=False, inline="always")
def _contains(moves, m, k, t):
    for j in range(moves[m, M_N]):
        if moves[m, M_CELL + j] == k and moves[m, M_TILE + j] == t:
            return True
    return False


@njit(_nrt=False, inline="always")
def _placements(vs, i, cross, moves, gen):
    """The current player's placements in env ``i`` into ``moves`` (board cells);
    returns their number (above the room in ``moves``: not all written)."""
    gm = vs.gmeta[i]
    hand = hand_mask(vs.hands[i], gm, gm[G_CURRENT])
    return generate(vs.board[i], cross, vs.anchors[i], vs.bmeta[i], hand, opening_len(gm), moves, gen, np.bool_(False))


@njit(_nrt=False)
def _regenerate(vs, i, cross, rmoves, gen):
    """Generate env ``i``'s placements (its masks loaded into ``cross``) into the
    thread's buffer (room for ``nmoves[i]``) and keep those the tiles put down so far
    are part of; returns their number."""
    n = _placements(vs, i, cross, rmoves, gen)
    _to_window(rmoves, n, vs.bmeta[i], vs.origin[i, 0], vs.origin[i, 1], vs.planes.shape[2])
    for q in range(vs.npartial[i]):
        n = _narrow(rmoves, n, vs.partial[i, q, 1], vs.partial[i, q, 2])
    return n


@njit(_nrt=False, inline="always")
def _narrow(moves, n, k, t):
    """Move the placements of ``moves[:n]`` that put tile ``t`` on window cell ``k`` to
    the front, in their order; returns their number."""
    kept = 0
    for m in range(n):
        if _contains(moves, m, k, t):
            if kept != m:
                copy_into(moves[kept], moves[m])
            kept += 1
    return kept


@njit(_nrt=False, inline="always")
def _add(mask, legal, c, a):
    """Set mask entry ``a``, not yet set (the ``c`` entries set so far listed in
    ``legal``); returns the new count. The count is a local of the callers: a store to
    the int8 mask may alias any memory, so a count kept in an array would be read again
    at each one."""
    mask[a] = 1
    if c < LEGAL:
        legal[c] = a
    return c + 1


@njit(_nrt=False, inline="always")
def _add_tile(mask, legal, seen, c, k, slots, cells):
    """Set the mask entries of window cell ``k`` for the hand slots ``slots`` (bits, not
    0) not set yet, as ``seen[k]`` (the thread's table of the slots set per cell) tells:
    the mask itself is not read, since its row is seldom in the cache. Returns the count.

    Whether an entry is new cannot be predicted (about a third of a turn's tile cells
    are), so the common case of one slot a tile takes no branch on it: the entry is
    written whether new or not (written again, it stays 1) and listed at ``legal[c]``,
    ``c`` counting it only when new (a repeat is overwritten by the next entry)."""
    new = slots & ~seen[k]
    seen[k] |= slots
    one = new if new else slots
    a = lowest_bit_index(one & -one) * cells + k
    mask[a] = 1
    if c < LEGAL:
        legal[c] = a
    c += new != 0
    rest = new & (new - 1)  # two tiles of a kind in the hand: their other slots
    while rest:
        low = rest & -rest
        c = _add(mask, legal, c, lowest_bit_index(low) * cells + k)
        rest ^= low
    return c


@njit(_nrt=False, inline="always")
def _forget(legal, seen, c, cells):
    """Empty the thread's table ``seen`` after ``c`` tile entries of a mask were set
    (before its DONE or exchange entries)."""
    if c <= LEGAL:
        for j in range(c):
            seen[legal[j] % cells] = 0
    else:
        for k in range(seen.shape[0]):
            seen[k] = 0


@njit(_nrt=False, inline="always")
def _mark(vs, i, moves, n, tslots, seen, k_new, t_new):
    """Set env ``i``'s mask entries of its turn so far (the mask empty): the tiles the
    placements ``moves[:n]`` still allow and DONE. ``k_new >= 0``: tile ``t_new`` was
    just put on window cell ``k_new``; the placements without it are dropped first.
    Returns the number of placements kept."""
    w = vs.planes.shape[2]
    mask, legal = vs.mask[i], vs.legal[i]
    c = np.int64(0)
    p = vs.gmeta[i, G_CURRENT]
    size = vs.gmeta[i, G_HAND + p]
    k_part = vs.npartial[i]
    used = 0
    for q in range(k_part):
        used |= 1 << vs.partial[i, q, 0]
    for s in range(size):
        if (used >> s) & 1 == 0:
            tslots[vs.hands[i, p, s]] |= 1 << s
    cells = w * w
    done = False
    if k_new >= 0:
        n = _narrow(moves, n, k_new, t_new)
    # Every placement kept holds the tiles put down, so a cell of theirs holds their tile
    # in each: marked as set for every slot, those cells are skipped.
    for q in range(k_part):
        seen[vs.partial[i, q, 1]] = ALL_SLOTS
    for m in range(n):
        length = moves[m, M_N]
        if length == k_part:
            done = True
        for j in range(length):
            k = moves[m, M_CELL + j]
            b = tslots[moves[m, M_TILE + j]]
            if b & ~seen[k]:
                c = _add_tile(mask, legal, seen, c, k, b, cells)
    for s in range(size):
        tslots[vs.hands[i, p, s]] = 0
    for q in range(k_part):
        seen[vs.partial[i, q, 1]] = 0
    _forget(legal, seen, c, cells)
    if k_part > 0:
        if done:
            c = _add(mask, legal, c, HAND * cells)
    else:
        c = _mark_exchanges(vs, i, mask, legal, c, n, size)
    vs.nlegal[i] = c
    return n


@njit(_nrt=False, inline="always")
def _mark_exchanges(vs, i, mask, legal, c, n, size):
    """The mask entries of a turn's start beside the tiles: the exchanges the bag and
    the opening allow, or the pass when nothing else is legal. Returns the count."""
    first = mask.shape[0] - EXCHANGES - 2
    bag = vs.gmeta[i, G_BAG]
    if bag > 0 and vs.gmeta[i, G_OPENING] == 0:
        for b in range(1, EXCHANGES + 1):
            if b < (1 << size) and popcount(b) <= bag:
                c = _add(mask, legal, c, first + b)
    elif n == 0:
        c = _add(mask, legal, c, first + EXCHANGES + 1)
    return c


@njit(_nrt=False, inline="always")
def _open_turn(vs, i, moves, n, tslots, seen):
    """The start of env ``i``'s turn, its ``n`` placements just generated into ``moves``
    (board cells): in one pass, their cells rewritten as window cells and the mask set
    from them."""
    w = vs.planes.shape[2]
    cells = w * w
    mask, legal = vs.mask[i], vs.legal[i]
    c = np.int64(0)
    p = vs.gmeta[i, G_CURRENT]
    size = vs.gmeta[i, G_HAND + p]
    minr, minc = vs.bmeta[i, B_MINR], vs.bmeta[i, B_MINC]
    r0, c0 = vs.origin[i, 0], vs.origin[i, 1]
    for s in range(size):
        tslots[vs.hands[i, p, s]] |= 1 << s
    for m in range(n):
        for j in range(moves[m, M_N]):
            cell = moves[m, M_CELL + j]
            k = (unwrap(cell >> GRID_BITS, minr) - r0) * w + (unwrap(cell & GMASK, minc) - c0)
            moves[m, M_CELL + j] = k
            c = _add_tile(mask, legal, seen, c, k, tslots[moves[m, M_TILE + j]], cells)
    for s in range(size):
        tslots[vs.hands[i, p, s]] = 0
    _forget(legal, seen, c, cells)
    vs.nlegal[i] = _mark_exchanges(vs, i, mask, legal, c, n, size)


@njit(_nrt=False, inline="always")
def _unmark(vs, i):
    """Clear env ``i``'s mask (the entries listed in ``legal``; all, when more)."""
    c = vs.nlegal[i]
    mask = vs.mask[i]
    if c <= LEGAL:
        for j in range(c):
            mask[vs.legal[i, j]] = 0
    else:
        for a in range(mask.shape[0]):
            mask[a] = 0
    vs.nlegal[i] = 0


# -- observations -------------------------------------------------------------------------


@njit(_nrt=False, inline="always")
def _observe(vs, i, p, unseen):
    """Write seat ``p``'s view of env ``i`` (besides the board planes and the mask)."""
    gm = vs.gmeta[i]
    players = gm[G_PLAYERS]
    size = gm[G_HAND + p]
    mine = p == gm[G_CURRENT] and gm[G_OVER] == 0
    for s in range(HAND):
        for j in range(PLANES):
            vs.hand[i, s, j] = 0
        if s < size:
            t = vs.hands[i, p, s]
            vs.hand[i, s, t // 6] = 1
            vs.hand[i, s, 6 + t % 6] = 1
            vs.hand[i, s, 12] = 1
    if mine:
        for q in range(vs.npartial[i]):
            vs.hand[i, vs.partial[i, q, 0], 12] = 0
    for j in range(players):
        q = (p + j) % players
        vs.scores[i, j] = gm[G_SCORE + q]
        vs.hand_sizes[i, j] = gm[G_HAND + q]
    vs.bag_size[i, 0] = gm[G_BAG]
    unseen_counts(vs.hands[i], vs.bag[i], gm, p, unseen)
    for t in range(NUM_TILE_TYPES):
        vs.unseen[i, t] = unseen[t]
    vs.observer[i] = p


@njit(_nrt=False, inline="always")
def _paint_partial(vs, i, q, value):
    w = vs.planes.shape[2]
    k, t = vs.partial[i, q, 1], vs.partial[i, q, 2]
    r, c = k // w, k % w
    vs.planes[i, t // 6, r, c] = value
    vs.planes[i, 6 + t % 6, r, c] = value
    vs.planes[i, 12, r, c] = value


# -- a step of one env --------------------------------------------------------------------


@njit(_nrt=False, inline="always")
def _place(vs, i, a, moves, n, tslots, seen):
    """Put down a tile (action ``a`` < 6 W^2, in the mask; ``moves[:n]`` the turn's
    placements): the turn goes on. Returns the number of placements kept."""
    w = vs.planes.shape[2]
    s, k = a // (w * w), a % (w * w)
    p = vs.gmeta[i, G_CURRENT]
    t = vs.hands[i, p, s]
    _unmark(vs, i)
    q = vs.npartial[i]
    vs.partial[i, q, 0] = s
    vs.partial[i, q, 1] = k
    vs.partial[i, q, 2] = t
    vs.npartial[i] = q + 1
    n = _mark(vs, i, moves, n, tslots, seen, k, t)
    _paint_partial(vs, i, q, np.int8(1))
    vs.hand[i, s, 12] = 0
    return n


@njit(_nrt=False, inline="always")
def _commit(vs, i, a, moves, cross, act):
    """End the turn with action ``a`` (DONE, an exchange or the pass; in the mask) and
    apply it, env ``i``'s cross-check masks loaded into ``cross`` (and left there)."""
    w = vs.planes.shape[2]
    first = HAND * w * w
    _unmark(vs, i)
    k_part = vs.npartial[i]
    for q in range(k_part):
        _paint_partial(vs, i, q, np.int8(0))
    p = vs.gmeta[i, G_CURRENT]
    if a == first:
        m = 0
        while moves[m, M_N] != k_part:
            m += 1
        act[A_KIND] = PLACE
        act[A_N] = k_part
        act[A_POINTS] = moves[m, M_SCORE]
        act[A_QWIRKLES] = 0
        r0, c0 = vs.origin[i, 0], vs.origin[i, 1]
        for j in range(k_part):
            k = moves[m, M_CELL + j]
            act[A_CELL + j] = cell_of(r0 + k // w, c0 + k % w)
            act[A_TILE + j] = moves[m, M_TILE + j]
    elif a <= first + EXCHANGES:
        b = a - first
        act[A_KIND] = EXCHANGE
        j = 0
        for s in range(HAND):
            if (b >> s) & 1:
                act[A_TILE + j] = vs.hands[i, p, s]
                j += 1
        act[A_N] = j
    else:
        act[A_KIND] = PASS
        act[A_N] = 0
    vs.npartial[i] = 0
    _load(vs, i, cross)
    before = vs.bmeta[i, B_TILES]
    apply_action(vs.board[i], cross, vs.anchors[i], vs.bmeta[i], vs.hands[i], vs.bag[i], vs.gmeta[i], vs.rng[i], act)
    _record(vs, i, act, before)


@njit(_nrt=False, inline="always")
def _reset(vs, i, cross, players, rule_opening):
    """Deal env ``i`` the game of its seed and episode (``cross``, the thread's empty
    set, stays empty: its masks are dropped, not loaded)."""
    mask = vs.mask[i]
    for a in range(mask.shape[0]):
        mask[a] = 0
    vs.nlegal[i] = 0
    for k in range(vs.drawn[i]):
        _paint(vs, i, k, np.int8(0))
    for q in range(vs.npartial[i]):
        _paint_partial(vs, i, q, np.int8(0))
    vs.drawn[i] = 0
    vs.npartial[i] = 0
    vs.pending[i] = 0
    vs.terminated[i] = False
    vs.truncated[i] = False
    for q in range(players):
        vs.rewards[i, q] = 0
        vs.credit[i, q] = 0
    vs.reward[i] = 0
    clear_board(vs.board[i], cross, vs.anchors[i], vs.bmeta[i])
    vs.nborder[i] = 0
    vs.saved[i] = 0
    seed = game_seed(vs.seeds[i], vs.episodes[i])
    vs.game_seeds[i] = seed
    seed_streams(vs.rng[i], seed)
    new_game(vs.hands[i], vs.bag[i], vs.gmeta[i], vs.rng[i], players, rule_opening)


@njit(_nrt=False, inline="always")
def _value(gm, q, kind):
    """Seat ``q``'s reward value (``kind`` R_POINTS, R_MARGIN or R_WIN; see VecState)."""
    s = gm[G_SCORE + q]
    if kind == R_POINTS:
        return s
    best = np.int64(-(1 << 40))
    for r in range(gm[G_PLAYERS]):
        if r != q:
            best = max(best, gm[G_SCORE + r])
    if kind == R_MARGIN:
        return s - best
    if gm[G_OVER] == 0:
        return np.int64(0)
    return np.int64(1) if s > best else (np.int64(0) if s == best else np.int64(-1))


@njit(_nrt=False, inline="always")
def _credit(vs, i, players):
    """Add each seat's change of value since it was last credited to ``rewards[i]``."""
    gm = vs.gmeta[i]
    kind = vs.config[CFG_REWARD]
    for q in range(players):
        v = _value(gm, q, kind)
        vs.rewards[i, q] += v - vs.credit[i, q]
        vs.credit[i, q] = v


@njit(_nrt=False)
def _due(vs, i, learner, max_turns):
    """Whether an opponent is to move in env ``i``."""
    gm = vs.gmeta[i]
    if learner < 0 or gm[G_OVER] != 0 or gm[G_CURRENT] == learner or gm[G_TURNS] >= max_turns:
        return False
    return _window(vs.bmeta[i], vs.planes.shape[2])[2]


@njit(_nrt=False, inline="always")
def _act(vs, i, a, reset, cross, rmoves, gen, act, tslots, seen, rule_opening):
    """Reset env ``i`` (``reset``, or its game ended at the last step) or take its
    action ``a`` (``rmoves``: room for its placements when there are more than
    TURN_MOVES), or leave it as it is (``reset`` KEEP). Returns ``(mode, actor)``: 0
    when only a tile was put down or nothing done (the step of env ``i`` is over), 1
    when the turn was committed, 2 for a new game (both with env ``i``'s masks loaded
    into ``cross``); and the seat that acted."""
    gm = vs.gmeta[i]
    if reset == KEEP:
        return 0, gm[G_CURRENT]
    if reset or vs.pending[i]:
        if vs.pending[i] and not reset:
            vs.episodes[i] += np.uint64(1)
        _reset(vs, i, cross, vs.scores.shape[1], rule_opening)
        return 2, gm[G_CURRENT]
    actor = gm[G_CURRENT]
    vs.terminated[i] = False
    vs.truncated[i] = False
    for q in range(gm[G_PLAYERS]):
        vs.rewards[i, q] = 0
    vs.reward[i] = 0
    n = vs.nmoves[i]
    first = HAND * vs.planes.shape[2] * vs.planes.shape[3]
    # a turn of more placements than it keeps: generated again for a tile or DONE (an
    # exchange or the pass reads none)
    regenerated = n > TURN_MOVES and a <= first
    moves = vs.moves[i]
    if regenerated:
        _load(vs, i, cross)
        n = _regenerate(vs, i, cross, rmoves, gen)
        moves = rmoves
        _clear(vs, i, cross)
    if a < first:
        n = _place(vs, i, a, moves, n, tslots, seen)
        if not regenerated:
            vs.nmoves[i] = n
        elif n <= TURN_MOVES:  # narrowed to fit: kept, not generated again
            for m in range(n):
                copy_into(vs.moves[i, m], moves[m])
            vs.nmoves[i] = n
        return 0, actor
    _commit(vs, i, a, moves, cross, act)
    return 1, actor


@njit(_nrt=False, forceinline=True)
def _finish(vs, i, cross, gen, tslots, seen, unseen, learner, max_turns, actor, mode):
    """After the game changed (``mode`` 1: a turn was committed, 2: a new game; the
    masks loaded into ``cross``): the rewards, the window and planes, the end of the
    episode (over, past ``max_turns`` or outgrowing the window) or the next turn's
    moves and mask, the observation; then saves the masks. Returns the number of moves
    (above TURN_MOVES: the caller generates them again, sets the mask and saves)."""
    gm = vs.gmeta[i]
    players = gm[G_PLAYERS]
    if mode == 1:
        _credit(vs, i, players)
        vs.reward[i] = vs.rewards[i, actor]
    r0, c0, fits = _window(vs.bmeta[i], vs.planes.shape[2])
    _redraw(vs, i, r0, c0, fits)
    over = gm[G_OVER] != 0
    if over or gm[G_TURNS] >= max_turns or not fits:
        if mode == 2:  # it ended in the step that dealt it (the opening outgrew the window)
            _credit(vs, i, players)
            vs.reward[i] = vs.rewards[i, learner if learner >= 0 else actor]
        vs.terminated[i] = over
        vs.truncated[i] = not over
        vs.pending[i] = 1
        vs.nmoves[i] = 0
        _observe(vs, i, learner if learner >= 0 else actor, unseen)
        _save(vs, i, cross)
        return 0
    n = _placements(vs, i, cross, vs.moves[i], gen)
    vs.nmoves[i] = n
    _observe(vs, i, learner if learner >= 0 else gm[G_CURRENT], unseen)
    if n <= TURN_MOVES:
        _open_turn(vs, i, vs.moves[i], n, tslots, seen)
        _save(vs, i, cross)
    return n


# -- prefetching: an env's rows are far apart in memory, and far from the last env's ---


AHEAD = 16  # envs: the rows an env's step reads are prefetched this many envs before it


@njit(_nrt=False, inline="always")
def _prefetch_lists(vs, j):
    """Prefetch env ``j``'s list of mask entries and game row (read to find the lines
    :func:`_prefetch_step` prefetches, AHEAD envs later)."""
    for k in range(0, min(vs.nlegal[j], LEGAL), 16):
        prefetch(vs.legal, j, k)
    for k in range(0, GMETA, 8):
        prefetch(vs.gmeta, j, k)


@njit(_nrt=False, inline="always")
def _prefetch_step(vs, j, a):
    """Prefetch what env ``j``'s action ``a`` reads: its mask entries, its turn's
    placements (a tile, or DONE) and its board (the end of a turn, DONE included: the
    cross-check masks saved, the anchors, the board's rows)."""
    for k in range(min(vs.nlegal[j], LEGAL)):
        prefetch(vs.mask, j, vs.legal[j, k])
    first = HAND * vs.planes.shape[2] * vs.planes.shape[3]
    if a <= first:
        n = min(vs.nmoves[j], TURN_MOVES)
        for m in range(0, n, 8):
            prefetch(vs.moves, j, m, 0)
    if a >= first:
        for k in range(0, vs.nborder[j], 4):
            prefetch(vs.bwords, j, k, 0)
        for k in range(0, vs.nborder[j], 32):
            prefetch(vs.bcells, j, k)
        for k in range(0, vs.bmeta[j, B_ANCHORS], 16):
            prefetch(vs.anchors, j, k)
        if vs.bmeta[j, B_TILES] > 0:
            for r in range(vs.bmeta[j, B_MINR] - 1, vs.bmeta[j, B_MAXR] + 2):
                prefetch(vs.board, j, cell_of(r, vs.bmeta[j, B_MINC] - 1))
                prefetch(vs.board, j, cell_of(r, vs.bmeta[j, B_MAXC] + 1))


ROOM, MARK = -1, -2  # what _advance returns for an env that needs the caller


@njit(_nrt=False)
def _advance(vs, sc, rmoves, i, hi, actions, resets, learner, max_turns, rules, mode, actor):
    """Step envs ``i``, ``i + 1``, ... below ``hi`` as far as they need nothing of the
    caller (``sc`` the thread's :class:`Scratch`, its buffer ``rmoves`` perhaps grown);
    ``mode`` not 0: env ``i``'s opponents have played after the turn of seat ``actor``
    (``mode`` as :func:`_act` returned it), only :func:`_finish` is left of its step.

    One call for many envs, with :func:`_act` and :func:`_finish` inlined (each at its
    one call site): a call of a kernel that takes ``vs`` copies each of its hundreds of
    array fields, and they run at every step and turn. They are inlined in ``_nrt=False``
    code, not in the step kernels, which count references (they may allocate): there
    each array view they take would count too. :func:`_finish` is inlined by LLVM
    (``forceinline``), not by numba, whose inlining of it took 30 s more to compile.
    The rows of env ``i + AHEAD`` are prefetched meanwhile.

    Returns ``(i, what, actor, n)``: ``i == hi`` when every env is stepped; else env
    ``i`` needs the caller: ``what`` ROOM, a buffer ``rmoves`` for ``n`` placements
    before its action; MARK, its new turn of ``n`` placements (more than TURN_MOVES) to
    be marked (both: :func:`_serve`); 1 or 2 (the mode of :func:`_act`): the turn of
    seat ``actor`` committed, its opponents to play, then this again with ``mode``."""
    cross, gen, act, tslots, seen, unseen = sc.cross, sc.gen, sc.act, sc.tslots, sc.seen, sc.unseen
    while i < hi:
        if i + AHEAD < hi:
            _prefetch_step(vs, i + AHEAD, actions[i + AHEAD])
            if i + 2 * AHEAD < hi:
                _prefetch_lists(vs, i + 2 * AHEAD)
        if mode == 0:
            if vs.nmoves[i] > rmoves.shape[0]:
                return i, ROOM, 0, vs.nmoves[i]
            mode, actor = _act(vs, i, actions[i], resets[i], cross, rmoves, gen, act, tslots, seen, rules)
            if mode != 0 and learner >= 0 and _due(vs, i, learner, max_turns):
                return i, mode, actor, 0
        if mode != 0:
            n = _finish(vs, i, cross, gen, tslots, seen, unseen, learner, max_turns, actor, mode)
            mode = 0
            if n > TURN_MOVES:  # a turn of more placements than it keeps (seldom)
                return i, MARK, actor, n
        i += 1
    return hi, 0, 0, 0


ADVANCE = External("vector.advance", lambda *args: types.UniTuple(types.int64, 4))
"""The step kernels' call of :func:`_advance`: not linked into them
(:class:`._jit.External`), so its machine code (the bulk of the environment's) is
compiled once, not again in each step kernel; :func:`bind_advance` points it there."""
_advance_call = ADVANCE.call


def bind_advance(vs, sc):
    """Point the step kernels' calls of :func:`_advance` at its machine code for the
    types of the state ``vs`` and a thread's scratch ``sc`` (compiling it, or loading
    it from the disk cache, the first time)."""
    i64 = types.int64
    actions, resets = np.zeros(1, np.int64), np.zeros(1, np.uint8)
    argtypes = (*map(numba.typeof, (vs, sc, sc.rmoves)), i64, i64, *map(numba.typeof, (actions, resets)), *[i64] * 5)
    if ADVANCE.cell[1] != ADVANCE.signature_hash(argtypes):
        ADVANCE.bind(_advance, argtypes)


@njit(_nrt=False)
def _mark_regenerated(vs, i, cross, rmoves, gen, tslots, seen):
    """The mask of env ``i``'s new turn of more than TURN_MOVES placements; then saves
    its masks."""
    n = _regenerate(vs, i, cross, rmoves, gen)
    _mark(vs, i, rmoves, n, tslots, seen, np.int64(-1), np.int64(-1))
    _save(vs, i, cross)


@njit
def _serve(vs, sc, rmoves, i, what, n):
    """Do what :func:`_advance` left to the caller for env ``i`` (``what`` ROOM or MARK,
    ``n`` placements): grow the buffer ``rmoves`` to hold them and, for MARK, mark the
    new turn. Returns ``(rmoves, i)``: the buffer and the env to go on from (seldom
    called: a turn of more than TURN_MOVES placements)."""
    if n > rmoves.shape[0]:
        rmoves = np.zeros((2 * n, MOVE_COLS), np.int32)
    if what == MARK:
        _mark_regenerated(vs, i, sc.cross, rmoves, sc.gen, sc.tslots, sc.seen)
        i += 1
    return rmoves, i


@njit(inline="always")
def _state(vs, i, sc):
    return GameState(
        vs.board[i],
        sc.cross,
        vs.anchors[i],
        vs.bmeta[i],
        vs.hands[i],
        vs.bag[i],
        vs.gmeta[i],
        vs.rng[i],
        sc.gen,
        sc.act,
    )


# -- the entry kernels: one per set of opponents (each compiles only what it plays) --------
#
# Each steps its range through _advance, which returns for an env that needs the caller:
# its buffer grown or its new turn marked (_serve), or its opponents to play (then the
# env's step ends in _advance again, called with ``what`` the mode of the turn played).


@njit(nogil=True)
def step_self(vs, lo, hi, actions, resets, specs, learner, max_turns, rule_opening, sc):
    """Step envs ``lo .. hi-1`` of ``vs`` (a :class:`VecState`) without opponents
    (``learner`` -1: every seat acts through ``actions``): reset those with
    ``resets[i]`` 1 (uint8[N]) or a game that ended at the last step, leave those with
    ``resets[i]`` KEEP as they are, take the others' action ``actions[i]`` (int64[N],
    in the mask). ``max_turns``: truncate there; ``rule_opening``: the opening rule;
    ``specs`` is not read. Returns the scratch's buffers ``(moves, values, rmoves)``
    (``rmoves`` grown as needed: the next call takes them)."""
    rmoves = sc.rmoves
    i, what, actor = lo, 0, 0
    while True:
        i, what, actor, n = _advance_call(
            vs, sc, rmoves, i, hi, actions, resets, learner, max_turns, rule_opening, what, actor
        )
        if i == hi:
            break
        rmoves, i = _serve(vs, sc, rmoves, i, what, n)
        what = 0
    return sc.moves, sc.values, rmoves


@njit(nogil=True)
def step_plain(vs, lo, hi, actions, resets, specs, learner, max_turns, rule_opening, sc):
    """:func:`step_self` with random or greedy opponents: ``specs[seat]`` (float64[P,
    SPEC_COLS]) for every seat but ``learner``, played until the learner is to move
    again. Returns the scratch's buffers ``(moves, values, rmoves)`` (grown as needed:
    the next call takes them)."""
    moves, values, rmoves = sc.moves, sc.values, sc.rmoves
    cross, gen, act = sc.cross, sc.gen, sc.act
    i, what, actor = lo, 0, 0
    while True:
        i, what, actor, n = _advance_call(
            vs, sc, rmoves, i, hi, actions, resets, learner, max_turns, rule_opening, what, actor
        )
        if i == hi:
            break
        if what == ROOM or what == MARK:
            rmoves, i = _serve(vs, sc, rmoves, i, what, n)
            what = 0
            continue
        board, anchors, bmeta, hands, bag, gm, rng = (
            vs.board[i],
            vs.anchors[i],
            vs.bmeta[i],
            vs.hands[i],
            vs.bag[i],
            vs.gmeta[i],
            vs.rng[i],
        )
        while _due(vs, i, learner, max_turns):
            before = bmeta[B_TILES]
            moves, values = play_turns(
                specs,
                board,
                cross,
                anchors,
                bmeta,
                hands,
                bag,
                gm,
                rng,
                gen,
                act,
                moves,
                values,
                values,
                gm[G_TURNS] + 1,
                True,
                None,
                None,
            )
            _record(vs, i, act, before)
    return moves, values, rmoves


@njit(nogil=True)
def step_heuristic(vs, lo, hi, actions, resets, specs, learner, max_turns, rule_opening, sc):
    """:func:`step_plain` with heuristic opponents too."""
    moves, values, rmoves = sc.moves, sc.values, sc.rmoves
    cross, gen, act = sc.cross, sc.gen, sc.act
    i, what, actor = lo, 0, 0
    while True:
        i, what, actor, n = _advance_call(
            vs, sc, rmoves, i, hi, actions, resets, learner, max_turns, rule_opening, what, actor
        )
        if i == hi:
            break
        if what == ROOM or what == MARK:
            rmoves, i = _serve(vs, sc, rmoves, i, what, n)
            what = 0
            continue
        gs = _state(vs, i, sc)
        gm = gs.gmeta
        while _due(vs, i, learner, max_turns):
            before = gs.bmeta[B_TILES]
            turns = gm[G_TURNS]
            moves, values = play_turns(
                specs,
                gs.board,
                cross,
                gs.anchors,
                gs.bmeta,
                gs.hands,
                gs.bag,
                gm,
                gs.rng,
                gen,
                act,
                moves,
                values,
                sc.agent.work,
                turns + 1,
                True,
                True,
                None,
            )
            if gm[G_TURNS] == turns:  # the heuristic's reply search is due
                moves = search_turn(specs[gm[G_CURRENT]], gs, moves, sc.agent, False)
            _record(vs, i, act, before)
    return moves, values, rmoves


@njit(nogil=True)
def step_any(vs, lo, hi, actions, resets, specs, learner, max_turns, rule_opening, sc):
    """:func:`step_plain` with any built-in opponents (each turn through
    :func:`.agents.take_turn`)."""
    moves, rmoves = sc.moves, sc.rmoves
    i, what, actor = lo, 0, 0
    while True:
        i, what, actor, n = _advance_call(
            vs, sc, rmoves, i, hi, actions, resets, learner, max_turns, rule_opening, what, actor
        )
        if i == hi:
            break
        if what == ROOM or what == MARK:
            rmoves, i = _serve(vs, sc, rmoves, i, what, n)
            what = 0
            continue
        gs = _state(vs, i, sc)
        while _due(vs, i, learner, max_turns):
            before = gs.bmeta[B_TILES]
            moves = take_turn(specs[gs.gmeta[G_CURRENT]], gs, moves, sc.agent)
            _record(vs, i, sc.act, before)
    return moves, sc.values, rmoves


@njit
def sample_masked(vs, counter, out):
    """A uniformly random legal action of each env into ``out`` (int64[N]; 0 when it has
    none: its game ended and the next step resets it), drawn from (``game_seeds[i]``,
    ``counter``): the same choices whatever N or the threads."""
    for i in range(vs.nlegal.shape[0]):
        n = vs.nlegal[i]
        out[i] = 0
        if n == 0:
            continue
        pick = np.int64(game_seed(vs.game_seeds[i], counter) % np.uint64(n))
        if n <= LEGAL:
            out[i] = vs.legal[i, pick]
            continue
        row = vs.mask[i]
        for a in range(row.shape[0]):
            if row[a]:
                if pick == 0:
                    out[i] = a
                    break
                pick -= 1


@njit
def check_actions(vs, actions, out, illegal):
    """Check the actions (int64[N]) against the masks: copy those of the envs whose game
    goes on into ``out`` and set ``illegal[i]`` (bool[N]) for each env whose action is
    outside its mask (its ``out[i]`` 0, as for an env about to be reset, whose action is
    ignored, never illegal). Returns how many are illegal."""
    bad = 0
    for i in range(actions.shape[0]):
        a = actions[i]
        out[i] = 0
        illegal[i] = False
        if vs.pending[i]:
            continue
        if a < 0 or a >= vs.mask.shape[1] or vs.mask[i, a] == 0:
            illegal[i] = True
            bad += 1
        else:
            out[i] = a
    return bad


# -- actions="moves": a step plays a whole move from the env's list -----------------------
#
# The kernels below step envs lo .. hi-1: reset (as above) or apply the listed move
# ``actions[i]``, let the seats played inside the kernel (``roles[i, q]`` ROLE_KERNEL,
# agent ``specs[i, q]``) move until a seat played from Python (ROLE_LEARNER or
# ROLE_POLICY) is to move, then list that seat's moves (:func:`.movelist.move_list`)
# and write its observation. ``rewards`` is added to (the caller clears it at the start
# of a step: a step of the Python layer may call a kernel more than once, for the seats
# of its frozen policies).


@njit(_nrt=False, inline="always")
def _due_roles(vs, i, roles, max_turns):
    """Whether a seat played inside the kernel is to move in env ``i``."""
    gm = vs.gmeta[i]
    if gm[G_OVER] != 0 or roles[i, gm[G_CURRENT]] != ROLE_KERNEL or gm[G_TURNS] >= max_turns:
        return False
    return _window(vs.bmeta[i], vs.planes.shape[2])[2]


@njit(_nrt=False, inline="always")
def _listed_action(vs, i, a, act):
    """Write env ``i``'s listed move ``a`` into the action word ``act``."""
    row = vs.lmoves[i, a]
    kind = vs.lkind[i, a]
    act[A_POINTS] = 0
    act[A_QWIRKLES] = 0
    act[A_N] = 0
    if kind == PLACE:
        act[A_KIND] = PLACE
        act[A_N] = row[M_N]
        act[A_POINTS] = row[M_SCORE]
        for j in range(row[M_N]):
            act[A_CELL + j] = row[M_CELL + j]
            act[A_TILE + j] = row[M_TILE + j]
    elif kind == EXCHANGE:
        act[A_KIND] = EXCHANGE
        act[A_N] = row[M_N]
        for j in range(row[M_N]):
            act[A_TILE + j] = row[M_TILE + j]
    else:
        act[A_KIND] = PASS


@njit(_nrt=False, inline="always")
def _moves_begin(vs, i, a, reset, cross, act, rule_opening):
    """Reset env ``i`` or apply its listed move ``a`` (its cross-check masks then
    loaded into ``cross``). Returns ``(mode, actor)``: 0 left as it is (KEEP), 1 a
    move applied, 2 a new game; the seat to move before."""
    gm = vs.gmeta[i]
    actor = gm[G_CURRENT]
    if reset == KEEP:
        return 0, actor
    if reset or vs.pending[i]:
        if vs.pending[i] and not reset:
            vs.episodes[i] += np.uint64(1)
        _reset(vs, i, cross, vs.scores.shape[1], rule_opening)
        return 2, gm[G_CURRENT]
    vs.terminated[i] = False
    vs.truncated[i] = False
    _listed_action(vs, i, a, act)
    _load(vs, i, cross)
    before = vs.bmeta[i, B_TILES]
    apply_action(vs.board[i], cross, vs.anchors[i], vs.bmeta[i], vs.hands[i], vs.bag[i], gm, vs.rng[i], act)
    _record(vs, i, act, before)
    return 1, actor


@njit(inline="always")
def _grown(ms, n):
    """``ms`` with a placements buffer of ``2 n`` rows."""
    return MoveScratch(np.zeros((2 * n, MOVE_COLS), np.int32), *ms[1:])


@njit(_nrt=False, inline="always")
def _moves_finish(vs, i, cross, ms, unseen, roles, max_turns, actor, mode):
    """After env ``i``'s kernel seats have moved (``mode`` of :func:`_moves_begin`, not
    0): the rewards, the planes, the end of the episode or the move list of the seat to
    move, its observation; saves the masks. Returns the placements generated when there
    were more than ``ms`` holds (-1: done); calling it again then changes nothing twice
    (a seat is credited the change since it was last credited)."""
    gm = vs.gmeta[i]
    players = gm[G_PLAYERS]
    if mode == 1:
        _credit(vs, i, players)
    r0, c0, fits = _window(vs.bmeta[i], vs.planes.shape[2])
    _redraw(vs, i, r0, c0, fits)
    over = gm[G_OVER] != 0
    if over or gm[G_TURNS] >= max_turns or not fits:
        if mode == 2:  # it ended in the step that dealt it (the opening outgrew the window)
            _credit(vs, i, players)
        vs.terminated[i] = over
        vs.truncated[i] = not over
        vs.pending[i] = 1
        for r in range(vs.nlisted[i]):
            vs.lmask[i, r] = 0
            vs.lkind[i, r] = PASS
            for c in range(FEATURES):
                vs.feats[i, r, c] = 0
        vs.nlisted[i] = 0
        seat = actor
        if roles[i, seat] != ROLE_LEARNER:
            for q in range(players - 1, -1, -1):
                if roles[i, q] == ROLE_LEARNER:
                    seat = q
        _observe(vs, i, seat, unseen)
        _save(vs, i, cross)
        return -1
    count, n = move_list(
        vs.board[i],
        cross,
        vs.anchors[i],
        vs.bmeta[i],
        vs.hands[i],
        vs.bag[i],
        gm,
        ms,
        vs.lmoves[i],
        vs.lkind[i],
        vs.feats[i],
        vs.lmask[i],
        vs.nlisted[i],
    )
    if count < 0:
        return n
    vs.nlisted[i] = count
    _observe(vs, i, gm[G_CURRENT], unseen)
    _save(vs, i, cross)
    return -1


M_OPPONENTS, M_GROW = 1, 2  # what _moves_advance returns for an env that needs the caller


@njit(_nrt=False)
def _moves_advance(vs, sc, ms, i, hi, actions, resets, roles, max_turns, rule_opening, mode, actor):
    """Step envs ``i``, ``i + 1``, ... below ``hi`` as far as they need nothing of the
    caller (``mode`` not 0: env ``i``'s kernel seats have played after :func:`_moves_begin`
    returned ``(mode, actor)``; only :func:`_moves_finish` is left). No reference counts
    (``_nrt=False``): a kernel that counts them would count each array view of ``vs``.

    Returns ``(i, what, mode, actor, n)``: ``i == hi`` when every env is stepped; else
    env ``i`` needs the caller: ``what`` M_OPPONENTS, its kernel seats to play; M_GROW,
    a placements buffer of ``n`` rows (then this again with ``mode``)."""
    cross, act, unseen = sc.cross, sc.act, sc.unseen
    while i < hi:
        if mode == 0:
            mode, actor = _moves_begin(vs, i, actions[i], resets[i], cross, act, rule_opening)
            if mode == 0:
                i += 1
                continue
            if _due_roles(vs, i, roles, max_turns):
                return i, M_OPPONENTS, mode, actor, 0
        n = _moves_finish(vs, i, cross, ms, unseen, roles, max_turns, actor, mode)
        if n >= 0:
            return i, M_GROW, mode, actor, n
        mode = 0
        i += 1
    return hi, 0, 0, 0, 0


@njit(nogil=True)
def moves_plain(vs, lo, hi, actions, resets, specs, roles, max_turns, rule_opening, sc, ms):
    """Step envs ``lo .. hi-1`` of ``vs`` in the move-list mode (see above), the seats
    played inside the kernel random or greedy agents (``specs`` float64[N, P,
    SPEC_COLS]: env ``i``'s seat ``q`` plays ``specs[i, q]``; ``roles`` int8[N, P]).
    ``resets`` and ``actions`` as for :func:`step_self` (the action: an index into the
    env's list). Returns ``(ms, moves, values)``: the scratch buffers, perhaps grown."""
    moves, values = sc.moves, sc.values
    cross, gen, act = sc.cross, sc.gen, sc.act
    i, mode, actor = lo, 0, 0
    while True:
        i, what, mode, actor, n = _moves_advance(
            vs, sc, ms, i, hi, actions, resets, roles, max_turns, rule_opening, mode, actor
        )
        if i == hi:
            break
        if what == M_GROW:
            ms = _grown(ms, n)
            continue
        gm = vs.gmeta[i]
        while _due_roles(vs, i, roles, max_turns):
            before = vs.bmeta[i, B_TILES]
            moves, values = play_turns(
                specs[i],
                vs.board[i],
                cross,
                vs.anchors[i],
                vs.bmeta[i],
                vs.hands[i],
                vs.bag[i],
                gm,
                vs.rng[i],
                gen,
                act,
                moves,
                values,
                values,
                gm[G_TURNS] + 1,
                True,
                None,
                None,
            )
            _record(vs, i, act, before)
    return ms, moves, values


@njit(nogil=True)
def moves_any(vs, lo, hi, actions, resets, specs, roles, max_turns, rule_opening, sc, ms):
    """:func:`moves_plain` with any built-in agents inside the kernel (each turn through
    :func:`.agents.take_turn`)."""
    moves = sc.moves
    i, mode, actor = lo, 0, 0
    while True:
        i, what, mode, actor, n = _moves_advance(
            vs, sc, ms, i, hi, actions, resets, roles, max_turns, rule_opening, mode, actor
        )
        if i == hi:
            break
        if what == M_GROW:
            ms = _grown(ms, n)
            continue
        gs = _state(vs, i, sc)
        while _due_roles(vs, i, roles, max_turns):
            before = gs.bmeta[B_TILES]
            moves = take_turn(specs[i, gs.gmeta[G_CURRENT]], gs, moves, sc.agent)
            _record(vs, i, sc.act, before)
    return ms, moves, sc.values


@njit
def sample_listed(vs, counter, out):
    """A uniformly random listed move of each env into ``out`` (int64[N]; 0 when it has
    none), drawn from (``game_seeds[i]``, ``counter``) as :func:`sample_masked`."""
    for i in range(vs.nlisted.shape[0]):
        n = vs.nlisted[i]
        out[i] = 0
        if n > 0:
            out[i] = np.int64(game_seed(vs.game_seeds[i], counter) % np.uint64(n))


@njit
def check_listed(vs, actions, out, active, illegal):
    """:func:`check_actions` for the move lists: the envs with ``active[i]`` (uint8[N])
    whose game goes on must name a listed move (the others: ``out[i]`` 0, not illegal)."""
    bad = 0
    for i in range(actions.shape[0]):
        a = actions[i]
        out[i] = 0
        illegal[i] = False
        if vs.pending[i] or not active[i]:
            continue
        if a < 0 or a >= vs.nlisted[i] or vs.lmask[i, a] == 0:
            illegal[i] = True
            bad += 1
        else:
            out[i] = a
    return bad


@njit(nogil=True)
def listed_inputs(vs, lo, hi, sc, svalues, work, sscratch, out):
    """The move scorer's input rows (:func:`.net.fill_inputs`, the ``net`` agent's) of
    the moves listed in envs ``lo .. hi-1`` into ``out`` (float32[N, K, INPUTS]; the
    rows past ``nlisted[i]`` 0). ``svalues`` float64[K], ``work`` and ``sscratch`` a
    thread's scratch (:func:`.net.new_net_scratch`'s)."""
    for i in range(lo, hi):
        n = vs.nlisted[i]
        if n > 0:
            _load(vs, i, sc.cross)
            fill_inputs(_state(vs, i, sc), vs.lmoves[i], vs.lkind[i], vs.feats[i], n, out[i], svalues, work, sscratch)
            _clear(vs, i, sc.cross)
        for r in range(n, out.shape[1]):
            for c in range(out.shape[2]):
                out[i, r, c] = 0.0
