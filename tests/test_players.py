"""Python agents (qwirkle_core.batch.players) in games, play_game, tournaments, the command line
and the terminal front end: legal actions, reproducing greedy, and every way an agent
can fail (raises, illegal or malformed answers, too slow)."""

from __future__ import annotations

import io
import itertools
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import bots
import qwirkle_core as qc
from qwirkle_core import cli
from qwirkle_core.batch.players import Player, is_builtin, legal_actions, load_agent, play_games, run_game
from qwirkle_core.cli.play import run_play


def advance_randomly(g, turns, rng):
    for _ in range(turns):
        if g.is_over:
            return
        g.play(rng.choice(legal_actions(g)))


def positions(seeds, players=2):
    """Reachable positions: each seed's game advanced by random actions, checked every turn."""
    for seed in seeds:
        g = qc.Game(players=players, seed=seed)
        rng = random.Random(seed)
        while not g.is_over:
            yield g
            g.play(rng.choice(legal_actions(g)))


# -- legal actions ------------------------------------------------------------------------


def engine_accepts(g, move):
    try:
        g.copy().play(move)
    except qc.IllegalMoveError:
        return False
    return True


def test_legal_actions_are_exactly_the_actions_the_rules_allow():
    checked = Counter()
    r1 = qc.parse_tile("R1")
    stuck = qc.Game.from_position(board={(0, 0): r1}, hands=[[r1], [r1]], bag=[])  # must pass
    for g in itertools.chain([stuck], positions(range(6))):
        actions = legal_actions(g)
        assert len(set(actions)) == len(actions)
        places = [m for m in actions if m.kind == "place"]
        assert places == g.legal_moves() and all(m.score is not None for m in places)
        # exchanges: every subset of hand slots the engine accepts, and nothing else
        hand = g.hand()
        subsets = {
            tuple(sorted(hand[i] for i in idx))
            for k in range(1, 7)
            for idx in itertools.combinations(range(len(hand)), k)
        }
        accepted = {s for s in subsets if engine_accepts(g, qc.Move.exchange(s))}
        assert {m.tiles for m in actions if m.kind == "exchange"} == accepted
        assert (qc.Move.pass_turn() in actions) == engine_accepts(g, qc.Move.pass_turn())
        assert actions[-1].kind != "place" or not accepted  # placements come first
        checked.update(m.kind for m in actions)
    assert checked["place"] > 1000 and checked["exchange"] > 1000 and checked["pass"] >= 1


def test_no_legal_actions_once_the_game_is_over():
    g = qc.Game(seed=2)
    while not g.is_over:
        g.play_agent("greedy")
    assert legal_actions(g) == []


# -- a Python best-scoring agent against the built-in greedy ------------------------------


@pytest.mark.parametrize("players", [2, 3])
def test_python_best_move_reproduces_greedy_where_there_is_no_tie(players):
    compared = tied = 0
    for seed in range(8):
        g = qc.Game(players=players, seed=100 + seed)
        while not g.is_over:
            actions = legal_actions(g)
            mine = bots.best_move(g.observation(), actions, np.random.default_rng(0))
            scores = sorted((m.score for m in actions if m.kind == "place"), reverse=True)
            greedy = g.play_agent("greedy").move
            if len(scores) > 1 and scores[0] == scores[1]:
                tied += 1
                continue
            if scores:
                assert greedy == mine, f"seed {100 + seed}, turn {g.turn - 1}"
                compared += 1
    assert compared > 150 and tied > 10


# -- games with Python agents -------------------------------------------------------------


def test_builtin_agents_through_the_python_runner_play_the_batch_games():
    r = play_games(("greedy", "heuristic"), 12, seed=9)
    batch = qc.simulate(12, agents=("greedy", "heuristic"), seed=9, threads=1)
    assert r.ok.all() and not r.failures
    np.testing.assert_array_equal(r.seeds, batch.seeds)
    np.testing.assert_array_equal(r.scores, batch.scores)
    np.testing.assert_array_equal(r.turns, batch.turns)
    np.testing.assert_array_equal(r.winner, batch.winner)


