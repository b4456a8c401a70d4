"""The endgame solver against a plain minimax over ``qc.Game``.

Positions: boards of real (greedy) games with an empty bag and chosen small hands
(``Game.from_position``), and real endgames reached by playing greedy games on past
the point where the bag runs empty. The reference below knows nothing of the solver:
it tries every legal action with ``Game.copy`` / ``play`` / ``pass_turn`` and takes
the best final margin, remembering positions it has already solved.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import qwirkle_core as qc
from qwirkle_core._kernels import board as _bd
from qwirkle_core._kernels import endgame as _eg
from qwirkle_core._kernels import movegen as _mg
from qwirkle_core.evaluation.endgame import EndgameResult, solve_endgame
from strategies import FULL_SUPPLY, examples, frontier_tiles

# --------------------------------------------------------------------------
# the reference: plain minimax from the rule text


def reference_value(g: qc.Game) -> int:
    """The final score margin of the player to move (their score minus the other's)
    under best play by both, by trying every action to the end of the game."""
    p = g.current_player
    return g.scores[p] - g.scores[1 - p] + _gain(g, frozenset(), {})


def _gain(g, placed, memo):
    """Points the player to move gains from here on minus the opponent's. A position
    is the root's board plus ``placed``, the hands, the side to move and the passes."""
    key = (placed, g.hand(0), g.hand(1), g.current_player, g.passes)
    if key not in memo:
        memo[key] = _best_gain(g, placed, memo)
    return memo[key]


def _best_gain(g, placed, memo):
    moves = g.legal_moves()
    if not moves:  # a pass; a pass after a pass ends the game with no bonus
        after = g.copy()
        after.pass_turn()
        return 0 if after.is_over else -_gain(after, placed, memo)
    hand = len(g.hand())
    best = None
    for m in moves:
        if len(m.placements) == hand:  # places the last tile: +6 and the game ends
            gain = m.score + 6
        else:
            after = g.copy()
            after.play(m)
            gain = m.score - _gain(after, placed | frozenset(m.placements), memo)
        best = gain if best is None else max(best, gain)
    return best


def final_margin(g: qc.Game, p: int) -> int:
    return g.scores[p] - g.scores[1 - p]


# --------------------------------------------------------------------------
# positions


def greedy_game(seed: int, stop) -> qc.Game:
    """A two-player greedy game played from ``seed`` until ``stop(game)`` or its end."""
    g = qc.Game(players=2, seed=seed)
    while not g.is_over and not stop(g):
        g.play_agent("greedy")
    return g


def chosen_endgame(seed: int, sizes: tuple[int, int], midgame: bool = False, stuck: bool = False) -> qc.Game | None:
    """The board of a greedy game (when the bag ran empty, or at a random turn of the
    middle game), an empty bag and hands of ``sizes`` tiles chosen from the tiles not on
    the board (often ones that fit, sometimes a duplicate), random scores and mover.
    ``stuck``: seat 0's tiles fit nowhere on the board as it is (it must pass until
    its opponent opens a place for them)."""
    rng = random.Random(seed)
    if midgame:
        turn = rng.randint(6, 40)
        g = greedy_game(seed, lambda g: g.turn >= turn)
    else:
        g = greedy_game(seed, lambda g: g.bag_size == 0)
    if g.is_over or not g.board:
        return None
    left = FULL_SUPPLY - Counter(g.board.values())
    fitting = [t for t in frontier_tiles(g.board) if left[t] > 0]
    unfit = [t for t in left.elements() if not fits(g.board, t)] if stuck else []
    hands = []
    for seat, size in enumerate(sizes):
        pool = unfit if stuck and seat == 0 else list(left.elements())
        hand = []
        while len(hand) < size and pool:
            if hand and rng.random() < 0.1 and left[hand[-1]] > 0:
                t = hand[-1]  # a duplicate
            elif fitting and rng.random() < 0.7 and not (stuck and seat == 0):
                t = rng.choice(fitting)
            else:
                t = rng.choice(pool)
            if left[t] > 0:
                left[t] -= 1
                hand.append(t)
            pool = [t for t in pool if left[t] > 0]
        if not hand:
            return None
        hands.append(hand)
    return qc.Game.from_position(
        board=g.board,
        hands=hands,
        bag=[],
        scores=[rng.randint(0, 250), rng.randint(0, 250)],
        current_player=rng.randint(0, 1),
    )


def fits(board: dict, tile: int) -> bool:
    """Whether ``tile`` alone has a legal placement on ``board``."""
    used = Counter(board.values())
    used[tile] += 1
    other = next(u for u in range(36) if used[u] < 3)  # any tile for the other seat
    return bool(qc.Game.from_position(board=board, hands=[[tile], [other]]).legal_moves())


def real_endgame(seed: int, most: int = 3) -> qc.Game | None:
    """A greedy game played on past the empty bag until both hands hold at most
    ``most`` tiles (None if it ended first)."""
    g = greedy_game(seed, lambda g: g.bag_size == 0 and max(g.hand_sizes) <= most)
    return None if g.is_over else g


def value_of(g: qc.Game, move: qc.Move) -> int:
    """The final margin of the player to move if they play ``move`` and then both
    play best (by the solver)."""
    p = g.current_player
    after = g.copy()
    after.play(move)
    return final_margin(after, p) if after.is_over else -solve_endgame(after).value


def check_against_reference(g: qc.Game) -> EndgameResult:
    """Solve ``g``: the value is the reference's, and the move chosen achieves it."""
    r = solve_endgame(g)
    assert r.exact and r.kind == "exact" and r.player == g.current_player
    assert r.value == reference_value(g)
    assert r.principal_variation[0] == r.move
    assert value_of(g, r.move) == r.value
    return r


SMALL_SIZES = [(a, b) for a in (1, 2, 3) for b in (1, 2, 3) if a + b <= 5]


# the first block by default, every block with -m slow
@pytest.mark.parametrize("block", [pytest.param(k, marks=[pytest.mark.slow] if k else []) for k in range(8)])
def test_value_matches_minimax_on_chosen_hands(block):
    """200 positions (25 a block): boards of games whose bag just ran empty, or of
    middle games, with hands of 1-3 tiles (at most 5 in all)."""
    solved = 0
    for i in range(25):
        seed = 1000 * block + i
        g = chosen_endgame(seed, SMALL_SIZES[seed % len(SMALL_SIZES)], midgame=i % 3 == 2)
        if g is not None:
            check_against_reference(g)
            solved += 1
    assert solved >= 20


@pytest.mark.parametrize("block", range(2))
def test_value_matches_minimax_when_a_player_is_stuck(block):
    """About 40 positions (boards of middle games) where seat 0 holds 1-3 tiles that
    fit nowhere yet: passes, and tiles that fit once the opponent has played."""
    solved = passed = 0
    for i in range(30):
        seed = 20_000 + 100 * block + i
        g = chosen_endgame(seed, SMALL_SIZES[seed % len(SMALL_SIZES)], midgame=True, stuck=True)
        if g is not None:
            r = check_against_reference(g)
            solved += 1
            passed += any(m.kind == "pass" for m in r.principal_variation)
    assert solved >= 15 and passed >= 8


@pytest.mark.parametrize("seed", [pytest.param(k, marks=[pytest.mark.slow] if k else []) for k in range(4)])
def test_value_matches_minimax_with_three_tiles_each(seed):
    g = chosen_endgame(50_000 + seed, (3, 3))
    check_against_reference(g)


@pytest.mark.slow
@pytest.mark.parametrize("block", range(4))
def test_value_matches_minimax_on_real_endgames(block):
    """Greedy games played on until both hands hold at most 3 tiles (the side to
    move may have passed already)."""
    solved = 0
    for seed in range(20 * block, 20 * block + 20):
        g = real_endgame(seed)
        if g is not None:
            check_against_reference(g)
            solved += 1
    assert solved >= 10


# --------------------------------------------------------------------------
# limits


@st.composite
def endgames(draw, most=6):
    """Real endgames: greedy games from the empty bag on, hands of up to ``most``
    (when the game ended first: a middle game's board with chosen hands)."""
    seed = draw(st.integers(0, 2**31 - 1))
    return real_endgame(seed, most) or chosen_endgame(seed, (most, most), midgame=True)


def assert_legal(g: qc.Game, move: qc.Move) -> None:
    legal = g.legal_moves()
    if move.kind == "pass":
        assert legal == []
    else:
        assert move in legal
        g.copy().play(move)


@examples(1.0)
@given(endgames(), st.integers(1, 3000))
def test_node_limit_returns_a_legal_action(g, max_nodes):
    r = solve_endgame(g, max_nodes=max_nodes)
    assert_legal(g, r.move)
    assert r.nodes <= max_nodes + 1
    if not r.exact:
        assert r.nodes > max_nodes  # it stopped because of the limit
    after = g.copy()
    for m in r.principal_variation:  # the line is legal, move after move
        assert not after.is_over
        after.play(m)


@examples(0.5)
@given(endgames(), st.sampled_from([0.01, 0.5, 5.0]))
def test_time_limit_returns_a_legal_action(g, time_ms):
    assert_legal(g, solve_endgame(g, time_ms=time_ms).move)


@examples(0.5)
@given(endgames(most=4), st.integers(1, 20_000))
def test_a_lower_bound_is_guaranteed_by_its_move(g, max_nodes):
    r = solve_endgame(g, max_nodes=max_nodes)
    full = solve_endgame(g)
    assert full.exact
    if r.kind == "exact":
        assert r.value == full.value
    elif r.kind == "lower_bound":
        assert r.value <= value_of(g, r.move) <= full.value
    else:
        assert r.kind == "estimate"


def test_no_completed_iteration_falls_back_to_the_best_scoring_move():
    g = real_endgame(7, most=6)
    r = solve_endgame(g, max_nodes=1)
    assert r.kind == "estimate" and not r.exact and r.depth == 0
    best = max(m.score for m in g.legal_moves())
    assert r.move.score == best and r.move in g.legal_moves()
    assert r.value == final_margin(g, g.current_player) + best


def test_every_kind_of_answer_is_consistent_with_the_exact_one():
    kinds = Counter()
    for seed in range(6):
        g = real_endgame(seed, most=5) or chosen_endgame(seed, (5, 5), midgame=True)
        full = solve_endgame(g)
        assert full.exact and full.depth >= 1
        for max_nodes in (2, full.nodes // 100, full.nodes // 10, full.nodes // 3, full.nodes - 1, full.nodes):
            r = solve_endgame(g, max_nodes=max(max_nodes, 1))
            kinds[r.kind] += 1
            if r.exact:
                assert r == full  # the same search, not cut
            elif r.kind == "lower_bound":
                assert r.value <= value_of(g, r.move) <= full.value
    assert kinds["estimate"] >= 6 and kinds["lower_bound"] >= 3 and kinds["exact"] >= 6


@pytest.mark.parametrize("seed", range(10))
def test_principal_variation_plays_out_to_the_value(seed):
    g = real_endgame(100 + seed, most=4) or chosen_endgame(seed, (4, 4), midgame=True)
    r = solve_endgame(g)
    after = g.copy()
    for m in r.principal_variation:
        after.play(m)
    if after.is_over:
        assert final_margin(after, r.player) == r.value
    else:  # the line stopped early: the rest of the game still makes up the value
        p = after.current_player
        rest = solve_endgame(after).value
        assert (rest if p == r.player else -rest) == r.value


# --------------------------------------------------------------------------
# passes and the blocked end


def test_both_blocked_ends_with_no_bonus():
    red_circle, orange_square = qc.parse_tile("R1"), qc.parse_tile("O2")
    g = qc.Game.from_position(board={(0, 0): red_circle}, hands=[[red_circle], [orange_square]], scores=[10, 4])
    r = solve_endgame(g)
    assert r.move == qc.Move.pass_turn() and r.exact and r.value == 6
    assert r.principal_variation == (qc.Move.pass_turn(), qc.Move.pass_turn())


def test_pass_then_the_opponent_goes_out():
    red_circle, red_square = qc.parse_tile("R1"), qc.parse_tile("R2")
    g = qc.Game.from_position(board={(0, 0): red_circle}, hands=[[red_circle], [red_square]], scores=[10, 4])
    r = solve_endgame(g)
    assert r.move.kind == "pass" and r.exact
    assert r.value == 10 - (4 + 2 + 6) == reference_value(g)


def test_after_a_pass_the_second_pass_ends_the_game():
    red_circle, orange_square = qc.parse_tile("R1"), qc.parse_tile("O2")
    g = qc.Game.from_position(board={(0, 0): red_circle}, hands=[[red_circle], [orange_square]], scores=[10, 4])
    g.pass_turn()
    r = solve_endgame(g)
    assert r.player == 1 and r.move.kind == "pass" and r.value == -6
    assert r.principal_variation == (qc.Move.pass_turn(),)


def test_an_empty_board_opens_with_the_largest_group():
    hands = [[qc.parse_tile("R1"), qc.parse_tile("R2")], [qc.parse_tile("B3")]]
    g = qc.Game.from_position(board={}, hands=hands)
    r = solve_endgame(g)
    assert r.exact and r.value == reference_value(g) == 2 + 6
    assert len(r.move.placements) == 2


# --------------------------------------------------------------------------
# the kernel: the board comes back as it was; the action as generated


def _kernel_arrays(g):
    a = g.kernel_arrays()
    return a.board, a.cross, a.anchors, a.bmeta, a.hands, a.gmeta


@pytest.mark.parametrize("seed", range(3))
def test_kernel_restores_the_board_whenever_it_stops(seed):
    arrays = [a.copy() for a in _kernel_arrays(real_endgame(seed, most=6))]
    before = [a.copy() for a in arrays]
    ws = _eg.new_workspace(16)
    for max_nodes in (1, 50, 500, 5000, 50_000):
        _eg.solve(ws, *arrays, max_nodes, 0.0)
        board, cross, anchors, bmeta, hands, gmeta = arrays
        live = bmeta[_bd.B_ANCHORS]  # the anchor list's entries in use
        for now, then in zip(
            (board, cross, anchors[:live], bmeta, hands, gmeta), (*before[:2], before[2][:live], *before[3:])
        ):
            np.testing.assert_array_equal(now, then)
        row, out = ws[_eg.W_BEST_ROW], ws[_eg.W_BEST]
        n = row[_mg.M_N]
        assert n > 0 and out[_eg.O_N] == n and out[_eg.O_POINTS] == row[_mg.M_SCORE]
        for j in range(n):
            assert out[_eg.O_TILE + j] == row[_mg.M_TILE + j]
            assert _bd.cell_of(out[_eg.O_ROW + j], out[_eg.O_COL + j]) == row[_mg.M_CELL + j]


def test_kernel_grows_a_move_stack_that_is_too_small():
    g = real_endgame(4, most=4)
    arrays = [a.copy() for a in _kernel_arrays(g)]
    roomy, cramped = _eg.new_workspace(16), _eg.new_workspace(16, 8)
    assert len(g.legal_moves()) > 8
    assert _eg.solve(roomy, *arrays, 0, 0.0) == _eg.solve(cramped, *arrays, 0, 0.0)
    np.testing.assert_array_equal(roomy[_eg.W_BEST], cramped[_eg.W_BEST])
    np.testing.assert_array_equal(roomy[_eg.W_PV], cramped[_eg.W_PV])


# --------------------------------------------------------------------------
# input checks; the game is left as it was


def test_the_game_is_not_changed():
    g = real_endgame(3, most=6)
    before, history = g.to_json(), g.history
    solve_endgame(g, max_nodes=5000)
    solve_endgame(g, max_nodes=1)
    assert g.to_json() == before and g.history == history
    assert g.legal_moves() == g.copy().legal_moves()


def test_refuses_what_it_cannot_solve():
    g = real_endgame(3, most=6)
    with pytest.raises(TypeError, match="Game"):
        solve_endgame(g.to_json())
    with pytest.raises(ValueError, match="two-player"):
        solve_endgame(qc.Game(players=3, seed=1))
    with pytest.raises(ValueError, match="bag still holds 96"):
        solve_endgame(qc.Game(players=2, seed=1))
    over = greedy_game(5, lambda g: False)
    with pytest.raises(ValueError, match="over"):
        solve_endgame(over)
    for bad in ("10", True, [5]):
        with pytest.raises(TypeError, match="max_nodes"):
            solve_endgame(g, max_nodes=bad)
        with pytest.raises(TypeError, match="time_ms"):
            solve_endgame(g, time_ms=bad)
    with pytest.raises(TypeError, match="max_nodes"):
        solve_endgame(g, max_nodes=2.5)
    for bad in (0, -1):
        with pytest.raises(ValueError, match="max_nodes"):
            solve_endgame(g, max_nodes=bad)
    for bad in (0, -1.5, float("nan")):
        with pytest.raises(ValueError, match="time_ms"):
            solve_endgame(g, time_ms=bad)


# The solver's answers on the endgames of greedy games 1000-1009 (``greedy_game``, played
# on until the bag is empty and no hand holds more than 4 or 6 tiles), pinned: (seed,
# most tiles a hand, max_nodes, value, kind, nodes, depth, move). The solver's exact
# values are checked against the minimax above on smaller hands; these pin also its
# node counts and, with a node limit, answers that depend on the order of its search. So a change meant to keep every answer (a faster kernel, one compile fewer)
# cannot change one unnoticed; a change of the search updates this table.
PINNED = [
    (1000, 4, None, -13, "exact", 1253, 5, "G2@-3,-4"),
    (1000, 6, 40000, -5, "estimate", 40001, 2, "P3@4,-1 R3@5,-1"),
    (1001, 4, None, 3, "exact", 3059, 4, "B4@3,0"),
    (1001, 6, 3000, -1, "estimate", 3001, 2, "O5@2,16 O2@3,16 O6@4,16"),
    (1002, 4, None, 14, "exact", 379, 2, "Y3@-5,8 O3@-4,8"),
    (1003, 4, None, 22, "exact", 5912, 4, "P6@-1,4"),
    (1003, 6, 40000, 17, "lower_bound", 40001, 7, "B5@10,4 Y5@10,5"),
    (1003, 6, 3000, 11, "estimate", 3001, 2, "B5@10,4 Y5@10,5"),
    (1004, 4, None, -5, "exact", 4285, 2, "P5@-6,5 P3@-5,5 P2@-4,5"),
    (1004, 6, 40000, -5, "lower_bound", 40001, 4, "B6@-8,-9 Y6@-7,-9"),
    (1004, 6, 3000, -10, "estimate", 3001, 2, "B6@-8,-9 Y6@-7,-9"),
    (1005, 4, None, 10, "exact", 2670, 4, "Y3@-2,0"),
    (1006, 4, None, -25, "exact", 2189, 5, "Y1@-9,3 B1@-9,4"),
    (1007, 4, None, 1, "exact", 1942, 4, "G1@5,10 O1@5,11"),
    (1008, 4, None, 6, "exact", 833, 4, "B5@4,9"),
    (1009, 4, None, 21, "exact", 1720, 4, "Y2@11,7"),
]


def test_the_solvers_answers_on_greedy_endgames_are_pinned():
    answers = []
    for seed, most, max_nodes, *_ in PINNED:
        g = greedy_game(seed, lambda g, most=most: g.bag_size == 0 and max(g.hand_sizes) <= most)
        r = solve_endgame(g, max_nodes=max_nodes)
        answers.append((seed, most, max_nodes, r.value, r.kind, r.nodes, r.depth, str(r.move)))
    assert answers == PINNED
