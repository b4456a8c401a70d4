"""Complete games per second: greedy, random and heuristic self-play, one and two threads.

Run: ``pytest benchmarks/ --benchmark-only``. ``extra_info["games_per_second"]`` and
``extra_info["us_per_move"]`` (turns of all kinds) are the figures the README quotes
(median round).
"""

import numba
import pytest

import qwirkle_core as qc

GAMES = 2000


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "agents",
    [("greedy", "greedy"), ("random", "random"), ("heuristic", "heuristic")],
    ids=["greedy", "random", "heuristic"],
)
def test_games_per_second(benchmark, agents, threads):
    if threads > numba.config.NUMBA_NUM_THREADS:
        pytest.skip("not enough cores")
    qc.simulate(20, agents=agents, seed=0, threads=threads)  # compile / load from cache
    result = benchmark.pedantic(
        qc.simulate, args=(GAMES,), kwargs={"agents": agents, "seed": 1, "threads": threads}, rounds=5, iterations=1
    )
    assert result.games == GAMES
    benchmark.extra_info["games_per_second"] = GAMES / benchmark.stats.stats.median
    benchmark.extra_info["us_per_move"] = 1e6 * benchmark.stats.stats.median / int(result.turns.sum())


def test_qwirkle_cubes_games_per_second(benchmark):
    """Greedy self-play in Qwirkle Cubes, one thread: the rate docs/cubes.md puts beside
    the tile game's (``test_games_per_second[1-greedy]``, same run)."""
    cubes = qc.Rules(variant="cubes")
    qc.simulate(20, seed=0, threads=1, rules=cubes)  # compile / load from cache
    result = benchmark.pedantic(
        qc.simulate, args=(GAMES,), kwargs={"seed": 1, "threads": 1, "rules": cubes}, rounds=5, iterations=1
    )
    assert result.games == GAMES
    benchmark.extra_info["games_per_second"] = GAMES / benchmark.stats.stats.median
