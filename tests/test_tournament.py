"""tournament.py: round robins on shared deals from both seats, time per move, and
interruption (only finished deals, both seats of each, are kept)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import qwirkle_core as qc


def test_tournament_swaps_seats_on_the_same_deals():
    calls = []
    t = qc.tournament(
        ["greedy", "random"],
        games=40,
        seed=1,
        timing_games=4,
        timing_seconds=0,
        progress=lambda d, n: calls.append((d, n)),
    )
    (m,) = t.matches
    assert (m.first, m.second) == ("greedy", "random")
    assert m.games == 40 and m.wins > 35 and m.wins + m.losses + m.ties == 40
    assert m.margin.mean() == pytest.approx((m.scores_first - m.scores_second).mean())
    assert set(t.seconds_per_move) == {"greedy", "random"} and all(s > 0 for s in t.seconds_per_move.values())
    assert not t.interrupted and t.games == 40 and t.seed == 1 and t.agents == ("greedy", "random")
    assert calls[-1] == (40, 40)
    # The deals are games 0..19 of the batch seed 1, played once from each seat.
    ab = qc.simulate(20, agents=("greedy", "random"), seed=1, threads=1)
    ba = qc.simulate(20, agents=("random", "greedy"), seed=1, threads=1)
    np.testing.assert_array_equal(m.scores_first, np.concatenate([ab.scores[:, 0], ba.scores[:, 1]]))
    np.testing.assert_array_equal(m.scores_second, np.concatenate([ab.scores[:, 1], ba.scores[:, 0]]))
    np.testing.assert_array_equal(
        np.sort(t.scores("random")), np.sort(np.concatenate([ab.scores[:, 1], ba.scores[:, 0]]))
    )
    low, high = m.interval()
    assert low <= m.win_rate <= high


def test_every_pair_plays():
    t = qc.tournament("greedy,random,heuristic:reply=0", games=4, seed=2, timing_games=1, timing_seconds=0)
    assert [(m.first, m.second) for m in t.matches] == [
        ("greedy", "random"),
        ("greedy", "heuristic:reply=0"),
        ("random", "heuristic:reply=0"),
    ]
    assert all(m.games == 4 for m in t.matches)
    assert len(t.scores("greedy")) == 8 and len(t.scores("nobody")) == 0


def test_an_interruption_keeps_only_finished_deals():
    calls = []

    def stop(done, total):
        calls.append(done)
        if len(calls) == 2:
            raise KeyboardInterrupt

    t = qc.tournament(["greedy", "random"], games=2_000_000, seed=3, progress=stop)
    assert t.interrupted and t.seconds_per_move == {}
    (m,) = t.matches
    assert m.games == calls[-1] and m.games % 2 == 0 and 0 < m.games < 2_000_000
    deals = m.games // 2
    ab = qc.simulate(deals, agents=("greedy", "random"), seed=3, threads=1)
    np.testing.assert_array_equal(m.scores_first[:deals], ab.scores[:, 0])  # both seats of each finished deal


def test_rounds_of_slow_games_still_fill_every_thread(monkeypatch):
    """Rounds shrink to about a second of games (so Ctrl-C is taken soon), but never
    below one deal per thread: a round of one deal plays each seat's game alone, and
    the other threads would idle (slow agents such as search)."""
    tm = importlib.import_module("qwirkle_core.batch.tournament")  # qc.tournament is the function
    rounds = []

    def spy(games, *args, **kwargs):
        rounds.append((games, kwargs["threads"]))
        return qc.simulate(games, *args, **kwargs)

    monkeypatch.setattr(tm, "simulate", spy)
    monkeypatch.setattr(tm, "_DEAL_SECONDS", 1e-9)  # as if every deal were very slow
    t = qc.tournament(["greedy", "random"], games=2 * 70, seed=4, threads=2, timing_games=1, timing_seconds=0)
    played = [n for n, threads in rounds if threads == 2]
    assert played == [64, 64] + [2, 2] * 3
    np.testing.assert_array_equal(
        t.matches[0].scores_first[:70], qc.simulate(70, agents=("greedy", "random"), seed=4, threads=1).scores[:, 0]
    )


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"agents": ["greedy"]}, ValueError, "at least 2 agents"),
        ({"agents": ["greedy", "greedy"]}, ValueError, "each agent may appear once"),
        ({"agents": ["greedy", "wizard"]}, qc.AgentError, "unknown agent 'wizard'"),
        ({"games": 3}, ValueError, "games must be even"),
        ({"games": 1}, ValueError, "games must be 2 to"),
        ({"games": 2.0}, TypeError, "games must be an int"),
        ({"seed": -1}, ValueError, "seed must be an int 0 .. 2"),
        ({"timing_games": 0}, ValueError, "timing_games must be 1 to 4,096"),
        ({"threads": 0}, ValueError, "threads must be at least 1"),
        ({"timing_seconds": float("nan")}, ValueError, "timing_seconds must be a finite number"),
        ({"timing_seconds": float("inf")}, ValueError, "timing_seconds must be a finite number"),
        ({"timing_seconds": -1}, ValueError, "timing_seconds must be 0 to 3600"),
        ({"timing_seconds": "1"}, TypeError, "timing_seconds must be a number"),
        ({"progress": "bar"}, TypeError, "progress must be a callable"),
    ],
)
def test_bad_arguments_are_refused(kwargs, error, message):
    args = {"agents": ["greedy", "random"], "games": 2, "timing_seconds": 0}
    args.update(kwargs)
    calls = []
    args.setdefault("progress", lambda done, total: calls.append(done))
    with pytest.raises(error, match=message):
        qc.tournament(**args)
    if "threads" not in kwargs:
        assert calls == []  # refused before any game


# -- time left from each pairing's measured cost (issue 67) ------------------------------------


def test_time_left_counts_each_pairing_at_its_measured_cost():
    """A cheap pairing first used to make the rest look as cheap ("left 0:00:01", then
    minutes more). Here each pairing is counted at its own cost per deal, the first round
    of a pairing (which may compile its kernels) left out once a later one is measured."""
    from qwirkle_core.batch.tournament import TimeLeft

    pairs = [("greedy", "random"), ("greedy", "mc"), ("random", "mc")]
    clock = TimeLeft(deals=100)
    clock.book(pairs[0], 10.0, 10)  # compiles: not the pairing's cost once another round is in
    assert clock.pair_cost(pairs[0]) == pytest.approx(1.0)
    clock.book(pairs[0], 0.9, 90)
    assert clock.pair_cost(pairs[0]) == pytest.approx(0.01)
    # greedy and random measured (half each), mc not yet: a lower bound
    assert clock.seconds_left(pairs, [100, 0, 0]) == (pytest.approx(100 * 0.005 + 100 * 0.005), True)
    clock.book(pairs[1], 5.0, 10)
    clock.book(pairs[1], 1.0, 10)  # 0.1 s per deal: mc's share is 0.1 - greedy's 0.005
    assert clock.agent_costs() == pytest.approx({"greedy": 0.005, "random": 0.005, "mc": 0.095})
    left, lower = clock.seconds_left(pairs, [100, 20, 0])
    assert not lower and left == pytest.approx(80 * 0.1 + 100 * (0.005 + 0.095))
    assert clock.seconds_left(pairs, [100, 100, 100]) == (0.0, False)


def test_a_tournament_reports_its_time_left_to_a_progress_that_takes_it():
    class Progress:
        def __init__(self) -> None:
            self.calls: list[tuple[int, int]] = []
            self.left: list[tuple[float, bool]] = []

        def __call__(self, done: int, total: int) -> None:
            self.calls.append((done, total))

        def time_left(self, seconds: float, lower_bound: bool) -> None:
            self.left.append((seconds, lower_bound))

    progress = Progress()
    r = qc.tournament(
        ["greedy", "random", "heuristic"], games=40, seed=3, threads=1, progress=progress, timing_seconds=0
    )
    assert len(progress.left) == len(progress.calls) > 0 and progress.calls[-1] == (120, 120)
    assert progress.left[0][1] is True  # heuristic not measured before its first pairing
    assert progress.left[-1] == (0.0, False)
    assert all(seconds >= 0 for seconds, _ in progress.left)
    plain = []
    assert (
        qc.tournament(["greedy", "random"], games=4, seed=3, threads=1, progress=lambda d, t: plain.append(d)).games
        == 4
    )
    assert plain[-1] == 4 and r.games == 40  # a plain callable f(done, total) still works
