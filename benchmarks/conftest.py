"""Shared fixtures: a fixed set of mid-game positions, stacked into arrays for the kernels."""

import numpy as np
import pytest

import qwirkle_core as qc
from qwirkle_core._kernels.state import hand_mask


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
    arrays = [g.kernel_arrays() for g in games]
    return {
        "games": games,
        "board": np.stack([a.board for a in arrays]),
        "cross": np.stack([a.cross for a in arrays]),
        "anchors": np.stack([a.anchors for a in arrays]),
        "bmeta": np.stack([a.bmeta for a in arrays]),
        "hand": np.array([hand_mask(a.hands, a.gmeta, g.current_player) for g, a in zip(games, arrays)], np.int64),
    }
