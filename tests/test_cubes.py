"""Qwirkle Cubes (``Rules(variant="cubes")``): the rules against the naive reference,
a state machine over the whole API (90 cubes conserved, colours never change on a
roll, every roll reproducible from the seed, the end as the rules say), complete
games, the agents' re-roll policies, batches (reproducible at any thread count),
records, positions and observations."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import naive
import qwirkle_core as qc
from qwirkle_core.batch.local import compile_seconds
from strategies import (
    CUBES,
    advance_cubes,
    assert_same_rows,
    cube_colours,
    cubes_games,
    cubes_rules,
    engine_moves,
    examples,
    rebuild_cubes,
    repeated_cubes_hand,
    replayed_state,
    snapshot,
)


def check_against_reference(g):
    """legal_moves() and their scores equal the naive reference's, and so do the
    forced re-roll and the pass."""
    board, hand = g.board, list(g.hand())
    blocked = naive.naive_cubes_opening_blocked(board, hand, g.rules.opening)
    opening_len = naive.largest_group(hand) if not board and g.rules.opening == "largest_group" else None
    want = {} if blocked else naive.naive_legal_placements(board, hand, opening_len)
    assert engine_moves(g) == want, f"board={board} hand={hand}"
    stuck = naive.naive_cubes_stuck(board, hand)
    assert g.must_reroll == (blocked or (not want and not stuck))
    swap = min(len(hand), g.bag_size)
    if not want and stuck and swap:  # none of its colours fits: it swaps its cubes
        g.copy().exchange(hand[:swap])
        with pytest.raises(qc.IllegalMoveError):
            g.copy().pass_turn()
    elif not want and stuck:  # ... or, with an empty bag, passes
        g.copy().pass_turn()
    else:
        with pytest.raises(qc.IllegalMoveError):
            g.copy().pass_turn()
        with pytest.raises(qc.IllegalMoveError):
            g.copy().exchange(hand[: max(swap, 1)])
    return want


# -- the rules against the reference ------------------------------------------------------


@given(st.integers(0, 2**64 - 1), st.integers(2, 6))
def test_deal_and_opening_match_reference(seed, players):
    g = qc.Game(seed=seed, rules=cubes_rules(players))
    assert g.current_player == 0 == g.starting_player  # docs/rules.md: seat 0 opens
    assert g.bag_size == 90 - 6 * players and all(len(g.hand(p)) == 6 for p in range(players))
    assert cube_colours(g) == Counter({c: 15 for c in range(6)})
    check_against_reference(g)
    while g.must_reroll:  # the opener re-rolls all its cubes until two share a colour or a shape
        g.reroll()
    want = check_against_reference(g)
    assert want and all(len(k) == naive.largest_group(g.hand()) >= 2 for k in want)


@pytest.mark.slow
@given(cubes_games(min_turns=1, max_turns=40))
def test_positions_of_real_games_match_reference(g):
    check_against_reference(g)


@examples(0.5)
@given(cubes_games(min_turns=30, max_turns=80))
def test_crowded_positions_match_reference(g):
    check_against_reference(g)


@given(cubes_games(min_turns=0, max_turns=40), st.data())
def test_repeated_cubes_match_reference(g, data):
    """A hand showing one face 3 to 6 times (no tile game has more than 3 copies)."""
    hand = data.draw(repeated_cubes_hand(g))
    g2 = rebuild_cubes(g, hand, random.Random(data.draw(st.integers(0, 99))))
    assert max(Counter(g2.hand()).values()) >= 3
    assert cube_colours(g2) == Counter({c: 15 for c in range(6)})
    want = check_against_reference(g2)
    for m in list(g2.legal_moves())[:5]:
        assert g2.copy().play(m) == want[frozenset(m.placements)] == naive.naive_score(g2.board, m.placements)


# A 6 x 6 block, row i all colour i, column j all shape j: every line is a Qwirkle, so no
# cube of any colour fits next to it.
DEAD = {(i, j): 6 * i + j for i in range(6) for j in range(6)}

BLUE_BLOCK = {(0, 0): 29, (0, 1): 27, (-1, 0): 25, (-1, 1): 29}  # only blue fits next to it


@given(st.one_of(cubes_games(min_turns=3, max_turns=40), st.sampled_from([BLUE_BLOCK, DEAD])), st.data())
def test_stuck_hands_swap_or_pass_and_match_reference(g, data):
    """Hands whose colours fit nowhere (stuck: swap, or pass with an empty bag) or only
    with other faces (re-roll)."""
    if isinstance(g, dict):
        g = qc.Game.from_position(board=g, hands=[[0], [1]], bag=[], rules=CUBES)
    board = g.board
    fits = {k for k in range(6) if not naive.naive_cubes_stuck(board, [k * 6])}
    colours = data.draw(st.sampled_from([sorted(set(range(6)) - fits) or [0], sorted(fits) or [0]]), label="colours")
    rng = random.Random(data.draw(st.integers(0, 2**31 - 1)))
    hand = [rng.choice(colours) * 6 + rng.randrange(6) for _ in range(data.draw(st.integers(1, 6)))]
    used = Counter(t // 6 for t in board.values()) + Counter(
        t // 6 for p in range(g.players) if p != g.current_player for t in g.hand(p)
    )
    if any(used[c] + Counter(t // 6 for t in hand)[c] > 15 for c in range(6)):
        return
    g2 = rebuild_cubes(g, hand, rng)
    if data.draw(st.booleans(), label="empty bag"):
        g2 = qc.Game.from_position(
            board=board,
            hands=[g2.hand(p) for p in range(g2.players)],
            bag=[],
            current_player=g2.current_player,
            rules=g2.rules,
        )
    event(
        ("stuck" if naive.naive_cubes_stuck(board, hand) else "not stuck") + (", empty bag" if not g2.bag_size else "")
    )
    check_against_reference(g2)


@given(st.integers(0, 2**64 - 1))
def test_any_line_opening(seed):
    g = qc.Game(seed=seed, rules=cubes_rules(2, "any_line"))
    assert not g.must_reroll and g.current_player == 0
    want = check_against_reference(g)
    assert {k for k in want if len(k) == 1} == {frozenset({(0, 0, t)}) for t in set(g.hand())}


# -- the actions ----------------------------------------------------------------------------


def refused(g, action, match=None):
    before = snapshot(g)
    with pytest.raises(qc.IllegalMoveError, match=match):
        action()
    assert snapshot(g) == before


def opened(seed=3):
    """A 2-player Cubes game right after the opening."""
    g = qc.Game(seed=seed, rules=CUBES)
    while g.must_reroll:
        g.reroll()
    g.play(max(g.legal_moves(), key=lambda m: m.score))
    return g


def test_reroll_rules():
    g = opened()
    hand = g.hand()
    refused(g, lambda: g.reroll([]), "1 to 6 cubes")
    missing = next(t for t in range(36) if t not in hand)
    refused(g, lambda: g.reroll([missing]), "you do not hold it")
    refused(g, lambda: g.exchange(hand[:1]), "no exchanges")
    refused(g, lambda: g.check_exchange(hand[:1]), "no exchanges")
    m = g.reroll(hand[:2])
    assert m.kind is qc.MoveKind.REROLL and m.tiles == tuple(sorted(hand[:2])) and len(m.faces) == 2
    assert [t // 6 for t in m.tiles] == [f // 6 for f in m.faces]  # a roll keeps the colour
    assert Counter(g.hand()) == Counter(hand) - Counter(m.tiles) + Counter(m.faces)
    assert g.history[-1] == qc.Action(1, m, 0, g.scores)
    assert g.current_player == 1 and g.turn == 1  # a re-roll is part of the turn
    if not g.must_reroll:
        refused(g, lambda: g.reroll(g.hand()[:1]), "re-rolled in this turn already")
    refused(g, lambda: qc.Game(seed=1).reroll(), "part of Qwirkle Cubes")


def test_forced_reroll_must_be_all_and_pass_only_when_stuck():
    # O3 and Y3 next to R1 R2: no diamond and no orange or yellow face fits there now,
    # but O1 under R1 (a column of circles) would: a forced re-roll, not a pass
    g = qc.Game.from_position(board={(0, 0): 0, (0, 1): 1}, hands=[[8, 14], [12]], bag=[], rules=CUBES)
    assert not g.legal_moves() and g.must_reroll and g.can_reroll
    refused(g, lambda: g.pass_turn(), "re-roll all your cubes")
    g.reroll([14])  # the turn's free re-roll may take any cubes
    while g.must_reroll:
        if len(g.hand()) > 1:
            refused(g, lambda: g.reroll([g.hand()[0]]), "re-roll all your cubes")
        g.reroll()
    assert g.legal_moves() and g.current_player == 0
    # no face of any colour fits next to the dead block: no roll can help, so swap...
    g = qc.Game.from_position(board=DEAD, hands=[[0, 1, 2], [12]], bag=[1, 2], rules=CUBES)
    assert not g.must_reroll and not g.legal_moves() and naive.naive_cubes_stuck(DEAD, [0, 1])
    refused(g, g.pass_turn, "swap your cubes")
    refused(g, lambda: g.exchange([0]), "swap 2 cubes")
    g.exchange([0, 2])
    assert sorted(t // 6 for t in g.hand(0)) == [0, 1, 2] and sorted(g.position().bag) == [0, 0]
    assert g.is_over and g.winner == -1  # ... and since nothing fits anywhere, the game is over
    # ... or with an empty bag pass
    g = qc.Game.from_position(board=DEAD, hands=[[0, 1], [12]], bag=[], rules=CUBES)
    refused(g, lambda: g.exchange([0, 1]), "the bag holds only 0")
    g.pass_turn()
    assert g.current_player == 1 and not g.is_over and g.passes == 1


def test_opening_blocked_then_largest_group():
    hand = [0, 7, 14, 21, 28, 35]  # six colours, six shapes: no two cubes share anything
    g = qc.Game.from_position(board={}, hands=[hand, [1, 2]], bag=list(range(6)), rules=CUBES)
    assert g.must_reroll and g.legal_moves() == []
    refused(g, lambda: g.play("R1@0,0"), "re-roll all of them first")
    refused(g, lambda: g.pass_turn())
    while g.must_reroll:
        g.reroll()
    n = naive.largest_group(g.hand())
    assert n >= 2 and all(len(m.placements) == n for m in g.legal_moves())


def test_every_seat_passing_ends_the_game_without_bonus():
    g = qc.Game.from_position(board=DEAD, hands=[[0], [5, 1]], bag=[], scores=[7, 9], rules=CUBES)
    g.pass_turn()
    g.pass_turn()
    assert g.is_over and g.scores == (7, 9) and g.winner == 1


def test_a_swap_goes_on_while_a_colour_fits():
    block = BLUE_BLOCK  # seat 0 holds no blue cube, the bag does
    g = qc.Game.from_position(board=block, hands=[[0, 9, 35], [24]], bag=[4, 0, 4, 1], rules=CUBES, seed=5)
    assert naive.naive_cubes_stuck(block, [0, 9, 35]) and not naive.naive_cubes_stuck(block, [24])
    refused(g, g.pass_turn, "swap")
    g.exchange([0, 9, 35])
    assert not g.is_over and g.current_player == 1 and g.bag_size == 4 and len(g.hand(0)) == 3
    assert Counter(t // 6 for t in g.hand(0)) + Counter(g.position().bag) == Counter([0, 1, 5, 4, 0, 4, 1])


def test_going_out_scores_six_and_ends_the_game():
    g = qc.Game.from_position(board={(0, 0): 0}, hands=[[1], [2]], bag=[], scores=[0, 0], rules=CUBES)
    assert g.play("R2@0,1") == 2 and g.is_over and g.scores == (8, 0) and g.winner == 0


def test_draws_are_rolled_and_reproducible():
    a, b = opened(5), opened(5)
    assert a.to_json() == b.to_json()  # the same seed and actions: the same rolls
    c = a.copy()
    ma, mc = a.reroll(), c.reroll()
    assert ma == mc  # the same re-roll from the same position rolls the same faces
    a.undo()
    assert a.reroll() == ma  # undo rewinds the stream


def test_evaluate_and_endgame_refuse_cubes():
    g = opened()
    with pytest.raises(ValueError, match="Qwirkle Cubes"):
        qc.evaluate_moves(g, playouts=2)
    while g.bag_size:
        g.play_agent("greedy")
    with pytest.raises(ValueError, match="Qwirkle Cubes"):
        qc.solve_endgame(g)


# -- the state machine ----------------------------------------------------------------------


def stuck_position(g, rng):
    """``g`` set up again with the hands of some seats made of colours that fit nowhere on
    its board (they must swap or pass), or, when every colour fits somewhere, on the dead
    block (everyone must); the rest of the 90 cubes in the bag, or, one time in three, out
    of the game (an empty bag)."""
    board = g.board
    stuck = [k for k in range(6) if naive.naive_cubes_stuck(board, [6 * k])] if board else []
    real = bool(stuck)
    if not real:
        board, stuck = DEAD, list(range(6))
    used = Counter(t // 6 for t in board.values())
    hands = []
    for p in range(g.players):
        hand = list(g.hand(p)) if real else []
        if stuck and (not hand or rng.random() < 0.7):
            hand = [6 * rng.choice(stuck) + rng.randrange(6) for _ in range(rng.randint(1, 6))]
        if any(used[c] + n > 15 for c, n in Counter(t // 6 for t in hand).items()):
            hand = [t for t in hand if used[t // 6] < 15][:1] or [6 * min(range(6), key=lambda c: used[c])]
        used.update(t // 6 for t in hand)
        hands.append(hand)
    bag = [c for c in range(6) for _ in range(15 - used[c])] if rng.random() < 0.67 else []
    rng.shuffle(bag)
    return qc.Game.from_position(
        board=board, hands=hands, bag=bag, scores=list(g.scores), current_player=g.current_player, rules=g.rules
    )


class CubesMachine(RuleBasedStateMachine):
    """Random Qwirkle Cubes actions (re-rolls of any kind, placements, passes, agents'
    turns, refused actions), with invariants after every step."""

    @initialize(
        seed=st.integers(0, 2**64 - 1),
        players=st.integers(2, 4),
        warm=st.integers(0, 70),
        rseed=st.integers(0, 2**31 - 1),
    )
    def start(self, seed, players, warm, rseed):
        self.ended_by = None
        rng = random.Random(rseed)
        self.g = qc.Game(seed=seed, rules=cubes_rules(players))
        advance_cubes(self.g, warm, rng)
        if rng.random() < 0.3:  # not a sampled_from: hypothesis would favour the first choice
            self.g = stuck_position(self.g, rng)
        event("start: " + ("dealt" if self.g.is_dealt else "set up"))
        self.colours = cube_colours(self.g)  # all 90 cubes, 15 of each colour, in a dealt game
        self.prev_scores = self.g.scores

    @rule(data=st.data())
    def reroll(self, data):
        """A re-roll when one is legal (any cubes, or all when forced), checked; when it
        is not, refused, and the turn goes on (hypothesis would repeat the refusal)."""
        g = self.g
        if not g.can_reroll:
            refused(g, lambda: g.reroll(g.hand() or [0]))
            self.play(data)
            return
        self.checked_reroll(data)

    def checked_reroll(self, data):
        g = self.g
        hand = list(g.hand())
        tiles = (
            hand
            if g.must_reroll
            else data.draw(st.permutations(hand), label="order")[: data.draw(st.integers(1, len(hand)), label="k")]
        )
        twin = g.copy()
        before, position = Counter(hand), g.to_json()
        m = g.reroll(tiles)
        event("forced re-roll" if len(tiles) == len(hand) and twin.must_reroll else "re-roll")
        assert Counter(m.tiles) == Counter(tiles) and len(m.faces) == len(tiles)
        assert all(t // 6 == f // 6 for t, f in zip(m.tiles, m.faces))  # colours never change
        assert Counter(g.hand()) == before - Counter(tiles) + Counter(m.faces)
        assert twin.reroll(tiles) == m  # reproducible: the same stream rolls the same faces
        g.undo()
        assert g.to_json() == position
        assert g.reroll(tiles) == m

    @rule()
    def reroll_again(self):
        g = self.g
        if g.can_reroll and not g.must_reroll:
            g.reroll(g.hand()[:1])
        if g.is_over or g.must_reroll:
            return
        refused(g, lambda: g.reroll(g.hand()))

    @rule(data=st.data())
    def play(self, data):
        """A random placement (after the forced re-rolls, each checked), or refused."""
        g = self.g
        while g.must_reroll:
            self.checked_reroll(data)
        moves = g.legal_moves()
        if not moves:
            refused(g, lambda: g.play(qc.Move([(0, 0, 0)])))
            return
        m = data.draw(st.sampled_from(moves), label="move")
        p, bag, hand, scores = g.current_player, g.bag_size, g.hand(), g.scores
        expected = naive.naive_score(g.board, m.placements)
        assert g.play(m) == m.score == expected
        out = bag == 0 and len(m.placements) == len(hand)
        assert g.scores[p] == scores[p] + m.score + (6 if out else 0)
        assert len(g.hand(p)) == len(hand) - len(m) + min(len(m), bag)
        assert g.is_over == out
        if out:
            self.ended_by = "out"

    @rule()
    def pass_turn(self):
        g = self.g
        if g.is_over or g.bag_size or not naive.naive_cubes_stuck(g.board, g.hand()):
            refused(g, g.pass_turn)
            return
        g.pass_turn()
        event("pass")
        if g.is_over:
            assert g.passes == g.players
            self.ended_by = "passes"

    @rule(data=st.data())
    def swap(self, data):
        """Only a player none of whose colours fits anywhere swaps, as many cubes as the
        bag holds (all of them while it holds six)."""
        g = self.g
        hand = list(g.hand())
        k = min(len(hand), g.bag_size)
        order = data.draw(st.permutations(hand), label="order") if hand else [0]
        if g.is_over or not k or not naive.naive_cubes_stuck(g.board, hand):
            refused(g, lambda: g.exchange(order[: max(k, 1)]))
            return
        if k > 1:
            refused(g, lambda: g.exchange(order[: k - 1]))
        p, bag = g.current_player, g.bag_size
        g.exchange(order[:k])
        event("swap")
        assert g.bag_size == bag and len(g.hand(p)) == len(hand)
        if g.is_over:
            self.ended_by = "dead"
        else:
            assert g.current_player == (p + 1) % g.players

    @rule(agent=st.sampled_from(["random", "greedy", "heuristic", "mc:playouts=2:candidates=2:depth=2:policy=greedy"]))
    def agent_turn(self, agent):
        g = self.g
        if g.is_over:
            refused(g, lambda: g.play_agent(agent))
            return
        p, done = g.current_player, len(g.history)
        action = g.play_agent(agent)
        actions = g.history[done:]
        assert actions[-1] == action and action.move.kind is not qc.MoveKind.REROLL
        assert all(a.player == p and a.move.kind is qc.MoveKind.REROLL for a in actions[:-1])
        event(f"agent: {action.move.kind}")
        if g.is_over:
            self.ended_by = {qc.MoveKind.PLACE: "out", qc.MoveKind.PASS: "passes", qc.MoveKind.EXCHANGE: "dead"}[
                action.move.kind
            ]

    @invariant()
    def ninety_cubes(self):
        g = self.g
        assert cube_colours(g) == self.colours  # on the board, in the hands and in the bag
        if g.is_dealt:
            assert len(g.board) + sum(len(g.hand(p)) for p in range(g.players)) + g.bag_size == 90
            assert self.colours == Counter({c: 15 for c in range(6)})
            assert all(len(g.hand(p)) == 6 for p in range(g.players)) or g.bag_size == 0

    @invariant()
    def board_valid_and_scores_grow(self):
        g = self.g
        assert naive.board_is_valid(g.board)
        assert all(a <= b for a, b in zip(self.prev_scores, g.scores))
        self.prev_scores = g.scores

    @invariant()
    def the_end(self):
        g = self.g
        if g.is_over:
            best = max(g.scores)
            assert g.winner == (g.scores.index(best) if g.scores.count(best) == 1 else -1)
            assert self.ended_by in ("out", "passes", "dead")
            if self.ended_by == "out":
                assert g.bag_size == 0 and sum(len(g.hand(p)) == 0 for p in range(g.players)) == 1
            else:  # nobody can place: every hand stuck (and, after a swap, every colour in the bag too)
                assert all(naive.naive_cubes_stuck(g.board, g.hand(p)) for p in range(g.players))
                assert self.ended_by == "passes" or naive.naive_cubes_stuck(g.board, [6 * c for c in g.position().bag])
        else:
            assert self.ended_by is None and g.winner is None

    def teardown(self):
        """The record replays the game from its seed, every roll included."""
        g = getattr(self, "g", None)
        if g is None:
            return
        event(f"ended: {self.ended_by}")
        record = qc.GameRecord.from_json(qc.GameRecord.from_game(g).to_json())
        assert replayed_state(qc.replay(record)) == replayed_state(g)


CubesMachine.TestCase.settings = settings(
    max_examples=int(settings.default.max_examples * 0.75), stateful_step_count=40, deadline=None
)
test_cubes_machine = pytest.mark.slow(CubesMachine.TestCase)


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_full_games(players):
    """Whole games through the public API, random choices; every roll's colours and
    the end checked."""
    for seed in range(2):
        rng = random.Random(100 * players + seed)
        g = qc.Game(seed=seed, players=players, rules=cubes_rules(players))
        while not g.is_over:
            assert cube_colours(g) == Counter({c: 15 for c in range(6)})
            if g.can_reroll and not g.must_reroll and rng.random() < 0.3:
                m = g.reroll(rng.sample(g.hand(), rng.randint(1, len(g.hand()))))
                assert [t // 6 for t in m.tiles] == [f // 6 for f in m.faces]
            while g.must_reroll:
                g.reroll()
            moves = g.legal_moves()
            if moves:
                g.play(rng.choice(moves) if rng.random() < 0.5 else max(moves, key=len))
            elif g.bag_size:
                assert naive.naive_cubes_stuck(g.board, g.hand())
                g.exchange(g.hand()[: g.bag_size])
            else:
                assert naive.naive_cubes_stuck(g.board, g.hand())
                g.pass_turn()
        out = [p for p in range(players) if not g.hand(p)]
        stuck = all(naive.naive_cubes_stuck(g.board, g.hand(p)) for p in range(players))
        assert (g.bag_size == 0 and len(out) == 1) or (
            stuck and (g.passes == players or naive.naive_cubes_stuck(g.board, [6 * c for c in g.position().bag]))
        )
        assert (
            naive.board_is_valid(g.board)
            and len(g.board) + sum(map(len, (g.hand(p) for p in range(players)))) + g.bag_size == 90
        )


# -- agents and batches -----------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["greedy", "heuristic", "mc:playouts=2:candidates=3:depth=3"])
def test_agents_keep_their_placement_and_reroll_the_rest(agent):
    """Greedy, the heuristic and mc keep the cubes of a best-scoring placement and
    re-roll the others; a re-roll is followed by a placement (or forced re-rolls of
    every cube)."""
    g = qc.Game(seed=11, rules=CUBES)
    checked = 0
    while not g.is_over and g.turn < 30:
        before = g.copy()
        done = len(g.history)
        g.play_agent(agent)
        first = g.history[done]
        moves = before.legal_moves()
        if first.move.kind is qc.MoveKind.REROLL and moves:
            kept = Counter(before.hand()) - Counter(first.move.tiles)
            keep = [m for m in moves if Counter(m.tiles) == kept]
            assert keep, (before.hand(), first.move)
            assert max(m.score for m in keep) == max(m.score for m in moves)
            checked += 1
        elif first.move.kind is qc.MoveKind.PLACE:  # a best placement uses every cube
            assert any(len(m) == len(before.hand()) and m.score == max(x.score for x in moves) for m in moves)
            assert agent != "greedy" or len(first.move) == len(before.hand())
        for a in g.history[done + 1 : -1]:  # after the free re-roll: only forced ones, of every cube
            assert a.move.kind is qc.MoveKind.REROLL and len(a.move.tiles) == len(before.hand())
    assert checked >= 5


def test_random_agent_rerolls_random_subsets():
    g = qc.Game(seed=2, rules=CUBES)
    sizes = Counter()
    for _ in range(20):
        done = len(g.history)
        g.play_agent("random")
        if g.history[done].move.kind is qc.MoveKind.REROLL:
            sizes[len(g.history[done].move.tiles)] += 1
    assert len(sizes) >= 3


@pytest.fixture(scope="module")
def batch():
    return qc.simulate(120, ("greedy", "heuristic", "random"), seed=5, threads=1, rules=cubes_rules(3))


def test_batch_is_the_same_at_any_thread_count(batch):
    other = qc.simulate(120, ("greedy", "heuristic", "random"), seed=5, threads=2, rules=cubes_rules(3))
    assert_same_rows(batch.rows, other.rows)
    parts = [
        qc.simulate(n, ("greedy", "heuristic", "random"), seed=5, start=s, threads=2, rules=cubes_rules(3))
        for s, n in ((0, 50), (50, 70))
    ]
    assert_same_rows(qc.GameRows.concat([p.rows for p in parts]), batch.rows)


def test_greedy_batch_is_the_same_at_any_thread_count():
    """The million-game configuration (greedy self-play, two players), in small."""
    one = qc.simulate(2000, ("greedy", "greedy"), seed=2026, threads=1, rules=CUBES)
    two = qc.simulate(2000, ("greedy", "greedy"), seed=2026, threads=2, rules=CUBES)
    assert_same_rows(one.rows, two.rows)
    assert len(set(one.scores[:, 0].tolist())) > 50 and (one.tiles_placed > 60).mean() > 0.9  # real, varied games


def test_mc_batch_is_the_same_at_any_thread_count():
    agents = ("mc:playouts=3:candidates=2:depth=4", "greedy")
    a = qc.simulate(6, agents, seed=9, threads=1, rules=CUBES)
    b = qc.simulate(6, agents, seed=9, threads=2, rules=CUBES)
    assert_same_rows(a.rows, b.rows)


def test_the_search_agent_and_analyse_refuse_cubes(capsys, tmp_path):
    """The search agent and analyse are the tile game's (solver and playouts without
    re-rolls): under Cubes rules they are refused up front, changing nothing, and the
    command line says so in one line with exit status 2. The tile game still takes them."""
    g = qc.Game(2, seed=3, rules=CUBES)
    before = g.position()
    for call in (
        lambda: qc.simulate(2, ("greedy", "search"), seed=1, rules=CUBES),
        lambda: g.play_agent("search:time_ms=1"),
        lambda: qc.tournament(("search", "greedy"), games=2, rules=CUBES),
    ):
        with pytest.raises(qc.AgentError, match="search agent plays the tile game only"):
            call()
    assert g.position() == before and not g.history
    record = qc.play_game(("greedy", "greedy"), seed=1, rules=CUBES)
    with pytest.raises(ValueError, match="Qwirkle Cubes record is refused"):
        qc.analyse(record)
    path = tmp_path / "cubes.json"
    path.write_text(record.to_json())
    from qwirkle_core import cli

    capsys.readouterr()
    for argv in (
        ["simulate", "--variant", "cubes", "--agents", "search,greedy", "--games", "2", "--no-progress"],
        ["tournament", "--variant", "cubes", "--agents", "greedy,search", "--games", "2", "--no-progress"],
        ["play", "--variant", "cubes", "--opponent", "search"],
        ["analyse", str(path)],
    ):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and (
            "search agent plays the tile game only" in err or "analyse judges tile games only" in err
        )
    assert qc.Game(2, seed=3).play_agent("search:time_ms=1").player == 0


def test_compile_seconds_knows_the_cubes_kernel(tmp_path):
    """The command line's compile message looks at the Cubes batch kernel for Cubes
    batches: loaded (0) once a batch has run, a rough figure with an empty cache."""
    qc.simulate(2, ("greedy", "greedy"), seed=1, threads=1, rules=CUBES)
    assert compile_seconds(("greedy", "greedy"), CUBES) == 0.0
    code = "import qwirkle_core as qc; from qwirkle_core.batch.local import compile_seconds; print(compile_seconds(('mc', 'greedy'), qc.Rules(variant='cubes')), compile_seconds(('greedy', 'greedy')))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert float(out[0]) >= 30 and float(out[1]) > 0  # nothing compiled there: both cold


@pytest.mark.parametrize("i", [0, 7, 119])
def test_batch_game_replays_move_by_move(batch, i):
    record = qc.play_game(("greedy", "heuristic", "random"), seed=int(batch.seeds[i]), rules=cubes_rules(3))
    assert tuple(record.final_scores) == tuple(batch.scores[i]) and record.winner == batch.winner[i]
    g = qc.replay(qc.GameRecord.from_json(record.to_json()))
    assert g.turn == batch.turns[i] and len(g.board) == batch.tiles_placed[i]
    assert any(a.move.kind is qc.MoveKind.REROLL for a in record.actions)


def test_batch_rows(batch):
    assert (batch.starter == 0).all() and not batch.truncated.any()
    assert (batch.tiles_placed <= 90).all() and batch.rules.cubes
    best = batch.scores.max(axis=1)
    unique = (batch.scores == best[:, None]).sum(axis=1) == 1
    np.testing.assert_array_equal(batch.winner, np.where(unique, batch.scores.argmax(axis=1), -1))


def test_tournament_of_cubes():
    t = qc.tournament(["greedy", "random"], games=4, seed=1, timing_games=1, timing_seconds=0, rules=CUBES)
    a = qc.simulate(2, ("greedy", "random"), seed=1, rules=CUBES)
    assert t.matches[0].scores_first[:2].tolist() == a.scores[:, 0].tolist()
    with pytest.raises(ValueError, match="disagrees"):
        qc.tournament(["greedy", "random"], games=2, rules=cubes_rules(3))


# -- records, positions, observations --------------------------------------------------------


def test_reroll_notation():
    m = qc.Move.parse("r b4 R1 -> b6 R3")
    assert m == qc.Move.reroll([27, 0], [29, 2]) and str(m) == "r R1 B4 -> R3 B6"
    assert m.faces == (2, 29) and qc.Move.parse(str(m)) == m
    assert str(qc.Move.parse("reroll R1 R1")) == "r R1 R1" and qc.Move.parse("r R1").faces == ()
    assert qc.Move.parse("r R1 R1 -> R5 R3") == qc.Move.parse("r R1 R1 -> R3 R5")  # identical cubes
    for text, message in (
        ("r", "1 to 6 cubes"),
        ("r R1 -> B1", "colour"),
        ("r R1 R2 -> R3", "2 faces"),
        ("r R9", "shape digit"),
    ):
        with pytest.raises(ValueError, match=message):
            qc.Move.parse(text)


def test_record_round_trip_and_replay_checks_the_faces():
    record = qc.play_game(("greedy", "heuristic"), seed=4, rules=CUBES)
    data = json.loads(record.to_json())
    assert data["rules"] == {"players": 2, "opening": "largest_group", "variant": "cubes"}
    i, a = next((i, a) for i, a in enumerate(data["actions"]) if a["move"].startswith("r "))
    assert qc.replay(qc.GameRecord.from_dict(data)).scores == tuple(record.final_scores)
    tiles, faces = a["move"][2:].split(" -> ")
    first = faces.split()[0]
    other = first[0] + str(int(first[1]) % 6 + 1)
    a["move"] = f"r {tiles} -> {' '.join([other, *faces.split()[1:]])}"
    with pytest.raises(qc.RecordError, match=f"action {i} .*the seed rolls") as e:
        qc.replay(qc.GameRecord.from_dict(data))
    assert e.value.action == i


def test_position_round_trip_plays_on_identically():
    g = opened(6)
    g.reroll(g.hand()[:3])
    data = g.to_dict()
    assert data["rerolled"] is True and all(len(c) == 1 and c in "ROYGBP" for c in data["bag"])
    h = qc.Game.from_json(g.to_json())
    assert h.to_json() == g.to_json() and h.can_reroll == g.can_reroll
    for _ in range(6):
        if g.is_over:
            break
        assert g.play_agent("heuristic") == h.play_agent("heuristic")
    assert g.to_json() == h.to_json()
    classic = qc.Game(seed=1).to_dict()
    assert "rerolled" not in classic and "variant" not in classic["rules"]


def test_position_supply_is_checked():
    with pytest.raises(ValueError, match="more than 15 cubes of a colour"):
        qc.Game.from_position(board={}, hands=[[0] * 6, [1] * 6], bag=[0] * 4, rules=CUBES)
    g = qc.Game.from_position(board={}, hands=[[0] * 6, [1] * 6], bag=[0] * 3 + ["blue"], rules=CUBES)
    assert g.position().bag == (0, 0, 0, 4) and max(Counter(g.hand()).values()) == 6


def test_observation_has_open_hands():
    g = opened(8)
    obs = g.observation(1)
    assert obs.hands == tuple(g.hand(p) for p in range(2)) and obs.unseen is None
    assert sum(obs.bag_colors) == g.bag_size and obs.bag_colors == tuple(Counter(g.position().bag)[c] for c in range(6))
    text = obs.to_json()
    assert qc.Observation.from_json(text) == obs
    for hidden in ('"rng"', '"seed"', '"bag":'):
        assert hidden not in text
    with pytest.raises(qc.FormatError, match="bag_colors"):
        qc.Observation.from_dict({**json.loads(text), "bag_colors": [0] * 6})


def test_determinize_keeps_hands_and_resamples_bag_and_rolls():
    g = opened(9)
    d = g.determinize(seed=3)
    assert [d.hand(p) for p in range(2)] == [g.hand(p) for p in range(2)]
    assert sorted(d.position().bag) == sorted(g.position().bag) and d.position().bag != g.position().bag
    assert d.position().rng[0] != g.position().rng[0] and d.position().rng[1] == g.position().rng[1]


def test_schemas_accept_cubes_documents():
    jsonschema = pytest.importorskip("jsonschema")
    from pathlib import Path

    from referencing import Registry, Resource

    docs = Path(__file__).resolve().parent.parent / "docs"
    position = json.loads((docs / "position.schema.json").read_text())
    record = json.loads((docs / "record.schema.json").read_text())
    registry = Registry().with_resource(position["$id"], Resource.from_contents(position))
    g = opened(10)
    g.reroll()
    jsonschema.Draft202012Validator(position, registry=registry).validate(g.to_dict())
    jsonschema.Draft202012Validator(record, registry=registry).validate(qc.GameRecord.from_game(g).to_dict())
    bad = g.to_dict()
    bad["bag"] = ["R1"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(position, registry=registry).validate(bad)
