"""A policy over the move list for any torch RL library: the move scorer with a value head.

:func:`make_move_net` builds :class:`MoveNet` (a ``torch.nn.Module``): it scores each
listed move from its input row (``move_inputs`` of ``VectorEnv(actions="moves",
scorer_inputs=True)``: the move's features, the static agent's value of it and the
position's context) with the one network of the learned move scorer
(:func:`qwirkle_core.batch.scorer.make_scorer`, weights shared by the moves, so its
parameters do not depend on the list's length or the board's window), and reads a value
from the moves' pooled hidden rows and the context. Its logits are the scores; its
scorer exports as the ``.npz`` weights file the numba ``net`` agent plays
(``net:weights=PATH``), and starts from one. :class:`qwirkle_core.env.sb3.MovePolicy`
is the same module as a policy of sb3-contrib's ``MaskablePPO``.

>>> import torch                                                          # doctest: +SKIP
>>> net = make_move_net()                                                 # doctest: +SKIP
>>> x, mask = torch.as_tensor(obs["move_inputs"]), torch.as_tensor(obs["action_mask"]) > 0  # doctest: +SKIP
>>> logits, value = net(x, mask)                                          # doctest: +SKIP
>>> net.export("policy.npz", {"command": "my training"})                  # doctest: +SKIP

Needs torch (``pip install 'qwirkle-core[rl-train]'``).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..batch.scorer import INPUT_NAMES, make_scorer, read_weights, scorer_arrays, write_weights

__all__ = ["CONTEXT", "INPUT_SCALE", "make_move_net"]

_UNITS = {"points": 10.0, "points_gap": 10.0, "static": 10.0, "tiles": 6.0, "margin": 50.0, "bag": 100.0}
_UNITS.update({name: 6.0 for name in ("leave", "leave_colours", "leave_shapes", "leave_group", "leave_dups")})
_UNITS.update(players=6.0, rival_hand=6.0)
INPUT_SCALE = np.array([1.0 / _UNITS.get(name, 1.0) for name in INPUT_NAMES])
"""The scale of a fresh network's inputs (``scale`` of its weights file; ``shift`` 0):
points and values in tens, the margin in fifties, the bag in hundreds, tiles in sixes."""
CONTEXT = tuple(INPUT_NAMES.index(name) for name in ("margin", "bag", "players", "rival_hand"))
"""The columns of the position's context (the same in every row of a position)."""


def make_move_net(hidden: tuple[int, int] = (64, 32), value_hidden: int = 64, seed: int | None = None) -> Any:
    """A :class:`MoveNet`: ``net(x, mask) -> (logits, value)`` for ``x`` float32[B, K,
    len(INPUT_NAMES)] (``move_inputs``) and ``mask`` bool[B, K] (the listed moves):
    ``logits`` float32[B, K] (the scores, -1e8 off the mask) and ``value`` float32[B].
    ``hidden``: the scorer's two hidden layers; ``value_hidden``: the value head's.
    ``seed``: torch's initialisation seed (default: torch's current stream)."""
    import torch
    from torch import nn

    class MoveNet(nn.Module):
        """The move scorer (``scorer``) with a value head (``value_head``)."""

        def __init__(self) -> None:
            super().__init__()
            self.scorer = make_scorer(hidden, scale=INPUT_SCALE)
            self.value_head = nn.Sequential(
                nn.Linear(hidden[1] + len(CONTEXT), value_hidden), nn.ReLU(), nn.Linear(value_hidden, 1)
            )

        def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            x = x.float()
            embed = self.scorer.embed(x)  # [B, K, H2]
            logits = self.scorer.l3(embed).squeeze(-1)
            logits = torch.where(mask, logits, torch.full_like(logits, -1e8))
            pooled = torch.where(mask[..., None], embed, torch.zeros_like(embed)).amax(dim=1)
            c = list(CONTEXT)
            context = (x[:, 0, c] - self.scorer.shift[c]) * self.scorer.scale[c]
            value = self.value_head(torch.cat([pooled, context], dim=-1)).squeeze(-1)
            return logits, value

        def export(self, path: str | os.PathLike[str], provenance: dict[str, Any]) -> Any:
            """Write the scorer as a weights file at ``path`` (atomically; the ``net``
            agent plays it: ``net:weights=PATH``); returns the path."""
            return write_weights(path, scorer_arrays(self.scorer), provenance)

        def load_scorer(self, path: str | os.PathLike[str]) -> None:
            """Start the scorer from the weights file ``path`` (its hidden sizes must be
            this network's; the value head is left as it is). Raises WeightsError (a
            ValueError), or ValueError for other hidden sizes."""
            arrays, _ = read_weights(path)
            want = {"w1": self.scorer.l1.weight.shape[::-1], "w2": self.scorer.l2.weight.shape[::-1]}
            for key, shape in want.items():
                if tuple(arrays[key].shape) != tuple(shape):
                    raise ValueError(f"{os.fspath(path)!r}: {key} of shape {arrays[key].shape}, this net's is {shape}")
            with torch.no_grad():
                for name, key, t in (("l1", "w1", True), ("l2", "w2", True), ("l3", "w3", False)):
                    layer = getattr(self.scorer, name)
                    w = torch.as_tensor(arrays[key], dtype=torch.float32)
                    layer.weight.copy_(w.T if t else w[None, :])
                    layer.bias.copy_(torch.as_tensor(arrays["b" + key[1]], dtype=torch.float32))
                self.scorer.shift.copy_(torch.as_tensor(arrays["shift"], dtype=torch.float32))
                self.scorer.scale.copy_(torch.as_tensor(arrays["scale"], dtype=torch.float32))

    if seed is not None:
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            return MoveNet()
    return MoveNet()
