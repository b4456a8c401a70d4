"""The endgame solver on real two-player endgames: greedy games (seeds 1000-1099, not
used to tune the solver) played until the bag is empty, or further, until both hands
hold at most 4 tiles.

Run: ``pytest benchmarks/test_bench_endgame.py --benchmark-only -s`` (about 3 minutes;
the summaries are printed and kept in the benchmark's extra_info).
"""

import time

import numpy as np
import pytest

import qwirkle_core as qc
from qwirkle_core.evaluation.endgame import solve_endgame

SEEDS = range(1000, 1100)


def endgame(seed, most=6):
    """The greedy game of ``seed`` once the bag is empty and both hands hold at most
    ``most`` tiles (None if it ended before)."""
    g = qc.Game(players=2, seed=seed)
    while not g.is_over and not (g.bag_size == 0 and max(g.hand_sizes) <= most):
        g.play_agent("greedy")
    return None if g.is_over else g


@pytest.fixture(scope="module")
def bag_just_empty():
    games = [g for g in map(endgame, SEEDS) if g is not None]
    solve_endgame(games[0], max_nodes=10)  # load the kernels
    return games


def test_exact_solves_with_four_tiles_each(benchmark):
    """Exact solves of endgames with at most 4 tiles in each hand: nodes per second."""
    games = [g for g in (endgame(s, most=4) for s in SEEDS[:30]) if g is not None]
    solve_endgame(games[0], max_nodes=10)
    results = benchmark.pedantic(lambda: [solve_endgame(g) for g in games], rounds=3, iterations=1)
    assert all(r.exact for r in results)
    nodes = sum(r.nodes for r in results)
    benchmark.extra_info["endgames"] = len(games)
    benchmark.extra_info["nodes"] = nodes
    benchmark.extra_info["nodes_per_second"] = nodes / benchmark.stats.stats.median


def test_bag_just_empty_within_limits(benchmark, bag_just_empty):
    """Every endgame solved with a 5 s limit: the share exact within 50 ms, 1 s, 5 s."""

    def run():
        out = []
        for g in bag_just_empty:
            t = time.perf_counter()
            r = solve_endgame(g, time_ms=5000)
            out.append((time.perf_counter() - t, r.nodes, r.exact))
        return out

    rows = benchmark.pedantic(run, rounds=1, iterations=1)
    seconds = np.array([t for t, _, _ in rows])
    nodes = np.array([n for _, n, _ in rows])
    exact = np.array([e for _, _, e in rows])
    info = {
        "endgames": len(rows),
        "exact_within_50ms": float(np.mean(exact & (seconds <= 0.05))),
        "exact_within_1s": float(np.mean(exact & (seconds <= 1))),
        "exact_within_5s": float(np.mean(exact)),
        "median_seconds_of_exact": float(np.median(seconds[exact])),
        "nodes_per_second": float(nodes.sum() / seconds.sum()),
    }
    benchmark.extra_info.update(info)
    print("\nbag just empty, 5 s limit:", info)


def test_bag_just_empty_at_50ms(benchmark, bag_just_empty):
    """Every endgame with a 50 ms limit (the budget of a move): what kind of answer."""
    results = benchmark.pedantic(lambda: [solve_endgame(g, time_ms=50) for g in bag_just_empty], rounds=1, iterations=1)
    kinds = {k: sum(r.kind == k for r in results) / len(results) for k in ("exact", "lower_bound", "estimate")}
    benchmark.extra_info.update(kinds)
    print("\nbag just empty, 50 ms limit:", kinds)
