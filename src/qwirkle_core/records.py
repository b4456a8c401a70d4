"""JSON formats: game records (every action with its points) and positions; ``replay``.

Records are documented in docs/records.md with the JSON Schema docs/record.schema.json,
positions in docs/position.schema.json. Tiles and moves are written in the project's
notation (docs/notation.md). Reading checks every field and raises :class:`FormatError`
(a ``ValueError``) naming the first problem; :class:`RecordError` also names the first
bad action of a record.
"""

import json
from dataclasses import dataclass, field

from .game import Game, Move
from .notation import format_cells, format_move, parse_cells, parse_tile
from .rules import IllegalMoveError, Rules
from .tiles import tile_code

RECORD_FORMAT = "qwirkle-core/record"
POSITION_FORMAT = "qwirkle-core/position"
VERSION = 1
_U64 = 2**64

__all__ = ["Action", "FormatError", "GameRecord", "RecordError", "replay"]


class FormatError(ValueError):
    """JSON text or data that is not a valid qwirkle-core record, position or observation."""


class RecordError(FormatError):
    """A record that is malformed, or that does not agree with the rules when replayed.

    ``action`` is the index (from 0) of the first bad action, or None when the problem
    is not in one action.
    """

    def __init__(self, message, action=None):
        super().__init__(message)
        self.action = action


# -- reading JSON ---------------------------------------------------------------------


