"""Worked examples from the rule books, and the turn/end-of-game rules, as
plain unit tests built with Game.from_position.  Every placement example is
also checked against the naive reference, so the two can't drift apart."""

from __future__ import annotations

from collections import Counter
from itertools import permutations

import pytest

import naive
import qwirkle_core as qc
from strategies import engine_moves, snapshot

COLORS = ("red", "orange", "yellow", "green", "blue", "purple")
SHAPES = ("circle", "square", "diamond", "clover", "cross", "star")


def T(name: str) -> int:
    """'red circle' -> 0, computed here, independently of qc.tile()."""
    c, s = name.split()
    return COLORS.index(c) * 6 + SHAPES.index(s)


OTHER = ["green cross", "green cross", "purple clover", "purple clover", "orange square", "orange square"]


def board_of(cells: dict) -> dict:
    return {rc: T(name) for rc, name in cells.items()}


def pos(board, hands, bag=(), scores=None, cur=0, rules=None):
    hands = [[T(x) for x in h] for h in hands]
    return qc.Game.from_position(
        board=board_of(board),
        hands=hands,
        bag=[T(x) for x in bag],
        scores=list(scores) if scores is not None else [0] * len(hands),
        current_player=cur,
        rules=rules,
    )


def mv(*cells):
    """mv((r, c, 'red circle'), ...) -> qc.Move"""
    return qc.Move([(r, c, T(name)) for r, c, name in cells])


def assert_refused(g, action):
    before = snapshot(g)
    with pytest.raises(qc.IllegalMoveError):
        action()
    assert snapshot(g) == before


def opening_len(g):
    return None if g.board else naive.largest_group(g.hand())


def assert_legal(g, move, points):
    """The move is in legal_moves with this score, the reference agrees, and
    playing it returns the points."""
    got = engine_moves(g)
    key = frozenset(move.placements)
    want = naive.naive_legal_placements(g.board, g.hand(), opening_len(g))
    assert want.get(key) == points, "reference disagrees with the example"
    assert got.get(key) == points
    p = g.current_player
    s = g.scores[p]
    out = g.bag_size == 0 and len(move.placements) == len(g.hand())
    assert g.play(move) == points
    assert g.scores[p] == s + points + (6 if out else 0)
    assert g.is_over == out


def assert_illegal(g, move):
    key = frozenset(move.placements)
    assert not naive.naive_is_legal(g.board, g.hand(), key, opening_len(g))
    assert key not in engine_moves(g)
    assert_refused(g, lambda: g.play(move))


# --------------------------------------------------------------------------
# tiles and moves


def test_tile_encoding():
    assert tuple(qc.COLORS) == COLORS
    assert tuple(qc.SHAPES) == SHAPES
    for c, cn in enumerate(COLORS):
        for s, sn in enumerate(SHAPES):
            t = c * 6 + s
            assert qc.tile(cn, sn) == t
            assert qc.tile(c, s) == t
            assert qc.color_of(t) == c
            assert qc.shape_of(t) == s
            assert qc.tile_name(t) == f"{cn} {sn}"
    assert qc.tile_name(qc.tile("yellow", "clover")) == "yellow clover"


def test_board_and_hand_are_copies():
    g = pos({(0, 0): "red circle"}, [["red square"], ["blue star"]])
    b = g.board
    b[(0, 1)] = T("red square")
    del b[(0, 0)]
    assert g.board == {(0, 0): T("red circle")}
    assert g.hand() == (T("red square"),)
    assert g.hand(1) == (T("blue star"),)
    assert g.winner is None and not g.is_over


# --------------------------------------------------------------------------
# scoring examples


def test_one_tile_in_two_lines_scores_both():
    # a yellow circle joins the yellow square to its right (yellow line) and
    # the red circle below it (circle line): 2 + 2 = 4
    g = pos(
        {(0, 1): "yellow square", (1, 0): "red circle", (1, 1): "red square"},
        [["yellow circle", "blue star"], ["green cross"]],
        bag=["purple cross"],
    )
    assert_legal(g, mv((0, 0, "yellow circle")), 4)
    assert g.scores == (4, 0)
    assert g.current_player == 1
    assert sorted(g.hand(0)) == sorted([T("blue star"), T("purple cross")])
    assert g.bag_size == 0