def test_play_game_with_python_agents_is_reproducible_and_recorded():
    a = qc.play_game(("bots:Randomly", bots.best_move, "greedy"), seed=5)
    b = qc.play_game(("bots:Randomly", bots.best_move, "greedy"), seed=5)
    c = qc.play_game(("bots:Randomly", bots.best_move, "greedy"), seed=6)
    assert a.to_json() == b.to_json() and a.to_json() != c.to_json()
    assert a.agents == ["bots:Randomly", "bots:best_move", "greedy"]
    assert a.final_scores == qc.replay(qc.GameRecord.from_json(a.to_json())).scores
    assert {x.player for x in a.actions} == {0, 1, 2}


def test_a_python_agent_sees_only_its_own_seat():
    bots.Peeks.seen.clear()
    g, labels = run_game((bots.Peeks, "greedy"), seed=4)
    assert labels == ["bots:Peeks", "greedy"] and g.is_over
    assert len(bots.Peeks.seen) == sum(1 for a in g.history if a.player == 0)
    for obs, legal in bots.Peeks.seen:
        assert isinstance(obs, qc.Observation) and obs.player == 0 and obs.current_player == 0
        assert len(obs.hand) == obs.hand_sizes[0]
        assert all(Counter(m.tiles) <= Counter(obs.hand) for m in legal)
        assert sum(obs.unseen) == obs.bag_size + obs.hand_sizes[1]


