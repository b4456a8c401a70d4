"""observation.py: what one player may see of a game (Game.observation), with nothing
hidden in it, and its JSON form."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

import qwirkle_core as qc
from strategies import FULL_SUPPLY, finished_game, games


def reshuffle_hidden(g, viewer, rng):
    """The same game as seen by ``viewer`` with every tile they cannot see dealt anew
    (and new random streams)."""
    hidden = list(g.position().bag) + [t for p in range(g.players) if p != viewer for t in g.hand(p)]
    rng.shuffle(hidden)
    hands = []
    for p in range(g.players):
        if p == viewer:
            hands.append(list(g.hand(p)))
        else:
            k = len(g.hand(p))
            hands.append(hidden[:k])
            hidden = hidden[k:]
    d = g.to_dict()
    d["hands"] = [[qc.tile_code(t) for t in sorted(h)] for h in hands]
    d["bag"] = [qc.tile_code(t) for t in hidden]
    d["seed"] = rng.randrange(2**64)
    d["rng"] = [f"{rng.randrange(2**64):016x}" for _ in range(2)]
    return qc.Game.from_dict(d)


@given(games(max_turns=60), st.integers(0, 2**31 - 1))
def test_observation_shows_nothing_hidden(g, rng_seed):
    rng = random.Random(rng_seed)
    for viewer in range(g.players):
        other = reshuffle_hidden(g, viewer, rng)
        assert other.observation(viewer) == g.observation(viewer)
        assert other.observation(viewer).to_json() == g.observation(viewer).to_json()


@given(games(max_turns=60))
def test_observation_contents(g):
    for viewer in range(g.players):
        obs = g.observation(viewer)
        assert obs.player == viewer and obs.rules == g.rules
        assert obs.board == g.board and obs.hand == g.hand(viewer)
        assert obs.hand_sizes == tuple(len(g.hand(p)) for p in range(g.players)) == g.hand_sizes
        assert obs.scores == g.scores and obs.qwirkles == g.qwirkles and obs.bag_size == g.bag_size
        assert (obs.current_player, obs.turn, obs.passes, obs.is_over, obs.winner) == (
            g.current_player,
            g.turn,
            g.passes,
            g.is_over,
            g.winner,
        )
        # all 108 tiles are in play: unseen = 3 copies - board - own hand
        seen = Counter(g.board.values()) + Counter(g.hand(viewer))
        assert obs.unseen == tuple(FULL_SUPPLY[t] - seen[t] for t in range(36))
        assert sum(obs.unseen) == g.bag_size + sum(obs.hand_sizes) - len(obs.hand)
        again = qc.Observation.from_json(obs.to_json())
        assert again == obs
    assert g.observation() == g.observation(g.current_player)


def test_observation_json_has_no_secrets():
    g = qc.Game(seed=0x9E3779B97F4A7C15)
    g.play_agent("greedy")
    d = json.loads(g.observation(0).to_json())
    assert set(d) == {
        "format",
        "version",
        "player",
        "rules",
        "board",
        "hand",
        "hand_sizes",
        "scores",
        "qwirkles",
        "bag_size",
        "unseen",
        "current_player",
        "turn",
        "passes",
        "is_over",
        "winner",
    }
    assert d["format"] == "qwirkle-core/observation"
    assert d["hand"] == [qc.tile_code(t) for t in g.hand(0)]
    assert d["board"] == [f"{qc.tile_code(t)}@{r},{c}" for (r, c), t in sorted(g.board.items())]
    text = json.dumps(d)
    assert str(g.seed) not in text and f"{g.seed:016x}" not in text
    assert all(f"{s:016x}" not in text for s in g.position().rng)


def test_observation_of_a_finished_game():
    g = finished_game(8, players=3)
    for p in range(3):
        obs = g.observation(p)
        assert obs.is_over and obs.winner == g.winner
        assert sum(obs.unseen) == g.bag_size + sum(obs.hand_sizes) - len(obs.hand)
        assert qc.Observation.from_json(obs.to_json(indent=2)) == obs


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(unseen=d["unseen"][:35]), "unseen must be a list of 36 ints"),
        (lambda d: d.update(unseen=[4] * 36), r"unseen\[0\] must be 0 to 3, not 4"),
        (lambda d: d.update(hand=d["hand"][:5]), r"the hand has 5 tiles but hand_sizes\[0\] is 6"),
        (lambda d: d.update(board=["R1@0,0 R2@0,1"]), r"board\[0\] must be one tile"),
        (lambda d: d.update(board=["R1@0,0", "R2@0,0"]), r"cell \(0, 0\) appears twice"),
        (lambda d: d.update(board=["R1@0,x"]), r"observation board\[0\] 'R1@0,x', word 1"),
        (lambda d: d.update(player=-1), "player must be 0 to 1"),
        (lambda d: d.pop("scores"), "missing field 'scores'"),
        (lambda d: d.update(winner=2), "winner must be -1 to 1, not 2"),
        (lambda d: d.update(format="qwirkle-core/position"), "not a qwirkle-core observation"),
        (lambda d: d.update(is_over=0), "is_over must be true or false"),
    ],
)
def test_observation_errors(change, message):
    g = qc.Game(seed=1)
    g.play_agent("greedy")
    bad = g.observation(0).to_dict()
    change(bad)
    with pytest.raises(qc.FormatError, match=message):
        qc.Observation.from_dict(bad)
    with pytest.raises(qc.FormatError, match=message):
        qc.Observation.from_json(json.dumps(bad))


def test_bad_seats_are_refused():
    g = qc.Game(seed=1)
    with pytest.raises(ValueError, match="player must be 0 to 1, not 2"):
        g.observation(2)
    with pytest.raises(TypeError, match="player must be an int"):
        g.observation(1.0)
    with pytest.raises(qc.FormatError, match="not valid JSON"):
        qc.Observation.from_json("{")
