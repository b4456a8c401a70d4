"""The PettingZoo AEC environment and the Gymnasium wrapper (qwirkle_core.env): the
official API checks, an action mask checked against the naive rule reference, masked
random play to the end, rewards that add up to the scores, rendering and errors.

QWIRKLE_ENV_GAMES scales the number of random games (default 1; the one-off run in
docs/env.md uses 20, i.e. thousands of games)."""

from __future__ import annotations

import copy
import os
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import bots
import naive
from strategies import duplicate_hand, examples, opening_len_for, reachable_games, rebuild, snake_board

pettingzoo = pytest.importorskip("pettingzoo")
gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402
from pettingzoo.test import api_test, seed_test  # noqa: E402

import qwirkle_core as qc  # noqa: E402
from qwirkle_core.batch.players import legal_actions, run_game  # noqa: E402
from qwirkle_core.env import WINDOW, QwirkleGymEnv, action_count, env, raw_env  # noqa: E402

SCALE = int(os.environ.get("QWIRKLE_ENV_GAMES", "1"))
W2 = WINDOW * WINDOW
DONE = 6 * W2
EXCHANGE0 = DONE + 1
PASS = DONE + 64


# -- the official checks ------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_pettingzoo_api_and_seed_tests(players):
    api_test(raw_env(players=players), num_cycles=1000)
    seed_test(lambda: raw_env(players=players), num_cycles=200)


def test_pettingzoo_api_on_the_wrapped_env_and_six_players():
    api_test(env(players=2), num_cycles=1000)
    api_test(raw_env(players=6, window=40), num_cycles=1000)


@pytest.mark.parametrize("render_mode", [None, "ansi", "rgb_array"])
def test_gymnasium_check_env(render_mode):
    check_env(QwirkleGymEnv(render_mode=render_mode))


def test_gymnasium_check_env_with_python_opponents():
    check_env(QwirkleGymEnv(opponents=("bots:Best", bots.Randomly, "heuristic"), seat=2))


# -- the action mask against the rule reference ----------------------------------------------


def reference_mask(game, origin, hand, moves, partial):
    """The action mask written from the rules: ``moves`` are the legal placements of the
    turn (from tests/naive.py), ``partial`` the (slot, row, col, tile) put down so far."""
    r0, c0 = origin
    mask = np.zeros(action_count(), np.int8)
    put = {(r, c, t) for _, r, c, t in partial}
    used = {s for s, _, _, _ in partial}
    for move in moves:
        if put <= move:
            for r, c, t in move - put:
                for s, held in enumerate(hand):
                    if held == t and s not in used:
                        mask[s * W2 + (r - r0) * WINDOW + (c - c0)] = 1
            if put and move == put:
                mask[DONE] = 1
    if not partial:
        bag = game.bag_size
        if bag and not game.opening_pending:
            for bits in range(1, 64):
                if bits < 1 << len(hand) and bin(bits).count("1") <= bag:
                    mask[EXCHANGE0 + bits - 1] = 1
        elif not moves:
            mask[PASS] = 1
    return mask


