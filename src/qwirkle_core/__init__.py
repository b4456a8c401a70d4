"""qwirkle-core: a fast, exact Qwirkle rules engine and Monte Carlo simulator.

>>> import qwirkle_core as qc
>>> g = qc.Game(players=2, seed=0)
>>> moves = g.legal_moves()
>>> g.play(max(moves, key=lambda m: m.score))
"""

from .game import Game, Move
from .rules import IllegalMoveError, Rules
from .records import GameRecord, RecordError, replay
from .simulate import AGENTS, SimulationResult, play_game, simulate
from .tiles import COLORS, SHAPES, color_of, parse_tile, shape_of, tile, tile_code, tile_name

__all__ = [
    "AGENTS",
    "GameRecord",
    "RecordError",
    "SimulationResult",
    "play_game",
    "replay",
    "simulate",
    "COLORS",
    "SHAPES",
    "Game",
    "IllegalMoveError",
    "Move",
    "Rules",
    "color_of",
    "parse_tile",
    "shape_of",
    "tile",
    "tile_code",
    "tile_name",
]
__version__ = "0.1.0"
