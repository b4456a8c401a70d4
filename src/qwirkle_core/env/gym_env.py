"""One seat of Qwirkle as a single-agent Gymnasium environment (:class:`QwirkleGymEnv`),
registered as ``qwirkle_core/Qwirkle-v0``. Needs ``pip install 'qwirkle-core[rl]'``.

Its tile actions and observation arrays are those of the AEC environment (:mod:`.aec`);
its move-list mode is the kernel's (:mod:`.movelist`), as in
:class:`~qwirkle_core.env.VectorEnv`. See docs/env.md ("The Gymnasium wrapper").

>>> import gymnasium
>>> import qwirkle_core.env
>>> e = gymnasium.make("qwirkle_core/Qwirkle-v0", opponents=("greedy",), actions="moves", reward="margin")
>>> obs, info = e.reset(seed=1)
>>> obs, reward, terminated, truncated, info = e.step(0)   # the first listed move
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
from gymnasium import spaces

from .._checks import check_int, check_seed
from ..batch.players import Player, Seat, check_time_limit, resolve_agents
from ..errors import IllegalMoveError
from ..game.game import MAX_TURNS, Game
from ..game.move import Move
from ..game.rules import Rules
from .aec import RENDER_MODES, WINDOW, Table, check_render_mode, check_window
from .movelist import K_MOVES, MoveLister, flat_observation_space

__all__ = ["ACTION_MODES", "OBSERVATION_MODES", "REWARDS", "QwirkleGymEnv", "outcome"]

REWARDS = ("points", "margin", "win")
ACTION_MODES = ("tiles", "moves")
OBSERVATION_MODES = ("dict", "flat", "nested")


def check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    """``value`` checked to be one of ``choices`` (ValueError naming ``name``)."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, not {value!r:.60}")
    return value


def outcome(scores: tuple[int, ...] | list[int], seat: int) -> int:
    """+1 when ``seat`` has the best score alone, 0 when it shares it, -1 otherwise."""
    best_other = max(s for q, s in enumerate(scores) if q != seat)
    return int(np.sign(scores[seat] - best_other)) if scores[seat] >= best_other else -1


