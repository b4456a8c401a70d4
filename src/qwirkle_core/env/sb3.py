"""A Stable-Baselines3 ``VecEnv`` over :class:`~qwirkle_core.env.VectorEnv` (needs
``pip install 'qwirkle-core[rl-train]'``).

SB3 resets an env within the step that ended its episode and hands the last observation
in ``infos[i]["terminal_observation"]``; ``VectorEnv`` resets on the next step
(Gymnasium's ``NEXT_STEP``). :class:`QwirkleVecEnv` bridges the two, gives the
observations as one level of Box spaces, and answers ``env_method("action_masks")``
(what sb3-contrib's ``MaskablePPO`` calls), so it trains as it is:

>>> from sb3_contrib import MaskablePPO                        # doctest: +SKIP
>>> from qwirkle_core.env.sb3 import make_vec_env
>>> venv = make_vec_env(8, opponents=["greedy"], window=16)
>>> model = MaskablePPO("MultiInputPolicy", venv, n_steps=64)  # doctest: +SKIP
>>> model.learn(2_000)                                          # doctest: +SKIP

See docs/env.md ("Stable-Baselines3").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from .._checks import check_seed
from .vector import VectorEnv

__all__ = ["QwirkleVecEnv", "make_vec_env"]


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
    ``actions``, ``reward``, ...; ``copy`` is True here: SB3 keeps the arrays it is
    handed). Observations:
    :attr:`observation_space`, a ``Dict`` of Box spaces (``action_mask`` among them).

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

    def __init__(self, num_envs: int, **options: Any) -> None:
        if options.setdefault("copy", True) is not True:
            raise ValueError("QwirkleVecEnv needs copy=True: Stable-Baselines3 keeps the arrays it is handed")
        self.env = VectorEnv(num_envs, **options)
        self.render_mode = None
        super().__init__(num_envs, _flat_space(self.env.single_observation_space), self.env.single_action_space)
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
        return _flat(obs)

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
        obs = _flat(obs)
        if done.any():
            for i in map(int, np.flatnonzero(done)):
                infos[i]["terminal_observation"] = {k: v[i].copy() for k, v in obs.items()}
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            fresh, reset_info = self.env.reset(options={"reset_mask": done})
            obs = _flat(fresh)
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
    ...), wrapped in SB3's ``VecMonitor`` (episode returns and lengths in
    ``infos[i]["episode"]``, as SB3's own ``make_vec_env`` records them) unless
    ``monitor=False``. MaskablePPO takes it as it is."""
    venv: VecEnv = QwirkleVecEnv(num_envs, **options)
    return VecMonitor(venv) if monitor else venv
