"""Ratings from a round robin: a Bradley-Terry model on the Elo scale, with 95% intervals.

Agent ``i`` has a strength ``theta_i``; it beats agent ``j`` with probability
``1 / (1 + 10 ** (-(R_i - R_j) / 400))``, ``R = 1500 + 400 / ln 10 * (theta - theta_anchor)``
(the Elo scale: 400 points apart is a 10 to 1 favourite). The strengths are the maximum
likelihood estimate from every game of every pairing, a tie counting as half a win for
each side, found by Newton's method; the anchor (``greedy`` when it plays, else the first
agent) is fixed at 1500.

Two choices, written down in docs/agents.md:

- **A prior of one tie per pairing.** An agent that wins every game of a pairing (greedy
  against random) has no finite maximum likelihood rating; one virtual tie added to each
  pairing (half a win each way, as BayesElo's "prior draws") keeps every rating finite
  and moves the others by a fraction of a point at the usual thousands of games.
- **Intervals from the curvature.** The 95% interval is ``R +- 1.96`` standard errors
  from the inverse of the log-likelihood's Hessian (the anchor fixed), treating the
  games as independent. The games are seat-swapped pairs on the same deals, whose
  outcomes are negatively correlated (the deal's luck cancels), so the true spread is
  no wider: the intervals are, if anything, conservative. An interval is the rating's
  uncertainty relative to the anchor (the anchor's own is 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ANCHOR", "ANCHOR_RATING", "PRIOR_TIES", "Rating", "bradley_terry", "elo_scale"]

ANCHOR = "greedy"
ANCHOR_RATING = 1500.0
PRIOR_TIES = 1.0
"""Virtual ties added to each pairing that played (see the module's notes)."""

_ELO = 400.0 / math.log(10.0)


def elo_scale() -> float:
    """Elo points per unit of Bradley-Terry strength (natural log odds): 400 / ln 10."""
    return _ELO


@dataclass(frozen=True)
class Rating:
    """One agent's rating from a round robin.

    Attributes
    ----------
    agent
        its label.
    rating
        Elo-scale rating, the anchor at 1500.
    low, high
        its 95% interval (the anchor's is [1500, 1500]).
    games
        games it played (ties count).
    win_rate
        its share of those games (a tie counting one half; nan for none).
    """

    agent: str
    rating: float
    low: float
    high: float
    games: int
    win_rate: float


def bradley_terry(
    agents: Sequence[str],
    results: Sequence[tuple[int, int, float, float]],
    anchor: int = 0,
    prior_ties: float = PRIOR_TIES,
) -> tuple[np.ndarray, np.ndarray]:
    """Maximum likelihood Bradley-Terry strengths and their standard errors.

    Parameters
    ----------
    agents
        the labels, one per agent (only their number is used).
    results
        ``(i, j, score_i, score_j)`` per pairing: agent ``i``'s wins plus half its
        ties, and agent ``j``'s (so ``score_i + score_j`` is the pairing's games). A
        pair may appear more than once (added up).
    anchor
        the index of the agent whose strength is fixed at 0.
    prior_ties
        virtual ties added to each pairing that played.

    Returns
    -------
    (theta, se)
        float64[n] strengths in natural log odds (``theta[anchor] == 0``), and
        float64[n] their standard errors relative to the anchor (0 for it). Agents
        that played no game get nan.

    Raises
    ------
    ValueError
        a bad index, a negative score, or agents that are not all connected by games
        (no common scale).
    """
    n = len(agents)
    if not 0 <= anchor < n:
        raise ValueError(f"anchor must be an agent index 0..{n - 1}, not {anchor}")
    wins = np.zeros((n, n))
    for i, j, si, sj in results:
        if not (0 <= i < n and 0 <= j < n) or i == j:
            raise ValueError(f"a pairing is two different agents 0..{n - 1}, not ({i}, {j})")
        if si < 0 or sj < 0 or not (math.isfinite(si) and math.isfinite(sj)):
            raise ValueError(f"scores are finite and non-negative, not ({si}, {sj})")
        wins[i, j] += si
        wins[j, i] += sj
    games = wins + wins.T
    played = games > 0
    wins = wins + np.where(played, prior_ties / 2.0, 0.0)
    games = wins + wins.T
    active: np.ndarray = np.asarray(played.any(axis=1))
    theta = np.full(n, np.nan)
    se = np.full(n, np.nan)
    if not active[anchor]:
        return theta, se
    if not _connected(played, anchor, active):
        raise ValueError("the agents are not all connected by games: their ratings have no common scale")
    free = [k for k in range(n) if active[k] and k != anchor]
    idx = np.array([anchor, *free])
    w, g = wins[np.ix_(idx, idx)], games[np.ix_(idx, idx)]
    t = np.zeros(len(idx))
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(t[:, None] - t[None, :])))
        grad = (w - g * p).sum(axis=1)
        curv = g * p * (1.0 - p)
        hess = np.diag(curv.sum(axis=1)) - curv  # minus the log-likelihood's Hessian
        step = np.linalg.solve(hess[1:, 1:], grad[1:]) if len(idx) > 1 else np.zeros(0)
        t[1:] += step
        if not len(step) or np.abs(step).max() < 1e-12:
            break
    p = 1.0 / (1.0 + np.exp(-(t[:, None] - t[None, :])))
    curv = g * p * (1.0 - p)
    hess = np.diag(curv.sum(axis=1)) - curv
    cov = np.linalg.inv(hess[1:, 1:]) if len(idx) > 1 else np.zeros((0, 0))
    theta[idx] = t
    se[idx] = np.concatenate([[0.0], np.sqrt(np.diag(cov))])
    return theta, se


def _connected(played: np.ndarray, start: int, active: np.ndarray) -> bool:
    seen = {start}
    todo = [start]
    while todo:
        k = todo.pop()
        for m in np.flatnonzero(played[k]):
            if int(m) not in seen:
                seen.add(int(m))
                todo.append(int(m))
    return seen == set(np.flatnonzero(active).tolist())
