"""move.py: Move is a frozen value with a MoveKind; str(move) and Move.parse round-trip;
malformed moves are refused with TypeError/ValueError naming the problem; Action."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import qwirkle_core as qc
from qwirkle_core.game.move import moves_from_arrays
from strategies import games

tiles = st.integers(0, 35)
coords = st.integers(-120, 120)
placements = st.lists(st.tuples(coords, coords, tiles), min_size=1, max_size=6)
moves = st.one_of(
    placements.map(qc.Move),
    st.lists(tiles, min_size=1, max_size=6).map(qc.Move.exchange),
    st.just(qc.Move.pass_turn()),
)


@given(moves)
def test_move_text_round_trips(move):
    text = str(move)
    again = qc.Move.parse(text)
    assert again == move
    assert again.kind == move.kind
    assert again.placements == move.placements
    assert again.tiles == move.tiles
    assert str(again) == text


@given(moves)
def test_moves_pickle_and_repr(move):
    assert pickle.loads(pickle.dumps(move)) == move
    assert eval(repr(move), {"Move": qc.Move}) == move


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


def test_move_value_semantics():
    a = qc.Move([(0, 1, 5), (0, 0, 3), (-2, 7, 1)])
    assert a.placements == ((-2, 7, 1), (0, 0, 3), (0, 1, 5))
    assert a.tiles == (1, 3, 5) and a.cells == ((-2, 7), (0, 0), (0, 1)) and len(a) == 3
    b = qc.Move(iter([(0, 0, 3), (-2, 7, 1), (0, 1, 5)]))
    assert a == b and hash(a) == hash(b)
    assert a.score is None
    assert a != qc.Move([(0, 1, 5), (0, 0, 3)])
    assert a != qc.Move([(0, 1, 5), (0, 0, 4), (-2, 7, 1)])
    assert len({a, b}) == 1
    scored = a.with_score(9)
    assert scored.score == 9 and scored == a and hash(scored) == hash(a)
    assert qc.Move.exchange([3, 1]) == qc.Move.exchange([1, 3]) != qc.Move.exchange([1, 3, 3])
    assert qc.Move.exchange([1]) != qc.Move([(0, 0, 1)]) and qc.Move.pass_turn() != "pass"


def test_moves_are_frozen():
    m = qc.Move([(0, 0, 1)])
    with pytest.raises(AttributeError):
        m.score = 3
    with pytest.raises(AttributeError):
        del m.kind
    assert m.score is None


def test_move_kind_is_a_str_enum():
    assert qc.MoveKind.PLACE == "place" and qc.MoveKind("exchange") is qc.MoveKind.EXCHANGE
    assert str(qc.MoveKind.PASS) == "pass"
    assert qc.Move([(0, 0, 1)]).kind is qc.MoveKind.PLACE
    assert qc.Move.exchange([1]).kind == "exchange" and qc.Move.pass_turn().kind == "pass"


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda: qc.Move([]), ValueError, "at least one tile"),
        (lambda: qc.Move([(0, c, 0) for c in range(7)]), ValueError, "at most 6 tiles"),
        (lambda: qc.Move([(0, 0)]), TypeError, r"a \(row, col, tile\) triple"),
        (lambda: qc.Move([5]), TypeError, r"a \(row, col, tile\) triple"),
        (lambda: qc.Move([(0, 0, 36)]), ValueError, "a tile is an int 0..35"),
        (lambda: qc.Move([(0.5, 0, 1)]), TypeError, "row must be an int"),
        (lambda: qc.Move([(0, 2**31, 1)]), ValueError, "col 2147483648 is outside the board"),
        (lambda: qc.Move([(-(2**64), 0, 1)]), ValueError, "outside the board"),
        (lambda: qc.Move.exchange([]), ValueError, "1 to 6 tiles, not 0"),
        (lambda: qc.Move.exchange(range(7)), ValueError, "1 to 6 tiles, not 7"),
        (lambda: qc.Move.exchange(["R1"]), TypeError, "a tile is an int"),
    ],
)
def test_bad_moves_are_refused(make, error, message):
    with pytest.raises(error, match=message):
        make()


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
        ("pass now", r"word 2: 'pass' takes nothing after it"),
        ("R1@18446744073709551616,0", "outside the board"),
    ],
)
def test_malformed_moves_name_the_problem(text, message):
    with pytest.raises(ValueError, match=message):
        qc.Move.parse(text)


def test_parse_wants_a_str():
    for bad in (None, 5, b"pass", ["pass"]):
        with pytest.raises(TypeError):
            qc.Move.parse(bad)


def test_action_is_a_frozen_value():
    m = qc.Move([(0, 0, 1)])
    a = qc.Action(player=1, move=m, points=1, scores=(0, 1))
    assert a == qc.Action(1, qc.Move([(0, 0, 1)]), 1, (0, 1))
    assert a.to_dict() == {"player": 1, "move": "R2@0,0", "points": 1, "scores": [0, 1]}
    with pytest.raises(AttributeError):
        a.points = 2


@given(games())
def test_moves_from_arrays_builds_what_the_checked_constructor_builds(g):
    """Game.legal_moves goes through moves_from_arrays: the same moves, placements in
    (row, col) order, tiles, scores and (empty) faces as Move(...) makes them, in any
    input order, and equal to them (Move.__eq__ reads every slot)."""
    a = g.legal_move_arrays()
    checked = [
        qc.Move(zip(r[:k], c[:k], t[:k]), score=s)
        for r, c, t, k, s in zip(
            a.rows.tolist(), a.cols.tolist(), a.tiles.tolist(), a.counts.tolist(), a.scores.tolist()
        )
    ]
    fields = [(m.kind, m.placements, m.tiles, m.score, m.faces) for m in checked]
    assert [(m.kind, m.placements, m.tiles, m.score, m.faces) for m in g.legal_moves()] == fields
    assert g.legal_moves() == checked
    flipped = [x.copy() for x in (a.rows, a.cols, a.tiles)]
    for i, k in enumerate(a.counts):
        for x in flipped:
            x[i, :k] = x[i, :k][::-1]
    assert [
        (m.kind, m.placements, m.tiles, m.score, m.faces) for m in moves_from_arrays(*flipped, a.counts, a.scores)
    ] == fields


def test_moves_from_arrays_refuses_what_move_refuses():
    ok = dict(
        rows=np.zeros((1, 6), np.int64),
        cols=np.array([[0, 1, 0, 0, 0, 0]]),
        tiles=np.array([[0, 1, -1, -1, -1, -1]]),
        counts=np.array([2]),
        scores=np.array([2]),
    )
    assert moves_from_arrays(**ok) == [qc.Move([(0, 0, 0), (0, 1, 1)])]
    for field, value, message in (
        ("counts", np.array([0]), "1 to 6 tiles"),
        ("counts", np.array([7]), "1 to 6 tiles"),
        ("tiles", np.array([[0, 36, -1, -1, -1, -1]]), "tile outside 0..35"),
        ("rows", np.array([[0, 2**31, 0, 0, 0, 0]]), r"\|x\| >= 2\*\*31"),
        ("cols", np.array([[-(2**31), 1, 0, 0, 0, 0]]), r"\|x\| >= 2\*\*31"),
    ):
        with pytest.raises(ValueError, match=message):
            moves_from_arrays(**{**ok, field: value})
