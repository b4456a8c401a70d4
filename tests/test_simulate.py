"""simulate.py: the batch simulator (reproducibility, ranges, replays, summaries,
rows streamed to files, interruption) and play_game."""

from __future__ import annotations

import time

import numpy as np
import pytest

import qwirkle_core as qc
from qwirkle_core.batch.rows import read_metadata
from qwirkle_core.batch.simulate import ROW_BYTES, row_bytes
from strategies import assert_same_rows


@pytest.fixture(scope="module")
def batch():
    return qc.simulate(300, agents=("greedy", "random"), seed=7, threads=1)


def test_threads_do_not_change_results(batch):
    other = qc.simulate(300, agents=("greedy", "random"), seed=7, threads=2)
    for name in ("scores", "winner", "turns", "tiles_placed", "qwirkles", "starter", "seeds", "truncated"):
        np.testing.assert_array_equal(getattr(batch, name), getattr(other, name), err_msg=name)


def test_any_split_into_ranges_gives_the_same_rows(batch):
    parts = [
        qc.simulate(n, agents=("greedy", "random"), seed=7, start=s, threads=1)
        for s, n in ((0, 17), (17, 200), (217, 83))
    ]
    assert [p.start for p in parts] == [0, 17, 217]
    assert_same_rows(qc.GameRows.concat([p.rows for p in parts]), batch.rows)
    merged = parts[0].stats.merge(parts[1].stats).merge(parts[2].stats)
    assert merged.to_dict() == batch.stats.to_dict()


def test_seed_changes_results(batch):
    other = qc.simulate(300, agents=("greedy", "random"), seed=8, threads=1)
    assert not np.array_equal(batch.scores, other.scores)


def test_result_arrays_are_consistent(batch):
    n = batch.games
    assert batch.scores.shape == (n, 2) and batch.qwirkles.shape == (n, 2)
    assert batch.rows.game.tolist() == list(range(300))
    assert len(set(batch.seeds.tolist())) == n
    # Winner is the unique best score, -1 on a tie.
    best = batch.scores.max(axis=1)
    unique = (batch.scores == best[:, None]).sum(axis=1) == 1
    expected = np.where(unique, batch.scores.argmax(axis=1), -1)
    np.testing.assert_array_equal(batch.winner, expected)
    assert not batch.truncated.any()
    assert (batch.tiles_placed <= 108).all() and (batch.tiles_placed >= 90).all()
    assert batch.agents == ("greedy", "random") and batch.players == 2 and not batch.interrupted


@pytest.mark.parametrize("i", [0, 1, 123, 299])
def test_game_replays_alone(batch, i):
    record = qc.play_game(("greedy", "random"), seed=int(batch.seeds[i]))
    assert tuple(record.final_scores) == tuple(batch.scores[i])
    assert len(record.actions) == batch.turns[i]
    assert record.agents == ["greedy", "random"]
    # The record's actions through a plain Game reproduce every score, draws included.
    game = qc.replay(record)
    assert game.scores == tuple(batch.scores[i])
    assert game.winner == batch.winner[i]
    assert game.qwirkles == tuple(batch.qwirkles[i])
    assert game.starting_player == batch.starter[i]


def test_summary_matches_direct_computation(batch):
    rates = batch.win_rates()
    for p in range(2):
        wins = int(np.sum(batch.winner == p))
        assert rates[p][0] == pytest.approx(wins / batch.games)
        assert rates[p][1] < rates[p][0] < rates[p][2] or wins in (0, batch.games)
    np.testing.assert_allclose(batch.mean_scores(), batch.scores.mean(axis=0))
    np.testing.assert_allclose(batch.score_std(), batch.scores.std(axis=0, ddof=1))
    np.testing.assert_allclose(batch.mean_qwirkles(), batch.qwirkles.mean(axis=0))
    assert batch.mean_turns() == pytest.approx(batch.turns.mean())
    assert batch.tie_rate == pytest.approx(np.mean(batch.winner == -1))
    fp = batch.first_player_advantage()
    assert fp["win_rate"] == pytest.approx(np.mean(batch.winner == batch.starter))
    start = batch.scores[np.arange(batch.games), batch.starter.astype(int)]
    other = batch.scores[np.arange(batch.games), 1 - batch.starter.astype(int)]
    assert fp["score_margin"] == pytest.approx(np.mean(start - other))
    summary = batch.summary()
    assert summary["games"] == 300 and summary["agents"] == ["greedy", "random"] and summary["seed"] == 7
    assert summary["mean_scores"] == batch.mean_scores().tolist()
    assert "games=300" in repr(batch)


