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
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .batch.learn import LeaveTable, learn
    from .batch.rows import GameRows
    from .batch.simulate import SimulationResult, play_game, simulate
    from .batch.stats import BatchStats
    from .batch.tournament import TournamentResult, tournament
    from .batch.warmup import warmup
    from .errors import AgentError, AgentFailure, FormatError, IllegalMoveError, RecordError
    from .evaluation.analysis import ActionAnalysis, Analysis, MoveValue, analyse
    from .evaluation.endgame import EndgameResult, solve_endgame
    from .evaluation.evaluate import MoveEvaluation, evaluate_moves
    from .game.agents import AGENTS, AgentSpec, parse_agent, parse_agents
    from .game.game import Game
    from .game.move import Action, Move, MoveKind
    from .game.observation import Observation
    from .game.records import GameRecord, replay
    from .game.render import svg
    from .game.rules import Rules
    from .game.tiles import COLORS, SHAPES, color_of, parse_tile, shape_of, tile, tile_code, tile_name

_EXPORTS = {
    "AGENTS": "game.agents",
    "AgentSpec": "game.agents",
    "parse_agent": "game.agents",
    "parse_agents": "game.agents",
    "ActionAnalysis": "evaluation.analysis",
    "Analysis": "evaluation.analysis",
    "MoveValue": "evaluation.analysis",
    "analyse": "evaluation.analysis",
    "EndgameResult": "evaluation.endgame",
    "solve_endgame": "evaluation.endgame",
    "AgentError": "errors",
    "AgentFailure": "errors",
    "FormatError": "errors",
    "IllegalMoveError": "errors",
    "RecordError": "errors",
    "MoveEvaluation": "evaluation.evaluate",
    "evaluate_moves": "evaluation.evaluate",
    "Game": "game.game",
    "Action": "game.move",
    "Move": "game.move",
    "MoveKind": "game.move",
    "Observation": "game.observation",
    "GameRecord": "game.records",
    "replay": "game.records",
    "svg": "game.render",
    "GameRows": "batch.rows",
    "Rules": "game.rules",
    "SimulationResult": "batch.simulate",
    "play_game": "batch.simulate",
    "simulate": "batch.simulate",
    "BatchStats": "batch.stats",
    "COLORS": "game.tiles",
    "SHAPES": "game.tiles",
    "color_of": "game.tiles",
    "parse_tile": "game.tiles",
    "shape_of": "game.tiles",
    "tile": "game.tiles",
    "tile_code": "game.tiles",
    "tile_name": "game.tiles",
    "TournamentResult": "batch.tournament",
    "tournament": "batch.tournament",
    "warmup": "batch.warmup",
    "LeaveTable": "batch.learn",
    "learn": "batch.learn",
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