def test_row_with_perpendicular_lines():
    # orange circle + orange square under red circle + red square:
    # row OC OS (2) + column RC/OC (2) + column RS/OS (2) = 6
    g = pos(
        {(0, 0): "red circle", (0, 1): "red square", (0, 2): "red diamond"},
        [["orange circle", "orange square"], ["green cross"]],
    )
    assert_legal(g, mv((1, 0, "orange circle"), (1, 1, "orange square")), 6)


def test_qwirkle_scores_12():
    g = pos(
        {(0, i): f"red {s}" for i, s in enumerate(SHAPES[:5])},
        [["red star", "blue star"], ["green cross"]],
        bag=["yellow star"] * 3,
    )
    assert_legal(g, mv((0, 5, "red star")), 12)


def test_qwirkle_with_three_tiles_scores_12():
    g = pos(
        {(0, i): f"red {s}" for i, s in enumerate(SHAPES[:3])},
        [["red star", "red clover", "red cross"], ["green cross"]],
        bag=["yellow star"] * 3,
    )
    assert_legal(g, mv((0, 3, "red clover"), (0, 4, "red cross"), (0, 5, "red star")), 12)


def test_double_qwirkle_scores_24():
    #  row 0: red circle..cross at cols 0-4, (0,5) empty
    #  column 5: orange..purple stars at rows 1-5; (1,4) orange cross joins them
    cells = {(0, i): f"red {s}" for i, s in enumerate(SHAPES[:5])}
    cells.update({(1 + i, 5): f"{c} star" for i, c in enumerate(COLORS[1:])})
    cells[(1, 4)] = "orange cross"
    assert naive.board_is_valid(board_of(cells))
    g = pos(cells, [["red star", "blue circle"], ["green cross"]])
    assert_legal(g, mv((0, 5, "red star")), 24)


def test_six_tile_placement():
    # a whole red Qwirkle laid under a blue star: row of 6 (12) + column (2)
    reds = [f"red {s}" for s in SHAPES]
    g = pos({(0, 0): "blue star"}, [reds, OTHER], bag=["yellow star"] * 3)
    move = mv(*[(1, i - 5, name) for i, name in enumerate(reds)])
    assert_legal(g, move, 14)
    assert g.bag_size == 0 and len(g.hand(0)) == 3 and not g.is_over


def test_opening_with_a_six_tile_group():
    reds = [f"red {s}" for s in SHAPES]
    g = pos({}, [reds, OTHER], bag=["yellow star"] * 3)
    got = engine_moves(g)
    assert len(got) == 720  # every order of the six
    assert set(got.values()) == {12}
    assert all(sorted((r, c) for r, c, _ in k) == [(0, i) for i in range(6)] for k in got)


def test_three_red_tiles_on_both_ends_of_a_red_line():
    g = pos(
        {(0, 0): "red circle", (0, 1): "red square"},
        [["red diamond", "red clover", "red cross", "blue star", "green star", "yellow star"], ["green cross"]],
        bag=["purple circle", "purple square", "purple diamond", "purple clover"],
    )
    move = mv((0, -2, "red diamond"), (0, -1, "red clover"), (0, 2, "red cross"))
    assert_legal(g, move, 5)
    assert g.board == board_of(
        {(0, -2): "red diamond", (0, -1): "red clover", (0, 0): "red circle", (0, 1): "red square", (0, 2): "red cross"}
    )
    # bag[0] is drawn first
    assert sorted(g.hand(0)) == sorted(
        T(x) for x in ["blue star", "green star", "yellow star", "purple circle", "purple square", "purple diamond"]
    )
    assert g.bag_size == 1


# --------------------------------------------------------------------------
# illegal placements


def test_seventh_tile_in_a_line_is_illegal():
    g = pos(
        {(0, i): f"red {s}" for i, s in enumerate(SHAPES)},
        [["red circle", "orange circle", "red star", "blue square"], ["green cross"]],
    )
    for t in ("red circle", "orange circle", "red star", "blue square"):
        assert_illegal(g, mv((0, 6, t)))
        assert_illegal(g, mv((0, -1, t)))
    # it is not that the hand is stuck: orange circle fits under red circle
    assert_legal(g, mv((1, 0, "orange circle")), 2)


def test_repeated_tile_in_a_line_is_illegal():
    g = pos({(0, 0): "red circle", (0, 1): "red square"}, [["red circle", "red diamond"], ["green cross"]])
    assert_illegal(g, mv((0, 2, "red circle")))
    assert_illegal(g, mv((0, -1, "red circle")))
    # the same tile twice in one placement
    g2 = pos({(0, 0): "red square"}, [["red circle", "red circle"], ["green cross"]])
    assert_illegal(g2, mv((0, 1, "red circle"), (0, 2, "red circle")))
    assert_illegal(g2, mv((1, 0, "red circle"), (2, 0, "red circle")))