def test_greedy_beats_random():
    r = qc.simulate(2000, agents=("greedy", "random"), seed=3)
    assert r.win_rates()[0][0] > 0.95
    assert r.mean_scores()[0] > r.mean_scores()[1] + 50


def test_three_to_six_players_and_any_line_opening():
    for players in (3, 6):
        r = qc.simulate(50, agents=["greedy"] * players, seed=1, threads=1)
        assert r.scores.shape == (50, players)
        assert set(np.unique(r.starter)) <= set(range(players))
    r = qc.simulate(50, agents=("random", "greedy"), seed=1, rules=qc.Rules(opening="any_line"))
    assert (r.starter == 0).all()
    assert r.rules == qc.Rules(opening="any_line")
    assert qc.simulate(5, agents="greedy,random,greedy", seed=1).players == 3


def test_progress_and_time_exclude_the_kernel_preparation():
    calls = []
    t0 = time.perf_counter()
    r = qc.simulate(
        500, seed=2, threads=1, progress=lambda done, total: calls.append((done, total, time.perf_counter()))
    )
    t1 = time.perf_counter()
    assert calls[0][:2] == (0, 500) and calls[-1][:2] == (500, 500)
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)
    assert r.compile_seconds >= 0 and r.elapsed > 0
    assert r.elapsed <= t1 - calls[0][2] + 1e-3  # the clock starts once the kernels are ready
    assert r.compile_seconds + r.elapsed <= t1 - t0
    assert r.games_per_second == pytest.approx(500 / r.elapsed)


def test_interrupt_keeps_finished_games(tmp_path):
    calls = []

    def stop(done, total):
        calls.append(done)
        if done:
            raise KeyboardInterrupt

    path = tmp_path / "r.parquet"
    r = qc.simulate(100_000, seed=2, threads=1, progress=stop, out=path)
    assert r.interrupted and r.games == calls[-1] < 100_000 and calls[0] == 0
    assert (r.scores.sum(axis=1) > 0).all()
    assert r.path == path and len(qc.simulate(1, seed=2).rows) == 1
    assert_same_rows(r.rows, qc.simulate(r.games, seed=2, threads=1).rows)
    meta = read_metadata(path)
    assert meta["games"] == 100_000 and meta["start"] == 0 and meta["seed"] == 2


def test_rows_streamed_to_a_file_are_read_back_lazily(tmp_path, batch):
    for name in ("r.parquet", "r.csv"):
        r = qc.simulate(300, agents=("greedy", "random"), seed=7, threads=1, out=tmp_path / name, keep_rows=False)
        assert r._rows is None and r.path == tmp_path / name
        assert r.stats.to_dict() == batch.stats.to_dict()
        assert_same_rows(r.rows, batch.rows)
    summary_only = qc.simulate(30, seed=7, keep_rows=False)
    assert summary_only.games == 30 and summary_only.path is None
    with pytest.raises(ValueError, match="kept no per-game rows"):
        summary_only.rows


def test_parquet_files_describe_their_batch(tmp_path):
    path = tmp_path / "r.parquet"
    qc.simulate(
        20, agents=("greedy", "heuristic:dup=1"), seed=5, start=40, out=path, rules=qc.Rules(opening="any_line")
    )
    meta = read_metadata(path)
    assert meta["agents"] == ["greedy", "heuristic:dup=1"]
    assert meta["rules"] == {"players": 2, "opening": "any_line"}
    assert (meta["seed"], meta["start"], meta["games"], meta["version"]) == (5, 40, 20, qc.__version__)
    assert meta["created"][:2] == "20"


