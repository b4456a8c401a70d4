"""qwirkle-core: a fast, exact Qwirkle rules engine and Monte Carlo simulator.

>>> import qwirkle_core as qc
>>> g = qc.Game(players=2, seed=0)
>>> best = max(g.legal_moves(), key=lambda m: m.score)
>>> g.play(best)
2

The names below are loaded on first use (PEP 562), so ``import qwirkle_core`` is quick
and the command line can catch Ctrl-C while the engine loads.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .agents import AGENTS, AgentSpec, parse_agent, parse_agents
    from .analysis import ActionAnalysis, Analysis, MoveValue, analyse
    from .endgame import EndgameResult, solve_endgame
    from .errors import AgentError, AgentFailure, FormatError, IllegalMoveError, RecordError
    from .evaluate import MoveEvaluation, evaluate_moves
    from .game import Game
    from .move import Action, Move, MoveKind
    from .observation import Observation
    from .records import GameRecord, replay
    from .rows import GameRows
    from .rules import Rules
    from .simulate import SimulationResult, play_game, simulate
    from .stats import BatchStats
    from .tiles import COLORS, SHAPES, color_of, parse_tile, shape_of, tile, tile_code, tile_name
    from .tournament import TournamentResult, tournament

_EXPORTS = {
    "AGENTS": "agents",
    "AgentSpec": "agents",
    "parse_agent": "agents",
    "parse_agents": "agents",
    "ActionAnalysis": "analysis",
    "Analysis": "analysis",
    "MoveValue": "analysis",
    "analyse": "analysis",
    "EndgameResult": "endgame",
    "solve_endgame": "endgame",
    "AgentError": "errors",
    "AgentFailure": "errors",
    "FormatError": "errors",
    "IllegalMoveError": "errors",
    "RecordError": "errors",
    "MoveEvaluation": "evaluate",
    "evaluate_moves": "evaluate",
    "Game": "game",
    "Action": "move",
    "Move": "move",
    "MoveKind": "move",
    "Observation": "observation",
    "GameRecord": "records",
    "replay": "records",
    "GameRows": "rows",
    "Rules": "rules",
    "SimulationResult": "simulate",
    "play_game": "simulate",
    "simulate": "simulate",
    "BatchStats": "stats",
    "COLORS": "tiles",
    "SHAPES": "tiles",
    "color_of": "tiles",
    "parse_tile": "tiles",
    "shape_of": "tiles",
    "tile": "tiles",
    "tile_code": "tiles",
    "tile_name": "tiles",
    "TournamentResult": "tournament",
    "tournament": "tournament",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'qwirkle_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


_SHADOWED = frozenset(name for name, module in _EXPORTS.items() if name == module)
"""Exported functions named like their module (``simulate``, ``tournament``)."""


class _Package(types.ModuleType):
    """The package's module type: importing the submodule ``simulate`` (directly, or
    through another module) binds the package attribute ``simulate`` to the function,
    not to the submodule, which would otherwise hide it from ``qc.simulate``."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SHADOWED and isinstance(value, types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
