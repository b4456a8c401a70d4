"""The Qwirkle Cubes study of docs/cubes.md: greedy self-play in Qwirkle Cubes against
the tile game, read from the row files of two ``qwirkle simulate`` runs (two players).

    qwirkle simulate --games 1000000 --agents greedy,greedy --seed 2026 --threads 2 --out classic.parquet
    qwirkle simulate --games 1000000 --agents greedy,greedy --seed 2026 --threads 2 --variant cubes --out cubes.parquet
    python benchmarks/cubes_study.py classic.parquet cubes.parquet docs/cubes-study.png

Prints the table of docs/cubes.md (Markdown, 95% intervals) and writes its figure to the
PNG path (needs matplotlib: pip install 'qwirkle-core[plot]'). Any number of games
works; the study used a million of each.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from qwirkle_core.batch.rows import GameRows, read_metadata, read_rows
from qwirkle_core.batch.stats import Z95, wilson_interval


def mean_ci(x: np.ndarray) -> str:
    """``mean ± half-width`` of a 95% normal interval of the mean."""
    x = np.asarray(x, np.float64)
    return f"{x.mean():.2f} ± {Z95 * x.std(ddof=1) / math.sqrt(len(x)):.3f}"


def figures(rows: GameRows) -> dict[str, str]:
    """The study's figures of one batch (two players)."""
    n = len(rows)
    starter = rows.starter.astype(np.int64)
    other = 1 - starter
    idx = np.arange(n)
    wins = int(np.sum(rows.winner == starter))
    rate = wins / n
    low, high = wilson_interval(wins, n)
    return {
        "games": f"{n:,}",
        "mean score per player": mean_ci(rows.scores.mean(axis=1)),
        "score sd per player": f"{rows.scores.astype(np.float64).std(ddof=1):.1f}",
        "game length (turns)": mean_ci(rows.turns),
        "pieces placed": mean_ci(rows.tiles_placed),
        "Qwirkles per game (both players)": mean_ci(rows.qwirkles.sum(axis=1)),
        "ties": f"{np.mean(rows.winner == -1):.2%}",
        "first player's win rate": f"{rate:.2%} [{low:.2%}, {high:.2%}]",
        "first player's score margin": mean_ci(rows.scores[idx, starter].astype(np.int64) - rows.scores[idx, other]),
        "first player is seat 0": f"{np.mean(starter == 0):.1%}",
    }


def plot(batches: list[tuple[str, GameRows]], path: str) -> None:
    """Histograms of final scores and game lengths, and the first player's win rate with
    its 95% Wilson interval, of each named batch, side by side in one PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (scores, turns, first) = plt.subplots(1, 3, figsize=(13, 4.2), gridspec_kw={"width_ratios": [2, 1.4, 1]})
    for (name, rows), colour in zip(batches, ("tab:blue", "tab:orange")):
        s = rows.scores.ravel()
        scores.hist(
            s,
            bins=np.arange(s.min() - 2, s.max() + 4, 3),
            histtype="step",
            linewidth=1.5,
            density=True,
            color=colour,
            label=f"{name} (mean {s.mean():.1f})",
        )
        t = rows.turns
        turns.hist(
            t,
            bins=np.arange(t.min() - 0.5, t.max() + 1.5, 1),
            histtype="step",
            linewidth=1.5,
            density=True,
            color=colour,
            label=f"{name} (mean {t.mean():.1f})",
        )
    scores.set(xlabel="final score of a player", ylabel="share of players", title="Final scores")
    turns.set(xlabel="turns per game", ylabel="share of games", title="Game length")
    for ax in (scores, turns):
        ax.legend(fontsize=8)
    for i, (name, rows) in enumerate(batches):
        n = len(rows)
        wins = int(np.sum(rows.winner == rows.starter))
        low, high = wilson_interval(wins, n)
        first.bar(
            i, wins / n, color=("tab:blue", "tab:orange")[i], yerr=[[wins / n - low], [high - wins / n]], capsize=6
        )
        first.text(i, wins / n + 0.004, f"{wins / n:.1%}", ha="center", fontsize=9)
    first.axhline(0.5, color="grey", linewidth=1, linestyle="--")
    first.set(
        xticks=range(len(batches)),
        xticklabels=[name for name, _ in batches],
        ylim=(0.4, 0.55),
        ylabel="first player's win rate (95% CI)",
        title="First player",
    )
    games = ", ".join(f"{len(rows):,} {name} games" for name, rows in batches)
    fig.suptitle(f"Greedy self-play, two players: {games}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str]) -> None:
    """``argv``: the tile game's row file, the Cubes row file, the PNG to write."""
    if len(argv) != 3:
        sys.exit(__doc__)
    classic_path, cubes_path, png = argv
    batches = []
    for name, path in (("tile game", classic_path), ("Qwirkle Cubes", cubes_path)):
        meta = read_metadata(path)
        print(
            f"<!-- {name}: {path}: agents {meta['agents']}, rules {meta['rules']}, seed {meta['seed']}, games {meta['games']:,} -->"
        )
        batches.append((name, read_rows(path)))
    table = [figures(rows) for _, rows in batches]
    print("| | " + " | ".join(name for name, _ in batches) + " |")
    print("|---|" + "---|" * len(batches))
    for key in table[0]:
        print(f"| {key} | " + " | ".join(t[key] for t in table) + " |")
    plot(batches, png)
    print(f"<!-- wrote {png} -->")


if __name__ == "__main__":
    main(sys.argv[1:])