class QwirkleGymEnv(gymnasium.Env[Any, Any]):  # actions: ints (Discrete samples numpy ints)
    """One seat of Qwirkle as a single-agent Gymnasium environment; the other seats are
    played by ``opponents`` (built-in names such as ``"greedy"``, ``package.module:Name``
    specs or Python agents; one per other seat, so ``len(opponents) + 1`` players).
    Registered as ``qwirkle_core/Qwirkle-v0`` (``gymnasium.make`` takes these arguments).

    Attributes
    ----------
    seat
        the learner's seat (0 by default; the rules decide who opens).
    reward
        ``"points"`` (default): the learner's points; ``"margin"``: the change of its
        score minus the best other score; ``"win"``: +1, 0 or -1 at the end (a win, a tie
        for the best score, a loss; 0 for a truncated game), else 0. Each adds up over
        an episode to its final value (the points, the margin, the outcome), the
        opponents' points before the learner's first turn included. The same options
        as :class:`~qwirkle_core.env.VectorEnv`'s.
    actions
        ``"tiles"`` (default): one tile at a time, as :class:`raw_env`; ``"moves"``: an
        index into a list of up to ``k`` whole legal moves with a feature row each
        (``move_features``; :func:`qwirkle_core.env.movelist.move_list`, the kernel
        that :class:`~qwirkle_core.env.VectorEnv` uses).
    observation
        ``"dict"`` (default): one level of Box spaces, ``action_mask`` among them, as
        :class:`~qwirkle_core.env.VectorEnv` (what Stable-Baselines3's
        ``MultiInputPolicy`` and Gymnasium's wrappers take);
        ``"flat"``: one Box (those arrays flattened and concatenated in the order of the
        dict space, as ``gymnasium.spaces.flatten``); ``"nested"``: ``{"observation":
        {...}, "action_mask": ...}`` as the AEC environment.
    k
        the length of the move list (``actions="moves"``; 128 by default).
    time_limit
        seconds per move allowed to Python opponents (None: no limit).
    window, opening, max_turns, render_mode
        as for :class:`raw_env`.

    Notes
    -----
    An action outside the mask changes nothing: the same observation comes back with
    reward 0 and ``info["illegal_action"] = True`` (Gymnasium's checker and many
    libraries sample without the mask). :meth:`action_masks` returns the mask (the method
    sb3-contrib's ``MaskablePPO`` calls). The last step of an episode has in its info
    ``final_scores`` (int64[P], by seat), ``winner`` (a seat, -1 for a tie, -2 when
    truncated, as the VectorEnv) and ``outcome`` (the learner's +1/0/-1, 0 when truncated).
    An opponent that fails raises :class:`~qwirkle_core.AgentFailure`. Raises
    AgentError/TypeError/ValueError for bad arguments.
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 2}

    def __init__(
        self,
        opponents: Iterable[Any] | str = ("greedy",),
        seat: int = 0,
        window: int = WINDOW,
        opening: str = "largest_group",
        max_turns: int = MAX_TURNS,
        time_limit: float | None = None,
        render_mode: str | None = None,
        reward: str = "points",
        actions: str = "tiles",
        observation: str = "dict",
        k: int = K_MOVES,
    ) -> None:
        players = resolve_agents(opponents)
        rules = Rules(players=len(players) + 1, opening=opening)
        self.seat = check_int(seat, "seat", 0, len(players))
        self.time_limit = check_time_limit(time_limit)
        self.reward = check_choice(reward, "reward", REWARDS)
        self.actions = check_choice(actions, "actions", ACTION_MODES)
        self.observation = check_choice(observation, "observation", OBSERVATION_MODES)
        self.k = check_int(k, "k", 1, 4096)
        tiles = self.actions == "tiles"
        self._table = Table(rules, check_window(window), check_int(max_turns, "max_turns", 1), tiles=tiles)
        self.render_mode = check_render_mode(render_mode)
        self._dict_space = flat_observation_space(rules.players, self._table.window, self.actions, self.k)
        nested = spaces.Dict(
            {
                "observation": spaces.Dict({k: v for k, v in self._dict_space.spaces.items() if k != "action_mask"}),
                "action_mask": self._dict_space["action_mask"],
            }
        )
        self.action_space = spaces.Discrete(self._table.n_actions if tiles else self.k)
        self._lister = MoveLister(self.k)
        self.observation_space = {
            "dict": self._dict_space,
            "flat": spaces.flatten_space(self._dict_space),
            "nested": nested,
        }[self.observation]
        self._players: dict[int, Player] = dict(zip((q for q in range(rules.players) if q != self.seat), players))
        self._seats: dict[int, Seat] = {}
        self._listed: tuple[np.ndarray, np.ndarray, list[Move]] | None = None
        self._value = 0  # the reward's running value at the last step (points or margin)

    @property
    def game(self) -> Game:
        """The :class:`~qwirkle_core.Game` being played (do not change it; read it)."""
        return self._table.game

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Deal a new game (from ``seed``, or the next seed of the environment's
        generator; ``options={"game": g}`` as for :meth:`raw_env.reset`) and let the
        opponents play until it is the learner's turn. ``info["game_seed"]``: the
        game's seed. The opponents' points before the learner's first turn count in its
        first step's reward (``reward="margin"``)."""
        super().reset(seed=seed)
        game_seed = check_seed(seed) if seed is not None else int(self.np_random.integers(2**63))
        self._table.new_game(game_seed, options)
        self._value = self._running_value()
        self._seats = {q: p.seat(self.game.seed, q) for q, p in self._players.items()}
        self._opponents_play()
        return self._observe(), {"game_seed": self.game.seed}

    def _running_value(self) -> int:
        scores = self.game.scores
        if self.reward == "points":
            return scores[self.seat]
        if self.reward == "margin":
            return scores[self.seat] - max(s for q, s in enumerate(scores) if q != self.seat)
        return 0

    def _opponents_play(self) -> None:
        g, table = self.game, self._table
        while not g.is_over and g.current_player != self.seat and not table.truncated:
            self._seats[g.current_player].play(g, self.time_limit)
            table.sync()
        self._listed = None

    # -- the encoding ----------------------------------------------------------------------

    def move_list(self) -> tuple[np.ndarray, np.ndarray, list[Move]]:
        """``actions="moves"``: the learner's move list now, ``(features float32[k,
        FEATURES], mask bool[k], moves)`` (:func:`qwirkle_core.env.movelist.move_list`;
        all zero and no moves once the episode ended)."""
        if self._listed is None:
            g = self.game
            if g.is_over or self._table.truncated or g.current_player != self.seat:
                shape = self._dict_space["move_features"].shape
                assert shape is not None
                self._listed = (np.zeros(shape, np.float32), np.zeros(self.k, bool), [])
            else:
                self._listed = self._lister(g)
        return self._listed

    def _observe(self) -> Any:
        nested = self._table.observe(self.seat)
        if self.actions == "moves":
            features, mask, _ = self.move_list()
            nested["observation"]["move_features"] = features.copy()
            nested["action_mask"] = mask.astype(np.int8)
        if self.observation == "nested":
            return nested
        flat = {**nested["observation"], "action_mask": nested["action_mask"]}
        if self.observation == "flat":
            return spaces.flatten(self._dict_space, flat)
        return flat

    def action_masks(self) -> np.ndarray:
        """The learner's action mask as bool[n] (the method sb3-contrib's MaskablePPO calls)."""
        if self.actions == "tiles":
            return self._table.mask().astype(bool)
        return self.move_list()[1].copy()

    # -- stepping --------------------------------------------------------------------------

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Take ``action`` for the learner, then let the opponents play until it is the
        learner's turn again: ``(observation, reward, terminated, truncated, info)``."""
        table = self._table
        # An episode that ended already (a deal that outgrows a small window before the
        # learner's first turn): any action ends it, with the reward still owed.
        ended = self.game.is_over or table.truncated
        if not ended:
            try:
                if self.actions == "tiles":
                    table.check_action(action)
                else:
                    self._check_move_index(action)
            except IllegalMoveError:
                info: dict[str, Any] = {"illegal_action": True}
                return self._observe(), 0.0, False, False, info
            if self.actions == "tiles":
                committed, _ = table.apply(action)
            else:
                self._play_listed(int(action))
                committed = True
            if committed:
                self._opponents_play()
        terminated, truncated = self.game.is_over, table.truncated
        info = self._end_info(terminated) if terminated or truncated else {"illegal_action": False}
        value = self._running_value()
        reward = float(value - self._value)
        self._value = value
        if self.reward == "win" and (terminated or truncated):
            reward = float(info["outcome"])
        return self._observe(), reward, terminated, truncated, info

    def _end_info(self, terminated: bool) -> dict[str, Any]:
        scores = self.game.scores
        return {
            "illegal_action": False,
            "final_scores": np.array(scores, np.int64),
            "winner": self.game.winner if terminated else -2,
            "outcome": outcome(scores, self.seat) if terminated else 0,
        }

    def _check_move_index(self, action: Any) -> int:
        if isinstance(action, bool) or not hasattr(action, "__index__"):
            raise TypeError(f"an action is an int, not {action!r:.60}")
        a = int(action.__index__())
        if not 0 <= a < self.k or not self.move_list()[1][a]:
            raise IllegalMoveError(f"action {a} is not a listed move now")
        return a

    def _play_listed(self, a: int) -> None:
        move = self.move_list()[2][a]
        g = self.game
        if move.kind == "place":
            g.play(move)
        elif move.kind == "exchange":
            g.exchange(move.tiles)
        else:
            g.pass_turn()
        self._table.sync()
        self._listed = None

    def render(self) -> str | np.ndarray | None:
        """The board as text (``render_mode="ansi"``) or a picture (``"rgb_array"``)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        return self._table.render(self.render_mode)

    @property
    def origin(self) -> tuple[int, int]:
        """``(row, col)`` of window cell 0 this turn (see :attr:`raw_env.origin`)."""
        return (self._table.r0, self._table.c0)

    def encode(self, move: Move | str) -> list[int]:
        """The actions that play ``move`` for the learner; see docs/env.md. With
        ``actions="moves"``: ``[its index in the move list]``."""
        if self.actions == "moves":
            m = move if isinstance(move, Move) else Move.parse(move)
            listed = self.move_list()[2]
            if m not in listed:
                raise IllegalMoveError(f"{m} is not in the move list now")
            return [listed.index(m)]
        return self._table.encode(move)

    def describe(self, action: int) -> str:
        """``action`` in words (for the learner's hand and window, or its move list)."""
        if self.actions == "moves":
            listed = self.move_list()[2]
            a = int(action)
            return str(listed[a]) if 0 <= a < len(listed) else f"no move at index {a}"
        return self._table.describe(action)
