"""batch/ratings.py: Bradley-Terry ratings of a round robin, checked against a slow
reference (Hunter's MM iterations for the estimate, a finite-difference Hessian of the
log-likelihood for the intervals) and against the two-agent closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from qwirkle_core.batch.ratings import PRIOR_TIES, bradley_terry, elo_scale
from qwirkle_core.batch.tournament import Match, TournamentResult
from qwirkle_core.cli.tournament import tournament_tables


def _reference(n: int, results: list[tuple[int, int, float, float]], anchor: int) -> tuple[list[float], list[float]]:
    """Strengths by Hunter's MM algorithm (pure Python, thousands of sweeps) and standard
    errors from a finite-difference Hessian of the log-likelihood, the anchor fixed."""
    w = [[0.0] * n for _ in range(n)]
    for i, j, si, sj in results:
        w[i][j] += si
        w[j][i] += sj
    for i in range(n):
        for j in range(n):
            if i != j and w[i][j] + w[j][i] > 0:
                w[i][j] += PRIOR_TIES / 2
    gamma = [1.0] * n
    for _ in range(200000):
        new = []
        for i in range(n):
            wins = sum(w[i][j] for j in range(n) if j != i)
            denom = sum((w[i][j] + w[j][i]) / (gamma[i] + gamma[j]) for j in range(n) if j != i)
            new.append(wins / denom)
        new = [g / new[anchor] for g in new]
        change = max(abs(math.log(a / b)) for a, b in zip(new, gamma))
        gamma = new
        if change < 1e-13:
            break
    theta = [math.log(g) for g in gamma]

    def loglik(t: list[float]) -> float:
        total = 0.0
        for i in range(n):
            for j in range(n):
                if i != j and w[i][j]:
                    total += w[i][j] * -math.log1p(math.exp(-(t[i] - t[j])))
        return total

    free = [k for k in range(n) if k != anchor]
    h = 1e-4
    m = len(free)
    hess = np.zeros((m, m))
    for a, ka in enumerate(free):
        for b, kb in enumerate(free):

            def at(da: float, db: float) -> float:
                t = list(theta)
                t[ka] += da
                t[kb] += db
                return loglik(t)

            hess[a, b] = (at(h, h) - at(h, -h) - at(-h, h) + at(-h, -h)) / (4 * h * h)
    cov = np.linalg.inv(-hess)
    se = [0.0] * n
    for a, k in enumerate(free):
        se[k] = math.sqrt(cov[a, a])
    return theta, se


@given(
    st.integers(2, 5).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(
                st.tuples(st.integers(1, 300), st.integers(0, 300), st.integers(0, 20)),
                min_size=n * (n - 1) // 2,
                max_size=n * (n - 1) // 2,
            ),
            st.integers(0, n - 1),
        )
    )
)
def test_bradley_terry_matches_the_slow_reference(case: tuple[int, list[tuple[int, int, int]], int]) -> None:
    n, scores, anchor = case
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    results = [(i, j, wi + 0.5 * t, wj + 0.5 * t) for (i, j), (wi, wj, t) in zip(pairs, scores)]
    theta, se = bradley_terry([str(k) for k in range(n)], results, anchor)
    ref_theta, ref_se = _reference(n, results, anchor)
    assert theta[anchor] == 0 and se[anchor] == 0
    np.testing.assert_allclose(theta, ref_theta, atol=1e-5)
    np.testing.assert_allclose(se, ref_se, rtol=1e-3, atol=1e-6)


def test_two_agents_closed_form() -> None:
    # 600 wins, 380 losses, 20 ties: score 610 of 1000, plus one virtual tie
    theta, se = bradley_terry(["a", "b"], [(0, 1, 610.0, 390.0)], anchor=1)
    p = 610.5 / 1001
    assert theta[0] == pytest.approx(math.log(p / (1 - p)), abs=1e-12)
    assert se[0] == pytest.approx(1 / math.sqrt(1001 * p * (1 - p)), rel=1e-9)
    assert elo_scale() * theta[0] == pytest.approx(400 * math.log10(610.5 / 390.5))


def test_a_clean_sweep_stays_finite_and_disconnected_agents_are_refused() -> None:
    theta, se = bradley_terry(["greedy", "random"], [(0, 1, 2000.0, 0.0)])
    assert math.isfinite(theta[1]) and theta[1] < -7 and math.isfinite(se[1])
    with pytest.raises(ValueError, match="not all connected"):
        bradley_terry(["a", "b", "c", "d"], [(0, 1, 5.0, 5.0), (2, 3, 5.0, 5.0)])
    with pytest.raises(ValueError, match="two different agents"):
        bradley_terry(["a", "b"], [(0, 0, 1.0, 1.0)])


def _match(first: str, second: str, wins: int, losses: int, ties: int) -> Match:
    n = wins + losses + ties
    margin = np.array([5] * wins + [-5] * losses + [0] * ties, np.int32)
    return Match(first, second, wins, losses, ties, margin, np.full(n, 200, np.int32), 200 - margin)


def test_tournament_ratings_standings_and_summary() -> None:
    result = TournamentResult(
        agents=("heuristic", "greedy", "random"),
        matches=[
            _match("heuristic", "greedy", 597, 383, 20),
            _match("heuristic", "random", 1000, 0, 0),
            _match("greedy", "random", 999, 1, 0),
        ],
        seconds_per_move={"heuristic": 1e-5, "greedy": 5e-6, "random": 4e-6},
        seed=1,
        games=1000,
    )
    ratings = {r.agent: r for r in result.ratings()}
    assert ratings["greedy"].rating == 1500 and ratings["greedy"].low == ratings["greedy"].high == 1500
    h = ratings["heuristic"]
    assert 1550 < h.rating < 1600 and h.low < h.rating < h.high
    assert h.games == 2000 and h.win_rate == pytest.approx((597 + 10 + 1000) / 2000)
    assert [r.agent for r in result.standings()] == ["heuristic", "greedy", "random"]
    summary = result.summary()
    assert summary["anchor"] == "greedy"
    assert [s["agent"] for s in summary["standings"]] == ["heuristic", "greedy", "random"]
    assert summary["pairings"][0]["wins"] == 597 and summary["standings"][0]["rating"] == h.rating

    from rich.console import Console

    console = Console(width=80, record=True, color_system=None)
    for table in tournament_tables(result):
        console.print(table)
    text = console.export_text()
    assert "Standings: Bradley-Terry rating, greedy = 1500" in text
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
