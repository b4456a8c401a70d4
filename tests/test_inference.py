"""The search's inference of the last mover's kept tiles (``search:infer``): the last
placement the game remembers, the deals that keep given tiles, and the sampled sets
checked against the rule-level move list (:func:`naive.naive_legal_placements`)."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import qwirkle_core as qc
from naive import naive_legal_placements
from strategies import examples, reachable_games
from qwirkle_core._kernels import agents as _ag
from qwirkle_core._kernels import layout as _lo
from qwirkle_core._kernels import mc as _mc
from qwirkle_core._kernels import search as _se
from qwirkle_core._kernels.board import true_coords


def last_placement(g: qc.Game) -> tuple[int, int, list[tuple[int, int, int]], int]:
    """``(turn, seat, [(row, col, tile)], points)`` from the game's ``G_LAST_*`` counters."""
    a = g.kernel_arrays()
    gm = a.gmeta
    n = int(gm[_lo.G_LAST_N])
    rows, cols = true_coords(a.bmeta, gm[_lo.G_LAST_CELL : _lo.G_LAST_CELL + n].copy())
    placed = zip(rows.tolist(), cols.tolist(), gm[_lo.G_LAST_TILE : _lo.G_LAST_TILE + n].tolist())
    return int(gm[_lo.G_LAST_TURN]), int(gm[_lo.G_LAST_SEAT]), sorted(placed), int(gm[_lo.G_LAST_POINTS])


def hidden(g: qc.Game) -> Counter:
    """The tiles the player to move cannot see (the bag and the other hands), as a multiset."""
    gm = g.kernel_arrays().gmeta
    c = Counter(int(t) for t in g.kernel_arrays().bag[: int(gm[_lo.G_BAG])])
    for p in range(g.players):
        if p != g.current_player:
            c.update(g.hand(p))
    return c


# -- the last placement -------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_the_game_remembers_the_last_placement_however_it_was_played(seed):
    rng = random.Random(seed)
    g = qc.Game(seed=seed)
    for turn in range(30):
        if g.is_over:
            break
        if rng.random() < 0.5:
            action = g.play_agent(rng.choice(["greedy", "heuristic", "search:time_ms=1"]))
        else:
            moves = g.legal_moves()
            if not moves:
                break
            g.play(rng.choice(moves))
            action = g.history[-1]
        if action.move.kind != "place":
            break
        assert last_placement(g) == (turn + 1, action.player, sorted(action.move.placements), action.points)
        seat, kept = _se.inferable(g.kernel_arrays())
        if g.bag_size and not g.is_over and turn > 0 and len(action.move.placements) < 6:
            assert (seat, kept) == (action.player, 6 - len(action.move.placements))
        elif turn == 0:  # the opening: nothing to infer
            assert (seat, kept) == (-1, 0)
    remembered = last_placement(g)
    if not g.is_over and g.legal_moves():
        g.play(g.legal_moves()[-1])
        assert last_placement(g) != remembered
        g.undo()
        assert last_placement(g) == remembered  # undo restores it with the rest


def test_after_an_exchange_there_is_nothing_to_infer():
    g = qc.Game(seed=3)
    g.play(g.legal_moves()[0])
    g.play(g.legal_moves()[0])
    assert _se.inferable(g.kernel_arrays())[0] == g.history[-1].player
    g.exchange(g.hand()[:2])
    assert _se.inferable(g.kernel_arrays()) == (-1, 0)


# -- deals that keep tiles ----------------------------------------------------------------


