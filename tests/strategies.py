"""Hypothesis strategies, position builders and state snapshots shared by the tests.

Positions are made *reachable*: a real ``qc.Game`` is played for a random number of
turns with random (seeded) choices. Builders:

* ``advance`` / ``reachable_games`` -- random placements and exchanges, optionally
  biased to wander away from (0, 0) in one direction, optionally many turns (crowded);
* ``games``          -- a fresh deal and random actions of every kind, agents' turns
  included (it may end);
* ``rebuild``        -- the same position via ``Game.from_position``, with the current
  player's hand replaced and/or the board shifted, keeping the 108-tile supply exact
  (the rest goes into the bag);
* ``duplicate_hand`` -- a substitute hand with repeated tiles, within supply;
* ``snake_board``    -- a constructed valid board spanning up to 86 columns.

Snapshots: ``snapshot`` (everything observable, for "unchanged" checks) and
``engine_state`` (every meaningful engine array, read through ``Game.kernel_arrays``);
``assert_same_rows`` compares the rows of two batches.

Slower tests use ``examples(fraction)`` of the active hypothesis profile
(``HYPOTHESIS_PROFILE``, registered in conftest.py).
"""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import assume, settings
from hypothesis import strategies as st

import naive
import qwirkle_core as qc
from qwirkle_core._kernels import layout

ALL_TILES = tuple(range(36))
FULL_SUPPLY = Counter({t: 3 for t in ALL_TILES})


def examples(fraction: float) -> settings:
    """Settings for a slower test: a fraction of the active profile's max_examples
    (so HYPOTHESIS_PROFILE=thorough scales every test)."""
    return settings(max_examples=max(3, int(settings.default.max_examples * fraction)))


# -- snapshots of the state ---------------------------------------------------------


def snapshot(g: qc.Game) -> dict:
    """Everything observable about a game, for "unchanged" checks: the public
    properties, the complete position (bag order and random streams included, through
    ``to_json``) and the history."""
    return {
        "board": dict(g.board),
        "hands": tuple(tuple(sorted(g.hand(p))) for p in range(g.players)),
        "scores": tuple(g.scores),
        "bag_size": g.bag_size,
        "current_player": g.current_player,
        "is_over": g.is_over,
        "winner": g.winner,
        "position": g.to_json(),
        "history": g.history,
    }


def engine_state(g: qc.Game):
    """Everything that defines a game's behaviour, as comparable Python values: the
    meaningful part of every engine array (so equal states play on identically,
    legal_moves() order and agent tie-breaks included) and the public properties."""
    a = g.kernel_arrays()
    gmeta = a.gmeta.copy()
    if not gmeta[layout.G_OPENING]:
        gmeta[layout.G_OPEN_LEN] = 0  # the opening's required length, unused once it is played
    n_anchors = int(a.bmeta[layout.B_ANCHORS])
    arrays = (a.board, a.cross, a.anchors[:n_anchors], a.bmeta, a.hands, a.bag[: g.bag_size], gmeta, a.rng)
    public = (
        g.rules,
        g.seed,
        g.board,
        [g.hand(p) for p in range(g.players)],
        g.scores,
        g.qwirkles,
        g.current_player,
        g.starting_player,
        g.turn,
        g.passes,
        g.bag_size,
        g.is_over,
        g.winner,
        g.opening_pending,
    )
    return [(x.dtype.str, x.shape, x.tobytes()) for x in arrays], public


def replayed_state(g: qc.Game):
    """What a replay of g's record reproduces: everything but the agents' random stream
    and the engine's internal order of frontier cells (a record keeps moves, not the
    order their tiles were put down)."""
    return engine_state(g)[1], [g.hand(p) for p in range(g.players)], g.position().bag, g.position().rng[0]


def assert_same_rows(a: qc.GameRows, b: qc.GameRows) -> None:
    """Two batches' per-game rows are equal, column by column, dtypes included."""
    for name, col in a.columns().items():
        other = b.columns()[name]
        assert col.dtype == other.dtype, name
        assert col.tolist() == other.tolist(), name


def tile_counts(g: qc.Game) -> Counter:
    """Tiles on the board and in all hands, per tile type."""
    cnt = Counter(g.board.values())
    for p in range(g.players):
        cnt.update(g.hand(p))
    return cnt


def opening_len_for(g: qc.Game, opening: str = "largest_group") -> int | None:
    """What naive_legal_placements expects for ``opening_len``."""
    if g.board or opening == "any_line":
        return None
    return naive.largest_group(g.hand())


