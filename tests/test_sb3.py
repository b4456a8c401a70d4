"""Stable-Baselines3 and sb3-contrib on the environments, as a user runs them: MaskablePPO
trains on ``gymnasium.make("qwirkle_core/Qwirkle-v0", ...)`` and on
``qwirkle_core.env.sb3.make_vec_env(...)`` with no wrapper of ours, the SB3 VecEnv's
same-step autoreset against the VectorEnv's games, and the trained-policy agent in a
tournament. Real libraries (the [rl-train] extra), no mocks; skipped without them."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gymnasium")
sb3_contrib = pytest.importorskip("sb3_contrib")
torch = pytest.importorskip("torch")

import gymnasium  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.env_checker import check_env as sb3_check_env  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv  # noqa: E402

import qwirkle_core as qc  # noqa: E402
from qwirkle_core._kernels import net as _net  # noqa: E402
from qwirkle_core.batch.scorer import read_weights  # noqa: E402
from qwirkle_core.env import ENV_ID, VectorEnv  # noqa: E402
from qwirkle_core.env.baselines import PolicyAgent  # noqa: E402
from qwirkle_core.env.move_policy import make_move_net  # noqa: E402
from qwirkle_core.env.movelist import scorer_inputs  # noqa: E402
from qwirkle_core.env.sb3 import MovePolicy, QwirkleVecEnv, make_vec_env  # noqa: E402


class Infos(BaseCallback):
    """Counts the steps, the finished episodes and any illegal action seen in the infos."""

    def __init__(self) -> None:
        super().__init__()
        self.steps = self.episodes = self.illegal = 0
        self.outcomes: list[int] = []

    def _on_step(self) -> bool:
        for info, done in zip(self.locals["infos"], self.locals["dones"]):
            self.steps += 1
            self.illegal += bool(info.get("illegal_action", False))
            if done:
                self.episodes += 1
                if "outcome" in info:
                    self.outcomes.append(int(info["outcome"]))
        return True


def params_of(model) -> np.ndarray:
    return torch.cat([p.detach().flatten() for p in model.policy.parameters()]).numpy().copy()


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_maskable_ppo_trains_on_the_registered_env_in_both_action_modes():
    for kwargs, steps in (
        (dict(actions="moves", reward="margin"), 512),
        (dict(window=16, reward="win", max_turns=40), 512),
    ):
        env = gymnasium.make(ENV_ID, opponents=("greedy",), **kwargs)
        assert is_masking_supported(env)
        sb3_check_env(env.unwrapped, warn=False)
        model = MaskablePPO("MultiInputPolicy", env, n_steps=256, batch_size=64, n_epochs=2, seed=0, device="cpu")
        before = params_of(model)
        seen = Infos()
        model.learn(steps, callback=seen)
        assert model.num_timesteps >= steps and seen.steps >= steps
        assert seen.illegal == 0 and seen.episodes >= 1
        assert not np.allclose(before, params_of(model))
        obs, _ = env.reset(seed=5)
        for _ in range(50):  # the trained policy's masked choices are legal
            action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks(), deterministic=True)
            assert env.unwrapped.action_masks()[int(action)]
            obs, _, term, trunc, info = env.step(int(action))
            assert not info["illegal_action"]
            if term or trunc:
                break


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_maskable_ppo_trains_on_make_vec_env():
    # the move-list mode (the tile mode's SB3 plumbing is the same; the test below steps it)
    actions = "moves"
    venv = make_vec_env(8, opponents=["greedy"], window=16, actions=actions, reward="margin")
    assert isinstance(venv, VecEnv) and is_masking_supported(venv)
    model = MaskablePPO("MultiInputPolicy", venv, n_steps=128, batch_size=256, n_epochs=2, seed=0, device="cpu")
    before = params_of(model)
    seen = Infos()
    model.learn(2048, callback=seen)
    assert model.num_timesteps >= 2048 and seen.episodes > 0
    assert not np.allclose(before, params_of(model))
    assert get_action_masks(venv).shape == (8, 128 if actions == "moves" else 6 * 16 * 16 + 65)
    venv.close()


def test_the_vec_env_resets_in_the_same_step_and_episodes_add_up():
    """Masked random play through QwirkleVecEnv against the VectorEnv's games: each
    episode's rewards add up to the learner's final score in terminal_observation, the
    step after a reset is a real move of the new game (its seed does not change again),
    and seeding deals VectorEnv.reset(seed=...)'s games."""
    n = 16
    venv = QwirkleVecEnv(n, opponents=["greedy"], window=40)
    reference = VectorEnv(n, opponents=["greedy"], window=40)
    venv.seed(7)
    obs = venv.reset()
    ref_obs, ref_info = reference.reset(seed=7)
    np.testing.assert_array_equal(obs["board"], ref_obs["board"])
    assert [i["game_seed"] for i in venv.reset_infos] == list(ref_info["game_seed"])
    assert set(obs) == set(venv.observation_space.spaces) and venv.observation_space.contains(
        {k: v[0] for k, v in obs.items()}
    )
    rng = np.random.default_rng(1)
    totals, seeds, episodes, just_reset = np.zeros(n), [i["game_seed"] for i in venv.reset_infos], 0, np.zeros(n, bool)
    for _ in range(1500):
        masks = np.stack(venv.env_method("action_masks"))
        np.testing.assert_array_equal(masks, obs["action_mask"].astype(bool))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, reward, done, infos = venv.step(actions)
        totals += reward
        for i in range(n):
            if just_reset[i]:  # the first step of a new game plays it: no second reset
                assert infos[i]["game_seed"] == seeds[i]
            if done[i]:
                last = infos[i]["terminal_observation"]
                assert not infos[i]["TimeLimit.truncated"]
                assert totals[i] == last["scores"][0], (totals[i], last["scores"])
                assert venv.reset_infos[i]["game_seed"] != seeds[i]
                seeds[i] = venv.reset_infos[i]["game_seed"]
                totals[i] = 0
                episodes += 1
            else:
                assert infos[i]["game_seed"] == seeds[i]
        just_reset = done
    assert episodes >= n
    assert venv.has_attr("window") and venv.get_attr("window", [0, 3]) == [40, 40]
    assert not venv.has_attr("no_such_thing")
    # an illegal action (the pass, never legal with placements left) in env 2 only:
    # that env is left as it was, not done, reward 0, flagged; the others step
    masks = np.stack(venv.env_method("action_masks"))
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
    actions[2] = 6 * 40 * 40 + 64
    assert not masks[2, actions[2]]
    before = {k: v[2].copy() for k, v in obs.items()}
    seeds_before = [i["game_seed"] for i in infos]
    after, reward, done, infos = venv.step(actions)
    assert [bool(i["illegal_action"]) for i in infos] == [i == 2 for i in range(n)]
    assert reward[2] == 0 and not done[2] and infos[2]["game_seed"] == seeds_before[2]
    assert (infos[2]["rewards"] == 0).all()
    for key, value in before.items():
        np.testing.assert_array_equal(after[key][2], value, err_msg=key)
    assert any(not np.array_equal(after["board"][i], obs["board"][i]) or done[i] for i in range(n) if i != 2)
    with pytest.raises(ValueError, match="copy=True"):
        QwirkleVecEnv(2, opponents=["greedy"], copy=False)
    venv.close()


