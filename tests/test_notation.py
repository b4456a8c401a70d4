"""notation.py: tile lists and placed tiles as text; malformed text is refused with a
ValueError naming the word and the problem."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qwirkle_core.game.notation import format_cells, format_tiles, parse_cells, parse_tiles

tiles = st.integers(0, 35)
coords = st.integers(-(2**31) + 1, 2**31 - 1)


def test_lists_and_cells():
    assert format_tiles([0, 27, 27]) == "R1 B4 B4"
    assert parse_tiles(" r1  B4 b4") == [0, 27, 27]
    assert parse_tiles("") == []
    cells = [(3, -1, 35), (0, 0, 0)]
    assert format_cells(cells) == "P6@3,-1 R1@0,0"
    assert parse_cells("P6@3,-1 R1@0,0") == cells  # order kept, any count
    assert len(parse_cells(" ".join(f"R1@0,{c}" for c in range(9)))) == 9
    assert parse_cells("g5@+3,-0") == [(3, 0, 22)]


@given(st.lists(tiles, max_size=20))
def test_tile_lists_round_trip(ts):
    assert parse_tiles(format_tiles(ts)) == ts


@given(st.lists(st.tuples(coords, coords, tiles), max_size=12))
def test_cells_round_trip(cells):
    text = format_cells(cells)
    assert parse_cells(text) == cells
    assert parse_cells(text.lower()) == cells


def test_parse_tiles_names_the_word():
    with pytest.raises(ValueError, match=r"hand 'R1 R9', word 2: tile code 'R9'"):
        parse_tiles("R1 R9", "hand")


@pytest.mark.parametrize(
    "text, message",
    [
        ("R1@0", r"placement 'R1@0', word 1 'R1@0': expected TILE@ROW,COL"),
        ("R1@0,0 R2@0;1", r"word 2 'R2@0;1': expected TILE@ROW,COL"),
        ("R1@a,0", r"word 1 'R1@a,0'"),
        ("R12@0,0", r"word 1 'R12@0,0'"),
        ("R7@0,0", r"word 1: tile code 'R7': unknown shape digit '7'"),
        ("R1@2147483648,0", r"word 1: row 2147483648 is outside the board"),
        ("R1@0,-2147483648", r"word 1: col -2147483648 is outside the board"),
        ("R1@0,99999999999999999999999", r"word 1: a coordinate is outside the board"),
    ],
)
def test_malformed_cells_name_the_word(text, message):
    with pytest.raises(ValueError, match=message):
        parse_cells(text)


def test_wrong_types():
    with pytest.raises(TypeError):
        parse_cells(5)
    with pytest.raises(TypeError):
        parse_tiles(["R1"])


def test_long_text_is_quoted_short():
    text = "R1@0,0 " * 5000 + "bad"
    with pytest.raises(ValueError) as err:
        parse_cells(text)
    assert "word 5001" in str(err.value) and len(str(err.value)) < 300
