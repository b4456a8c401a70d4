"""The move scorer's network for training (torch) and its weights files (numpy).

The one architecture of the learned move scorer (see :mod:`qwirkle_core._kernels.net`
for the maths and the input row): :func:`make_scorer` builds it as a torch module for
training (``qwirkle learn net``, the RL policy of ``qwirkle_core.env``); the ``net``
agent and the search (``eval=net``) play the same maths in numba from the file that
:func:`write_weights` makes. torch is imported only by the functions that need it
(``pip install 'qwirkle-core[rl-train]'``); reading and writing weights needs numpy
alone.

A weights file is an ``.npz`` with ``format`` (``"qwirkle-core move scorer"``),
``format_version``, ``inputs`` (the input names, in order), the arrays ``shift``,
``scale`` (float64[D]), ``w1`` [D, H1], ``b1``, ``w2`` [H1, H2], ``b2``, ``w3`` [H2],
``b3`` [1], and ``provenance``: a JSON text (command, seed, games, positions,
iterations, version, date...), as the leave table's file has.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .._kernels import net as _net
from .rows import current_umask

__all__ = [
    "INPUT_NAMES",
    "WeightsError",
    "make_scorer",
    "read_weights",
    "scorer_arrays",
    "static_weights",
    "write_weights",
]

INPUT_NAMES: tuple[str, ...] = tuple(_net.INPUT_NAMES)
"""The input row's names, in order (the move list's features, then the context)."""
WeightsError = _net.WeightsError


def static_weights() -> dict[str, np.ndarray]:
    """The weights of a scorer whose score is the ``static`` input (the static agent's
    value): expert iteration's first scorer, and a baseline."""
    d = len(INPUT_NAMES)
    i = INPUT_NAMES.index("static")
    w1 = np.zeros((d, 2))
    w1[i] = (1.0, -1.0)
    return {
        "shift": np.zeros(d),
        "scale": np.ones(d),
        "w1": w1,
        "b1": np.zeros(2),
        "w2": np.eye(2),
        "b2": np.zeros(2),
        "w3": np.array([1.0, -1.0]),
        "b3": np.zeros(1),
    }


def read_weights(path: str | os.PathLike[str]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays and the provenance of a weights file, checked.

    Raises
    ------
    WeightsError
        (a ``ValueError``) a missing file, another format, or arrays of wrong shapes.
    """
    arrays, provenance = _net.read_weights(path)
    return arrays, provenance


def write_weights(path: str | os.PathLike[str], arrays: dict[str, np.ndarray], provenance: dict[str, Any]) -> Path:
    """Write ``arrays`` (``shift``, ``scale``, ``w1``, ``b1``, ``w2``, ``b2``, ``w3``,
    ``b3``) and ``provenance`` (JSON-able) as a weights file at ``path``, atomically (a
    temporary file beside it, renamed), and check it reads back. Returns the path."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".npz", dir=path.parent or ".")
    os.close(fd)
    try:
        payload: dict[str, Any] = {
            "format": np.array(_net.FORMAT),
            "format_version": np.array(_net.FORMAT_VERSION),
            "inputs": np.array(INPUT_NAMES),
            "provenance": np.array(json.dumps(provenance, sort_keys=True)),
        }
        payload.update({k: np.asarray(arrays[k], np.float64) for k in _net.ARRAYS})
        np.savez(tmp, **payload)
        _net.read_weights(tmp)
        os.chmod(tmp, 0o666 & ~current_umask())  # mkstemp made it 0600: the usual mode
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def make_scorer(hidden: tuple[int, int] = (64, 32), shift: Any = None, scale: Any = None) -> Any:
    """The scorer as a torch module: ``module(x)`` maps input rows float32[..., D] to
    scores float32[...] (points); ``module.embed(x)`` gives the second hidden layer
    [..., H2] (for a value head, as the RL policy adds). ``shift`` and ``scale``
    (float[D]) normalise the inputs (default 0 and 1). Needs torch."""
    import torch
    from torch import nn

    d = len(INPUT_NAMES)

    class MoveScorer(nn.Module):
        shift: torch.Tensor
        scale: torch.Tensor

        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("shift", torch.as_tensor(np.zeros(d) if shift is None else shift, dtype=torch.float32))
            self.register_buffer("scale", torch.as_tensor(np.ones(d) if scale is None else scale, dtype=torch.float32))
            self.l1 = nn.Linear(d, hidden[0])
            self.l2 = nn.Linear(hidden[0], hidden[1])
            self.l3 = nn.Linear(hidden[1], 1)

        def embed(self, x: torch.Tensor) -> torch.Tensor:
            z = (x - self.shift) * self.scale
            return torch.relu(self.l2(torch.relu(self.l1(z))))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = self.l3(self.embed(x)).squeeze(-1)
            return out

    return MoveScorer()


def scorer_arrays(module: Any) -> dict[str, np.ndarray]:
    """The arrays of a weights file from a :func:`make_scorer` module."""

    def a(t: Any) -> np.ndarray:
        return np.asarray(t.detach().cpu().double().numpy())

    return {
        "shift": a(module.shift),
        "scale": a(module.scale),
        "w1": a(module.l1.weight).T.copy(),
        "b1": a(module.l1.bias),
        "w2": a(module.l2.weight).T.copy(),
        "b2": a(module.l2.bias),
        "w3": a(module.l3.weight)[0].copy(),
        "b3": a(module.l3.bias),
    }
