"""A trained move-list policy as a Python agent (docs/env.md, "The baseline").

A policy trained with :class:`qwirkle_core.env.sb3.MovePolicy` (docs/examples/train_ppo.py)
exports the learned move scorer's weights file, which the built-in ``net`` agent plays
inside numba (``net:weights=PATH``: the fast way, in tournaments and batches).
:class:`PolicyAgent` plays such a file as a Python agent, from its seat's
:class:`~qwirkle_core.Observation` alone: it sets up a game from it (the tiles it cannot
see dealt at random to the other hands and the bag, which changes no input: the scorer
reads only what the mover sees) and lets the ``net`` agent choose there.

>>> import qwirkle_core as qc
>>> from qwirkle_core.env.baselines import PolicyAgent
>>> agent = PolicyAgent("runs/ppo/final.npz")          # doctest: +SKIP
>>> record = qc.play_game((agent, "greedy"), seed=1)   # doctest: +SKIP

``qwirkle_core.env.baselines:PPOAgent`` is the policy docs/examples/train_ppo.py
trained, shipped with the package: a spec for ``qc.tournament`` and ``qwirkle play
--opponent``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..batch.scorer import WeightsError, read_weights
from ..errors import AgentError
from ..game.game import Game
from ..game.move import Move
from ..game.observation import Observation

__all__ = ["POLICY_FILE", "PPOAgent", "PolicyAgent", "game_from_observation"]

POLICY_FILE = Path(__file__).with_name("ppo_moves.npz")
"""The shipped policy's weights file (a move scorer's, see :mod:`qwirkle_core.batch.scorer`)."""


def game_from_observation(observation: Observation, seed: int = 0) -> Game:
    """A game in the position ``observation`` shows, its player to move: the board, the
    player's hand and the scores as seen; the tiles it cannot see (``unseen``) dealt at
    random (from ``seed``) to the other hands (their sizes as seen) and the bag."""
    o = observation
    if o.unseen is None:
        raise ValueError("the move-list policy plays the tile game, not Qwirkle Cubes")
    hidden = np.repeat(np.arange(len(o.unseen)), o.unseen)
    np.random.default_rng(seed).shuffle(hidden)
    hands: list[list[int]] = []
    at = 0
    for q, size in enumerate(o.hand_sizes):
        if q == o.player:
            hands.append(list(o.hand))
        else:
            hands.append([int(t) for t in hidden[at : at + size]])
            at += size
    return Game.from_position(
        o.board, hands, [int(t) for t in hidden[at:]], list(o.scores), o.player, o.rules, seed=seed
    )


class PolicyAgent:
    """A policy's weights file (a move scorer's: :meth:`qwirkle_core.env.sb3.MovePolicy.export`,
    ``qwirkle learn net``) playing as a Python agent (``act(observation, legal_moves,
    rng)``): the listed move of the highest score, chosen by the ``net`` agent in a game
    set up from the observation (:func:`game_from_observation`); deterministic, ``rng``
    unused. Its label (``name``) is ``policy:`` and the file's name without ``.npz``."""

    def __init__(self, path: str | Path = POLICY_FILE) -> None:
        self.path = Path(path)
        try:
            read_weights(self.path)
        except WeightsError as exc:
            raise AgentError(f"cannot load policy weights from {str(path)!r}: {exc}") from None
        self.name = f"policy:{self.path.stem}"
        self._spec = f"net:weights={self.path.resolve()}"

    def act(self, observation: Observation, legal_moves: list[Move], rng: Any) -> Move:
        """The chosen move, one of ``legal_moves``."""
        choice = game_from_observation(observation).play_agent(self._spec).move
        for m in legal_moves:
            if m == choice:
                return m
        return choice  # not expected: the rules then refuse it (an AgentFailure names it)


class PPOAgent(PolicyAgent):
    """The policy trained by docs/examples/train_ppo.py, shipped with the package
    (label ``ppo``)."""

    def __init__(self) -> None:
        super().__init__(POLICY_FILE)
        self.name = "ppo"
