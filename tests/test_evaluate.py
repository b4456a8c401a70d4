"""evaluate.py: flat Monte Carlo evaluation of the moves of a position."""

from __future__ import annotations

import pytest

import qwirkle_core as qc
from strategies import finished_game, mid_game, snapshot

R = {name: qc.tile("red", name) for name in qc.SHAPES}


def test_evaluate_moves_reproducible_and_thread_independent():
    g = mid_game()
    before = snapshot(g)
    a = qc.evaluate_moves(g, playouts=12, seed=5, top=5, threads=1)
    b = qc.evaluate_moves(g, playouts=12, seed=5, top=5, threads=2)
    c = qc.evaluate_moves(g, playouts=12, seed=6, top=5, threads=1)
    assert [(e.move, e.margin, e.win_rate) for e in a] == [(e.move, e.margin, e.win_rate) for e in b]
    assert [e.margin for e in a] != [e.margin for e in c]
    assert len(a) == 6 and a[-1].margin <= a[0].margin  # 5 placements + the exchange, best first
    assert [e.margin for e in a] == sorted((e.margin for e in a), reverse=True)
    assert sum(e.move.kind == "exchange" for e in a) == 1
    assert all(0 <= e.win_rate <= 1 and e.playouts == 12 and e.margin_se > 0 for e in a)
    assert g.turn == 14 and snapshot(g) == before  # the game itself is untouched


def test_evaluate_moves_ranks_a_qwirkle_first():
    # Red circle..cross on the board; both players hold a red star and the bag is empty,
    # so whoever places it first scores the Qwirkle. The alternative scores 4.
    board = {(0, c): R[s] for c, s in enumerate(qc.SHAPES[:5])}
    board[(1, 0)] = qc.tile("blue", "circle")
    mine = [R["star"], qc.tile("blue", "square"), qc.tile("green", "star")]
    theirs = [R["star"], qc.tile("green", "clover"), qc.tile("yellow", "star")]
    g = qc.Game.from_position(board=board, hands=[mine, theirs], bag=[], seed=1)
    ranked = qc.evaluate_moves(g, playouts=30, seed=2)
    completes = [any(p in e.move.placements for p in ((0, 5, R["star"]), (0, -1, R["star"]))) for e in ranked]
    assert completes[0] and ranked[0].win_rate > 0.9
    best_other = max(e.margin for e, c in zip(ranked, completes) if not c)
    assert ranked[0].margin > best_other + 10
    assert len(ranked) == len(g.legal_moves())  # no exchange with an empty bag


def test_given_candidates_as_moves_or_text():
    g = mid_game(seed=3)
    best = max(g.legal_moves(), key=lambda m: m.score)
    swap = "x " + " ".join(qc.tile_code(t) for t in g.hand()[:2])
    out = qc.evaluate_moves(g, playouts=6, seed=1, moves=[best, str(best), swap])
    assert sorted(str(e.move) for e in out) == sorted([str(best), str(best), str(qc.Move.parse(swap))])
    assert qc.evaluate_moves(g, moves=[]) == []
    short = qc.evaluate_moves(g, playouts=6, seed=1, moves=[best], depth=1)
    assert short[0].move == best and short[0].playouts == 6


def test_evaluate_moves_rejects_bad_input():
    g = mid_game()
    before = snapshot(g)
    for kwargs, error in [
        ({"playouts": 1}, ValueError),
        ({"playouts": 1_000_001}, ValueError),
        ({"playouts": 2.0}, TypeError),
        ({"policy": "mc"}, qc.AgentError),
        ({"policy": "wizard"}, qc.AgentError),
        ({"top": 0}, ValueError),
        ({"depth": -1}, ValueError),
        ({"seed": -1}, ValueError),
        ({"seed": 0.5}, TypeError),
        ({"threads": 0}, ValueError),
        ({"moves": [qc.Move([(50, 50, 0)])]}, qc.IllegalMoveError),
        ({"moves": ["pass"]}, ValueError),
        ({"moves": ["R1@0"]}, ValueError),
        ({"moves": [qc.Move.exchange([g.hand()[0]] * 4)]}, qc.IllegalMoveError),
    ]:
        with pytest.raises(error):
            qc.evaluate_moves(g, **kwargs)
    assert snapshot(g) == before
    with pytest.raises(TypeError, match="takes a Game"):
        qc.evaluate_moves(g.to_json())
    with pytest.raises(qc.IllegalMoveError, match="the game is over"):
        qc.evaluate_moves(finished_game(3))
