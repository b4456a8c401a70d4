"""Reinforcement-learning environments (interfaces layer). Needs
``pip install 'qwirkle-core[rl]'``.

- :func:`env` / :func:`raw_env`: the PettingZoo AEC environment, one game;
- :class:`QwirkleGymEnv`: a single-seat Gymnasium wrapper;
- :class:`VectorEnv`: N games stepped by one kernel call (Gymnasium's vector API).

See docs/env.md.
"""

from .aec import MIN_WINDOW, WINDOW, QwirkleGymEnv, action_count, env, raw_env
from .vector import VectorEnv

__all__ = ["MIN_WINDOW", "WINDOW", "QwirkleGymEnv", "VectorEnv", "action_count", "env", "raw_env"]
