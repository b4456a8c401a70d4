"""A trained move-list policy as a Python agent (docs/env.md, "The baseline").

The policy scores each move of the move list (:func:`qwirkle_core.env.movelist.move_list`,
the ``move_features`` of ``VectorEnv(actions="moves")`` and ``QwirkleGymEnv(actions="moves")``)
with a small network and plays the best-scoring one. As a Python agent it sees only its
seat's :class:`~qwirkle_core.Observation`: it sets up a game from it (the tiles it cannot
see dealt at random to the other hands and the bag, which changes no feature: the
features read only what the mover sees) and lists that game's moves with the same kernel. Its weights are a ``.npz`` of numpy arrays, written by
docs/examples/train_ppo.py; evaluating it needs numpy only (no torch).

>>> import qwirkle_core as qc
>>> from qwirkle_core.env.baselines import PolicyAgent, write_policy, initial_policy
>>> write_policy("policy.npz", initial_policy(seed=0))      # an untrained policy
>>> agent = PolicyAgent("policy.npz")
>>> record = qc.play_game((agent, "greedy"), seed=1)

``qwirkle_core.env.baselines:PPOAgent`` is the policy that docs/examples/train_ppo.py
trained, when it is installed with the package (else a clear error): a spec for
``qc.tournament`` and ``qwirkle play --opponent``.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import AgentError
from ..game.game import Game
from ..game.move import Move
from ..game.observation import Observation
from .movelist import FEATURE_NAMES, K_MOVES, MoveLister

__all__ = [
    "HIDDEN",
    "SCALE",
    "PPOAgent",
    "PolicyAgent",
    "game_from_observation",
    "initial_policy",
    "load_policy",
    "policy_logits",
    "write_policy",
]

HIDDEN = 64
POLICY_FILE = Path(__file__).with_name("ppo_moves.npz")
_KEYS = ("w1", "b1", "w2", "b2", "w3", "b3", "skip")
_UNITS = {"points": 10.0, "points_gap": 10.0, "tiles": 6.0, "leave": 6.0, "leave_colours": 6.0}
_UNITS.update(leave_shapes=6.0, leave_group=6.0, leave_dups=6.0)
SCALE = np.array([1.0 / _UNITS.get(name, 1.0) for name in FEATURE_NAMES], np.float32)
"""The network's input is ``move_features * SCALE`` (points in tens, tiles in sixes)."""
F = len(FEATURE_NAMES)


def initial_policy(seed: int = 0, hidden: int = HIDDEN) -> dict[str, np.ndarray]:
    """Weights of an untrained policy: a small random network plus a linear term that
    starts as a soft preference for points (docs/env.md)."""
    rng = np.random.default_rng(seed)
    f = F
    skip = np.zeros(f, np.float32)
    skip[FEATURE_NAMES.index("points")] = 20.0  # a point more: e^2 times as likely (near greedy)
    return {
        "w1": (rng.standard_normal((f, hidden)) * np.sqrt(2 / f)).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": (rng.standard_normal((hidden, hidden)) * np.sqrt(2 / hidden)).astype(np.float32),
        "b2": np.zeros(hidden, np.float32),
        "w3": (rng.standard_normal(hidden) * 0.01).astype(np.float32),
        "b3": np.zeros(1, np.float32),
        "skip": skip,
    }


def policy_logits(params: dict[str, np.ndarray], features: np.ndarray) -> np.ndarray:
    """float32[..., K]: the score of each move from its feature row
    (``features``: float32[..., K, FEATURES], the raw ``move_features``); with
    ``x = features * SCALE``: ``relu(relu(x @ w1 + b1) @ w2 + b2) @ w3 + b3 + x @ skip``."""
    features = features * SCALE
    h = np.maximum(features @ params["w1"] + params["b1"], 0)
    h = np.maximum(h @ params["w2"] + params["b2"], 0)
    out: np.ndarray = h @ params["w3"] + params["b3"][0] + features @ params["skip"]
    return out


def write_policy(path: str | Path, params: dict[str, np.ndarray]) -> None:
    """Save policy weights (numpy arrays) to ``path`` (.npz)."""
    arrays: dict[str, Any] = {k: np.asarray(params[k], np.float32) for k in _KEYS}
    np.savez(path, **arrays)


@functools.lru_cache(maxsize=8)
def load_policy(path: str | Path) -> dict[str, np.ndarray]:
    """Policy weights from a .npz written by :func:`write_policy` (cached per path).
    Raises AgentError when the file is missing or is not such weights."""
    try:
        with np.load(path) as data:
            params = {k: np.asarray(data[k], np.float32) for k in _KEYS}
    except (OSError, KeyError, ValueError) as exc:
        raise AgentError(f"cannot load policy weights from {str(path)!r}: {exc}") from None
    if params["w1"].shape[0] != F:
        raise AgentError(f"{path}: weights for {params['w1'].shape[0]} features, the move list has {F}")
    return params


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
    """A move-list policy playing as a Python agent (``act(observation, legal_moves,
    rng)``): it lists the moves with the environments' kernel
    (:func:`game_from_observation`, then :class:`~qwirkle_core.env.movelist.MoveLister`)
    and plays the listed move of the highest score (deterministic; ``rng`` unused)."""

    name = "ppo"

    def __init__(self, path: str | Path = POLICY_FILE, k: int = K_MOVES) -> None:
        self.params = load_policy(str(path))
        self._lister = MoveLister(k)

    def act(self, observation: Observation, legal_moves: list[Move], rng: Any) -> Move:
        """The chosen move, one of ``legal_moves``."""
        features, mask, moves = self._lister(game_from_observation(observation))
        logits = policy_logits(self.params, features[: len(moves)])
        choice = moves[int(np.argmax(logits))]
        for m in legal_moves:
            if m == choice:
                return m
        return choice  # not expected: the rules then refuse it (an AgentFailure names it)


class PPOAgent(PolicyAgent):
    """The policy trained by docs/examples/train_ppo.py, shipped with the package."""

    name = "ppo"

    def __init__(self) -> None:
        super().__init__(POLICY_FILE)
