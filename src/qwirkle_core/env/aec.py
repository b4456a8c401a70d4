"""The PettingZoo AEC environment (``env``, ``raw_env``) and the tile-at-a-time encoding
that the single-seat Gymnasium environment (:mod:`.gym_env`) and
:class:`~qwirkle_core.env.VectorEnv` share. Needs ``pip install 'qwirkle-core[rl]'``.

The encoding (observation arrays, actions, rewards) is described in docs/env.md:

- an action puts down one tile (hand slot x cell of a fixed window around the board),
  ends the placement (``DONE``), exchanges a set of hand slots, or passes;
- ``action_mask`` is exact: 1 exactly for the actions that lead to a legal move;
- the reward of a seat is the points it scores (going-out bonus included), so its
  rewards over a game add up to its final score.

>>> from qwirkle_core.env import env
>>> e = env(players=2)
>>> e.reset(seed=1)
>>> for agent in e.agent_iter():
...     obs, reward, terminated, truncated, info = e.last()
...     action = None if terminated or truncated else e.action_space(agent).sample(obs["action_mask"])
...     e.step(action)
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .._checks import check_int, check_seed
from ..cli.play import board_text
from ..errors import IllegalMoveError
from ..game.game import MAX_TURNS, Game
from ..game.move import Move, MoveKind
from ..game.observation import Observation
from ..game.rules import Rules
from ..game.tiles import COPIES, NUM_TILE_TYPES, NUM_TILES, tile_code

__all__ = [
    "MIN_WINDOW",
    "WINDOW",
    "action_count",
    "check_window",
    "env",
    "observation_space",
    "raw_env",
]

Obs = dict[str, Any]
"""An observation: ``{"observation": {name: array}, "action_mask": int8[A]}`` (docs/env.md)."""

REACH = 5  # a legal placement lies at most 5 cells beyond the tiles' bounding box
MAX_SPAN = NUM_TILES  # no game spans more rows or columns than it has tiles (docs/rules.md)
WINDOW = MAX_SPAN + 2 * REACH  # 118: every cell of every legal move of every reachable position
MIN_WINDOW = 2 * REACH + 1
RENDER_MODES = ["ansi", "rgb_array"]
SLOTS = 6
PLANES = 13  # 6 colours, 6 shapes, tiles put down this turn
MAX_SCORE = 10_000  # above any reachable score: <= 108 placements of <= 84 points, +6
EXCHANGES = 63  # non-empty subsets of the 6 hand slots
_POPCOUNT = np.array([bin(b).count("1") for b in range(1, EXCHANGES + 1)])


def action_count(window: int = WINDOW) -> int:
    """The size of the action space for a ``window``: ``6 * window**2 + 65``."""
    return SLOTS * window * window + 1 + EXCHANGES + 1


def observation_space(players: int, window: int) -> spaces.Dict:
    """The observation space of one seat of a ``players``-seat game with a ``window``
    (docs/env.md): ``Dict(observation=Dict(board, hand, scores, hand_sizes, bag_size,
    unseen), action_mask)``."""
    w, n = window, players
    inner = spaces.Dict(
        {
            "board": spaces.Box(0, 1, (PLANES, w, w), np.int8),
            "hand": spaces.Box(0, 1, (SLOTS, PLANES), np.int8),
            "scores": spaces.Box(0, MAX_SCORE, (n,), np.int32),
            "hand_sizes": spaces.Box(0, SLOTS, (n,), np.int8),
            "bag_size": spaces.Box(0, NUM_TILES, (1,), np.int32),
            "unseen": spaces.Box(0, COPIES, (NUM_TILE_TYPES,), np.int8),
        }
    )
    return spaces.Dict({"observation": inner, "action_mask": spaces.Box(0, 1, (action_count(window),), np.int8)})


def _window_start(coords: list[int], w: int) -> tuple[int, bool]:
    """The first row (or column) of a window of ``w`` centred on ``coords`` with the
    margin of REACH on both sides, and whether it fits."""
    need = max(coords) - min(coords) + 1 + 2 * REACH
    return min(coords) - REACH - (w - need) // 2, need <= w


class Table:
    """A game plus the tiles put down so far in the current placement, and the
    encoding of observations and actions (shared by both environments)."""

    def __init__(self, rules: Rules, window: int, max_turns: int, tiles: bool = True) -> None:
        self.rules, self.window, self.max_turns = rules, window, max_turns
        self.tiles = tiles  # the tile actions' codes (not needed by the move-list mode)
        self.cells = window * window
        self.done = SLOTS * self.cells
        self.exchange0 = self.done + 1
        self.pass_ = self.exchange0 + EXCHANGES
        self.n_actions = self.pass_ + 1
        self.game = Game(seed=0, rules=rules)  # until the first reset
        self.sync()

    def new_game(self, seed: int, options: dict[str, Any] | None) -> None:
        """Deal ``Game(seed)``, or start from a copy of ``options["game"]``."""
        start = (options or {}).get("game")
        if start is None:
            self.game = Game(seed=seed, rules=self.rules)
        elif not isinstance(start, Game) or start.rules != self.rules or start.is_over:
            raise ValueError(f"options['game'] must be a qwirkle_core.Game in play with rules {self.rules}")
        else:
            self.game = start.copy()
        self.sync()

    def sync(self) -> None:
        """Recompute the turn's encoding after the game changed."""
        g = self.game
        self.partial: list[tuple[int, int, int, int]] = []  # (slot, row, col, tile) put down this turn
        self._obs: dict[int, Observation] = {}
        self._mask: np.ndarray | None = None
        board = g.board
        w = self.window
        (self.r0, fits_r), (self.c0, fits_c) = (_window_start([k[i] for k in board] or [0], w) for i in (0, 1))
        self.fits = fits_r and fits_c
        self.planes = np.zeros((PLANES, w, w), np.int8)
        if self.fits and board:
            rows, cols, tiles = (np.array(x, np.int64) for x in zip(*((r, c, t) for (r, c), t in board.items())))
            self.planes[tiles // 6, rows - self.r0, cols - self.c0] = 1
            self.planes[6 + tiles % 6, rows - self.r0, cols - self.c0] = 1
        self.hand = g.hand() if not g.is_over else ()
        if self.fits and self.tiles:
            a = g.legal_move_arrays()
            self.codes = np.where(
                a.tiles >= 0, ((a.rows - self.r0) * w + (a.cols - self.c0)) * NUM_TILE_TYPES + a.tiles, -1
            )
        else:
            self.codes = np.full((0, SLOTS), -1, np.int64)
        self.lengths = (self.codes >= 0).sum(axis=1)
        self.consistent = np.ones(len(self.codes), bool)

    @property
    def truncated(self) -> bool:
        """The game cannot go on in this encoding: past ``max_turns`` or (tile actions)
        outgrowing the window."""
        return not self.game.is_over and (self.game.turn >= self.max_turns or not self.fits)

    def _cell(self, r: int, c: int) -> int:
        return (r - self.r0) * self.window + (c - self.c0)

    def seat_order(self, seat: int) -> list[int]:
        return [(seat + i) % self.rules.players for i in range(self.rules.players)]

    # -- the action mask and actions ------------------------------------------------------

    def mask(self) -> np.ndarray:
        """int8[n_actions]: 1 for the current player's legal actions (a new array)."""
        if self._mask is None:
            self._mask = self._compute_mask()
        return self._mask.copy()

    def _compute_mask(self) -> np.ndarray:
        g = self.game
        mask = np.zeros(self.n_actions, np.int8)
        if g.is_over or self.truncated:
            return mask
        rows = self.codes[self.consistent]
        if self.partial:
            mask[self.done] = bool((self.lengths[self.consistent] == len(self.partial)).any())
        cand = rows[rows >= 0]
        if self.partial:
            cand = cand[~np.isin(cand, [self._cell(r, c) * NUM_TILE_TYPES + t for _, r, c, t in self.partial])]
        cand = np.unique(cand)
        cells, tiles = cand // NUM_TILE_TYPES, cand % NUM_TILE_TYPES
        used = {s for s, _, _, _ in self.partial}
        for s, t in enumerate(self.hand):
            if s not in used:
                mask[s * self.cells + cells[tiles == t]] = 1
        if not self.partial:
            if g.bag_size and not g.opening_pending:
                ok = (np.arange(1, EXCHANGES + 1) < (1 << len(self.hand))) & (_POPCOUNT <= g.bag_size)
                mask[self.exchange0 : self.pass_] = ok
            elif not len(self.codes):
                mask[self.pass_] = 1
        return mask

    def check_action(self, action: Any) -> int:
        """``action`` as an int; TypeError for a non-int, IllegalMoveError if not legal now."""
        if isinstance(action, bool) or not hasattr(action, "__index__"):
            raise TypeError(f"an action is an int, not {action!r:.60}")
        a = int(action.__index__())
        if not 0 <= a < self.n_actions:
            raise IllegalMoveError(f"action {a} is outside 0..{self.n_actions - 1}")
        if self._mask is None:
            self._mask = self._compute_mask()
        if not self._mask[a]:
            raise IllegalMoveError(f"action {a} ({self.describe(a)}) is not legal now")
        return a

    def apply(self, action: Any) -> tuple[bool, int]:
        """Take ``action`` for the current player: ``(committed, points)``, where
        committed is True when it ended the turn and points is the change of that
        player's score. Raises like :meth:`check_action`, changing nothing."""
        a = self.check_action(action)
        g = self.game
        p = g.current_player
        before = g.scores[p]
        if a < self.done:
            s, k = divmod(a, self.cells)
            r, c = self.r0 + k // self.window, self.c0 + k % self.window
            t = self.hand[s]
            self.partial.append((s, r, c, t))
            self.consistent &= (self.codes == k * NUM_TILE_TYPES + t).any(axis=1)
            self._mask = None
            return False, 0
        if a == self.done:
            g.play(Move([(r, c, t) for _, r, c, t in self.partial]))
        elif a < self.pass_:
            g.exchange([t for s, t in enumerate(self.hand) if (a - self.exchange0 + 1) >> s & 1])
        else:
            g.pass_turn()
        self.sync()
        return True, g.scores[p] - before

    def encode(self, move: Move | str) -> list[int]:
        """The actions that play ``move`` (a :class:`Move` or its text) for the current
        player from the start of a turn. Raises IllegalMoveError when it is not legal
        (or lies outside the window)."""
        move = move if isinstance(move, Move) else Move.parse(move)
        free = list(range(len(self.hand)))
        slots = []
        for t in move.tiles:
            s = next((s for s in free if self.hand[s] == t), None)
            if s is None:
                raise IllegalMoveError(f"{tile_code(t)} is not in the hand")
            free.remove(s)
            slots.append(s)
        if move.kind is MoveKind.PASS:
            actions = [self.pass_]
        elif move.kind is MoveKind.EXCHANGE:
            actions = [self.exchange0 + sum(1 << s for s in slots) - 1]
        else:
            w = self.window
            if not all(0 <= r - self.r0 < w and 0 <= c - self.c0 < w for r, c, _ in move.placements):
                raise IllegalMoveError(f"{move} lies outside the window")
            actions = [s * self.cells + self._cell(r, c) for s, (r, c, _) in zip(slots, move.placements)] + [self.done]
        mask = self.mask()
        if (
            self.partial
            or not mask[actions[0]]
            or (move.kind is MoveKind.PLACE and move not in self.game.legal_moves())
        ):
            raise IllegalMoveError(f"{move} is not legal now")
        return actions

    def describe(self, action: int) -> str:
        """An action in words: ``"place slot 0 (R1) at (0, 3)"``, ``"done"``,
        ``"exchange slots 0 2 (R1 B4)"``, ``"pass"``."""
        a = int(action)
        if a < self.done:
            s, k = divmod(a, self.cells)
            cell = (self.r0 + k // self.window, self.c0 + k % self.window)
            what = tile_code(self.hand[s]) if s < len(self.hand) else "nothing"
            return f"place slot {s} ({what}) at {cell}"
        if a == self.done:
            return "done"
        if a < self.pass_:
            slots = [s for s in range(SLOTS) if (a - self.exchange0 + 1) >> s & 1]
            tiles = " ".join(tile_code(self.hand[s]) for s in slots if s < len(self.hand))
            return f"exchange slots {' '.join(map(str, slots))} ({tiles})"
        return "pass"

    # -- observations --------------------------------------------------------------------

    def observation_space(self) -> spaces.Dict:
        return observation_space(self.rules.players, self.window)

    def observe(self, seat: int) -> Obs:
        """The observation dict of ``seat`` (new arrays); from ``Game.observation(seat)``,
        the public board and, for the current player, the tiles it has put down."""
        if seat not in self._obs:
            self._obs[seat] = self.game.observation(seat)
        o = self._obs[seat]
        mine = seat == self.game.current_player and not self.game.is_over
        board = self.planes.copy()
        hand = np.zeros((SLOTS, PLANES), np.int8)
        for s, t in enumerate(o.hand):
            hand[s, t // 6] = hand[s, 6 + t % 6] = hand[s, 12] = 1
        if mine:
            for s, r, c, t in self.partial:
                rr, cc = r - self.r0, c - self.c0
                board[t // 6, rr, cc] = board[6 + t % 6, rr, cc] = board[12, rr, cc] = 1
                hand[s, 12] = 0
        order = self.seat_order(seat)
        return {
            "observation": {
                "board": board,
                "hand": hand,
                "scores": np.array([o.scores[q] for q in order], np.int32),
                "hand_sizes": np.array([o.hand_sizes[q] for q in order], np.int8),
                "bag_size": np.array([o.bag_size], np.int32),
                "unseen": np.array(o.unseen, np.int8),
            },
            "action_mask": self.mask() if mine else np.zeros(self.n_actions, np.int8),
        }

    # -- rendering -----------------------------------------------------------------------

    def shown_board(self) -> dict[tuple[int, int], int]:
        board = self.game.board
        board.update({(r, c): t for _, r, c, t in self.partial})
        return board

    def render(self, mode: str) -> str | np.ndarray:
        if mode == "ansi":
            return self._ansi()
        return _draw(self.shown_board(), {(r, c) for _, r, c, _ in self.partial})

    def _ansi(self) -> str:
        g = self.game
        state = f"over, winner {g.winner}" if g.is_over else f"player {g.current_player} to move"
        lines = [
            board_text(self.shown_board()).plain.rstrip("\n"),
            f"scores: {' '.join(map(str, g.scores))} | bag {g.bag_size} | turn {g.turn} | {state}",
        ]
        if not g.is_over:
            used = {s for s, _, _, _ in self.partial}
            lines.append("hand: " + " ".join(tile_code(t) if s not in used else "--" for s, t in enumerate(self.hand)))
        return "\n".join(lines) + "\n"


_CELL_PX = 24
_RGB = np.array(
    [(220, 50, 47), (245, 140, 30), (240, 215, 40), (60, 180, 75), (50, 110, 230), (150, 80, 200)], np.uint8
)


@functools.lru_cache(maxsize=1)
def _shape_masks(n: int = _CELL_PX) -> np.ndarray:
    """bool[6, n, n] glyphs of the six shapes (circle, square, diamond, clover, 4-point
    and 8-point star), in a cell of n x n pixels."""
    y, x = (np.mgrid[0:n, 0:n] + 0.5 - n / 2) / (n / 2)  # -1..1
    ax, ay = np.abs(x), np.abs(y)
    astroid = np.sqrt(ax) + np.sqrt(ay) <= np.sqrt(0.8)
    u, v = (x + y) / np.sqrt(2), (x - y) / np.sqrt(2)
    rotated = np.sqrt(np.abs(u)) + np.sqrt(np.abs(v)) <= np.sqrt(0.8)
    clover = np.zeros_like(astroid)
    for dx, dy in ((0.32, 0), (-0.32, 0), (0, 0.32), (0, -0.32)):
        clover |= (x - dx) ** 2 + (y - dy) ** 2 <= 0.35**2
    return np.stack(
        [x * x + y * y <= 0.65**2, (ax <= 0.6) & (ay <= 0.6), ax + ay <= 0.8, clover, astroid, astroid | rotated]
    )


def _draw(board: dict[tuple[int, int], int], fresh: set[tuple[int, int]]) -> np.ndarray:
    """uint8[H, W, 3] picture of ``board`` ({(row, col): tile}) with one empty cell
    around it; ``fresh`` cells get a white frame. 24 pixels per cell."""
    shapes = _shape_masks()
    rows = [r for r, _ in board] or [0]
    cols = [c for _, c in board] or [0]
    r0, c0 = min(rows) - 1, min(cols) - 1
    h, w = max(rows) - r0 + 2, max(cols) - c0 + 2
    n = _CELL_PX
    img = np.full((h * n, w * n, 3), 60, np.uint8)
    img[::n, :] = img[:, ::n] = 90
    for (r, c), t in board.items():
        cell = img[(r - r0) * n : (r - r0 + 1) * n, (c - c0) * n : (c - c0 + 1) * n]
        cell[:] = 255 if (r, c) in fresh else 20
        cell[2:-2, 2:-2] = 20
        cell[shapes[t % 6]] = _RGB[t // 6]
    return img


def check_window(window: Any) -> int:
    """``window`` checked: an int MIN_WINDOW .. WINDOW (TypeError/ValueError)."""
    return check_int(window, "window", MIN_WINDOW, WINDOW)


def check_render_mode(mode: Any) -> str | None:
    if mode is None:
        return None
    if mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be None or one of {', '.join(RENDER_MODES)}, not {mode!r:.60}")
    return str(mode)


class raw_env(AECEnv):  # type: ignore[misc]  # noqa: N801  (PettingZoo's naming; pettingzoo ships no type information)
    """Qwirkle for 2 to 6 players as a PettingZoo AEC environment.

    Attributes
    ----------
    players
        number of seats (agents ``player_0`` .. ``player_{n-1}``, seat order).
    window
        side of the square of cells the board planes and the place actions
        cover, centred on the tiles (default 118: exact for every reachable
        position; at least 11). A smaller window gives smaller arrays and
        truncates the episode when the board outgrows it.
    opening
        the opening rule (see :class:`~qwirkle_core.Rules`).
    max_turns
        truncate after this many turns (the batch's safety limit by default).
    render_mode
        None, ``"ansi"`` (text) or ``"rgb_array"`` (uint8[H, W, 3]).

    Notes
    -----
    ``reset(seed=s)`` deals the game ``qwirkle_core.Game(seed=s)``; ``reset()`` draws
    the next game's seed from the environment's generator. ``step`` raises
    :class:`~qwirkle_core.IllegalMoveError` (changing nothing) for an action outside
    the mask. Attribute ``game``: the :class:`~qwirkle_core.Game` being played.
    Raises TypeError/ValueError for bad arguments.
    """

    metadata = {"render_modes": RENDER_MODES, "name": "qwirkle_v0", "is_parallelizable": False, "render_fps": 2}

    def __init__(
        self,
        players: int = 2,
        window: int = WINDOW,
        opening: str = "largest_group",
        max_turns: int = MAX_TURNS,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        rules = Rules(players=players, opening=opening)
        self._table = Table(rules, check_window(window), check_int(max_turns, "max_turns", 1))
        self.render_mode = check_render_mode(render_mode)
        self.possible_agents = [f"player_{i}" for i in range(players)]
        self.observation_spaces = {a: self._table.observation_space() for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self._table.n_actions) for a in self.possible_agents}
        self._np_random: np.random.Generator | None = None

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The observation space of ``agent`` (the same Dict for every agent)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """``Discrete(6 * window**2 + 65)`` (the same for every agent)."""
        return self.action_spaces[agent]

    @property
    def game(self) -> Game:
        """The :class:`~qwirkle_core.Game` being played (do not change it; read it)."""
        return self._table.game

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game: from ``seed`` when given, else from the environment's generator.
        ``options={"game": g}`` starts from a copy of the :class:`~qwirkle_core.Game` ``g``
        instead (same rules; a position from ``Game.from_position`` or a game in play)."""
        if seed is not None:
            game_seed = check_seed(seed)
            self._np_random = np.random.default_rng(game_seed)
        else:
            if self._np_random is None:
                self._np_random = np.random.default_rng()
            game_seed = int(self._np_random.integers(2**63))
        self._table.new_game(game_seed, options)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.current_player]

    def observe(self, agent: str) -> Obs:
        """The observation of ``agent`` (new arrays; see docs/env.md)."""
        return self._table.observe(self.possible_agents.index(agent))

    def step(self, action: int | None) -> None:
        """Take ``action`` for :attr:`agent_selection` (None for an agent that is done)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._remove_done_agent(action)
            return
        committed, points = self._table.apply(action)
        self._cumulative_rewards[agent] = 0
        self.rewards = {a: 0 for a in self.agents}
        self.rewards[agent] = points
        if committed:
            if self.game.is_over:
                self.terminations = {a: True for a in self.agents}
            elif self._table.truncated:
                self.truncations = {a: True for a in self.agents}
            else:
                self.agent_selection = self.possible_agents[self.game.current_player]
        for a, reward in self.rewards.items():
            self._cumulative_rewards[a] += reward

    def _remove_done_agent(self, action: int | None) -> None:
        """The step of an agent that is done: it leaves, and the next one that is done
        (they all end together) is selected."""
        if action is not None:
            raise ValueError("an agent that is done takes the action None")
        agent = self.agent_selection
        for table in (self.terminations, self.truncations, self.rewards, self._cumulative_rewards, self.infos):
            del table[agent]
        self.agents.remove(agent)
        self.rewards = {a: 0 for a in self.agents}
        if self.agents:
            self.agent_selection = self.agents[0]

    def render(self) -> str | np.ndarray | None:
        """The board as text (``render_mode="ansi"``) or a picture (``"rgb_array"``)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        return self._table.render(self.render_mode)

    def close(self) -> None:
        """Nothing to release."""

    @property
    def origin(self) -> tuple[int, int]:
        """``(row, col)`` of window cell 0 this turn: action ``slot * window**2 +
        (row - r0) * window + (col - c0)`` puts hand slot ``slot`` at ``(row, col)``."""
        return (self._table.r0, self._table.c0)

    def encode(self, move: Move | str) -> list[int]:
        """The actions that play ``move`` for the current agent; see docs/env.md.
        Raises IllegalMoveError when it is not legal now (or lies outside the window)."""
        return self._table.encode(move)

    def describe(self, action: int) -> str:
        """``action`` in words (for the current agent's hand and window)."""
        return self._table.describe(action)


def env(**kwargs: Any) -> Any:
    """The AEC environment wrapped as PettingZoo recommends (order checks, action bounds);
    arguments as for :class:`raw_env`."""
    e = raw_env(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)
