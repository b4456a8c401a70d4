"""rules.py: the rule options (Rules) and how a players count and a Rules object combine."""

from __future__ import annotations

import pytest

import qwirkle_core as qc
from qwirkle_core.game.rules import MAX_PLAYERS, MIN_PLAYERS, resolve_rules


def test_rules_defaults_and_frozen():
    r = qc.Rules()
    assert r.players == 2 and r.opening == "largest_group"
    with pytest.raises(AttributeError):
        r.players = 3  # frozen dataclass
    assert r.to_dict() == {"players": 2, "opening": "largest_group"}
    assert qc.Rules(**qc.Rules(players=5, opening="any_line").to_dict()) == qc.Rules(5, "any_line")
    assert qc.Rules(opening="any_line").opening_code != r.opening_code
    assert (MIN_PLAYERS, MAX_PLAYERS) == (2, 6)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"players": 1}, ValueError, "players must be 2 to 6, not 1"),
        ({"players": 7}, ValueError, "players must be 2 to 6, not 7"),
        ({"players": 2.0}, TypeError, "players must be an int"),
        ({"players": True}, TypeError, "players must be an int"),
        ({"players": "2"}, TypeError, "players must be an int"),
        ({"opening": "fast"}, ValueError, "unknown opening rule 'fast'"),
        ({"opening": None}, ValueError, "unknown opening rule None"),
    ],
)
def test_bad_rules_are_refused(kwargs, error, message):
    with pytest.raises(error, match=message):
        qc.Rules(**kwargs)


def test_players_and_rules_must_agree():
    assert resolve_rules(None, None) == qc.Rules()
    assert resolve_rules(3, None) == qc.Rules(players=3)
    r = qc.Rules(players=4, opening="any_line")
    assert resolve_rules(None, r) is r and resolve_rules(4, r) is r
    with pytest.raises(ValueError, match="players=3 disagrees with rules.players=4"):
        resolve_rules(3, r)
    with pytest.raises(TypeError, match="rules must be a qwirkle_core.Rules"):
        resolve_rules(None, {"players": 2})
    with pytest.raises(ValueError, match="players must be 2 to 6"):
        qc.Game(players=8)
    with pytest.raises(ValueError, match="disagrees"):
        qc.Game(players=2, rules=r)
    assert qc.Game(rules=r, seed=1).players == 4
