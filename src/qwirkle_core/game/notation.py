"""Text notation for tiles, tile lists and placed tiles (see docs/notation.md).

- tile: colour letter + shape digit, ``R1`` (red circle) .. ``P6`` (purple star);
- tile list: tiles separated by spaces, ``R1 B4 B4``;
- placed tile: ``TILE@ROW,COL``, ``R1@0,-2`` (row, then column);
- placed tiles: separated by spaces, ``R1@0,0 R2@0,1``.

Whole moves (placements, ``x R1 B4`` exchanges, ``pass``) are read and written by
:mod:`qwirkle_core.game.move` (``Move.parse``, ``str(move)``) on top of these.

Parsing is case-insensitive and tolerant of extra spaces; errors are ``ValueError``
naming the text, the word (counted from 1) and what is wrong with it. The ``format_*``
functions write the canonical form (upper case, single spaces), which parses back to
an equal value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .._checks import check_coord
from .tiles import parse_tile, tile_code

__all__ = [
    "format_board",
    "format_cells",
    "format_tiles",
    "format_view",
    "over_text",
    "parse_cells",
    "parse_tiles",
    "tile_word",
]

_PLACED = re.compile(r"^(\w\w)@([-+]?[0-9]+),([-+]?[0-9]+)$")
_SHOWN = 80  # characters of a text quoted in an error message


def quoted(text: str) -> str:
    """``repr(text)``, cut short for error messages about long input."""
    return repr(text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "...")


def tile_word(text: str, what: str, i: int, word: str) -> int:
    """The tile of word ``i`` of ``text``; ValueError naming ``what``, the word and why."""
    try:
        return parse_tile(word)
    except ValueError as e:
        raise ValueError(f"{what} {quoted(text)}, word {i}: {e}") from None


def format_tiles(tiles: Iterable[int]) -> str:
    """``"R1 B4"`` for the tiles ``[0, 27]`` (in the order given)."""
    return " ".join(tile_code(t) for t in tiles)


def parse_tiles(text: str, what: str = "tile list") -> list[int]:
    """The tiles (a list of ints, in order) of space-separated codes such as ``"R1 B4"``.

    Raises TypeError for a non-str, ValueError naming the bad word.
    """
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str, not {type(text).__name__}")
    return [tile_word(text, what, i, w) for i, w in enumerate(text.split(), start=1)]


def format_cells(placements: Iterable[tuple[int, int, int]]) -> str:
    """``"R1@0,0 R2@0,1"`` for ``(row, col, tile)`` triples, in the order given."""
    return " ".join(f"{tile_code(t)}@{r},{c}" for r, c, t in placements)


def parse_cells(text: str, what: str = "placement") -> list[tuple[int, int, int]]:
    """The ``(row, col, tile)`` triples of ``"R1@0,0 R2@0,1"``, in the order written.

    Any number of triples (no rule is checked here); ``what`` names the text in errors.
    Raises TypeError for a non-str, ValueError naming the bad word (a malformed word,
    an unknown tile, or a coordinate outside ``|x| < 2**31``).
    """
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str, not {type(text).__name__}")
    out = []
    for i, w in enumerate(text.split(), start=1):
        m = _PLACED.match(w)
        if not m or len(m.group(2)) > 12 or len(m.group(3)) > 12:
            if m:
                raise ValueError(
                    f"{what} {quoted(text)}, word {i}: a coordinate is outside the board (|row|, |col| < 2**31)"
                )
            raise ValueError(f"{what} {quoted(text)}, word {i} {quoted(w)}: expected TILE@ROW,COL such as R1@0,-2")
        try:
            row = check_coord(int(m.group(2)), "row")
            col = check_coord(int(m.group(3)), "col")
        except ValueError as e:
            raise ValueError(f"{what} {quoted(text)}, word {i}: {e}") from None
        out.append((row, col, tile_word(text, what, i, m.group(1))))
    return out


def format_board(board: dict[tuple[int, int], int]) -> str:
    """The board ``{(row, col): tile}`` as a text grid in the notation: column numbers
    on top, row numbers on the left, a tile code per cell and ``.`` for an empty cell,
    one empty ring around the tiles (so every cell a tile may go to is shown); the
    coordinates are those of ``TILE@ROW,COL``. An empty board is one line."""
    if not board:
        return "(empty board: the opening goes at 0,0, e.g. R1@0,0 R2@0,1)"
    rows = [r for r, _ in board]
    cols = [c for _, c in board]
    col_range = range(min(cols) - 1, max(cols) + 2)
    lines = ["    " + "".join(f"{c:>4}" for c in col_range)]
    for r in range(min(rows) - 1, max(rows) + 2):
        cells = (tile_code(board[r, c]) if (r, c) in board else " ." for c in col_range)
        lines.append(f"{r:>4}" + "".join(f"  {cell}" for cell in cells))
    return "\n".join(lines)


def over_text(winner: int | None) -> str:
    """``"over: player 1 wins"``, ``"over: a tie"`` (winner -1) or ``"over"`` (None: not known)."""
    if winner is None:
        return "over"
    return "over: a tie" if winner < 0 else f"over: player {winner} wins"


def format_view(
    title: str,
    board: dict[tuple[int, int], int],
    scores: Iterable[int],
    to_move: int,
    over: str | None,
    bag: int,
    hand: tuple[int, tuple[int, ...]] | None,
    unit: str = "tiles",
) -> str:
    """The text of ``str(game)``, ``str(position)`` and ``str(observation)``: a
    ``title`` line, the board (:func:`format_board`), the scores (``*`` marks the
    player to move, ``to_move``; ``over`` says who won instead when the game is over),
    the bag count (of ``unit``, "cubes" in Qwirkle Cubes) and ``hand``: ``(seat, tiles)``,
    the one hand shown (None: none)."""
    marks = "  ".join(f"{p}{'*' if p == to_move and over is None else ''}: {s}" for p, s in enumerate(scores))
    state = over if over is not None else f"player {to_move} to move"
    lines = [
        f"{title}, {state}",
        format_board(board),
        f"scores: {marks}",
        f"bag: {bag} {unit if bag != 1 else unit[:-1]}",
    ]
    if hand is not None:
        seat, tiles = hand
        lines.append(f"hand of player {seat}: {format_tiles(tiles) or '(empty)'}")
    return "\n".join(lines)
