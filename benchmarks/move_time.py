"""CPU time per move of one-thread self-play, agents interleaved round by round.

    python benchmarks/move_time.py static heuristic [--games 400] [--rounds 3]

For each round and agent it plays GAMES self-play games on one thread
(``qc.simulate(..., threads=1)``) and divides the process's CPU seconds by the turns
played; it prints each agent's median over the rounds in microseconds per move. The
first (untimed) call compiles or loads the kernels. CPU seconds, not wall time: on a
shared machine the wall clock of the same code varies threefold.
"""

from __future__ import annotations

import argparse
import statistics
import time

import qwirkle_core as qc


def per_move(agent: str, games: int, seed: int) -> float:
    """CPU microseconds per move of ``games`` self-play games of ``agent``."""
    t = time.process_time()
    result = qc.simulate(games, agents=(agent, agent), seed=seed, threads=1)
    cpu = time.process_time() - t
    assert result.rows is not None
    return cpu / int(result.rows.turns.sum()) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agents", nargs="+")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for agent in args.agents:
        per_move(agent, 10, 0)
    times: dict[str, list[float]] = {a: [] for a in args.agents}
    for r in range(args.rounds):
        for agent in args.agents:
            times[agent].append(per_move(agent, args.games, 100 + r))
    for agent, ts in times.items():
        print(f"{agent}: {statistics.median(ts):.2f} us per move (rounds: {', '.join(f'{t:.2f}' for t in ts)})")


if __name__ == "__main__":
    main()
