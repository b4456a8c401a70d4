"""The move-list encoding of the environments (``actions="moves"``): whole legal moves,
each with a feature row computed in the kernel, and the action an index into the list.

:func:`move_list` lists the moves of one :class:`~qwirkle_core.Game` with the same
kernel as :class:`~qwirkle_core.env.VectorEnv` (the single-game environments and a
trained policy's agent wrapper use it); :func:`flat_observation_space` is the
observation space of both action modes (a non-nested ``Dict`` of ``Box``).

>>> import qwirkle_core as qc
>>> from qwirkle_core.env.movelist import move_list, FEATURE_NAMES
>>> game = qc.Game(seed=1)
>>> features, mask, moves = move_list(game)
>>> features.shape, int(mask.sum()) == len(moves)
((128, 16), True)
>>> points = game.play(moves[int(features[mask, FEATURE_NAMES.index("points")].argmax())])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from .._checks import check_int
from .._kernels import movelist as _ml
from .._kernels import net as _net
from .._kernels.board import true_coords
from .._kernels.layout import EXCHANGE, M_CELL, M_N, M_SCORE, M_TILE, MOVE_COLS, PLACE
from .._kernels.leaves import bind_leaves
from ..game.game import Game
from ..game.move import Move
from .aec import observation_space

__all__ = [
    "FEATURES",
    "FEATURE_NAMES",
    "INPUT_NAMES",
    "K_MOVES",
    "MoveLister",
    "flat_observation_space",
    "move_list",
    "scorer_inputs",
]

K_MOVES: int = _ml.K_MOVES
"""Moves listed per observation by default (128): the placements, best-scoring first
kept when there are more, after room for the exchanges listed."""
FEATURE_NAMES: tuple[str, ...] = _ml.FEATURE_NAMES
"""The feature columns of a listed move (docs/env.md, "The move-list mode")."""
FEATURES: int = _ml.FEATURES
INPUT_NAMES: tuple[str, ...] = _net.INPUT_NAMES
"""The move scorer's input columns: FEATURE_NAMES, then ``static``, ``margin``, ``bag``,
``players`` and ``rival_hand`` (docs/agents.md, "net")."""
MAX_FEATURE = 200.0  # above any feature's magnitude (points: at most 84 + 6)
MAX_INPUT = 10_000.0  # above any scorer input's magnitude (the margin: a few hundred)


def flat_observation_space(
    players: int, window: int, actions: str = "tiles", k: int = K_MOVES, scorer_inputs: bool = False
) -> spaces.Dict:
    """The observation space of one seat (docs/env.md): a non-nested ``Dict`` of ``Box``
    with the arrays of :func:`.aec.observation_space` (``board``, ``hand``, ``scores``,
    ``hand_sizes``, ``bag_size``, ``unseen``) and ``action_mask``: int8[6 W^2 + 65] for
    ``actions="tiles"``; for ``actions="moves"`` int8[k] and ``move_features``
    float32[k, FEATURES], and with ``scorer_inputs`` ``move_inputs`` float32[k,
    len(INPUT_NAMES)] (the move scorer's input rows)."""
    nested = observation_space(players, window)
    inner = nested["observation"]
    assert isinstance(inner, spaces.Dict)
    out: dict[str, spaces.Space[Any]] = dict(inner.spaces)
    if actions == "moves":
        out["move_features"] = spaces.Box(-MAX_FEATURE, MAX_FEATURE, (k, FEATURES), np.float32)
        out["action_mask"] = spaces.Box(0, 1, (k,), np.int8)
        if scorer_inputs:
            out["move_inputs"] = spaces.Box(-MAX_INPUT, MAX_INPUT, (k, len(INPUT_NAMES)), np.float32)
    else:
        out["action_mask"] = nested["action_mask"]
    return spaces.Dict(out)


class MoveLister:
    """The move lists of single games, with the kernel's scratch kept between calls (a
    :func:`move_list` that allocates nothing per call)."""

    def __init__(self, k: int = K_MOVES) -> None:
        self.k = check_int(k, "k", 1, 4096)
        self._ms = _ml.new_move_scratch(_ml.MOVE_ROOM)
        self._moves = np.zeros((self.k, MOVE_COLS), np.int32)
        self._kind = np.zeros(self.k, np.int8)

    def __call__(self, game: Game) -> tuple[np.ndarray, np.ndarray, list[Move]]:
        """``(features, mask, moves)`` of the player to move in ``game``: ``features``
        float32[k, FEATURES] (rows past the moves listed 0), ``mask`` bool[k] (True for
        the first ``len(moves)`` rows) and the moves, listed in the kernel's order (the
        placements in the move generator's order, then the exchanges, or the forced
        pass). New arrays. Raises ValueError for a game that is over or of Qwirkle
        Cubes."""
        if not isinstance(game, Game):
            raise TypeError(f"move_list takes a qwirkle_core.Game, not {type(game).__name__}")
        if game.is_over:
            raise ValueError("the game is over: no moves to list")
        if game.rules.cubes:
            raise ValueError("the move-list encoding is for the tile game, not Qwirkle Cubes")
        a = game.kernel_arrays()
        feats = np.zeros((self.k, FEATURES), np.float32)
        mask = np.zeros(self.k, np.int8)
        while True:
            count, n = _ml.move_list(
                a.board, a.cross, a.anchors, a.bmeta, a.hands, a.bag, a.gmeta, self._ms,
                self._moves, self._kind, feats, mask, 0,
            )  # fmt: skip
            if count >= 0:
                break
            self._ms = _ml.new_move_scratch(2 * int(n))
        return feats, mask.astype(bool), moves_of(a.bmeta, self._moves[:count], self._kind[:count])


def moves_of(bmeta: np.ndarray, rows: np.ndarray, kinds: np.ndarray) -> list[Move]:
    """The :class:`Move` of each listed row (``rows`` int32[n, MOVE_COLS] and ``kinds``
    int8[n] of :func:`move_list`'s kernel; ``bmeta`` the board's counters)."""
    out: list[Move] = []
    for row, kind in zip(rows, kinds):
        n = int(row[M_N])
        tiles = [int(t) for t in row[M_TILE : M_TILE + n]]
        if kind == PLACE:
            r, c = true_coords(bmeta, row[M_CELL : M_CELL + n])
            out.append(Move(zip(r.tolist(), c.tolist(), tiles), int(row[M_SCORE])))
        elif kind == EXCHANGE:
            out.append(Move.exchange(tiles))
        else:
            out.append(Move.pass_turn())
    return out


_DEFAULT: dict[int, MoveLister] = {}
_SCORER_SCRATCH: list[Any] = []


def scorer_inputs(game: Game) -> tuple[np.ndarray, list[Move]]:
    """The move scorer's input rows of the moves of the player to move in ``game``, as
    the ``net`` agent computes them: ``(x float64[count, len(INPUT_NAMES)], moves)``
    (at most K_MOVES moves, listed as :func:`move_list` lists them). New arrays. Not
    thread-safe (one scratch). Raises ValueError for a game that is over or of Qwirkle
    Cubes."""
    move_list(game, 1)  # the same checks
    if not _SCORER_SCRATCH:
        bind_leaves()
        _SCORER_SCRATCH.append(_net.new_net_scratch())
    ns = _SCORER_SCRATCH[0]
    a = game.kernel_arrays()
    count = _net.net_inputs(a, ns)
    return ns[6][:count].copy(), moves_of(a.bmeta, ns[1][:count], ns[2][:count])


def move_list(game: Game, k: int = K_MOVES) -> tuple[np.ndarray, np.ndarray, list[Move]]:
    """The whole moves of the player to move in ``game`` and their features, as the
    environments' ``actions="moves"`` lists them: ``(features float32[k, FEATURES],
    mask bool[k], moves)`` (see :class:`MoveLister`; row ``j < len(moves)`` is move
    ``moves[j]``, playable with ``game.play(moves[j])``). Not thread-safe (one scratch
    per ``k``; give each thread a :class:`MoveLister`)."""
    lister = _DEFAULT.get(k)
    if lister is None:
        lister = _DEFAULT[k] = MoveLister(k)
    return lister(game)