def test_not_touching_is_illegal():
    g = pos({(0, 0): "red circle"}, [["red square", "red diamond"], ["green cross"]])
    assert_illegal(g, mv((0, 2, "red square")))
    assert_illegal(g, mv((1, 1, "red square")))  # diagonal
    assert_illegal(g, mv((2, 0, "red square"), (2, 1, "red diamond")))


def test_tile_fitting_a_neighbour_but_not_the_line_is_illegal():
    g = pos({(0, 0): "red circle", (0, 1): "red square"}, [["blue square", "blue circle"], ["green cross"]])
    assert_illegal(g, mv((0, 2, "blue square")))  # fits red square only
    assert_illegal(g, mv((0, -1, "blue circle")))  # fits red circle only
    # below the red square it forms a square line: legal
    assert_legal(g, mv((1, 1, "blue square")), 2)


def test_gap_between_placed_tiles_is_illegal():
    g = pos({(0, 0): "red circle"}, [["red square", "red diamond", "red clover"], ["green cross"]])
    assert_illegal(g, mv((0, 1, "red square"), (0, 3, "red diamond")))
    assert_illegal(g, mv((0, -1, "red square"), (0, 2, "red diamond")))
    assert_legal(g, mv((0, 1, "red square"), (0, 2, "red diamond")), 3)


def test_tiles_in_two_rows_are_illegal():
    g = pos({(0, 0): "red circle"}, [["red square", "orange circle", "red diamond"], ["green cross"]])
    assert_illegal(g, mv((0, 1, "red square"), (1, 0, "orange circle")))
    assert_illegal(g, mv((0, 1, "red square"), (-1, 0, "orange circle")))
    assert_illegal(g, mv((0, -1, "red square"), (1, 0, "orange circle")))


def test_tile_not_in_hand_or_on_occupied_cell_is_illegal():
    g = pos({(0, 0): "red circle"}, [["red square"], ["red diamond"]])
    assert_illegal(g, mv((0, 1, "red diamond")))  # the other player's tile
    assert_illegal(g, mv((0, 0, "red square")))  # occupied
    assert_illegal(g, mv((0, 1, "red square"), (0, 2, "red square")))  # held once


# --------------------------------------------------------------------------
# openings


def test_opening_must_use_exactly_the_largest_group():
    hand = ["red circle", "red square", "red diamond", "blue star", "green star", "yellow clover"]
    bag = ["purple circle", "purple square", "purple diamond", "orange cross"]
    g = pos({}, [hand, OTHER], bag=bag)
    assert naive.largest_group([T(x) for x in hand]) == 3
    got = engine_moves(g)
    reds = [T("red circle"), T("red square"), T("red diamond")]
    expect = {frozenset((0, i, t) for i, t in enumerate(p)) for p in permutations(reds)}
    assert set(got) == expect
    assert all(v == 3 for v in got.values())
    assert_illegal(g, mv((0, 0, "red circle"), (0, 1, "red square")))
    assert_illegal(g, mv((0, 0, "blue star"), (0, 1, "green star")))
    assert_illegal(g, mv((0, 1, "red circle"), (0, 2, "red square"), (0, 3, "red diamond")))
    assert_illegal(g, mv((0, 0, "red circle"), (1, 0, "red square"), (2, 0, "red diamond")))
    assert_refused(g, g.pass_turn)
    assert g.play(mv((0, 0, "red square"), (0, 1, "red diamond"), (0, 2, "red circle"))) == 3
    assert g.board == {(0, 0): T("red square"), (0, 1): T("red diamond"), (0, 2): T("red circle")}
    assert sorted(g.hand(0)) == sorted(
        T(x) for x in ["blue star", "green star", "yellow clover", "purple circle", "purple square", "purple diamond"]
    )
    assert g.bag_size == 1 and g.current_player == 1 and g.scores == (3, 0)