def test_agent_specs_and_labels(tmp_path, monkeypatch):
    assert is_builtin("greedy") and is_builtin("mc:playouts=32") and is_builtin(("mc", {"playouts": 8}))
    assert is_builtin("mc:depth")  # a malformed built-in spec, not a module
    assert not is_builtin("bots:Best") and not is_builtin("pkg.mod:Cls.inner") and not is_builtin(bots.best_move)
    # the same label from Python as from the command line's spec
    assert Player.of("bots:Best").label == "bots:Best" == Player.of(bots.Best()).label == Player.of(bots.Best).label
    assert Player.of(bots.best_move).label == "bots:best_move" == Player.of("bots:best_move").label
    assert Player.of("mc:playouts=8").label == "mc:playouts=8"
    with pytest.raises(ValueError, match="cannot load agent 'nosuchmodule:X': ModuleNotFoundError"):
        Player.of("nosuchmodule:X")
    with pytest.raises(ValueError, match="bots has no attribute 'Nope'"):
        load_agent("bots:Nope")
    with pytest.raises(TypeError, match="an agent is a built-in name"):
        Player.of("bots:Peeks.seen")
    with pytest.raises(ValueError, match="unknown agent 'grandmaster'"):
        Player.of("grandmaster")
    (tmp_path / "badbots.py").write_text("raise ImportError('half written')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="cannot load agent 'badbots:X': ImportError: half written"):
        Player.of("badbots:X")


# -- failures -----------------------------------------------------------------------------


def third_turn_of_seat0(seed):
    """The turn at which seat 0 (playing best_move) is asked for its third move."""
    g, _ = run_game((bots.best_move, "greedy"), seed=seed)
    return [i for i, a in enumerate(g.history) if a.player == 0][2]


@pytest.mark.parametrize(
    "agent, kind, detail",
    [
        (bots.Raises, "raised", "raised RuntimeError: bot exploded"),
        (bots.Illegal, "illegal", "returned the illegal move"),
        (bots.Malformed, "malformed", "(str), not a qwirkle_core.Move"),
    ],
)
def test_a_broken_agent_is_named_with_the_seed_and_turn(agent, kind, detail):
    with pytest.raises(qc.AgentFailure) as info:
        qc.play_game((agent, "greedy"), seed=11)
    e = info.value
    assert (e.agent, e.seat, e.seed, e.kind) == (f"bots:{agent.__name__}", 0, 11, kind)
    first = next(i for i, a in enumerate(run_game((bots.best_move, "greedy"), seed=11)[0].history) if a.player == 0)
    assert e.turn == (third_turn_of_seat0(11) if agent is bots.Raises else first)
    assert str(e).startswith(f"agent 'bots:{agent.__name__}' (seat 0) ") and detail in str(e)
    assert str(e).endswith(f"(game seed 11, turn {e.turn})")


def test_a_slow_agent_times_out_and_a_hung_one_is_interrupted():
    with pytest.raises(
        qc.AgentFailure, match=r"took .* over the limit of 0.05 s|more than the limit of 0.05 s"
    ) as info:
        qc.play_game((bots.Slow, "greedy"), seed=3, time_limit=0.05)
    assert info.value.kind == "timeout" and info.value.seed == 3
    with pytest.raises(qc.AgentFailure, match="more than the limit of 0.2 s") as info:
        run_game(("greedy", bots.Hangs), seed=3, time_limit=0.2)
    assert info.value.kind == "timeout" and info.value.seat == 1
    with pytest.raises(ValueError, match="time_limit must be a positive number"):
        run_game(("greedy", "greedy"), seed=3, time_limit=0)


class Quick(bots.Slow):
    delay = 0.002


def test_a_slowish_agent_within_the_limit_plays_normally():
    g, _ = run_game((Quick, "greedy"), seed=3, time_limit=1.0)
    assert g.is_over


def test_play_games_records_failures_and_goes_on():
    r = play_games((bots.Raises, "bots:Best"), 6, seed=2)
    assert not r.ok.any() and len(r.failures) == 6
    assert [f.seed for f in r.failures] == [int(s) for s in r.seeds]
    assert all(f.agent == "bots:Raises" and f.kind == "raised" and f.turn > 0 for f in r.failures)
    r = play_games(("bots:Best", "greedy"), 6, seed=2)
    assert r.ok.all() and (r.scores.sum(axis=1) > 200).all() and (r.moves > 10).all() and (r.seconds > 0).all()


def test_worker_processes_give_the_same_games():
    one = play_games(("bots:Best", "greedy", bots.Raises), 6, seed=21, processes=1)
    two = play_games(("bots:Best", "greedy", bots.Raises), 6, seed=21, processes=2)
    np.testing.assert_array_equal(one.scores, two.scores)
    np.testing.assert_array_equal(one.ok, two.ok)
    assert [str(f) for f in one.failures] == [str(f) for f in two.failures] and one.failures
    with pytest.raises(ValueError, match="cannot be sent to worker processes"):
        play_games((lambda o, m, r: m[0], "greedy"), 4, processes=2)
    # an agent of an interactive session (here python -c) pickles, but no worker could import it
    code = "from qwirkle_core.batch.players import play_games\ndef best(o, m, r):\n    return m[0]\nplay_games((best, 'greedy'), 4, processes=2)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert (
        r.returncode == 1
        and "ValueError: agent 'best' cannot be sent to worker processes (it is defined in an interactive session"
        in r.stderr
    )


# -- tournaments ----------------------------------------------------------------------------


def test_tournament_with_python_agents_reports_broken_ones():
    r = qc.tournament(["bots:Best", "greedy", bots.Raises, "bots:Illegal"], games=4, seed=1, threads=1)
    matches = {(m.first, m.second): m for m in r.matches}
    assert matches[("bots:Best", "greedy")].games == 4
    assert all(m.games == 0 for (a, b), m in matches.items() if "bots:Raises" in (a, b) or "bots:Illegal" in (a, b))
    by_agent = Counter(f.agent for f in r.failures)
    assert by_agent == {"bots:Raises": 8, "bots:Illegal": 12}  # against Illegal, Illegal fails first
    assert {f.kind for f in r.failures} == {"raised", "illegal"}
    assert r.seconds_per_move["bots:Best"] > 0 and r.seconds_per_move["greedy"] > 0
    assert np.isnan(matches[("bots:Raises", "bots:Illegal")].win_rate)