def step_checked(e, agent, g, hand, moves, partial, pick) -> int:
    """One step of ``agent`` in ``e``: its mask equals :func:`reference_mask` (``partial``:
    the turn's placement steps so far, as ``(hand slot, row, col, tile)``), then the
    action ``pick(mask)`` is played and, if it places a tile, added to ``partial``."""
    mask = e.observe(agent)["action_mask"]
    np.testing.assert_array_equal(mask, reference_mask(g, e.origin, hand, moves, partial))
    a = pick(mask)
    if a < DONE:
        s, k = divmod(a, W2)
        partial.append((s, e.origin[0] + k // WINDOW, e.origin[1] + k % WINDOW, hand[s]))
    e.step(a)
    return a


@pytest.mark.slow
def test_the_mask_is_exact_along_random_paths():
    """Every step of masked random play: the mask equals the one written from the rules
    (what the player may complete from the legal placements, exchanges, the pass)."""
    rng = np.random.default_rng(3)
    e = raw_env(players=2)
    seen = Counter()
    for game_seed in range(4):
        e.reset(seed=game_seed)
        while e.agents and not e.terminations[e.agent_selection]:
            g, agent = e.game, e.agent_selection
            hand = g.hand()
            if g.turn % 4 == 0:  # the slow reference of the rules on every fourth turn
                moves = naive.naive_legal_placements(g.board, hand, opening_len_for(g))
            else:  # the engine's placements (themselves checked against it in test_reference)
                moves = {frozenset(m.placements) for m in g.legal_moves()}
            partial: list[tuple[int, int, int, int]] = []
            while True:
                a = step_checked(e, agent, g, hand, moves, partial, lambda mask: int(rng.choice(np.flatnonzero(mask))))
                seen["done" if a == DONE else "place" if a < DONE else "exchange" if a < PASS else "pass"] += 1
                if a >= DONE:
                    break
    assert seen["place"] > 100 and seen["done"] > 20 and seen["exchange"] > 20


def enumerate_moves(e):
    """Every move the mask lets the current agent complete from here (a DFS over the
    sets of tiles put down, each explored once), checking that no path dead-ends."""
    found = set()
    seen = set()

    def visit(node, placed):
        key = frozenset(placed)
        if key in seen:
            return
        seen.add(key)
        mask = node.observe(node.agent_selection)["action_mask"]
        assert mask.any()
        if mask[DONE]:
            found.add(key)
        for a in np.flatnonzero(mask[:DONE]):
            s, k = divmod(int(a), W2)
            child = copy.deepcopy(node)
            tile = child.game.hand()[s]
            child.step(int(a))
            visit(child, placed | {(node.origin[0] + k // WINDOW, node.origin[1] + k % WINDOW, tile)})

    visit(e, frozenset())
    return found


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_every_legal_placement_and_nothing_else_can_be_completed(seed):
    e = raw_env(players=2)
    e.reset(seed=seed)
    rng = random.Random(seed)
    for turns in (0, 12, 40):  # the opening, the middle game, the end game
        while e.game.turn < turns and not e.game.is_over:
            move = rng.choice(legal_actions(e.game))
            for a in e.encode(move):
                e.step(a)
        if e.game.is_over:
            break
        g = e.game
        want = set(naive.naive_legal_placements(g.board, g.hand(), opening_len_for(g)))
        assert enumerate_moves(e) == want


@st.composite
def positions(draw):
    """Reachable positions (random play, some wandering far from (0, 0)), some with a
    hand holding the same tile twice, and staircases of lines spanning up to 86 columns."""
    kind = draw(st.sampled_from(["played", "wandered", "duplicates", "snake"]))
    if kind == "snake":
        rng = random.Random(draw(st.integers(0, 2**31 - 1)))
        board, rest = snake_board(draw(st.integers(10, 16)), rng)  # 16 lines span 81 columns
        hands = [rest[:6], rest[6:12]]
        return qc.Game.from_position(board=board, hands=hands, bag=rest[12:], seed=1)
    g = draw(reachable_games(max_turns=30, wander=kind == "wandered", players=2))
    if kind == "duplicates" and g.board:
        g = rebuild(g, hand=draw(duplicate_hand(g)))
    return g


@settings(examples(0.5))
@given(positions(), st.randoms(use_true_random=False))
def test_the_mask_is_exact_in_any_position(g, rng):
    """From the start of the turn and along random placements, the mask equals the one
    written from the rules (tests/naive.py's placements)."""
    assume(not g.is_over)
    moves = naive.naive_legal_placements(g.board, g.hand(), opening_len_for(g))
    e = raw_env(players=2)

    def prefer_placing(mask: np.ndarray) -> int:  # a placement step or DONE while one is allowed
        placing = np.flatnonzero(mask[: DONE + 1])
        return int(rng.choice(placing if placing.size else np.flatnonzero(mask)))

    for _ in range(8):
        e.reset(options={"game": g})
        partial, hand = [], g.hand()
        while True:
            a = step_checked(e, e.agent_selection, g, hand, moves, partial, prefer_placing)
            if a >= DONE:
                break
        if a == DONE:
            assert frozenset((r, c, t) for _, r, c, t in partial) in moves


def test_reset_from_a_game():
    g = qc.Game(seed=3)
    g.play_agent("greedy")
    e = raw_env(players=2)
    e.reset(options={"game": g})
    assert e.game is not g and e.game.to_json() == g.to_json() and e.agent_selection == f"player_{g.current_player}"
    for bad in (qc.Game(players=3, seed=1), "not a game"):
        with pytest.raises(ValueError, match="must be a qwirkle_core.Game in play"):
            e.reset(options={"game": bad})
    gym = QwirkleGymEnv(opponents=("greedy",), seat=g.current_player)
    _, info = gym.reset(options={"game": g})
    assert info["game_seed"] == g.seed and gym.game.turn == g.turn


# -- masked random play over many games ---------------------------------------------------


def play_random_games(players, games, seed, window=WINDOW):
    """Masked random play: returns (games terminated, games truncated, steps)."""
    e = env(players=players, window=window)
    rng = np.random.default_rng(seed)
    ended = truncated = steps = 0
    for i in range(games):
        e.reset(seed=seed * 100_000 + i)
        rewards = Counter()
        last = {}
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            rewards[agent] += reward
            last[agent] = (term, trunc)
            if term or trunc:
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            assert legal.size, "a live agent with no legal action"
            e.step(int(rng.choice(legal)))  # the engine refuses any illegal move it completes
            steps += 1
        g = e.unwrapped.game
        assert [rewards[f"player_{p}"] for p in range(players)] == list(g.scores)
        assert g.history and sum(a.points for a in g.history) + 6 * (g.hand_sizes.count(0) > 0) == sum(g.scores)
        if g.is_over:
            ended += 1
            assert all(t and not tr for t, tr in last.values())
        else:
            truncated += 1
            assert all(tr and not t for t, tr in last.values())
    return ended, truncated, steps


@pytest.mark.parametrize("players, games", [pytest.param(2, 120, marks=pytest.mark.slow), (3, 40), (4, 40)])
def test_masked_random_play_ends_every_game_and_rewards_add_up(players, games):
    ended, truncated, steps = play_random_games(players, games * SCALE, seed=players)
    assert (ended, truncated) == (games * SCALE, 0)
    assert steps > 100 * games * SCALE


def test_a_small_window_truncates_instead_of_hiding_moves():
    ended, truncated, _ = play_random_games(2, 30, seed=9, window=24)
    assert ended + truncated == 30 and truncated > 0


# -- a Python best-scoring player through the environment -----------------------------------


def test_encoded_best_moves_replay_the_players_runner():
    for seed in (5, 6):
        e = raw_env(players=3)
        e.reset(seed=seed)
        while not e.game.is_over:
            for a in e.encode(bots.best_move(None, legal_actions(e.game), None)):
                e.step(a)
        g, _ = run_game((bots.best_move,) * 3, seed=seed)
        assert e.game.history == g.history and e.game.scores == g.scores


# -- observations ----------------------------------------------------------------------------


def test_observations_show_the_board_the_own_hand_and_public_counts():
    e = raw_env(players=3)
    e.reset(seed=12)
    rng = random.Random(1)
    while e.game.turn < 15:
        for a in e.encode(rng.choice(legal_actions(e.game))):
            e.step(a)
    g = e.game
    me = g.current_player
    place = next(m for m in g.legal_moves() if len(m.placements) >= 2)
    first = e.encode(place)[0]
    e.step(first)
    r0, c0 = e.origin
    for p in range(3):
        obs = e.observe(f"player_{p}")
        o, view = obs["observation"], g.observation(p)
        assert obs["action_mask"].any() == (p == me)
        board = {}
        for r, c in zip(*np.nonzero(o["board"][:6].any(axis=0))):
            color = int(np.flatnonzero(o["board"][:6, r, c])[0])
            shape = int(np.flatnonzero(o["board"][6:12, r, c])[0])
            board[(int(r) + r0, int(c) + c0)] = color * 6 + shape
        fresh = {(int(r) + r0, int(c) + c0) for r, c in zip(*np.nonzero(o["board"][12]))}
        expected = dict(g.board)
        s, k = divmod(first, W2)
        if p == me:
            cell = (r0 + k // WINDOW, c0 + k % WINDOW)
            expected[cell] = view.hand[s]
            assert fresh == {cell}
        else:
            assert not fresh
        assert board == expected
        hand = [
            int(np.flatnonzero(row[:6])[0]) * 6 + int(np.flatnonzero(row[6:12])[0])
            for row in o["hand"]
            if row[:12].any()
        ]
        assert tuple(hand) == view.hand == g.hand(p)
        assert list(o["hand"][:, 12]) == [int(i < len(hand) and not (p == me and i == s)) for i in range(6)]
        order = [(p + i) % 3 for i in range(3)]
        assert list(o["scores"]) == [g.scores[q] for q in order]
        assert list(o["hand_sizes"]) == [g.hand_sizes[q] for q in order]
        assert int(o["bag_size"][0]) == g.bag_size and tuple(o["unseen"]) == view.unseen


def test_render_modes():
    e = raw_env(players=2, render_mode="ansi")
    e.reset(seed=4)
    assert "empty board" in e.render() and "scores: 0 0 | bag 96" in e.render()
    move = max(e.game.legal_moves(), key=lambda m: m.score)
    actions = e.encode(move)
    e.step(actions[0])
    text = e.render()
    assert "--" in text.splitlines()[-1]  # the tile put down is gone from the hand line
    for a in actions[1:]:
        e.step(a)
    assert all(qc.tile_code(t) in e.render() for t in move.tiles)
    e = raw_env(players=2, render_mode="rgb_array")
    e.reset(seed=4)
    for a in actions:
        e.step(a)
    img = e.render()
    assert img.dtype == np.uint8 and img.shape == (3 * 24, (len(move.tiles) + 2) * 24, 3)
    assert len({tuple(px) for px in img.reshape(-1, 3)}) >= 4  # tiles drawn in colour
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="human")


# -- errors ----------------------------------------------------------------------------------


def test_illegal_actions_are_refused_and_change_nothing():
    e = raw_env(players=2)
    e.reset(seed=8)
    agent = e.agent_selection
    before = e.observe(agent)
    illegal = int(np.flatnonzero(before["action_mask"] == 0)[0])
    with pytest.raises(qc.IllegalMoveError, match=f"action {illegal} .* is not legal now"):
        e.step(illegal)
    with pytest.raises(qc.IllegalMoveError, match="outside"):
        e.step(action_count())
    with pytest.raises(TypeError, match="an action is an int"):
        e.step(1.5)
    after = e.observe(agent)
    assert e.agent_selection == agent
    for key in before["observation"]:
        np.testing.assert_array_equal(before["observation"][key], after["observation"][key])
    np.testing.assert_array_equal(before["action_mask"], after["action_mask"])
    for bad in (dict(window=10), dict(window=119), dict(players=7), dict(max_turns=0)):
        with pytest.raises(ValueError):
            raw_env(**bad)


# -- the Gymnasium wrapper -------------------------------------------------------------------


def test_gym_wrapper_rewards_add_up_and_illegal_actions_are_no_ops():
    rng = np.random.default_rng(0)
    for seat, opponents in ((0, ("greedy",)), (1, ("bots:Best", "random"))):
        e = QwirkleGymEnv(opponents=opponents, seat=seat)
        for i in range(3):
            obs, info = e.reset(seed=i)
            total, illegal_tried = 0.0, 0
            while True:
                if rng.random() < 0.05:
                    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
                    again, reward, term, trunc, info = e.step(bad)
                    assert info["illegal_action"] and reward == 0 and not term
                    np.testing.assert_array_equal(again["board"], obs["board"])
                    illegal_tried += 1
                np.testing.assert_array_equal(e.action_masks(), obs["action_mask"].astype(bool))
                obs, reward, term, trunc, info = e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
                total += reward
                if term or trunc:
                    break
            assert term and not trunc and total == e.game.scores[seat]
            assert {a.player for a in e.game.history} == set(range(len(opponents) + 1))


def test_gym_wrapper_reports_a_broken_opponent():
    e = QwirkleGymEnv(opponents=(bots.Raises,), seat=0)
    obs, _ = e.reset(seed=11)
    with pytest.raises(
        qc.AgentFailure, match="'bots:Raises' \\(seat 1\\) raised RuntimeError: bot exploded \\(game seed 11, turn"
    ):
        for _ in range(500):
            obs, *_ = e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    e = QwirkleGymEnv(opponents=("bots:Slow",), seat=1, time_limit=0.05)
    with pytest.raises(qc.AgentFailure, match="limit of 0.05 s"):
        e.reset(seed=1)


def test_describe_and_origin():
    e = raw_env(players=2)
    e.reset(seed=4)
    hand = e.game.hand()
    r0, c0 = e.origin
    assert (r0, c0) == (-58, -58)  # the empty board's cell (0, 0) is in the middle: 5 + (118 - 11) // 2 = 58
    assert e.describe(2 * W2 + (0 - r0) * WINDOW + (1 - c0)) == f"place slot 2 ({qc.tile_code(hand[2])}) at (0, 1)"
    assert e.describe(DONE) == "done" and e.describe(PASS) == "pass"
    assert e.describe(EXCHANGE0 + 0b101 - 1) == f"exchange slots 0 2 ({qc.tile_code(hand[0])} {qc.tile_code(hand[2])})"


# -- library conventions: gymnasium.make, observation modes, rewards, the move list -------


def test_registered_id_takes_the_options_as_make_arguments():
    from qwirkle_core.env import ENV_ID

    e = gymnasium.make(ENV_ID, opponents=("greedy", "random"), seat=1, reward="margin", actions="moves", k=64)
    inner = e.unwrapped
    assert isinstance(inner, QwirkleGymEnv) and inner.seat == 1 and inner.reward == "margin" and inner.k == 64
    obs, info = e.reset(seed=4)
    assert e.observation_space.contains(obs) and obs["move_features"].shape == (64, inner.move_list()[0].shape[1])
    assert all(isinstance(s, gymnasium.spaces.Box) for s in e.observation_space.spaces.values())
    with pytest.raises(ValueError, match="reward must be one of"):
        gymnasium.make(ENV_ID, reward="score")
    with pytest.raises(ValueError, match="actions must be one of"):
        QwirkleGymEnv(actions="tile")
    with pytest.raises(ValueError, match="observation must be one of"):
        QwirkleGymEnv(observation="box")


@pytest.mark.parametrize("actions", ["tiles", "moves"])
@pytest.mark.parametrize("observation", ["dict", "flat", "nested"])
def test_observation_modes_pass_the_checker_and_hold_the_same_arrays(actions, observation):
    e = QwirkleGymEnv(window=24, actions=actions, observation=observation)
    check_env(e, skip_render_check=True)
    ref = QwirkleGymEnv(window=24, actions=actions, observation="dict")
    obs, _ = e.reset(seed=9)
    flat, _ = ref.reset(seed=9)
    if observation == "nested":
        obs = {**obs["observation"], "action_mask": obs["action_mask"]}
    elif observation == "flat":
        obs = gymnasium.spaces.unflatten(ref.observation_space, obs)
    assert set(obs) == set(flat)
    for key in flat:
        np.testing.assert_array_equal(obs[key], flat[key], err_msg=key)
    np.testing.assert_array_equal(e.action_masks(), flat["action_mask"].astype(bool))


def play_out(e, rng, seed, illegal_every=0.0):
    """Masked random play of one episode: (reward sum, last info, steps)."""
    obs, _ = e.reset(seed=seed)
    total, steps = 0.0, 0
    while True:
        mask = e.action_masks()
        if rng.random() < illegal_every and not mask.all():
            again, reward, term, trunc, info = e.step(int(np.flatnonzero(~mask)[0]))
            assert info["illegal_action"] and reward == 0 and not term and not trunc
        obs, reward, term, trunc, info = e.step(int(rng.choice(np.flatnonzero(mask))))
        total += reward
        steps += 1
        if term or trunc:
            return total, info, steps, term


@pytest.mark.parametrize("reward", ["points", "margin", "win"])
@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_reward_sums_equal_the_final_values_and_the_end_is_reported(reward):
    """Over many episodes (moves mode, opponents in either seat, Python opponents too) the
    rewards add up to the final points, margin or outcome, the opponents' opening
    before the learner's first turn included; info at the end holds the scores, the
    winner and the outcome."""
    rng = np.random.default_rng(7)
    episodes = 0
    for seat, opponents in ((0, ("greedy",)), (1, ("random",)), (2, ("bots:Best", "greedy"))):
        e = QwirkleGymEnv(opponents=opponents, seat=seat, reward=reward, actions="moves")
        for i in range(30 * SCALE):
            total, info, _, term = play_out(e, rng, seed=1000 * seat + i, illegal_every=0.02)
            scores = list(e.game.scores)
            assert term and list(info["final_scores"]) == scores and info["winner"] == e.game.winner
            best_other = max(s for q, s in enumerate(scores) if q != seat)
            outcome = 1 if scores[seat] > best_other else 0 if scores[seat] == best_other else -1
            assert info["outcome"] == outcome
            expected = {"points": scores[seat], "margin": scores[seat] - best_other, "win": outcome}[reward]
            assert total == expected, (seat, i, total, expected)
            episodes += 1
    assert episodes == 90 * SCALE


def test_tile_actions_rewards_add_up_with_margin_and_a_truncating_window():
    rng = np.random.default_rng(3)
    e = QwirkleGymEnv(opponents=("greedy",), seat=1, reward="margin", window=14)
    truncated = 0
    for i in range(12):
        total, info, steps, term = play_out(e, rng, seed=i)
        scores = e.game.scores
        assert total == scores[1] - scores[0]
        if not term:  # truncated: judged as in VectorEnv
            truncated += 1
            assert info["winner"] == -2 and info["outcome"] == 0
    assert truncated >= 1


def test_the_move_list_is_the_kernels_and_plays_its_moves():
    from qwirkle_core.env.movelist import move_list

    e = QwirkleGymEnv(opponents=("greedy",), actions="moves")
    obs, _ = e.reset(seed=12)
    rng = np.random.default_rng(0)
    for _ in range(60):
        features, mask, moves = move_list(e.game)
        np.testing.assert_array_equal(obs["move_features"], features)
        np.testing.assert_array_equal(obs["action_mask"].astype(bool), mask)
        assert e.describe(0) == str(moves[0]) and e.encode(moves[-1]) == [len(moves) - 1]
        i = int(rng.integers(len(moves)))
        before = len(e.game.history)
        obs, _, term, trunc, _ = e.step(i)
        assert e.game.history[before].move == moves[i]
        if term or trunc:
            break
    e.reset(seed=12)
    with pytest.raises(qc.IllegalMoveError, match="not in the move list"):
        e.encode("pass")  # placements are listed at the start: the pass is not
    again, reward, *_, info = e.step(len(e.move_list()[2]))  # past the listed moves
    assert info["illegal_action"] and reward == 0


def test_the_policy_agent_lists_the_same_moves_from_what_its_seat_sees():
    """baselines.game_from_observation: the move list of a game rebuilt from an
    Observation (hidden tiles dealt at random) equals the real game's, in openings,
    middle games and with the bag empty."""
    from qwirkle_core.env.baselines import game_from_observation
    from qwirkle_core.env.movelist import move_list

    checked = 0
    for seed in range(12):
        g = qc.Game(players=2 + seed % 3, seed=seed)
        while not g.is_over:
            if g.turn % 3 == 0 or g.bag_size == 0:
                real = move_list(g)
                for s in (1, 2):
                    seen = move_list(game_from_observation(g.observation(g.current_player), seed=s))
                    # the same moves with the same features (the order may differ: the
                    # board is laid out anew; so, in a full list, may the choice among
                    # placements tied on the lowest score kept)
                    rows = {str(m): tuple(seen[0][j]) for j, m in enumerate(seen[2])}
                    common = [j for j, m in enumerate(real[2]) if str(m) in rows]
                    assert all(rows[str(real[2][j])] == tuple(real[0][j]) for j in common)
                    assert sorted(r[3] for r in rows.values()) == sorted(real[0][: len(real[2]), 3])
                    if len(real[2]) < len(real[1]):
                        assert len(common) == len(real[2]) == len(seen[2])
                checked += 1
            g.play_agent("greedy")
    assert checked > 100


def test_the_shipped_policy_plays_in_a_tournament_and_bad_files_are_refused(tmp_path):
    from qwirkle_core.env.baselines import PolicyAgent, PPOAgent

    result = qc.tournament([PPOAgent, "greedy"], games=2, seed=3, threads=1)
    assert not result.failures and result.games == 2
    with pytest.raises(qc.AgentError, match="cannot load policy weights"):
        PolicyAgent(tmp_path / "missing.npz")
    np.savez(tmp_path / "other.npz", w1=np.zeros((3, 4)))
    with pytest.raises(qc.AgentError, match="cannot load policy weights"):
        PolicyAgent(tmp_path / "other.npz")


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_make_vec_builds_the_vector_env():
    from qwirkle_core.env import ENV_ID, VectorEnv

    envs = gymnasium.make_vec(ENV_ID, num_envs=4, opponents=["greedy"], window=16, reward="margin")
    assert isinstance(envs, VectorEnv) and envs.num_envs == 4 and envs.reward_kind == "margin"
    obs, _ = envs.reset(seed=2)
    assert obs["board"].shape == (4, 13, 16, 16)
    envs.close()
