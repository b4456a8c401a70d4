"""Moves and actions as values: :class:`Move`, :class:`MoveKind`, :class:`Action`.

A :class:`Move` is a small frozen value, written and read in the project's notation
(docs/notation.md): ``str(move)`` and ``Move.parse(text)`` round-trip. Qwirkle Cubes
adds one kind, the re-roll (``r R1 B4 -> R3 B6``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from .._checks import COORD_LIMIT, check_coord
from .notation import format_cells, format_tiles, parse_cells, quoted, tile_word
from .tiles import check_tile, tile_code

__all__ = ["Action", "Move", "MoveKind", "format_move", "moves_from_arrays", "parse_move"]

_MOVE_FORMS = "placements like 'R1@0,0 R2@0,1', 'x R1 B4', 'pass' or (Qwirkle Cubes) 'r R1 B4'"
_ARROW = "->"


class MoveKind(str, enum.Enum):
    """What a move does. A ``str`` enum: ``MoveKind.PLACE == "place"``."""

    PLACE = "place"
    EXCHANGE = "exchange"
    PASS = "pass"
    REROLL = "reroll"

    def __str__(self) -> str:
        return self.value


class Move:
    """One action: a placement (the usual case), an exchange, a pass or (Qwirkle Cubes)
    a re-roll. Frozen.

    ``Move(placements)`` with ``placements`` an iterable of ``(row, col, tile)``, or
    the move's text in the notation (``Move("R1@0,0 R2@0,1")``, ``Move("x R1 B4")``,
    as :meth:`parse`); ``Move.exchange(tiles)``; ``Move.pass_turn()``;
    ``Move.reroll(tiles, faces)``; ``Move.parse(text)``. ``repr`` writes it in the
    notation: ``Move('R1@0,0 R2@0,1', score=3)``.

    Attributes
    ----------
    kind
        a :class:`MoveKind`.
    placements
        the ``(row, col, tile)`` triples of a placement, sorted by (row, col);
        empty for the other kinds.
    tiles
        the tiles placed (in the order of ``placements``), exchanged (sorted) or,
        for a re-roll, the faces the re-rolled cubes showed before (sorted).
    faces
        a re-roll's outcome: the face each cube of ``tiles`` shows after it (same
        colour, same order); empty for a re-roll not yet made and other kinds.
    score
        the placement's points when the move comes from
        :meth:`Game.legal_moves`, else None.

    Notes
    -----
    Equality and hashing ignore ``score``. Raises TypeError/ValueError naming the
    problem (a malformed triple, a tile outside 0..35, a coordinate with
    ``|x| >= 2**31``, an empty placement or more than 6 tiles).
    """

    __slots__ = ("kind", "placements", "tiles", "faces", "score")
    kind: MoveKind
    placements: tuple[tuple[int, int, int], ...]
    tiles: tuple[int, ...]
    faces: tuple[int, ...]
    score: int | None

    def __init__(self, placements: Iterable[tuple[int, int, int]] | str, score: int | None = None) -> None:
        if isinstance(placements, str):
            m = parse_move(placements)
            self._init(m.kind, m.placements, m.tiles, score if m.kind is MoveKind.PLACE else None, m.faces)
            return
        items = []
        for p in placements:
            try:
                r, c, t = p
            except (TypeError, ValueError):
                raise TypeError(f"a placement is a (row, col, tile) triple, not {p!r}") from None
            items.append((check_coord(r, "row"), check_coord(c, "col"), check_tile(t)))
            if len(items) > 6:
                raise ValueError("a placement has at most 6 tiles")
        if not items:
            raise ValueError("a placement needs at least one tile")
        ordered = tuple(sorted(items))
        self._init(MoveKind.PLACE, ordered, tuple(t for _, _, t in ordered), score)

    def _init(
        self,
        kind: MoveKind,
        placements: tuple[tuple[int, int, int], ...],
        tiles: tuple[int, ...],
        score: int | None,
        faces: tuple[int, ...] = (),
    ) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "placements", placements)
        object.__setattr__(self, "tiles", tiles)
        object.__setattr__(self, "faces", faces)
        object.__setattr__(self, "score", score)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("Move is frozen")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("Move is frozen")

    @classmethod
    def exchange(cls, tiles: Iterable[int]) -> Move:
        """An exchange.

        Parameters
        ----------
        tiles
            an iterable of 1 to 6 tile ints.

        Returns
        -------
        Move

        Raises
        ------
        TypeError, ValueError
            naming the problem.
        """
        checked = tuple(sorted(check_tile(t) for t in tiles))
        if not 1 <= len(checked) <= 6:
            raise ValueError(f"an exchange has 1 to 6 tiles, not {len(checked)}")
        m = cls.__new__(cls)
        m._init(MoveKind.EXCHANGE, (), checked, None)
        return m

    @classmethod
    def pass_turn(cls) -> Move:
        """A pass."""
        m = cls.__new__(cls)
        m._init(MoveKind.PASS, (), (), None)
        return m

    @classmethod
    def reroll(cls, tiles: Iterable[int], faces: Iterable[int] | None = None) -> Move:
        """A Qwirkle Cubes re-roll. The pairs are kept sorted by (tile, face).

        Parameters
        ----------
        tiles
            the faces of the cubes re-rolled, 1 to 6 tile ints.
        faces
            its outcome, when known: the face each of those cubes shows after the roll (same
            order, same colour).

        Returns
        -------
        Move

        Raises
        ------
        TypeError, ValueError
            naming the problem.
        """
        before = [check_tile(t) for t in tiles]
        if not 1 <= len(before) <= 6:
            raise ValueError(f"a re-roll has 1 to 6 cubes, not {len(before)}")
        if faces is None:
            m = cls.__new__(cls)
            m._init(MoveKind.REROLL, (), tuple(sorted(before)), None)
            return m
        after = [check_tile(t) for t in faces]
        if len(after) != len(before):
            raise ValueError(f"a re-roll of {len(before)} cubes has {len(before)} faces after it, not {len(after)}")
        for t, f in zip(before, after):
            if t // 6 != f // 6:
                raise ValueError(f"a roll never changes a cube's colour: {tile_code(t)} cannot become {tile_code(f)}")
        pairs = sorted(zip(before, after))
        m = cls.__new__(cls)
        m._init(MoveKind.REROLL, (), tuple(t for t, _ in pairs), None, tuple(f for _, f in pairs))
        return m

    @classmethod
    def parse(cls, text: str) -> Move:
        """The move written ``text`` in the project's notation (docs/notation.md).

        Parameters
        ----------
        text
            a str.

        Returns
        -------
        Move

        Raises
        ------
        TypeError, ValueError
            a non-str; naming the bad word.
        """
        return parse_move(text)

    def with_score(self, score: int | None) -> Move:
        """The same move carrying a score.

        Parameters
        ----------
        score
            its points (an int), or None.

        Returns
        -------
        Move
        """
        m = Move.__new__(Move)
        m._init(self.kind, self.placements, self.tiles, score, self.faces)
        return m

    @property
    def cells(self) -> tuple[tuple[int, int], ...]:
        """The (row, col) cells of a placement, sorted."""
        return tuple((r, c) for r, c, _ in self.placements)

    def _key(self) -> tuple[Any, ...]:
        return (self.kind, self.placements if self.kind is MoveKind.PLACE else self.tiles, self.faces)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Move) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __len__(self) -> int:
        return len(self.placements) if self.kind is MoveKind.PLACE else len(self.tiles)

    def __str__(self) -> str:
        return format_move(self)

    def __repr__(self) -> str:
        score = "" if self.score is None else f", score={self.score}"
        return f"Move({format_move(self)!r}{score})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.kind.value, self.placements, self.tiles, self.score, self.faces))


def _rebuild(
    kind: str,
    placements: tuple[tuple[int, int, int], ...],
    tiles: tuple[int, ...],
    score: int | None,
    faces: tuple[int, ...] = (),
) -> Move:
    """Unpickle a :class:`Move` (its fields were checked when it was made)."""
    m = Move.__new__(Move)
    m._init(MoveKind(kind), placements, tiles, score, faces)
    return m


# the slots' own setters, which a frozen Move's __setattr__ does not go through: the
# fastest way to fill thousands of them (moves_from_arrays)
_SLOT_SETTERS = tuple(Move.__dict__[name].__set__ for name in ("kind", "placements", "tiles", "score", "faces"))


def moves_from_arrays(
    rows: np.ndarray, cols: np.ndarray, tiles: np.ndarray, counts: np.ndarray, scores: np.ndarray
) -> list[Move]:
    """Placements given as arrays, as :meth:`Game.legal_move_arrays` returns them.

    Move ``i`` puts ``tiles[i, j]`` on ``(rows[i, j], cols[i, j])`` for ``j < counts[i]``
    and scores ``scores[i]``; slots past a move's count are ignored. The same checks as
    ``Move(placements, score)``, made on the whole arrays at once.

    Parameters
    ----------
    rows, cols, tiles
        int arrays [n, 6].
    counts, scores
        int arrays [n].

    Returns
    -------
    list of Move

    Raises
    ------
    ValueError
        a count outside 1..6, a tile outside 0..35 or a coordinate with ``|x| >= 2**31``.
    """
    counts = np.asarray(counts)
    if len(counts) == 0:
        return []
    if counts.min() < 1 or counts.max() > 6:
        raise ValueError("a placement has 1 to 6 tiles")
    rows, cols, tiles = (np.asarray(a)[:, :6] for a in (rows, cols, tiles))
    unused = np.arange(6) >= counts[:, None]
    bad = (tiles < 0) | (tiles > 35) | (np.abs(rows) >= COORD_LIMIT) | (np.abs(cols) >= COORD_LIMIT)
    if not np.all(bad <= unused):
        raise ValueError("a tile outside 0..35 or a coordinate with |x| >= 2**31 in the placements")
    # the engine lists a placement's cells in (row, col) order already: sort only if not
    later = (rows[:, 1:] > rows[:, :-1]) | ((rows[:, 1:] == rows[:, :-1]) & (cols[:, 1:] > cols[:, :-1]))
    in_order = bool(np.all(later | unused[:, 1:]))
    fields: list[Any] = [None] * len(counts)  # (placements, tiles) of each move
    if in_order:  # the moves of each tile count k at once: their triples zipped column by column
        for k in range(1, 7):
            which = np.flatnonzero(counts == k)
            if len(which):
                r, c, t = (a[which, :k].T.tolist() for a in (rows, cols, tiles))
                triples = zip(*(zip(r[j], c[j], t[j]) for j in range(k)))
                for i, placements, placed in zip(which.tolist(), triples, zip(*t)):
                    fields[i] = (placements, placed)
    else:
        for i, (r, c, t, k) in enumerate(zip(rows.tolist(), cols.tolist(), tiles.tolist(), counts.tolist())):
            placements = tuple(sorted(zip(r[:k], c[:k], t[:k])))
            fields[i] = (placements, tuple(x for _, _, x in placements))
    new, place = Move.__new__, MoveKind.PLACE
    set_kind, set_placements, set_tiles, set_score, set_faces = _SLOT_SETTERS
    out = []
    for (placements, placed), score in zip(fields, np.asarray(scores).tolist()):
        m = new(Move)
        set_kind(m, place)
        set_placements(m, placements)
        set_tiles(m, placed)
        set_score(m, score)
        set_faces(m, ())
        out.append(m)
    return out


def format_move(move: Move) -> str:
    """The canonical text of a move (docs/notation.md).

    Parameters
    ----------
    move
        a :class:`Move`.

    Returns
    -------
    str
        ``pass``, ``x R1 B4``, ``R1@0,0 R2@0,1``, or a re-roll ``r R1 B4 -> R3 B6``
        (``r R1 B4`` before it is made).
    """
    if move.kind is MoveKind.PASS:
        return "pass"
    if move.kind is MoveKind.EXCHANGE:
        return "x " + format_tiles(move.tiles)
    if move.kind is MoveKind.REROLL:
        return "r " + format_tiles(move.tiles) + (f" {_ARROW} " + format_tiles(move.faces) if move.faces else "")
    return format_cells(move.placements)


def parse_move(text: str) -> Move:
    """The :class:`Move` written as ``text`` in the notation (docs/notation.md).

    Parameters
    ----------
    text
        a str: ``"R1@0,0 R2@0,1"``, ``"x R1 B4"``, ``"pass"`` or ``"r R1 B4 -> R3 B6"``.

    Returns
    -------
    Move

    Raises
    ------
    TypeError, ValueError
        naming what is wrong with the text.
    """
    if not isinstance(text, str):
        raise TypeError(f"move text must be a str, not {type(text).__name__}")
    words = text.split()
    if not words:
        raise ValueError(f"empty move text; expected {_MOVE_FORMS}")
    head = words[0].lower()
    if head == "pass":
        if len(words) > 1:
            raise ValueError(f"move {quoted(text)}, word 2: 'pass' takes nothing after it")
        return Move.pass_turn()
    if head in ("r", "reroll"):
        return _parse_reroll(text, words)
    if head in ("x", "exchange"):
        if not 2 <= len(words) <= 7:
            raise ValueError(
                f"move {quoted(text)}: an exchange names 1 to 6 tiles, like 'x R1 B4', not {len(words) - 1}"
            )
        return Move.exchange(tile_word(text, "move", i, w) for i, w in enumerate(words[1:], start=2))
    if "@" not in text:
        raise ValueError(f"move {quoted(text)}: not a move; expected {_MOVE_FORMS}")
    if len(words) > 6:
        raise ValueError(f"move {quoted(text)}: a placement has at most 6 tiles, not {len(words)}")
    return Move(parse_cells(text, "move"))


def _parse_reroll(text: str, words: list[str]) -> Move:
    """A re-roll: ``r TILES`` or ``r TILES -> FACES``."""
    arrow = words.index(_ARROW) if _ARROW in words else len(words)
    before = [tile_word(text, "move", i, w) for i, w in enumerate(words[1:arrow], start=2)]
    if not 1 <= len(before) <= 6:
        raise ValueError(f"move {quoted(text)}: a re-roll names 1 to 6 cubes, like 'r R1 B4', not {len(before)}")
    if arrow == len(words):
        return Move.reroll(before)
    after = [tile_word(text, "move", i, w) for i, w in enumerate(words[arrow + 1 :], start=arrow + 2)]
    try:
        return Move.reroll(before, after)
    except ValueError as e:
        raise ValueError(f"move {quoted(text)}: {e}") from None


@dataclass(frozen=True)
class Action:
    """One action taken: who acted (seat), the :class:`Move`, the points it scored (a
    placement's points without the 6 for going out; 0 for an exchange, a pass or a
    re-roll), and every seat's score after it (bonus included)."""

    player: int
    move: Move
    points: int
    scores: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """The action as a JSON-ready dict (the move in notation)."""
        return {
            "player": self.player,
            "move": format_move(self.move),
            "points": self.points,
            "scores": list(self.scores),
        }
