"""Game records: every action of a game with its points, as JSON; and ``replay``.

The format is documented in docs/records.md with a JSON Schema in
docs/record.schema.json. Moves are written in the project's notation
(docs/notation.md).
"""

import json
from dataclasses import dataclass, field

from .game import Game, Move
from .notation import format_move
from .rules import IllegalMoveError, Rules
from .tiles import parse_tile, tile_code

FORMAT = "qwirkle-core/record"
VERSION = 1

__all__ = ["Action", "GameRecord", "RecordError", "replay"]


class RecordError(ValueError):
    """A record that is malformed, or that does not agree with the rules when replayed.

    ``action`` is the index of the first bad action (None when the problem is not in
    one action).
    """

    def __init__(self, message, action=None):
        super().__init__(message)
        self.action = action


@dataclass
class Action:
    """One turn: who acted, the move, the points it scored, and all scores after it."""

    player: int
    move: Move
    points: int
    scores: tuple

    def to_dict(self):
        return {"player": self.player, "move": format_move(self.move), "points": self.points, "scores": list(self.scores)}


@dataclass
class GameRecord:
    """A whole game: rules, seed, initial deal, actions, final scores.

    rules:   the :class:`Rules` the game was played under.
    seed:    the game's seed (``Game(seed=..., rules=rules)`` deals the same tiles), or None.
    agents:  names of the agents per seat when the game came from ``play_game``, else None.
    hands:   the initial hands (tuples of tiles per seat), or None when unknown.
    actions: the :class:`Action` list in order.
    final_scores, winner: the result when the game ended, else None.
    """

    rules: Rules
    seed: int | None = None
    agents: list | None = None
    hands: list | None = None
    actions: list = field(default_factory=list)
    final_scores: tuple | None = None
    winner: int | None = None

    @classmethod
    def start(cls, game, agents=None):
        """An empty record of ``game`` as it stands now (normally just dealt)."""
        return cls(rules=game.rules, seed=game.seed, agents=agents, hands=[game.hand(p) for p in range(game.players)])

    @property
    def players(self):
        return self.rules.players

    def add(self, player, move, points, scores):
        self.actions.append(Action(player, move, int(points), tuple(int(s) for s in scores)))

    def add_kernel_action(self, game, player, act, points):
        """Record an action an agent took inside a kernel (see ``_kernels.agents``)."""
        from ._kernels import agents as _ag
        from ._kernels import board as _bd

        kind, n = int(act[0]), int(act[1])
        if kind == _ag.PLACE:
            bm = game._bmeta
            move = Move([(int(_bd.true_row(bm, act[4 + i])), int(_bd.true_col(bm, act[4 + i])), int(act[10 + i])) for i in range(n)])
            points = int(act[2])
        elif kind == _ag.EXCHANGE:
            move = Move.exchange(int(t) for t in act[10 : 10 + n])
            points = 0
        else:
            move = Move.pass_turn()
            points = 0
        self.add(player, move, points, game.scores)

    def finish(self, game):
        if game.is_over:
            self.final_scores = game.scores
            self.winner = game.winner

    def to_dict(self):
        return {
            "format": FORMAT,
            "version": VERSION,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "agents": self.agents,
            "hands": None if self.hands is None else [[tile_code(t) for t in h] for h in self.hands],
            "actions": [a.to_dict() for a in self.actions],
            "final_scores": None if self.final_scores is None else list(self.final_scores),
            "winner": self.winner,
        }

    def to_json(self, indent=None):
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls, text):
        """Parse a record; :class:`RecordError` names the first problem."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise RecordError(f"not valid JSON: {e}") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data):
        if not isinstance(data, dict):
            raise RecordError("a record is a JSON object")
        if data.get("format") != FORMAT:
            raise RecordError(f"not a qwirkle-core record (format must be {FORMAT!r})")
        if data.get("version") != VERSION:
            raise RecordError(f"unsupported record version {data.get('version')!r}; this library reads version {VERSION}")
        try:
            rules = Rules(**data["rules"])
        except (KeyError, TypeError, ValueError) as e:
            raise RecordError(f"bad rules: {e}") from None
        seed = data.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64):
            raise RecordError(f"seed must be null or an int 0..2**64-1, not {seed!r}")
        hands = data.get("hands")
        if hands is not None:
            try:
                hands = [tuple(parse_tile(t) for t in h) for h in hands]
            except (TypeError, ValueError) as e:
                raise RecordError(f"bad initial hands: {e}") from None
            if len(hands) != rules.players:
                raise RecordError(f"{len(hands)} initial hands for {rules.players} players")
        actions = data.get("actions")
        if not isinstance(actions, list):
            raise RecordError("actions must be a list")
        record = cls(rules=rules, seed=seed, agents=data.get("agents"), hands=hands)
        for i, a in enumerate(actions):
            try:
                move = Move.parse(a["move"])
                player, points, scores = a["player"], a["points"], a["scores"]
                if not all(isinstance(x, int) and not isinstance(x, bool) for x in [player, points, *scores]):
                    raise ValueError("player, points and scores must be ints")
                if len(scores) != rules.players:
                    raise ValueError(f"scores has {len(scores)} entries for {rules.players} players")
            except (KeyError, TypeError, ValueError) as e:
                detail = f"missing field {e}" if isinstance(e, KeyError) else str(e)
                raise RecordError(f"action {i}: {detail}", action=i) from None
            record.add(player, move, points, scores)
        final = data.get("final_scores")
        record.final_scores = None if final is None else tuple(final)
        record.winner = data.get("winner")
        return record


def replay(record):
    """Rebuild the game of ``record`` and check every action, its points and the scores.

    Returns the final :class:`Game`. Raises :class:`RecordError` naming the first
    inconsistent action. Needs the record's seed (which fixes the deal and every draw).
    """
    if record.seed is None:
        raise RecordError("the record has no seed, so its draws cannot be replayed")
    g = Game(seed=record.seed, rules=record.rules)
    if record.hands is not None:
        for p, h in enumerate(record.hands):
            if tuple(sorted(h)) != g.hand(p):
                raise RecordError(f"initial hand of player {p} does not match the seed's deal")
    for i, a in enumerate(record.actions):
        if a.player != g.current_player:
            raise RecordError(f"action {i}: player {a.player} acted but it was player {g.current_player}'s turn", action=i)
        try:
            points = g.play(a.move)
        except IllegalMoveError as e:
            raise RecordError(f"action {i} ({format_move(a.move)}): illegal: {e}", action=i) from None
        if points != a.points:
            raise RecordError(f"action {i} ({format_move(a.move)}): recorded {a.points} points, the rules give {points}", action=i)
        if tuple(a.scores) != g.scores:
            raise RecordError(f"action {i}: recorded scores {list(a.scores)}, the rules give {list(g.scores)}", action=i)
    if record.final_scores is not None and tuple(record.final_scores) != g.scores:
        raise RecordError(f"final scores {list(record.final_scores)} differ from the replay's {list(g.scores)}")
    return g
