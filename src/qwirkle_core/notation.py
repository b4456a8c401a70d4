"""Text notation for tiles, tile lists, cells and moves (see docs/notation.md).

- tile: colour letter + shape digit, ``R1`` (red circle) .. ``P6`` (purple star);
- tile list: tiles separated by spaces, ``R1 B4 B4``;
- placed tile: ``TILE@ROW,COL``, ``R1@0,-2`` (row, then column);
- placement: placed tiles separated by spaces, ``R1@0,0 R2@0,1``;
- exchange: ``x`` then the tiles, ``x R1 B4``;
- pass: ``pass``.

Parsing is case-insensitive and tolerant of extra spaces; errors are ``ValueError``
naming the text, the word (counted from 1) and what is wrong with it. The
``format_*`` functions write the canonical form (upper case, single spaces, a move's
tiles sorted), which parses back to an equal value.
"""

import re

from .tiles import parse_tile, tile_code

__all__ = ["format_cells", "format_move", "format_tiles", "parse_cells", "parse_move", "parse_tiles"]

_PLACED = re.compile(r"^(\w\w)@(-?[0-9]+),(-?[0-9]+)$")
_MOVE_FORMS = "placements like 'R1@0,0 R2@0,1', 'x R1 B4' or 'pass'"


def _tile_word(text, what, i, word):
    try:
        return parse_tile(word)
    except ValueError as e:
        raise ValueError(f"{what} {text!r}, word {i}: {e}") from None


def format_tiles(tiles):
    """``"R1 B4"`` for the tiles ``[0, 27]`` (in the order given)."""
    return " ".join(tile_code(t) for t in tiles)


def parse_tiles(text, what="tile list"):
    """The tiles (a list of ints, in order) of space-separated codes such as ``"R1 B4"``."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str, not {type(text).__name__}")
    return [_tile_word(text, what, i, w) for i, w in enumerate(text.split(), start=1)]


def format_cells(placements):
    """``"R1@0,0 R2@0,1"`` for ``(row, col, tile)`` triples, in the order given."""
    return " ".join(f"{tile_code(t)}@{r},{c}" for r, c, t in placements)


def parse_cells(text, what="placement"):
    """The ``(row, col, tile)`` triples of ``"R1@0,0 R2@0,1"``, in the order written.

    Any number of triples (no rule is checked here); ``what`` names the text in errors.
    """
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str, not {type(text).__name__}")
    out = []
    for i, w in enumerate(text.split(), start=1):
        m = _PLACED.match(w)
        if not m:
            raise ValueError(f"{what} {text!r}, word {i} {w!r}: expected TILE@ROW,COL such as R1@0,-2")
        out.append((int(m.group(2)), int(m.group(3)), _tile_word(text, what, i, m.group(1))))
    return out


def format_move(move):
    """The canonical text of a :class:`~qwirkle_core.Move`."""
    if move.kind == "pass":
        return "pass"
    if move.kind == "exchange":
        return "x " + format_tiles(move.tiles)
    return format_cells(move.placements)


def parse_move(text):
    """The :class:`~qwirkle_core.Move` written as ``text``; ValueError naming what is wrong."""
    from .game import Move

    if not isinstance(text, str):
        raise TypeError(f"move text must be a str, not {type(text).__name__}")
    words = text.split()
    if not words:
        raise ValueError(f"empty move text; expected {_MOVE_FORMS}")
    head = words[0].lower()
    if head == "pass":
        if len(words) > 1:
            raise ValueError(f"move {text!r}, word 2 {words[1]!r}: 'pass' takes nothing after it")
        return Move.pass_turn()
    if head in ("x", "exchange"):
        if not 2 <= len(words) <= 7:
            raise ValueError(f"move {text!r}: an exchange names 1 to 6 tiles, like 'x R1 B4', not {len(words) - 1}")
        return Move.exchange(_tile_word(text, "move", i, w) for i, w in enumerate(words[1:], start=2))
    if "@" not in text:
        raise ValueError(f"move {text!r}: not a move; expected {_MOVE_FORMS}")
    placements = parse_cells(text, "move")
    if len(placements) > 6:
        raise ValueError(f"move {text!r}: a placement has at most 6 tiles, not {len(placements)}")
    return Move(placements)