def engine_moves(g: qc.Game) -> dict:
    """{frozenset(placements): score} from the engine, asserting no duplicates."""
    out = {}
    for m in g.legal_moves():
        key = frozenset((int(r), int(c), int(t)) for r, c, t in m.placements)
        assert key not in out, f"duplicate move {sorted(key)} in legal_moves()"
        out[key] = m.score
    return out


# -- random play ----------------------------------------------------------------------


def far_metric(move: qc.Move, direction=None) -> int:
    """How far the move reaches: along ``direction`` (a, b) -- max of a*row + b*col --
    or, without one, in any direction."""
    if direction is None:
        return max(max(abs(r), abs(c)) for r, c, _ in move.placements)
    a, b = direction
    return max(a * r + b * c for r, c, _ in move.placements)


WANDER_DIRECTIONS = ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, 1), (1, -1), (-1, -1), None)


def advance(g: qc.Game, turns: int, rng: random.Random, wander: bool = False, p_exchange: float = 0.05) -> int:
    """Play up to ``turns`` random turns on ``g`` in place, never ending the game
    (stops just before an action that would end it). Returns the number of consecutive
    passes at the end (0 unless the bag ran empty)."""
    passes = 0
    direction = rng.choice(WANDER_DIRECTIONS) if wander else None
    for _ in range(turns):
        if g.is_over:
            return passes
        moves = g.legal_moves()
        hand = g.hand()
        # never exchange on an empty board (the opener must open)
        if moves and (g.bag_size == 0 or not g.board or rng.random() >= p_exchange):
            if g.bag_size == 0:
                moves = [m for m in moves if len(m.placements) < len(hand)]
                if not moves:
                    return passes  # every placement would go out
            if wander and rng.random() < 0.9:
                best = max(far_metric(m, direction) for m in moves)
                moves = [m for m in moves if far_metric(m, direction) == best]
            g.play(rng.choice(moves))
            passes = 0
        elif g.bag_size > 0:
            k = rng.randint(1, min(6, g.bag_size, len(hand)))
            if wander:
                k = min(6, g.bag_size, len(hand))  # look for tiles that fit
            g.exchange(rng.sample(list(hand), k))
            passes = 0
        else:
            trial = g.copy()
            trial.pass_turn()
            if trial.is_over:
                return passes
            g.pass_turn()
            passes += 1
    return passes


@st.composite
def reachable_games(draw, min_turns=0, max_turns=25, wander=False, players=None, rules=None):
    """A game after ``min_turns`` .. ``max_turns`` turns of :func:`advance` (never over)."""
    n_players = draw(st.integers(2, 4)) if players is None else players
    seed = draw(st.integers(0, 2**31 - 1))
    turns = draw(st.integers(min_turns, max_turns))
    rng = random.Random(draw(st.integers(0, 2**31 - 1)))
    g = qc.Game(players=n_players, seed=seed, rules=rules)
    advance(g, turns, rng, wander=wander)
    return g


def random_action(g: qc.Game, rng: random.Random) -> qc.Action:
    """Take one random legal action on g (a placement, an exchange, a pass or an
    agent's turn); returns it."""
    if rng.random() < 0.3:
        return g.play_agent(rng.choice(qc.AGENTS))
    moves = g.legal_moves()
    if moves and (not g.board or g.bag_size == 0 or rng.random() > 0.1):
        g.play(rng.choice(moves))
    elif g.bag_size:
        g.exchange(rng.sample(g.hand(), rng.randint(1, min(len(g.hand()), g.bag_size))))
    else:
        g.pass_turn()
    return g.history[-1]


@st.composite
def games(draw, max_turns=60):
    """A reachable game: a fresh deal and up to ``max_turns`` random actions (it may end)."""
    g = qc.Game(players=draw(st.integers(2, 4)), seed=draw(st.integers(0, 2**64 - 1)))
    rng = random.Random(draw(st.integers(0, 2**31 - 1)))
    for _ in range(draw(st.integers(0, max_turns))):
        if g.is_over:
            break
        random_action(g, rng)
    return g


def finished_game(seed: int, players: int = 2, rng: random.Random | None = None) -> qc.Game:
    """A whole game of random actions."""
    g = qc.Game(players=players, seed=seed)
    rng = rng or random.Random(seed)
    while not g.is_over:
        random_action(g, rng)
    return g