def load_json(text, what, error=FormatError):
    """``json.loads(text)``; ``error`` (a FormatError class) saying where the text stops
    being JSON. For a :class:`RecordError`, the action it stops in is named too."""
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        raise TypeError(f"a {what} is JSON text (str), not {type(text).__name__}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        i = _action_at(text, e.pos) if error is RecordError else None
        if i is not None:
            raise RecordError(f"{what}: not valid JSON from action {i} on ({e})", action=i) from None
        raise error(f"{what}: not valid JSON ({e})") from None


def _action_at(text, pos):
    """The index of the action of a record's JSON ``text`` that holds offset ``pos``,
    or None (found by decoding the ``"actions"`` array item by item)."""
    decoder = json.JSONDecoder()
    start = text.find('"actions"')
    if start < 0 or start > pos:
        return None
    i = text.find("[", start)
    index = 0
    while 0 <= i < pos:
        j = i + 1
        while j < len(text) and text[j] in " \t\r\n":
            j += 1
        if j >= pos:
            return index
        if text[j] == "]":
            return None
        try:
            _, end = decoder.raw_decode(text, j)
        except json.JSONDecodeError:
            return index
        if end >= pos:
            return index
        i = text.find(",", end)
        i = i if 0 <= i and text[end:i].strip() == "" else -1
        index += 1
    return None


def _get(data, key, what):
    if key not in data:
        raise FormatError(f"{what}: missing field {key!r}")
    return data[key]


def _int(value, what, lo=0, hi=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(f"{what} must be an int, not {value!r}")
    if value < lo or (hi is not None and value > hi):
        bound = f"{lo} or more" if hi is None else f"{lo}..{hi}"
        raise FormatError(f"{what} must be {bound}, not {value}")
    return value


def _ints(value, what, n, lo=0, hi=None):
    if not isinstance(value, list) or len(value) != n:
        raise FormatError(f"{what} must be a list of {n} ints, not {value!r}")
    return [_int(v, f"{what}[{i}]", lo, hi) for i, v in enumerate(value)]


def _bool(value, what):
    if not isinstance(value, bool):
        raise FormatError(f"{what} must be true or false, not {value!r}")
    return value


def _object(data, what, fmt=None):
    if not isinstance(data, dict):
        raise FormatError(f"a {what} is a JSON object, not {type(data).__name__}")
    if fmt is not None:
        if data.get("format") != fmt:
            raise FormatError(f"not a qwirkle-core {what}: 'format' must be {fmt!r}, not {data.get('format')!r}")
        if data.get("version") != VERSION:
            raise FormatError(f"unsupported {what} version {data.get('version')!r}; this library reads version {VERSION}")
    return data


def _rules(data, what):
    value = _get(data, "rules", what)
    try:
        return Rules(**value)
    except TypeError as e:
        raise FormatError(f"{what}: bad rules {value!r}: {e}") from None
    except ValueError as e:
        raise FormatError(f"{what}: bad rules: {e}") from None


def _codes(value, what):
    """Tiles from a list of codes (``["R1", "B4"]``)."""
    if not isinstance(value, list):
        raise FormatError(f"{what} must be a list of tile codes, not {value!r}")
    try:
        return [parse_tile(code) for code in value]
    except (TypeError, ValueError) as e:
        raise FormatError(f"{what}: {e}") from None


def _seed(value, what):
    if value is None:
        return None
    return _int(value, what, 0, _U64 - 1)


# -- positions ------------------------------------------------------------------------


def position_to_dict(game):
    """The complete position of ``game`` as a JSON-ready dict (docs/position.schema.json)."""
    g = game
    bag = g._bag[: g.bag_size]
    return {
        "format": POSITION_FORMAT,
        "version": VERSION,
        "rules": g.rules.to_dict(),
        "seed": g.seed,
        "rng": [f"{int(s):016x}" for s in g._rng],
        "board": [format_cells(group) for group in g._board_groups()],
        "hands": [[tile_code(t) for t in g.hand(p)] for p in range(g.players)],
        "bag": [tile_code(t) for t in bag[::-1]],
        "scores": list(g.scores),
        "qwirkles": list(g.qwirkles),
        "current_player": g.current_player,
        "starting_player": g.starting_player,
        "turn": g.turn,
        "passes": g.passes,
        "over": g.is_over,
    }


def position_from_dict(data):
    """The :class:`Game` of a position dict; FormatError names the first problem."""
    what = "position"
    _object(data, what, POSITION_FORMAT)
    rules = _rules(data, what)
    n = rules.players
    seed = _seed(_get(data, "seed", what), "position seed")
    rng = _get(data, "rng", what)
    if not (isinstance(rng, list) and len(rng) == 2 and all(isinstance(s, str) and len(s) == 16 for s in rng)):
        raise FormatError(f"position rng must be 2 strings of 16 hex digits, not {rng!r}")
    try:
        rng = [int(s, 16) for s in rng]
    except ValueError:
        raise FormatError(f"position rng must be 2 strings of 16 hex digits, not {data['rng']!r}") from None
    board = _get(data, "board", what)
    if not isinstance(board, list) or not all(isinstance(s, str) for s in board):
        raise FormatError(f"position board must be a list of strings like 'R1@0,0 R2@0,1', not {board!r}")
    try:
        groups = [parse_cells(s, f"position board[{i}]") for i, s in enumerate(board)]
    except ValueError as e:
        raise FormatError(str(e)) from None
    hands = _get(data, "hands", what)
    if not isinstance(hands, list) or len(hands) != n:
        raise FormatError(f"position hands must be a list of {n} lists of tile codes, not {hands!r}")
    hands = [_codes(h, f"position hands[{p}]") for p, h in enumerate(hands)]
    bag = _codes(_get(data, "bag", what), "position bag")
    scores = _ints(_get(data, "scores", what), "position scores", n)
    qwirkles = _ints(_get(data, "qwirkles", what), "position qwirkles", n)
    current = _int(_get(data, "current_player", what), "position current_player", 0, n - 1)
    starter = _int(_get(data, "starting_player", what), "position starting_player", 0, n - 1)
    turn = _int(_get(data, "turn", what), "position turn")
    passes = _int(_get(data, "passes", what), "position passes", 0, n)
    over = _bool(_get(data, "over", what), "position over")
    if not board and starter != current:
        raise FormatError(f"position: with an empty board the starting player is the current player ({current}), not {starter}")
    empty = [p for p, h in enumerate(hands) if not h]
    if empty and not over:
        raise FormatError(f"position: the hand of player {empty[0]} is empty, which only happens when the game is over")
    try:
        g = Game._build(groups, hands, bag, scores, current, rules, seed, min_hand=0)
    except (TypeError, ValueError) as e:
        raise FormatError(f"position: {e}") from None
    g._load_counters(starter, turn, passes, qwirkles, over, rng)
    return g


# -- records --------------------------------------------------------------------------


@dataclass(frozen=True)
class Action:
    """One turn: who acted (seat), the :class:`Move`, the points it scored (a placement's
    points without the 6 for going out; 0 for an exchange or a pass), and every seat's
    score after it (bonus included)."""

    player: int
    move: Move
    points: int
    scores: tuple

    def to_dict(self):
        return {"player": self.player, "move": format_move(self.move), "points": self.points, "scores": list(self.scores)}


@dataclass
class GameRecord:
    """A whole game: rules, how it started, every action, and the result.

    rules:   the :class:`Rules` the game was played under.
    seed:    the seed of the deal (``Game(seed=seed, rules=rules)`` deals the same tiles
             and draws the same ones after), or None when the game started from ``setup``.
    agents:  optional names of who played each seat (agent names, ``"human"``...).
    hands:   the initial hands (sorted tuples of tiles per seat), or None when unknown.
    setup:   None for a dealt game; else the position dict the game started from
             (see :meth:`Game.to_dict`).
    actions: the :class:`Action` list in order.
    final_scores, winner: the result when the game ended, else None.
    """

    rules: Rules
    seed: int | None = None
    agents: list | None = None
    hands: list | None = None
    setup: dict | None = None
    actions: list = field(default_factory=list)
    final_scores: tuple | None = None
    winner: int | None = None

    @classmethod
    def start(cls, game, agents=None):
        """An empty record of ``game``, which must have no actions yet (normally just dealt)."""
        if game.history:
            raise ValueError("start() records a game with no actions yet; use game.record() for a game in progress")
        return game.record(agents)

    @property
    def players(self):
        return self.rules.players

    def add(self, player, move, points, scores):
        self.actions.append(Action(int(player), move, int(points), tuple(int(s) for s in scores)))

    def finish(self, game):
        if game.is_over:
            self.final_scores = game.scores
            self.winner = game.winner

    def to_dict(self):
        return {
            "format": RECORD_FORMAT,
            "version": VERSION,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "agents": self.agents,
            "hands": None if self.hands is None else [[tile_code(t) for t in h] for h in self.hands],
            "setup": self.setup,
            "actions": [a.to_dict() for a in self.actions],
            "final_scores": None if self.final_scores is None else list(self.final_scores),
            "winner": self.winner,
        }

    def to_json(self, indent=None):
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls, text):
        """Parse a record; :class:`RecordError` names the first problem (for text cut
        short or otherwise broken inside the actions, the action it breaks in)."""
        return cls.from_dict(load_json(text, "record", RecordError))

    @classmethod
    def from_dict(cls, data):
        """The record of a dict as written by :meth:`to_dict`; RecordError names the problem."""
        what = "record"
        try:
            _object(data, what, RECORD_FORMAT)
            rules = _rules(data, what)
            n = rules.players
            seed = _seed(data.get("seed"), "record seed")
            setup = data.get("setup")
            if setup is not None:
                if seed is not None:
                    raise FormatError("record: give either a seed (a dealt game) or a setup position, not both")
                try:
                    start = position_from_dict(setup)
                except FormatError as e:
                    raise FormatError(f"record setup: {e}") from None
                if start.rules != rules:
                    raise FormatError(f"record: the setup position's rules {start.rules} differ from the record's {rules}")
            agents = data.get("agents")
            if agents is not None and not (isinstance(agents, list) and len(agents) == n and all(isinstance(a, str) for a in agents)):
                raise FormatError(f"record agents must be null or {n} strings, not {agents!r}")
            hands = data.get("hands")
            if hands is not None:
                if not isinstance(hands, list) or len(hands) != n:
                    raise FormatError(f"record hands must be null or {n} lists of tile codes, not {hands!r}")
                hands = [tuple(sorted(_codes(h, f"record hands[{p}]"))) for p, h in enumerate(hands)]
            actions = _get(data, "actions", what)
            if not isinstance(actions, list):
                raise FormatError(f"record actions must be a list, not {type(actions).__name__}")
            final = data.get("final_scores")
            final = None if final is None else tuple(_ints(final, "record final_scores", n))
            winner = data.get("winner")
            winner = None if winner is None else _int(winner, "record winner", -1, n - 1)
        except RecordError:
            raise
        except FormatError as e:
            raise RecordError(str(e)) from None
        record = cls(rules=rules, seed=seed, agents=agents, hands=hands, setup=setup, final_scores=final, winner=winner)
        for i, a in enumerate(actions):
            try:
                _object(a, "record action")
                text = _get(a, "move", "action")
                if not isinstance(text, str):
                    raise FormatError(f"move must be a str in the notation, not {text!r}")
                try:
                    move = Move.parse(text)
                except ValueError as e:
                    raise FormatError(str(e)) from None
                player = _int(_get(a, "player", "action"), "player", 0, n - 1)
                points = _int(_get(a, "points", "action"), "points")
                scores = _ints(_get(a, "scores", "action"), "scores", n)
            except FormatError as e:
                raise RecordError(f"action {i}: {e}", action=i) from None
            record.add(player, move, points, scores)
        return record


def replay(record):
    """Rebuild the game of ``record`` and check every action, its points and the scores.

    Returns the final :class:`Game` (its :attr:`~Game.history` holds the actions, so it
    can be undone or played on). Raises :class:`RecordError` naming the first
    inconsistent action. A dealt game needs the record's seed (which fixes the deal and
    every draw); a game with a setup position starts from it.
    """
    if record.setup is not None:
        g = position_from_dict(record.setup)
    elif record.seed is None:
        raise RecordError("the record has neither a seed nor a setup position, so its draws cannot be replayed")
    else:
        g = Game(seed=record.seed, rules=record.rules)
        if record.hands is not None:
            for p, h in enumerate(record.hands):
                if tuple(sorted(h)) != g.hand(p):
                    raise RecordError(f"initial hand of player {p} does not match the seed's deal")
    for i, a in enumerate(record.actions):
        if a.player != g.current_player:
            raise RecordError(f"action {i} ({format_move(a.move)}): player {a.player} acted but it was player {g.current_player}'s turn", action=i)
        try:
            points = g.play(a.move)
        except IllegalMoveError as e:
            raise RecordError(f"action {i} ({format_move(a.move)}): illegal: {e}", action=i) from None
        if points != a.points:
            raise RecordError(f"action {i} ({format_move(a.move)}): recorded {a.points} points, the rules give {points}", action=i)
        if tuple(a.scores) != g.scores:
            raise RecordError(f"action {i} ({format_move(a.move)}): recorded scores {list(a.scores)}, the rules give {list(g.scores)}", action=i)
    if record.final_scores is not None and tuple(record.final_scores) != g.scores:
        raise RecordError(f"final scores {list(record.final_scores)} differ from the replay's {list(g.scores)}")
    if record.winner is not None and record.winner != g.winner:
        raise RecordError(f"winner {record.winner} differs from the replay's {g.winner}")
    return g
