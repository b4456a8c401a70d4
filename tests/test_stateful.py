"""Random games through the public API, with invariants after every step.

``QwirkleMachine`` is a hypothesis RuleBasedStateMachine: it starts from a
fresh ``Game`` fast-forwarded by a random number of turns (so that endgames
are reached too) and then mixes legal actions (play, exchange, pass) with
illegal ones (pass while a placement exists or the bag is not empty, exchange
too many / tiles not held / nothing, play tiles not held or a structurally
illegal placement, anything after the game is over).  Refused actions must
raise IllegalMoveError and change nothing observable.

``test_full_games`` plays complete games deterministically and checks the
end-of-game rules.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
)

import naive
import qwirkle_core as qc
from strategies import advance, snapshot, tile_counts

TOTAL = 108


def tile_total(g):
    return len(g.board) + sum(len(g.hand(p)) for p in range(g.players)) + g.bag_size


def check_conservation(g, total=TOTAL):
    counts = tile_counts(g)
    on_table = sum(counts.values())
    assert len(g.board) + sum(len(g.hand(p)) for p in range(g.players)) == on_table
    assert on_table + g.bag_size == total, (on_table, g.bag_size)
    assert all(0 <= t < 36 for t in counts)
    over = {t: n for t, n in counts.items() if n > 3}
    assert not over, f"more than 3 copies of {over}"
    assert all(len(g.hand(p)) <= 6 for p in range(g.players))
    if g.bag_size > 0:
        assert all(len(g.hand(p)) == 6 for p in range(g.players))


def expected_winner(scores):
    best = max(scores)
    return scores.index(best) if scores.count(best) == 1 else -1


def check_play(g, move, rng_note=""):
    """Play ``move`` (legal, from legal_moves) on g and check every effect."""
    before = snapshot(g)
    p = g.current_player
    k = len(move.placements)
    expected_pts = naive.naive_score(g.board, move.placements)
    pts = g.play(move)
    assert pts == move.score == expected_pts
    out = before["bag_size"] == 0 and k == len(before["hands"][p])
    assert g.scores[p] == before["scores"][p] + pts + (6 if out else 0)
    assert all(g.scores[q] == before["scores"][q] for q in range(g.players) if q != p)
    assert g.board == {**before["board"], **{(r, c): t for r, c, t in move.placements}}
    drawn = min(k, before["bag_size"])
    assert g.bag_size == before["bag_size"] - drawn
    kept = Counter(before["hands"][p]) - Counter(t for _, _, t in move.placements)
    assert not kept - Counter(g.hand(p))
    assert len(g.hand(p)) == len(before["hands"][p]) - k + drawn
    for q in range(g.players):
        if q != p:
            assert tuple(sorted(g.hand(q))) == before["hands"][q]
    assert g.is_over == out
    if out:
        assert g.hand(p) == ()
        assert g.winner == expected_winner(list(g.scores))
    else:
        assert g.current_player == (p + 1) % g.players
        assert g.winner is None
    return out


def assert_dead_board(g):
    """No tile off the board (in the bag or any hand; all 108 in play) fits
    any cell next to the board."""
    board = g.board
    off_board = Counter({t: 3 for t in range(36)}) - Counter(board.values())
    cells = {(r + a, c + b) for r, c in board for a, b in naive.NEIGHBOURS} - set(board)
    for cell in cells:
        for t in off_board:
            assert not naive.naive_is_legal(board, [t], [(*cell, t)]), (cell, t)


def check_exchange(g, tiles):
    before = snapshot(g)
    p = g.current_player
    g.exchange(tiles)
    assert g.board == before["board"]
    assert g.scores == before["scores"]
    assert g.bag_size == before["bag_size"]
    assert len(g.hand(p)) == len(before["hands"][p])
    kept = Counter(before["hands"][p]) - Counter(tiles)
    assert not kept - Counter(g.hand(p))
    if g.is_over:
        # docs/rules.md "Decision (dead board)": only when nothing can ever fit
        assert_dead_board(g)
        assert g.winner == expected_winner(list(g.scores))
        return "dead"
    assert g.current_player == (p + 1) % g.players
    return None


def refused(g, action):
    before = snapshot(g)
    with pytest.raises(qc.IllegalMoveError):
        action()
    assert snapshot(g) == before


def endgame_position(seed, players, rng):
    """An empty-bag endgame via from_position: the board of a short real game,
    small hands, many of them made of tiles whose colour and shape appear
    nowhere on the board (such tiles can never be placed), so that passes
    and blocked endings happen.  Not all 108 tiles are in play."""
    g = qc.Game(players=players, seed=seed)
    advance(g, rng.randint(1, 3), rng)
    board = g.board
    avail = Counter({t: 3 for t in range(36)}) - Counter(board.values())
    colors = {naive.color(t) for t in board.values()}
    shapes = {naive.shape(t) for t in board.values()}
    dead = [t for t in range(36) if naive.color(t) not in colors and naive.shape(t) not in shapes]
    hands = []
    for _ in range(players):
        hand = []
        blocked = dead and rng.random() < 0.85
        for _ in range(rng.randint(1, 4)):
            pool = [t for t in (dead if blocked else range(36)) if avail[t] > 0]
            if not pool:
                break
            t = rng.choice(pool)
            avail[t] -= 1
            hand.append(t)
        if not hand:
            t = rng.choice([t for t in range(36) if avail[t] > 0])
            avail[t] -= 1
            hand = [t]
        hands.append(hand)
    scores = [rng.randint(0, 40) for _ in range(players)]
    return qc.Game.from_position(board=board, hands=hands, bag=[], scores=scores, current_player=rng.randrange(players))


class QwirkleMachine(RuleBasedStateMachine):
    @initialize(
        seed=st.integers(0, 2**31 - 1),
        players=st.integers(2, 6),
        warm=st.integers(0, 120),
        rseed=st.integers(0, 2**31 - 1),
    )
    def start(self, seed, players, warm, rseed):
        rng = random.Random(rseed)
        # (not a sampled_from: hypothesis would favour the first choice)
        kind = "endgame" if rng.random() < 0.4 else "fresh"
        event(f"start: {kind}")
        if kind == "fresh":
            self.g = qc.Game(players=players, seed=seed)
            self.passes = advance(self.g, warm, rng)
            self.total = TOTAL
        else:
            self.g = endgame_position(seed, players, rng)
            self.passes = 0
            self.total = tile_total(self.g)
        self.prev_scores = tuple(self.g.scores)
        self.prev_board = dict(self.g.board)
        self.ended_by = None
        self.refresh()

    def refresh(self):
        self.moves = [] if self.g.is_over else self.g.legal_moves()

    # All rules are always enabled (hypothesis gives up on steps when most
    # rules are disabled); each one checks, from the current state, whether
    # its action must be accepted or refused.

    # ------------------------------------------------------------ play

    @rule(data=st.data(), biggest=st.booleans())
    def play(self, data, biggest):
        """A legal move when there is one (biggest=True: the longest, which
        drives the game to its end); otherwise any placement is refused."""
        g = self.g
        if g.is_over or not self.moves:
            event("play refused: " + ("over" if g.is_over else "no placement"))
            hand = list(g.hand()) or [0]
            r, c = data.draw(st.sampled_from(sorted(g.board) or [(0, 0)]), label="at")
            d = data.draw(st.sampled_from(naive.NEIGHBOURS), label="dir")
            t = data.draw(st.sampled_from(hand), label="tile")
            refused(g, lambda: g.play(qc.Move([(r + d[0], c + d[1], t)])))
            return
        if biggest:
            m = max(self.moves, key=lambda m: (len(m.placements), m.score))
        else:
            m = self.moves[data.draw(st.integers(0, len(self.moves) - 1), label="move")]
        if check_play(g, m):
            self.ended_by = "out"
            event("game ended by going out")
        self.passes = 0
        self.refresh()

    # -------------------------------------------------------- exchange

    @rule(data=st.data())
    def exchange(self, data):
        """A random legal exchange when the bag has tiles; refused when the
        bag is empty or the game is over."""
        g = self.g
        hand = list(g.hand())
        if g.is_over or g.bag_size == 0 or not g.board:
            # docs/rules.md: "The opener may not exchange instead of opening."
            event("exchange refused: " + ("over" if g.is_over else "empty bag" if g.board else "opening"))
            tiles = hand[:1] or [0]
            refused(g, lambda: g.exchange(tiles))
            return
        k = data.draw(st.integers(1, min(6, g.bag_size, len(hand))), label="k")
        tiles = data.draw(st.permutations(hand), label="order")[:k]
        if check_exchange(g, tiles):
            self.ended_by = "dead"
        self.passes = 0
        self.refresh()

    @rule(data=st.data())
    def exchange_illegal(self, data):
        """Nothing, more than the bag holds, tiles not held, a tile twice
        that is held once."""
        g = self.g
        hand = list(g.hand())
        options = [[]]
        if g.is_over and hand:
            options.append(hand[:1])  # nothing is legal after the end
        if g.bag_size < len(hand):
            options.append(hand[: g.bag_size + 1])  # more than the bag holds
        missing = [t for t in range(36) if t not in hand]
        if missing:
            t = data.draw(st.sampled_from(missing), label="missing")
            options.append([t])
            options.append(hand[:1] + [t])
        held_once = [t for t in set(hand) if hand.count(t) == 1]
        if held_once:
            options.append([held_once[0], held_once[0]])
        tiles = data.draw(st.sampled_from(options), label="tiles")
        refused(g, lambda: g.exchange(tiles))

    # ------------------------------------------------------------ pass

    @rule()
    def pass_turn(self):
        """Legal only with an empty bag and no placement; all players passing
        in a row ends the game without bonus."""
        g = self.g
        if g.is_over or self.moves or g.bag_size > 0:
            event("pass refused")
            refused(g, g.pass_turn)
            return
        before = snapshot(g)
        p = g.current_player
        g.pass_turn()
        self.passes += 1
        assert g.scores == before["scores"] and g.board == before["board"]
        assert [sorted(g.hand(q)) for q in range(g.players)] == [list(h) for h in before["hands"]]
        if self.passes == g.players:
            assert g.is_over
            assert g.winner == expected_winner(list(g.scores))
            self.ended_by = "blocked"
            event("game ended by passes")
        else:
            event("legal pass")
            assert not g.is_over and g.winner is None
            assert g.current_player == (p + 1) % g.players
        self.refresh()

    # --------------------------------------------------- illegal plays

    @rule(data=st.data())
    def play_tile_not_in_hand(self, data):
        """A legal move with one tile replaced by one not held (or held fewer
        times than the placement then uses)."""
        g = self.g
        if not self.moves:
            return
        hand = Counter(g.hand())
        m = data.draw(st.sampled_from(self.moves), label="move")
        pl = [list(x) for x in m.placements]
        i = data.draw(st.integers(0, len(pl) - 1), label="i")
        others = Counter(x[2] for j, x in enumerate(pl) if j != i)
        choices = [t for t in range(36) if others[t] + 1 > hand[t]]
        pl[i][2] = data.draw(st.sampled_from(choices), label="tile")
        refused(g, lambda: g.play(qc.Move(pl)))

    @rule(data=st.data())
    def play_random_placement(self, data):
        """A random 1-3 tile placement near the board; if the reference says
        it is illegal (or the game is over) the engine must refuse it."""
        g = self.g
        hand = list(g.hand()) or [0]
        board = g.board
        rows = [r for r, _ in board] or [0]
        cols = [c for _, c in board] or [0]
        k = data.draw(st.integers(1, min(3, len(hand))), label="k")
        tiles = data.draw(st.permutations(hand), label="tiles")[:k]
        r0 = data.draw(st.integers(min(rows) - 2, max(rows) + 2), label="r")
        c0 = data.draw(st.integers(min(cols) - 2, max(cols) + 2), label="c")
        shape = data.draw(st.sampled_from(["row", "col", "gap", "L"]), label="shape")
        if shape == "row":
            cells = [(r0, c0 + i) for i in range(k)]
        elif shape == "col":
            cells = [(r0 + i, c0) for i in range(k)]
        elif shape == "gap":
            cells = [(r0, c0 + 2 * i) for i in range(k)]
        else:
            cells = [(r0 + (i % 2), c0 + (i + 1) // 2) for i in range(k)]
        key = frozenset((r, c, t) for (r, c), t in zip(cells, tiles))
        opening = None if board else naive.largest_group(hand)
        if not g.is_over and naive.naive_is_legal(board, hand, key, opening):
            event("random placement happened to be legal")
            assert qc.Move(key) in set(self.moves)
            return
        assert qc.Move(key) not in set(self.moves)
        refused(g, lambda: g.play(qc.Move(key)))

    # ----------------------------------------------------------- invariants

    @invariant()
    def tiles_are_conserved(self):
        check_conservation(self.g, self.total)

    @invariant()
    def scores_never_drop_and_board_only_grows(self):
        g = self.g
        assert len(g.scores) == g.players
        assert all(a <= b for a, b in zip(self.prev_scores, g.scores))
        self.prev_scores = tuple(g.scores)
        board = g.board
        assert all(board.get(cell) == t for cell, t in self.prev_board.items())
        self.prev_board = board

    @invariant()
    def board_is_valid(self):
        assert naive.board_is_valid(self.g.board)
        if self.g.board:
            # the opening was a horizontal line starting at (0,0)
            assert (0, 0) in self.g.board

    @invariant()
    def game_over_is_consistent(self):
        g = self.g
        if g.is_over:
            assert g.winner == expected_winner(list(g.scores))
            assert self.ended_by in ("out", "blocked", "dead")
            assert g.bag_size == 0 or self.ended_by == "dead"
            if self.ended_by == "out":
                assert any(len(g.hand(p)) == 0 for p in range(g.players))
        else:
            assert g.winner is None
            assert self.ended_by is None
            assert 0 <= g.current_player < g.players


QwirkleMachine.TestCase.settings = settings(
    max_examples=int(settings.default.max_examples * 1.5),
    stateful_step_count=60,
    deadline=None,
)
test_qwirkle_machine = pytest.mark.slow(QwirkleMachine.TestCase)


# --------------------------------------------------------------------------
# complete games


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_full_games(players):
    """Play whole games with a random policy; check every turn and the end."""
    for seed in range(3):
        rng = random.Random(1000 * players + seed)
        g = qc.Game(players=players, seed=seed)
        passes = 0
        ended_by = None
        for _turn in range(2000):
            check_conservation(g)
            if g.is_over:
                break
            moves = g.legal_moves()
            if moves:
                assert g.board or all(len(m.placements) == naive.largest_group(g.hand()) for m in moves)
                if g.board:
                    refused(g, g.pass_turn)
                m = rng.choice(moves) if rng.random() < 0.5 else max(moves, key=lambda m: len(m.placements))
                if check_play(g, m):
                    ended_by = "out"
                passes = 0
            elif g.bag_size > 0:
                refused(g, g.pass_turn)
                hand = list(g.hand())
                if check_exchange(g, rng.sample(hand, rng.randint(1, min(len(hand), g.bag_size)))):
                    ended_by = "dead"
                passes = 0
            else:
                scores = g.scores
                g.pass_turn()
                passes += 1
                assert g.scores == scores
                if passes == players:
                    assert g.is_over
                    ended_by = "blocked"
                else:
                    assert not g.is_over
        assert g.is_over, "game did not finish"
        assert g.bag_size == 0 or ended_by == "dead"
        assert g.winner == expected_winner(list(g.scores))
        assert naive.board_is_valid(g.board)
        if ended_by == "out":
            assert sum(len(g.hand(p)) == 0 for p in range(players)) == 1
        else:
            assert ended_by in ("blocked", "dead")
