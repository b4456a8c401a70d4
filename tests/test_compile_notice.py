"""The compile notice (qwirkle_core._compiling): a first call that compiles says so once,
with an estimate; a scope speaks for its kernels once; the switch silences it; the
command line prints it and plain progress lines when stdout is not a terminal.

The mechanism is tested with small kernels of the test's own (numba, no disk cache);
one test compiles a real batch from an empty cache in a fresh process (about 10 s).
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import numba
import pytest

from qwirkle_core import _compiling

SRC = Path(__file__).resolve().parent.parent / "src"


def _kernel():
    """A fresh numba function (nothing compiled yet, no disk cache)."""

    @numba.njit(cache=False)
    def add_one(x):
        return x + 1

    return add_one


def _notices(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "qwirkle_core.compile"]


@pytest.fixture(autouse=True)
def _loud(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QWIRKLE_QUIET_COMPILE", raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))  # an idle machine: fixed words


def _said(what: str, cpu: int) -> str:
    """The notice of a compile of ``cpu`` CPU-seconds (an estimate) on any machine."""
    return rf"qwirkle-core: compiling {re.escape(what)}, about \d+ to \d+ s \({cpu} CPU-s(, the machine is busy)?\); cached afterwards"


def test_a_scope_says_so_once_with_its_estimate(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="qwirkle_core.compile")
    first, second = _kernel(), _kernel()
    with _compiling.compiling("the test kernels", 12.4):
        assert first(1) == 2  # compiles: the notice
        assert second(1.5) == 2.5  # compiles too: no second notice in the same scope
        assert first(2) == 3  # compiled already
    assert _notices(caplog) == [
        "qwirkle-core: compiling the test kernels, about 9 to 19 s (12 CPU-s); cached afterwards"
    ]
    with _compiling.compiling("the test kernels", 12.4):
        first(3)  # nothing compiles: nothing said
    assert len(_notices(caplog)) == 1


def test_the_outermost_scope_speaks_and_a_lazy_estimate_is_asked_only_on_a_compile(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="qwirkle_core.compile")
    asked = []

    def notice() -> tuple[str, float | None]:
        asked.append(1)
        return "the outer kernels", 3.0

    k = _kernel()
    with _compiling.compiling(notice):
        with _compiling.compiling("the inner kernels", 1.0):
            k(1)
    assert _notices(caplog) == [
        "qwirkle-core: compiling the outer kernels, about 2 to 4 s (3 CPU-s); cached afterwards"
    ]
    assert asked == [1]
    with _compiling.compiling(notice):
        k(2)
    assert asked == [1]  # nothing compiled: not asked


def test_a_known_kernel_says_so_once_outside_a_scope(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.WARNING, logger="qwirkle_core.compile")
    k = _kernel()
    name = f"{k.py_func.__module__.rsplit('.', 1)[-1]}.{k.py_func.__qualname__}"
    monkeypatch.setitem(_compiling.KERNELS, name, ("the add-one kernel", 7.0))
    monkeypatch.setattr(_compiling, "_said", set())
    k(1)
    k(1.5)  # another signature compiles: said already
    assert _notices(caplog) == [
        "qwirkle-core: compiling the add-one kernel, about 5 to 10 s (7 CPU-s); cached afterwards"
    ]
    _kernel()(1)  # an unknown (small) kernel says nothing
    assert len(_notices(caplog)) == 1


def test_a_scope_that_spoke_silences_the_group_of_its_words(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """VectorEnv's construction speaks for its mode in a scope; its step kernel,
    compiled later outside any scope, is of the same words' group: said already."""
    caplog.set_level(logging.WARNING, logger="qwirkle_core.compile")
    first, later = _kernel(), _kernel()
    name = f"{later.py_func.__module__.rsplit('.', 1)[-1]}.{later.py_func.__qualname__}"
    monkeypatch.setitem(_compiling.KERNELS, name, ("the test group", 7.0))
    monkeypatch.setattr(_compiling, "_said", set())
    with _compiling.compiling("the test group", 9.0):
        first(1)
    later(2.5)  # its group's words were said by the scope
    assert _notices(caplog) == ["qwirkle-core: compiling the test group, about 7 to 14 s (9 CPU-s); cached afterwards"]


def test_each_vector_environment_step_kernel_has_its_modes_estimate() -> None:
    """The step kernels VectorEnv picks (each action mode, each set of opponents) are in
    KERNELS, and vector_notice gives their group; the move-list mode's is its own."""
    pytest.importorskip("gymnasium")
    from qwirkle_core._kernels import vector as kv

    names = [n for n in dir(kv) if n.startswith(("step_", "moves_")) and callable(getattr(kv, n))]
    assert sorted(names) == ["moves_any", "moves_plain", "step_any", "step_heuristic", "step_plain", "step_self"]
    for n in names:
        assert _compiling.vector_notice(getattr(kv, n)) == _compiling.KERNELS[f"vector.{n}"]
    tiles = _compiling.vector_notice(kv.step_plain)
    moves, moves_any = _compiling.vector_notice(kv.moves_plain), _compiling.vector_notice(kv.moves_any)
    assert len({tiles[0], moves[0], moves_any[0]}) == 3 and "move-list" in moves[0]
    assert tiles[1] < moves[1] < moves_any[1]  # measured: 80.9, 91.2 and 141.9 CPU-s on one machine


def test_the_switch_and_the_quiet_scope_silence_it(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.WARNING, logger="qwirkle_core.compile")
    monkeypatch.setenv("QWIRKLE_QUIET_COMPILE", "1")
    with _compiling.compiling("the test kernels", 1.0):
        _kernel()(1)
    monkeypatch.delenv("QWIRKLE_QUIET_COMPILE")
    with _compiling.quiet(), _compiling.compiling("the test kernels", 1.0):
        _kernel()(1)
    assert _notices(caplog) == []