@examples(0.5)
@given(reachable_games(min_turns=1, max_turns=40), st.integers(0, 2**63), st.integers(0, 6))
def test_a_deal_keeping_tiles_gives_them_to_the_seat_and_deals_the_rest(g, seed, k):
    a = g.kernel_arrays()
    viewer = g.current_player
    seat = (viewer + 1) % g.players
    pool = hidden(g)
    k = min(k, len(g.hand(seat)))
    kept = np.array(random.Random(seed).sample(sorted(pool.elements()), k), np.int8)
    hands, bag, gmeta = a.hands.copy(), a.bag.copy(), a.gmeta.copy()
    rng = np.zeros(2, np.uint64)
    rng[1] = np.uint64(seed)
    _mc.determinize_keeping(hands, bag, gmeta, viewer, rng, 1, seat, kept, k)
    dealt = Counter(int(t) for t in bag[: gmeta[_lo.G_BAG]])
    for p in range(g.players):
        hand = [int(t) for t in hands[p, : gmeta[_lo.G_HAND + p]]]
        assert hand == sorted(hand) and len(hand) == len(g.hand(p))
        if p == viewer:
            assert tuple(hand) == g.hand(p)
        else:
            dealt.update(hand)
        if p == seat:
            assert not Counter(kept.tolist()) - Counter(hand)
    assert dealt == pool
    if k == 0:  # the same deal as determinize
        h2, b2, g2 = a.hands.copy(), a.bag.copy(), a.gmeta.copy()
        rng[1] = np.uint64(seed)
        _mc.determinize(h2, b2, g2, viewer, rng, 1)
        assert h2.tolist() == hands.tolist() and b2.tolist() == bag.tolist()


# -- the inferred sets ------------------------------------------------------------------------


def gaps_of_inferred_sets(g: qc.Game, infer: float, seed: int, rows: int = 16) -> list[int]:
    """For each of the first ``rows`` sets ``infer_kept`` samples: how many points the last placement scored
    below the best placement of its hand (the set plus the placed tiles) on the board
    before it, by the rule-level move list. Checks that each set is made of tiles the
    mover cannot see."""
    a = g.kernel_arrays()
    seat, k = _se.inferable(a)
    assert k > 0
    scratch = _ag.new_agent_scratch(True)
    _se.infer_kept(a, scratch, scratch.sim_moves, seat, k, infer, np.uint64(seed))
    last = g.history[-1]
    before = {cell: t for cell, t in g.board.items() if cell not in {(r, c) for r, c, _ in last.move.placements}}
    played = [t for _, _, t in last.move.placements]
    pool = hidden(g)
    gaps = []
    for row in scratch.search.kept[:rows]:
        kept = [int(t) for t in row[:k]]
        assert not Counter(kept) - pool
        best = max(naive_legal_placements(before, kept + played).values())
        gaps.append(best - last.points)
    return gaps


def greedy_positions(count: int) -> list[qc.Game]:
    """Positions of two-player greedy self-play, one per seed, after a greedy
    placement with tiles left in the bag."""
    games = []
    for seed in range(count):
        g = qc.Game(seed=100 + seed)
        for _ in range(8 + seed % 12):
            g.play_agent("greedy")
        if _se.inferable(g.kernel_arrays())[1]:
            games.append(g)
    return games


def test_inferred_sets_keep_to_the_placement_played():
    """After a greedy placement (whose true kept tiles are consistent with it), strong
    inference samples sets with which the placement was a best one: nearly all of
    them (a set is taken after KEPT_TRIES failed tries only), while nearly uniform
    sets often would have scored more."""
    strong, weak = [], []
    for i, g in enumerate(greedy_positions(8)):
        strong += gaps_of_inferred_sets(g, 1000.0, i)
        weak += gaps_of_inferred_sets(g, 1e-9, i)
    assert min(strong) >= 0 and min(weak) >= 0  # the placement is one of the hand's
    assert np.mean([gap == 0 for gap in strong]) > 0.9  # 0.97 on these positions
    assert np.mean([gap == 0 for gap in weak]) < 0.6  # 0.37
    assert np.mean(strong) < 0.2 * np.mean(weak)


def test_the_search_with_inference_plays_legal_reproducible_games():
    a = qc.simulate(40, seed=5, agents=["search:time_ms=2:infer=1", "greedy"], threads=2)
    b = qc.simulate(40, seed=5, agents=["search:time_ms=2:infer=1", "greedy"], threads=1)
    assert a.scores.tolist() == b.scores.tolist()
    g = qc.Game(seed=9)
    while not g.is_over:
        before = g.copy()
        action = g.play_agent("search:time_ms=2:infer=4" if g.current_player == 0 else "greedy")
        if action.move.kind == "place":
            assert action.move in before.legal_moves()
    assert qc.replay(qc.GameRecord.from_game(g)).scores == g.scores
