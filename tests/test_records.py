"""Positions and game records as JSON: exact round trips, replays that reproduce
every score, and corrupted input refused with the first bad action named."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import qwirkle_core as qc
from conftest import rebuild
from qwirkle_core._kernels import state as _st
from qwirkle_core.records import FormatError

DOCS = Path(__file__).resolve().parent.parent / "docs"


def engine_state(g):
    """Everything that defines a game's behaviour, as comparable Python values: the
    meaningful part of every engine array (so equal states play on identically,
    legal_moves() order and agent tie-breaks included) and the public properties."""
    gmeta = g._gmeta.copy()
    if not gmeta[_st.G_OPENING]:
        gmeta[_st.G_OPEN_LEN] = 0  # the opening's required length, unused once it is played
    n_anchors = int(g._bmeta[1])
    arrays = (g._board, g._cross, g._anchors[:n_anchors], g._bmeta, g._hands, g._bag[: g.bag_size], gmeta, g._rng)
    public = (g.rules, g.seed, g.board, [g.hand(p) for p in range(g.players)], g.scores, g.qwirkles, g.current_player,
              g.starting_player, g.turn, g.passes, g.bag_size, g.is_over, g.winner, g.opening_pending)
    return [(a.dtype.str, a.shape, a.tobytes()) for a in arrays], public


def replayed_state(g):
    """What a replay of g's record reproduces: everything but the agents' random stream
    and the engine's internal order of frontier cells (a record keeps moves, not the
    order their tiles were put down)."""
    return engine_state(g)[1], [g.hand(p) for p in range(g.players)], g._bag[: g.bag_size].tobytes(), int(g._rng[0])


def random_action(g, rng):
    """Take one random legal action on g (a placement, an exchange, a pass or an agent's turn)."""
    if rng.random() < 0.3:
        return g.play_agent(rng.choice(qc.AGENTS))
    moves = g.legal_moves()
    if moves and (not g.board or g.bag_size == 0 or rng.random() > 0.1):
        g.play(rng.choice(moves))
    elif g.bag_size:
        g.exchange(rng.sample(g.hand(), rng.randint(1, min(len(g.hand()), g.bag_size))))
    else:
        g.pass_turn()
    return g.history[-1]


@st.composite
def games(draw, max_turns=60):
    """A reachable game: a fresh deal and up to ``max_turns`` random actions (it may end)."""
    g = qc.Game(players=draw(st.integers(2, 4)), seed=draw(st.integers(0, 2**64 - 1)))
    rng = random.Random(draw(st.integers(0, 2**31 - 1)))
    for _ in range(draw(st.integers(0, max_turns))):
        if g.is_over:
            break
        random_action(g, rng)
    return g


def finished_game(seed, players=2, rng=None):
    g = qc.Game(players=players, seed=seed)
    rng = rng or random.Random(seed)
    while not g.is_over:
        random_action(g, rng)
    return g


def assert_same_future(a, b, rng_seed, turns=8):
    """Playing the same actions on a and b keeps them equal (same moves, same draws)."""
    for i in range(turns):
        if a.is_over:
            break
        assert a.legal_moves() == b.legal_moves()
        action = random_action(a, random.Random(rng_seed + i))
        assert random_action(b, random.Random(rng_seed + i)) == action
        assert engine_state(a) == engine_state(b)


# -- positions ------------------------------------------------------------------------


@given(games(max_turns=60), st.integers(0, 2**31 - 1))
def test_position_round_trips_exactly(g, rng_seed):
    text = g.to_json()
    h = qc.Game.from_json(text)
    assert engine_state(h) == engine_state(g)
    assert h.legal_moves() == g.legal_moves()
    assert h.to_json() == text
    assert h.history == []
    assert_same_future(g, h, rng_seed)


@given(st.integers(0, 2**31 - 1), st.integers(2, 4))
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
        (lambda d: d.update(scores=[1, -1]), r"scores\[1\] must be 0 or more"),
        (lambda d: d.update(current_player=2), "current_player must be 0..1, not 2"),
        (lambda d: d.update(turn=True), "turn must be an int"),
        (lambda d: d.update(over="no"), "over must be true or false"),
        (lambda d: d["hands"].__setitem__(1, []), "hand of player 1 is empty"),
        (lambda d: d.update(board=["R1@0,0 R1@0,1"]), "invalid row on the board"),
        (lambda d: d.update(board=d["board"] + [d["board"][0].split()[0]]), "holds two tiles"),
        (lambda d: d.update(board=["R1@0,0", "R2@5,5"]), "not all connected"),
        (lambda d: d.update(board=["R1@0,0 R2@x"]), r"board\[0\] 'R1@0,0 R2@x', word 2"),
        (lambda d: d.update(rules={"players": 2, "opening": "fast"}), "unknown opening rule 'fast'"),
        (lambda d: d.update(board=[], starting_player=1 - d["current_player"]), "with an empty board the starting player"),
    ],
)
def test_bad_positions_are_refused(change, message):
    d = good_position()
    change(d)
    with pytest.raises(FormatError, match=message):
        qc.Game.from_dict(d)
    with pytest.raises(FormatError, match=message):
        qc.Game.from_json(json.dumps(d))


