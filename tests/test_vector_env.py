"""The batched environment (qwirkle_core.env.VectorEnv) against the single-game ones.

Masked random play in lock step: every env of a VectorEnv beside a raw_env (self-play)
or a QwirkleGymEnv (built-in opponents) dealt the same game, given the same actions;
each step's observation, mask, reward and end flags must be equal. The masks are also
checked against the naive reference's placements (tests/naive.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("gymnasium")

import naive  # noqa: E402
from qwirkle_core import IllegalMoveError  # noqa: E402
from qwirkle_core._kernels.vector import TURN_MOVES  # noqa: E402
from qwirkle_core.env import QwirkleGymEnv, VectorEnv, raw_env  # noqa: E402


def _flat(obs: dict, i: int) -> dict[str, np.ndarray]:
    return {**{k: v[i] for k, v in obs["observation"].items()}, "action_mask": obs["action_mask"][i]}


def _same(vec: dict[str, np.ndarray], one: dict, where: str) -> None:
    one = {**one["observation"], "action_mask": one["action_mask"]}
    for key, value in one.items():
        np.testing.assert_array_equal(vec[key], value, err_msg=f"{where}: {key}")


def lockstep_self_play(n: int, players: int, window: int, steps: int, seed: int) -> tuple[int, int]:
    """Masked random self-play of ``n`` envs beside ``n`` raw_envs; returns the games
    that ended and the tiles put down in turns of more placements than the kernel keeps
    (``TURN_MOVES``: generated again, then narrowed)."""
    envs = VectorEnv(n, players=players, window=window)
    obs, info = envs.reset(seed=seed)
    singles = [raw_env(players=players, window=window) for _ in range(n)]
    for i, e in enumerate(singles):
        e.reset(seed=int(info["game_seed"][i]))
    ended = big = 0
    for step in range(steps):
        actions = envs.sample_actions()
        pending = envs.state.pending.astype(bool).copy()
        big += int(np.sum((envs.state.nmoves > TURN_MOVES) & (actions < 6 * window * window) & ~pending))
        acting = [e.agent_selection for e in singles]
        for i, e in enumerate(singles):
            _same(_flat(obs, i), e.observe(e.agent_selection), f"step {step} env {i} (before)")
        obs, reward, term, trunc, info = envs.step(actions)
        for i, e in enumerate(singles):
            where = f"step {step} env {i}"
            if pending[i]:  # autoreset: a new game, reward 0
                assert reward[i] == 0 and not term[i] and not trunc[i], where
                e.reset(seed=int(info["game_seed"][i]))
                continue
            e.step(int(actions[i]))
            agent = acting[i]
            assert reward[i] == e.rewards[agent], where
            assert term[i] == e.terminations[agent] and trunc[i] == e.truncations[agent], where
            if term[i] or trunc[i]:
                ended += 1
                _same(_flat(obs, i), e.observe(agent), where + " (end)")
                assert list(info["rewards"][i]) == [e.rewards[a] for a in e.possible_agents], where
                if term[i]:
                    assert list(envs.state.gmeta[i, 16 : 16 + players]) == list(e.game.scores), where
    return ended, big


def lockstep_opponents(n: int, opponents: list[str], window: int, steps: int, seed: int, seat: int = 0) -> int:
    envs = VectorEnv(n, opponents=opponents, window=window, seat=seat)
    obs, info = envs.reset(seed=seed)
    singles = [QwirkleGymEnv(opponents=opponents, window=window, seat=seat) for _ in range(n)]
    single_obs = [e.reset(seed=int(info["game_seed"][i]))[0] for i, e in enumerate(singles)]
    ended = 0
    for step in range(steps):
        for i in range(n):
            _same(_flat(obs, i), single_obs[i], f"step {step} env {i}")
        actions = envs.sample_actions()
        pending = envs.state.pending.astype(bool).copy()
        obs, reward, term, trunc, info = envs.step(actions)
        for i, e in enumerate(singles):
            if pending[i]:
                single_obs[i] = e.reset(seed=int(info["game_seed"][i]))[0]
                continue
            single_obs[i], r, t, tr, _ = e.step(int(actions[i]))
            where = f"step {step} env {i}"
            assert (reward[i], term[i], trunc[i]) == (r, t, tr), where
            if t:
                ended += 1
                assert list(envs.state.gmeta[i, 16 : 16 + len(opponents) + 1]) == list(e.game.scores), where
    return ended


def test_self_play_agrees_with_raw_env() -> None:
    ended, big = lockstep_self_play(8, 2, 40, 700, seed=3)
    assert ended > 8 and big > 3


def test_self_play_full_window_four_players() -> None:
    assert lockstep_self_play(4, 4, 118, 500, seed=5)[0] >= 1


def test_greedy_opponent_agrees_with_gym_env() -> None:
    assert lockstep_opponents(6, ["greedy"], 40, 500, seed=7) > 3


@pytest.mark.slow
def test_heuristic_and_random_opponents_second_seat() -> None:
    assert lockstep_opponents(3, ["heuristic", "random"], 118, 300, seed=11, seat=1) >= 1


@pytest.mark.slow
def test_mc_opponent() -> None:
    lockstep_opponents(2, ["mc:playouts=4"], 40, 40, seed=13)


def test_search_opponent() -> None:
    """The search agent's playouts are called unlinked (``_jit.External``): the env binds
    them before its first step, and its games are the Gymnasium env's."""
    lockstep_opponents(2, ["search:time_ms=2"], 40, 40, seed=17)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 7),
    players=st.integers(2, 6),
    window=st.sampled_from([11, 13, 21, 33, 57]),
    seed=st.integers(0, 2**64 - 1),
)
def test_odd_shapes_agree(n: int, players: int, window: int, seed: int) -> None:
    lockstep_self_play(n, players, window, 60, seed)