def test_tournament_in_worker_processes_equals_the_one_in_this_process():
    agents = ["bots:Best", "greedy", "bots:Raises"]
    one = qc.tournament(agents, games=6, seed=4, threads=1, timing_games=1, timing_seconds=0)
    two = qc.tournament(agents, games=6, seed=4, threads=2, timing_games=1, timing_seconds=0)
    for m, n in zip(one.matches, two.matches, strict=True):
        assert (m.first, m.second, m.games) == (n.first, n.second, n.games)
        np.testing.assert_array_equal(m.scores_first, n.scores_first)
        np.testing.assert_array_equal(m.scores_second, n.scores_second)
    assert [str(f) for f in one.failures] == [str(f) for f in two.failures] and len(one.failures) == 12
    # the deals are the batch's games 0..2 from both seats
    best_greedy = next(m for m in one.matches if (m.first, m.second) == ("bots:Best", "greedy"))
    ab = play_games(("bots:Best", "greedy"), 3, seed=4)
    ba = play_games(("greedy", "bots:Best"), 3, seed=4)
    np.testing.assert_array_equal(best_greedy.scores_first, np.concatenate([ab.scores[:, 0], ba.scores[:, 1]]))


def test_play_games_plays_any_range_of_the_batch():
    r = play_games(("greedy", "random", "heuristic"), 5, seed=7, start=11)
    batch = qc.simulate(5, agents=("greedy", "random", "heuristic"), seed=7, start=11, threads=1)
    np.testing.assert_array_equal(r.seeds, batch.seeds)
    np.testing.assert_array_equal(r.scores, batch.scores)
    whole = play_games(("bots:Best", "greedy"), 6, seed=7)
    part = play_games(("bots:Best", "greedy"), 2, seed=7, start=4)
    np.testing.assert_array_equal(whole.scores[4:], part.scores)


def test_an_interrupted_tournament_with_a_python_agent_keeps_only_finished_deals():
    calls = []

    def stop(done, total):
        calls.append(done)
        if len(calls) == 3:
            raise KeyboardInterrupt

    t = qc.tournament(["bots:Best", "greedy"], games=20_000, seed=3, threads=1, progress=stop)
    (m,) = t.matches
    assert t.interrupted and "greedy" not in t.seconds_per_move and t.seconds_per_move["bots:Best"] > 0
    assert m.games == calls[-1] and 0 < m.games < 20_000 and m.games % 2 == 0
    deals = m.games // 2
    ab = play_games(("bots:Best", "greedy"), deals, seed=3)
    np.testing.assert_array_equal(m.scores_first[:deals], ab.scores[:, 0])  # both seats of each finished deal
    # Ctrl-C while a Python agent thinks: the round it was in is lost, the finished ones stay
    bots.Interrupts.calls, bots.Interrupts.after = 0, 150
    t = qc.tournament(["bots:Interrupts", "greedy"], games=20_000, seed=3, threads=1)
    (m,) = t.matches
    assert t.interrupted and not t.failures and m.games % 2 == 0 and 0 < m.games < 20_000
    deals = m.games // 2
    np.testing.assert_array_equal(
        m.scores_first[:deals], play_games(("bots:Best", "greedy"), deals, seed=3).scores[:, 0]
    )


def test_tournament_time_limit():
    r = qc.tournament([Quick, "bots:Slow", "greedy"], games=2, seed=1, threads=1, time_limit=0.1)
    assert {(m.first, m.second): m.games for m in r.matches} == {
        ("test_players:Quick", "bots:Slow"): 0,
        ("test_players:Quick", "greedy"): 2,
        ("bots:Slow", "greedy"): 0,
    }
    assert {f.agent for f in r.failures} == {"bots:Slow"} and {f.kind for f in r.failures} == {"timeout"}
    assert r.seconds_per_move["test_players:Quick"] > 0.002


