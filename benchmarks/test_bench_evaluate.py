"""Monte Carlo move evaluation: the 20 best placements x 200 playouts to the end, one thread.

Run: ``pytest benchmarks/ --benchmark-only``.
"""

import qwirkle_core as qc


def test_evaluate_top20_200_playouts(benchmark):
    g = qc.Game(seed=3)
    while g.turn < 16:
        g.play_agent("greedy")
    assert len(g.legal_moves()) >= 20
    g.evaluate_moves(playouts=2, top=2, threads=1)  # compile / load from cache
    result = benchmark.pedantic(
        g.evaluate_moves, kwargs={"playouts": 200, "top": 20, "seed": 1, "threads": 1}, rounds=5, iterations=1
    )
    assert sum(e.move.kind == "place" for e in result) == 20
    benchmark.extra_info["playouts"] = 200 * len(result)
    benchmark.extra_info["playouts_per_second"] = 200 * len(result) / benchmark.stats.stats.median
