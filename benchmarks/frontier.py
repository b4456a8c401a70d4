"""The strength/time frontier: each agent's win rate against greedy and its time per move.

    python benchmarks/frontier.py random heuristic static net mc search:games=300 \
        --games 2000 --seed 6464 --out docs/frontier.png

For each agent: ``GAMES`` seat-swapped games against greedy (``GAMES // 2`` deals of
the batch ``SEED``, each played from both seats, on all cores; an agent's own
``:games=N`` overrides the count), its win rate with a 95 % Wilson interval (ties count
one half), and its CPU time per move from one-thread self-play
(``move_time.per_move``, after an untimed call that compiles or loads the kernel). Prints a Markdown table, writes the figures as JSON beside
the plot, and draws win rate against time per move (log scale). Greedy is drawn at
50 %, its own time measured likewise. Ctrl-C keeps the agents finished.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

import qwirkle_core as qc
from move_time import per_move
from qwirkle_core.batch.stats import wilson_interval


def against_greedy(agent: str, games: int, seed: int) -> tuple[float, float, float]:
    deals = max(1, games // 2)
    a = qc.simulate(deals, (agent, "greedy"), seed=seed)
    b = qc.simulate(deals, ("greedy", agent), seed=seed)
    margin = np.concatenate([a.scores[:, 0] - a.scores[:, 1], b.scores[:, 1] - b.scores[:, 0]])
    wins = float((margin > 0).sum() + 0.5 * (margin == 0).sum())
    low, high = wilson_interval(wins, margin.shape[0])
    return wins / margin.shape[0], low, high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agents", nargs="+", help="agents, each with an optional :games=N")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=6464)
    parser.add_argument("--timing-games", type=int, default=200, help="self-play games timed (a twentieth for search)")
    parser.add_argument("--out", type=Path, default=Path("frontier.png"))
    args = parser.parse_args()
    rows = []
    try:
        for text in ["greedy", *args.agents]:
            name, _, games = text.partition(":games=")
            count = int(games) if games else args.games
            timing = max(2, args.timing_games // (20 if name.startswith("search") else 1))
            per_move(name, 2, 0)  # compiled or loaded here, not timed
            us = per_move(name, timing, 1)
            rate, low, high = (0.5, 0.5, 0.5) if name == "greedy" else against_greedy(name, count, args.seed)
            rows.append({"agent": name, "games": 0 if name == "greedy" else count, "win_rate": rate,
                         "low": low, "high": high, "us_per_move": us})  # fmt: skip
            print(f"| `{name}` | {100 * rate:.1f} % [{100 * low:.1f}, {100 * high:.1f}] | {count} | {us:,.1f} µs |")
    except KeyboardInterrupt:
        print("interrupted: the agents finished so far")
    args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for r in rows:
        ax.errorbar(
            r["us_per_move"], 100 * r["win_rate"],
            yerr=[[100 * (r["win_rate"] - r["low"])], [100 * (r["high"] - r["win_rate"])]],
            fmt="o", capsize=3,
        )  # fmt: skip
        ax.annotate(r["agent"], (r["us_per_move"], 100 * r["win_rate"]), textcoords="offset points", xytext=(6, -4))
    ax.set_xscale("log")
    ax.set_xlabel("CPU time per move (µs, one thread, log scale)")
    ax.set_ylabel("win rate against greedy (%)")
    ax.set_title(f"Strength against time per move (seat-swapped deals, seed {args.seed})")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out} and {args.out.with_suffix('.json')}")


if __name__ == "__main__":
    main()