def test_cli_tournament_with_python_agents(monkeypatch, capsys):
    monkeypatch.chdir(bots.__file__.rsplit("/", 1)[0])
    argv = ["tournament", "--agents", "bots:Best,greedy,bots:Raises", "--games", "2", "--seed", "3", "--threads", "1"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "bots:Best" in out and "Traceback" not in out
    assert (
        "4 games not counted: agent 'bots:Raises' (seat " in out
        and "raised RuntimeError: bot exploded (game seed " in out
    )
    assert cli.main(argv[:2] + ["bots:Slow,greedy", "--games", "2", "--threads", "1", "--time-limit", "0.05"]) == 0
    assert "2 games not counted: agent 'bots:Slow'" in capsys.readouterr().out
    assert cli.main(["tournament", "--agents", "nosuch:Bot,greedy"]) == 2
    assert "cannot load agent 'nosuch:Bot'" in capsys.readouterr().err
    assert cli.main(["simulate", "--agents", "bots:Best,greedy"]) == 2
    assert "simulate runs built-in agents only" in capsys.readouterr().err


def test_ctrl_c_stops_a_tournament_in_worker_processes_and_leaves_no_process():
    """Ctrl-C at the terminal (SIGINT to the whole process group): the workers ignore it,
    the command stops within a round, reports the finished deals, exits 130, and no
    process of the group is left."""
    tests = Path(bots.__file__).parent
    env = {**os.environ, "FORCE_COLOR": "1", "COLUMNS": "150"}
    argv = ["tournament", "--agents", "bots:Best,greedy", "--games", "100000", "--threads", "2", "--seed", "5"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "qwirkle_core.cli", *argv],
        cwd=tests,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.extend(iter(lambda: proc.stdout.read1(65536), b"")))
    reader.start()
    deadline = time.monotonic() + 240
    while not re.search(rb" [1-9][0-9]*/100000", b"".join(out)):
        assert proc.poll() is None and time.monotonic() < deadline, b"".join(out)[-2000:]
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        assert proc.wait(30) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    reader.join()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(out).decode())
    assert "INTERRUPTED" in text and "interrupted: only finished deals (both seats) are counted" in text
    deals, games = (
        int(x.replace(",", ""))
        for x in re.search(r"INTERRUPTED: ([\d,]+) finished deals \(([\d,]+) games\)", text).groups()
    )
    assert games == 2 * deals > 0
    counted = int(re.search(r"│ +([\d,]+) │ +[\d.]+% \[", text.split("ties")[1]).group(1).replace(",", ""))
    assert counted == games and "Traceback" not in proc.stderr.read().decode()
    for _ in range(100):  # the fork server and the workers end with the command
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("processes of the command are still running")


