"""Environment steps per second, games per second with Python agents, and the legal
placements as Move objects against the arrays of ``Game.legal_move_arrays()``.

Run: ``pytest benchmarks/test_bench_env.py --benchmark-only``. ``extra_info`` holds the
figures docs/env.md quotes (median round): ``steps_per_second`` (a step is one call of
``step``, the masked random choice included), ``games_per_second``,
``microseconds_per_position``.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from qwirkle_core.batch.players import play_games  # noqa: E402
from qwirkle_core.env import WINDOW, QwirkleGymEnv, raw_env  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
import bots  # noqa: E402

ENV_GAMES = 10
PY_GAMES = 200


def aec_random_games(players, window, games, seed=0):
    """Masked random play through the AEC API; returns the number of steps."""
    e = raw_env(players=players, window=window)
    rng = np.random.default_rng(seed)
    steps = 0
    for i in range(games):
        e.reset(seed=seed + i)
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
    return steps


@pytest.mark.parametrize("window", [WINDOW, 40])
@pytest.mark.parametrize("players", [2, 4])
def test_aec_steps_per_second(benchmark, players, window):
    aec_random_games(players, window, 1)
    steps = benchmark.pedantic(aec_random_games, args=(players, window, ENV_GAMES), rounds=3, iterations=1)
    benchmark.extra_info["steps_per_second"] = steps / benchmark.stats.stats.median
    benchmark.extra_info["games_per_second"] = ENV_GAMES / benchmark.stats.stats.median


def gym_random_games(games, seed=0):
    """A masked random learner against greedy through the Gymnasium API; returns steps."""
    e = QwirkleGymEnv(opponents=("greedy",))
    rng = np.random.default_rng(seed)
    steps = 0
    for i in range(games):
        obs, _ = e.reset(seed=seed + i)
        done = False
        while not done:
            obs, _, term, trunc, _ = e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            done = term or trunc
            steps += 1
    return steps


def test_gym_steps_per_second(benchmark):
    gym_random_games(1)
    steps = benchmark.pedantic(gym_random_games, args=(ENV_GAMES,), rounds=3, iterations=1)
    benchmark.extra_info["steps_per_second"] = steps / benchmark.stats.stats.median
    benchmark.extra_info["games_per_second"] = ENV_GAMES / benchmark.stats.stats.median


@pytest.mark.parametrize("processes", [1, 2])
def test_python_agent_games_per_second(benchmark, processes):
    result = benchmark.pedantic(
        play_games,
        args=((bots.best_move, "greedy"), PY_GAMES),
        kwargs={"seed": 1, "processes": processes},
        rounds=3,
        iterations=1,
    )
    assert result.ok.all()
    benchmark.extra_info["games_per_second"] = PY_GAMES / benchmark.stats.stats.median


@pytest.mark.parametrize("what", ["legal_moves", "legal_move_arrays"])
def test_legal_placements_per_position(benchmark, positions, what):
    """The 350 mid-game positions of benchmarks/conftest.py: every legal placement as
    Move objects (``legal_moves``) or as arrays (``legal_move_arrays``)."""
    games = positions["games"]
    method = getattr(type(games[0]), what)

    def run():
        for g in games:
            method(g)

    benchmark.pedantic(run, rounds=5, iterations=1, warmup_rounds=1)
    benchmark.extra_info["microseconds_per_position"] = 1e6 * benchmark.stats.stats.median / len(games)
