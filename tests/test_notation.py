"""The text notation: tiles, tile lists, cells and moves round-trip through text, and
malformed text is refused with a ValueError naming the word and the problem."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import qwirkle_core as qc
from qwirkle_core.notation import format_cells, format_tiles, parse_cells, parse_tiles
from test_records import games

tiles = st.integers(0, 35)
coords = st.integers(-120, 120)
placements = st.lists(st.tuples(coords, coords, tiles), min_size=1, max_size=6)
moves = st.one_of(
    placements.map(qc.Move),
    st.lists(tiles, min_size=1, max_size=6).map(qc.Move.exchange),
    st.just(qc.Move.pass_turn()),
)


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


@given(moves)
def test_move_text_round_trips(move):
    text = str(move)
    again = qc.Move.parse(text)
    assert again == move
    assert again.kind == move.kind
    assert again.placements == move.placements
    assert again.tiles == move.tiles
    assert str(again) == text


@given(games(max_turns=30))
def test_legal_moves_round_trip(g):
    for move in g.legal_moves():
        assert qc.Move.parse(str(move)) == move
        assert qc.Move.parse(str(move).lower()) == move


def test_canonical_forms():
    m = qc.Move([(0, 1, qc.parse_tile("R2")), (0, 0, qc.parse_tile("R1"))])
    assert str(m) == "R1@0,0 R2@0,1"
    assert str(qc.Move.exchange([27, 0])) == "x R1 B4"
    assert str(qc.Move.pass_turn()) == "pass"
    assert qc.Move.parse("  r2@0,1    r1@0,0 ") == m
    assert qc.Move.parse("exchange b4 r1") == qc.Move.exchange([0, 27])
    assert qc.Move.parse("PASS") == qc.Move.pass_turn()
    assert qc.Move.parse("G5@-12,7").placements == ((-12, 7, qc.parse_tile("G5")),)


def test_lists_and_cells():
    assert format_tiles([0, 27, 27]) == "R1 B4 B4"
    assert parse_tiles(" r1  B4 b4") == [0, 27, 27]
    assert parse_tiles("") == []
    cells = [(3, -1, 35), (0, 0, 0)]
    assert format_cells(cells) == "P6@3,-1 R1@0,0"
    assert parse_cells("P6@3,-1 R1@0,0") == cells  # order kept, any count
    assert len(parse_cells(" ".join(f"R1@0,{c}" for c in range(9)))) == 9


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty move text"),
        ("   ", "empty move text"),
        ("R1", "'R1': not a move"),
        ("hello", "'hello': not a move"),
        ("R1@0,0 R7@0,1", r"word 2: tile code 'R7': unknown shape digit '7'"),
        ("Q1@0,0", r"word 1: tile code 'Q1': unknown colour letter 'Q'"),
        ("R1@0", r"word 1 'R1@0': expected TILE@ROW,COL"),
        ("R1@0,0 R2@0;1", r"word 2 'R2@0;1': expected TILE@ROW,COL"),
        ("R1@a,0", r"word 1 'R1@a,0'"),
        ("R1@0,0 R2", r"word 2 'R2'"),
        ("R12@0,0", r"word 1 'R12@0,0'"),
        (" ".join(f"R1@0,{c}" for c in range(7)), "at most 6 tiles, not 7"),
        ("x", "1 to 6 tiles, like 'x R1 B4', not 0"),
        ("x R1 R2 R3 R4 R5 R6 O1", "not 7"),
        ("x R1 Z2", r"word 3: tile code 'Z2': unknown colour letter 'Z'"),
        ("x R1 B", r"word 3: tile code 'B'"),
        ("pass now", r"word 2 'now': 'pass' takes nothing after it"),
    ],
)
def test_malformed_moves_name_the_problem(text, message):
    with pytest.raises(ValueError, match=message):
        qc.Move.parse(text)


@pytest.mark.parametrize(
    "text, message",
    [("R7", "unknown shape digit '7'"), ("X1", "unknown colour letter 'X'"), ("R", "expected a colour letter"), ("R1 ", None)],
)
def test_tile_codes(text, message):
    if message is None:
        assert qc.parse_tile(text) == 0
    else:
        with pytest.raises(ValueError, match=message):
            qc.parse_tile(text)


def test_wrong_types():
    with pytest.raises(TypeError):
        qc.Move.parse(None)
    with pytest.raises(TypeError):
        parse_cells(5)
    with pytest.raises(TypeError):
        qc.parse_tile(0)


def test_parse_tiles_names_the_word():
    with pytest.raises(ValueError, match=r"hand 'R1 R9', word 2: tile code 'R9'"):
        parse_tiles("R1 R9", "hand")