def test_cli_refuses_python_agents_where_they_cannot_play(monkeypatch, capsys):
    monkeypatch.chdir(bots.__file__.rsplit("/", 1)[0])
    assert cli.main(["tournament", "--agents", "bots:Best,greedy", "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert (
        "'bots:Best' is a Python agent; a tournament on a cluster plays built-in agents only" in err
        and err.count("\n") == 1
    )
    assert cli.main(["tournament", "--agents", "bots:Best,greedy", "--time-limit", "0"]) == 2
    assert "--time-limit: must be a positive number of seconds" in capsys.readouterr().err
    assert cli.main(["simulate", "--agents", "greedy,bots:Best"]) == 2
    err = capsys.readouterr().err
    assert "'bots:Best': simulate runs built-in agents only" in err and err.count("\n") == 1


# -- qwirkle play ---------------------------------------------------------------------------


def scripted(seed, opponent):
    """Lines for a human (seat 0) playing greedy moves against ``opponent`` (seat 1)."""
    g = qc.Game(seed=seed)
    seat = Player.of(opponent).seat(g.seed, 1)
    lines = []
    while not g.is_over:
        if g.current_player == 0:
            move = g.copy().play_agent("greedy").move
            g.play(move)
            lines.append(str(move))
        else:
            seat.play(g)
    return lines, g


def play(lines, **kwargs):
    out = io.StringIO()
    game = run_play(
        input_stream=io.StringIO("".join(f"{line}\n" for line in lines)), output_stream=out, color=False, **kwargs
    )
    return game, out.getvalue()


def test_play_against_a_python_agent():
    lines, expected = scripted(8, "bots:Best")
    game, out = play(lines + ["quit"], seed=8, opponent="bots:Best")
    assert game.is_over and game.history == expected.history
    assert "bots:Best plays seat 1" in out and "bots:Best (seat 1) plays " in out


def test_play_against_broken_and_slow_agents():
    lines, _ = scripted(8, "bots:Best")
    with pytest.raises(qc.AgentFailure, match="raised RuntimeError: bot exploded") as info:
        play(lines, seed=8, opponent=bots.Raises)
    assert (info.value.seat, info.value.seed) == (1, 8)
    with pytest.raises(qc.AgentFailure, match="limit of 0.05 s") as info:
        play(lines, seed=8, opponent="bots:Slow", time_limit=0.05)
    assert info.value.kind == "timeout"
    game, _ = play(lines + ["quit"], seed=8, opponent=Quick, time_limit=1.0)
    assert game.is_over


def test_cli_play_with_a_broken_agent_is_one_line(monkeypatch, capsys):
    monkeypatch.chdir(bots.__file__.rsplit("/", 1)[0])
    lines, _ = scripted(8, "bots:Best")
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{line}\n" for line in lines)))
    assert cli.main(["play", "--opponent", "bots:Raises", "--seed", "8", "--no-color"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "qwirkle: error: agent 'bots:Raises' (seat 1) raised RuntimeError: bot exploded (game seed 8, turn "
    )
    assert err.count("\n") == 1
    assert cli.main(["play", "--opponent", "bots:Nope"]) == 2
    assert "bots has no attribute 'Nope'" in capsys.readouterr().err


def test_simulate_points_python_agents_elsewhere():
    with pytest.raises(
        TypeError, match="simulate runs built-in agents inside numba; play Python agents with qc.play_game"
    ):
        qc.simulate(10, agents=(bots.best_move, "greedy"))


def test_python_agents_are_refused_under_qwirkle_cubes_rules(monkeypatch, capsys):
    """A Python agent acts on the tile game's actions; Cubes games refuse it up front,
    in every entry point, with a message naming the agent (and built-in ones still play)."""
    cubes = qc.Rules(variant="cubes")
    with pytest.raises(ValueError, match="built-in agents only.*best_move"):
        play_games([bots.best_move, "greedy"], 2, seed=1, rules=cubes)
    with pytest.raises(ValueError, match="built-in agents only"):
        run_game(["greedy", bots.Best], seed=1, rules=cubes)
    with pytest.raises(ValueError, match="built-in agents only"):
        qc.tournament([bots.Best, "greedy"], games=2, seed=1, rules=cubes)
    with pytest.raises(ValueError, match="built-in agents only"):
        run_play(opponent=bots.Best, input_stream=io.StringIO(""), output_stream=io.StringIO(), variant="cubes")
    built_in = play_games(["greedy", "greedy"], 2, seed=1, rules=cubes)
    assert built_in.ok.all() and built_in.scores.shape == (2, 2) and built_in.scores.min() > 0
    monkeypatch.chdir(bots.__file__.rsplit("/", 1)[0])
    assert (
        cli.main(["tournament", "--agents", "bots:Best,greedy", "--games", "2", "--variant", "cubes", "--no-progress"])
        == 2
    )
    err = capsys.readouterr().err
    assert "built-in agents only" in err and "Traceback" not in err
    assert cli.main(["play", "--opponent", "bots:Best", "--variant", "cubes"]) == 2
    assert "'bots:Best' is a Python agent; Qwirkle Cubes" in capsys.readouterr().err
