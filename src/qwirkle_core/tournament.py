"""Round-robin tournaments between agents (two-player games, seats swapped fairly)."""

import itertools
import time
from dataclasses import dataclass

import numpy as np

from .simulate import parse_agents, simulate, wilson_interval

__all__ = ["Match", "TournamentResult", "tournament"]


@dataclass
class Match:
    """All games of one pair: ``first`` against ``second``, half the games each seat.

    Both halves use the same game seeds, so each deal is played once from each seat.
    ``margin`` is ``first``'s score minus ``second``'s, per game (int32[games]).
    """

    first: str
    second: str
    wins: int
    losses: int
    ties: int
    margin: np.ndarray
    scores_first: np.ndarray
    scores_second: np.ndarray

    @property
    def games(self):
        return self.wins + self.losses + self.ties

    @property
    def win_rate(self):
        """``first``'s share of the games, a tie counting one half."""
        return (self.wins + 0.5 * self.ties) / self.games

    def interval(self):
        """95% Wilson interval of ``first``'s win rate (ties as half wins)."""
        return wilson_interval(self.wins + 0.5 * self.ties, self.games)


@dataclass
class TournamentResult:
    agents: tuple
    matches: list
    seconds_per_move: dict
    seed: int

    def scores(self, agent):
        """Every final score ``agent`` made in the tournament (int32 array)."""
        parts = [m.scores_first for m in self.matches if m.first == agent] + [m.scores_second for m in self.matches if m.second == agent]
        return np.concatenate(parts) if parts else np.zeros(0, np.int32)


def _half(a, b, games, seed, threads):
    return simulate(games, agents=(a, b), seed=seed, threads=threads)


def tournament(agents, games=1000, seed=0, threads=None, timing_games=8, timing_seconds=0.5):
    """Play every pair of ``agents`` (names as in :func:`simulate`) for ``games`` games.

    Each pair plays ``games // 2`` deals twice, once from each seat. Time per move is
    measured separately on one thread: each agent plays games against itself,
    ``timing_games`` first and twice as many each time until a run lasts
    ``timing_seconds`` (at most 4,096 games); the wall time of the last run is divided
    by its number of turns (exchanges and passes included).
    """
    names, _ = parse_agents(agents)
    if len(set(names)) != len(names):
        raise ValueError("each agent may appear once in a tournament")
    if len(names) < 2:
        raise ValueError("a tournament needs at least 2 agents")
    if games < 2:
        raise ValueError(f"games must be at least 2, not {games}")
    half = games // 2
    matches = []
    for a, b in itertools.combinations(names, 2):
        ab = _half(a, b, half, seed, threads)
        ba = _half(b, a, half, seed, threads)
        margin = np.concatenate([ab.scores[:, 0] - ab.scores[:, 1], ba.scores[:, 1] - ba.scores[:, 0]])
        matches.append(
            Match(
                first=a,
                second=b,
                wins=int(np.sum(margin > 0)),
                losses=int(np.sum(margin < 0)),
                ties=int(np.sum(margin == 0)),
                margin=margin,
                scores_first=np.concatenate([ab.scores[:, 0], ba.scores[:, 1]]),
                scores_second=np.concatenate([ab.scores[:, 1], ba.scores[:, 0]]),
            )
        )
    timing = {}
    for a in names:
        n = timing_games
        while True:
            start = time.perf_counter()
            r = simulate(n, agents=(a, a), seed=seed ^ 0x5EED, threads=1)
            elapsed = time.perf_counter() - start
            if elapsed >= timing_seconds or n >= 4096:
                break
            n *= 2
        timing[a] = elapsed / max(int(r.turns.sum()), 1)
    return TournamentResult(agents=names, matches=matches, seconds_per_move=timing, seed=seed)


def plot_scores(result, path):
    """Save a histogram of each agent's final scores to ``path`` (needs matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("--plot needs matplotlib: pip install 'qwirkle-core[plot]'") from None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    everything = np.concatenate([result.scores(a) for a in result.agents])
    bins = np.arange(everything.min() - 5, everything.max() + 10, 5)
    for a in result.agents:
        ax.hist(result.scores(a), bins=bins, histtype="step", linewidth=1.5, label=f"{a} (mean {result.scores(a).mean():.1f})")
    ax.set_xlabel("final score")
    ax.set_ylabel("games")
    ax.set_title(f"Score distributions, round robin, seed {result.seed}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