def test_position_text_errors():
    text = qc.Game(seed=1).to_json()
    with pytest.raises(FormatError, match="position: not valid JSON"):
        qc.Game.from_json(text[: len(text) // 2])
    with pytest.raises(FormatError, match="a position is a JSON object, not list"):
        qc.Game.from_json("[]")
    with pytest.raises(TypeError):
        qc.Game.from_json(None)


# -- records --------------------------------------------------------------------------


@given(st.integers(0, 2**63), st.sampled_from([("greedy", "greedy"), ("random", "greedy", "random")]))
def test_recorded_simulated_games_replay_every_score(seed, agents):
    record = qc.play_game(agents, seed=seed)
    text = record.to_json()
    again = qc.GameRecord.from_json(text)
    assert again == record
    assert again.to_json() == text
    g = qc.replay(again)
    assert g.is_over
    assert g.scores == record.final_scores and g.winner == record.winner
    assert [a.scores for a in g.history] == [a.scores for a in record.actions]
    assert [a.points for a in g.history] == [a.points for a in record.actions]


@given(st.integers(0, 2**31 - 1), st.integers(2, 4))
def test_game_record_replays_to_the_same_state(seed, players):
    g = finished_game(seed, players)
    rng = random.Random(seed)
    for _ in range(rng.randint(0, 20)):
        g.undo()
    record = qc.GameRecord.from_json(g.record(agents=["x"] * players).to_json())
    assert record.seed == seed and record.setup is None
    assert record.hands == [qc.Game(players=players, seed=seed).hand(p) for p in range(players)]
    h = qc.replay(record)
    assert replayed_state(h) == replayed_state(g)
    assert h.history == g.history


@given(games(max_turns=30), st.integers(0, 2**31 - 1))
def test_records_of_set_up_games_start_from_their_position(g, rng_seed):
    h = rebuild(g, rng=random.Random(rng_seed))
    start = h.to_dict()
    rng = random.Random(rng_seed)
    for _ in range(6):
        if h.is_over:
            break
        random_action(h, rng)
    record = qc.GameRecord.from_json(h.record().to_json())
    assert record.seed is None and record.hands is None and record.setup == start
    assert replayed_state(qc.replay(record)) == replayed_state(h)


def test_loaded_game_records_from_its_position():
    g = finished_game(5)
    while g.turn > 10:
        g.undo()
    text = g.to_json()
    h = qc.Game.from_json(text)
    h.play_agent("greedy")
    g.play_agent("greedy")
    record = h.record()
    assert record.setup == json.loads(text)
    assert len(record.actions) == 1
    assert replayed_state(qc.replay(record)) == replayed_state(g)


def record_dict(seed=21):
    return json.loads(qc.play_game(("greedy", "random"), seed=seed).to_json())


def corrupt(d, k, how):
    a = d["actions"][k]
    if how == "points":
        a["points"] += 1
    elif how == "scores":
        a["scores"][a["player"]] += 2
    elif how == "player":
        a["player"] = 1 - a["player"]
    elif how == "illegal":
        taken = next(iter(d["actions"][0]["move"].split()))  # a cell the opening filled
        a["move"] = taken
    elif how == "unknown tile":
        a["move"] = "Z1@0,0" if "@" in a["move"] else "x Z1"
    elif how == "not notation":
        a["move"] = "put red circle at 0 0"
    elif how == "missing":
        del a["points"]


@pytest.mark.parametrize("how", ["points", "scores", "player", "illegal", "unknown tile", "not notation", "missing"])
@pytest.mark.parametrize("k", [3, 17])
def test_corrupted_records_name_the_first_bad_action(how, k):
    d = record_dict()
    corrupt(d, k, how)
    corrupt(d, k + 5, "points")  # a later fault must not be the one reported
    with pytest.raises(qc.RecordError) as err:
        qc.replay(qc.GameRecord.from_json(json.dumps(d)))
    assert err.value.action == k
    assert f"action {k}" in str(err.value)


def test_corruption_messages():
    d = record_dict()
    d["actions"][4]["points"] += 1
    with pytest.raises(qc.RecordError, match=r"action 4 \(.+\): recorded \d+ points, the rules give \d+"):
        qc.replay(qc.GameRecord.from_dict(d))
    d = record_dict()
    d["actions"][2]["move"] = "R1@0,0"
    with pytest.raises(qc.RecordError, match=r"action 2 \(R1@0,0\): illegal: "):
        qc.replay(qc.GameRecord.from_dict(d))
    d = record_dict()
    d["actions"][6]["move"] = "R9@0,0"
    with pytest.raises(qc.RecordError, match=r"action 6: move 'R9@0,0', word 1: tile code 'R9': unknown shape digit '9'"):
        qc.GameRecord.from_dict(d)
    d = record_dict()
    d["final_scores"][0] += 1
    with pytest.raises(qc.RecordError, match="final scores") as err:
        qc.replay(qc.GameRecord.from_dict(d))
    assert err.value.action is None


@pytest.mark.parametrize("k", [0, 1, 9, 30])
def test_truncated_records_name_the_action_cut(k):
    text = qc.play_game(("greedy", "greedy"), seed=4).to_json(indent=1)
    assert len(json.loads(text)["actions"]) > 31
    starts = [i for i in range(len(text)) if text.startswith('"move": ', i)]
    cut = text[: starts[k] + 12]
    with pytest.raises(qc.RecordError, match=f"not valid JSON from action {k} on") as err:
        qc.GameRecord.from_json(cut)
    assert err.value.action == k
    with pytest.raises(qc.RecordError, match="not valid JSON") as err:
        qc.GameRecord.from_json(text[:40])
    assert err.value.action is None


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(format="qwirkle"), "not a qwirkle-core record"),
        (lambda d: d.update(seed=-1), "seed must be 0..18446744073709551615"),
        (lambda d: d.update(hands=[["R1"]]), "record hands must be null or 2 lists"),
        (lambda d: d["hands"][1].__setitem__(0, "W1"), r"record hands\[1\]: tile code 'W1'"),
        (lambda d: d.update(actions={}), "actions must be a list"),
        (lambda d: d.update(agents="greedy"), "agents must be null or 2 strings"),
        (lambda d: d.update(winner=5), "winner must be -1..1"),
        (lambda d: d.update(setup={"format": "qwirkle-core/position"}), "give either a seed .* or a setup position"),
        (lambda d: d.update(seed=None, setup={"format": "qwirkle-core/position", "version": 1}), "record setup: position: missing field 'rules'"),
    ],
)
def test_malformed_records_are_refused(change, message):
    d = record_dict()
    change(d)
    with pytest.raises(qc.RecordError, match=message) as err:
        qc.GameRecord.from_dict(d)
    assert err.value.action is None


