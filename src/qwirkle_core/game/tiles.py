"""Tiles: ``t = color * 6 + shape``, their names and their two-character codes.

Colours: red, orange, yellow, green, blue, purple (letters R O Y G B P).
Shapes: circle, square, diamond, clover, cross (4-point star), star (8-point star),
written as digits 1..6 in codes. So ``"R1"`` is the red circle (tile 0) and ``"P6"``
the purple star (tile 35).
"""

from __future__ import annotations

import operator
from typing import Any

__all__ = [
    "COLORS",
    "SHAPES",
    "check_color",
    "check_tile",
    "color_code",
    "color_of",
    "parse_color",
    "parse_tile",
    "shape_of",
    "tile",
    "tile_code",
    "tile_name",
]

COLORS = ("red", "orange", "yellow", "green", "blue", "purple")
SHAPES = ("circle", "square", "diamond", "clover", "cross", "star")
COLOR_LETTERS = "ROYGBP"
SHAPE_DIGITS = "123456"
NUM_TILE_TYPES = 36
COPIES = 3
NUM_TILES = NUM_TILE_TYPES * COPIES
"""The tile game's 108 tiles."""
CUBES_PER_COLOR = 15
"""Qwirkle Cubes: 15 cubes of each colour, 90 in all."""


def _index(value: Any, names: tuple[str, ...], what: str) -> int:
    if isinstance(value, str):
        key = value.strip().lower()
        if key in names:
            return names.index(key)
        raise ValueError(f"unknown {what} {value!r}; expected one of {', '.join(names)}")
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{what} must be an int 0..5 or a name, not {value!r}")
    i = operator.index(value)
    if not 0 <= i < 6:
        raise ValueError(f"{what} must be 0..5, not {value!r}")
    return i


def tile(color: int | str, shape: int | str) -> int:
    """The tile number of a colour and a shape.

    Parameters
    ----------
    color
        an index 0..5 or a name (``"red"``).
    shape
        an index 0..5 or a name (``"circle"``).

    Returns
    -------
    int
        ``color * 6 + shape``, 0..35.

    Raises
    ------
    TypeError, ValueError
        naming the bad argument.
    """
    return _index(color, COLORS, "color") * 6 + _index(shape, SHAPES, "shape")


def check_tile(t: Any) -> int:
    """Check a tile.

    Parameters
    ----------
    t
        a tile int.

    Returns
    -------
    int
        ``t``, 0..35.

    Raises
    ------
    TypeError, ValueError
        not an int; out of range.
    """
    if isinstance(t, bool) or not hasattr(t, "__index__"):
        raise TypeError(f"a tile is an int 0..35, not {t!r}")
    i = operator.index(t)
    if not 0 <= i < NUM_TILE_TYPES:
        raise ValueError(f"a tile is an int 0..35, not {i if abs(i) < 10**12 else 'a huge int'}")
    return i


def check_color(c: Any) -> int:
    """A colour as its index.

    Parameters
    ----------
    c
        an int 0..5 or a colour name (``"red"``).

    Returns
    -------
    int
        0..5.

    Raises
    ------
    TypeError, ValueError
        naming the problem.
    """
    return _index(c, COLORS, "color")


def color_code(c: int) -> str:
    """The letter of a colour (``"R"`` for 0).

    Parameters
    ----------
    c
        anything :func:`check_color` takes.

    Returns
    -------
    str

    Raises
    ------
    TypeError, ValueError
        as :func:`check_color`.
    """
    return COLOR_LETTERS[check_color(c)]


def parse_color(text: str) -> int:
    """The colour of a letter, as used for the cubes in a Qwirkle Cubes bag.

    Parameters
    ----------
    text
        ``"R"``, ``"b"``: R O Y G B P, case-insensitive.

    Returns
    -------
    int
        0..5.

    Raises
    ------
    TypeError, ValueError
        a non-str; naming the problem.
    """
    if not isinstance(text, str):
        raise TypeError(f"a colour letter is a str, not {type(text).__name__}")
    s = text.strip().upper()
    if len(s) != 1 or s not in COLOR_LETTERS:
        shown = text if len(text) <= 20 else text[:17] + "..."
        raise ValueError(f"colour letter {shown!r}: expected one of R O Y G B P")
    return COLOR_LETTERS.index(s)


def color_of(t: int) -> int:
    """The colour of a tile.

    Parameters
    ----------
    t
        a tile int, 0..35.

    Returns
    -------
    int
        the colour index, 0..5 (red, orange, yellow, green, blue, purple).

    Raises
    ------
    TypeError, ValueError
        naming what is wrong with the argument.
    """
    return check_tile(t) // 6


def shape_of(t: int) -> int:
    """The shape of a tile.

    Parameters
    ----------
    t
        a tile int, 0..35.

    Returns
    -------
    int
        the shape index, 0..5 (circle, square, diamond, clover, cross, star).

    Raises
    ------
    TypeError, ValueError
        naming what is wrong with the argument.
    """
    return check_tile(t) % 6


def tile_name(t: int) -> str:
    """The name of a tile: ``"red circle"`` for tile 0, and so on.

    Parameters
    ----------
    t
        a tile int, 0..35.

    Returns
    -------
    str
        colour and shape.

    Raises
    ------
    TypeError, ValueError
        naming what is wrong with the argument.
    """
    t = check_tile(t)
    return f"{COLORS[t // 6]} {SHAPES[t % 6]}"


def tile_code(t: int) -> str:
    """The two-character code of a tile (``"R1"`` for tile 0).

    Parameters
    ----------
    t
        a tile int, 0..35.

    Returns
    -------
    str
        colour letter and shape digit.

    Raises
    ------
    TypeError, ValueError
        naming what is wrong with the argument.
    """
    t = check_tile(t)
    return COLOR_LETTERS[t // 6] + SHAPE_DIGITS[t % 6]


def parse_tile(text: str) -> int:
    """The tile of a two-character code such as ``"R1"`` or ``"b6"`` (case-insensitive).

    Parameters
    ----------
    text
        the code, a str.

    Returns
    -------
    int
        the tile int, 0..35.

    Raises
    ------
    TypeError, ValueError
        naming what is wrong with the argument.
    """
    if not isinstance(text, str):
        raise TypeError(f"a tile code is a str, not {type(text).__name__}")
    s = text.strip().upper()
    shown = text if len(text) <= 20 else text[:17] + "..."
    if len(s) != 2:
        raise ValueError(f"tile code {shown!r}: expected a colour letter (ROYGBP) and a shape digit (1-6)")
    if s[0] not in COLOR_LETTERS:
        raise ValueError(f"tile code {shown!r}: unknown colour letter {s[0]!r}; expected one of R O Y G B P")
    if s[1] not in SHAPE_DIGITS:
        raise ValueError(f"tile code {shown!r}: unknown shape digit {s[1]!r}; expected 1-6")
    return COLOR_LETTERS.index(s[0]) * 6 + SHAPE_DIGITS.index(s[1])
