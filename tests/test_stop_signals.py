"""SIGTERM and SIGHUP are handled as Ctrl-C by every long command (issue 67, point 1).

A scheduler, ``timeout``, a container stop or a cluster preemption sends SIGTERM. Each
test sends the real signal to a real ``qwirkle`` process (or script) and checks what a
Ctrl-C keeps is kept: the finished games written with the summary, no hidden temporary
file left, and the exit status 128 + the signal's number (143, 129; 130 for Ctrl-C).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import qwirkle_core as qc
from qwirkle_core import stopping
from qwirkle_core.batch.learn import LeaveTable
from qwirkle_core.batch.rows import read_rows
from test_hardening import Running

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _hangups_at_their_default():
    """A run started with nohup ignores SIGHUP, and the processes it starts inherit that
    (they keep it ignored, as nohup asks): the tests need what a terminal gives."""
    old = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGHUP, old)


def test_a_stop_signal_raises_keyboard_interrupt_inside_and_nothing_outside():
    before = signal.getsignal(signal.SIGTERM)
    with stopping.stop_signals():
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler runs at the next bytecode: never reached
        assert stopping.stopped_by() == "SIGTERM" and stopping.exit_status() == 143
    assert signal.getsignal(signal.SIGTERM) is before
    with stopping.stop_signals():  # a new run starts with no stop recorded
        assert stopping.stopped_by() == "Ctrl-C" and stopping.exit_status() == 130
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(5)
        assert stopping.exit_status() == 129


def test_an_ignored_signal_stays_ignored():
    """`nohup qwirkle ...` keeps running when the terminal closes."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    with stopping.stop_signals():
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGHUP)
        time.sleep(0.05)
        assert stopping.stopped_by() == "Ctrl-C"
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN


def test_a_stop_signal_calls_the_ctrl_c_handler_in_force():
    """A SIGINT handler installed for a while (the Dask client's deferral) sees SIGTERM
    as it would see Ctrl-C: no KeyboardInterrupt where it is not wanted."""
    seen: list[int] = []
    old = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        with stopping.stop_signals():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
    finally:
        signal.signal(signal.SIGINT, old)
    assert seen == [signal.SIGINT]


@pytest.mark.parametrize(
    "sig, status, word", [("SIGTERM", 143, "SIGTERM"), ("SIGHUP", 129, "SIGHUP"), ("SIGINT", 130, "Ctrl-C")]
)
def test_simulate_keeps_the_finished_games_on_a_stop_signal(sig, status, word, tmp_path):
    """The report's case: `qwirkle simulate --games 1000000 --out part.csv`, then
    SIGTERM, left no summary, no part.csv and a hidden .part.csv.XXXX.part file."""
    dest = tmp_path / "part.csv"
    run = Running(
        "simulate", "--games", "1000000", "--agents", "greedy,random", "--seed", "3", "--out", str(dest), cwd=tmp_path
    )
    run.wait_for(r"games .*[1-9][\d,]*/1000000")
    run.proc.send_signal(getattr(signal, sig))
    assert run.finish(60) == status, run.stderr
    text = " ".join(run.stdout.split())
    kept = int(
        re.search(r"interrupted: kept the ([\d,]+) of 1,000,000 games finished before (\S+)", text)[1].replace(",", "")
    )
    assert f"finished before {word}" in text and 0 < kept < 1_000_000
    assert f"{kept:,} games, seed 3" in text and "win rate" in text  # the summary
    assert f"wrote {kept:,} rows to {dest}" in text
    assert sorted(os.listdir(tmp_path)) == ["part.csv"]  # no hidden .part file
    rows = read_rows(dest)
    assert len(rows) == kept
    np.testing.assert_array_equal(rows.scores, qc.simulate(kept, agents=("greedy", "random"), seed=3).scores)
    assert "Traceback" not in run.stderr


def test_tournament_reports_the_finished_deals_on_sigterm():
    run = Running("tournament", "--agents", "greedy,random", "--games", "20000000", "--seed", "5")
    run.wait_for(r"games .*[1-9][\d,]*/20000000")
    run.proc.send_signal(signal.SIGTERM)
    assert run.finish(30) == 143, run.stderr
    out = run.stdout
    assert "interrupted: only finished deals (both seats) are counted" in out
    deals, games = (
        int(x.replace(",", ""))
        for x in re.search(r"INTERRUPTED: ([\d,]+) finished deals \(([\d,]+) games\)", out).groups()
    )
    assert games == 2 * deals > 0 and "Traceback" not in run.stderr


def test_learn_keeps_the_last_finished_iteration_on_sigterm(tmp_path):
    out = tmp_path / "t.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "qwirkle_core.cli", "learn", "--seed", "5", "--games", "300", "--iterations", "1000"]
        + ["--threads", "1", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    lines = []
    for line in proc.stdout:  # plain lines (not a terminal): one per finished iteration
        lines.append(line)
        if line.startswith("iteration 2/1000"):
            break
    proc.send_signal(signal.SIGTERM)
    rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    text = " ".join(("".join(lines) + rest).split())
    done = int(re.search(r"wrote .*t\.json: (\d+) iteration\(s\)", text)[1])
    assert done >= 2 and "(interrupted: the last finished iteration)" in text
    assert LeaveTable.load(out).provenance["iterations"] == done
    assert sorted(os.listdir(tmp_path)) == ["t.json"] and "Traceback" not in err


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_analyse_stops_on_sigterm_with_one_line_and_no_file(tmp_path):
    record = tmp_path / "game.json"
    record.write_text(qc.play_game(("greedy", "greedy"), seed=4).to_json())
    run = Running("analyse", str(record), "--playouts", "5000", "--json", str(tmp_path / "a.json"), cwd=tmp_path)
    run.wait_for(r"actions .*\d+/\d+")
    run.proc.send_signal(signal.SIGTERM)
    assert run.finish(60) == 143
    assert run.stderr == "qwirkle: stopped by SIGTERM\n"
    assert sorted(os.listdir(tmp_path)) == ["game.json"]


@pytest.mark.slow
def test_train_ppo_keeps_the_weights_on_sigterm(tmp_path):
    """docs/examples/train_ppo.py: SIGTERM writes final.npz (the weights reached, a file
    the net agent plays) and exits 143."""
    pytest.importorskip("sb3_contrib")
    from qwirkle_core.batch.scorer import read_weights

    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "docs/examples/train_ppo.py"), "--minutes", "100", "--envs", "8"]
        + ["--n-steps", "16", "--batch-size", "32", "--pool", "greedy", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 240
    log = out / "progress.csv"
    while not log.exists() or len(log.read_text().splitlines()) < 3:  # two updates logged
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    assert not (out / "final.npz").exists()
    proc.send_signal(signal.SIGTERM)
    stdout, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "stopped by SIGTERM: kept what was done" in stdout
    arrays, provenance = read_weights(out / "final.npz")
    assert provenance["env_steps"] >= 256 and np.isfinite(arrays["w1"]).all()
    assert qc.play_game((f"net:weights={out / 'final.npz'}", "greedy"), seed=1).final_scores[0] > 0
