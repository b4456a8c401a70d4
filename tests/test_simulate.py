"""The batch simulator: reproducibility, replays, agent behaviour, summaries, CLI."""

import math

import numpy as np
import pytest

import qwirkle_core as qc
from qwirkle_core import cli


@pytest.fixture(scope="module")
def batch():
    return qc.simulate(300, agents=("greedy", "random"), seed=7, threads=1)


def test_threads_do_not_change_results(batch):
    other = qc.simulate(300, agents=("greedy", "random"), seed=7, threads=2)
    for name in ("scores", "winner", "turns", "tiles_placed", "qwirkles", "starter", "seeds"):
        np.testing.assert_array_equal(getattr(batch, name), getattr(other, name), err_msg=name)


def test_seed_changes_results(batch):
    other = qc.simulate(300, agents=("greedy", "random"), seed=8, threads=1)
    assert not np.array_equal(batch.scores, other.scores)


def test_result_arrays_are_consistent(batch):
    n = batch.games
    assert batch.scores.shape == (n, 2) and batch.qwirkles.shape == (n, 2)
    assert len(set(batch.seeds.tolist())) == n
    # Winner is the unique best score, -1 on a tie.
    best = batch.scores.max(axis=1)
    unique = (batch.scores == best[:, None]).sum(axis=1) == 1
    expected = np.where(unique, batch.scores.argmax(axis=1), -1)
    np.testing.assert_array_equal(batch.winner, expected)
    assert not batch.truncated.any()
    assert (batch.tiles_placed <= 108).all() and (batch.tiles_placed >= 90).all()


@pytest.mark.parametrize("i", [0, 1, 123, 299])
def test_game_replays_alone(batch, i):
    record = qc.play_game(("greedy", "random"), seed=int(batch.seeds[i]))
    assert tuple(record.final_scores) == tuple(batch.scores[i])
    assert len(record.actions) == batch.turns[i]
    # The record's actions through a plain Game reproduce every score, draws included.
    game = qc.replay(record)
    assert game.scores == tuple(batch.scores[i])
    assert game.winner == batch.winner[i]
    assert game.qwirkles == tuple(batch.qwirkles[i])


def test_greedy_always_plays_a_best_move():
    record = qc.play_game(("greedy", "greedy"), seed=11)
    g = qc.Game(seed=11)
    checked = 0
    for action in record.actions:
        if action.move.kind == "place":
            best = max(m.score for m in g.legal_moves())
            assert action.points == best
            checked += 1
        else:
            assert g.legal_moves() == []
        g.play(action.move)
    assert checked > 20


def test_greedy_exchanges_whole_hand_when_stuck():
    # A single red circle on the board and a hand with no red and no circle: nothing fits.
    hand = [qc.tile("blue", "square")] * 2 + [qc.tile("green", "star")] * 2 + [qc.tile("yellow", "cross")] * 2
    g = qc.Game.from_position(board={(0, 0): qc.tile("red", "circle")}, hands=[hand, [1]], bag=list(range(10, 20)), seed=3)
    assert g.legal_moves() == []
    action = g.play_agent("greedy")
    assert action.move.kind == "exchange" and sorted(action.move.tiles) == sorted(hand)
    assert g.bag_size == 10 and g.current_player == 1


def test_random_agent_is_uniform_over_legal_moves():
    # A small position: a red circle, a hand of two reds, a blue circle and a green star.
    board = {(0, 0): qc.tile("red", "circle")}
    hand = [qc.tile("red", "square"), qc.tile("red", "diamond"), qc.tile("blue", "circle"), qc.tile("green", "star")]
    g0 = qc.Game.from_position(board=board, hands=[hand, [0]], bag=[5, 6, 7, 8], seed=0)
    legal = g0.legal_moves()
    k = len(legal)
    assert 10 <= k <= 60
    counts = {m: 0 for m in legal}
    samples = 60 * k
    for s in range(samples):
        g = g0.copy()
        g._rng[1] = np.uint64(s * 0x9E3779B97F4A7C15 % 2**64)  # a fresh agents' stream
        counts[g.play_agent("random").move] += 1
    assert len(counts) == k and min(counts.values()) > 0
    expected = samples / k
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    # 99.9% quantile of chi-square with k-1 dof, Wilson-Hilferty approximation.
    df = k - 1
    limit = df * (1 - 2 / (9 * df) + 3.09 * math.sqrt(2 / (9 * df))) ** 3
    assert chi2 < limit


