"""The game layer: tiles, rules, notation, moves, agent specs, positions, observations,
:class:`~qwirkle_core.game.game.Game` and game records.

Value modules (tiles, rules, notation, move, agents, position, observation) hold plain
values and their checks; ``game`` is the engine's Python face; ``records`` builds on it.
Nothing here imports the layers above (evaluation, batch, the interfaces).
"""

from .. import _compiling  # noqa: F401  (the compile notice listens from the first import)