def test_opening_with_duplicates_lists_each_placement_once():
    hand = ["red circle", "red circle", "red square", "orange circle", "orange circle", "blue star"]
    g = pos({}, [hand, OTHER], bag=["purple star"] * 3)
    got = engine_moves(g)  # asserts no duplicates
    # groups of 2: {RC, RS} in 2 orders, {RC, OC} in 2 orders
    assert set(got) == {
        frozenset({(0, 0, T("red circle")), (0, 1, T("red square"))}),
        frozenset({(0, 0, T("red square")), (0, 1, T("red circle"))}),
        frozenset({(0, 0, T("red circle")), (0, 1, T("orange circle"))}),
        frozenset({(0, 0, T("orange circle")), (0, 1, T("red circle"))}),
    }
    assert len(g.legal_moves()) == 4


def test_opener_may_not_exchange():
    hand = ["red circle", "red square", "red diamond", "blue star", "green star", "yellow clover"]
    g = pos({}, [hand, OTHER], bag=["purple star"] * 3)
    assert_refused(g, lambda: g.exchange([T("blue star")]))


def test_any_line_opening():
    rules = qc.Rules(players=2, opening="any_line")
    hand = ["red circle", "red square", "red diamond", "blue star", "green star", "yellow clover"]
    g = pos({}, [hand, OTHER], bag=["purple star"] * 3, rules=rules)
    got = engine_moves(g)
    want = naive.naive_legal_placements({}, [T(x) for x in hand], None)
    assert got == want
    assert frozenset({(0, 0, T("yellow clover"))}) in got
    assert got[frozenset({(0, 0, T("yellow clover"))})] == 1
    # 6 singles + RC/RS/RD: 6 pairs + 6 triples + blue/green star: 2 pairs
    assert len(got) == 6 + 6 + 6 + 2
    assert g.play(mv((0, 0, "blue star"))) == 1


def test_new_game_starting_player_has_the_largest_group():
    for seed in range(30):
        for players in (2, 3, 4, 6):
            g = qc.Game(players=players, seed=seed)
            groups = [naive.largest_group(g.hand(p)) for p in range(players)]
            assert g.current_player == groups.index(max(groups))
            assert g.players == players
            moves = g.legal_moves()
            assert moves and all(len(m.placements) == max(groups) for m in moves)
            assert_refused(g, g.pass_turn)


def test_same_seed_same_game():
    a, b = qc.Game(players=3, seed=7), qc.Game(players=3, seed=7)
    assert [a.hand(p) for p in range(3)] == [b.hand(p) for p in range(3)]
    m = a.legal_moves()[0]
    a.play(m)
    b.play(m)
    assert snapshot(a) == snapshot(b)


# --------------------------------------------------------------------------
# turns and the end of the game


def test_going_out_bonus():
    g = pos(
        {(0, 0): "red circle", (0, 1): "red square"}, [["red diamond"], ["blue cross", "green cross"]], scores=[10, 12]
    )
    assert g.play(mv((0, 2, "red diamond"))) == 3  # bonus not returned
    assert g.scores == (10 + 3 + 6, 12)
    assert g.is_over
    assert g.winner == 0
    assert g.hand(0) == ()
    assert_refused(g, lambda: g.play(mv((1, 0, "blue cross"))))
    assert_refused(g, g.pass_turn)
    assert_refused(g, lambda: g.exchange([T("blue cross")]))


def test_going_out_with_several_tiles_and_losing_on_score():
    g = pos({(0, 0): "red circle"}, [["blue star"], ["red square", "red diamond"]], scores=[30, 5], cur=1)
    assert g.play(mv((0, 1, "red square"), (0, 2, "red diamond"))) == 3
    assert g.scores == (30, 5 + 3 + 6)
    assert g.is_over and g.winner == 0


def test_going_out_into_a_tie_has_no_winner():
    g = pos({(0, 0): "red circle"}, [["red square"], ["blue star"]], scores=[10, 18])
    assert g.play(mv((0, 1, "red square"))) == 2
    assert g.scores == (18, 18)
    assert g.is_over and g.winner == -1


def test_no_bonus_for_last_tile_while_bag_not_empty():
    g = pos({(0, 0): "red circle"}, [["red square"], ["blue star"]], bag=["green cross"], scores=[0, 0])
    assert g.play(mv((0, 1, "red square"))) == 2
    assert g.scores == (2, 0)
    assert not g.is_over
    assert g.hand(0) == (T("green cross"),)
    assert g.bag_size == 0 and g.current_player == 1


def test_blocked_game_ends_after_everyone_passes_without_bonus():
    g = pos({(0, 0): "red circle"}, [["blue square", "green diamond"], ["yellow cross", "purple star"]], scores=[5, 3])
    assert g.legal_moves() == []
    g.pass_turn()
    assert not g.is_over and g.current_player == 1 and g.winner is None
    assert g.legal_moves() == []
    g.pass_turn()
    assert g.is_over
    assert g.scores == (5, 3)
    assert g.winner == 0
    assert_refused(g, g.pass_turn)


