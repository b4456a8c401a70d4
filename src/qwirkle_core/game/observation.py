"""``Observation``: what one player may see of a game (``Game.observation(player)``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .._checks import json_bool, json_field, json_int, json_ints, json_object, load_json
from ..errors import FormatError
from .notation import format_cells, format_view, over_text, parse_cells
from .picture import Scene, draw
from .position import VERSION, codes_from_json, rules_from_json
from .rules import Rules
from .tiles import COPIES, CUBES_PER_COLOR, NUM_TILE_TYPES, NUM_TILES, tile_code

FORMAT = "qwirkle-core/observation"

__all__ = ["Observation"]


@dataclass(frozen=True)
class Observation:
    """The game as seen by seat ``player``: public information and their own hand only.

    Attributes
    ----------
    player
        the seat observing.
    rules
        the :class:`~qwirkle_core.Rules`.
    board
        ``{(row, col): tile}`` (a copy).
    hand
        the player's own tiles, sorted (tuple of ints 0..35).
    hand_sizes
        tiles held by each seat (tuple, one int per seat).
    scores, qwirkles
        per seat (tuples).
    bag_size
        tiles left in the bag.
    unseen
        36 counts, index = tile: the tiles this player cannot see, i.e. the
        opponents' hands and the bag together (in a game of all 108 tiles,
        3 copies minus those on the board minus those in ``hand``).
        ``sum(unseen) == bag_size + sum of the opponents' hand_sizes``.
        None in Qwirkle Cubes.

    Notes
    -----
    current_player, turn, passes (in a row), is_over, winner (None while running,
    -1 for a tie).
    hands:          Qwirkle Cubes (open hands): every seat's cubes, sorted; else None.
    bag_colors:     Qwirkle Cubes: 6 counts, the cubes of each colour in the bag; else None.

    Nothing else: no opponent's tile (in the tile game), no bag order, no seed or
    random state (so no roll to come), so an observation may be handed to an untrusted
    player or bot.
    """

    player: int
    rules: Rules
    board: dict[tuple[int, int], int]
    hand: tuple[int, ...]
    hand_sizes: tuple[int, ...]
    scores: tuple[int, ...]
    qwirkles: tuple[int, ...]
    bag_size: int
    unseen: tuple[int, ...] | None
    current_player: int
    turn: int
    passes: int
    is_over: bool
    winner: int | None
    hands: tuple[tuple[int, ...], ...] | None = None
    bag_colors: tuple[int, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: tiles as codes, the board as ``"R1@0,0"`` strings (sorted);
        ``hands`` and ``bag_colors`` only in Qwirkle Cubes."""
        cubes: dict[str, Any] = {}
        if self.hands is not None:
            cubes["hands"] = [[tile_code(t) for t in h] for h in self.hands]
        if self.bag_colors is not None:
            cubes["bag_colors"] = list(self.bag_colors)
        return {
            "format": FORMAT,
            "version": VERSION,
            "player": self.player,
            "rules": self.rules.to_dict(),
            "board": [format_cells([(r, c, t)]) for (r, c), t in sorted(self.board.items())],
            "hand": [tile_code(t) for t in self.hand],
            "hand_sizes": list(self.hand_sizes),
            "scores": list(self.scores),
            "qwirkles": list(self.qwirkles),
            "bag_size": self.bag_size,
            "unseen": None if self.unseen is None else list(self.unseen),
            "current_player": self.current_player,
            "turn": self.turn,
            "passes": self.passes,
            "is_over": self.is_over,
            "winner": self.winner,
            **cubes,
        }

    def to_json(self, indent: int | None = None) -> str:
        """The observation as JSON text (:meth:`to_dict`).

        Parameters
        ----------
        indent
            spaces of indentation per level (None: one line).

        Returns
        -------
        str
        """
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Any) -> Observation:
        """The observation of a dict written by :meth:`to_dict`.

        Parameters
        ----------
        data
            a dict.

        Returns
        -------
        Observation

        Raises
        ------
        FormatError
            naming the problem.
        """
        what = "observation"
        json_object(data, what, FORMAT, VERSION)
        rules = rules_from_json(data, what)
        n = rules.players
        player = json_int(json_field(data, "player", what), "observation player", 0, n - 1)
        hand = tuple(sorted(codes_from_json(json_field(data, "hand", what), "observation hand")))
        hand_sizes = tuple(json_ints(json_field(data, "hand_sizes", what), "observation hand_sizes", n, 0, 6))
        if len(hand) != hand_sizes[player]:
            raise FormatError(
                f"observation: the hand has {len(hand)} tiles but hand_sizes[{player}] is {hand_sizes[player]}"
            )
        winner = json_field(data, "winner", what)
        if rules.cubes:
            hands = tuple(
                tuple(sorted(codes_from_json(h, f"observation hands[{p}]")))
                for p, h in enumerate(_list(json_field(data, "hands", what), n, "observation hands"))
            )
            if [len(h) for h in hands] != list(hand_sizes) or hands[player] != hand:
                raise FormatError("observation: hands must hold hand_sizes cubes each, the player's own being hand")
            bag_colors = tuple(
                json_ints(json_field(data, "bag_colors", what), "observation bag_colors", 6, 0, CUBES_PER_COLOR)
            )
            if sum(bag_colors) != json_int(json_field(data, "bag_size", what), "observation bag_size", 0, NUM_TILES):
                raise FormatError("observation: bag_colors must add up to bag_size")
            if json_field(data, "unseen", what) is not None:
                raise FormatError("observation unseen must be null in Qwirkle Cubes (hands are open)")
            unseen = None
        else:
            hands, bag_colors = None, None
            unseen = tuple(json_ints(json_field(data, "unseen", what), "observation unseen", NUM_TILE_TYPES, 0, COPIES))
        return cls(
            player=player,
            rules=rules,
            board=_board(json_field(data, "board", what)),
            hand=hand,
            hand_sizes=hand_sizes,
            scores=tuple(json_ints(json_field(data, "scores", what), "observation scores", n)),
            qwirkles=tuple(json_ints(json_field(data, "qwirkles", what), "observation qwirkles", n)),
            bag_size=json_int(json_field(data, "bag_size", what), "observation bag_size", 0, NUM_TILES),
            unseen=unseen,
            current_player=json_int(json_field(data, "current_player", what), "observation current_player", 0, n - 1),
            turn=json_int(json_field(data, "turn", what), "observation turn"),
            passes=json_int(json_field(data, "passes", what), "observation passes", 0, n),
            is_over=json_bool(json_field(data, "is_over", what), "observation is_over"),
            winner=None if winner is None else json_int(winner, "observation winner", -1, n - 1),
            hands=hands,
            bag_colors=bag_colors,
        )

    def __str__(self) -> str:
        """The observation as text: the board in the notation with its coordinates, the
        scores, the bag count and this seat's own hand (never another seat's)."""
        variant = " (Qwirkle Cubes)" if self.rules.cubes else ""
        return format_view(
            f"Observation of player {self.player}{variant}: {self.rules.players} players, turn {self.turn}",
            self.board,
            self.scores,
            self.current_player,
            over_text(self.winner) if self.is_over else None,
            self.bag_size,
            (self.player, self.hand),
            "cubes" if self.rules.cubes else "tiles",
        )

    def __repr__(self) -> str:
        state = "over" if self.is_over else f"player {self.current_player} to move"
        return (
            f"<Observation player={self.player} players={self.rules.players} turn={self.turn} "
            f"scores={self.scores} bag={self.bag_size} {state}>"
        )

    def _repr_svg_(self) -> str:
        """The board as this seat sees it (``qc.svg(observation)``), shown by Jupyter."""
        return draw(observation_scene(self))

    @classmethod
    def from_json(cls, text: str | bytes) -> Observation:
        """The observation of JSON text written by :meth:`to_json`.

        Parameters
        ----------
        text
            str or bytes.

        Returns
        -------
        Observation

        Raises
        ------
        FormatError
            naming the problem.
        """
        return cls.from_dict(load_json(text, "observation"))