def test_a_policy_file_plays_as_a_python_agent_labelled_by_its_file(tmp_path):
    """An exported MovePolicy plays as PolicyAgent (labelled by its file: two share a
    tournament table) and as the built-in net agent; bad files are refused clearly."""
    first, second = tmp_path / "first.npz", tmp_path / "second.npz"
    make_move_net(seed=3).export(first, {"command": "test"})
    make_move_net(seed=4).export(second, {"command": "test"})
    agent = PolicyAgent(first)
    assert agent.name == "policy:first"
    record = qc.play_game((agent, "greedy"), seed=2)
    assert record.final_scores[0] > 0
    result = qc.tournament([agent, PolicyAgent(second), f"net:weights={first}"], games=4, seed=1, threads=1)
    assert not result.failures and result.agents[:2] == ("policy:first", "policy:second")
    assert all(m.games == 4 for m in result.matches)
    with pytest.raises(qc.AgentError, match="cannot load policy weights"):
        PolicyAgent(tmp_path / "missing.npz")
    np.savez(tmp_path / "other.npz", w1=np.zeros((3, 4)))
    with pytest.raises(qc.AgentError, match="cannot load policy weights"):
        PolicyAgent(tmp_path / "other.npz")


def test_the_exported_scorer_scores_as_the_torch_module(tmp_path):
    """MoveNet's logits on a position's input rows equal the numba net agent's scores of
    the file it exports (the one architecture: torch to train, numba to play)."""
    net = make_move_net(hidden=(16, 8), seed=5)
    with torch.no_grad():  # a trained-looking scorer: larger weights than the initial ones
        for p in net.scorer.parameters():
            p.mul_(3.0)
    path = net.export(tmp_path / "p.npz", {"command": "test"})
    slot = _net.bind_net(str(path))
    ns = _net.new_net_scratch()
    g = qc.Game(seed=8)
    for turn in range(30):
        x, moves = scorer_inputs(g)
        count = _net.net_scores(g.kernel_arrays(), ns, slot)
        with torch.no_grad():
            logits, value = net(
                torch.as_tensor(x[None], dtype=torch.float32), torch.ones(1, len(moves), dtype=torch.bool)
            )
        np.testing.assert_allclose(logits[0].numpy(), ns[7][:count], rtol=1e-4, atol=1e-4)
        assert value.shape == (1,)
        g.play_agent("greedy")
    again = make_move_net(hidden=(16, 8))
    again.load_scorer(path)  # the file round-trips through a fresh module
    written, reread = read_weights(path)[0], read_weights(again.export(tmp_path / "q.npz", {}))[0]
    for key, value in written.items():
        np.testing.assert_array_equal(reread[key], value, err_msg=key)
    with pytest.raises(ValueError, match="this net's"):
        make_move_net(hidden=(8, 8)).load_scorer(path)