def test_blocked_game_tie_has_no_winner():
    g = pos({(0, 0): "red circle"}, [["blue square"], ["yellow cross"], ["purple star"]], scores=[4, 4, 1], cur=2)
    for _ in range(3):
        assert not g.is_over
        g.pass_turn()
    assert g.is_over and g.winner == -1 and g.scores == (4, 4, 1)


def test_passes_must_be_consecutive_to_end_the_game():
    g = pos(
        {(0, 0): "red circle"},
        [
            ["green diamond", "yellow star"],  # never fits
            ["red square", "yellow cross"],  # red square fits once
            ["purple star", "blue diamond"],
        ],  # never fits
        scores=[0, 0, 0],
    )
    g.pass_turn()  # p0
    assert_refused(g, g.pass_turn)  # p1 can place
    assert g.play(mv((0, 1, "red square"))) == 2  # p1, resets the count
    g.pass_turn()  # p2
    g.pass_turn()  # p0
    assert not g.is_over and g.current_player == 1
    g.pass_turn()  # p1: three passes in a row
    assert g.is_over and g.scores == (0, 2, 0) and g.winner == 1


def test_pass_refused_while_a_placement_exists():
    g = pos({(0, 0): "red circle"}, [["blue square", "red star"], ["green cross"]])
    assert_refused(g, g.pass_turn)


def test_pass_refused_while_bag_not_empty_then_exchange_required():
    # (hands are full while the bag is not empty, as in a real game)
    hand = ["blue square", "green diamond", "yellow cross", "purple star", "orange square", "blue diamond"]
    g = pos(
        {(0, 0): "red circle"},
        [hand, ["green cross", "green star", "yellow square", "yellow diamond", "purple clover", "orange clover"]],
        bag=["yellow star", "purple square"],
    )
    assert g.legal_moves() == []
    assert_refused(g, g.pass_turn)
    g.exchange([T("blue square")])
    assert g.current_player == 1 and g.bag_size == 2
    assert len(g.hand(0)) == 6
    assert not Counter(T(x) for x in hand[1:]) - Counter(g.hand(0))
    assert g.scores == (0, 0) and g.board == {(0, 0): T("red circle")}


def test_exchange_rules():
    hand = ["blue square", "blue square", "green diamond", "yellow star", "purple cross", "orange diamond"]
    g = pos(
        {(0, 0): "red circle"},
        [hand, ["green cross", "green star", "yellow square", "yellow diamond", "purple clover", "orange clover"]],
        bag=["purple square", "orange star"],
    )
    assert_refused(g, lambda: g.exchange([T(x) for x in hand[:3]]))  # bag of 2
    assert_refused(g, lambda: g.exchange([]))
    assert_refused(g, lambda: g.exchange([T("red star")]))  # not held
    assert_refused(g, lambda: g.exchange([T("green diamond")] * 2))  # held once
    g.exchange([T("blue square"), T("blue square")])  # held twice
    assert g.bag_size == 2 and len(g.hand(0)) == 6
    assert g.current_player == 1
    assert not Counter(T(x) for x in hand[2:]) - Counter(g.hand(0))


def test_exchange_refused_with_empty_bag():
    g = pos({(0, 0): "red circle"}, [["blue square"], ["green cross"]])
    assert_refused(g, lambda: g.exchange([T("blue square")]))


def test_dead_board_ends_the_game_after_an_exchange():
    """docs/rules.md, Decision (dead board): if no tile in the bag or any hand
    fits any cell, the game ends after the exchange, with no bonus."""
    dead = ["blue square", "green diamond", "yellow cross", "purple star", "orange square", "blue diamond"]
    other = ["green cross", "green star", "yellow square", "yellow diamond", "purple clover", "orange clover"]
    g = pos({(0, 0): "red circle"}, [dead, other], bag=["purple square"], scores=[3, 7])
    assert_refused(g, g.pass_turn)
    g.exchange([T("blue square")])
    assert g.is_over and g.scores == (3, 7) and g.winner == 1
    # one fitting tile left anywhere keeps the game going
    g = pos({(0, 0): "red circle"}, [dead, other], bag=["red square"])
    g.exchange([T("blue square")])
    assert not g.is_over and g.current_player == 1
