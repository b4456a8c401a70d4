"""The built-in agents' play (kernels through Game.play_agent and simulate): only legal
moves, greedy's best move, uniform random choices, the heuristic's values against a
reference written from docs/agents.md, and the undoable placement its reply search uses."""

from __future__ import annotations

import math
from collections import Counter
from math import comb

import numpy as np
import pytest

import naive
import qwirkle_core as qc
from qwirkle_core._kernels import board as bd
from qwirkle_core._kernels import layout
from qwirkle_core._kernels.policies import heuristic_values
from qwirkle_core.game.agents import agent_params
from strategies import finished_game, mid_game, snapshot


@pytest.mark.parametrize(
    "agents",
    [
        ("heuristic", "greedy"),
        ("mc:playouts=3:candidates=3:depth=2", "random"),
        ("heuristic:horizon=30:samples=2", "mc:playouts=2:policy=greedy"),
    ],
)
def test_agents_only_play_legal_moves(agents):
    record = qc.play_game(agents, seed=21)
    g = qc.Game(seed=21)
    for action in record.actions:
        if action.move.kind == "place":
            legal = {m: m.score for m in g.legal_moves()}
            assert legal.get(action.move) == action.points
        else:
            assert g.legal_moves() == [] or action.move.kind == "exchange"
        g.play(action.move)
    assert g.scores == tuple(record.final_scores)


def test_greedy_always_plays_a_best_move():
    record = qc.play_game(("greedy", "greedy"), seed=11)
    g = qc.Game(seed=11)
    checked = 0
    for action in record.actions:
        if action.move.kind == "place":
            best = max(m.score for m in g.legal_moves())
            assert action.points == best
            checked += 1
        else:
            assert g.legal_moves() == []
        g.play(action.move)
    assert checked > 20


def test_greedy_exchanges_whole_hand_when_stuck():
    # A single red circle on the board and a hand with no red and no circle: nothing fits.
    hand = [qc.tile("blue", "square")] * 2 + [qc.tile("green", "star")] * 2 + [qc.tile("yellow", "cross")] * 2
    g = qc.Game.from_position(
        board={(0, 0): qc.tile("red", "circle")}, hands=[hand, [1]], bag=list(range(10, 20)), seed=3
    )
    assert g.legal_moves() == []
    action = g.play_agent("greedy")
    assert action.move.kind == "exchange" and sorted(action.move.tiles) == sorted(hand)
    assert g.bag_size == 10 and g.current_player == 1


def test_random_agent_is_uniform_over_legal_moves():
    # A small position: a red circle, a hand of two reds, a blue circle and a green star.
    board = {(0, 0): qc.tile("red", "circle")}
    hand = [qc.tile("red", "square"), qc.tile("red", "diamond"), qc.tile("blue", "circle"), qc.tile("green", "star")]
    g0 = qc.Game.from_position(board=board, hands=[hand, [0]], bag=[5, 6, 7, 8], seed=0)
    legal = g0.legal_moves()
    k = len(legal)
    assert 10 <= k <= 60
    counts = {m: 0 for m in legal}
    samples = 60 * k
    for s in range(samples):
        g = g0.copy()
        g.kernel_arrays().rng[1] = np.uint64(s * 0x9E3779B97F4A7C15 % 2**64)  # a fresh agents' stream
        counts[g.play_agent("random").move] += 1
    assert len(counts) == k and min(counts.values()) > 0
    expected = samples / k
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    # 99.9% quantile of chi-square with k-1 dof, Wilson-Hilferty approximation.
    df = k - 1
    limit = df * (1 - 2 / (9 * df) + 3.09 * math.sqrt(2 / (9 * df))) ** 3
    assert chi2 < limit


def test_heuristic_with_zero_weights_is_greedy():
    plain = qc.simulate(60, agents=("greedy", "greedy"), seed=3, threads=1)
    zero = qc.simulate(
        60, agents=("heuristic:group=0:dup=0:danger=0:setup=0:reply=0:follow=0", "greedy"), seed=3, threads=1
    )
    np.testing.assert_array_equal(plain.scores, zero.scores)


