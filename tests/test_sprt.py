"""The SPRT on paired games: its log-likelihood ratio against a naive computation,
its decisions, and the tournament that stops on them."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qwirkle_core as qc
from qwirkle_core.batch.sprt import pair_scores, sprt


def naive_llr(scores, elo0, elo1):
    """The GSPRT's normal approximation written out: the log of the ratio of two normal
    likelihoods of the pair scores' mean, under the expected scores of elo0 and elo1,
    with the sample variance of the pairs."""
    n = len(scores)
    mean = sum(scores) / n
    var = sum((x - mean) ** 2 for x in scores) / n
    s0 = 1 / (1 + 10 ** (-elo0 / 400))
    s1 = 1 / (1 + 10 ** (-elo1 / 400))
    # log N(mean; s1, var/n) - log N(mean; s0, var/n)
    return (-((mean - s1) ** 2) + (mean - s0) ** 2) / (2 * var / n)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=2, max_size=300),
    st.floats(-50, 50),
    st.floats(1, 60),
)
def test_llr_matches_the_naive_computation(scores, elo0, width):
    x = np.array(scores)
    if x.var() == 0:
        return
    r = sprt(x, elo0, elo0 + width)
    assert r.llr == pytest.approx(naive_llr(scores, elo0, elo0 + width), rel=1e-9, abs=1e-9)
    assert r.pairs == len(scores) and r.score == pytest.approx(x.mean())
    assert r.decision == ("H1" if r.llr >= r.upper else "H0" if r.llr <= r.lower else None)


def test_bounds_decisions_and_refusals():
    r = sprt(np.tile([1.0, 0.5], 50), 0, 10)  # pairs of 1 and 0.5: a clear edge
    assert r.decision == "H1" and r.upper == pytest.approx(math.log(19)) and r.lower == pytest.approx(-math.log(19))
    assert sprt(np.tile([0.0, 0.5], 50), 0, 10).decision == "H0"
    assert sprt(np.array([1.0]), 0, 10).decision is None  # too few pairs
    even = sprt(np.tile([0.25, 0.75], 10), -10, 10)
    assert even.llr == pytest.approx(0.0) and even.decision is None
    assert sprt(np.ones(50), 0, 5).decision == "H1"  # no variance: still decides
    for bad in ((10, 0), (0, 0), (0, float("nan"))):
        with pytest.raises(ValueError):
            sprt(np.ones(3), *bad)
    with pytest.raises(ValueError, match="0 .. 1"):
        sprt(np.array([1.5, 0.0]), 0, 5)


def test_pair_scores():
    np.testing.assert_array_equal(pair_scores([5, -3, 0, 2], [1, -1, 0, -4]), [1.0, 0.0, 0.5, 0.5])
    with pytest.raises(ValueError):
        pair_scores([1, 2], [1])


def test_a_tournament_stops_when_the_test_decides_and_reports_it():
    r = qc.tournament(["greedy", "random"], games=2000, seed=3, sprt=(0, 20), timing_seconds=0)
    m = r.matches[0]
    assert r.sprt is not None and r.sprt.decision == "H1"
    assert m.games < 2000 and m.games == 2 * r.sprt.pairs
    margins = m.margin
    half = m.games // 2
    expected = pair_scores(margins[:half], margins[half:])
    assert r.sprt.score == pytest.approx(expected.mean())
    with pytest.raises(ValueError, match="two agents"):
        qc.tournament(["greedy", "random", "heuristic"], games=4, sprt=(0, 20))
    with pytest.raises(ValueError, match="elo0 < elo1"):
        qc.tournament(["greedy", "random"], games=4, sprt=(20, 0))


def test_cli_sprt(capsys):
    from qwirkle_core.cli import main

    assert main(["tournament", "--agents", "greedy,random", "--games", "400", "--sprt", "0,20", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "SPRT elo0=0 elo1=20" in out and "H1 accepted" in out
    assert main(["tournament", "--agents", "greedy,random,heuristic", "--sprt", "0,20"]) == 2
    assert "exactly two agents" in capsys.readouterr().err
    assert main(["tournament", "--agents", "greedy,random", "--sprt", "5"]) == 2
