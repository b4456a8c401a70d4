"""Text notation for tiles and moves (see docs/notation.md).

- tile: colour letter + shape digit, ``R1`` (red circle) .. ``P6`` (purple star);
- placement: tiles at cells, space-separated, ``R1@0,0 R2@0,1`` (row, then column);
- exchange: ``x`` then the tiles, ``x R1 B4``;
- pass: ``pass``.
Parsing is case-insensitive and tolerant of extra spaces; :func:`format_move` writes
the canonical form (placements sorted by row, then column), which parses back to an
equal move.
"""

import re

from .tiles import parse_tile, tile_code

_PLACEMENT = re.compile(r"^([A-Za-z]\w)@(-?\d+),(-?\d+)$")


def format_move(move):
    if move.kind == "pass":
        return "pass"
    if move.kind == "exchange":
        return "x " + " ".join(tile_code(t) for t in move.tiles)
    return " ".join(f"{tile_code(t)}@{r},{c}" for r, c, t in move.placements)


def parse_move(text):
    """The :class:`~qwirkle_core.Move` written as ``text``; ValueError naming what is wrong."""
    from .game import Move

    if not isinstance(text, str):
        raise TypeError(f"move text must be a str, not {type(text).__name__}")
    words = text.split()
    if not words:
        raise ValueError("empty move text; expected placements like 'R1@0,0 R2@0,1', 'x R1 B4' or 'pass'")
    head = words[0].lower()
    if head == "pass":
        if len(words) > 1:
            raise ValueError(f"move {text!r}: 'pass' takes nothing after it")
        return Move.pass_turn()
    if head in ("x", "exchange"):
        if not 2 <= len(words) <= 7:
            raise ValueError(f"move {text!r}: an exchange names 1 to 6 tiles, like 'x R1 B4'")
        tiles = []
        for i, w in enumerate(words[1:], start=2):
            try:
                tiles.append(parse_tile(w))
            except ValueError as e:
                raise ValueError(f"move {text!r}, word {i}: {e}") from None
        return Move.exchange(tiles)
    placements = []
    for i, w in enumerate(words, start=1):
        m = _PLACEMENT.match(w)
        if not m:
            raise ValueError(f"move {text!r}, word {i} {w!r}: expected TILE@ROW,COL such as R1@0,-2")
        try:
            t = parse_tile(m.group(1))
        except ValueError as e:
            raise ValueError(f"move {text!r}, word {i}: {e}") from None
        placements.append((int(m.group(2)), int(m.group(3)), t))
    if len(placements) > 6:
        raise ValueError(f"move {text!r}: a placement has at most 6 tiles, not {len(placements)}")
    return Move(placements)