def mid_game(seed: int = 4, turns: int = 14) -> qc.Game:
    """A game after ``turns`` greedy turns."""
    g = qc.Game(seed=seed)
    for _ in range(turns):
        g.play_agent("greedy")
    return g


# -- positions built by hand ------------------------------------------------------------


def frontier_tiles(board: dict) -> list[int]:
    """Tiles that share a colour or shape with a tile next to an empty cell -- good
    candidates for hands with many legal placements."""
    out = []
    for (r, c), t in board.items():
        if any((r + a, c + b) not in board for a, b in naive.NEIGHBOURS):
            col, shp = naive.color(t), naive.shape(t)
            out.extend(col * 6 + s for s in range(6))
            out.extend(k * 6 + shp for k in range(6))
    return out


def rebuild(g: qc.Game, board=None, hand=None, shift=(0, 0), rng=None, rules=None) -> qc.Game:
    """Rebuild ``g`` via Game.from_position, optionally replacing the current player's
    hand and/or shifting the board. Keeps the 108-tile supply exact (unused tiles go to
    the bag in a random order)."""
    rng = rng or random.Random(0)
    board = dict(g.board) if board is None else dict(board)
    dr, dc = shift
    board = {(r + dr, c + dc): t for (r, c), t in board.items()}
    hands = [list(g.hand(p)) for p in range(g.players)]
    if hand is not None:
        hands[g.current_player] = list(hand)
    used = Counter(board.values())
    for h in hands:
        used.update(h)
    assert all(used[t] <= 3 for t in used), used
    bag = list((FULL_SUPPLY - used).elements())
    rng.shuffle(bag)
    return qc.Game.from_position(
        board=board, hands=hands, bag=bag, scores=list(g.scores), current_player=g.current_player, rules=rules
    )


@st.composite
def duplicate_hand(draw, g, size=None, force_duplicate=True):
    """A hand for g's current player with at least one repeated tile (unless
    ``force_duplicate`` is false), drawn from the tiles still available (supply of 3
    per type), biased toward tiles that fit next to the board."""
    rng = random.Random(draw(st.integers(0, 2**31 - 1)))
    size = size if size is not None else len(g.hand())
    size = max(size, 2)
    used = Counter(g.board.values())
    for p in range(g.players):
        if p != g.current_player:
            used.update(g.hand(p))
    avail = FULL_SUPPLY - used
    hand = []
    doubles = [t for t, n in avail.items() if n >= 2]
    if frontier_tiles(g.board):
        fit = [t for t in frontier_tiles(g.board) if avail[t] >= 2]
        if fit and rng.random() < 0.8:
            doubles = fit
    if doubles and force_duplicate:
        t = rng.choice(doubles)
        reps = 3 if avail[t] >= 3 and rng.random() < 0.3 else 2
        hand += [t] * reps
        avail[t] -= reps
    pool_fit = [t for t in frontier_tiles(g.board) if avail[t] > 0]
    while len(hand) < size:
        choices = pool_fit if pool_fit and rng.random() < 0.7 else [t for t in ALL_TILES if avail[t] > 0]
        choices = [t for t in choices if avail[t] > 0]
        if not choices:
            break
        t = rng.choice(choices)
        hand.append(t)
        avail[t] -= 1
    rng.shuffle(hand)
    return hand


SYMMETRIES = (
    lambda r, c: (r, c),
    lambda r, c: (r, -c),
    lambda r, c: (-r, c),
    lambda r, c: (-r, -c),
    lambda r, c: (c, r),
    lambda r, c: (c, -r),
    lambda r, c: (-c, r),
    lambda r, c: (-c, -r),
)


def snake_board(n_rows: int, rng: random.Random):
    """A valid connected staircase of ``n_rows`` (<= 17) lines of 6 tiles: line k is
    all colour k % 6, lies in row k at columns 5k .. 5k+5, starts with shape k % 6 and
    ends with shape (k+1) % 6, so that it and line k+1 form a 2-tile shape line in
    column 5k+5. It spans 5*n_rows + 1 columns (86 for 17 lines). Returns (board, tiles
    left over from the supply)."""
    assert 1 <= n_rows <= 17
    board = {}
    for k in range(n_rows):
        first, last = k % 6, (k + 1) % 6
        middle = [s for s in range(6) if s not in (first, last)]
        rng.shuffle(middle)
        for i, shp in enumerate([first, *middle, last]):
            board[(k, 5 * k + i)] = (k % 6) * 6 + shp
    rest = list((FULL_SUPPLY - Counter(board.values())).elements())
    rng.shuffle(rest)
    return board, rest