def test_replay_needs_a_start():
    record = qc.GameRecord.from_dict(record_dict())
    record.seed = None
    with pytest.raises(qc.RecordError, match="neither a seed nor a setup"):
        qc.replay(record)
    record = qc.GameRecord.from_dict(record_dict())
    record.hands[0] = tuple(sorted(record.hands[1]))
    with pytest.raises(qc.RecordError, match="initial hand of player 0 does not match"):
        qc.replay(record)


def test_start_refuses_a_game_in_progress():
    g = qc.Game(seed=1)
    assert qc.GameRecord.start(g).actions == []
    g.play_agent("greedy")
    with pytest.raises(ValueError, match="use game.record"):
        qc.GameRecord.start(g)


# -- the JSON Schemas in docs/ describe what is written --------------------------------


def test_documents_match_their_schemas():
    jsonschema = pytest.importorskip("jsonschema")
    referencing = pytest.importorskip("referencing")
    position = json.loads((DOCS / "position.schema.json").read_text())
    record = json.loads((DOCS / "record.schema.json").read_text())
    registry = referencing.Registry().with_resource(position["$id"], referencing.Resource.from_contents(position))
    jsonschema.Draft202012Validator.check_schema(position)
    jsonschema.Draft202012Validator.check_schema(record)
    check_position = jsonschema.Draft202012Validator(position).validate
    check_record = jsonschema.Draft202012Validator(record, registry=registry).validate
    g = finished_game(2, players=3)
    check_position(g.to_dict())
    while g.turn > 5:
        g.undo()
    check_position(g.to_dict())
    check_position(qc.Game(seed=1).to_dict())
    check_record(qc.play_game(("greedy", "random"), seed=3).to_dict())
    check_record(g.record(["a", "b", "c"]).to_dict())
    check_record(qc.Game.from_json(g.to_json()).record().to_dict())
    bad = g.to_dict()
    bad["hands"][0].append("R7")
    with pytest.raises(jsonschema.ValidationError):
        check_position(bad)
