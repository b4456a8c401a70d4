"""Game records: every action of a game with its points, as JSON; :func:`replay`.

Records are documented in docs/records.md with the JSON Schema
docs/record.schema.json. Tiles and moves are written in the project's notation
(docs/notation.md). A record is built from the outside of a game, from its public
members (``GameRecord.from_game(g)``), the way python-chess builds a PGN game from a
board. Reading checks every field and raises :class:`RecordError` (a
:class:`FormatError`) naming the first problem and, where there is one, the first bad
action.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._checks import SEED_LIMIT, json_field, json_int, json_ints, json_object, load_json
from ..errors import FormatError, IllegalMoveError, RecordError
from .game import Game
from .move import Action, Move, MoveKind, format_move
from .picture import Frame, bounds_of, draw, last_of, record_page
from .position import VERSION, codes_from_json, position_scene, rules_from_json
from .rules import Rules
from .tiles import tile_code

FORMAT = "qwirkle-core/record"
MAX_ACTIONS = 100_000
"""The most actions a record may hold (a game stops at 5,000 turns)."""

__all__ = ["GameRecord", "replay"]


@dataclass
class GameRecord:
    """A whole game: rules, how it started, every action, and the result.

    Attributes
    ----------
    rules
        the :class:`Rules` the game was played under.
    seed
        the seed of the deal (``Game(seed=seed, rules=rules)`` deals the same tiles
        and draws the same ones after), or None when the game started from ``setup``.
    agents
        optional names of who played each seat (agent names, ``"human"``...).
    hands
        the initial hands (sorted tuples of tiles per seat), or None when unknown.
    setup
        None for a dealt game; else the position dict the game started from
        (see :meth:`Game.to_dict`).
    actions
        the :class:`Action` list in order.
    final_scores, winner
        the result when the game ended, else None.

    """

    rules: Rules
    seed: int | None = None
    agents: list[str] | None = None
    hands: list[tuple[int, ...]] | None = None
    setup: dict[str, Any] | None = None
    actions: list[Action] = field(default_factory=list)
    final_scores: tuple[int, ...] | None = None
    winner: int | None = None

    @classmethod
    def from_game(cls, game: Game, agents: list[str] | None = None) -> GameRecord:
        """The record of a game so far.

        A game dealt by ``Game(...)`` is recorded by its seed and initial hands, one set up
        from a position by that position (``setup``).

        Parameters
        ----------
        game
            a :class:`Game`.
        agents
            optional names of who played each seat (one str per seat).

        Returns
        -------
        GameRecord

        Raises
        ------
        TypeError, ValueError
            bad ``agents``.
        """
        if agents is not None:
            agents = [str(a) for a in agents]
            if len(agents) != game.players:
                raise ValueError(f"agents must name {game.players} seats, not {len(agents)}")
        start = game.root()
        return cls(
            rules=game.rules,
            seed=game.seed if game.is_dealt else None,
            agents=agents,
            hands=[start.hand(p) for p in range(game.players)] if game.is_dealt else None,
            setup=None if game.is_dealt else start.to_dict(),
            actions=game.history,
            final_scores=game.scores if game.is_over else None,
            winner=game.winner,
        )

    @property
    def players(self) -> int:
        """The number of seats."""
        return self.rules.players

    def to_dict(self) -> dict[str, Any]:
        """The record as a JSON-ready dict (docs/record.schema.json)."""
        return {
            "format": FORMAT,
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

    def to_json(self, indent: int | None = None) -> str:
        """The record as JSON text (:meth:`to_dict`; docs/record.schema.json).

        Parameters
        ----------
        indent
            spaces of indentation per level (None: one line).

        Returns
        -------
        str
        """
        return json.dumps(self.to_dict(), indent=indent)

    def to_html(self, notes: Sequence[str | None] | None = None, *, document: bool = True) -> str:
        """The game as a small self-contained HTML page that steps through it.

        First / previous / next / last buttons, the move list (click a move to see the
        board after it), and each step's picture (:func:`qwirkle_core.svg`: the board with
        the action outlined, the scores, the hand of the player to move, the bag). No
        script and no network resource. ``_repr_html_`` shows it in a notebook.

        Parameters
        ----------
        notes
            optional text per action (one str or None per action, in order), written
            under its line in the move list: ``qwirkle analyse --html`` writes each
            action's verdict there.
        document
            a whole page (``<!doctype html>``); False: a ``<div>`` to put in a page.

        Returns
        -------
        str

        Raises
        ------
        RecordError
            the record does not replay (:func:`replay`).
        TypeError, ValueError
            ``notes`` does not hold one str or None per action.
        """
        if notes is not None:
            if isinstance(notes, str):
                raise TypeError("notes must be a sequence of str or None, one per action, not one str")
            notes = list(notes)
            if len(notes) != len(self.actions):
                raise ValueError(f"notes must hold one entry per action ({len(self.actions)}), not {len(notes)}")
            if not all(n is None or isinstance(n, str) for n in notes):
                raise TypeError("notes must be str or None")
        final = replay(self)
        g = final.root()
        names = tuple(self.agents) if self.agents else None
        bounds = bounds_of(list(final.board))
        seat = (lambda p: f"seat {p} ({names[p]})") if names else (lambda p: f"seat {p}")

        def picture(action: Action | None) -> str:
            cells, text = last_of(None if action is None else action.move)
            scene = position_scene(g.position(), names)
            return draw(scene, last=cells, last_text=text, bounds=bounds, defs=False)

        n = len(self.actions)
        frames = [Frame(picture(None), f"start · {n} action{'s' * (n != 1)}", None, None)]
        for i, a in enumerate(final.history):
            g.play(a.move)
            move = format_move(a.move)
            points = f" +{a.points}" if a.move.kind is MoveKind.PLACE else ""
            line = f"{seat(a.player)}: {move}{points}"
            frames.append(Frame(picture(a), f"action {i + 1} of {n}", line, None if notes is None else notes[i]))
        if final.is_over:
            result = "a tie" if final.winner == -1 else f"{seat(final.winner or 0)} wins"
            score = "–".join(str(s) for s in final.scores)
            title = f"Qwirkle game: {result} ({score})"
        else:
            title = f"Qwirkle game in progress, after {n} action{'s' * (n != 1)}"
        page_id = f"qc-record-{secrets.token_hex(4)}"
        return record_page(frames, title, page_id=page_id, document=document)

    def _repr_html_(self) -> str:
        """The page of :meth:`to_html` as a ``<div>``, shown by Jupyter."""
        return self.to_html(document=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> GameRecord:
        """Parse a record from its JSON text (docs/records.md).

        Parameters
        ----------
        text
            str or bytes.

        Returns
        -------
        GameRecord

        Raises
        ------
        RecordError
            naming the first problem (for text cut short or otherwise broken inside the
            actions, the action it breaks in).
        """
        if isinstance(text, os.PathLike):
            raise TypeError(f"from_json takes the JSON text, not a path: read the file with GameRecord.load({text!r})")
        try:
            data = load_json(text, "record", RecordError)
        except RecordError as e:
            if isinstance(text, str) and _looks_like_path(text):
                raise RecordError(
                    f"{e}: from_json takes the JSON text, and {text.strip()!r} looks like a file name; "
                    "read the file with GameRecord.load(path)"
                ) from None
            pos = getattr(e, "pos", None)
            i = _action_at(text, pos) if isinstance(text, str) and pos is not None else None
            if i is not None:
                raise RecordError(f"record: not valid JSON from action {i} on ({e})", action=i) from None
            raise
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> GameRecord:
        """Read a record from the JSON file ``path`` (as :meth:`save` writes it).

        Raises
        ------
        OSError
            the file cannot be read.
        RecordError
            its text is not a record (as :meth:`from_json`).
        """
        return cls.from_json(Path(path).read_text(encoding="utf-8"))

    def save(self, path: str | os.PathLike[str], indent: int | None = 1) -> None:
        """Write the record to the file ``path`` as JSON (:meth:`to_json`; ``indent``
        spaces per level, None for one line). Raises OSError when it cannot be written."""
        Path(path).write_text(self.to_json(indent=indent) + "\n", encoding="utf-8")

    @classmethod
    def from_dict(cls, data: Any) -> GameRecord:
        """The record of a dict as written by :meth:`to_dict`.

        Parameters
        ----------
        data
            a dict.

        Returns
        -------
        GameRecord

        Raises
        ------
        RecordError
            naming the problem.
        """
        try:
            record = cls._header(data)
            actions = json_field(data, "actions", "record")
            if not isinstance(actions, list):
                raise FormatError(f"record actions must be a list, not {type(actions).__name__}")
            if len(actions) > MAX_ACTIONS:
                raise FormatError(f"record holds {len(actions):,} actions; at most {MAX_ACTIONS:,} are read")
        except RecordError:
            raise
        except FormatError as e:
            raise RecordError(str(e)) from None
        for i, a in enumerate(actions):
            try:
                record.actions.append(_action(a, record.players))
            except FormatError as e:
                raise RecordError(f"action {i}: {e}", action=i) from None
        return record

    @classmethod
    def _header(cls, data: Any) -> GameRecord:
        """Every field of a record dict but its actions, checked."""
        what = "record"
        json_object(data, what, FORMAT, VERSION)
        rules = rules_from_json(data, what)
        n = rules.players
        seed = data.get("seed")
        seed = None if seed is None else json_int(seed, "record seed", 0, SEED_LIMIT - 1)
        setup = data.get("setup")
        if setup is not None:
            if seed is not None:
                raise FormatError("record: give either a seed (a dealt game) or a setup position, not both")
            try:
                start = Game.from_dict(setup)
            except FormatError as e:
                raise FormatError(f"record setup: {e}") from None
            if start.rules != rules:
                raise FormatError(f"record: the setup position's rules {start.rules} differ from the record's {rules}")
        agents = data.get("agents")
        if agents is not None and not (
            isinstance(agents, list) and len(agents) == n and all(isinstance(a, str) for a in agents)
        ):
            raise FormatError(f"record agents must be null or {n} strings")
        hands = data.get("hands")
        if hands is not None:
            if not isinstance(hands, list) or len(hands) != n:
                raise FormatError(f"record hands must be null or {n} lists of tile codes")
            hands = [tuple(sorted(codes_from_json(h, f"record hands[{p}]"))) for p, h in enumerate(hands)]
        final = data.get("final_scores")
        winner = data.get("winner")
        return cls(
            rules=rules,
            seed=seed,
            agents=agents,
            hands=hands,
            setup=setup,
            final_scores=None if final is None else tuple(json_ints(final, "record final_scores", n)),
            winner=None if winner is None else json_int(winner, "record winner", -1, n - 1),
        )


def _action(a: Any, players: int) -> Action:
    """One action of a record dict, checked."""
    json_object(a, "record action")
    text = json_field(a, "move", "action")
    if not isinstance(text, str):
        raise FormatError("move must be a str in the notation")
    try:
        move = Move.parse(text)
    except ValueError as e:
        raise FormatError(str(e)) from None
    player = json_int(json_field(a, "player", "action"), "player", 0, players - 1)
    points = json_int(json_field(a, "points", "action"), "points")
    scores = json_ints(json_field(a, "scores", "action"), "scores", players)
    return Action(player, move, points, tuple(scores))


def _looks_like_path(text: str) -> bool:
    """Whether ``text``, which is not JSON, looks like a file name instead of JSON text."""
    t = text.strip()
    return bool(t) and "\n" not in t and not t.startswith(("{", "[")) and (t.endswith(".json") or os.path.exists(t))


def _action_at(text: str, pos: int) -> int | None:
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
        except (json.JSONDecodeError, RecursionError, ValueError):
            return index
        if end >= pos:
            return index
        i = text.find(",", end)
        i = i if 0 <= i and text[end:i].strip() == "" else -1
        index += 1
    return None


def replay(record: GameRecord) -> Game:
    """Rebuild the game of a record and check every action, its points and the scores.

    A dealt game needs the record's seed (which fixes the deal and every draw, and in
    Qwirkle Cubes every roll: a re-roll's recorded faces must be those the seed rolls); a
    game with a setup position starts from it.

    Parameters
    ----------
    record
        a :class:`GameRecord`.

    Returns
    -------
    Game
        the final game (its :attr:`~Game.history` holds the actions, so it can be undone
        or played on).

    Raises
    ------
    RecordError
        naming the first inconsistent action.
    """
    if not isinstance(record, GameRecord):
        raise TypeError(f"replay() takes a GameRecord, not {type(record).__name__}")
    g = _start(record)
    for i, a in enumerate(record.actions):
        where = f"action {i} ({format_move(a.move)})"
        if a.player != g.current_player:
            raise RecordError(f"{where}: player {a.player} acted but it was player {g.current_player}'s turn", action=i)
        try:
            points = g.play(a.move)
        except IllegalMoveError as e:
            raise RecordError(f"{where}: illegal: {e}", action=i) from None
        if a.move.faces and g.history[-1].move.faces != a.move.faces:
            rolled = format_move(g.history[-1].move).partition("-> ")[2]
            raise RecordError(
                f"{where}: recorded faces {format_move(a.move).partition('-> ')[2]}, the seed rolls {rolled}", action=i
            )
        if points != a.points:
            raise RecordError(f"{where}: recorded {a.points} points, the rules give {points}", action=i)
        if tuple(a.scores) != g.scores:
            raise RecordError(f"{where}: recorded scores {list(a.scores)}, the rules give {list(g.scores)}", action=i)
    if record.final_scores is not None and tuple(record.final_scores) != g.scores:
        raise RecordError(f"final scores {list(record.final_scores)} differ from the replay's {list(g.scores)}")
    if record.winner is not None and record.winner != g.winner:
        raise RecordError(f"winner {record.winner} differs from the replay's {g.winner}")
    return g


def _start(record: GameRecord) -> Game:
    if record.setup is not None:
        try:
            return Game.from_dict(record.setup)
        except FormatError as e:
            raise RecordError(f"record setup: {e}") from None
    if record.seed is None:
        raise RecordError("the record has neither a seed nor a setup position, so its draws cannot be replayed")
    g = Game(seed=record.seed, rules=record.rules)
    if record.hands is not None:
        for p, h in enumerate(record.hands):
            if tuple(sorted(h)) != g.hand(p):
                raise RecordError(f"initial hand of player {p} does not match the seed's deal")
    return g
