"""Property tests: the engine's legal moves and scores equal the brute-force
reference in ``naive.py`` on reachable positions (ordinary, crowded,
far-wandering, translated far from (0,0), substituted hands with duplicate
tiles, empty-bag endgames, openings), and illegal placements are refused
without any change of state."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

import naive
import qwirkle_core as qc
from strategies import (
    ALL_TILES,
    SYMMETRIES,
    advance,
    duplicate_hand,
    engine_moves,
    examples,
    opening_len_for,
    reachable_games,
    rebuild,
    snake_board,
    snapshot,
)

# --------------------------------------------------------------------------
# helpers


def describe(g) -> str:
    return (
        f"board={dict(sorted(g.board.items()))!r}\n"
        f"hand={tuple(g.hand())!r} bag_size={g.bag_size} "
        f"current_player={g.current_player}"
    )


def check_against_reference(g, opening="largest_group"):
    """Assert legal_moves() == naive reference, scores included."""
    got = engine_moves(g)  # also asserts "no duplicates"
    want = naive.naive_legal_placements(g.board, g.hand(), opening_len_for(g, opening))
    missing = set(want) - set(got)
    extra = set(got) - set(want)
    assert not missing and not extra, (
        f"legal_moves mismatch\n{describe(g)}\n"
        f"missing ({len(missing)}), e.g. {[sorted(m) for m in list(missing)[:3]]}\n"
        f"extra ({len(extra)}), e.g. {[sorted(m) for m in list(extra)[:3]]}"
    )
    wrong = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
    assert not wrong, f"scores differ (got, want)\n{describe(g)}\n" + "\n".join(
        f"{sorted(k)}: {v}" for k, v in list(wrong.items())[:5]
    )
    # Move equality/hash: the engine's moves equal freshly built ones
    assert set(g.legal_moves()) == {qc.Move(k) for k in want}
    return got, want


def max_distance(board) -> int:
    return max((max(abs(r), abs(c)) for r, c in board), default=0)


# --------------------------------------------------------------------------
# legal moves vs. reference


@given(st.integers(0, 2**31 - 1), st.integers(2, 6))
def test_new_game_opening_matches_reference(seed, players):
    g = qc.Game(players=players, seed=seed)
    assert g.board == {}
    assert g.scores == (0,) * players
    assert g.bag_size == 108 - 6 * players
    assert all(len(g.hand(p)) == 6 for p in range(players))
    groups = [naive.largest_group(g.hand(p)) for p in range(players)]
    assert g.current_player == groups.index(max(groups)), groups
    got, _ = check_against_reference(g)
    n = max(groups)
    for key in got:
        assert sorted((r, c) for r, c, _ in key) == [(0, i) for i in range(n)]


@given(st.integers(0, 2**31 - 1), st.integers(2, 4))
def test_any_line_opening_matches_reference(seed, players):
    rules = qc.Rules(players=players, opening="any_line")
    g = qc.Game(players=players, seed=seed, rules=rules)
    assert g.current_player == 0
    got, _ = check_against_reference(g, opening="any_line")
    # every single tile of the hand is an opening on its own
    assert {k for k in got if len(k) == 1} == {frozenset({(0, 0, t)}) for t in set(g.hand())}


@given(reachable_games(min_turns=1, max_turns=25))
def test_reachable_positions_match_reference(g):
    check_against_reference(g)


@examples(0.5)
@given(reachable_games(min_turns=40, max_turns=90))
def test_crowded_positions_match_reference(g):
    check_against_reference(g)


@examples(0.5)
@given(reachable_games(min_turns=15, max_turns=70, wander=True))
def test_wandering_positions_match_reference(g):
    check_against_reference(g)


def test_wandering_games_do_get_far():
    """The wandering generator really leaves the neighbourhood of (0,0), and
    the engine agrees with the reference out there (deterministic)."""
    best = 0
    for seed in range(4):
        g = qc.Game(players=2, seed=seed)
        advance(g, 70, random.Random(seed), wander=True)
        best = max(best, max_distance(g.board))
        check_against_reference(g)
    assert best >= 40, best


@examples(0.25)
@given(st.integers(11, 17), st.integers(0, 7), st.integers(2, 3), st.data())
@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_long_snake_boards_match_reference(n_rows, sym, players, data):
    """Boards spanning 56..86 cells in one direction (a 128-wide internal
    grid must not alias), in all 8 orientations, anywhere within +-107."""
    rng = random.Random(data.draw(st.integers(0, 2**31 - 1)))
    board, rest = snake_board(n_rows, rng)
    board = {SYMMETRIES[sym](r, c): t for (r, c), t in board.items()}
    rows = [r for r, _ in board]
    cols = [c for _, c in board]
    dr = data.draw(st.integers(-107 - min(rows), 107 - max(rows)), label="dr")
    dc = data.draw(st.integers(-107 - min(cols), 107 - max(cols)), label="dc")
    board = {(r + dr, c + dc): t for (r, c), t in board.items()}
    assert naive.board_is_valid(board)
    if len(rest) >= 6 * players:
        hands, bag = [rest[6 * p : 6 * p + 6] for p in range(players)], rest[6 * players :]
    else:  # an endgame: the bag is empty, the rest is shared out
        hands, bag = [rest[p::players] for p in range(players)], []
    g = qc.Game.from_position(
        board=board, hands=hands, bag=bag, scores=[0] * players, current_player=data.draw(st.integers(0, players - 1))
    )
    assert g.board == board
    got, want = check_against_reference(g)
    assert want, "the snake should leave room to play"
    # play one move and compare again (incremental board updates far out)
    m = qc.Move(rng.choice(sorted(want, key=sorted)))
    assert g.play(m) == want[frozenset(m.placements)]
    check_against_reference(g)


@given(reachable_games(min_turns=1, max_turns=40), st.data())
def test_translated_far_positions_match_reference(g, data):
    """The same position shifted so that it touches +-107 (the farthest any
    real game can reach) in some direction."""
    rows = [r for r, _ in g.board]
    cols = [c for _, c in g.board]
    lim = 107
    dr = data.draw(st.sampled_from([-lim - min(rows) + 1, lim - max(rows) - 1, 0, -lim // 2]))
    dc = data.draw(st.sampled_from([-lim - min(cols) + 1, lim - max(cols) - 1, 0, lim // 2]))
    rng = random.Random(data.draw(st.integers(0, 2**31 - 1)))
    g2 = rebuild(g, shift=(dr, dc), rng=rng)
    assert g2.board == {(r + dr, c + dc): t for (r, c), t in g.board.items()}
    assert sorted(g2.hand()) == sorted(g.hand())
    got2, _ = check_against_reference(g2)
    got1 = engine_moves(g)
    shifted = {frozenset((r + dr, c + dc, t) for r, c, t in k): v for k, v in got1.items()}
    assert shifted == got2


@given(reachable_games(min_turns=0, max_turns=40), st.data())
def test_duplicate_tiles_in_hand_match_reference(g, data):
    hand = data.draw(duplicate_hand(g))
    assert len(set(hand)) < len(hand)
    rng = random.Random(data.draw(st.integers(0, 2**31 - 1)))
    g2 = rebuild(g, hand=hand, rng=rng)
    assert sorted(g2.hand()) == sorted(hand)
    assert len(g2.board) + sum(len(g2.hand(p)) for p in range(g2.players)) + g2.bag_size == 108
    check_against_reference(g2)


@given(reachable_games(min_turns=0, max_turns=50), st.data())
def test_substituted_hands_match_reference(g, data):
    """Any 6 tiles still available (not on the board or in other hands)."""
    hand = data.draw(duplicate_hand(g, force_duplicate=False))
    g2 = rebuild(g, hand=hand, rng=random.Random(data.draw(st.integers(0, 99))))
    assert sorted(g2.hand()) == sorted(hand)
    check_against_reference(g2)


@given(st.data())
def test_empty_board_from_position_matches_reference(data):
    """An empty board via from_position: the current player opens with
    exactly his largest group; arbitrary hands, duplicates included."""
    players = data.draw(st.integers(2, 4))
    supply = [t for t in ALL_TILES for _ in range(3)]
    rng = random.Random(data.draw(st.integers(0, 2**31 - 1)))
    rng.shuffle(supply)
    if data.draw(st.booleans()):  # force a duplicate into the first hand
        j = supply.index(supply[0], 1)
        supply.insert(1, supply.pop(j))
    hands = [supply[6 * p : 6 * p + 6] for p in range(players)]
    bag = supply[6 * players :]
    cur = data.draw(st.integers(0, players - 1))
    hands[0], hands[cur] = hands[cur], hands[0]
    g = qc.Game.from_position(board={}, hands=hands, bag=bag, scores=[0] * players, current_player=cur)
    assert g.current_player == cur
    got, _ = check_against_reference(g)
    n = naive.largest_group(g.hand())
    assert got and all(len(k) == n for k in got)


@given(reachable_games(min_turns=5, max_turns=60), st.data())
def test_empty_bag_endgame_hands_match_reference(g, data):
    """Empty bag, hands of 1..6 tiles (endgame positions)."""
    rng = random.Random(data.draw(st.integers(0, 2**31 - 1)))
    hands = []
    for p in range(g.players):
        h = list(g.hand(p))
        rng.shuffle(h)
        hands.append(h[: data.draw(st.integers(1, len(h)))])
    g2 = qc.Game.from_position(
        board=g.board, hands=hands, bag=[], scores=list(g.scores), current_player=g.current_player
    )
    assert g2.bag_size == 0
    check_against_reference(g2)


# --------------------------------------------------------------------------
# specific shapes of placement


def T(color, shape):
    return naive.N_SHAPES * qc.COLORS.index(color) + qc.SHAPES.index(shape)


def test_plays_through_existing_tiles_and_into_gaps():
    #       col:  0    1    2    3    4    5
    #  row 0:     .    RC   RS   .    RD   .
    #  row 1:     .    .    OS   OX   OD   .
    board = {
        (0, 1): T("red", "circle"),
        (0, 2): T("red", "square"),
        (0, 4): T("red", "diamond"),
        (1, 2): T("orange", "square"),
        (1, 3): T("orange", "cross"),
        (1, 4): T("orange", "diamond"),
    }
    assert naive.board_is_valid(board)
    hand = [
        T("red", "clover"),
        T("red", "cross"),
        T("red", "star"),
        T("red", "clover"),
        T("blue", "circle"),
        T("yellow", "cross"),
    ]
    g = qc.Game.from_position(
        board=board, hands=[hand, [T("green", "star")] * 2], bag=[], scores=[0, 0], current_player=0
    )
    got, want = check_against_reference(g)
    # the gap alone: row RC RS RX RD (4) + column RX/OX (2)
    assert got[frozenset({(0, 3, T("red", "cross"))})] == 6
    # placed tiles with old tiles between them: row of 5 + column of 2
    through = frozenset({(0, 0, T("red", "clover")), (0, 3, T("red", "cross"))})
    assert got[through] == 7
    # three placed tiles around four old ones complete a Qwirkle: 12 + 2
    qwirkle = frozenset({(0, 0, T("red", "clover")), (0, 3, T("red", "cross")), (0, 5, T("red", "star"))})
    assert got[qwirkle] == 14
    # leaving the gap at (0,3) empty is illegal
    gap = frozenset({(0, 0, T("red", "clover")), (0, 5, T("red", "star"))})
    assert gap not in got
    # both ends of the column holding OX: (0,3) above and (2,3) below;
    # column RX OX YX (3) + row RC RS RX RD (4)
    both = frozenset({(0, 3, T("red", "cross")), (2, 3, T("yellow", "cross"))})
    assert got[both] == 7
    bad = frozenset({(0, 3, T("red", "cross")), (2, 3, T("blue", "circle"))})
    assert bad not in got


# --------------------------------------------------------------------------
# playing every legal move


@examples(0.4)
@given(reachable_games(min_turns=0, max_turns=60), st.data())
def test_play_returns_move_score_and_updates_state(g, data):
    before = snapshot(g)
    p = g.current_player
    moves = g.legal_moves()
    rng = random.Random(data.draw(st.integers(0, 2**31 - 1)))
    for m in moves:  # every legal move, each on its own copy
        assert isinstance(m.score, int)
        assert m.score == naive.naive_score(g.board, m.placements)
        c = g.copy()
        pts = c.play(m)
        assert pts == m.score
        k = len(m.placements)
        assert c.board == {**before["board"], **{(r, col): t for r, col, t in m.placements}}
        out = before["bag_size"] == 0 and k == len(before["hands"][p])
        bonus = 6 if out else 0
        assert c.scores[p] == before["scores"][p] + pts + bonus
        assert all(c.scores[q] == before["scores"][q] for q in range(g.players) if q != p)
        drawn = min(k, before["bag_size"])
        assert c.bag_size == before["bag_size"] - drawn
        new_hand = Counter(c.hand(p))
        kept = Counter(before["hands"][p]) - Counter(t for _, _, t in m.placements)
        assert sum(new_hand.values()) == len(before["hands"][p]) - k + drawn
        assert not kept - new_hand, "tiles not placed must stay in hand"
        assert c.is_over == out
        if not out:
            assert c.current_player == (p + 1) % g.players
        # the original is untouched by playing on a copy
        assert snapshot(g) == before
    # a Move rebuilt from scratch (reversed order, no score) plays the same
    if moves:
        m = rng.choice(moves)
        fresh = qc.Move(list(reversed(m.placements)))
        assert fresh.score is None
        assert fresh == m and hash(fresh) == hash(m)
        assert g.copy().play(fresh) == m.score


# --------------------------------------------------------------------------
# illegal placements


def candidate_placements(g, want, rng, n=60):
    """Near-miss and random placements (no duplicate cells)."""
    board = g.board
    hand = list(g.hand())
    legal = [sorted(k) for k in want] or [[(0, 0, hand[0])]]
    rows = [r for r, _ in board] or [0]
    cols = [c for _, c in board] or [0]
    cands = []
    for _ in range(n):
        base = [list(x) for x in rng.choice(legal)]
        kind = rng.randrange(8)
        if kind == 0:  # shift the whole placement
            dr, dc = rng.choice([(0, 1), (0, -1), (1, 0), (-1, 0), (0, 2), (2, 0), (1, 1), (-3, 0)])
            base = [[r + dr, c + dc, t] for r, c, t in base]
        elif kind == 1:  # replace one tile by another hand tile or any tile
            i = rng.randrange(len(base))
            base[i][2] = rng.choice(hand) if rng.random() < 0.6 else rng.randrange(36)
        elif kind == 2:  # add a tile next to one of the placed ones
            r, c, _ = rng.choice(base)
            dr, dc = rng.choice(naive.NEIGHBOURS)
            base.append([r + dr, c + dc, rng.choice(hand)])
        elif kind == 3:  # add a tile two cells past an end (a gap)
            r, c, _ = base[-1]
            if len(base) > 1 and base[0][0] == r:
                base.append([r, c + 2, rng.choice(hand)])
            else:
                base.append([r + 2, c, rng.choice(hand)])
        elif kind == 4:  # move one tile one cell sideways
            i = rng.randrange(len(base))
            dr, dc = rng.choice(naive.NEIGHBOURS)
            base[i][0] += dr
            base[i][1] += dc
        elif kind == 5:  # onto an occupied cell
            if board:
                r, c = rng.choice(list(board))
                base[0][0], base[0][1] = r, c
        elif kind == 6:  # random scatter near the board
            k = rng.randint(1, 3)
            base = [
                [rng.randint(min(rows) - 2, max(rows) + 2), rng.randint(min(cols) - 2, max(cols) + 2), rng.choice(hand)]
                for _ in range(k)
            ]
        else:  # the same tile used more often than held
            t = rng.choice(hand)
            held = hand.count(t)
            r, c, _ = base[0]
            base = [[r, c + i, t] for i in range(held + 1)]
        cells = [(r, c) for r, c, _ in base]
        if len(set(cells)) != len(cells):
            continue
        cands.append(frozenset((r, c, t) for r, c, t in base))
    return cands


@examples(0.5)
@given(reachable_games(min_turns=0, max_turns=50), st.data())
def test_illegal_placements_are_refused_without_change(g, data):
    opening_len = opening_len_for(g)
    want = naive.naive_legal_placements(g.board, g.hand(), opening_len)
    rng = random.Random(data.draw(st.integers(0, 2**31 - 1)))
    before = snapshot(g)
    tried = 0
    for cand in candidate_placements(g, want, rng):
        legal = cand in want
        # the reference is self-consistent
        assert legal == naive.naive_is_legal(g.board, g.hand(), cand, opening_len)
        if legal:
            continue
        tried += 1
        with pytest.raises(qc.IllegalMoveError):
            g.play(qc.Move(cand))
        assert snapshot(g) == before, f"state changed after refusing {sorted(cand)}"
    assert tried > 0
    # still fully functional afterwards
    assert set(engine_moves(g)) == set(want)


def test_illegal_move_error_is_value_error():
    assert issubclass(qc.IllegalMoveError, ValueError)


# --------------------------------------------------------------------------
# the reference itself: the window enumeration misses nothing


@examples(0.25)
@given(reachable_games(min_turns=1, max_turns=6), st.data())
def test_reference_enumeration_is_complete_for_small_placements(g, data):
    """All 1- and 2-tile placements found by checking every candidate cell
    (pair) with naive_is_legal equal those in naive_legal_placements."""
    board = g.board
    hand = list(g.hand())
    want = naive.naive_legal_placements(board, hand, None)
    rows = [r for r, _ in board]
    cols = [c for _, c in board]
    empty = [
        (r, c)
        for r in range(min(rows) - 2, max(rows) + 3)
        for c in range(min(cols) - 2, max(cols) + 3)
        if (r, c) not in board
    ]
    found = set()
    tiles = sorted(set(hand))
    for cell in empty:
        for t in tiles:
            k = frozenset({(*cell, t)})
            if naive.naive_is_legal(board, hand, k):
                found.add(k)
    near = [cell for cell in empty if any((cell[0] + a, cell[1] + b) in board for a, b in naive.NEIGHBOURS)]
    for a in near:
        for b in empty:
            if a == b or (a[0] != b[0] and a[1] != b[1]):
                continue
            if abs(a[0] - b[0]) + abs(a[1] - b[1]) > 5:
                continue
            for t1 in tiles:
                for t2 in tiles:
                    k = frozenset({(*a, t1), (*b, t2)})
                    if len(k) == 2 and k not in found and naive.naive_is_legal(board, hand, k):
                        found.add(k)
    assert found == {k for k in want if len(k) <= 2}