# -- Qwirkle Cubes --------------------------------------------------------------------------

CUBES = qc.Rules(variant="cubes")


def cubes_rules(players: int = 2, opening: str = "largest_group") -> qc.Rules:
    return qc.Rules(players=players, opening=opening, variant="cubes")


def cube_colours(g: qc.Game) -> Counter:
    """Cubes per colour on the board, in the hands and in the bag (all 90 of a dealt game)."""
    counts = Counter(t // 6 for t in g.board.values())
    for p in range(g.players):
        counts.update(t // 6 for t in g.hand(p))
    counts.update(g.position().bag)
    return counts


def advance_cubes(g: qc.Game, turns: int, rng: random.Random, p_reroll: float = 0.3) -> None:
    """Play up to ``turns`` random Qwirkle Cubes turns on ``g`` in place: sometimes a
    re-roll of random cubes first, the forced re-rolls, then a random placement, or when
    stuck a swap of as many cubes as the bag holds (a pass with an empty bag). Never ends
    the game (stops just before an action that would)."""
    for _ in range(turns):
        if g.is_over:
            return
        if not g.must_reroll and g.can_reroll and rng.random() < p_reroll:
            hand = list(g.hand())
            g.reroll(rng.sample(hand, rng.randint(1, len(hand))))
        while g.must_reroll:
            g.reroll()
        moves = g.legal_moves()
        if g.bag_size == 0:
            moves = [m for m in moves if len(m.placements) < len(g.hand())]
        if moves:
            g.play(rng.choice(moves))
        elif g.legal_moves():
            return  # every placement would go out
        else:
            hand = list(g.hand())
            rng.shuffle(hand)
            act = (lambda h: h.exchange(hand[: g.bag_size])) if g.bag_size else (lambda h: h.pass_turn())
            trial = g.copy()
            act(trial)
            if trial.is_over:
                return
            act(g)


@st.composite
def cubes_games(draw, min_turns=0, max_turns=30, players=None, opening="largest_group"):
    """A Qwirkle Cubes game after ``min_turns`` .. ``max_turns`` turns of :func:`advance_cubes`."""
    n_players = draw(st.integers(2, 4)) if players is None else players
    g = qc.Game(seed=draw(st.integers(0, 2**64 - 1)), rules=cubes_rules(n_players, opening))
    advance_cubes(g, draw(st.integers(min_turns, max_turns)), random.Random(draw(st.integers(0, 2**31 - 1))))
    return g


def rebuild_cubes(g: qc.Game, hand=None, rng=None) -> qc.Game:
    """``g`` set up again through Game.from_position, the current player's cubes replaced by
    ``hand`` (tiles: the faces); the colours left over from the 90 cubes go to the bag in a
    random order."""
    rng = rng or random.Random(0)
    hands = [list(g.hand(p)) for p in range(g.players)]
    if hand is not None:
        hands[g.current_player] = list(hand)
    used = Counter(t // 6 for t in g.board.values())
    for h in hands:
        used.update(t // 6 for t in h)
    assert all(n <= 15 for n in used.values()), used
    bag = [c for c in range(6) for _ in range(15 - used[c])]
    rng.shuffle(bag)
    return qc.Game.from_position(
        board=g.board, hands=hands, bag=bag, scores=list(g.scores), current_player=g.current_player, rules=g.rules
    )


@st.composite
def repeated_cubes_hand(draw, g):
    """A hand for ``g``'s current player with one face shown by 3 to 6 cubes (more than the
    tile game's 3 copies), biased toward faces that fit next to the board, within the 15
    cubes of each colour."""
    used = Counter(t // 6 for t in g.board.values())
    for p in range(g.players):
        if p != g.current_player:
            used.update(t // 6 for t in g.hand(p))
    rng = random.Random(draw(st.integers(0, 2**31 - 1)))
    fit = [t for t in frontier_tiles(g.board) if used[t // 6] <= 12] or [t for t in ALL_TILES if used[t // 6] <= 12]
    assume(fit)  # (late in a game of 3 or 4 players no colour may have 3 cubes left)
    t = rng.choice(fit)
    reps = min(draw(st.integers(3, 6)), 15 - used[t // 6])
    hand = [t] * reps
    used[t // 6] += reps
    while len(hand) < 6:
        u = rng.choice(fit if rng.random() < 0.6 else ALL_TILES)
        if used[u // 6] < 15:
            hand.append(u)
            used[u // 6] += 1
    return hand
