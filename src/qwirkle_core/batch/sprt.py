"""The sequential probability ratio test on paired games, as chess engines' testing uses it.

Two agents play each deal once from each seat; a deal's *pair score* is the first
agent's points over its two games (a win 1, a tie 1/2, a loss 0), halved: 0, 1/4, 1/2,
3/4 or 1. The pairs are the test's independent trials, so the luck of a deal cancels
within its pair and the variance the test sees is that of the pairs (the
"pentanomial" model of fishtest, not the trinomial one of single games, which
overstates the variance when seats or deals matter).

Hypotheses on the logistic Elo difference: H0 ``elo = elo0`` against H1 ``elo =
elo1``, each turned into an expected score ``s = 1 / (1 + 10 ** (-elo / 400))``. The
log-likelihood ratio is the generalised SPRT's normal approximation (Van den Bergh,
as in fishtest): ``LLR = N (s1 - s0) (2 m - s0 - s1) / (2 v)`` for ``N`` pairs of mean
``m`` and variance ``v``. The test stops at ``LLR >= log((1 - beta) / alpha)``
(H1 accepted) or ``LLR <= log(beta / (1 - alpha))`` (H0 accepted); ``alpha`` and
``beta`` are the error rates (0.05 each by default).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._checks import check_finite

__all__ = ["SprtResult", "pair_scores", "sprt"]

MIN_PAIRS = 2  # no decision from fewer pairs (the variance is not yet known)


@dataclass(frozen=True)
class SprtResult:
    """The state of a test after ``pairs`` deals.

    Attributes
    ----------
    llr
        the log-likelihood ratio.
    lower, upper
        the bounds: H0 is accepted at or below ``lower``, H1 at or above ``upper``.
    decision
        ``"H1"`` (the first agent is at least ``elo1`` stronger), ``"H0"`` (at most
        ``elo0``) or ``None`` (go on).
    """

    elo0: float
    elo1: float
    pairs: int
    score: float  # the mean pair score
    llr: float
    lower: float
    upper: float
    decision: str | None

    def __str__(self) -> str:
        verdict = {"H1": "H1 accepted", "H0": "H0 accepted", None: "no decision yet"}[self.decision]
        return (
            f"SPRT elo0={self.elo0:g} elo1={self.elo1:g}: LLR {self.llr:.2f} ({self.lower:.2f}, {self.upper:.2f}), "
            f"{verdict} after {self.pairs:,} deals ({2 * self.pairs:,} games), score {100 * self.score:.1f} %"
        )


def pair_scores(margin_first_seat: np.ndarray, margin_second_seat: np.ndarray) -> np.ndarray:
    """The pair scores (float64[deals]) of deals played from both seats: the first
    agent's margins (its score minus the other's, per deal, in deal order) from seat 0
    and from seat 1."""
    a = np.sign(np.asarray(margin_first_seat, np.float64))
    b = np.sign(np.asarray(margin_second_seat, np.float64))
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("the two seats' margins must be 1-d arrays of the same deals")
    return (a + b + 2.0) / 4.0


def _expected(elo: float) -> float:
    return float(1.0 / (1.0 + 10.0 ** (-elo / 400.0)))


def sprt(scores: np.ndarray, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05) -> SprtResult:
    """The test of H0 ``elo0`` against H1 ``elo1`` on pair scores (:func:`pair_scores`).

    Raises
    ------
    ValueError
        ``elo0 >= elo1``, error rates outside (0, 0.5], or scores outside 0 .. 1.
    """
    elo0 = check_finite(elo0, "elo0")
    elo1 = check_finite(elo1, "elo1")
    if not elo0 < elo1:
        raise ValueError(f"the SPRT needs elo0 < elo1, not {elo0:g}, {elo1:g}")
    for name, rate in (("alpha", alpha), ("beta", beta)):
        if not 0.0 < check_finite(rate, name) <= 0.5:
            raise ValueError(f"{name} must be in (0, 0.5], not {rate!r}")
    x = np.asarray(scores, np.float64)
    if x.ndim != 1 or np.any((x < 0) | (x > 1)):
        raise ValueError("pair scores are a 1-d array of values in 0 .. 1")
    lower, upper = math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)
    n = x.shape[0]
    mean = float(x.mean()) if n else 0.5
    llr = 0.0
    if n >= MIN_PAIRS:
        var = float(x.var())
        if var == 0.0:  # every pair the same: as if one pair in the other direction had been seen
            var = 1.0 / (4.0 * n)
        s0, s1 = _expected(elo0), _expected(elo1)
        llr = n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)
    decision = "H1" if llr >= upper else "H0" if llr <= lower else None
    return SprtResult(elo0, elo1, n, mean, llr, lower, upper, decision)
