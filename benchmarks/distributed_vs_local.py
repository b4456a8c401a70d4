"""The same batch locally and on a local Dask cluster, in one run: the cluster's share
of the local rate, and where the rest goes.

    python benchmarks/distributed_vs_local.py                 # 200,000 greedy games, 2 threads vs 2 workers
    python benchmarks/distributed_vs_local.py --rounds 2      # local, cluster, local, cluster

Both write their rows to Parquet (a file locally, part files on the cluster), so they
do the same work. The local batch runs on ``--threads`` numba threads in this process;
the cluster is a ``LocalCluster`` of ``--workers`` processes with one thread each,
started here (its start and the workers' warm-up are timed apart: they are paid once
per cluster, not per game). Rates count games over the seconds of play of each
(``SimulationResult.elapsed``). From Dask's task stream it splits the cluster's
worker-seconds of play into: running tasks, gaps between tasks (scheduling, sending
results), and the idle end (workers that finished their last range while another was
still playing). Not a test: the machine it runs on decides the figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import qwirkle_core as qc
from qwirkle_core.batch.simulate import simulate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200_000)
    parser.add_argument("--agents", default="greedy,greedy")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2, help="numba threads of the local batch")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the cluster (one thread each)")
    parser.add_argument("--range-size", type=int, default=None, help="games per task (default: automatic)")
    parser.add_argument("--rounds", type=int, default=1, help="local then cluster, this many times")
    args = parser.parse_args()

    from dask.distributed import Client, LocalCluster, get_task_stream

    from qwirkle_core.batch import distributed as dist

    simulate(10, agents=args.agents, threads=args.threads)  # compile here, or load the cache
    local_rates, cluster_rates = [], []
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        with (
            LocalCluster(
                n_workers=args.workers, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
            ) as cluster,
            Client(cluster) as client,
        ):
            started = time.perf_counter() - t
            t = time.perf_counter()
            ready = dist.warm_up(client)
            print(
                f"cluster of {args.workers} workers started in {started:.1f} s; kernels loaded on every worker in {time.perf_counter() - t:.1f} s "
                f"({', '.join(f'{w.seconds:.1f}' for w in ready)} s each, from the on-disk cache)"
            )
            for k in range(args.rounds):
                local = simulate(
                    args.games,
                    agents=args.agents,
                    seed=args.seed,
                    threads=args.threads,
                    out=Path(tmp) / f"local-{k}.parquet",
                )
                local_rates.append(local.games_per_second)
                print(
                    f"round {k + 1}: local   {local.games:,} games in {local.elapsed:.2f} s: {local.games_per_second:,.0f} games/s ({local.threads} threads)"
                )
                t = time.perf_counter()
                with get_task_stream(client) as stream:
                    r = simulate(
                        args.games,
                        agents=args.agents,
                        seed=args.seed,
                        client=client,
                        out=Path(tmp) / f"parts-{k}",
                        range_size=args.range_size,
                    )
                call = time.perf_counter() - t
                assert r.stats.to_dict() == local.stats.to_dict(), "the cluster's batch differs from the local one"
                cluster_rates.append(r.games_per_second)
                print(
                    f"round {k + 1}: cluster {r.games:,} games in {r.elapsed:.2f} s: {r.games_per_second:,.0f} games/s "
                    f"({r.workers} workers; {r.games_per_second / local.games_per_second:.1%} of the local rate)"
                )
                _breakdown(stream.data, r, call, args.workers, local.games_per_second / local.threads)
    ratio = statistics.median(cluster_rates) / statistics.median(local_rates)
    print(f"cluster / local (medians of {args.rounds} round{'s' * (args.rounds > 1)}): {ratio:.1%}")
    return 0


def _breakdown(tasks: list[dict], r: qc.SimulationResult, call: float, workers: int, local_per_thread: float) -> None:
    """Where the workers' seconds of play went, from the task stream (worker clocks)."""
    parts = [t for t in tasks if str(t["key"]).startswith("qwirkle-play-part")]
    spans = [(t["worker"], s["start"], s["stop"]) for t in parts for s in t["startstops"] if s["action"] == "compute"]
    begin, end = min(s for _, s, _ in spans), max(e for _, _, e in spans)
    busy = sum(e - s for _, s, e in spans)
    last = {w: max(e for v, _, e in spans if v == w) for w in {w for w, _, _ in spans}}
    idle_end = sum(end - e for e in last.values())
    total = workers * (end - begin)
    print(
        f"    {len(parts)} tasks, {r.games / len(parts):,.0f} games each; one task ran {statistics.median(e - s for _, s, e in spans):.2f} s (median)"
    )
    print(f"    worker-seconds from the first task's start to the last one's end: {total:.2f}")
    print(
        f"      running tasks (play + Parquet part + stats): {busy:.2f} ({busy / total:.1%}); inside them "
        f"{r.games / busy:,.0f} games/s per worker thread, {r.games / busy / local_per_thread:.1%} of a local thread's"
    )
    print(f"      idle at the end (a worker done, another still playing): {idle_end:.2f} ({idle_end / total:.1%})")
    print(
        f"      gaps between tasks (scheduling, results): {total - busy - idle_end:.2f} ({(total - busy - idle_end) / total:.1%})"
    )
    print(
        f"    before the first task, after the last: {r.elapsed - (end - begin):.2f} s; the call in all: {call:.2f} s "
        f"(warm-up check and rate probe {r.compile_seconds:.2f} s)"
    )


if __name__ == "__main__":
    sys.exit(main())