def test_the_agent_forms_play_alike():
    spec = qc.parse_agent("mc:playouts=4:candidates=3")
    actions = []
    for form in ("mc:playouts=4:candidates=3", spec, spec.row(), ("mc", {"playouts": 4, "candidates": 3})):
        g = mid_game(seed=8, turns=6)
        actions.append(g.play_agent(form))
    assert all(a == actions[0] for a in actions)


def test_play_agent_refuses_and_changes_nothing():
    g = finished_game(4)
    with pytest.raises(qc.IllegalMoveError, match="the game is over"):
        g.play_agent("greedy")
    g = mid_game(seed=2, turns=3)
    before = snapshot(g)
    for bad in ("wizard", "mc:playouts=0", np.zeros(3), 5, None):
        with pytest.raises(qc.AgentError):
            g.play_agent(bad)
    assert snapshot(g) == before


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_undoable_placement_is_taken_back_exactly(seed):
    g = mid_game(seed=seed, turns=10 + 7 * seed)
    a = g.kernel_arrays()

    def state():  # anchor slots past the count are scratch
        return [a.board.copy(), a.cross.copy(), a.anchors[: a.bmeta[layout.B_ANCHORS]].copy(), a.bmeta.copy()]

    before = state()
    undo = bd.new_undo_stack(1)
    moves = g.legal_moves()
    assert moves
    for m in moves[:25]:
        cells = np.array([bd.cell_of(r, c) for r, c, _ in m.placements], np.int64)
        tiles = np.array(m.tiles, np.int64)
        bd.place_in_slot(a.board, a.cross, a.anchors, a.bmeta, cells, tiles, len(tiles), *undo, 0)
        assert all(a.board[c] == t for c, t in zip(cells, tiles))
        bd.take_back_slot(a.board, a.cross, a.anchors, a.bmeta, cells, len(tiles), *undo, 0)
        for x, y in zip(before, state()):
            np.testing.assert_array_equal(x, y)
    assert set(g.legal_moves()) == set(moves)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stacked_placements_match_plain_ones_and_are_taken_back_exactly(seed):
    """place_in_slot over several turns leaves the board as place_cells does; taking the
    slots back in reverse restores every array of the start."""
    g = mid_game(seed=seed, turns=6 + 5 * seed)
    a, plain = g.kernel_arrays(), g.copy().kernel_arrays()

    def state(x):  # anchor slots past the count are scratch
        return [x.board.copy(), x.cross.copy(), x.anchors[: x.bmeta[layout.B_ANCHORS]].copy(), x.bmeta.copy()]

    before = state(a)
    stack = bd.new_undo_stack(8)
    h = g.copy()
    played = []
    while len(played) < 8 and not h.is_over:
        moves = h.legal_moves()
        if not moves:
            break
        m = max(moves, key=lambda mv: (mv.score or 0, str(mv)))
        cells = np.array([bd.cell_of(r, c) for r, c, _ in m.placements], np.int64)
        tiles = np.array(m.tiles, np.int64)
        bd.place_in_slot(a.board, a.cross, a.anchors, a.bmeta, cells, tiles, len(tiles), *stack, len(played))
        bd.place_cells(plain.board, plain.cross, plain.anchors, plain.bmeta, cells, tiles, len(tiles))
        for x, y in zip(state(plain), state(a)):
            np.testing.assert_array_equal(x, y)
        played.append(cells)
        h.play(m)
    assert len(played) >= 3
    for slot in range(len(played) - 1, -1, -1):
        bd.take_back_slot(a.board, a.cross, a.anchors, a.bmeta, played[slot], len(played[slot]), *stack, slot)
    for x, y in zip(before, state(a)):
        np.testing.assert_array_equal(x, y)


