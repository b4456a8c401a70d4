"""game.py: Game's construction and arguments, history and undo (draws included),
copies, root(), determinize, the kernel_arrays seam, legal_move_arrays, and the coordinate
range."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
import qwirkle_core as qc
from strategies import engine_state, finished_game, games, mid_game, opening_len_for, random_action, rebuild, snapshot

KINDS = ("place", "exchange", "pass", "agent")
LIMIT = 2**31


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
        tiles = rng.sample(g.hand(), rng.randint(1, min(len(g.hand()), g.bag_size)))
        assert g.check_exchange(tiles) == tiles
        g.exchange(tiles)
        points = 0
    else:
        if g.bag_size or g.has_legal_placement():
            return None
        points = g.play("pass")
    action = g.history[-1]
    assert action.points == points
    return action, lambda: g.play(action.move)


# -- history and undo -------------------------------------------------------------------


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
    assert engine_state(g.root()) == states[0] and len(g.root().history) == 0
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
    before = snapshot(g)
    with pytest.raises(qc.IllegalMoveError):
        g.play("R1@5,5")
    with pytest.raises(qc.IllegalMoveError):
        g.exchange(g.hand()[:1])
    with pytest.raises(qc.IllegalMoveError):
        g.check_exchange(g.hand()[:1])
    with pytest.raises(qc.IllegalMoveError):
        g.pass_turn()
    with pytest.raises(ValueError, match="unknown agent"):
        g.play_agent("grandmaster")
    assert g.history == [] and g.turn == 0
    assert snapshot(g) == before


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
        assert not h.is_dealt
        with pytest.raises(qc.IllegalMoveError):
            h.undo()
        for _ in range(4):
            if not h.is_over:
                random_action(h, rng)
        assert engine_state(h.root()) == start
        while h.history:
            h.undo()
        assert engine_state(h) == start


def test_root_and_is_dealt():
    g = mid_game(seed=6, turns=9)
    root = g.root()
    assert g.is_dealt and root.is_dealt and root.history == [] and root.turn == 0
    assert engine_state(root) == engine_state(qc.Game(seed=6))
    assert g.turn == 9 and len(g.history) == 9  # the game itself is untouched
    assert engine_state(qc.Game(seed=6).root()) == engine_state(qc.Game(seed=6))


# -- determinize ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_determinize_resamples_only_hidden_tiles(seed):
    g = mid_game(seed=seed)
    viewer = g.current_player
    obs = g.observation(viewer)
    d = g.determinize(viewer, seed=seed)
    # Public information and the viewer's own tiles are untouched.
    assert d.board == g.board and d.hand(viewer) == g.hand(viewer)
    assert d.scores == g.scores and d.bag_size == g.bag_size and d.current_player == g.current_player
    assert [len(d.hand(p)) for p in range(d.players)] == [len(g.hand(p)) for p in range(g.players)]
    # The other hands and the bag hold exactly the unseen tiles, so no visible tile.
    hidden = Counter(d.position().bag)
    for p in range(d.players):
        if p != viewer:
            hidden.update(d.hand(p))
    assert [hidden[t] for t in range(36)] == list(obs.unseen)
    # 108 tiles in all, each 3 times.
    everything = Counter(d.board.values()) + hidden + Counter(d.hand(viewer))
    assert sum(everything.values()) == 108 and set(everything.values()) == {3}
    # It really resamples: another seed deals the other hands differently.
    others = [d.hand(p) for p in range(d.players) if p != viewer]
    assert others != [g.determinize(viewer, seed=seed + 100).hand(p) for p in range(d.players) if p != viewer]
    assert engine_state(g.determinize(viewer, seed=seed)) == engine_state(d)  # reproducible


def test_determinized_game_plays_on():
    g = mid_game().determinize(seed=9)
    while not g.is_over:
        g.play_agent("greedy")
    assert max(g.scores) > 50


# -- the kernel seam --------------------------------------------------------------------


def test_kernel_arrays_are_the_games_own_arrays():
    g = mid_game(seed=2, turns=6)
    a = g.kernel_arrays()
    assert a._fields == ("board", "cross", "anchors", "bmeta", "hands", "bag", "gmeta", "rng", "gen_scratch", "act")
    assert all(isinstance(x, np.ndarray) for x in a)
    assert sorted(a.hands[g.current_player, : len(g.hand())].tolist()) == list(g.hand())
    assert a.bag[: g.bag_size][::-1].tolist() == list(g.position().bag)
    assert a.rng.tolist() == list(g.position().rng)
    c = g.copy()
    assert all(not np.shares_memory(x, y) for x, y in zip(g.kernel_arrays()[:8], c.kernel_arrays()[:8]))


# -- arguments --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"players": 1}, ValueError, "players must be 2 to 6"),
        ({"players": "2"}, TypeError, "players must be an int"),
        ({"seed": -1}, ValueError, "seed must be an int 0 .. 2\\*\\*64-1, not -1"),
        ({"seed": 2**64}, ValueError, "seed must be an int 0 .. 2\\*\\*64-1"),
        ({"seed": 1.0}, TypeError, "seed must be an int"),
        ({"seed": "1"}, TypeError, "seed must be an int"),
        ({"seed": True}, TypeError, "seed must be an int"),
        ({"rules": "official"}, TypeError, "rules must be a qwirkle_core.Rules"),
    ],
)
def test_bad_game_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        qc.Game(**kwargs)


def test_seeds_take_any_int_kind():
    a = qc.Game(seed=2**64 - 1)
    assert a.seed == 2**64 - 1
    assert engine_state(qc.Game(seed=np.uint64(2**64 - 1))) == engine_state(a)
    assert qc.Game(seed=np.int8(5)).seed == 5
    assert qc.Game().seed != qc.Game().seed  # a fresh random seed


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"board": [((0, 0), 1)]}, TypeError, "board must be a dict"),
        ({"board": {0: 1}}, TypeError, r"board keys are \(row, col\) pairs"),
        ({"board": {(0, 0.5): 1}}, TypeError, "col must be an int"),
        ({"board": {(LIMIT, 0): 1}}, ValueError, "row 2147483648 is outside the board"),
        ({"board": {(0, 0): 36}}, ValueError, "a tile is an int 0..35"),
        ({"board": {(0, 0): 0, (0, 1): 0}}, ValueError, "invalid row on the board"),
        ({"board": {(0, 0): 0, (0, 200): 1}}, ValueError, "spans more than 108"),
        ({"hands": "R1 R2"}, TypeError, "hands must be a sequence"),
        ({"hands": [[0], 5]}, TypeError, "hand of player 1 must be a list of tiles"),
        ({"hands": [[0] * 7, [1]]}, ValueError, "hand of player 0 has more than 6 tiles"),
        ({"hands": [[0], []]}, ValueError, "hand of player 1 has 0 tiles; a hand holds 1 to 6"),
        ({"hands": [[0]]}, ValueError, "players must be 2 to 6, not 1"),
        ({"hands": [[0, 0], [0, 0]]}, ValueError, "more than 3 copies of a tile: red circle x5"),
        ({"bag": [36]}, ValueError, "a tile is an int 0..35"),
        ({"scores": [1]}, ValueError, "scores must be 2 ints"),
        ({"scores": [1, -1]}, ValueError, "score must be 0 to 2,147,483,647"),
        ({"scores": [1, 2**40]}, ValueError, "score must be 0 to 2,147,483,647"),
        ({"current_player": 2}, ValueError, "current_player must be 0 to 1"),
        ({"current_player": 0.0}, TypeError, "current_player must be an int"),
        ({"seed": 1.5}, TypeError, "seed must be an int"),
        ({"rules": qc.Rules(players=3)}, ValueError, "disagrees"),
    ],
)
def test_bad_positions_by_hand_are_refused(kwargs, error, message):
    args = {"board": {(0, 0): 0}, "hands": [[1, 2], [6]], "bag": [], "scores": [0, 0]}
    args.update(kwargs)
    with pytest.raises(error, match=message):
        qc.Game.from_position(**args)


def test_bad_seats():
    g = qc.Game(seed=1)
    with pytest.raises(ValueError, match="player must be 0 to 1, not -1"):
        g.hand(-1)
    with pytest.raises(TypeError, match="player must be an int"):
        g.hand("0")
    assert g.hand(np.int64(1)) == g.hand(1)


def test_repr_says_where_the_game_stands():
    g = qc.Game(seed=1)
    assert repr(g) == f"<Game players=2 turn=0 scores=(0, 0) bag=96 player {g.current_player} to move>"
    g = finished_game(1)
    assert repr(g).endswith(f"over, winner {g.winner}>")


# -- legal_move_arrays: the placements as arrays ----------------------------------------


def array_moves(a) -> dict:
    """{frozenset(placements): score} of a MoveArrays, asserting no duplicates."""
    out = {}
    for i, k in enumerate(a.counts.tolist()):
        key = frozenset(zip(a.rows[i, :k].tolist(), a.cols[i, :k].tolist(), a.tiles[i, :k].tolist()))
        assert key not in out
        out[key] = int(a.scores[i])
    return out


@settings(max_examples=30)
@given(games(max_turns=80))
def test_legal_move_arrays_hold_the_reference_placements(g):
    a = g.legal_move_arrays()
    n = len(a.counts)
    assert all(x.dtype == np.int64 for x in a)
    assert a.rows.shape == a.cols.shape == a.tiles.shape == (n, 6) and a.counts.shape == a.scores.shape == (n,)
    used = np.arange(6) < a.counts[:, None]
    assert (a.tiles[~used] == -1).all() and (a.rows[~used] == 0).all() and (a.cols[~used] == 0).all()
    assert ((a.tiles >= 0) == used).all() and ((a.counts >= 1) & (a.counts <= 6)).all()
    want = {} if g.is_over else naive.naive_legal_placements(g.board, g.hand(), opening_len_for(g))
    assert array_moves(a) == want
    # legal_moves() lists the same placements in the same order
    assert [(frozenset(m.placements), m.score) for m in g.legal_moves()] == [(k, v) for k, v in array_moves(a).items()]


# -- the coordinate range |row|, |col| < 2**31 -------------------------------------------


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("axis", ["row", "col"])
def test_legal_moves_stay_inside_the_coordinate_range(sign, axis):
    """A board touching the limit: every listed move is one the reference allows and
    that lies inside the range, each can be played, and none is missing."""
    inside = lambda key: all(abs(r) < LIMIT and abs(c) < LIMIT for r, c, _ in key)  # noqa: E731
    for seed in range(40):  # a position where the limit cuts some moves
        g0 = mid_game(seed=seed, turns=12)
        rows = [r for r, _ in g0.board]
        cols = [c for _, c in g0.board]
        if axis == "row":
            shift = ((LIMIT - 1 - max(rows)) if sign > 0 else (-LIMIT + 1 - min(rows)), 0)
        else:
            shift = (0, (LIMIT - 1 - max(cols)) if sign > 0 else (-LIMIT + 1 - min(cols)))
        g = rebuild(g0, shift=shift)
        everything = naive.naive_legal_placements(g.board, g.hand(), None)
        want = {k: v for k, v in everything.items() if inside(k)}
        if len(want) < len(everything):
            break
    assert want and len(want) < len(everything)
    got = {frozenset(m.placements): m.score for m in g.legal_moves()}
    assert got == want and array_moves(g.legal_move_arrays()) == want
    for m in g.legal_moves()[:20]:
        assert g.copy().play(m) == m.score


def test_an_agent_move_off_the_board_is_refused():
    """Greedy's best move (a Qwirkle) would be at row 2**31: it is refused and nothing
    changes; the moves inside the range are still listed."""
    reds = [qc.tile("red", s) for s in qc.SHAPES]
    board = {(LIMIT - 5 + i, 0): reds[i] for i in range(5)}
    board[(LIMIT - 5, 1)] = qc.tile("orange", "circle")  # blocks the Qwirkle at the other end
    board[(LIMIT - 6, 1)] = qc.tile("blue", "circle")
    g = qc.Game.from_position(board=board, hands=[[reds[5]], [qc.tile("green", "star")]], bag=[], seed=1)
    assert naive.naive_legal_placements(g.board, g.hand(), None)[frozenset({(LIMIT, 0, reds[5])})] == 12
    assert max(m.score for m in g.legal_moves()) == 2
    before = snapshot(g)
    with pytest.raises(qc.IllegalMoveError, match="leave the board"):
        g.play_agent("greedy")
    with pytest.raises(ValueError, match="outside the board"):
        g.play([(LIMIT, 0, reds[5])])
    with pytest.raises(ValueError, match="outside the board"):
        g.check(f"R6@{LIMIT},0")
    assert snapshot(g) == before
    assert g.play(f"R6@{LIMIT - 1},1") == 2


# -- text: str(game), str(position), str(observation) (issue 67) ------------------------


def _text_game():
    """R1 on the board; seat 0 (to move) holds R2 B3, seat 1 holds P6 Y4; two tiles in the bag."""
    t = qc.tile
    return qc.Game.from_position(
        board={(0, 0): t("red", "circle")},
        hands=[[t("red", "square"), t("blue", "diamond")], [t("purple", "star"), t("yellow", "clover")]],
        bag=[t("green", "cross"), t("orange", "circle")],
        scores=[12, 7],
    )


BOARD_R1 = "      -1   0   1\n  -1   .   .   .\n   0   .  R1   .\n   1   .   .   ."


def test_str_of_a_game_is_the_board_scores_bag_and_the_hand_to_move():
    g = _text_game()
    assert str(g) == (
        "Game: 2 players, turn 0, player 0 to move\n"
        + BOARD_R1
        + "\nscores: 0*: 12  1: 7\nbag: 2 tiles\nhand of player 0: R2 B3"
    )
    assert "P6" not in str(g) and "Y4" not in str(g)  # the other hand stays hidden
    assert repr(g) == "<Game players=2 turn=0 scores=(12, 7) bag=2 player 0 to move>"
    g.play("R2@0,1")
    lines = str(g).splitlines()
    assert lines[0] == "Game: 2 players, turn 1, player 1 to move"
    assert lines[1:5] == [
        "      -1   0   1   2",
        "  -1   .   .   .   .",
        "   0   .  R1  R2   .",
        "   1   .   .   .   .",
    ]
    assert lines[5:] == ["scores: 0: 14  1*: 7", "bag: 0 tiles", "hand of player 1: Y4 P6"]  # seat 0 drew both


def test_str_of_a_position_shows_the_hand_to_move_and_repr_is_short():
    g = _text_game()
    p = g.position()
    assert str(p) == str(g).replace("Game:", "Position:", 1)
    assert repr(p) == "<Position players=2 turn=0 scores=(12, 7) bag=2 player 0 to move>"
    big = qc.Game(players=3, seed=7).position()
    assert len(repr(big)) < 100 and "bag=90" in repr(big)  # no ninety bag integers


def test_str_of_an_observation_shows_only_its_own_hand():
    """Hidden information is a security boundary: seat 1's view, seat 0 to move, shows
    seat 1's tiles and none of seat 0's."""
    o = _text_game().observation(1)
    text = str(o)
    assert text == (
        "Observation of player 1: 2 players, turn 0, player 0 to move\n"
        + BOARD_R1
        + "\nscores: 0*: 12  1: 7\nbag: 2 tiles\nhand of player 1: Y4 P6"
    )
    assert "R2" not in text and "B3" not in text
    assert repr(o) == "<Observation player=1 players=2 turn=0 scores=(12, 7) bag=2 player 0 to move>"
    assert "R2" not in repr(o) and "Y4" not in repr(o)


def test_str_of_a_finished_game_says_who_won():
    g = qc.Game(players=2, seed=5)
    while not g.is_over:
        g.play_agent("greedy")
    text = str(g)
    a, b = g.scores
    winner = "a tie" if a == b else f"player {g.winner} wins"
    assert text.splitlines()[0] == f"Game: 2 players, turn {g.turn}, over: {winner}"
    assert f"scores: 0: {a}  1: {b}" in text and "bag: 0 tiles" in text and "hand of" not in text
    assert all(f"{qc.tile_code(t)}" in text for t in set(g.board.values()))
