"""A complete position as JSON (docs/position.schema.json) and back, without ``Game``.

:class:`Position` holds every part of a game's state as plain values; ``Game`` makes one
(``Game.to_dict``) and is made from one (``Game.from_dict``). Reading checks every field
and raises :class:`~qwirkle_core.errors.FormatError` naming the first problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._checks import SEED_LIMIT, json_bool, json_field, json_int, json_ints, json_object
from ..errors import FormatError
from .notation import format_cells, format_view, parse_cells
from .picture import Scene, draw
from .rules import Rules
from .tiles import NUM_TILES, color_code, parse_color, parse_tile, tile_code

__all__ = ["FORMAT", "VERSION", "Position", "codes_from_json", "rules_from_json"]

FORMAT = "qwirkle-core/position"
VERSION = 1

Placed = tuple[tuple[int, int, int], ...]


@dataclass(frozen=True)
class Position:
    """Every part of a game's state.

    Attributes
    ----------
    board
        groups of ``(row, col, tile)`` in the order they were put down (the order

    Notes
    -----
    fixes the engine's internal frontier order, hence tie-breaks, exactly); ``bag``:
    the tiles left, ``bag[0]`` drawn first (in Qwirkle Cubes: the cubes' colours 0..5,
    rolled when drawn); ``rng``: the two 64-bit random streams; ``rerolled`` (Qwirkle
    Cubes): whether the current player has re-rolled in this turn.
    """

    rules: Rules
    seed: int | None
    rng: tuple[int, int]
    board: tuple[Placed, ...]
    hands: tuple[tuple[int, ...], ...]
    bag: tuple[int, ...]
    scores: tuple[int, ...]
    qwirkles: tuple[int, ...]
    current_player: int
    starting_player: int
    turn: int
    passes: int
    over: bool
    rerolled: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The position as a JSON-ready dict (``rerolled`` only for Qwirkle Cubes)."""
        cubes = self.rules.cubes
        return {
            "format": FORMAT,
            "version": VERSION,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "rng": [f"{s:016x}" for s in self.rng],
            "board": [format_cells(group) for group in self.board],
            "hands": [[tile_code(t) for t in h] for h in self.hands],
            "bag": [color_code(c) if cubes else tile_code(c) for c in self.bag],
            "scores": list(self.scores),
            "qwirkles": list(self.qwirkles),
            "current_player": self.current_player,
            "starting_player": self.starting_player,
            "turn": self.turn,
            "passes": self.passes,
            "over": self.over,
            **({"rerolled": self.rerolled} if cubes else {}),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Position:
        """The position of a dict written by :meth:`to_dict`; FormatError names the
        first problem (the board's and hands' consistency is checked by ``Game``)."""
        what = "position"
        json_object(data, what, FORMAT, VERSION)
        rules = rules_from_json(data, what)
        n = rules.players
        seed = json_field(data, "seed", what)
        board = json_field(data, "board", what)
        if not isinstance(board, list) or not all(isinstance(s, str) for s in board):
            raise FormatError("position board must be a list of strings like 'R1@0,0 R2@0,1'")
        try:
            groups = tuple(tuple(parse_cells(s, f"position board[{i}]")) for i, s in enumerate(board))
        except ValueError as e:
            raise FormatError(str(e)) from None
        hands = json_field(data, "hands", what)
        if not isinstance(hands, list) or len(hands) != n:
            raise FormatError(f"position hands must be a list of {n} lists of tile codes")
        position = cls(
            rules=rules,
            seed=None if seed is None else json_int(seed, "position seed", 0, SEED_LIMIT - 1),
            rng=_rng(json_field(data, "rng", what)),
            board=groups,
            hands=tuple(tuple(codes_from_json(h, f"position hands[{p}]")) for p, h in enumerate(hands)),
            bag=tuple(
                _colors(json_field(data, "bag", what))
                if rules.cubes
                else codes_from_json(json_field(data, "bag", what), "position bag")
            ),
            scores=tuple(json_ints(json_field(data, "scores", what), "position scores", n)),
            qwirkles=tuple(json_ints(json_field(data, "qwirkles", what), "position qwirkles", n)),
            current_player=json_int(json_field(data, "current_player", what), "position current_player", 0, n - 1),
            starting_player=json_int(json_field(data, "starting_player", what), "position starting_player", 0, n - 1),
            turn=json_int(json_field(data, "turn", what), "position turn"),
            passes=json_int(json_field(data, "passes", what), "position passes", 0, n),
            over=json_bool(json_field(data, "over", what), "position over"),
            rerolled=rules.cubes and json_bool(data.get("rerolled", False), "position rerolled"),
        )
        position._check_counters()
        return position

    def _board_cells(self) -> dict[tuple[int, int], int]:
        return {(r, c): t for group in self.board for r, c, t in group}

    def __str__(self) -> str:
        """The position as text: the board in the notation with its coordinates, the
        scores, the bag count and the hand of the player to move (no other hand)."""
        variant = " (Qwirkle Cubes)" if self.rules.cubes else ""
        return format_view(
            f"Position{variant}: {self.rules.players} players, turn {self.turn}",
            self._board_cells(),
            self.scores,
            self.current_player,
            "over" if self.over else None,
            len(self.bag),
            None if self.over else (self.current_player, tuple(sorted(self.hands[self.current_player]))),
            "cubes" if self.rules.cubes else "tiles",
        )

    def __repr__(self) -> str:
        state = "over" if self.over else f"player {self.current_player} to move"
        return (
            f"<Position players={self.rules.players} turn={self.turn} scores={self.scores} bag={len(self.bag)} {state}>"
        )

    def _repr_svg_(self) -> str:
        """The board picture (``qc.svg(position)``), shown by Jupyter."""
        return draw(position_scene(self))

    def _check_counters(self) -> None:
        if not self.board and self.starting_player != self.current_player:
            raise FormatError(
                f"position: with an empty board the starting player is the current player ({self.current_player}), not {self.starting_player}"
            )
        empty = [p for p, h in enumerate(self.hands) if not h]
        if empty and not self.over:
            raise FormatError(
                f"position: the hand of player {empty[0]} is empty, which only happens when the game is over"
            )


def position_scene(p: Position, names: tuple[str, ...] | None = None) -> Scene:
    """What a picture of position ``p`` shows: everything (every hand may be drawn)."""
    winner = None
    if p.over:
        best = max(p.scores)
        winner = p.scores.index(best) if p.scores.count(best) == 1 else -1
    return Scene(
        board={(r, c): t for group in p.board for r, c, t in group},
        hands=tuple(p.hands),
        hand_sizes=tuple(len(h) for h in p.hands),
        scores=p.scores,
        bag_size=len(p.bag),
        current_player=p.current_player,
        turn=p.turn,
        over=p.over,
        winner=winner,
        names=names,
    )


def _colors(value: Any) -> list[int]:
    """A Qwirkle Cubes bag: a JSON list of colour letters (``["R", "B"]``)."""
    if not isinstance(value, list) or len(value) > 90:
        raise FormatError('position bag (Qwirkle Cubes) must be a list of at most 90 colour letters such as "R"')
    try:
        return [parse_color(letter) for letter in value]
    except (TypeError, ValueError) as e:
        raise FormatError(f"position bag: {e}") from None


def _rng(value: Any) -> tuple[int, int]:
    message = "position rng must be 2 strings of 16 hex digits"
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(s, str) and len(s) == 16 for s in value)):
        raise FormatError(message)
    try:
        return int(value[0], 16), int(value[1], 16)
    except ValueError:
        raise FormatError(message) from None


def rules_from_json(data: dict[str, Any], what: str) -> Rules:
    """The :class:`Rules` of ``data["rules"]``; FormatError naming the problem."""
    value = json_field(data, "rules", what)
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise FormatError(f'{what}: rules must be an object like {{"players": 2, "opening": "largest_group"}}')
    try:
        return Rules(**value)
    except (TypeError, ValueError) as e:
        raise FormatError(f"{what}: bad rules: {e}") from None


def codes_from_json(value: Any, what: str) -> list[int]:
    """Tiles from a JSON list of codes (``["R1", "B4"]``); FormatError naming ``what``."""
    if not isinstance(value, list):
        raise FormatError(f"{what} must be a list of tile codes")
    if len(value) > NUM_TILES:
        raise FormatError(f"{what} holds {len(value)} tiles; a game has {NUM_TILES}")
    try:
        return [parse_tile(code) for code in value]
    except (TypeError, ValueError) as e:
        raise FormatError(f"{what}: {e}") from None