def observation_scene(o: Observation) -> Scene:
    """What a picture of observation ``o`` shows: the seat's own hand (every hand in
    Qwirkle Cubes, where hands are open); of the other seats only how many tiles they hold."""
    if o.hands is not None:
        hands: tuple[tuple[int, ...] | None, ...] = o.hands
    else:
        hands = tuple(o.hand if p == o.player else None for p in range(len(o.hand_sizes)))
    return Scene(
        board=dict(o.board),
        hands=hands,
        hand_sizes=o.hand_sizes,
        scores=o.scores,
        bag_size=o.bag_size,
        current_player=o.current_player,
        turn=o.turn,
        over=o.is_over,
        winner=o.winner,
        viewer=o.player,
    )


def _list(value: Any, n: int, what: str) -> list[Any]:
    if not isinstance(value, list) or len(value) != n:
        raise FormatError(f"{what} must be a list of {n} lists of tile codes")
    return value


def _board(cells: Any) -> dict[tuple[int, int], int]:
    if not isinstance(cells, list) or not all(isinstance(s, str) for s in cells):
        raise FormatError("observation board must be a list of strings like 'R1@0,0'")
    if len(cells) > NUM_TILES:
        raise FormatError(f"observation board holds {len(cells)} tiles; a game has {NUM_TILES}")
    board: dict[tuple[int, int], int] = {}
    for i, s in enumerate(cells):
        try:
            placed = parse_cells(s, f"observation board[{i}]")
        except ValueError as e:
            raise FormatError(str(e)) from None
        if len(placed) != 1:
            raise FormatError(f"observation board[{i}] must be one tile like 'R1@0,0'")
        ((r, c, t),) = placed
        if (r, c) in board:
            raise FormatError(f"observation board: cell {(r, c)} appears twice")
        board[(r, c)] = t
    return board