def reference_heuristic(g, move, w):
    """The heuristic value of ``move`` from the rule text and docs/agents.md (two players)."""
    board, player = g.board, g.current_player
    leave = Counter(g.hand()) - Counter(move.tiles)
    unseen = Counter({t: 3 for t in range(36)}) - Counter(board.values()) - Counter(g.hand())
    total, other_hand = sum(unseen.values()), len(g.hand(1 - player))

    def p_other(t):  # the next player holds at least one copy of t
        return 1 - comb(total - unseen[t], other_hand) / comb(total, other_hand)

    after = dict(board)
    after.update({(r, c): t for r, c, t in move.placements})
    lines = {tuple(naive.run_through(after, (r, c), d)) for r, c, _ in move.placements for d in naive.DIRECTIONS}
    risk = promise = 0.0
    for line in lines:
        if len(line) not in (4, 5):
            continue
        tiles = [after[x] for x in line]
        missing = [t for t in range(36) if naive.naive_is_valid_line(tiles + [t])]
        dr, dc = line[1][0] - line[0][0], line[1][1] - line[0][1]
        ends = [(line[0][0] - dr, line[0][1] - dc), (line[-1][0] + dr, line[-1][1] + dc)]

        def fits_an_end(t):  # across the line, on the board as it is
            return any(
                naive.naive_is_valid_line([{**after, e: t}[x] for x in naive.run_through({**after, e: t}, e, (dc, dr))])
                for e in ends
            )

        fitting = [t for t in missing if fits_an_end(t)]
        if fitting and len(fitting) == len(missing):
            r = float(np.prod([p_other(t) for t in missing]))
            risk += r
            promise += (1 - r) if all(leave[t] for t in missing) else 0.0
    # the best single-tile score of a leave tile on the board before the move
    follow = max((max(naive.naive_legal_placements(board, [t]).values(), default=0) for t in +leave), default=0)
    # distinct leave tiles that fit somewhere on the board before the move
    fits = sum(1 for t in +leave if naive.naive_legal_placements(board, [t]))
    value = (
        move.score
        + w["cycle"] * len(move.tiles)
        - w["danger"] * risk
        + w["setup"] * promise
        + w["follow"] * follow
        + w["fits"] * fits
    )
    if g.bag_size > 0:
        value -= w["dup"] * (sum(leave.values()) - len(+leave))
        value += w["group"] * naive.largest_group(+leave)
    elif not leave:  # the whole hand with the bag empty: it goes out
        value += w["out"]
    return value


def move_buffer(moves):
    """The kernels' move rows (layout.M_*) of ``moves``, tiles in order along the line."""
    buf = np.zeros((len(moves), layout.MOVE_COLS), np.int32)
    for i, m in enumerate(moves):
        buf[i, layout.M_N] = len(m.placements)
        buf[i, layout.M_SCORE] = m.score
        for j, (r, c, t) in enumerate(m.placements):
            buf[i, layout.M_CELL + j] = bd.cell_of(r, c)
            buf[i, layout.M_TILE + j] = t
    return buf


@pytest.mark.parametrize(
    "seed,turns,extra",
    [  # the first by default, all with -m slow
        pytest.param(*case, marks=[pytest.mark.slow] if k else [])
        for k, case in enumerate(
            [
                (1, 10, {}),
                (2, 24, {"cycle": 1.0, "fits": 0.25}),
                (5, 33, {}),
                (8, 40, {"cycle": -0.5, "fits": 2.0}),
                (9, 47, {}),
                (10, 48, {"out": 6.0}),
                (39, 45, {"out": -3.0, "cycle": 1.0}),
            ]
        )
    ],
)
def test_heuristic_values_match_the_reference(seed, turns, extra):
    g = qc.Game(seed=seed)
    while g.turn < turns and not g.is_over:
        g.play_agent("greedy")
    weights = {p.name: p.default for p in agent_params("heuristic")}
    weights["group"] = 0.5
    weights.update(extra)
    spec = qc.parse_agent(("heuristic", weights)).row()
    moves = g.legal_moves()
    values = np.zeros(len(moves))
    heuristic_values(g.kernel_arrays(), move_buffer(moves), len(moves), spec, values)
    expected = [reference_heuristic(g, m, weights) for m in moves]
    assert len(moves) > 5
    if "out" in extra:  # the position has placements that go out and others
        assert g.bag_size == 0 and 0 < sum(len(m.tiles) == len(g.hand()) for m in moves) < len(moves)
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-9)
