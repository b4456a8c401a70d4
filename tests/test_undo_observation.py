"""Step-by-step control for front ends: ``history``, ``undo`` (draws included) and
``observation`` (a player's view, with nothing hidden in it)."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qwirkle_core as qc
from conftest import FULL_SUPPLY, rebuild
from qwirkle_core.observation import Observation
from qwirkle_core.records import FormatError
from test_records import engine_state, finished_game, games, random_action

KINDS = ("place", "exchange", "pass", "agent")


def act(g, kind, rng):
    """Take a legal action of ``kind`` if there is one: (the Action, a function that
    takes the same action again), or None."""
    if g.is_over:
        return None
    if kind == "agent":
        agent = rng.choice(qc.AGENTS)
        return g.play_agent(agent), lambda: g.play_agent(agent)
    if kind == "place":
        moves = g.legal_moves()
        if not moves:
            return None
        points = g.play(rng.choice(moves))
    elif kind == "exchange":
        if g.opening_pending or not g.bag_size:
            return None
        g.exchange(rng.sample(g.hand(), rng.randint(1, min(len(g.hand()), g.bag_size))))
        points = 0
    else:
        if g.bag_size or g.has_legal_placement():
            return None
        points = g.play("pass")
    action = g.history[-1]
    assert action.points == points
    return action, lambda: g.play(action.move)


@given(games(max_turns=60), st.sampled_from(KINDS), st.integers(0, 2**31 - 1))
def test_undo_restores_everything_and_redo_draws_the_same(g, kind, rng_seed):
    before = engine_state(g)
    n = len(g.history)
    taken = act(g, kind, random.Random(rng_seed))
    if taken is None:
        return
    action, again = taken
    after = engine_state(g)
    assert len(g.history) == n + 1 and g.history[-1] == action
    assert g.undo() == action
    assert engine_state(g) == before
    assert len(g.history) == n
    # The same action again draws the same tiles (an agent makes the same choice).
    again()
    assert g.history[-1] == action
    assert engine_state(g) == after


@settings(max_examples=10)
@given(st.integers(0, 2**31 - 1), st.integers(2, 4))
def test_undo_to_the_start_of_a_whole_game(seed, players):
    g = qc.Game(players=players, seed=seed)
    rng = random.Random(seed)
    states = []
    while not g.is_over:
        states.append(engine_state(g))
        random_action(g, rng)
    for state in reversed(states):
        g.undo()
        assert engine_state(g) == state
    with pytest.raises(qc.IllegalMoveError, match="no action to undo"):
        g.undo()
    assert engine_state(g) == engine_state(qc.Game(players=players, seed=seed))


@given(st.integers(0, 2**31 - 1))
def test_agent_turns_undo_and_replay_identically(seed):
    g = qc.Game(players=3, seed=seed)
    for _ in range(12):
        if not g.is_over:
            g.play_agent("random")
    state, history = engine_state(g), g.history
    for _ in range(5):
        g.undo()
    for a in history[-5:]:
        if not g.is_over:
            # the agents' random stream rewound too: the same agent makes the same choice
            assert g.play_agent("random") == a
    assert engine_state(g) == state and g.history == history


def test_history_is_a_record_of_actions():
    g = qc.Game(seed=11)
    assert g.history == []
    first = g.current_player
    m = max(g.legal_moves(), key=lambda m: m.score)
    points = g.play(m)
    g.play_agent("greedy")
    hist = g.history
    assert [a.player for a in hist] == [first, 1 - first]
    assert hist[0].move == m and hist[0].points == points == m.score
    assert hist[0].scores == tuple(points if p == hist[0].player else 0 for p in range(2))
    assert hist[1].scores == g.scores
    hist.clear()
    assert len(g.history) == 2  # a new list each time
    with pytest.raises(AttributeError):
        g.history[0].points = 99  # actions are frozen


def test_refused_actions_leave_history_alone():
    g = qc.Game(seed=2)
    with pytest.raises(qc.IllegalMoveError):
        g.play("R1@5,5")
    with pytest.raises(qc.IllegalMoveError):
        g.exchange(g.hand()[:1])
    with pytest.raises(qc.IllegalMoveError):
        g.pass_turn()
    with pytest.raises(ValueError, match="unknown agent"):
        g.play_agent("grandmaster")
    assert g.history == [] and g.turn == 0


def test_copies_have_their_own_history():
    g = qc.Game(seed=4)
    g.play_agent("greedy")
    c = g.copy()
    c.play_agent("greedy")
    c.undo()
    c.undo()
    assert len(g.history) == 1 and c.history == []
    assert engine_state(c) == engine_state(qc.Game(seed=4))
    g.undo()
    assert engine_state(g) == engine_state(c)


@given(games(max_turns=30), st.integers(0, 2**31 - 1))
def test_undo_in_set_up_and_loaded_games(g, rng_seed):
    rng = random.Random(rng_seed)
    for h in (rebuild(g, shift=(-30, 50), rng=rng), qc.Game.from_json(g.to_json())):
        start = engine_state(h)
        with pytest.raises(qc.IllegalMoveError):
            h.undo()
        for _ in range(4):
            if not h.is_over:
                random_action(h, rng)
        while h.history:
            h.undo()
        assert engine_state(h) == start


# -- observations ---------------------------------------------------------------------


def reshuffle_hidden(g, viewer, rng):
    """The same game as seen by ``viewer`` with every tile they cannot see dealt anew."""
    hidden = list(g._bag[: g.bag_size]) + [t for p in range(g.players) if p != viewer for t in g.hand(p)]
    hidden = [int(t) for t in hidden]
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
        assert obs.hand_sizes == tuple(len(g.hand(p)) for p in range(g.players))
        assert obs.scores == g.scores and obs.qwirkles == g.qwirkles and obs.bag_size == g.bag_size
        assert (obs.current_player, obs.turn, obs.passes, obs.is_over, obs.winner) == (
            g.current_player, g.turn, g.passes, g.is_over, g.winner)
        # all 108 tiles are in play: unseen = 3 copies - board - own hand
        seen = Counter(g.board.values()) + Counter(g.hand(viewer))
        assert obs.unseen == tuple(FULL_SUPPLY[t] - seen[t] for t in range(36))
        assert sum(obs.unseen) == g.bag_size + sum(obs.hand_sizes) - len(obs.hand)
        again = Observation.from_json(obs.to_json())
        assert again == obs
    assert g.observation() == g.observation(g.current_player)


def test_observation_json_has_no_secrets():
    g = qc.Game(seed=9)
    g.play_agent("greedy")
    d = json.loads(g.observation(0).to_json())
    assert set(d) == {"format", "version", "player", "rules", "board", "hand", "hand_sizes", "scores", "qwirkles",
                      "bag_size", "unseen", "current_player", "turn", "passes", "is_over", "winner"}
    assert d["format"] == "qwirkle-core/observation"
    assert d["hand"] == [qc.tile_code(t) for t in g.hand(0)]
    assert d["board"] == [f"{qc.tile_code(t)}@{r},{c}" for (r, c), t in sorted(g.board.items())]


def test_observation_of_a_finished_game():
    g = finished_game(8, players=3)
    for p in range(3):
        obs = g.observation(p)
        assert obs.is_over and obs.winner == g.winner
        assert sum(obs.unseen) == g.bag_size + sum(obs.hand_sizes) - len(obs.hand)


def test_observation_errors():
    g = qc.Game(seed=1)
    with pytest.raises(ValueError, match="player must be 0..1, not 2"):
        g.observation(2)
    d = g.observation(0).to_dict()
    for change, message in [
        (lambda d: d.update(unseen=d["unseen"][:35]), "unseen must be a list of 36 ints"),
        (lambda d: d.update(hand=d["hand"][:5]), r"the hand has 5 tiles but hand_sizes\[0\] is 6"),
        (lambda d: d.update(board=["R1@0,0 R2@0,1"]), r"board\[0\] must be one tile"),
        (lambda d: d.update(board=["R1@0,0", "R2@0,0"]), r"cell \(0, 0\) appears twice"),
        (lambda d: d.update(player=-1), "player must be 0..1"),
        (lambda d: d.pop("scores"), "missing field 'scores'"),
    ]:
        bad = json.loads(json.dumps(d))
        change(bad)
        with pytest.raises(FormatError, match=message):
            Observation.from_dict(bad)
