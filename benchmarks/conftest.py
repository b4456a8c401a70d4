"""Shared fixtures: a fixed set of mid-game positions, stacked into arrays for the kernels."""

import numpy as np
import pytest

import qwirkle_core as qc


def mid_game_positions(games=50, turns=range(10, 41, 5)):
    """Greedy self-play positions at the given turns of games seeded 0..games-1."""
    out = []
    for seed in range(games):
        g = qc.Game(seed=seed)
        while not g.is_over and g.turn <= max(turns):
            if g.turn in turns:
                out.append(g.copy())
            g.play_agent("greedy")
    return out


@pytest.fixture(scope="session")
def positions():
    games = mid_game_positions()
    return {
        "games": games,
        "board": np.stack([g._board for g in games]),
        "cross": np.stack([g._cross for g in games]),
        "anchors": np.stack([g._anchors for g in games]),
        "bmeta": np.stack([g._bmeta for g in games]),
        "hand": np.array([g._hand_mask() for g in games], np.int64),
    }
