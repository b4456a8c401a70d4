"""position.py and Game.to_json/from_json: a complete position as JSON round-trips
exactly (the game plays on identically), and bad documents are refused with a
FormatError naming the field."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

import qwirkle_core as qc
from qwirkle_core.game.position import Position
from strategies import engine_state, finished_game, games, random_action, rebuild


def assert_same_future(a, b, rng_seed, turns=8):
    """Playing the same actions on a and b keeps them equal (same moves, same draws)."""
    for i in range(turns):
        if a.is_over:
            break
        assert a.legal_moves() == b.legal_moves()
        action = random_action(a, random.Random(rng_seed + i))
        assert random_action(b, random.Random(rng_seed + i)) == action
        assert engine_state(a) == engine_state(b)


@given(games(max_turns=60), st.integers(0, 2**31 - 1))
def test_position_round_trips_exactly(g, rng_seed):
    text = g.to_json()
    h = qc.Game.from_json(text)
    assert engine_state(h) == engine_state(g)
    assert h.legal_moves() == g.legal_moves()
    assert h.to_json() == text
    assert h.history == [] and not h.is_dealt
    assert Position.from_dict(json.loads(text)) == g.position() == h.position()
    assert_same_future(g, h, rng_seed)


@given(st.integers(0, 2**31 - 1), st.integers(2, 4))
@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_finished_and_mid_game_positions_round_trip(seed, players):
    g = finished_game(seed, players)
    for _ in range(random.Random(seed).randint(0, 5)):
        h = qc.Game.from_json(g.to_json())
        assert engine_state(h) == engine_state(g)
        g.undo()
    assert engine_state(qc.Game.from_json(g.to_json())) == engine_state(g)


@given(games(max_turns=30), st.integers(0, 2**31 - 1))
def test_set_up_positions_round_trip(g, rng_seed):
    h = rebuild(g, shift=(40, -70), rng=random.Random(rng_seed))
    k = qc.Game.from_json(h.to_json())
    assert engine_state(k) == engine_state(h)
    assert_same_future(h, k, rng_seed)


def test_position_document():
    g = qc.Game(seed=7)
    g.play(max(g.legal_moves(), key=lambda m: m.score))
    g.play_agent("greedy")
    d = json.loads(g.to_json(indent=2))
    assert d == g.to_dict() == g.position().to_dict()
    assert d["format"] == "qwirkle-core/position" and d["version"] == 1
    assert d["rules"] == {"players": 2, "opening": "largest_group"}
    assert d["seed"] == 7
    assert d["board"] == [str(a.move) for a in g.history]  # one group per placement, in order
    assert d["hands"] == [[qc.tile_code(t) for t in g.hand(p)] for p in range(2)]
    assert len(d["bag"]) == g.bag_size == 108 - 12 - len(g.board)
    assert d["scores"] == list(g.scores) and d["turn"] == 2 and d["passes"] == 0 and d["over"] is False
    assert d["current_player"] == g.current_player and d["starting_player"] == g.starting_player
    assert all(len(s) == 16 for s in d["rng"])
    # bag[0] is the next tile drawn
    first, p = qc.parse_tile(d["bag"][0]), g.current_player
    g.exchange([g.hand()[0]])
    assert first in g.hand(p)


def good_position():
    g = qc.Game(seed=3)
    g.play(g.legal_moves()[0])
    return g.to_dict()


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(format="chess"), "not a qwirkle-core position"),
        (lambda d: d.update(version=2), "unsupported position version 2"),
        (lambda d: d.pop("bag"), "missing field 'bag'"),
        (lambda d: d["hands"][0].__setitem__(0, "R9"), r"hands\[0\]: tile code 'R9'"),
        (lambda d: d["hands"].pop(), "hands must be a list of 2 lists"),
        (lambda d: d.update(bag=d["bag"] + ["R1", "R1", "R1"]), "more than 3 copies of a tile: red circle"),
        (lambda d: d.update(rng=["xyz", "0"]), "rng must be 2 strings of 16 hex digits"),
        (lambda d: d.update(scores=[1, -1]), r"scores\[1\] must be 0 to 2,147,483,647, not -1"),
        (lambda d: d.update(current_player=2), "current_player must be 0 to 1, not 2"),
        (lambda d: d.update(turn=True), "turn must be an int"),
        (lambda d: d.update(over="no"), "over must be true or false"),
        (lambda d: d["hands"].__setitem__(1, []), "hand of player 1 is empty"),
        (lambda d: d.update(board=["R1@0,0 R1@0,1"]), "invalid row on the board"),
        (lambda d: d.update(board=d["board"] + [d["board"][0].split()[0]]), "holds two tiles"),
        (lambda d: d.update(board=["R1@0,0", "R2@5,5"]), "not all connected"),
        (lambda d: d.update(board=["R1@0,0 R2@x"]), r"board\[0\] 'R1@0,0 R2@x', word 2"),
        (lambda d: d.update(board="R1@0,0"), "board must be a list of strings"),
        (lambda d: d.update(rules={"players": 2, "opening": "fast"}), "unknown opening rule 'fast'"),
        (lambda d: d.update(rules=[2]), "rules must be an object"),
        (
            lambda d: d.update(board=[], starting_player=1 - d["current_player"]),
            "with an empty board the starting player",
        ),
        (lambda d: d.update(seed=-1), "position seed must be 0 to 18,446,744,073,709,551,615, not -1"),
        (lambda d: d.update(passes=3), "passes must be 0 to 2, not 3"),
        (lambda d: d.update(bag=["R1"] * 200), "bag holds 200 tiles; a game has 108"),
    ],
)
def test_bad_positions_are_refused(change, message):
    d = good_position()
    change(d)
    with pytest.raises(qc.FormatError, match=message):
        qc.Game.from_dict(d)
    with pytest.raises(qc.FormatError, match=message):
        qc.Game.from_json(json.dumps(d))


def test_position_text_errors():
    text = qc.Game(seed=1).to_json()
    with pytest.raises(qc.FormatError, match="position: not valid JSON"):
        qc.Game.from_json(text[: len(text) // 2])
    with pytest.raises(qc.FormatError, match="a position is a JSON object, not list"):
        qc.Game.from_json("[]")
    with pytest.raises(TypeError):
        qc.Game.from_json(None)
    assert engine_state(qc.Game.from_json(text.encode())) == engine_state(qc.Game.from_json(text))


def test_format_errors_are_value_errors():
    assert issubclass(qc.FormatError, ValueError) and issubclass(qc.RecordError, qc.FormatError)
