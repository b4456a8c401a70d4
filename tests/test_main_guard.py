"""A script without an ``if __name__ == "__main__":`` guard never hangs: play_games and
tournament play in the calling process (with a RuntimeWarning naming the fix) when
worker processes would re-run the script's top-level code; an explicit WorkerPool is
refused at once. Each case runs a real script in a fresh process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from qwirkle_core.batch.players import unguarded_script

SRC = Path(__file__).resolve().parent.parent / "src"

AGENT = """
import qwirkle_core as qc
from qwirkle_core.batch.players import play_games

def best(observation, legal_moves, rng):
    places = [m for m in legal_moves if m.kind == "place"]
    return max(places, key=lambda m: m.score) if places else legal_moves[0]
"""


def _run(tmp_path: Path, code: str, seconds: float = 240) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(AGENT) + textwrap.dedent(code))
    env = {**os.environ, "PYTHONPATH": str(SRC), "QWIRKLE_QUIET_COMPILE": "1"}
    with subprocess.Popen(
        [sys.executable, "script.py"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            pytest.fail(f"the script hung:\n{err[-3000:]}")
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_unguarded_play_games_and_tournament_play_in_this_process(tmp_path: Path) -> None:
    done = _run(
        tmp_path,
        """
        r = play_games((best, "greedy"), 6, seed=3, processes=2)
        print("games", r.games)
        t = qc.tournament([best, "greedy"], games=4, seed=1, threads=2, timing_seconds=0)
        print("tournament", t.matches[0].games, t.agents[0])
        """,
    )
    assert done.returncode == 0, done.stderr
    assert "games 6" in done.stdout and "tournament 4 best" in done.stdout
    assert done.stderr.count("RuntimeWarning") == 2
    assert 'if __name__ == "__main__":' in done.stderr and "plays in this process instead" in done.stderr
    assert "bootstrapping" not in done.stderr


def test_a_guarded_script_uses_worker_processes(tmp_path: Path) -> None:
    done = _run(
        tmp_path,
        """
        import multiprocessing

        def main():
            r = play_games((best, "greedy"), 6, seed=3, processes=2)
            print("games", r.games, "children", len(multiprocessing.active_children()) >= 0)

        if __name__ == "__main__":
            main()
        """,
    )
    assert done.returncode == 0, done.stderr
    assert "games 6" in done.stdout and "RuntimeWarning" not in done.stderr


def test_an_unguarded_worker_pool_is_refused_at_once(tmp_path: Path) -> None:
    done = _run(
        tmp_path,
        """
        from qwirkle_core.batch.players import WorkerPool

        try:
            WorkerPool(2)
        except ValueError as e:
            print("refused:", e)
        """,
    )
    assert done.returncode == 0, done.stderr
    refused = [line for line in done.stdout.splitlines() if line.startswith("refused:")]
    assert len(refused) == 1 and 'if __name__ == "__main__":' in refused[0] and "processes=1" in refused[0]


def test_unguarded_script_sees_pytest_as_guarded() -> None:
    # pytest's own __main__ calls the tests from inside functions: never a re-run script
    assert unguarded_script() is None
