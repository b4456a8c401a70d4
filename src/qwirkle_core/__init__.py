"""qwirkle-core: a fast, exact Qwirkle rules engine and Monte Carlo simulator.

>>> import qwirkle_core as qc
>>> g = qc.Game(players=2, seed=0)
>>> best = max(g.legal_moves(), key=lambda m: m.score)
>>> g.play(best)
3
"""

from .evaluate import MoveEvaluation
from .game import Game, Move
from .observation import Observation
from .records import Action, FormatError, GameRecord, RecordError, replay
from .rules import IllegalMoveError, Rules
from .simulate import AGENTS, SimulationResult, play_game, simulate
from .tiles import COLORS, SHAPES, color_of, parse_tile, shape_of, tile, tile_code, tile_name
from .tournament import TournamentResult, tournament

__all__ = [
    "AGENTS",
    "COLORS",
    "SHAPES",
    "Action",
    "FormatError",
    "Game",
    "GameRecord",
    "IllegalMoveError",
    "Move",
    "MoveEvaluation",
    "Observation",
    "RecordError",
    "Rules",
    "SimulationResult",
    "TournamentResult",
    "color_of",
    "parse_tile",
    "play_game",
    "replay",
    "shape_of",
    "simulate",
    "tile",
    "tile_code",
    "tile_name",
    "tournament",
]
__version__ = "0.1.0"
