"""The batched environment: N games stepped by one call into a numba kernel.

:class:`VectorEnv` keeps N games in numpy arrays and follows Gymnasium's ``VectorEnv``
conventions (arrays with a leading axis of N, autoreset mode ``NEXT_STEP``). Its
observation arrays and tile actions are those of :class:`~qwirkle_core.env.raw_env`
(a policy trained on one runs on the other), in a flat ``Dict``; with
``actions="moves"`` an action is an index into a list of whole moves with features
(:mod:`.movelist`). The built-in opponents play inside the kernel, so a step returns
when every env's learner is to move again. See docs/env.md.

>>> from qwirkle_core.env import VectorEnv
>>> envs = VectorEnv(256, opponents=["greedy"], window=40, actions="moves", reward="margin")
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
from .._compiling import compiling, vector_notice
from .._kernels import vector as _kv
from .._kernels.agents import bind_for, bind_leaves
from .._kernels.batch import seeds_for
from .._kernels.layout import AGENT_IDS, G_CURRENT, G_OVER, G_SCORE, G_WINNER
from .._kernels.movelist import MOVE_ROOM, new_move_scratch
from .._kernels.net import new_net_scratch
from ..batch.players import resolve_agents
from ..errors import AgentError
from ..game.agents import spec_row
from ..game.game import MAX_TURNS
from ..game.rules import Rules
from .aec import WINDOW, action_count, check_window
from .movelist import INPUT_NAMES, K_MOVES, flat_observation_space, moves_of

__all__ = ["REWARDS", "VectorEnv"]

MIN_ENVS_PER_THREAD = 64  # fewer envs a thread: handing them out costs more than it saves
_PLAIN = {AGENT_IDS["random"], AGENT_IDS["greedy"]}
_HEURISTIC = _PLAIN | {AGENT_IDS["heuristic"]}
REWARDS = {"points": _kv.R_POINTS, "margin": _kv.R_MARGIN, "win": _kv.R_WIN}
"""The reward options: a seat's reward over an episode sums to its final score, its
final margin (score minus the best other score) or its outcome (+1 won, 0 tied for the
best score or truncated, -1 lost)."""
_OBS_KEYS = ("board", "hand", "scores", "hand_sizes", "bag_size", "unseen")


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer over a uint64 array (wrapping arithmetic): the pools' draws."""
    x = x.astype(np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    out: np.ndarray = x ^ (x >> np.uint64(31))
    return out


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
        and mask are those of the player to move, ``info["seat"]``). Else one agent per
        other seat: built-in agents (``"greedy"``, ``"heuristic"``, ``"mc:playouts=32"``,
        ...) play inside the kernel; with ``actions="moves"`` a seat may also be a
        batched Python policy (see ``pool``). The learner sits in ``seat``.
    seat
        the learner's seat with opponents or a pool (0 by default).
    opening, max_turns
        as for :class:`~qwirkle_core.env.raw_env`.
    threads
        threads stepping ranges of envs (default 1; at most one per 64 envs); the
        results do not depend on it.
    copy
        False (default): :meth:`reset` and :meth:`step` return views of the
        environment's arrays, overwritten by the next call (nothing is copied: store
        them, e.g. in a rollout buffer, before stepping again); True: new arrays.
    actions
        ``"tiles"`` (default): an action puts down one tile, ends the placement,
        exchanges or passes (6 W^2 + 65 actions, the AEC environment's);
        ``"moves"``: an action is an index into the list of up to ``k`` whole moves
        of the observation (``move_features``, ``action_mask`` of ``k``).
    reward
        ``"points"`` (default), ``"margin"`` or ``"win"`` (see :data:`REWARDS`).
    k
        moves listed per observation with ``actions="moves"`` (default 128).
    pool
        ``actions="moves"`` only, instead of ``opponents``: the opponents each episode
        draws from, for each seat but ``seat`` of each env (uniformly, from the env's
        seed, episode and seat: the same whatever N or the threads): built-in agents (played inside the kernel) and batched Python policies.
        A batched policy is a callable ``policy(obs, envs) -> actions`` over the batched
        observation (this env's ``obs`` dict of arrays, observed by the seat it plays)
        and ``envs`` bool[N] (the envs where it is to move), returning int[N] listed
        move indices (read where ``envs``); it is called once per step and round of
        turns on the whole batch, never per env. ``players`` is then required.
        ``pool_weights``: how often each entry is drawn (non-negative, not all 0;
        default equal). :meth:`set_pool` and :meth:`add_opponent` change the pool
        between steps (a league), ``info["opponents"]`` names who each env drew.
    scorer_inputs
        ``actions="moves"`` only: also observe ``move_inputs``, the move scorer's
        input rows of the listed moves (the ``net`` agent's, what
        :class:`~qwirkle_core.env.sb3.MovePolicy` reads).

    Observations, rewards, infos
    ----------------------------
    ``obs``: a non-nested ``Dict`` (:func:`.movelist.flat_observation_space`):
    ``board`` int8[N, 13, W, W], ``hand`` int8[N, 6, 13], ``scores`` int32[N, P] and
    ``hand_sizes`` int8[N, P] (the observer first), ``bag_size`` int32[N, 1], ``unseen``
    int8[N, 36], ``action_mask`` int8[N, A] (A = 6 W^2 + 65, or ``k``), and with
    ``actions="moves"`` ``move_features`` float32[N, k, FEATURES] (columns
    :data:`.movelist.FEATURE_NAMES`) and, with ``scorer_inputs``, ``move_inputs``
    float32[N, k, len(INPUT_NAMES)] (columns :data:`.movelist.INPUT_NAMES`; rows past
    the listed moves 0). :meth:`action_masks` gives the mask as bool.

    ``reward`` float32[N]: the learner's reward (self-play: that of the seat that acted
    in the step). ``info``: ``seat`` int64[N] the seat observed (to act next);
    ``rewards`` float32[N, P] each seat's reward in the step, by seat number (each
    seat's value change since it was last credited: a seat's column summed over the
    steps of an episode is its final score, margin or outcome; in self-play, seat
    ``q``'s reward for its move is the sum of ``rewards[:, q]`` from that step to its
    next move); ``game_seed`` uint64[N]; at the end of an episode (masked by
    ``_final_scores``) ``final_scores`` int32[N, P] by seat and ``winner`` int64[N]
    (the seat, -1 a tie, -2 truncated); ``autoreset`` bool[N]: the env's next step
    deals its next game and ignores its action (a loop that learns from transitions
    leaves that step out: it is no decision); from :meth:`step`, ``illegal_action``
    bool[N] (below); with opponents or a pool, ``opponents`` (str[N], object array):
    the labels of the env's other seats in this game, in seat order, comma-separated.

    Notes
    -----
    Env ``i``'s game of episode ``e`` is ``qwirkle_core.Game(seed=game_seed(game_seed(S,
    i), e))``, ``S`` the seed of the last ``reset(seed=S)``; its opponents draw from that
    game's agent stream, as in :class:`~qwirkle_core.env.QwirkleGymEnv`. Autoreset
    (``NEXT_STEP``): the step after the one that ended an episode ignores that env's
    action, deals its next game and returns reward 0 (points an opponent scores in an
    opening played then are credited at the learner's next step, so the sums above
    hold). An action outside its env's mask (an integer out of range included) changes
    nothing in that env, as in :class:`~qwirkle_core.env.QwirkleGymEnv`: its observation,
    mask and game stay as they were, its rewards are 0, neither flag is set and
    ``info["illegal_action"][i]`` is True; the other envs step as usual. A batched
    policy's unlisted choice or malformed answer raises AgentError after the learner's
    actions were applied (the batch is then mid-step: reset it).
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
        copy: bool = False,
        actions: str = "tiles",
        reward: str = "points",
        k: int = K_MOVES,
        pool: Iterable[Any] | None = None,
        pool_weights: Iterable[float] | None = None,
        scorer_inputs: bool = False,
    ) -> None:
        self.num_envs = check_int(num_envs, "num_envs", 1)
        if actions not in ("tiles", "moves"):
            raise ValueError(f"actions must be 'tiles' or 'moves', not {actions!r:.60}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r:.60}")
        self.actions = actions
        self.reward_kind = reward
        self.k = check_int(k, "k", 1, 4096) if actions == "moves" else 0
        moves = actions == "moves"
        if pool is not None and not moves:
            raise ValueError("pool takes actions='moves'")
        if pool is not None and opponents is not None:
            raise ValueError("pass opponents or pool, not both")
        if pool_weights is not None and pool is None:
            raise ValueError("pool_weights takes a pool")
        if not isinstance(scorer_inputs, bool):
            raise TypeError(f"scorer_inputs must be True or False, not {scorer_inputs!r:.60}")
        if scorer_inputs and not moves:
            raise ValueError("scorer_inputs takes actions='moves'")
        self.scorer_inputs = scorer_inputs
        self._entries: list[tuple[np.ndarray | None, Any]] = []  # (spec row, batched policy)
        self._labels: list[str] = []  # each entry's label
        if pool is not None:
            if players is None:
                raise ValueError("a pool needs players")
            n_players = check_int(players, "players", 2, 6)
            self._add_entries(pool)
        elif opponents is None:
            n_players = 2 if players is None else check_int(players, "players", 2, 6)
        else:
            self._add_entries(opponents, python=moves)
            n_players = len(self._entries) + 1
            if players is not None and check_int(players, "players", 2, 6) != n_players:
                raise ValueError(f"players={players} but {n_players - 1} opponents make {n_players} seats")
            if not 2 <= n_players <= 6:
                raise ValueError(f"1 to 5 opponents make a game of 2 to 6 seats, not {n_players - 1}")
        # the pool's entries drawn from (an entry stays in _entries while a game may seat it)
        self._drawn = np.arange(len(self._entries), dtype=np.int64)
        self._cumulative = self._cumulative_weights(pool_weights, len(self._entries))
        self._pooled = pool is not None
        self.rules = Rules(players=n_players, opening=opening)
        self.window = check_window(window)
        self.max_turns = check_int(max_turns, "max_turns", 1)
        self.self_play = opponents is None and pool is None
        self.learner = -1 if self.self_play else check_int(seat, "seat", 0, n_players - 1)
        self.threads = check_int(threads, "threads", 1, max(1, os.cpu_count() or 1))
        if not isinstance(copy, bool):
            raise TypeError(f"copy must be True or False, not {copy!r:.60}")
        self.copy = copy
        builtin = [row for row, _ in self._entries if row is not None]
        ids = {int(row[0]) for row in builtin}
        if moves:
            self._kernel: Any = self._moves_kernel()
        else:
            specs = np.stack([spec_row("greedy")] * n_players) if self.self_play else np.stack([builtin[0], *builtin])
            self._specs = specs
            self._kernel = (
                _kv.step_self
                if self.self_play
                else _kv.step_plain
                if ids <= _PLAIN
                else _kv.step_heuristic
                if ids <= _HEURISTIC
                else _kv.step_any
            )
        search = self._kernel in (_kv.step_any, _kv.moves_any) and AGENT_IDS["search"] in ids
        self._search = search
        if builtin:  # a search's tables, the net's weights, a search with eval net: its ranking too
            bind_for(np.stack(builtin))
        if scorer_inputs:
            bind_leaves()
        self.n_actions = self.k if moves else action_count(self.window)
        self.single_observation_space = flat_observation_space(
            n_players, self.window, actions, max(self.k, 1), scorer_inputs
        )
        self.single_action_space = spaces.Discrete(self.n_actions)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._state = _kv.new_vec_state(self.num_envs, n_players, self.window, self.k, REWARDS[reward])
        workers = max(1, min(self.threads, self.num_envs // MIN_ENVS_PER_THREAD))
        with compiling(*vector_notice(self._kernel)):  # the first to compile says the mode's estimate
            self._scratch = [_kv.new_scratch(search, self.window) for _ in range(workers)]
            self._mscratch = [new_move_scratch(MOVE_ROOM) for _ in range(workers)] if moves else []
            self._nscratch = [new_net_scratch() for _ in range(workers)] if scorer_inputs else []
            if not moves:
                _kv.bind_advance(self._state, self._scratch[0])
        bounds = np.linspace(0, self.num_envs, workers + 1).astype(np.int64)
        self._ranges = [(int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]
        self._pool = ThreadPoolExecutor(workers) if workers > 1 else None
        self._started = False
        self._draws = 0
        self._resets = np.zeros(self.num_envs, np.uint8)
        self._actions = np.zeros(self.num_envs, np.int64)
        self._active = np.ones(self.num_envs, np.uint8)
        self._np_random_seed: int | None = None
        # actions="moves": who plays each seat of each env (the pool's entry, -1 the learner)
        self._roles = np.full((self.num_envs, n_players), _kv.ROLE_LEARNER, np.int8)
        self._seat_entry = np.full((self.num_envs, n_players), -1, np.int64)
        self._seat_specs = np.zeros((self.num_envs, n_players, len(spec_row("greedy"))), np.float64)
        self._opponents = np.full(self.num_envs, "", object)  # the labels of each env's other seats
        self._inputs = np.zeros((self.num_envs, self.k, len(INPUT_NAMES)), np.float32) if scorer_inputs else np.zeros(0)
        self._svalues = [np.zeros(max(self.k, 1), np.float64) for _ in self._scratch]
        if not self.self_play:
            self._opponents[:] = ",".join(self._labels)
        if moves and not self.self_play and not self._pooled:
            others = [q for q in range(n_players) if q != self.learner]
            for j, q in enumerate(others):
                self._seat_entry[:, q] = j
            self._assign(np.ones(self.num_envs, bool))

    def _add_entries(self, agents: Any, python: bool = True) -> list[int]:
        """Add (spec row, None) per built-in agent, (None, policy) per batched policy to
        the entries, with their labels; returns their indices."""
        items: list[Any] = agents.split(",") if isinstance(agents, str) else list(agents)
        if not items:
            raise AgentError("no opponents given")
        added: list[tuple[np.ndarray | None, Any, str]] = []
        for item in items:
            if python and callable(item) and not isinstance(item, (str, type)):
                label = getattr(item, "label", None) or getattr(item, "__name__", None) or type(item).__name__
                added.append((None, item, str(label)))
                continue
            (player,) = resolve_agents([item])
            if player.spec is None:
                how = "with actions='moves' as a batched policy" if not python else "as a batched policy callable"
                raise AgentError(f"VectorEnv plays built-in opponents, or {how}; not {player.label}")
            added.append((player.spec.row(), None, player.label))
        first = len(self._entries)
        self._entries.extend((row, policy) for row, policy, _ in added)
        self._labels.extend(label for _, _, label in added)
        return list(range(first, len(self._entries)))

    @staticmethod
    def _cumulative_weights(weights: Iterable[float] | None, n: int) -> np.ndarray:
        """float64[n]: the cumulative draw probabilities of ``n`` entries (checked)."""
        if weights is None:
            return np.arange(1, n + 1, dtype=np.float64) / max(n, 1)
        try:
            w = np.asarray(list(weights), np.float64)
        except (TypeError, ValueError):
            raise ValueError("pool weights must be numbers") from None
        if w.shape != (n,):
            raise ValueError(f"{n} pool entries need {n} weights, not {w.size}")
        if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise ValueError("pool weights must be finite, non-negative and not all 0")
        out: np.ndarray = np.cumsum(w) / w.sum()
        out[-1] = 1.0
        return out

    def _moves_kernel(self) -> Any:
        """The move-list kernel the built-in entries need (random and greedy: the plain one)."""
        ids = {int(row[0]) for row, _ in self._entries if row is not None}
        return _kv.moves_plain if ids <= _PLAIN else _kv.moves_any

    @property
    def pool(self) -> list[tuple[str, float]]:
        """The pool new games draw their opponents from: ``(label, probability)`` per
        entry (the fixed opponents, one per seat, without a pool)."""
        probs = np.diff(self._cumulative, prepend=0.0)
        return [(self._labels[j], float(p)) for j, p in zip(self._drawn, probs)]

    def set_pool(self, pool: Iterable[Any] | str, weights: Iterable[float] | None = None) -> None:
        """Replace the pool (``pool=`` of the constructor; a league's next round): games
        dealt from now on draw from ``pool`` with ``weights`` (default equal); the games
        in play keep their opponents. Nothing changes when an entry is refused."""
        self._change_pool(lambda: self._add_entries(pool), weights, replace=True)

    def add_opponent(self, agent: Any, weight: float | None = None) -> None:
        """Add one opponent to the pool (a snapshot of the learner, ``"net:weights=PATH"``,
        or any entry ``pool=`` takes). ``weight``: its draw weight against the others'
        (default: the mean of theirs, so every entry's chance stays in proportion)."""
        probs = np.diff(self._cumulative, prepend=0.0)
        w = float(np.mean(probs)) if weight is None else weight
        self._change_pool(lambda: self._add_entries([agent]), [*probs, w], replace=False)

    def _change_pool(self, add: Any, weights: Any, replace: bool) -> None:
        if not self._pooled:
            raise ValueError("set_pool and add_opponent take a VectorEnv made with pool=")
        entries, labels = list(self._entries), list(self._labels)
        try:
            added = add()
            drawn = np.asarray(added if replace else [*self._drawn, *added], np.int64)
            cumulative = self._cumulative_weights(weights, len(drawn))
            kernel = self._moves_kernel()
        except Exception:
            self._entries, self._labels = entries, labels
            raise
        ids = {int(row[0]) for row, _ in self._entries if row is not None}
        search = kernel is _kv.moves_any and AGENT_IDS["search"] in ids
        if kernel is not self._kernel or (search and not self._search):  # stronger opponents than before
            with compiling(*vector_notice(kernel)):
                self._scratch = [_kv.new_scratch(search, self.window) for _ in self._scratch]
            self._kernel, self._search = kernel, search
        rows = [row for row, _ in self._entries if row is not None]
        if rows:
            bind_for(np.stack(rows))
        self._drawn, self._cumulative = drawn, cumulative

    def _assign(self, envs: np.ndarray) -> None:
        """Set the roles and agent specs of the seats of ``envs`` (bool[N]) from their
        pool entries; with a pool, draw the entries first for their next game."""
        s = self._state
        idx = np.flatnonzero(envs)
        if idx.size == 0:
            return
        if self._pooled:
            nxt = s.episodes[idx] + np.where(s.pending[idx] == 1, np.uint64(1), np.uint64(0))
            for q in range(self._roles.shape[1]):
                if q == self.learner:
                    continue
                draw = _mix(s.seeds[idx] ^ _mix(nxt * np.uint64(8) + np.uint64(q)))
                u = (draw >> np.uint64(11)).astype(np.float64) * 2.0**-53  # uniform in [0, 1)
                self._seat_entry[idx, q] = self._drawn[np.searchsorted(self._cumulative, u, side="right")]
        seated = self._seat_entry[idx]
        for j in np.unique(seated[seated >= 0]):  # the entries seated, not every one ever added
            row = self._entries[j][0]
            rows, seats = np.nonzero(seated == j)
            self._roles[idx[rows], seats] = _kv.ROLE_KERNEL if row is not None else _kv.ROLE_POLICY
            if row is not None:
                self._seat_specs[idx[rows], seats] = row
        names = np.array([*self._labels, ""], object)
        others = [q for q in range(self._roles.shape[1]) if q != self.learner]
        label = names[self._seat_entry[idx, others[0]]]
        for q in others[1:]:
            label = label + "," + names[self._seat_entry[idx, q]]
        self._opponents[idx] = label

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
        obs = {
            "board": self._out(s.planes),
            "hand": self._out(s.hand),
            "scores": self._out(s.scores),
            "hand_sizes": self._out(s.hand_sizes),
            "bag_size": self._out(s.bag_size),
            "unseen": self._out(s.unseen),
        }
        if self.actions == "moves":
            obs["move_features"] = self._out(s.feats)
            obs["action_mask"] = self._out(s.lmask)
            if self.scorer_inputs:
                self._fill_inputs()
                obs["move_inputs"] = self._out(self._inputs)
        else:
            obs["action_mask"] = self._out(s.mask)
        return obs

    def _fill_inputs(self) -> None:
        """The scorer's input rows of every env's listed moves into ``_inputs``."""

        def part(t: int) -> None:
            lo, hi = self._ranges[t]
            ns = self._nscratch[t]
            _kv.listed_inputs(self._state, lo, hi, self._scratch[t], self._svalues[t], ns[11], ns[12], self._inputs)

        if self._pool is None:
            part(0)
        else:
            list(self._pool.map(part, range(len(self._ranges))))

    def _info(self, illegal: np.ndarray | None = None) -> dict[str, Any]:
        """The info dict; ``illegal`` (a step's): ``illegal_action``."""
        s = self._state
        every = np.ones(self.num_envs, bool)
        ended = s.pending.astype(bool)
        info: dict[str, Any] = {
            "game_seed": s.game_seeds.copy(),
            "_game_seed": every,
            "seat": s.observer.copy(),
            "_seat": every,
            "rewards": s.rewards.astype(np.float32),
            "_rewards": every,
            "autoreset": ended.copy(),
            "_autoreset": every,
        }
        if illegal is not None:
            info["illegal_action"] = illegal
            info["_illegal_action"] = every
        if not self.self_play:
            info["opponents"] = self._opponents.copy()
            info["_opponents"] = every
        if ended.any():
            players = s.scores.shape[1]
            info["final_scores"] = s.gmeta[:, G_SCORE : G_SCORE + players].astype(np.int32)
            info["_final_scores"] = ended
            info["winner"] = np.where(s.gmeta[:, G_OVER] != 0, s.gmeta[:, G_WINNER], -2)
            info["_winner"] = ended
        return info

    def action_masks(self) -> np.ndarray:
        """bool[N, A]: the legal actions of each env now (sb3-contrib's convention; a
        new array)."""
        s = self._state
        mask: np.ndarray = s.lmask if self.actions == "moves" else s.mask
        return mask.astype(bool)

    def _run(self, resets: np.ndarray, actions: np.ndarray) -> None:
        moves = self.actions == "moves"

        def part(t: int) -> Any:
            lo, hi = self._ranges[t]
            if moves:
                roles = (resets, self._seat_specs, self._roles, self.max_turns, self.rules.opening_code)
                return self._kernel(self._state, lo, hi, actions, *roles, self._scratch[t], self._mscratch[t])
            args = (resets, self._specs, self.learner, self.max_turns, self.rules.opening_code)
            return self._kernel(self._state, lo, hi, actions, *args, self._scratch[t])

        if self._pool is None:
            grown = [part(0)]
        else:
            grown = list(self._pool.map(part, range(len(self._ranges))))
        for t, out in enumerate(grown):
            sc = self._scratch[t]
            if moves:
                ms, mv, values = out
                self._mscratch[t] = ms
                if mv.shape != sc.moves.shape or values.shape != sc.values.shape:
                    self._scratch[t] = _kv.Scratch(sc.cross, mv, values, *sc[3:])
                continue
            mv, values, rmoves = out
            if mv.shape != sc.moves.shape or rmoves.shape != sc.rmoves.shape or values.shape != sc.values.shape:
                self._scratch[t] = _kv.Scratch(sc.cross, mv, values, rmoves, *sc[4:])

    def _run_moves(self, resets: np.ndarray, actions: np.ndarray) -> None:
        """A step in the move-list mode: the kernel, then the rounds of the batched
        policies' turns (each policy called once a round on the whole batch) until a
        learner seat is to move (or the game ended) in every env."""
        s = self._state
        s.rewards[:] = 0
        dealt = (resets == 1) | ((resets == 0) & (s.pending == 1))
        if self._pooled:
            self._assign(dealt)
        self._run(resets, actions)
        policies = [(j, f) for j, (row, f) in enumerate(self._entries) if row is None]
        if not policies:
            return
        self._policy_rounds(policies)
        # a policy's move in the step that dealt a game is credited at the learner's
        # first step, as the kernel seats' are (unless the game already ended)
        undo = dealt & (s.pending == 0)
        s.credit[undo] = 0
        s.rewards[undo] = 0

    def _policy_rounds(self, policies: list[tuple[int, Any]]) -> None:
        """Play the batched policies' turns, a round at a time, until no env has a
        policy's seat to move."""
        s = self._state
        keep = np.full(self.num_envs, _kv.KEEP, np.uint8)
        rows = np.arange(self.num_envs)
        while True:
            current = s.gmeta[:, G_CURRENT]
            entry = self._seat_entry[rows, current]
            due = (self._roles[rows, current] == _kv.ROLE_POLICY) & (s.pending == 0)
            if not due.any():
                return
            todo = np.zeros(self.num_envs, np.int64)
            obs = self._observation()
            for j, policy in policies:
                mine = due & (entry == j)
                if mine.any():
                    chosen = np.asarray(policy(obs, mine))
                    if chosen.shape != (self.num_envs,) or not np.issubdtype(chosen.dtype, np.integer):
                        raise AgentError(
                            f"a batched policy must return int[{self.num_envs}], not {chosen.dtype} {chosen.shape}"
                        )
                    todo[mine] = chosen[mine]
            unlisted = np.zeros(self.num_envs, bool)
            if _kv.check_listed(s, todo, self._actions, due.astype(np.uint8), unlisted):
                first = int(np.argmax(unlisted))
                raise AgentError(f"a batched policy chose move {int(todo[first])} of env {first}, not listed")
            self._run(np.where(due, 0, keep).astype(np.uint8), self._actions)

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
            s.pending[:] = 0
            self._np_random_seed = base
            resets = np.ones(self.num_envs, np.uint8)
        else:
            resets = np.ones(self.num_envs, np.uint8) if mask is None else np.where(mask, 1, _kv.KEEP).astype(np.uint8)
            s.episodes[resets == 1] += np.uint64(1)
            s.pending[resets == 1] = 0
        self._started = True
        if self.actions == "moves":
            self._run_moves(resets, self._actions)
        else:
            self._run(resets, self._actions)
        return self._observation(), self._info()

    def step(self, actions: Any) -> tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Take ``actions`` (int[N]: env ``i``'s action for its player to move; ignored
        for an env whose episode ended at the last step, which is reset instead), let the
        opponents play: ``(observations, rewards, terminations, truncations, infos)``.

        An env whose action is outside its mask is left as it was (reward 0, neither
        flag, ``info["illegal_action"][i]`` True). Raises TypeError/ValueError for a
        malformed array (nothing changes then)."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a, illegal = self._check_actions(actions)
        s = self._state
        self._resets[:] = 0
        if illegal.any():  # left as they are; their outputs of the last step cleared
            self._resets[illegal] = _kv.KEEP
            s.reward[illegal] = 0
            s.rewards[illegal] = 0
        if self.actions == "moves":
            acting = s.observer.copy()
            self._run_moves(self._resets, a)
            reward = s.rewards[np.arange(self.num_envs), acting if self.self_play else self.learner].astype(np.float32)
        else:
            self._run(self._resets, a)
            reward = s.reward.copy() if self.copy else s.reward
        return (
            self._observation(),
            reward,
            self._out(s.terminated),
            self._out(s.truncated),
            self._info(illegal),
        )

    def _check_actions(self, actions: Any) -> tuple[np.ndarray, np.ndarray]:
        """The actions to step (those of the envs to reset and of the illegal ones 0)
        and bool[N], the envs whose action is outside the mask."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), not {a.shape}")
        if a.dtype == bool or not np.issubdtype(a.dtype, np.integer):
            raise TypeError(f"actions must be integers, not {a.dtype}")
        a64 = np.ascontiguousarray(a, np.int64)  # uint64 beyond int64 wraps to < 0: illegal too
        illegal = np.zeros(self.num_envs, bool)
        if self.actions == "moves":
            _kv.check_listed(self._state, a64, self._actions, self._active, illegal)
        else:
            _kv.check_actions(self._state, a64, self._actions, illegal)
        return self._actions, illegal

    def legal_actions(self) -> tuple[np.ndarray, np.ndarray]:
        """The legal actions as a list per env, for policies that score only those:
        ``(actions, counts)``, ``actions`` int64[N, K] (env ``i``'s first ``counts[i]``
        entries, ascending; the rest -1), ``counts`` int64[N], K the largest count now.
        The same actions as the ones of the mask."""
        s = self._state
        if self.actions == "moves":
            counts = s.nlisted.copy()
            k = int(counts.max(initial=0))
            actions = np.broadcast_to(np.arange(k), (self.num_envs, k)).copy()
            actions[actions >= counts[:, None]] = -1
            return actions, counts
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
        if self.actions == "moves":
            _kv.sample_listed(self._state, self._draws, out)
        else:
            _kv.sample_masked(self._state, self._draws, out)
        self._draws += 1
        return out

    def listed_moves(self, i: int) -> list[Any]:
        """Env ``i``'s listed moves as :class:`~qwirkle_core.Move` (``actions="moves"``;
        entry ``j`` is action ``j``), for display and tests."""
        if self.actions != "moves":
            raise ValueError("listed_moves needs actions='moves'")
        i = check_int(i, "i", 0, self.num_envs - 1)
        s = self._state
        n = int(s.nlisted[i])
        return moves_of(s.bmeta[i], s.lmoves[i, :n], s.lkind[i, :n])

    def close_extras(self, **kwargs: Any) -> None:
        """Stop the worker threads."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
