"""Batch statistics that merge: :class:`BatchStats` and the Wilson interval.

A batch's summary (win rates with 95% intervals, mean scores and their spread,
Qwirkles, turns, the first player's advantage) is computed from sufficient statistics:
counts, sums and sums of squares. They add up exactly across chunks, threads, files
and cluster workers, so a summary never needs every row in memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Z95", "BatchStats", "wilson_interval"]

Z95 = 1.959963984540054
"""The two-sided 95% normal quantile."""


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion ``successes / n``.

    Parameters
    ----------
    successes
        the count of successes (ties may count one half).
    n
        the number of trials.
    z
        the normal quantile (1.96: a 95% interval).

    Returns
    -------
    tuple of float
        ``(low, high)``; ``(nan, nan)`` when ``n`` is 0.
    """
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / denom
    # the bounds contain p exactly (rounding could put them a hair beyond it at 0 and 1)
    return (min(max(0.0, centre - half), p), max(min(1.0, centre + half), p))


def _zeros(players: int) -> np.ndarray:
    return np.zeros(players, np.int64)


@dataclass
class BatchStats:
    """Sufficient statistics of a batch of games with ``players`` seats (int64 sums,
    exact). ``a.merge(b)`` is the statistics of both batches."""

    players: int
    games: int = 0
    score_sum: np.ndarray = field(default_factory=lambda: _zeros(0))
    score_sq: np.ndarray = field(default_factory=lambda: _zeros(0))
    wins: np.ndarray = field(default_factory=lambda: _zeros(0))
    qwirkles: np.ndarray = field(default_factory=lambda: _zeros(0))
    ties: int = 0
    truncated: int = 0
    turns: int = 0
    tiles_placed: int = 0
    starter_wins: int = 0
    starter_margin: int = 0  # sum over games of (players-1) * starter's score - other scores

    def __post_init__(self) -> None:
        for name in ("score_sum", "score_sq", "wins", "qwirkles"):
            if len(getattr(self, name)) != self.players:
                setattr(self, name, _zeros(self.players))

    @classmethod
    def from_rows(
        cls,
        scores: np.ndarray,
        winner: np.ndarray,
        starter: np.ndarray,
        turns: np.ndarray,
        tiles_placed: np.ndarray,
        qwirkles: np.ndarray,
        truncated: np.ndarray,
    ) -> BatchStats:
        """The statistics of per-game rows.

        Parameters
        ----------
        scores, qwirkles
            int arrays [games, players].
        winner
            int array [games], the winning seat or -1 for no winner.
        starter, turns, tiles_placed
            int arrays [games].
        truncated
            bool array [games]: stopped at the turn limit.

        Returns
        -------
        BatchStats
        """
        n, players = scores.shape
        s = scores.astype(np.int64)
        idx = np.arange(n)
        start = s[idx, starter.astype(np.int64)] if n else np.zeros(0, np.int64)
        return cls(
            players=players,
            games=n,
            score_sum=s.sum(axis=0),
            score_sq=(s * s).sum(axis=0),
            wins=np.bincount(winner[winner >= 0].astype(np.int64), minlength=players)[:players].astype(np.int64),
            qwirkles=qwirkles.astype(np.int64).sum(axis=0),
            ties=int(np.sum((winner < 0) & ~truncated)),
            truncated=int(np.sum(truncated)),
            turns=int(turns.astype(np.int64).sum()),
            tiles_placed=int(tiles_placed.astype(np.int64).sum()),
            starter_wins=int(np.sum(winner == starter)),
            starter_margin=int(((players - 1) * start - (s.sum(axis=1) - start)).sum()),
        )

    def merge(self, other: BatchStats) -> BatchStats:
        """The statistics of this batch and another together.

        Parameters
        ----------
        other
            a :class:`BatchStats` of the same number of players.

        Returns
        -------
        BatchStats

        Raises
        ------
        ValueError
            their numbers of players differ.
        """
        if other.players != self.players:
            raise ValueError(f"cannot merge statistics of {self.players} and {other.players} players")
        return BatchStats(
            players=self.players,
            games=self.games + other.games,
            score_sum=self.score_sum + other.score_sum,
            score_sq=self.score_sq + other.score_sq,
            wins=self.wins + other.wins,
            qwirkles=self.qwirkles + other.qwirkles,
            ties=self.ties + other.ties,
            truncated=self.truncated + other.truncated,
            turns=self.turns + other.turns,
            tiles_placed=self.tiles_placed + other.tiles_placed,
            starter_wins=self.starter_wins + other.starter_wins,
            starter_margin=self.starter_margin + other.starter_margin,
        )

    # -- summaries -----------------------------------------------------------------------

    def win_rates(self) -> list[tuple[float, float, float]]:
        """Per seat: (rate, low, high) with a 95% Wilson interval; ties and truncated
        games count as no win."""
        n = self.games
        return [(int(w) / n if n else math.nan, *wilson_interval(int(w), n)) for w in self.wins]

    @property
    def tie_rate(self) -> float:
        """The share of games that ended in a tie."""
        return self.ties / self.games if self.games else math.nan

    def mean_scores(self) -> np.ndarray:
        """float64[players]: the mean final score of each seat."""
        return self.score_sum / self.games if self.games else np.full(self.players, math.nan)

    def score_std(self) -> np.ndarray:
        """float64[players]: the sample standard deviation of each seat's score."""
        n = self.games
        if n < 2:
            return np.full(self.players, math.nan)
        # exact in Python ints: n * sum(x^2) - (sum x)^2, so equal scores give exactly 0
        var = [(n * int(q) - int(t) * int(t)) / (n * (n - 1)) for q, t in zip(self.score_sq, self.score_sum)]
        return np.sqrt(np.array(var, np.float64))

    def mean_qwirkles(self) -> np.ndarray:
        """float64[players]: Qwirkles per game of each seat."""
        return self.qwirkles / self.games if self.games else np.full(self.players, math.nan)

    def mean_turns(self) -> float:
        """Actions (placements, exchanges, passes) per game."""
        return self.turns / self.games if self.games else math.nan

    def mean_tiles_placed(self) -> float:
        """Tiles on the board at the end, per game."""
        return self.tiles_placed / self.games if self.games else math.nan

    def first_player_advantage(self) -> dict[str, float]:
        """How the opening seat fares, whatever its agent: ``win_rate`` with its 95%
        interval (``low``, ``high``), ``fair`` (1 / players) and ``score_margin`` (the
        starter's mean score minus the mean of the other seats' scores)."""
        n = self.games
        low, high = wilson_interval(self.starter_wins, n)
        return {
            "win_rate": self.starter_wins / n if n else math.nan,
            "low": low,
            "high": high,
            "fair": 1 / self.players,
            "score_margin": self.starter_margin / (self.players - 1) / n if n else math.nan,
        }

    def to_dict(self) -> dict[str, Any]:
        """The statistics as a JSON-ready dict (:meth:`from_dict` reads it back)."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            out[name] = value.tolist() if isinstance(value, np.ndarray) else value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BatchStats:
        """The statistics of a dict written by :meth:`to_dict`.

        Parameters
        ----------
        data
            a dict.

        Returns
        -------
        BatchStats
        """
        kwargs: dict[str, Any] = {k: np.array(v, np.int64) if isinstance(v, list) else v for k, v in data.items()}
        return cls(**kwargs)
