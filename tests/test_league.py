"""VectorEnv's league (issue 65): the scorer's input rows in the observation, a weighted
pool that changes between steps, the drawn opponents in info."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gymnasium")

import qwirkle_core as qc  # noqa: E402
from qwirkle_core.env import VectorEnv  # noqa: E402
from qwirkle_core.env.movelist import INPUT_NAMES, move_list, scorer_inputs  # noqa: E402


def test_move_inputs_are_the_net_agents_input_rows_whatever_the_threads() -> None:
    """VectorEnv(scorer_inputs=True)'s move_inputs beside qwirkle_core.Game of the same
    seeds: the rows scorer_inputs (the net agent's, checked against a naive reference
    in test_net) gives, zeros past the list; the same with two threads."""
    n = 128
    one = VectorEnv(n, players=3, window=118, actions="moves", copy=True, scorer_inputs=True)
    two = VectorEnv(n, players=3, window=118, actions="moves", copy=True, scorer_inputs=True, threads=2)
    assert one.single_observation_space["move_inputs"].shape == (128, len(INPUT_NAMES))
    obs, info = one.reset(seed=9)
    obs2, _ = two.reset(seed=9)
    watched = range(0, n, 16)
    games = {i: qc.Game(players=3, seed=int(info["game_seed"][i])) for i in watched}
    checked = 0
    for _ in range(90):
        np.testing.assert_array_equal(obs["move_inputs"], obs2["move_inputs"])
        pending = one.state.pending.astype(bool)
        for i, game in games.items():
            if pending[i]:
                assert not obs["move_inputs"][i].any()
                continue
            x, moves = scorer_inputs(game)
            np.testing.assert_array_equal(obs["move_inputs"][i, : len(moves)], x.astype(np.float32))
            assert not obs["move_inputs"][i, len(moves) :].any()
            checked += 1
        actions = one.sample_actions()
        obs, _, _, _, info = one.step(actions)
        obs2, *_ = two.step(actions)
        for i in watched:
            if pending[i]:
                games[i] = qc.Game(players=3, seed=int(info["game_seed"][i]))
            else:
                games[i].play(move_list(games[i])[2][actions[i]])
    assert checked > 500
    with pytest.raises(ValueError, match="scorer_inputs takes actions='moves'"):
        VectorEnv(2, opponents=["greedy"], scorer_inputs=True)


def first_episodes(envs: VectorEnv, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Play listed move 0 until every env finished its first game: (final scores int[N,
    P], the opponents' labels of that game)."""
    envs.reset(seed=seed)
    finals = np.full((envs.num_envs, 2), -1)
    labels = np.full(envs.num_envs, "", object)
    done = np.zeros(envs.num_envs, bool)
    for _ in range(200):
        _, _, term, trunc, info = envs.step(np.zeros(envs.num_envs, np.int64))
        ended = (term | trunc) & ~done
        if not ended.any():
            continue
        finals[ended] = info["final_scores"][ended]
        labels[ended] = info["opponents"][ended]
        done |= ended
        if done.all():
            return finals, labels
    raise AssertionError("games did not end")


def test_a_pooled_env_plays_the_game_of_the_opponent_it_names() -> None:
    """Each env of a weighted pool plays exactly the game a VectorEnv with that single
    opponent plays from the same seed (the label in info is who played), and the draws
    follow the weights."""
    n = 24
    pooled = VectorEnv(n, players=2, window=118, actions="moves", pool=["random", "greedy"], pool_weights=[1, 3])
    finals, labels = first_episodes(pooled, seed=31)
    assert set(labels) == {"random", "greedy"}
    for name in ("random", "greedy"):
        alone = VectorEnv(n, window=118, actions="moves", opponents=[name])
        expected, names = first_episodes(alone, seed=31)
        assert set(names) == {name}
        mine = labels == name
        np.testing.assert_array_equal(finals[mine], expected[mine])
    many = VectorEnv(2000, players=2, window=40, actions="moves", pool=["random", "greedy"], pool_weights=[1, 3])
    _, info = many.reset(seed=2)
    share = np.mean(info["opponents"] == "greedy")
    assert 0.72 < share < 0.78  # 0.75, four standard errors either side
    assert [(label, round(p, 3)) for label, p in many.pool] == [("random", 0.25), ("greedy", 0.75)]


def test_the_pool_changes_between_steps_and_live_games_keep_their_opponents() -> None:
    envs = VectorEnv(64, players=2, window=40, actions="moves", pool=["random"])
    envs.reset(seed=4)
    envs.set_pool(["greedy", "heuristic"], weights=[1, 0])
    _, _, term, trunc, info = envs.step(np.zeros(64, np.int64))
    assert set(info["opponents"]) == {"random"}  # the games in play keep theirs
    seen: set[str] = set()
    for _ in range(80):
        _, _, term, trunc, info = envs.step(envs.sample_actions())
        np.testing.assert_array_equal(info["autoreset"], term | trunc)
        seen |= set(info["opponents"][~envs.state.pending.astype(bool)])
    assert "greedy" in seen and "heuristic" not in seen
    envs.add_opponent("static", weight=1.0)  # a kernel that plays static from now on
    assert [label for label, _ in envs.pool] == ["greedy", "heuristic", "static"]
    for _ in range(120):
        _, _, _, _, info = envs.step(envs.sample_actions())
        seen |= set(info["opponents"])
    assert "static" in seen and "heuristic" not in seen
    before = envs.pool
    with pytest.raises(ValueError, match="weights"):
        envs.set_pool(["greedy"], weights=[-1])
    with pytest.raises(qc.AgentError):
        envs.add_opponent("nonsense")
    assert envs.pool == before
    with pytest.raises(ValueError, match="pool="):
        VectorEnv(2, opponents=["greedy"], actions="moves").add_opponent("greedy")
    with pytest.raises(ValueError, match="pool_weights takes a pool"):
        VectorEnv(2, opponents=["greedy"], actions="moves", pool_weights=[1])
    fixed = VectorEnv(4, opponents=["greedy", "random"], actions="moves", window=40)
    assert set(fixed.reset(seed=1)[1]["opponents"]) == {"greedy,random"}
