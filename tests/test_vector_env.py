"""The batched environment (qwirkle_core.env.VectorEnv) against the single-game ones.

Masked random play in lock step: every env of a VectorEnv beside a raw_env (self-play)
or a QwirkleGymEnv (built-in opponents) dealt the same game, given the same actions;
each step's observation, mask, reward and end flags must be equal. The masks are also
checked against the naive reference's placements (tests/naive.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("gymnasium")

import naive  # noqa: E402
from qwirkle_core._kernels.layout import M_CELL, M_N, M_TILE  # noqa: E402
from qwirkle_core._kernels.vector import TURN_MOVES  # noqa: E402
from qwirkle_core.env import QwirkleGymEnv, VectorEnv, raw_env  # noqa: E402


def _flat(obs: dict, i: int) -> dict[str, np.ndarray]:
    return {k: v[i] for k, v in obs.items()}


def _same(vec: dict[str, np.ndarray], one: dict, where: str) -> None:
    if "observation" in one:  # raw_env's nested observation; QwirkleGymEnv's is flat already
        one = {**one["observation"], "action_mask": one["action_mask"]}
    for key, value in one.items():
        np.testing.assert_array_equal(vec[key], value, err_msg=f"{where}: {key}")


def lockstep_self_play(n: int, players: int, window: int, steps: int, seed: int) -> tuple[int, int]:
    """Masked random self-play of ``n`` envs beside ``n`` raw_envs; returns the games
    that ended and the tiles put down in turns of more placements than the kernel keeps
    (``TURN_MOVES``: generated again, then narrowed)."""
    envs = VectorEnv(n, players=players, window=window)
    obs, info = envs.reset(seed=seed)
    singles = [raw_env(players=players, window=window) for _ in range(n)]
    for i, e in enumerate(singles):
        e.reset(seed=int(info["game_seed"][i]))
    ended = big = 0
    for step in range(steps):
        actions = envs.sample_actions()
        pending = envs.state.pending.astype(bool).copy()
        big += int(np.sum((envs.state.nmoves > TURN_MOVES) & (actions < 6 * window * window) & ~pending))
        acting = [e.agent_selection for e in singles]
        for i, e in enumerate(singles):
            _same(_flat(obs, i), e.observe(e.agent_selection), f"step {step} env {i} (before)")
        obs, reward, term, trunc, info = envs.step(actions)
        for i, e in enumerate(singles):
            where = f"step {step} env {i}"
            if pending[i]:  # autoreset: a new game, reward 0
                assert reward[i] == 0 and not term[i] and not trunc[i], where
                e.reset(seed=int(info["game_seed"][i]))
                continue
            e.step(int(actions[i]))
            agent = acting[i]
            assert reward[i] == e.rewards[agent], where
            assert term[i] == e.terminations[agent] and trunc[i] == e.truncations[agent], where
            if term[i] or trunc[i]:
                ended += 1
                _same(_flat(obs, i), e.observe(agent), where + " (end)")
                assert list(info["rewards"][i]) == [e.rewards[a] for a in e.possible_agents], where
                if term[i]:
                    assert list(envs.state.gmeta[i, 16 : 16 + players]) == list(e.game.scores), where
    return ended, big


def lockstep_opponents(n: int, opponents: list[str], window: int, steps: int, seed: int, seat: int = 0) -> int:
    envs = VectorEnv(n, opponents=opponents, window=window, seat=seat)
    obs, info = envs.reset(seed=seed)
    singles = [QwirkleGymEnv(opponents=opponents, window=window, seat=seat) for _ in range(n)]
    single_obs = [e.reset(seed=int(info["game_seed"][i]))[0] for i, e in enumerate(singles)]
    ended = 0
    for step in range(steps):
        for i in range(n):
            _same(_flat(obs, i), single_obs[i], f"step {step} env {i}")
        actions = envs.sample_actions()
        pending = envs.state.pending.astype(bool).copy()
        obs, reward, term, trunc, info = envs.step(actions)
        for i, e in enumerate(singles):
            if pending[i]:
                single_obs[i] = e.reset(seed=int(info["game_seed"][i]))[0]
                continue
            single_obs[i], r, t, tr, _ = e.step(int(actions[i]))
            where = f"step {step} env {i}"
            assert (reward[i], term[i], trunc[i]) == (r, t, tr), where
            if t:
                ended += 1
                assert list(envs.state.gmeta[i, 16 : 16 + len(opponents) + 1]) == list(e.game.scores), where
    return ended


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_self_play_agrees_with_raw_env() -> None:
    ended, big = lockstep_self_play(8, 2, 40, 700, seed=3)
    assert ended > 8 and big > 3


def test_self_play_full_window_four_players() -> None:
    assert lockstep_self_play(4, 4, 118, 500, seed=5)[0] >= 1


def test_greedy_opponent_agrees_with_gym_env() -> None:
    assert lockstep_opponents(6, ["greedy"], 40, 500, seed=7) > 3


@pytest.mark.slow
def test_heuristic_and_random_opponents_second_seat() -> None:
    assert lockstep_opponents(3, ["heuristic", "random"], 118, 300, seed=11, seat=1) >= 1


@pytest.mark.slow
def test_mc_opponent() -> None:
    lockstep_opponents(2, ["mc:playouts=4"], 40, 40, seed=13)


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_search_opponent() -> None:
    """The search agent's playouts are called unlinked (``_jit.External``): the env binds
    them before its first step, and its games are the Gymnasium env's."""
    lockstep_opponents(2, ["search:time_ms=2"], 40, 40, seed=17)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 7),
    players=st.integers(2, 6),
    window=st.sampled_from([11, 13, 21, 33, 57]),
    seed=st.integers(0, 2**64 - 1),
)
def test_odd_shapes_agree(n: int, players: int, window: int, seed: int) -> None:
    lockstep_self_play(n, players, window, 60, seed)


