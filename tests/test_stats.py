"""stats.py: batch statistics that merge exactly, and the Wilson interval."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from qwirkle_core.batch.stats import BatchStats, wilson_interval


def test_wilson_interval_known_value():
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))


@st.composite
def rows(draw, players=None):
    """Per-game rows as simulate makes them (any values: the statistics are plain sums)."""
    players = players or draw(st.integers(2, 4))
    n = draw(st.integers(0, 30))

    def ints(lo, hi, shape):
        size = int(np.prod(shape))
        return np.array(draw(st.lists(st.integers(lo, hi), min_size=size, max_size=size)), np.int64).reshape(shape)

    return dict(
        scores=ints(0, 400, (n, players)).astype(np.int32),
        winner=ints(-1, players - 1, (n,)).astype(np.int8),
        starter=ints(0, players - 1, (n,)).astype(np.int8),
        turns=ints(1, 200, (n,)).astype(np.int32),
        tiles_placed=ints(0, 108, (n,)).astype(np.int16),
        qwirkles=ints(0, 5, (n, players)).astype(np.int16),
        truncated=ints(0, 1, (n,)).astype(bool),
    )


def concat(a, b):
    return {k: np.concatenate([a[k], b[k]]) for k in a}


@given(st.data())
def test_statistics_merge_exactly(data):
    players = data.draw(st.integers(2, 4))
    a, b = data.draw(rows(players)), data.draw(rows(players))
    merged = BatchStats.from_rows(**a).merge(BatchStats.from_rows(**b))
    whole = BatchStats.from_rows(**concat(a, b))
    assert json.dumps(merged.to_dict()) == json.dumps(whole.to_dict())
    assert BatchStats.from_dict(json.loads(json.dumps(whole.to_dict()))).to_dict() == whole.to_dict()
    assert BatchStats(players).merge(whole).to_dict() == whole.to_dict()


@given(rows())
def test_summaries_match_direct_computation(r):
    s = BatchStats.from_rows(**r)
    n, players = r["scores"].shape
    assert s.games == n and s.players == players
    if n == 0:
        assert math.isnan(s.tie_rate) and math.isnan(s.mean_turns()) and np.isnan(s.mean_scores()).all()
        assert all(math.isnan(x) for x in s.win_rates()[0]) and math.isnan(s.first_player_advantage()["win_rate"])
        return
    scores = r["scores"].astype(np.int64)
    for p, (rate, low, high) in enumerate(s.win_rates()):
        assert rate == pytest.approx(np.mean(r["winner"] == p)) and low <= rate <= high
    assert s.tie_rate == pytest.approx(np.mean((r["winner"] < 0) & ~r["truncated"]))
    np.testing.assert_allclose(s.mean_scores(), scores.mean(axis=0))
    if n > 1:
        np.testing.assert_allclose(s.score_std(), scores.std(axis=0, ddof=1), atol=1e-9)
    np.testing.assert_allclose(s.mean_qwirkles(), r["qwirkles"].mean(axis=0))
    assert s.mean_turns() == pytest.approx(r["turns"].mean())
    assert s.mean_tiles_placed() == pytest.approx(r["tiles_placed"].mean())
    assert s.truncated == int(r["truncated"].sum())
    fp = s.first_player_advantage()
    start = scores[np.arange(n), r["starter"].astype(int)]
    others = (scores.sum(axis=1) - start) / (players - 1)
    assert fp["win_rate"] == pytest.approx(np.mean(r["winner"] == r["starter"]))
    assert fp["score_margin"] == pytest.approx(np.mean(start - others))
    assert fp["fair"] == 1 / players and fp["low"] <= fp["win_rate"] <= fp["high"]


def test_merging_different_tables_is_refused():
    with pytest.raises(ValueError, match="cannot merge statistics of 2 and 3 players"):
        BatchStats(2).merge(BatchStats(3))
