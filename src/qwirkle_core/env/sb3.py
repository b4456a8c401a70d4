"""A Stable-Baselines3 ``VecEnv`` over :class:`~qwirkle_core.env.VectorEnv` (needs
``pip install 'qwirkle-core[rl-train]'``).

SB3 resets an env within the step that ended its episode and hands the last observation
in ``infos[i]["terminal_observation"]``; ``VectorEnv`` resets on the next step
(Gymnasium's ``NEXT_STEP``). :class:`QwirkleVecEnv` bridges the two, gives the
observations as one level of Box spaces, and answers ``env_method("action_masks")``
(what sb3-contrib's ``MaskablePPO`` calls), so it trains as it is:

>>> from sb3_contrib import MaskablePPO                        # doctest: +SKIP
>>> from qwirkle_core.env.sb3 import make_vec_env
>>> venv = make_vec_env(8, opponents=["greedy"], window=40)
>>> model = MaskablePPO("MultiInputPolicy", venv, n_steps=64)  # doctest: +SKIP
>>> model.learn(2_000)                                          # doctest: +SKIP

:class:`MovePolicy` scores each listed move with the learned move scorer's network
(weights shared by the moves) and exports to the ``net`` agent's weights file:

>>> venv = make_vec_env(8, pool=["greedy"], players=2, window=40, actions="moves",  # doctest: +SKIP
...                     reward="margin", scorer_inputs=True, keys=MovePolicy.KEYS)
>>> model = MaskablePPO(MovePolicy, venv, n_steps=64)                               # doctest: +SKIP

See docs/env.md ("Stable-Baselines3", "MovePolicy").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import MaskableDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from .._checks import check_seed
from .move_policy import make_move_net
from .vector import VectorEnv

__all__ = ["MovePolicy", "QwirkleVecEnv", "make_vec_env"]


def _flat(obs: dict[str, Any]) -> dict[str, Any]:
    """A VectorEnv observation as one level of arrays (``observation``'s keys lifted)."""
    if "observation" in obs and isinstance(obs["observation"], dict):
        return {**obs["observation"], **{k: v for k, v in obs.items() if k != "observation"}}
    return dict(obs)


def _flat_space(space: spaces.Space[Any]) -> spaces.Space[Any]:
    if isinstance(space, spaces.Dict) and isinstance(space.spaces.get("observation"), spaces.Dict):
        inner = space["observation"]
        assert isinstance(inner, spaces.Dict)
        return spaces.Dict({**inner.spaces, **{k: v for k, v in space.spaces.items() if k != "observation"}})
    return space


class QwirkleVecEnv(VecEnv):
    """N games of a :class:`~qwirkle_core.env.VectorEnv` as a Stable-Baselines3 VecEnv.

    ``options`` are :class:`~qwirkle_core.env.VectorEnv`'s (``opponents``, ``window``,
    ``actions``, ``reward``, ``pool``, ``scorer_inputs``, ...; ``copy`` is True here:
    SB3 keeps the arrays it is handed). Observations: :attr:`observation_space`, a
    ``Dict`` of Box spaces (``action_mask`` among them); ``keys``: only these arrays
    (e.g. :attr:`MovePolicy.KEYS`: no board to copy into the rollout buffer).

    Notes
    -----
    An env whose episode ends is reset within the same step: its ``infos[i]`` holds
    ``terminal_observation`` (the last observation, one level of arrays),
    ``TimeLimit.truncated`` (truncated, not terminated) and the ``VectorEnv``'s info
    entries of that env (episode-end entries included). ``env_method("action_masks")``
    returns the N masks (bool); ``get_attr``/``set_attr``/``has_attr`` read and write
    attributes of the ``VectorEnv`` (the same value for every index), and
    ``env_method`` calls one of its methods once. ``seed(s)`` makes the next
    :meth:`reset` deal ``VectorEnv.reset(seed=s)``. An action outside its env's mask
    changes nothing in that env, as in the ``VectorEnv``: the same observation, reward
    0, not done, and ``infos[i]["illegal_action"]`` True (False for the others: every
    step's ``infos[i]`` holds it).
    """

    def __init__(self, num_envs: int, keys: Sequence[str] | None = None, **options: Any) -> None:
        if options.setdefault("copy", True) is not True:
            raise ValueError("QwirkleVecEnv needs copy=True: Stable-Baselines3 keeps the arrays it is handed")
        self.env = VectorEnv(num_envs, **options)
        self.render_mode = None
        space = _flat_space(self.env.single_observation_space)
        assert isinstance(space, spaces.Dict)
        if keys is not None:
            keys = tuple(keys)
            unknown = [k for k in keys if k not in space.spaces]
            if unknown or not keys:
                raise ValueError(
                    f"keys must name observation arrays ({', '.join(space.spaces)}), not {unknown or keys}"
                )
            space = spaces.Dict({k: space[k] for k in keys})
        self.keys = tuple(space.spaces)
        super().__init__(num_envs, space, self.env.single_action_space)
        self._actions: np.ndarray | None = None
        self._next_seed: int | None = None

    @property
    def vector_env(self) -> VectorEnv:
        """The :class:`~qwirkle_core.env.VectorEnv` underneath."""
        return self.env

    def reset(self) -> dict[str, np.ndarray]:
        """Deal N new games (from the seed given to :meth:`seed`, if any, else the next
        episode of each env); ``reset_infos`` holds each env's info."""
        seed, self._next_seed = self._next_seed, None
        obs, info = self.env.reset(seed=seed)
        self.reset_infos = self._split_info(info)
        return self._keep(obs)

    def _keep(self, obs: dict[str, Any]) -> dict[str, np.ndarray]:
        flat = _flat(obs)
        return {k: flat[k] for k in self.keys}

    def step_async(self, actions: np.ndarray) -> None:
        """Store the N actions for :meth:`step_wait`."""
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Step the N games; an env whose episode ended is reset at once (see the class)."""
        if self._actions is None:
            raise RuntimeError("step_async() must come before step_wait()")
        actions, self._actions = self._actions, None
        obs, reward, terminated, truncated, info = self.env.step(actions)
        done = np.logical_or(terminated, truncated)
        infos = self._split_info(info)
        obs = self._keep(obs)
        if done.any():
            for i in map(int, np.flatnonzero(done)):
                infos[i]["terminal_observation"] = {k: v[i].copy() for k, v in obs.items()}
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            fresh, reset_info = self.env.reset(options={"reset_mask": done})
            obs = self._keep(fresh)
            for i, extra in enumerate(self._split_info(reset_info)):
                if done[i]:
                    self.reset_infos[i] = extra
        return obs, np.asarray(reward, np.float32), done, infos

    def _split_info(self, info: dict[str, Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for key, values in info.items():
            if key.startswith("_"):
                continue
            present = info.get("_" + key, np.ones(self.num_envs, bool))
            for i in np.flatnonzero(present):
                out[i][key] = values[i]
        return out

    def set_pool(self, pool: Any, weights: Any = None) -> None:
        """:meth:`VectorEnv.set_pool <qwirkle_core.env.VectorEnv.set_pool>`: the pool new
        games draw from (a league's next round)."""
        self.env.set_pool(pool, weights)

    def add_opponent(self, agent: Any, weight: float | None = None) -> None:
        """:meth:`VectorEnv.add_opponent <qwirkle_core.env.VectorEnv.add_opponent>`: one
        more opponent in the pool (a snapshot: ``"net:weights=PATH"``)."""
        self.env.add_opponent(agent, weight)

    def action_masks(self) -> np.ndarray:
        """bool[N, A]: the legal actions of each env now."""
        return self.env.action_masks()

    def close(self) -> None:
        """Close the VectorEnv (its worker threads)."""
        self.env.close()

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Make the next :meth:`reset` deal ``VectorEnv.reset(seed=seed)``'s games (a seed
        drawn from the operating system when None); returns ``[seed] * N``."""
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
        self._next_seed = check_seed(seed)
        return [self._next_seed] * self.num_envs

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return [int(i) for i in indices]

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The VectorEnv's attribute ``attr_name``, once per index (AttributeError if none)."""
        if attr_name == "action_masks":
            return [self.action_masks] * len(self._indices(indices))
        value = getattr(self.env, attr_name)
        return [value] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set the VectorEnv's attribute ``attr_name`` (it is shared by every index)."""
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """``"action_masks"``: each env's mask (bool[A]); another name: that VectorEnv
        method, called once, its result repeated per index."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in idx]
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result] * len(idx)

    def env_is_wrapped(
        self, wrapper_class: type[gymnasium.Wrapper[Any, Any, Any, Any]], indices: Any = None
    ) -> list[bool]:
        """False for every env (the VectorEnv wraps nothing)."""
        return [False] * len(self._indices(indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        """No pictures (render a single env instead)."""
        return [None] * self.num_envs


def make_vec_env(num_envs: int, monitor: bool = True, **options: Any) -> VecEnv:
    """A Stable-Baselines3 VecEnv of ``num_envs`` games: :class:`QwirkleVecEnv` with the
    :class:`~qwirkle_core.env.VectorEnv` ``options`` (``opponents``, ``window``, ``seat``,
    ...) and ``keys``, wrapped in SB3's ``VecMonitor`` (episode returns and lengths in
    ``infos[i]["episode"]``, as SB3's own ``make_vec_env`` records them) unless
    ``monitor=False``. MaskablePPO takes it as it is."""
    venv: VecEnv = QwirkleVecEnv(num_envs, **options)
    return VecMonitor(venv) if monitor else venv


class MovePolicy(MaskableActorCriticPolicy):
    """A ``MaskablePPO`` policy that scores each listed move with the learned move
    scorer's network (:func:`qwirkle_core.env.move_policy.make_move_net`: weights shared
    by the moves, a masked softmax over the list, a value head on the pooled moves and
    the context). Its parameters do not depend on ``k`` or the window.

    It reads ``move_inputs`` and ``action_mask``: train it on
    ``make_vec_env(..., actions="moves", scorer_inputs=True, keys=MovePolicy.KEYS)``.
    ``policy_kwargs``: ``hidden`` (the scorer's two layers, default (64, 32)),
    ``value_hidden`` (64) and ``init`` (a weights file to start the scorer from).
    :meth:`export` writes the scorer as the ``net`` agent's weights file.
    """

    KEYS = ("move_inputs", "action_mask")
    """The observation arrays it reads."""

    def __init__(
        self,
        observation_space: spaces.Space[Any],
        action_space: spaces.Space[Any],
        lr_schedule: Any,
        hidden: tuple[int, int] = (64, 32),
        value_hidden: int = 64,
        init: str | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(observation_space, spaces.Dict) or "move_inputs" not in observation_space.spaces:
            raise ValueError("MovePolicy reads move_inputs: make the env with actions='moves' and scorer_inputs=True")
        self.hidden, self.value_hidden, self.init = tuple(hidden), int(value_hidden), init
        kwargs.update(net_arch=[], ortho_init=False)
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build(self, lr_schedule: Any) -> None:
        self.move_net = make_move_net(self.hidden, self.value_hidden)  # type: ignore[arg-type]
        if self.init is not None:
            self.move_net.load_scorer(self.init)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)  # type: ignore[call-arg]

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(hidden=self.hidden, value_hidden=self.value_hidden, init=None)
        for key in ("net_arch", "ortho_init"):
            data.pop(key, None)
        return data

    def _run(self, obs: Any) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        mask = obs["action_mask"] > 0
        logits, value = self.move_net(obs["move_inputs"], mask)
        return logits, value, mask

    def _dist(self, logits: th.Tensor, mask: th.Tensor, action_masks: Any) -> MaskableDistribution:
        dist = self.action_dist.proba_distribution(action_logits=logits)
        dist.apply_masking(mask if action_masks is None else action_masks)
        return dist

    def forward(
        self, obs: Any, deterministic: bool = False, action_masks: np.ndarray | None = None
    ) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        """Actions, values [B, 1] and the actions' log-probabilities."""
        logits, value, mask = self._run(obs)
        dist = self._dist(logits, mask, action_masks)
        actions = dist.get_actions(deterministic=deterministic)
        return actions, value[:, None], dist.log_prob(actions)

    def evaluate_actions(
        self, obs: Any, actions: th.Tensor, action_masks: th.Tensor | None = None
    ) -> tuple[th.Tensor, th.Tensor, th.Tensor | None]:
        """Values [B, 1], the log-probabilities of ``actions`` and the entropy."""
        logits, value, mask = self._run(obs)
        dist = self._dist(logits, mask, action_masks)
        return value[:, None], dist.log_prob(actions), dist.entropy()

    def get_distribution(self, obs: Any, action_masks: np.ndarray | None = None) -> MaskableDistribution:
        """The masked distribution over the listed moves."""
        logits, _, mask = self._run(obs)
        return self._dist(logits, mask, action_masks)

    def predict_values(self, obs: Any) -> th.Tensor:
        """Values [B, 1]."""
        return self._run(obs)[1][:, None]

    def export(self, path: str, provenance: dict[str, Any]) -> Any:
        """Write the scorer as the ``net`` agent's weights file (see
        :func:`qwirkle_core.env.move_policy.make_move_net`)."""
        return self.move_net.export(path, provenance)