def test_a_failed_write_keeps_the_rows(tmp_path):
    """The destination becomes a folder while the games run: the file cannot be put in
    place, the result says why, and the rows are still there."""
    path = tmp_path / "r.parquet"

    def block(done, total):
        if done and not path.exists():
            path.mkdir()
            (path / "x").write_text("x")

    r = qc.simulate(3000, seed=1, threads=1, out=path, progress=block)
    assert r.path is None and r.write_error is not None and str(path) in r.write_error
    assert r.games == 3000 and len(r.rows) == 3000
    assert [p.name for p in tmp_path.iterdir()] == ["r.parquet"]  # no temporary file left


def test_huge_batches_need_a_file_or_no_rows():
    # game, seed, scores and qwirkles per seat, winner, starter, turns, tiles_placed, truncated
    assert row_bytes(2) == ROW_BYTES == 8 + 8 + 2 * (4 + 2) + 1 + 1 + 4 + 2 + 1
    assert row_bytes(4) == ROW_BYTES + 2 * 6
    with pytest.raises(
        ValueError, match=r"1,000,000,000 games\) would keep 34\.5 GiB .* pass out=.* or keep_rows=False"
    ):
        qc.simulate(10**9)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"games": 0}, ValueError),
        ({"games": 2.5e8}, TypeError),
        ({"games": 10, "agents": ("greedy", "nobody")}, ValueError),
        ({"games": 10, "agents": ("greedy",)}, ValueError),
        ({"games": 10, "agents": ["greedy"] * 7}, ValueError),
        ({"games": 10, "threads": 0}, ValueError),
        ({"games": 10, "threads": 0, "out": "r.parquet"}, ValueError),
        ({"games": 10, "threads": 1.0, "out": "r.csv"}, TypeError),
        ({"games": "10"}, TypeError),
        ({"games": 10, "rules": qc.Rules(players=3)}, ValueError),
        ({"games": 10, "seed": -1}, ValueError),
        ({"games": 10, "seed": 1.0}, TypeError),
        ({"games": 10, "start": -1}, ValueError),
        ({"games": 10, "start": 2**62}, ValueError),
        ({"games": 10, "progress": "bar"}, TypeError),
        ({"games": 10, "keep_rows": "yes"}, TypeError),
        ({"games": 10, "out": "r.txt"}, ValueError),
        ({"games": 10, "out": "/no/such/folder/r.csv"}, OSError),
    ],
)
def test_simulate_rejects_bad_arguments(kwargs, error, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(error):
        qc.simulate(**kwargs)
    assert list(tmp_path.iterdir()) == []


def test_play_game_checks_its_arguments():
    with pytest.raises(ValueError):
        qc.play_game(("greedy", "wizard"))
    with pytest.raises(TypeError):
        qc.play_game(seed=1.5)
    with pytest.raises(ValueError, match="disagrees"):
        qc.play_game(("greedy", "greedy"), rules=qc.Rules(players=3))


def test_the_package_exports_functions_not_their_modules():
    """Importing the submodules (as tournament.py does) must not hide the functions."""
    import subprocess
    import sys

    code = (
        "import qwirkle_core as qc\n"
        "qc.tournament\n"
        "import qwirkle_core.batch.simulate, qwirkle_core.batch.tournament\n"
        "from qwirkle_core.batch.simulate import ROW_BYTES, row_bytes\n"
        "assert qc.simulate.__name__ == 'simulate' and callable(qc.simulate), qc.simulate\n"
        "assert qc.tournament.__name__ == 'tournament' and callable(qc.tournament), qc.tournament\n"
        "print(qc.simulate(3, seed=1, threads=1).games)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout == "3\n", out.stderr