def _fresh_env(tmp_path: Path, name: str) -> dict[str, str]:
    cache = tmp_path / name
    cache.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("QWIRKLE_QUIET_COMPILE", "QWIRKLE_NO_CACHE")}
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(SRC), QWIRKLE_COMPILE_PROCESSES="1")
    return env


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_a_first_simulate_says_so_once_on_stderr_from_an_empty_cache(tmp_path: Path) -> None:
    """The real thing: a fresh process, an empty kernel cache, no logging configured
    (Python's last-resort handler prints the notice on stderr)."""
    script = "import qwirkle_core as qc\nfor _ in range(3):\n    qc.simulate(10, threads=1)\nprint('done')\n"
    env = _fresh_env(tmp_path, "cache")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "qwirkle-core: compiling" in line]
    assert len(lines) == 1 and re.fullmatch(_said("the greedy batch kernels", 12), lines[0]), lines
    again = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "compiling" not in again.stderr  # cached: nothing to say


@pytest.mark.slow
def test_a_first_learn_says_so_once_from_an_empty_cache(tmp_path: Path) -> None:
    """``qc.learn``'s self-play kernels (an empty cache): one notice for the whole call,
    none for the second call in the same process."""
    script = (
        "from qwirkle_core.batch.learn import learn\n"
        "for _ in range(2):\n    learn(seed=1, games=4, iterations=1, threads=1)\nprint('done')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=_fresh_env(tmp_path, "cache"), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "qwirkle-core: compiling" in line]
    assert len(lines) == 1 and re.fullmatch(_said("the self-play learning kernels", 18), lines[0]), lines


@pytest.mark.slow
def test_a_first_move_list_vector_env_says_its_own_estimate_once(tmp_path: Path) -> None:
    """``VectorEnv(actions="moves")`` from an empty cache (about 90 CPU-s): one notice,
    the move-list mode's words and estimate (not the tile mode's), none for a second
    env in the same process."""
    script = (
        "from qwirkle_core.env import VectorEnv\n"
        "for _ in range(2):\n"
        "    e = VectorEnv(8, opponents=['greedy'], actions='moves'); e.reset(seed=1); e.step(e.sample_actions())\n"
        "print('done')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=_fresh_env(tmp_path, "cache"), capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "qwirkle-core: compiling" in line]
    assert len(lines) == 1 and re.fullmatch(_said("the vector environment's move-list kernels", 50), lines[0]), lines


def test_the_command_line_piped_prints_the_notice_and_plain_progress(tmp_path: Path) -> None:
    """stdout not a terminal: the notice once (on stdout with the progress, not again
    on stderr) and plain progress lines with the rate; the kernels are cached by the
    test above only if it ran first, so either a notice or none."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("QWIRKLE_QUIET_COMPILE", None)
    done = subprocess.run(
        [sys.executable, "-m", "qwirkle_core.cli", "simulate", "--games", "3000", "--agents", "greedy,greedy"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "qwirkle-core: compiling" not in done.stderr
    assert done.stdout.count("qwirkle-core: compiling") <= 1
    progress = [line for line in done.stdout.splitlines() if line.startswith("games: ")]
    assert progress and progress[-1].startswith("games: 3,000 of 3,000 (100%), ")
    assert "games/s" in progress[-1] and "in all" in progress[-1]


# -- the estimate as a range of wall time, scaled by how busy the machine is (issue 67) -------


def test_the_estimate_is_a_range_scaled_by_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """ "about 10 s" took 60 s and "about 45 s" 217 s on a busy 2-core machine: the notice
    now says the CPU time and a range of wall time for the load it finds."""
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert _compiling.busy_factor() == 1.0  # idle (the fixture's load 0): this process alone
    assert _compiling.message("the greedy batch kernels", 12) == (
        "qwirkle-core: compiling the greedy batch kernels, about 9 to 18 s (12 CPU-s); cached afterwards"
    )
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 8.0, 7.0))  # ten runnable processes on two cores
    assert _compiling.busy_factor() == 5.0
    assert _compiling.message("the greedy batch kernels", 12) == (
        "qwirkle-core: compiling the greedy batch kernels, about 45 to 90 s (12 CPU-s, the machine is busy); cached afterwards"
    )
    lo, hi = (int(x) for x in re.findall(r"about (\d+) to (\d+) s", _compiling.message("x", 45))[0])
    assert lo <= 217 <= hi  # the "about 45 s" that took 217 s, at such a load


def test_every_notice_has_an_estimate(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scope without its own estimate (a tournament of a Python policy agent whose
    built-in kernels are cached) says the compiling kernel's estimate, or a default."""
    caplog.set_level(logging.WARNING, logger="qwirkle_core.compile")
    k = _kernel()
    name = f"{k.py_func.__module__.rsplit('.', 1)[-1]}.{k.py_func.__qualname__}"
    monkeypatch.setitem(_compiling.KERNELS, name, ("the add-one kernel", 4.0))
    with _compiling.compiling("the kernels of a ppo, greedy tournament", None):
        k(1)

    @numba.njit(cache=False)
    def unknown(x):
        return x - 1

    with _compiling.compiling("the unknown kernels", None):
        assert unknown(1) == 0
    assert _notices(caplog) == [
        "qwirkle-core: compiling the kernels of a ppo, greedy tournament, about 3 to 6 s (4 CPU-s); cached afterwards",
        "qwirkle-core: compiling the unknown kernels, about 22 to 45 s (perhaps 30 CPU-s); cached afterwards",
    ]
    assert _compiling.message("x", None, busy=1).endswith("(perhaps 30 CPU-s); cached afterwards")
