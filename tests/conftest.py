"""Shared fixtures, hypothesis profiles and position generators.

Positions are made *reachable*: a real ``qc.Game`` is played for a random
number of turns with random (seeded) choices.  Variants:

* ``reachable_games``  -- ordinary random play (optionally biased to wander
  away from (0, 0), optionally many turns for crowded boards);
* ``with_hand``        -- the same position rebuilt with ``Game.from_position``
  and the current player's hand replaced (duplicates on purpose), keeping the
  108-tile supply consistent (the rest goes into the bag);
* ``translated``       -- the same position shifted far from (0, 0).
"""

from __future__ import annotations

import os
import random
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))

import naive  # noqa: E402

import qwirkle_core as qc  # noqa: E402

settings.register_profile(
    "ci",
    deadline=None,
    max_examples=25,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    deadline=None,
    max_examples=10,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    deadline=None,
    max_examples=300,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


ALL_TILES = tuple(range(36))
FULL_SUPPLY = Counter({t: 3 for t in ALL_TILES})


# --------------------------------------------------------------------------
# JIT warm-up


@pytest.fixture(scope="session", autouse=True)
def warm_jit():
    """Compile the numba kernels once, before any timed hypothesis example."""
    g = qc.Game(players=2, seed=12345)
    for _ in range(6):
        moves = g.legal_moves()
        if g.is_over:
            break
        if moves:
            g.copy().play(moves[-1])
            g.play(moves[0])
        elif g.bag_size:
            g.exchange(g.hand()[:1])
        else:
            break
    g.copy()
    if g.bag_size and not g.is_over:
        g.copy().exchange(g.hand()[:1])
    yield


# --------------------------------------------------------------------------
# snapshots of the observable state


def snapshot(g) -> dict:
    """Everything observable about a game, for "unchanged" checks."""
    return {
        "board": dict(g.board),
        "hands": tuple(tuple(sorted(g.hand(p))) for p in range(g.players)),
        "scores": tuple(g.scores),
        "bag_size": g.bag_size,
        "current_player": g.current_player,
        "is_over": g.is_over,
        "winner": g.winner,
    }


def tile_counts(g) -> Counter:
    """Tiles on the board and in all hands, per tile type."""
    cnt = Counter(g.board.values())
    for p in range(g.players):
        cnt.update(g.hand(p))
    return cnt


def opening_len_for(g, opening: str = "largest_group") -> int | None:
    """What naive_legal_placements expects for ``opening_len``."""
    if g.board or opening == "any_line":
        return None
    return naive.largest_group(g.hand())


def engine_moves(g) -> dict:
    """{frozenset(placements): score} from the engine, asserting no duplicates."""
    moves = g.legal_moves()
    out = {}
    for m in moves:
        key = frozenset((int(r), int(c), int(t)) for r, c, t in m.placements)
        assert key not in out, f"duplicate move {sorted(key)} in legal_moves()"
        out[key] = m.score
    return out


def far_metric(move) -> int:
    return max(max(abs(r), abs(c)) for r, c, _ in move.placements)


# --------------------------------------------------------------------------
# random play


def advance(g, turns: int, rng: random.Random, wander: bool = False,
            p_exchange: float = 0.05) -> None:
    """Play up to ``turns`` random turns on ``g`` in place, never ending the
    game (stops just before an action that would end it)."""
    for _ in range(turns):
        if g.is_over:
            return
        moves = g.legal_moves()
        hand = g.hand()
        if moves and (g.bag_size == 0 or rng.random() >= p_exchange):
            if g.bag_size == 0:
                moves = [m for m in moves if len(m.placements) < len(hand)]
                if not moves:
                    return  # every placement would go out
            if wander and rng.random() < 0.85:
                best = max(far_metric(m) for m in moves)
                moves = [m for m in moves if far_metric(m) == best]
            g.play(rng.choice(moves))
        elif g.bag_size > 0:
            k = rng.randint(1, min(6, g.bag_size, len(hand)))
            g.exchange(rng.sample(list(hand), k))
        else:
            trial = g.copy()
            trial.pass_turn()
            if trial.is_over:
                return
            g.pass_turn()


@st.composite
def reachable_games(draw, min_turns=0, max_turns=25, wander=False,
                    players=None, rules=None):
    n_players = draw(st.integers(2, 4)) if players is None else players
    seed = draw(st.integers(0, 2**31 - 1))
    turns = draw(st.integers(min_turns, max_turns))
    rng = random.Random(draw(st.integers(0, 2**31 - 1)))
    g = qc.Game(players=n_players, seed=seed, rules=rules)
    advance(g, turns, rng, wander=wander)
    return g


def frontier_tiles(board: dict) -> list[int]:
    """Tiles that share a colour or shape with a tile next to an empty cell --
    good candidates for hands with many legal placements."""
    out = []
    for (r, c), t in board.items():
        if any((r + a, c + b) not in board for a, b in naive.NEIGHBOURS):
            col, shp = naive.color(t), naive.shape(t)
            out.extend(col * 6 + s for s in range(6))
            out.extend(k * 6 + shp for k in range(6))
    return out


def rebuild(g, board=None, hand=None, shift=(0, 0), rng=None, rules=None):
    """Rebuild ``g`` via Game.from_position, optionally replacing the current
    player's hand and/or shifting the board.  Keeps the 108-tile supply exact
    (unused tiles go to the bag in a random order)."""
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
        board=board,
        hands=hands,
        bag=bag,
        scores=list(g.scores),
        current_player=g.current_player,
        rules=rules,
    )


@st.composite
def duplicate_hand(draw, g, size=None):
    """A hand for g's current player with at least one repeated tile, drawn
    from the tiles still available (supply of 3 per type), biased toward tiles
    that fit next to the board."""
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
    if doubles:
        t = rng.choice(doubles)
        reps = 3 if avail[t] >= 3 and rng.random() < 0.3 else 2
        hand += [t] * reps
        avail[t] -= reps
    pool_fit = [t for t in frontier_tiles(g.board) if avail[t] > 0]
    while len(hand) < size:
        choices = pool_fit if pool_fit and rng.random() < 0.7 else [
            t for t in ALL_TILES if avail[t] > 0
        ]
        choices = [t for t in choices if avail[t] > 0]
        if not choices:
            break
        t = rng.choice(choices)
        hand.append(t)
        avail[t] -= 1
    rng.shuffle(hand)
    return hand
