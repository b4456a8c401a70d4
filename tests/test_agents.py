"""Observation, determinization, Monte Carlo evaluation and the stronger agents."""

from collections import Counter
from math import comb

import numpy as np
import pytest

import naive
import qwirkle_core as qc
from qwirkle_core._kernels import layout as _lo
from qwirkle_core._kernels import policies as _po

R = {name: qc.tile("red", name) for name in qc.SHAPES}


def mid_game(seed=4, turns=14):
    g = qc.Game(seed=seed)
    for _ in range(turns):
        g.play_agent("greedy")
    return g


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
    hidden = Counter(d._bag[: d.bag_size].tolist())
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


def test_determinized_game_plays_on():
    g = mid_game().determinize(seed=9)
    while not g.is_over:
        g.play_agent("greedy")
    assert max(g.scores) > 50


def test_evaluate_moves_reproducible_and_thread_independent():
    g = mid_game()
    a = g.evaluate_moves(playouts=12, seed=5, top=5, threads=1)
    b = g.evaluate_moves(playouts=12, seed=5, top=5, threads=2)
    c = g.evaluate_moves(playouts=12, seed=6, top=5, threads=1)
    assert [(e.move, e.margin, e.win_rate) for e in a] == [(e.move, e.margin, e.win_rate) for e in b]
    assert [e.margin for e in a] != [e.margin for e in c]
    assert len(a) == 6 and a[-1].margin <= a[0].margin  # 5 placements + the exchange, best first
    assert all(0 <= e.win_rate <= 1 and e.playouts == 12 for e in a)
    assert g.turn == 14  # the game itself is untouched


def test_evaluate_moves_ranks_a_qwirkle_first():
    # Red circle..cross on the board; both players hold a red star and the bag is empty,
    # so whoever places it first scores the Qwirkle. The alternative scores 4.
    board = {(0, c): R[s] for c, s in enumerate(qc.SHAPES[:5])}
    board[(1, 0)] = qc.tile("blue", "circle")
    mine = [R["star"], qc.tile("blue", "square"), qc.tile("green", "star")]
    theirs = [R["star"], qc.tile("green", "clover"), qc.tile("yellow", "star")]
    g = qc.Game.from_position(board=board, hands=[mine, theirs], bag=[], seed=1)
    ranked = g.evaluate_moves(playouts=30, seed=2)
    completes = [any(p in e.move.placements for p in ((0, 5, R["star"]), (0, -1, R["star"]))) for e in ranked]
    assert completes[0] and ranked[0].win_rate > 0.9
    best_other = max(e.margin for e, c in zip(ranked, completes) if not c)
    assert ranked[0].margin > best_other + 10


def test_evaluate_moves_rejects_bad_input():
    g = mid_game()
    with pytest.raises(ValueError):
        g.evaluate_moves(playouts=1)
    with pytest.raises(ValueError):
        g.evaluate_moves(policy="mc")
    with pytest.raises(qc.IllegalMoveError):
        g.evaluate_moves(moves=[qc.Move([(50, 50, 0)])])


@pytest.mark.parametrize("agents", [("heuristic", "greedy"), ("mc:playouts=3:candidates=3:depth=2", "random")])
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


def test_heuristic_with_zero_weights_is_greedy():
    plain = qc.simulate(60, agents=("greedy", "greedy"), seed=3, threads=1)
    zero = qc.simulate(60, agents=("heuristic:group=0:dup=0:danger=0:setup=0:reply=0:follow=0", "greedy"), seed=3, threads=1)
    np.testing.assert_array_equal(plain.scores, zero.scores)


def test_agent_parameters_are_checked():
    with pytest.raises(ValueError, match="unknown parameter"):
        qc.simulate(2, agents=("heuristic:boldness=2", "greedy"))
    with pytest.raises(ValueError, match="key=number"):
        qc.simulate(2, agents=("mc:playouts", "greedy"))


def test_tournament_swaps_seats_on_the_same_deals():
    from qwirkle_core.tournament import tournament

    t = tournament(["greedy", "random"], games=40, seed=1, timing_games=4, timing_seconds=0)
    (m,) = t.matches
    assert m.games == 40 and m.wins > 35
    assert m.margin.mean() == pytest.approx((m.scores_first - m.scores_second).mean())
    assert set(t.seconds_per_move) == {"greedy", "random"} and all(s > 0 for s in t.seconds_per_move.values())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_undoable_placement_is_taken_back_exactly(seed):
    from qwirkle_core._kernels import board as bd

    g = mid_game(seed=seed, turns=10 + 7 * seed)
    def state():  # anchor slots past the count are scratch
        return [g._board.copy(), g._cross.copy(), g._anchors[: g._bmeta[bd.B_ANCHORS]].copy(), g._bmeta.copy()]

    before = state()
    undo = bd.new_undo()
    moves = g.legal_moves()
    assert moves
    for m in moves[:25]:
        cells = np.array([bd.cell_of(r, c) for r, c, _ in m.placements], np.int64)
        tiles = np.array(m.tiles, np.int64)
        bd.place_cells_undoable(g._board, g._cross, g._anchors, g._bmeta, cells, tiles, len(tiles), undo)
        assert all(g._board[c] == t for c, t in zip(cells, tiles))
        bd.take_back(g._board, g._cross, g._anchors, g._bmeta, cells, len(tiles), undo)
        for a, b in zip(before, state()):
            np.testing.assert_array_equal(a, b)
    assert set(g.legal_moves()) == set(moves)


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
            return any(naive.naive_is_valid_line([{**after, e: t}[x] for x in naive.run_through({**after, e: t}, e, (dc, dr))]) for e in ends)

        fitting = [t for t in missing if fits_an_end(t)]
        if fitting and len(fitting) == len(missing):
            r = float(np.prod([p_other(t) for t in missing]))
            risk += r
            promise += (1 - r) if all(leave[t] for t in missing) else 0.0
    # the best single-tile score of a leave tile on the board before the move
    follow = max((max(naive.naive_legal_placements(board, [t]).values(), default=0) for t in +leave), default=0)
    value = move.score - w["danger"] * risk + w["setup"] * promise + w["follow"] * follow
    if g.bag_size > 0:
        value -= w["dup"] * (sum(leave.values()) - len(+leave))
        value += w["group"] * naive.largest_group(+leave)
    return value


@pytest.mark.parametrize("seed,turns", [(1, 10), (2, 24), (5, 33), (8, 40), (9, 47)])
def test_heuristic_values_match_the_reference(seed, turns):
    g = qc.Game(seed=seed)
    while g.turn < turns and not g.is_over:
        g.play_agent("greedy")
    weights = dict({p.name: p.default for p in _lo.AGENT_PARAMS[_lo.HEURISTIC]}, group=0.5)
    moves = g.legal_moves()
    values = np.zeros(len(moves))
    spec = _lo.make_spec(_lo.HEURISTIC, **weights)
    _po.heuristic_values(g._kernel_state(), g._moves, len(moves), spec, values)
    expected = [reference_heuristic(g, m, weights) for m in moves]
    assert len(moves) > 5
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-9)
