"""The batched environment: N games stepped by one call into a numba kernel.

:class:`VectorEnv` keeps N games in numpy arrays and follows Gymnasium's ``VectorEnv``
conventions (arrays with a leading axis of N, autoreset mode ``NEXT_STEP``). Its
observations and actions are those of :class:`~qwirkle_core.env.raw_env` (a policy
trained on one runs on the other); the built-in opponents play inside the kernel, so a
step returns when every env's learner is to move again. See docs/env.md.

>>> from qwirkle_core.env import VectorEnv
>>> envs = VectorEnv(256, opponents=["greedy"], window=40)
>>> obs, info = envs.reset(seed=1)
>>> for _ in range(100):
...     obs, reward, terminated, truncated, info = envs.step(envs.sample_actions())
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from .._checks import check_int, check_seed
from .._kernels import vector as _kv
from .._kernels.agents import bind_leaves, bind_search
from .._kernels.batch import seeds_for
from .._kernels.layout import AGENT_IDS
from ..batch.players import resolve_agents
from ..errors import AgentError, IllegalMoveError
from ..game.agents import spec_row
from ..game.game import MAX_TURNS
from ..game.rules import Rules
from .aec import WINDOW, action_count, check_window, observation_space

__all__ = ["VectorEnv"]

MIN_ENVS_PER_THREAD = 64  # fewer envs a thread: handing them out costs more than it saves
_PLAIN = {AGENT_IDS["random"], AGENT_IDS["greedy"]}
_HEURISTIC = _PLAIN | {AGENT_IDS["heuristic"]}


class VectorEnv(gymnasium.vector.VectorEnv):
    """N games of Qwirkle stepped together, one seat (or every seat) a learner.

    Parameters
    ----------
    num_envs
        the number of games N.
    players
        seats per game, 2 to 6 (default: ``len(opponents) + 1``, or 2 without opponents).
    window
        side of the board window (as for :class:`~qwirkle_core.env.raw_env`; default 118).
    opponents
        None: every seat is played through :meth:`step` (self-play; the observation
        and mask are those of the player to move). Else one built-in agent per other
        seat (``"greedy"``, ``"heuristic"``, ``"mc:playouts=32"``, ...), played inside
        the kernel; the learner sits in ``seat``.
    seat
        the learner's seat with opponents (0 by default).
    opening, max_turns
        as for :class:`~qwirkle_core.env.raw_env`.
    threads
        threads stepping ranges of envs (default 1; at most one per 64 envs); the
        results do not depend on it.
    copy
        True (default): :meth:`reset` and :meth:`step` return new arrays; False: views of
        the environment's arrays, overwritten by the next call (no copying).

    Notes
    -----
    Env ``i``'s game of episode ``e`` is ``qwirkle_core.Game(seed=game_seed(game_seed(S,
    i), e))``, ``S`` the seed of the last ``reset(seed=S)``; its opponents draw from that
    game's agent stream, as in :class:`~qwirkle_core.env.QwirkleGymEnv`. ``info["game_seed"]``
    holds the seeds. Rewards: the points the acting seat (the learner) scored in the step,
    going-out bonus included. Autoreset (``NEXT_STEP``): the step after the one that
    ended an episode ignores that env's action, deals its next game and returns reward 0.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        players: int | None = None,
        window: int = WINDOW,
        opponents: Iterable[Any] | str | None = None,
        seat: int = 0,
        opening: str = "largest_group",
        max_turns: int = MAX_TURNS,
        threads: int = 1,
        copy: bool = True,
    ) -> None:
        self.num_envs = check_int(num_envs, "num_envs", 1)
        specs = self._opponent_specs(opponents, players)
        n_players = specs.shape[0]
        self.rules = Rules(players=n_players, opening=opening)
        self.window = check_window(window)
        self.max_turns = check_int(max_turns, "max_turns", 1)
        self.learner = -1 if opponents is None else check_int(seat, "seat", 0, n_players - 1)
        self.threads = check_int(threads, "threads", 1, max(1, os.cpu_count() or 1))
        if not isinstance(copy, bool):
            raise TypeError(f"copy must be True or False, not {copy!r:.60}")
        self.copy = copy
        self._specs = specs
        ids = {int(row[0]) for q, row in enumerate(specs) if q != self.learner}
        self._kernel: Any = (
            _kv.step_self
            if opponents is None
            else _kv.step_plain
            if ids <= _PLAIN
            else _kv.step_heuristic
            if ids <= _HEURISTIC
            else _kv.step_any
        )
        search = self._kernel is _kv.step_any and AGENT_IDS["search"] in ids
        if search:
            bind_search()
        if AGENT_IDS["static"] in ids:
            bind_leaves()
        self.n_actions = action_count(self.window)
        self.single_observation_space = observation_space(n_players, self.window)
        self.single_action_space = spaces.Discrete(self.n_actions)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._state = _kv.new_vec_state(self.num_envs, n_players, self.window)
        workers = max(1, min(self.threads, self.num_envs // MIN_ENVS_PER_THREAD))
        self._scratch = [_kv.new_scratch(search, self.window) for _ in range(workers)]
        _kv.bind_advance(self._state, self._scratch[0])
        bounds = np.linspace(0, self.num_envs, workers + 1).astype(np.int64)
        self._ranges = [(int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]
        self._pool = ThreadPoolExecutor(workers) if workers > 1 else None
        self._started = False
        self._draws = 0
        self._resets = np.zeros(self.num_envs, np.uint8)
        self._actions = np.zeros(self.num_envs, np.int64)
        self._np_random_seed: int | None = None

    @staticmethod
    def _opponent_specs(opponents: Any, players: Any) -> np.ndarray:
        """float64[P, SPEC_COLS]: a spec row per seat (the learner's row is unused)."""
        if opponents is None:
            n = 2 if players is None else check_int(players, "players", 2, 6)
            return np.stack([spec_row("greedy")] * n)
        resolved = resolve_agents(opponents)
        python = [p.label for p in resolved if p.spec is None]
        if python:
            raise AgentError(f"VectorEnv plays built-in opponents only, not {', '.join(python)}")
        n = len(resolved) + 1
        if players is not None and check_int(players, "players", 2, 6) != n:
            raise ValueError(f"players={players} but {len(resolved)} opponents make {n} seats")
        if not 2 <= n <= 6:
            raise ValueError(f"1 to 5 opponents make a game of 2 to 6 seats, not {len(resolved)}")
        rows = [p.spec.row() for p in resolved if p.spec is not None]
        return np.stack([rows[0], *rows])

    @functools.cached_property
    def observation_space(self) -> spaces.Space[Any]:  # type: ignore[override]
        """The batched observation space (built on first use: its bounds arrays are as
        large as the observations)."""
        return batch_space(self.single_observation_space, self.num_envs)

    # -- the arrays ------------------------------------------------------------------------

    @property
    def state(self) -> Any:
        """The environment's arrays (a :class:`VecState` named tuple; read, do not write):
        ``gmeta``, ``hands`` and the board arrays of each game, the turn in progress and
        the outputs, as listed in docs/env.md. Views, not copies."""
        return self._state

    def _out(self, a: np.ndarray) -> np.ndarray:
        return a.copy() if self.copy else a

    def _observation(self) -> dict[str, Any]:
        s = self._state
        return {
            "observation": {
                "board": self._out(s.planes),
                "hand": self._out(s.hand),
                "scores": self._out(s.scores),
                "hand_sizes": self._out(s.hand_sizes),
                "bag_size": self._out(s.bag_size),
                "unseen": self._out(s.unseen),
            },
            "action_mask": self._out(s.mask),
        }

    def _info(self) -> dict[str, Any]:
        s = self._state
        every = np.ones(self.num_envs, bool)
        return {
            "game_seed": s.game_seeds.copy(),
            "_game_seed": every,
            "seat": s.observer.copy(),
            "_seat": every,
            "rewards": s.rewards.copy(),
            "_rewards": every,
        }

    def _run(self, resets: np.ndarray, actions: np.ndarray) -> None:
        def part(t: int) -> Any:
            lo, hi = self._ranges[t]
            args = (resets, self._specs, self.learner, self.max_turns, self.rules.opening_code)
            return self._kernel(self._state, lo, hi, actions, *args, self._scratch[t])

        if self._pool is None:
            grown = [part(0)]
        else:
            grown = list(self._pool.map(part, range(len(self._ranges))))
        for t, (moves, values, rmoves) in enumerate(grown):
            sc = self._scratch[t]
            if moves.shape != sc.moves.shape or rmoves.shape != sc.rmoves.shape or values.shape != sc.values.shape:
                self._scratch[t] = _kv.Scratch(sc.cross, moves, values, rmoves, *sc[4:])

    # -- the Gymnasium API ---------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Deal new games: with ``seed``, env ``i``'s first game of that seed; without, each
        env's next episode (the first call draws a seed from the operating system).
        ``options={"reset_mask": bool[N]}`` resets only those envs (their next episode)."""
        s = self._state
        mask = None if options is None else options.get("reset_mask")
        if options is not None and set(options) - {"reset_mask"}:
            raise ValueError(
                f"unknown reset options {sorted(set(options) - {'reset_mask'})}; VectorEnv takes reset_mask"
            )
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape != (self.num_envs,) or mask.dtype != bool:
                raise ValueError(
                    f"reset_mask must be a bool array of shape ({self.num_envs},), not {mask.dtype} {mask.shape}"
                )
        if seed is not None or not self._started:
            base = (
                check_seed(seed) if seed is not None else int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
            )
            if mask is not None and self._started:
                raise ValueError("reset(seed=...) reseeds every env: pass seed or reset_mask, not both")
            s.seeds[:] = seeds_for(np.uint64(base), 0, self.num_envs)
            s.episodes[:] = 0
            self._np_random_seed = base
            resets = np.ones(self.num_envs, np.uint8)
        else:
            resets = np.ones(self.num_envs, np.uint8) if mask is None else np.where(mask, 1, _kv.KEEP).astype(np.uint8)
            s.episodes[resets == 1] += np.uint64(1)
        self._started = True
        self._run(resets, self._actions)
        return self._observation(), self._info()

    def step(self, actions: Any) -> tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Take ``actions`` (int[N]: env ``i``'s action for its player to move; ignored
        for an env whose episode ended at the last step, which is reset instead), let the
        opponents play: ``(observations, rewards, terminations, truncations, infos)``.

        Raises IllegalMoveError, naming the first env, when an action is not in its mask;
        TypeError/ValueError for a malformed array. Nothing changes then."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = self._check_actions(actions)
        self._resets[:] = 0
        self._run(self._resets, a)
        s = self._state
        return (
            self._observation(),
            s.reward.copy() if self.copy else s.reward,
            self._out(s.terminated),
            self._out(s.truncated),
            self._info(),
        )

    def _check_actions(self, actions: Any) -> np.ndarray:
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), not {a.shape}")
        if a.dtype == bool or not np.issubdtype(a.dtype, np.integer):
            raise TypeError(f"actions must be integers, not {a.dtype}")
        first, bad = _kv.check_actions(self._state, np.ascontiguousarray(a, np.int64), self._actions)
        if first >= 0:
            more = f" (and {bad - 1} more envs)" if bad > 1 else ""
            inside = 0 <= a[first] < self.n_actions
            what = "not legal now" if inside else "outside 0.." + str(self.n_actions - 1)
            raise IllegalMoveError(f"env {first}: action {int(a[first])} is {what}{more}")
        return self._actions

    def legal_actions(self) -> tuple[np.ndarray, np.ndarray]:
        """The legal actions as a list per env, for policies that score only those:
        ``(actions, counts)``, ``actions`` int64[N, K] (env ``i``'s first ``counts[i]``
        entries, ascending; the rest -1), ``counts`` int64[N], K the largest count now.
        The same actions as the ones of the mask."""
        s = self._state
        counts = s.nlegal.copy()
        k = int(counts.max(initial=0))
        if k <= s.legal.shape[1]:
            actions = s.legal[:, :k].astype(np.int64)
            actions[np.arange(k) >= counts[:, None]] = np.iinfo(np.int64).max
            actions.sort(axis=1)
            actions[actions == np.iinfo(np.int64).max] = -1
            return actions, counts
        actions = np.full((self.num_envs, k), -1, np.int64)
        for i in range(self.num_envs):
            row = np.flatnonzero(s.mask[i])
            actions[i, : row.size] = row
        return actions, counts

    def sample_actions(self) -> np.ndarray:
        """int64[N]: a uniformly random legal action for each env (0 for an env about to
        be reset), from the env's game seed and a call counter: the same draws whatever
        N or the threads."""
        out = np.empty(self.num_envs, np.int64)
        _kv.sample_masked(self._state, self._draws, out)
        self._draws += 1
        return out

    def close_extras(self, **kwargs: Any) -> None:
        """Stop the worker threads."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
