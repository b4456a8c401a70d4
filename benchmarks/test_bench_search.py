"""The search agent's time per move and game analysis (``qc.analyse``) at its defaults.

Run: ``pytest benchmarks/test_bench_search.py --benchmark-only -s`` (about 2 minutes
on one free core; the figures are printed and kept in the benchmark's extra_info).
Seeds 2026-2028, the seeds of the reported figures in docs/agents.md.
"""

import time

import numpy as np

import qwirkle_core as qc

SEEDS = (2026, 2027, 2028)


def test_search_time_per_move(benchmark):
    """``search`` (time_ms 50, work budget) against greedy, one thread: ms per search move."""
    g = qc.Game(players=2, seed=SEEDS[0])
    g.copy().play_agent("search:time_ms=1")  # load the kernels

    def one_game():
        h = qc.Game(players=2, seed=SEEDS[0])
        moves = 0
        while not h.is_over:
            if h.current_player == 0:
                moves += 1
            h.play_agent("search" if h.current_player == 0 else "greedy")
        return moves

    start = time.perf_counter()
    moves = benchmark.pedantic(one_game, rounds=1, iterations=1)
    ms = 1000 * (time.perf_counter() - start) / moves
    benchmark.extra_info["ms_per_search_move"] = ms
    print(f"\nsearch: {ms:.1f} ms per move over {moves} moves (greedy's moves included in the time)")
    assert moves > 0


def test_analyse_self_play_records(benchmark):
    """``qc.analyse`` at its defaults on self-play records of search and of greedy: CPU
    seconds per record, and the mean loss of each agent's moves."""
    records = {a: [qc.play_game((a, a), seed=s) for s in SEEDS] for a in ("search", "greedy")}
    qc.analyse(records["greedy"][0], seat=0, playouts=2)  # load the kernels

    def run():
        out = {}
        for agent, recs in records.items():
            losses, seconds, actions = [], [], []
            for rec in recs:
                t = time.process_time()
                analysis = qc.analyse(rec)
                seconds.append(time.process_time() - t)
                actions.append(len(rec.actions))
                losses += [a.loss for a in analysis.actions if a.method != "forced"]
            out[agent] = (np.array(losses), seconds, actions)
        return out

    out = benchmark.pedantic(run, rounds=1, iterations=1)
    for agent, (losses, seconds, actions) in out.items():
        se = losses.std(ddof=1) / np.sqrt(len(losses))
        benchmark.extra_info[f"{agent}_mean_loss"] = float(losses.mean())
        benchmark.extra_info[f"{agent}_cpu_s_per_record"] = seconds
        print(
            f"\n{agent}: mean loss {losses.mean():.2f} ± {se:.2f} points over {len(losses)} actions; CPU s per record {[round(s, 1) for s in seconds]} for {actions} actions"
        )
    assert all(len(v[0]) for v in out.values())
