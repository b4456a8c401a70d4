"""records.py: game records as JSON, replays that reproduce every score, and corrupted
input refused with the first bad action named."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import qwirkle_core as qc
from strategies import finished_game, games, random_action, rebuild, replayed_state

DOCS = Path(__file__).resolve().parent.parent / "docs"


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
@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_game_record_replays_to_the_same_state(seed, players):
    g = finished_game(seed, players)
    rng = random.Random(seed)
    for _ in range(rng.randint(0, 20)):
        g.undo()
    record = qc.GameRecord.from_json(qc.GameRecord.from_game(g, agents=["x"] * players).to_json())
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
    record = qc.GameRecord.from_json(qc.GameRecord.from_game(h).to_json())
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
    record = qc.GameRecord.from_game(h)
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
    with pytest.raises(
        qc.RecordError, match=r"action 6: move 'R9@0,0', word 1: tile code 'R9': unknown shape digit '9'"
    ):
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
        (lambda d: d.update(seed=-1), "record seed must be 0 to 18,446,744,073,709,551,615, not -1"),
        (lambda d: d.update(hands=[["R1"]]), "record hands must be null or 2 lists"),
        (lambda d: d["hands"][1].__setitem__(0, "W1"), r"record hands\[1\]: tile code 'W1'"),
        (lambda d: d.update(actions={}), "actions must be a list"),
        (lambda d: d.update(agents="greedy"), "agents must be null or 2 strings"),
        (lambda d: d.update(winner=5), "winner must be -1 to 1, not 5"),
        (lambda d: d.update(setup={"format": "qwirkle-core/position"}), "give either a seed .* or a setup position"),
        (
            lambda d: d.update(seed=None, setup={"format": "qwirkle-core/position", "version": 1}),
            "record setup: position: missing field 'rules'",
        ),
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


def test_from_game_records_from_the_root():
    g = qc.Game(seed=1)
    assert qc.GameRecord.from_game(g).actions == [] and qc.GameRecord.from_game(g).final_scores is None
    for _ in range(5):
        g.play_agent("greedy")
    record = qc.GameRecord.from_game(g, agents=("greedy", "me"))
    assert record.seed == 1 and record.setup is None and record.agents == ["greedy", "me"]
    assert record.hands == [qc.Game(seed=1).hand(p) for p in range(2)]
    assert record.actions == g.history and record.players == 2 and record.winner is None
    with pytest.raises(ValueError, match="agents must name 2 seats, not 3"):
        qc.GameRecord.from_game(g, agents=["a", "b", "c"])
    with pytest.raises(TypeError, match="replay\\(\\) takes a GameRecord"):
        qc.replay(record.to_json())


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
    check_record(qc.GameRecord.from_game(g, ["a", "b", "c"]).to_dict())
    check_record(qc.GameRecord.from_game(qc.Game.from_json(g.to_json())).to_dict())
    bad = g.to_dict()
    bad["hands"][0].append("R7")
    with pytest.raises(jsonschema.ValidationError):
        check_position(bad)