def _unwrap(w: int, lo: int) -> int:
    base = lo - 8
    return base + ((w - base) & 127)


def _position(s, i: int) -> tuple[dict, list[int]]:
    """Env ``i``'s board {(row, col): tile} (true coordinates) and the hand to move."""
    minr, minc = int(s.bmeta[i, 2]), int(s.bmeta[i, 4])
    board = {}
    for k in range(int(s.bmeta[i, 0])):
        cell = int(s.tcells[i, k])
        board[(_unwrap(cell >> 7, minr), _unwrap(cell & 127, minc))] = int(s.board[i, cell])
    p = int(s.gmeta[i, 1])
    return board, [int(t) for t in s.hands[i, p, : s.gmeta[i, 24 + p]]]


@pytest.mark.slow
def test_masks_equal_the_naive_placements() -> None:
    """Every step of masked random play: the mask is the one written from the naive
    reference's placements (tests/naive.py): the tiles that complete some placement
    with those put down so far, DONE, the exchanges the bag allows or the pass."""
    n, w = 4, 21
    envs = VectorEnv(n, players=2, window=w)
    obs, _ = envs.reset(seed=21)
    s = envs.state
    moves: list = [None] * n
    partial: list[list] = [[] for _ in range(n)]
    checked = 0
    for _ in range(250):
        for i in range(n):
            if s.pending[i]:
                continue
            board, hand = _position(s, i)
            if not partial[i]:
                moves[i] = naive.naive_legal_placements(board, hand, naive.largest_group(hand) if not board else None)
            r0, c0 = (int(x) for x in s.origin[i])
            want = np.zeros(envs.n_actions, np.int8)
            put = {(r, c, t) for _, r, c, t in partial[i]}
            used = {q for q, _, _, _ in partial[i]}
            for move in moves[i]:
                if put <= move:
                    for r, c, t in move - put:
                        for q, held in enumerate(hand):
                            if held == t and q not in used:
                                want[q * w * w + (r - r0) * w + (c - c0)] = 1
                    if put and move == put:
                        want[6 * w * w] = 1
            if not partial[i]:
                bag = int(s.gmeta[i, 2])
                if bag and not s.gmeta[i, 5]:
                    for bits in range(1, 64):
                        if bits < 1 << len(hand) and bin(bits).count("1") <= bag:
                            want[6 * w * w + bits] = 1
                elif not moves[i]:
                    want[-1] = 1
            np.testing.assert_array_equal(obs["action_mask"][i], want)
            checked += 1
        actions = envs.sample_actions()
        for i in range(n):
            a = int(actions[i])
            if s.pending[i] or a >= 6 * w * w:
                partial[i] = []
            else:
                q, k = divmod(a, w * w)
                board, hand = _position(s, i)
                partial[i].append((q, int(s.origin[i, 0]) + k // w, int(s.origin[i, 1]) + k % w, hand[q]))
        obs, *_ = envs.step(actions)
    assert checked > 800


_OUTPUTS = ("reward", "rewards", "terminated", "truncated")  # a step's outputs in the state


def _rows(envs: VectorEnv, i: int) -> dict[str, np.ndarray]:
    """Env ``i``'s row of every per-env array of the state (copies). The columns of the
    placements past a move's tiles are zeroed: they are not read, and hold what the
    thread's scratch held (another env's moves) when the list was copied from it."""
    out = {k: np.array(v[i]) for k, v in envs.state._asdict().items() if k != "config"}
    for key in ("moves", "lmoves"):
        rows = out[key]
        unused = np.arange(M_TILE - M_CELL) >= rows[:, M_N, None]
        rows[:, M_CELL:M_TILE][unused] = 0
        rows[:, M_TILE : 2 * M_TILE - M_CELL][unused] = 0
    return out


def _obs_row(obs: dict, i: int) -> dict[str, np.ndarray]:
    return {k: np.array(v[i]) for k, v in obs.items()}


def _same_rows(a: dict, b: dict, where: str, skip: tuple[str, ...] = ()) -> None:
    assert a.keys() == b.keys()
    for key in a:
        if key not in skip:
            np.testing.assert_array_equal(a[key], b[key], err_msg=f"{where}: {key}")


ILLEGAL_SETUPS = {
    "tiles, self-play": dict(players=2, window=40),
    "tiles, greedy": dict(opponents=["greedy"], window=40),
    "moves, self-play": dict(players=3, window=40, actions="moves", reward="margin"),
    "moves, greedy": dict(opponents=["greedy"], window=40, actions="moves", reward="margin"),
}


@pytest.mark.parametrize("setup", list(ILLEGAL_SETUPS))
def test_an_illegal_action_leaves_its_env_as_it_was_and_the_others_step(setup: str) -> None:
    """Two envs get an illegal action (outside the mask; out of range) in a step; a
    second VectorEnv of the same seed steps only legal ones. The illegal envs' game,
    observation and mask are exactly as before (reward 0, neither flag, flagged in the
    info); the others are exactly the reference's. At the next step the refused envs
    take the reference's action: they are then where the reference's were, one step
    late."""
    kw = ILLEGAL_SETUPS[setup]
    n = 6
    envs, ref = VectorEnv(n, **kw), VectorEnv(n, **kw)
    obs, _ = envs.reset(seed=4)
    ref.reset(seed=4)
    moves = kw.get("actions") == "moves"
    for t in range(12):
        actions = envs.sample_actions()
        assert (actions == ref.sample_actions()).all()
        live = np.flatnonzero(envs.state.pending == 0)
        masked = [int(q) for q in live if (obs["action_mask"][q] == 0).any()]  # room for an illegal one
        if t < 3 or live.size < 3 or not masked:
            obs, *_ = envs.step(actions)
            ref.step(actions)
            continue
        i = masked[0]
        j = int(live[live != i][0])
        mask = obs["action_mask"][i]
        bad = actions.copy()
        bad[i] = int(np.flatnonzero(mask == 0)[-1])  # in range, outside the mask
        bad[j] = [-1, envs.n_actions, 2**62][t % 3]  # out of range
        before = {q: (_rows(envs, q), _obs_row(obs, q), envs.action_masks()[q]) for q in (i, j)}
        if moves:
            listed = {q: envs.listed_moves(q) for q in (i, j)}
        obs, reward, term, trunc, info = envs.step(bad)
        r_obs, r_reward, r_term, r_trunc, r_info = ref.step(actions)
        assert info["illegal_action"].dtype == bool and info["_illegal_action"].all()
        np.testing.assert_array_equal(info["illegal_action"], np.isin(np.arange(n), [i, j]))
        for q in (i, j):
            state, seen, legal = before[q]
            _same_rows(_rows(envs, q), state, f"{setup}: env {q}", skip=("reward", "rewards"))
            _same_rows(_obs_row(obs, q), seen, f"{setup}: env {q}'s observation")
            np.testing.assert_array_equal(envs.action_masks()[q], legal)
            assert reward[q] == 0 and not term[q] and not trunc[q]
            assert (info["rewards"][q] == 0).all() and (envs.state.rewards[q] == 0).all()
            assert info["game_seed"][q] == state["game_seeds"] and info["seat"][q] == state["observer"]
            if moves:
                assert envs.listed_moves(q) == listed[q]
        others = [q for q in range(n) if q not in (i, j)]
        for q in others:
            _same_rows(_rows(envs, q), _rows(ref, q), f"{setup}: env {q}")
            _same_rows(_obs_row(obs, q), _obs_row(r_obs, q), f"{setup}: env {q}'s observation")
        np.testing.assert_array_equal(reward[others], r_reward[others])
        np.testing.assert_array_equal(info["rewards"][others], r_info["rewards"][others])
        # the next step: the refused envs take the reference's action of this step
        late = {q: (_rows(ref, q), _obs_row(r_obs, q), r_reward[q]) for q in (i, j)}
        nxt, mixed = ref.sample_actions(), envs.sample_actions()
        assert (mixed[others] == nxt[others]).all()  # the refused envs' draws differ: their states do
        mixed[[i, j]] = actions[[i, j]]
        obs, reward, _, _, info = envs.step(mixed)
        r_obs, r_reward, *_ = ref.step(nxt)
        assert not info["illegal_action"].any()
        for q in (i, j):
            _same_rows(_rows(envs, q), late[q][0], f"{setup}: env {q} a step late")
            _same_rows(_obs_row(obs, q), late[q][1], f"{setup}: env {q}'s observation a step late")
            assert reward[q] == late[q][2]
        for q in others:
            _same_rows(_rows(envs, q), _rows(ref, q), f"{setup}: env {q}")
        return
    raise AssertionError("no step with two envs in play")


def test_an_action_to_an_env_being_reset_is_ignored_not_illegal() -> None:
    """NEXT_STEP autoreset: the step after an episode ended deals the next game whatever
    the action (out of range included), as the reference given legal ones; the
    malformed arrays raise and change nothing."""
    for kw in (dict(players=2, window=40), dict(opponents=["greedy"], window=40, actions="moves")):
        envs, ref = VectorEnv(5, max_turns=6, **kw), VectorEnv(5, max_turns=6, **kw)
        envs.reset(seed=3)
        ref.reset(seed=3)
        checked = 0
        for _ in range(20):
            actions = envs.sample_actions()
            ref.sample_actions()
            ended = envs.state.pending == 1
            bad = np.where(ended, -7, actions)
            obs, reward, term, trunc, info = envs.step(bad)
            r_obs, r_reward, r_term, r_trunc, r_info = ref.step(actions)
            assert not info["illegal_action"].any()
            checked += int(ended.sum())
            for q in range(5):
                _same_rows(_rows(envs, q), _rows(ref, q), f"{kw}: env {q}")
            np.testing.assert_array_equal(reward, r_reward)
            np.testing.assert_array_equal(term, r_term)
            np.testing.assert_array_equal(info["game_seed"], r_info["game_seed"])
        assert checked >= 5
        before = [np.array(a) for a in envs.state]
        with pytest.raises(ValueError, match="shape"):
            envs.step(actions[:4])
        with pytest.raises(TypeError, match="integers"):
            envs.step(actions.astype(float))
        with pytest.raises(TypeError, match="integers"):
            envs.step(actions > 0)
        for a, b in zip(before, envs.state):
            np.testing.assert_array_equal(a, b)


def test_the_check_kernels_against_a_naive_reference() -> None:
    """check_actions and check_listed (the kernels behind step's check) against a
    loop over the masks: legal actions copied, the envs being reset 0 and never
    illegal, the rest illegal (0)."""
    from qwirkle_core._kernels import vector as kv

    rng = np.random.default_rng(5)
    for kw in (dict(players=2, window=16), dict(opponents=["greedy"], window=40, actions="moves")):
        envs = VectorEnv(8, max_turns=5, **kw)
        envs.reset(seed=8)
        s = envs.state
        moves = kw.get("actions") == "moves"
        mask = s.lmask if moves else s.mask
        seen_pending = seen_illegal = seen_legal = 0
        for _ in range(30):
            legal = envs.sample_actions()
            wild = rng.integers(-3, mask.shape[1] + 3, 8)
            actions = np.where(rng.random(8) < 0.5, legal, wild).astype(np.int64)
            active = (rng.random(8) < 0.8).astype(np.uint8) if moves else np.ones(8, np.uint8)
            out, illegal = np.full(8, -99, np.int64), np.ones(8, bool)
            if moves:
                bad = kv.check_listed(s, actions, out, active, illegal)
            else:
                bad = kv.check_actions(s, actions, out, illegal)
            want_out, want_illegal = np.zeros(8, np.int64), np.zeros(8, bool)
            for i, a in enumerate(actions):
                if s.pending[i] or not active[i]:
                    seen_pending += 1
                    continue
                inside = 0 <= a < mask.shape[1] and mask[i, a] == 1 and (not moves or a < s.nlisted[i])
                want_illegal[i] = not inside
                want_out[i] = a if inside else 0
                seen_illegal += not inside
                seen_legal += inside
            np.testing.assert_array_equal(out, want_out)
            np.testing.assert_array_equal(illegal, want_illegal)
            assert bad == want_illegal.sum()
            envs.step(legal)
        assert seen_pending and seen_illegal and seen_legal


def test_results_do_not_depend_on_n_or_threads() -> None:
    def run(n: int, threads: int) -> tuple[np.ndarray, np.ndarray]:
        envs = VectorEnv(n, opponents=["greedy"], window=40, threads=threads)
        envs.reset(seed=9)
        total = np.zeros(n)
        for _ in range(150):
            _, r, *_ = envs.step(envs.sample_actions())
            total += r
        return total[:3], envs.state.game_seeds[:3].copy()

    a, b, c = run(3, 1), run(130, 1), run(130, 2)  # 130 envs: two threads of 65
    for x, y in ((a, b), (b, c)):
        np.testing.assert_array_equal(x[0], y[0])
        np.testing.assert_array_equal(x[1], y[1])


def test_reset_mask_and_seeds() -> None:
    envs = VectorEnv(4, players=2, window=40)
    _, info = envs.reset(seed=2)
    first = info["game_seed"].copy()
    _, info = envs.reset(seed=2)
    np.testing.assert_array_equal(info["game_seed"], first)
    for _ in range(5):
        envs.step(envs.sample_actions())
    kept = [np.array(a[[1, 2]]) for a in envs.state]
    _, info = envs.reset(options={"reset_mask": np.array([True, False, False, True])})
    assert (info["game_seed"][[1, 2]] == first[[1, 2]]).all()
    assert (info["game_seed"][[0, 3]] != first[[0, 3]]).all()
    # the other envs are left exactly as they were: no action taken again, nothing reset
    for name, before, after in zip(envs.state._fields, kept, envs.state):
        np.testing.assert_array_equal(after[[1, 2]], before, err_msg=name)
    with pytest.raises(ValueError, match="reset_mask"):
        envs.reset(options={"reset_mask": [1, 0]})
    with pytest.raises(ValueError, match="unknown reset options"):
        envs.reset(options={"game": None})


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        VectorEnv(0)
    with pytest.raises(ValueError, match="window"):
        VectorEnv(2, window=5)
    with pytest.raises(ValueError, match="players"):
        VectorEnv(2, players=3, opponents=["greedy"])
    with pytest.raises(Exception, match="built-in"):
        VectorEnv(2, opponents=["bots:Best"])
    with pytest.raises(RuntimeError, match="reset"):
        VectorEnv(2).step(np.zeros(2, np.int64))


@pytest.mark.slow
def test_the_training_example_runs(tmp_path) -> None:
    """docs/examples/vector_reinforce.py trains for a few seconds and draws its curve."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "docs" / "examples" / "vector_reinforce.py"
    spec = importlib.util.spec_from_file_location("vector_reinforce", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    rounds = example.train(0.1, envs_n=64)
    assert rounds and all(score > 0 and greedy > 0 for _, score, greedy, _ in rounds)
    assert np.any(rounds[-1][3] != 0)  # the weights moved
    example.plot(rounds, str(tmp_path / "curve.png"))
    assert (tmp_path / "curve.png").stat().st_size > 1000


# -- rewards, the move-list mode, wrappers, pools (issue 58) ---------------------------------


def _values(final: np.ndarray, winner: np.ndarray, kind: str) -> np.ndarray:
    """float[E, P]: each seat's final value of reward ``kind`` from the final scores."""
    final = final.astype(np.int64)
    if kind == "points":
        return final.astype(float)
    other = np.stack([np.delete(final, q, axis=1).max(axis=1) for q in range(final.shape[1])], axis=1)
    if kind == "margin":
        return (final - other).astype(float)
    out = np.sign(final - other).astype(float)
    out[winner == -2] = 0  # truncated: no outcome
    return out


def reward_sums(envs: VectorEnv, episodes: int, seed: int) -> int:
    """Random play until ``episodes`` ended; every ended episode's reward sums (each
    seat's ``info["rewards"]`` column, and the learner's ``reward``) must equal its final
    value. Returns the episodes whose first observation came after an opponent's turn
    (an opening played in the step that dealt the game)."""
    n, players = envs.num_envs, envs.state.scores.shape[1]
    envs.reset(seed=seed)
    seats = np.zeros((n, players))
    own = np.zeros(n)
    late = int((envs.state.gmeta[:, 7] > 0).sum())
    done = 0
    while done < episodes:
        dealt = envs.state.pending.astype(bool)
        _, reward, term, trunc, info = envs.step(envs.sample_actions())
        late += int((dealt & (envs.state.gmeta[:, 7] > 0)).sum())
        assert not info["rewards"][dealt].any() and not reward[dealt].any()
        seats += info["rewards"]
        own += reward
        ended = term | trunc
        if ended.any():
            assert ended.sum() == info["_final_scores"].sum()
            want = _values(info["final_scores"][ended], info["winner"][ended], envs.reward_kind)
            np.testing.assert_array_equal(seats[ended], want)
            if envs.learner >= 0:
                np.testing.assert_array_equal(own[ended], want[:, envs.learner])
            done += int(ended.sum())
            seats[ended] = 0
            own[ended] = 0
    return late


@pytest.mark.parametrize(
    ("actions", "reward", "opponents", "seat", "players"),
    [
        ("moves", "margin", ["greedy"], 1, None),
        ("moves", "win", ["random", "greedy"], 2, None),
        ("moves", "points", None, 0, 3),
        ("moves", "margin", None, 0, 2),
        ("tiles", "margin", ["greedy"], 1, None),
        ("tiles", "win", None, 0, 2),
    ],
)
@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_reward_sums_equal_final_values(actions, reward, opponents, seat, players) -> None:
    """Over 1,000 episodes each (masked random play, W = 118: the games end, none
    outgrows the window): a seat's rewards sum to its final score, margin or outcome,
    the opponents' openings before the learner's first observation included."""
    envs = VectorEnv(256, players=players, opponents=opponents, seat=seat, window=118, actions=actions, reward=reward)
    late = reward_sums(envs, 1000, seed=58)
    if opponents is not None:
        assert late > 200  # the opponents opened before the learner's first observation


def _leave_features(leave: list[int]) -> list[float]:
    groups = [len({t for t in leave if t // 6 == c}) for c in range(6)]
    groups += [len({t for t in leave if t % 6 == s}) for s in range(6)]
    colours = len({t // 6 for t in leave})
    shapes = len({t % 6 for t in leave})
    return [len(leave), colours, shapes, max(groups), len(leave) - len(set(leave))]


def _minus(hand: list[int], tiles: list[int]) -> list[int]:
    left = list(hand)
    for t in tiles:
        left.remove(t)
    return left


def naive_move_list(game) -> tuple[dict, dict]:
    """The reference of :func:`qwirkle_core.env.movelist.move_list`, from the rule text
    (tests/naive.py) and ``Game``'s public API: ``({placement: features}, {sorted
    exchanged tiles: features})`` of every legal placement and the exchanges the
    documented rule lists (the pass: key ``()`` of the second)."""
    board = game.board
    hand = list(game.hand())
    bag = game.bag_size
    seen = {t: list(board.values()).count(t) + hand.count(t) for t in range(36)}
    places = {}
    for move in game.legal_moves():
        cells = {(r, c): t for r, c, t in move.placements}
        after = {**board, **cells}
        lines = {
            tuple(run) for cell in cells for d in naive.DIRECTIONS if len(run := naive.run_through(after, cell, d)) >= 2
        }
        tiles = [t for _, _, t in move.placements]
        leave = _minus(hand, tiles)
        out = bag == 0 and len(tiles) == len(hand)
        qwirkles = fives = fopen = fmine = 0
        for line in lines:
            if len(line) == 6:
                qwirkles += 1
            if len(line) == 5:
                fives += 1
                kept = [after[c] for c in line]
                (missing,) = [t for t in range(36) if t not in kept and naive.naive_is_valid_line([*kept, t])]
                fopen += seen[missing] < 3
                fmine += missing in leave
        points = naive.naive_score(board, move.placements) + 6 * out
        places[frozenset(move.placements)] = [1, 0, 0, points, len(tiles), qwirkles, fives, fopen, fmine, out]
        places[frozenset(move.placements)] += _leave_features(leave)
    sets = []
    if bag and board:
        firsts = sorted(set(hand), key=hand.index)
        dup = _minus(hand, firsts)
        sets = [list(hand), dup]
        for a in range(12):
            keep = [t for t in firsts if (t // 6 if a < 6 else t % 6) == a % 6]
            if keep:
                sets.append(_minus(hand, keep))
        sets = [x for x in sets if 0 < len(x) <= bag]
        if not sets:
            sets = [[t] for t in firsts]
    exchanges = {}
    for x in sets:
        exchanges.setdefault(tuple(sorted(x)), [0, 1, 0, 0, len(x), 0, 0, 0, 0, 0, *_leave_features(_minus(hand, x))])
    if not places and not exchanges:
        exchanges[()] = [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, *_leave_features(hand)]
    return places, exchanges


def check_move_list(game, features: np.ndarray, mask: np.ndarray, moves: list) -> int:
    """The listed moves and features against :func:`naive_move_list`; returns the
    placements that did not fit in the list."""
    from qwirkle_core import MoveKind

    places, exchanges = naive_move_list(game)
    k = features.shape[0]
    assert mask.sum() == len(moves) and mask[: len(moves)].all()
    assert not features[len(moves) :].any()
    listed_x = [m for m in moves if m.kind is not MoveKind.PLACE]
    listed_p = [m for m in moves if m.kind is MoveKind.PLACE]
    keys = [tuple(sorted(m.tiles)) if m.kind is MoveKind.EXCHANGE else () for m in listed_x]
    assert sorted(keys) == sorted(exchanges), (keys, exchanges)
    assert len(listed_p) == min(len(places), k - len(exchanges))
    best = max([f[3] for f in places.values()], default=0)
    for j, m in enumerate(moves):
        want = places[frozenset(m.placements)] if m.kind is MoveKind.PLACE else exchanges[keys[j - len(listed_p)]]
        np.testing.assert_array_equal(features[j], [*want, want[3] - best], err_msg=str(m))
    dropped = set(places) - {frozenset(m.placements) for m in listed_p}
    if dropped:  # the best-scoring placements are kept
        assert min(places[frozenset(m.placements)][3] for m in listed_p) >= max(places[d][3] for d in dropped)
    return len(dropped)


def test_move_list_against_the_naive_reference() -> None:
    """Whole games of random listed moves, 2 to 4 players: every list equals the naive
    reference's, features included, also with room for 32 moves only."""
    import random

    import qwirkle_core as qc
    from qwirkle_core.env.movelist import MoveLister, move_list

    rng = random.Random(58)
    small = MoveLister(32)
    checked = dropped = 0
    for g in range(6):
        game = qc.Game(players=2 + g % 3, seed=100 + g)
        while not game.is_over and game.turn < 400:
            features, mask, moves = move_list(game)
            dropped += check_move_list(game, features, mask, moves)
            if game.turn % 5 == 0:
                dropped += check_move_list(game, *small(game))
            checked += 1
            game.play(moves[rng.randrange(len(moves))])
    assert checked > 300 and dropped > 20


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_moves_mode_plays_the_games_of_game() -> None:
    """VectorEnv(actions="moves") in self-play beside qwirkle_core.Game of the same seeds,
    given the same listed moves: the same lists, features, masks, scores and ends."""
    import qwirkle_core as qc
    from qwirkle_core.env.movelist import move_list

    n = 6
    envs = VectorEnv(n, players=3, window=118, actions="moves", copy=True)
    obs, info = envs.reset(seed=4)
    games = [qc.Game(players=3, seed=int(s)) for s in info["game_seed"]]
    ended = 0
    for _ in range(400):
        pending = envs.state.pending.astype(bool)
        for i, game in enumerate(games):
            if pending[i]:
                assert not obs["action_mask"][i].any()
                continue
            features, mask, moves = move_list(game)
            np.testing.assert_array_equal(obs["move_features"][i], features)
            np.testing.assert_array_equal(obs["action_mask"][i], mask)
            np.testing.assert_array_equal(envs.action_masks()[i], mask)
            assert envs.listed_moves(i) == moves
            assert info["seat"][i] == game.current_player
        actions = envs.sample_actions()
        obs, reward, term, trunc, info = envs.step(actions)
        for i in range(n):
            if pending[i]:  # the step dealt the env's next game
                assert reward[i] == 0 and not term[i]
                games[i] = qc.Game(players=3, seed=int(info["game_seed"][i]))
                continue
            game = games[i]
            mover, before = game.current_player, game.scores[game.current_player]
            game.play(move_list(game)[2][actions[i]])
            assert reward[i] == game.scores[mover] - before
            assert term[i] == game.is_over and not trunc[i]
            if term[i]:
                ended += 1
                assert list(info["final_scores"][i]) == list(game.scores)
                assert info["winner"][i] == game.winner
    assert ended >= 2


def test_gymnasium_vector_wrappers() -> None:
    """RecordEpisodeStatistics, NormalizeReward, FlattenObservation, NormalizeObservation
    (over the flattened observation, since it normalizes one array) and
    DtypeObservation take VectorEnv as it is, in both action modes."""
    from gymnasium.wrappers import vector as wrappers

    for actions in ("moves", "tiles"):
        envs = VectorEnv(8, opponents=["greedy"], window=16, actions=actions, reward="margin")
        stats = wrappers.RecordEpisodeStatistics(envs)
        stack = wrappers.NormalizeObservation(wrappers.FlattenObservation(wrappers.NormalizeReward(stats)))
        obs, _ = stack.reset(seed=3)
        size = sum(int(np.prod(s.shape)) for s in envs.single_observation_space.values())
        assert obs.shape == (8, size) and obs.dtype == np.float32
        returns = np.zeros(8)
        episodes = 0
        for _ in range(200):
            obs, reward, term, trunc, info = stack.step(envs.sample_actions())
            assert np.isfinite(obs).all() and np.isfinite(reward).all()
            returns += envs.state.rewards[np.arange(8), 0]
            if "episode" in info:
                done = info["_episode"]
                np.testing.assert_array_equal(info["episode"]["r"][done], returns[done])
                np.testing.assert_array_equal(info["episode"]["r"][done], info["final_scores"][done] @ [1, -1])
                episodes += int(done.sum())
                returns[done] = 0
        assert episodes >= 8
        typed = wrappers.DtypeObservation(wrappers.FlattenObservation(envs), np.float32)
        obs, _ = typed.reset(seed=1)
        assert obs.dtype == np.float32


def test_pool_of_kernel_agents_and_batched_policies() -> None:
    """A pool mixing a built-in agent and two batched Python policies: each policy is
    called once a round on the whole batch (never per env), sees the observation of the
    seat it plays, and the learner's rewards still sum to its final margins."""
    from qwirkle_core.env.movelist import FEATURE_NAMES

    points = FEATURE_NAMES.index("points")
    calls = []

    def greedy_py(obs, envs):
        calls.append(int(envs.sum()))
        assert (vec.state.gmeta[envs, 1] != 0).all()  # never the learner's seat
        assert (obs["action_mask"][envs].sum(axis=1) > 0).all()
        values = np.where(obs["action_mask"] == 1, obs["move_features"][:, :, points], -1e9)
        return values.argmax(axis=1)

    def first_py(obs, envs):
        calls.append(int(envs.sum()))
        return np.zeros(len(envs), np.int64)

    vec = VectorEnv(128, players=3, window=118, actions="moves", reward="margin", pool=["random", greedy_py, first_py])
    late = reward_sums(vec, 300, seed=5)
    assert late > 30
    assert len(calls) > 100 and np.mean(calls) > 10  # batched: many envs a call
    assert set(np.unique(vec._seat_entry[:, 1:])) == {0, 1, 2}
    with pytest.raises(ValueError, match="pool"):
        VectorEnv(2, pool=["random"])
    with pytest.raises(Exception, match="batched policy"):
        VectorEnv(2, opponents=["bots:Best"], actions="moves")


def test_moves_mode_legal_actions_and_arguments() -> None:
    envs = VectorEnv(4, opponents=["greedy"], window=40, actions="moves")
    envs.reset(seed=2)
    listed, counts = envs.legal_actions()
    assert (counts == envs.state.nlisted).all() and (listed[np.arange(4), counts - 1] == counts - 1).all()
    with pytest.raises(ValueError, match="actions must be"):
        VectorEnv(2, actions="cells")
    with pytest.raises(ValueError, match="reward must be"):
        VectorEnv(2, reward="score")
