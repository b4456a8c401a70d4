"""tiles.py: tile numbers, names and two-character codes; bad tiles are refused with
TypeError (not a tile-like value) or ValueError (out of range, unknown code)."""

from __future__ import annotations

import numpy as np
import pytest

import qwirkle_core as qc
from qwirkle_core.game.tiles import check_tile


def test_every_tile_code_round_trips():
    codes = [qc.tile_code(t) for t in range(36)]
    assert codes[:7] == ["R1", "R2", "R3", "R4", "R5", "R6", "O1"]
    assert codes[35] == "P6"
    assert len(set(codes)) == 36
    for t, code in enumerate(codes):
        assert qc.parse_tile(code) == t
        assert qc.parse_tile(code.lower()) == t
        assert qc.parse_tile(f"  {code} ") == t
        assert qc.tile_name(t) == f"{qc.COLORS[t // 6]} {qc.SHAPES[t % 6]}"


def test_known_codes():
    assert qc.parse_tile("B4") == qc.tile("blue", "clover") == 27
    assert qc.parse_tile("y6") == qc.tile("yellow", "star") == 17
    assert qc.tile_code(qc.tile("green", "cross")) == "G5"


def test_tile_takes_indices_names_and_numpy_ints():
    assert qc.tile(4, 3) == qc.tile("blue", "clover") == qc.tile(" Blue ", "CLOVER") == 27
    assert qc.tile(np.int8(5), np.uint64(5)) == 35
    assert (qc.color_of(27), qc.shape_of(27)) == (4, 3)
    assert qc.color_of(np.int64(35)) == 5


@pytest.mark.parametrize(
    "color, shape, error, message",
    [
        ("pink", "circle", ValueError, "unknown color 'pink'"),
        ("red", "hexagon", ValueError, "unknown shape 'hexagon'"),
        (6, 0, ValueError, "color must be 0..5, not 6"),
        (0, -1, ValueError, "shape must be 0..5, not -1"),
        (1.0, 0, TypeError, "color must be an int 0..5 or a name"),
        (True, 0, TypeError, "color must be an int 0..5 or a name"),
        (0, None, TypeError, "shape must be an int 0..5 or a name"),
    ],
)
def test_tile_refuses_bad_colours_and_shapes(color, shape, error, message):
    with pytest.raises(error, match=message):
        qc.tile(color, shape)


@pytest.mark.parametrize(
    "text, message",
    [
        ("R7", "unknown shape digit '7'"),
        ("X1", "unknown colour letter 'X'"),
        ("R", "expected a colour letter"),
        ("R1 ", None),
    ],
)
def test_tile_codes(text, message):
    if message is None:
        assert qc.parse_tile(text) == 0
    else:
        with pytest.raises(ValueError, match=message):
            qc.parse_tile(text)


def test_parse_tile_wants_a_str_and_quotes_long_text_short():
    with pytest.raises(TypeError):
        qc.parse_tile(0)
    with pytest.raises(TypeError):
        qc.parse_tile(b"R1")
    with pytest.raises(ValueError) as err:
        qc.parse_tile("R" * 10_000)
    assert len(str(err.value)) < 200


def test_check_tile():
    assert [check_tile(t) for t in (0, np.int16(35), np.uint8(7))] == [0, 35, 7]
    for bad in (36, -1, 2**64, -(2**70)):
        with pytest.raises(ValueError, match="a tile is an int 0..35"):
            check_tile(bad)
    for bad in (1.0, "R1", None, True, np.float64(3)):
        with pytest.raises(TypeError, match="a tile is an int 0..35"):
            check_tile(bad)
    for f in (qc.color_of, qc.shape_of, qc.tile_name, qc.tile_code):
        with pytest.raises(ValueError):
            f(36)
        with pytest.raises(TypeError):
            f(2.0)