@pytest.mark.slow  # trains: .ci/run runs it
def test_maskable_ppo_trains_move_policy_whatever_the_window(tmp_path):
    """MaskablePPO with MovePolicy for a few thousand steps against a weighted pool: its
    parameters are the same whatever the window and the list's length, it learns (the
    parameters move, no illegal action), it saves and loads with SB3, and its export
    plays as the net agent."""
    sizes = []
    for window, k in ((24, 32), (40, 128)):
        venv = make_vec_env(
            8, pool=["greedy", "random"], pool_weights=[3, 1], players=2, window=window, actions="moves",
            k=k, reward="margin", scorer_inputs=True, keys=MovePolicy.KEYS,
        )  # fmt: skip
        assert set(venv.observation_space.spaces) == {"move_inputs", "action_mask"}
        model = MaskablePPO(MovePolicy, venv, n_steps=64, batch_size=128, n_epochs=2, seed=0)
        sizes.append(sum(p.numel() for p in model.policy.parameters()))
    assert sizes[0] == sizes[1] < 10_000
    before = params_of(model)
    seen = Infos()
    model.learn(2048, callback=seen)
    assert seen.steps >= 2048 and seen.episodes > 0 and seen.illegal == 0
    assert not np.allclose(before, params_of(model))
    model.save(tmp_path / "model.zip")
    loaded = MaskablePPO.load(tmp_path / "model.zip", env=venv)
    np.testing.assert_array_equal(params_of(loaded), params_of(model))
    path = model.policy.export(str(tmp_path / "policy.npz"), {"command": "test"})
    record = qc.play_game((f"net:weights={path}", "greedy"), seed=1)
    assert record.final_scores[0] > 0
    started = MaskablePPO(MovePolicy, venv, policy_kwargs={"init": str(path)})  # --init
    np.testing.assert_array_equal(
        started.policy.move_net.scorer.l1.weight.detach().numpy(),
        model.policy.move_net.scorer.l1.weight.detach().numpy(),
    )
    with pytest.raises(ValueError, match="scorer_inputs=True"):
        MaskablePPO(MovePolicy, make_vec_env(2, opponents=["greedy"], window=24, actions="moves"))
    with pytest.raises(ValueError, match="keys must name"):
        make_vec_env(2, opponents=["greedy"], window=24, actions="moves", keys=["boards"])