def _unwrap(w: int, lo: int) -> int:
    base = lo - 8
    return base + ((w - base) & 127)


def _position(s, i: int) -> tuple[dict, list[int]]:
    """Env ``i``'s board {(row, col): tile} (true coordinates) and the hand to move."""
    minr, minc = int(s.bmeta[i, 2]), int(s.bmeta[i, 4])
    board = {}
    for k in range(int(s.bmeta[i, 0])):
        cell = int(s.tcells[i, k])
        board[(_unwrap(cell >> 7, minr), _unwrap(cell & 127, minc))] = int(s.board[i, cell])
    p = int(s.gmeta[i, 1])
    return board, [int(t) for t in s.hands[i, p, : s.gmeta[i, 24 + p]]]


@pytest.mark.slow
def test_masks_equal_the_naive_placements() -> None:
    """Every step of masked random play: the mask is the one written from the naive
    reference's placements (tests/naive.py): the tiles that complete some placement
    with those put down so far, DONE, the exchanges the bag allows or the pass."""
    n, w = 4, 21
    envs = VectorEnv(n, players=2, window=w)
    obs, _ = envs.reset(seed=21)
    s = envs.state
    moves: list = [None] * n
    partial: list[list] = [[] for _ in range(n)]
    checked = 0
    for _ in range(250):
        for i in range(n):
            if s.pending[i]:
                continue
            board, hand = _position(s, i)
            if not partial[i]:
                moves[i] = naive.naive_legal_placements(board, hand, naive.largest_group(hand) if not board else None)
            r0, c0 = (int(x) for x in s.origin[i])
            want = np.zeros(envs.n_actions, np.int8)
            put = {(r, c, t) for _, r, c, t in partial[i]}
            used = {q for q, _, _, _ in partial[i]}
            for move in moves[i]:
                if put <= move:
                    for r, c, t in move - put:
                        for q, held in enumerate(hand):
                            if held == t and q not in used:
                                want[q * w * w + (r - r0) * w + (c - c0)] = 1
                    if put and move == put:
                        want[6 * w * w] = 1
            if not partial[i]:
                bag = int(s.gmeta[i, 2])
                if bag and not s.gmeta[i, 5]:
                    for bits in range(1, 64):
                        if bits < 1 << len(hand) and bin(bits).count("1") <= bag:
                            want[6 * w * w + bits] = 1
                elif not moves[i]:
                    want[-1] = 1
            np.testing.assert_array_equal(obs["action_mask"][i], want)
            checked += 1
        actions = envs.sample_actions()
        for i in range(n):
            a = int(actions[i])
            if s.pending[i] or a >= 6 * w * w:
                partial[i] = []
            else:
                q, k = divmod(a, w * w)
                board, hand = _position(s, i)
                partial[i].append((q, int(s.origin[i, 0]) + k // w, int(s.origin[i, 1]) + k % w, hand[q]))
        obs, *_ = envs.step(actions)
    assert checked > 800


def test_illegal_action_names_the_env_and_changes_nothing() -> None:
    envs = VectorEnv(5, players=2, window=40)
    obs, _ = envs.reset(seed=1)
    actions = envs.sample_actions()
    bad = actions.copy()
    bad[3] = int(np.flatnonzero(obs["action_mask"][3] == 0)[0])
    before = [a.copy() for a in envs.state]
    with pytest.raises(IllegalMoveError, match="env 3: action"):
        envs.step(bad)
    bad[3] = envs.n_actions
    with pytest.raises(IllegalMoveError, match="env 3: action .* outside"):
        envs.step(bad)
    for a, b in zip(before, envs.state):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="shape"):
        envs.step(actions[:4])
    with pytest.raises(TypeError, match="integers"):
        envs.step(actions.astype(float))
    envs.step(actions)  # the legal actions still go through


def test_results_do_not_depend_on_n_or_threads() -> None:
    def run(n: int, threads: int) -> tuple[np.ndarray, np.ndarray]:
        envs = VectorEnv(n, opponents=["greedy"], window=40, threads=threads)
        envs.reset(seed=9)
        total = np.zeros(n)
        for _ in range(150):
            _, r, *_ = envs.step(envs.sample_actions())
            total += r
        return total[:3], envs.state.game_seeds[:3].copy()

    a, b, c = run(3, 1), run(130, 1), run(130, 2)  # 130 envs: two threads of 65
    for x, y in ((a, b), (b, c)):
        np.testing.assert_array_equal(x[0], y[0])
        np.testing.assert_array_equal(x[1], y[1])


def test_reset_mask_and_seeds() -> None:
    envs = VectorEnv(4, players=2, window=40)
    _, info = envs.reset(seed=2)
    first = info["game_seed"].copy()
    _, info = envs.reset(seed=2)
    np.testing.assert_array_equal(info["game_seed"], first)
    for _ in range(5):
        envs.step(envs.sample_actions())
    kept = [np.array(a[[1, 2]]) for a in envs.state]
    _, info = envs.reset(options={"reset_mask": np.array([True, False, False, True])})
    assert (info["game_seed"][[1, 2]] == first[[1, 2]]).all()
    assert (info["game_seed"][[0, 3]] != first[[0, 3]]).all()
    # the other envs are left exactly as they were: no action taken again, nothing reset
    for name, before, after in zip(envs.state._fields, kept, envs.state):
        np.testing.assert_array_equal(after[[1, 2]], before, err_msg=name)
    with pytest.raises(ValueError, match="reset_mask"):
        envs.reset(options={"reset_mask": [1, 0]})
    with pytest.raises(ValueError, match="unknown reset options"):
        envs.reset(options={"game": None})


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        VectorEnv(0)
    with pytest.raises(ValueError, match="window"):
        VectorEnv(2, window=5)
    with pytest.raises(ValueError, match="players"):
        VectorEnv(2, players=3, opponents=["greedy"])
    with pytest.raises(Exception, match="built-in"):
        VectorEnv(2, opponents=["bots:Best"])
    with pytest.raises(RuntimeError, match="reset"):
        VectorEnv(2).step(np.zeros(2, np.int64))


@pytest.mark.slow
def test_the_training_example_runs(tmp_path) -> None:
    """docs/examples/vector_reinforce.py trains for a few seconds and draws its curve."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "docs" / "examples" / "vector_reinforce.py"
    spec = importlib.util.spec_from_file_location("vector_reinforce", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    rounds = example.train(0.1, envs_n=64)
    assert rounds and all(score > 0 and greedy > 0 for _, score, greedy, _ in rounds)
    assert np.any(rounds[-1][3] != 0)  # the weights moved
    example.plot(rounds, str(tmp_path / "curve.png"))
    assert (tmp_path / "curve.png").stat().st_size > 1000
