"""Round-robin tournaments between agents (two-player games, seats swapped fairly)."""

import itertools
import time
from dataclasses import dataclass, field

import numpy as np

from .players import play_games, resolve_agents
from .simulate import simulate, wilson_interval

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
        """``first``'s share of the games, a tie counting one half (NaN with no games)."""
        return (self.wins + 0.5 * self.ties) / self.games if self.games else float("nan")

    def interval(self):
        """95% Wilson interval of ``first``'s win rate (ties as half wins)."""
        return wilson_interval(self.wins + 0.5 * self.ties, self.games)


@dataclass
class TournamentResult:
    """``failures``: the :class:`~qwirkle_core.players.AgentFailure` of every game a
    Python agent broke (those games are not counted in ``matches``)."""

    agents: tuple
    matches: list
    seconds_per_move: dict
    seed: int
    failures: list = field(default_factory=list)

    def scores(self, agent):
        """Every final score ``agent`` made in the tournament (int32 array)."""
        parts = [m.scores_first for m in self.matches if m.first == agent] + [m.scores_second for m in self.matches if m.second == agent]
        return np.concatenate(parts) if parts else np.zeros(0, np.int32)


def _half(a, b, games, seed, threads, time_limit, failures, timing):
    """The games of ``a`` (seat 0) against ``b``: a batch for two built-in agents, else
    :func:`~qwirkle_core.players.play_games` (its failures and Python agents' turn
    times are added to ``failures`` and ``timing``; only completed games come back)."""
    if a.builtin is not None and b.builtin is not None:
        return simulate(games, agents=(a.label, b.label), seed=seed, threads=threads)
    r = play_games((a, b), games, seed=seed, time_limit=time_limit, processes=threads)
    failures.extend(r.failures)
    for seat, p in enumerate((a, b)):
        t = timing.setdefault(p.label, [0.0, 0])
        t[0] += float(r.seconds[:, seat].sum())
        t[1] += int(r.moves[:, seat].sum())
    return r.completed()


def tournament(agents, games=1000, seed=0, threads=None, timing_games=8, timing_seconds=0.5, time_limit=None):
    """Play every pair of ``agents`` (names as in :func:`simulate`, or Python agents:
    see :mod:`qwirkle_core.players`) for ``games`` games.

    Each pair plays ``games // 2`` deals twice, once from each seat. Time per move is
    measured separately on one thread: each agent plays games against itself,
    ``timing_games`` first and twice as many each time until a run lasts
    ``timing_seconds`` (at most 4,096 games); the wall time of the last run is divided
    by its number of turns (exchanges and passes included). A Python agent's time per
    move is the mean wall time of its turns in the tournament's games.

    Pairs with a Python agent play through :func:`~qwirkle_core.players.play_games`
    in ``threads`` worker processes (default: one per core); ``time_limit`` is the
    Python agents' seconds per move. A game in which a Python agent fails is left out
    of the results and its :class:`~qwirkle_core.players.AgentFailure` goes into
    ``result.failures``.
    """
    players = resolve_agents(agents)
    names = tuple(p.label for p in players)
    if len(set(names)) != len(names):
        raise ValueError("each agent may appear once in a tournament")
    if len(names) < 2:
        raise ValueError("a tournament needs at least 2 agents")
    if games < 2:
        raise ValueError(f"games must be at least 2, not {games}")
    half = games // 2
    matches, failures, python_timing = [], [], {}
    for pa, pb in itertools.combinations(players, 2):
        a, b = pa.label, pb.label
        ab = _half(pa, pb, half, seed, threads, time_limit, failures, python_timing)
        ba = _half(pb, pa, half, seed, threads, time_limit, failures, python_timing)
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
    for p in players:
        if p.builtin is None:
            seconds, moves = python_timing.get(p.label, (0.0, 0))
            timing[p.label] = seconds / moves if moves else float("nan")
    for a in (p.label for p in players if p.builtin is not None):
        n = timing_games
        while True:
            start = time.perf_counter()
            r = simulate(n, agents=(a, a), seed=seed ^ 0x5EED, threads=1)
            elapsed = time.perf_counter() - start
            if elapsed >= timing_seconds or n >= 4096:
                break
            n *= 2
        timing[a] = elapsed / max(int(r.turns.sum()), 1)
    return TournamentResult(agents=names, matches=matches, seconds_per_move=timing, seed=seed, failures=failures)


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
