"""Steps per second of the batched environment (VectorEnv) and, in the same run, of the
AEC environment it replaces: masked random self-play of two players.

Run: ``pytest benchmarks/test_bench_vector_env.py --benchmark-only``. A step is one env
stepped once (``N`` of them per ``VectorEnv.step``), the choice of the random legal
action (``sample_actions``), the observation and mask included; ``copy=False`` (the
arrays handed out are the environment's own). ``extra_info``: ``steps_per_second``
(median round), and for the ratio test ``vector_steps_per_second``,
``aec_steps_per_second`` (median rounds) and ``ratio`` (the median of the rounds'
ratios), both measured in alternating rounds so that the machine's load falls on both
alike.

``test_vector_modes``: the move-list mode (``actions="moves"``, self-play and against
greedy, a step a whole turn; and MovePolicy's training setting: a pool of greedy and
random, the scorer's input rows observed) beside the tile mode, with the default ``copy=False`` and
with ``copy=True``, at N = 1,024, W = 40, one thread, the kernel's random sampler, in
interleaved rounds; ``extra_info`` the median steps per second of each and their ratios
to the tile mode's default.
"""

import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from qwirkle_core.env import VectorEnv  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_bench_env import aec_random_games  # noqa: E402

TARGET_STEPS = 100_000  # env steps per round


def vector_steps(envs, calls):
    for _ in range(calls):
        envs.step(envs.sample_actions())
    return calls * envs.num_envs


def ready(n, window, threads, spread=200, **options):
    """A VectorEnv of ``n`` envs, compiled, whose games are staggered: over ``spread``
    calls (about a game of masked random play) env ``i`` is reset at call ``i %
    spread``, so that the envs are at every stage of their games, as in a long run
    (games dealt at once stay in step for a while, and a round would then time one
    stage of a game)."""
    options = {"players": 2, "copy": False, **options}
    envs = VectorEnv(n, window=window, threads=threads, **options)
    envs.reset(seed=1)
    every = np.arange(n) % spread
    for k in range(spread):
        envs.step(envs.sample_actions())
        envs.reset(options={"reset_mask": every == k})
    return envs


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("window", [32, 40, 118])
@pytest.mark.parametrize("n", [1, 64, 1024])
def test_vector_steps_per_second(benchmark, n, window, threads):
    envs = ready(n, window, threads)
    calls = max(20, TARGET_STEPS // n)
    steps = benchmark.pedantic(vector_steps, args=(envs, calls), rounds=3, iterations=1)
    benchmark.extra_info["steps_per_second"] = steps / benchmark.stats.stats.median


def test_vector_against_aec(benchmark):
    """N = 1024, W = 40, one thread, against the AEC environment at W = 40."""
    envs = ready(1024, 40, 1)
    aec_random_games(2, 40, 1)
    rates = {"vector": [], "aec": []}

    def round_():
        t = time.perf_counter()
        steps = vector_steps(envs, 60)
        rates["vector"].append(steps / (time.perf_counter() - t))
        t = time.perf_counter()
        steps = aec_random_games(2, 40, 3, seed=len(rates["aec"]))
        rates["aec"].append(steps / (time.perf_counter() - t))

    benchmark.pedantic(round_, rounds=9, iterations=1)
    vec, aec = (statistics.median(rates[k]) for k in ("vector", "aec"))
    ratio = statistics.median(v / a for v, a in zip(rates["vector"], rates["aec"]))
    benchmark.extra_info.update(vector_steps_per_second=vec, aec_steps_per_second=aec, ratio=ratio)


MODES = {
    "tiles": {},
    "tiles_copy": {"copy": True},
    "moves": {"actions": "moves"},
    "moves_copy": {"actions": "moves", "copy": True},
    "moves_greedy": {"actions": "moves", "opponents": ["greedy"], "players": None},
    "moves_inputs_pool": {"actions": "moves", "pool": ["greedy", "random"], "scorer_inputs": True},
}


def test_vector_modes(benchmark):
    """N = 1024, W = 40, one thread: every mode of MODES in interleaved rounds."""
    envs = {name: ready(1024, 40, 1, spread=100, **options) for name, options in MODES.items()}
    rates = {name: [] for name in MODES}

    def round_():
        for name, e in envs.items():
            t = time.perf_counter()
            steps = vector_steps(e, 30)
            rates[name].append(steps / (time.perf_counter() - t))

    benchmark.pedantic(round_, rounds=7, iterations=1)
    med = {name: statistics.median(r) for name, r in rates.items()}
    benchmark.extra_info.update({f"{name}_steps_per_second": v for name, v in med.items()})
    for name in MODES:
        ratio = statistics.median(a / b for a, b in zip(rates[name], rates["tiles"]))
        benchmark.extra_info[f"{name}_over_tiles"] = ratio