def test_summary_matches_direct_computation(batch):
    rates = batch.win_rates()
    for p in range(2):
        wins = int(np.sum(batch.winner == p))
        assert rates[p][0] == pytest.approx(wins / batch.games)
        assert rates[p][1] < rates[p][0] < rates[p][2] or wins in (0, batch.games)
    np.testing.assert_allclose(batch.mean_scores(), batch.scores.mean(axis=0))
    np.testing.assert_allclose(batch.score_std(), batch.scores.std(axis=0, ddof=1))
    assert batch.mean_turns() == pytest.approx(batch.turns.mean())
    fp = batch.first_player_advantage()
    assert fp["win_rate"] == pytest.approx(np.mean(batch.winner == batch.starter))
    start = batch.scores[np.arange(batch.games), batch.starter.astype(int)]
    other = batch.scores[np.arange(batch.games), 1 - batch.starter.astype(int)]
    assert fp["score_margin"] == pytest.approx(np.mean(start - other))
    assert batch.summary()["games"] == 300


def test_wilson_interval_known_value():
    from qwirkle_core.simulate import wilson_interval

    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)


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


def test_interrupt_keeps_finished_games():
    calls = []

    def stop(done, total):
        calls.append(done)
        raise KeyboardInterrupt

    r = qc.simulate(100_000, seed=2, threads=1, progress=stop)
    assert r.interrupted and r.games == calls[0] < 100_000
    assert (r.scores.sum(axis=1) > 0).all()


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"games": 0}, ValueError),
        ({"games": 10, "agents": ("greedy", "nobody")}, ValueError),
        ({"games": 10, "agents": ("greedy",)}, ValueError),
        ({"games": 10, "agents": ["greedy"] * 7}, ValueError),
        ({"games": 10, "threads": 0}, ValueError),
        ({"games": "10"}, TypeError),
        ({"games": 10, "rules": qc.Rules(players=3)}, ValueError),
    ],
)
def test_simulate_rejects_bad_arguments(kwargs, error):
    with pytest.raises(error):
        qc.simulate(**kwargs)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["simulate", "--games", "0"], "--games"),
        (["simulate", "--games", "ten"], "--games"),
        (["simulate", "--agents", "greedy,wizard"], "unknown agent 'wizard'"),
        (["simulate", "--agents", "greedy"], "2 to 6 agents"),
        (["simulate", "--agents", ",".join(["greedy"] * 7)], "2 to 6 agents"),
        (["simulate", "--out", "/no/such/folder/r.parquet"], "does not exist"),
        (["simulate", "--out", "results.txt"], ".parquet or .csv"),
        (["simulate", "--seed", "-1"], "seed"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_cli_rejects_bad_arguments(argv, message, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.count("\n") <= 3


def test_cli_simulate_writes_rows(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    def read_csv(path):  # seeds exceed int64, so say the column is uint64
        return pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(column_types={"seed": pa.uint64()}))

    for name, read in (("r.parquet", pq.read_table), ("r.csv", read_csv)):
        out = tmp_path / name
        assert cli.main(["simulate", "--games", "40", "--seed", "5", "--threads", "1", "--no-progress", "--out", str(out)]) == 0
        table = read(str(out))
        assert table.num_rows == 40
        expected = qc.simulate(40, seed=5, threads=1)
        np.testing.assert_array_equal(np.asarray(table.column("score_0")), expected.scores[:, 0])
        np.testing.assert_array_equal(np.asarray(table.column("seed")).astype(np.uint64), expected.seeds)
    printed = capsys.readouterr().out
    assert "win rate" in printed and "first player" in printed


def test_kernel_cache_is_dropped_when_any_kernel_source_changes(tmp_path):
    from qwirkle_core._kernels._jit import drop_stale_cache

    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    cached = tmp_path / "__pycache__" / "a.f-1.py311.nbi"

    def compile_something():
        cached.parent.mkdir(exist_ok=True)
        cached.write_bytes(b"index")

    drop_stale_cache(tmp_path)
    compile_something()
    drop_stale_cache(tmp_path)  # nothing changed: the cache stays
    assert cached.exists()
    (tmp_path / "b.py").write_text("y = 3\n")  # a callee in another file changed
    drop_stale_cache(tmp_path)
    assert not cached.exists()
    compile_something()
    drop_stale_cache(tmp_path)
    assert cached.exists()
