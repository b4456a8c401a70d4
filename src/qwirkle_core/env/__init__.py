"""Reinforcement-learning environments (interfaces layer). Needs
``pip install 'qwirkle-core[rl]'``.

- :func:`env` / :func:`raw_env`: the PettingZoo AEC environment, one game;
- :class:`QwirkleGymEnv`: a single-seat Gymnasium environment, registered as
  ``qwirkle_core/Qwirkle-v0`` (``gymnasium.make("qwirkle_core/Qwirkle-v0", opponents=...,
  reward=..., actions=...)``; ``gymnasium.make_vec`` builds a :class:`VectorEnv`);
- :class:`VectorEnv`: N games stepped by one kernel call (Gymnasium's vector API);
- :mod:`qwirkle_core.env.sb3`: a Stable-Baselines3 ``VecEnv`` over :class:`VectorEnv`
  (needs ``[rl-train]``).

See docs/env.md.
"""

import gymnasium

from .aec import MIN_WINDOW, WINDOW, action_count, env, raw_env
from .gym_env import QwirkleGymEnv
from .vector import VectorEnv

__all__ = ["ENV_ID", "MIN_WINDOW", "WINDOW", "QwirkleGymEnv", "VectorEnv", "action_count", "env", "raw_env"]

ENV_ID = "qwirkle_core/Qwirkle-v0"
"""The Gymnasium id of :class:`QwirkleGymEnv` (and, through ``gymnasium.make_vec``, of
:class:`VectorEnv`)."""

if ENV_ID not in gymnasium.registry:
    gymnasium.register(
        id=ENV_ID,
        entry_point="qwirkle_core.env.gym_env:QwirkleGymEnv",
        vector_entry_point="qwirkle_core.env.vector:VectorEnv",
        disable_env_checker=True,  # checked by the tests (check_env); the passive checker warns on int8 masks
    )
