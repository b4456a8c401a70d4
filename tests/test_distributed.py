"""Batches and tournaments on a Dask cluster (docs/distributed.md).

A real ``LocalCluster`` of 2 worker processes on the loopback interface, started and
closed here. The kernels are compiled (or loaded) in this process before the cluster
starts, so the workers load them from the on-disk cache instead of compiling.

What is checked against a local batch of the same games: the rows of a distributed
batch (2 and 4 players, several agents, ranges that do not divide the batch), a batch
whose worker is killed in the middle, a batch interrupted and resumed (in the library
and with Ctrl-C on the command line), a batch stopped by a task that raises and then
resumed; tournaments; the refusals; the command line.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import qwirkle_core as qc

# Bound through the package first: importing the submodules qwirkle_core.batch.simulate or
# qwirkle_core.batch.tournament before qc.simulate / qc.tournament were first used would make
# those names the modules for the whole test session (reported to the lead).
simulate, tournament = qc.simulate, qc.tournament

from qwirkle_core import cli  # noqa: E402
from qwirkle_core.batch.rows import read_metadata, read_rows  # noqa: E402
from qwirkle_core.cli import common as cli_common  # noqa: E402

distributed = pytest.importorskip("distributed")
dist = pytest.importorskip("qwirkle_core.batch.distributed")

pytestmark = pytest.mark.slow  # Dask clusters: minutes on 2 cores (pytest -m slow)


@pytest.fixture(scope="module")
def cluster():
    simulate(1, threads=1)  # compile here (or load): the workers then load the cache
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
    ) as c:
        yield c


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster) as c:
        yield c


@pytest.fixture(autouse=True)
def two_workers(request):
    """Every test that uses the cluster starts with both workers up."""
    if "client" in request.fixturenames:
        request.getfixturevalue("client").wait_for_workers(2, timeout=60)


@functools.cache
def local(games: int, agents: str, seed: int, start: int = 0) -> qc.SimulationResult:
    return simulate(games, agents=agents, seed=seed, start=start)


def assert_same_rows(folder: Path, expected: qc.SimulationResult) -> None:
    """The rows in ``folder`` are exactly the local batch's: every game once, in order."""
    rows = read_rows(folder)
    want = expected.columns()
    got = rows.columns()
    assert list(got) == list(want)
    for name, column in want.items():
        np.testing.assert_array_equal(got[name], column, err_msg=name)


def part_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("part-"))


# -- the plan of ranges -----------------------------------------------------------------


@given(st.integers(0, 10**6), st.integers(1, 300), st.integers(1, 40), st.data())
def test_ranges_cover_exactly_what_is_left(first: int, games: int, size: int, data: st.DataObject) -> None:
    end = first + games
    cuts = sorted(data.draw(st.sets(st.integers(first, end), max_size=8)))
    spans = list(zip(cuts[::2], cuts[1::2]))
    done = [s for s in spans if s[0] < s[1] and data.draw(st.booleans())]
    todo = dist.ranges(first, end, size, done)
    covered = [i for a, b in sorted(todo + done) for i in range(a, b)]
    assert covered == list(range(first, end))  # every game once, none twice
    assert all(0 < b - a <= size for a, b in todo)
    if not done:  # a fresh batch is cut at multiples of size from its first game
        assert [a for a, _ in todo] == list(range(first, end, size))


def test_auto_range_size_balances_and_bounds_the_tasks() -> None:
    # 5,000 games/s: 5 s of work is 25,000 games, half a second 2,500
    assert dist.auto_range_size(10**9, 1 / 5000, worker_threads=100) == 25_000
    assert dist.auto_range_size(200_000, 1 / 5000, worker_threads=2) == 12_500  # 8 ranges per thread
    assert dist.auto_range_size(4_000, 1 / 5000, worker_threads=2) == 2_500
    assert dist.auto_range_size(100, 1 / 5000, worker_threads=2) == 100
    assert dist.auto_range_size(10**9, 1 / 5000, worker_threads=100, threads=2) == 50_000


# -- the same rows as a local batch ------------------------------------------------------


@pytest.mark.parametrize(
    ("games", "agents", "seed", "start", "size"),
    [
        (3_000, "greedy,heuristic", 11, 0, 400),
        (1_200, "random,greedy,heuristic,greedy", 2**64 - 1, 123, 250),
    ],
    ids=["2 players", "4 players"],
)
def test_distributed_rows_equal_the_local_batch(
    client, tmp_path: Path, games: int, agents: str, seed: int, start: int, size: int
) -> None:
    out = tmp_path / "results"
    seen = []
    r = simulate(
        games,
        agents=agents,
        seed=seed,
        start=start,
        client=client,
        out=out,
        range_size=size,
        progress=lambda d, t: seen.append((d, t)),
    )
    expected = local(games, agents, seed, start)
    assert_same_rows(out, expected)
    assert r.stats.to_dict() == expected.stats.to_dict()
    assert r.summary()["win_rates"] == expected.summary()["win_rates"]
    assert (r.games, r.workers, r.threads, r.resumed, r.path) == (games, 2, 2, 0, out)
    np.testing.assert_array_equal(r.scores, expected.scores)  # rows read lazily from the folder
    plan = dist.ranges(start, start + games, size)
    assert part_files(out) == sorted(dist.part_name(a, b) for a, b in plan)
    assert seen[0] == (0, games) and seen[-1] == (games, games) and len(seen) == len(plan) + 1
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    batch = json.loads((out / dist.BATCH_FILE).read_text())
    assert {k: batch[k] for k in ("agents", "seed", "start", "games", "range_size")} == {
        "agents": agents.split(","),
        "seed": seed,
        "start": start,
        "games": games,
        "range_size": size,
    }
    a, b = plan[1]
    meta = read_metadata(out / dist.part_name(a, b))
    assert (meta["start"], meta["games"], meta["seed"]) == (a, b - a, seed)
    part = expected.rows[a - start : b - start]
    assert (
        meta["stats"]
        == qc.BatchStats.from_rows(
            part.scores, part.winner, part.starter, part.turns, part.tiles_placed, part.qwirkles, part.truncated
        ).to_dict()
    )
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_the_automatic_range_size_gives_the_same_rows(client, tmp_path: Path) -> None:
    r = simulate(2_000, agents="greedy,greedy", seed=4, client=client, out=tmp_path / "auto")
    assert_same_rows(tmp_path / "auto", local(2_000, "greedy,greedy", 4))
    size = json.loads((tmp_path / "auto" / dist.BATCH_FILE).read_text())["range_size"]
    assert 1 <= size <= 2_000 and len(part_files(tmp_path / "auto")) == -(-2_000 // size)
    assert r.compile_seconds > 0 and r.elapsed > 0


# -- faults ------------------------------------------------------------------------------


def test_a_worker_killed_mid_run_still_gives_every_game_once(client, tmp_path: Path) -> None:
    killed = []

    def kill_a_busy_worker(done: int, total: int) -> None:
        if done and not killed:
            busy = [address for address, keys in client.processing().items() if keys]
            if not busy:
                return
            pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
            os.kill(pid, signal.SIGKILL)
            killed.append((pid, done))

    out = tmp_path / "killed"
    r = simulate(
        8_000, agents="greedy,greedy", seed=21, client=client, out=out, range_size=400, progress=kill_a_busy_worker
    )
    assert killed and killed[0][1] < 8_000  # killed while ranges were still running
    assert not r.interrupted and r.games == 8_000
    rows = read_rows(out)
    np.testing.assert_array_equal(rows.game, np.arange(8_000))  # every game exactly once
    assert_same_rows(out, local(8_000, "greedy,greedy", 21))
    assert r.stats.to_dict() == local(8_000, "greedy,greedy", 21).stats.to_dict()
    client.wait_for_workers(2, timeout=60)  # the nanny restarted the killed worker
    assert killed[0][0] not in client.run(os.getpid).values()


def test_resume_after_an_interruption_gives_the_uninterrupted_dataset(client, tmp_path: Path) -> None:
    out = tmp_path / "resumed"

    def stop_after_two_ranges(done: int, total: int) -> None:
        if done >= 1_000:
            raise KeyboardInterrupt  # what Ctrl-C does in the client

    first = simulate(
        6_000, agents="heuristic,greedy", seed=8, client=client, out=out, range_size=500, progress=stop_after_two_ranges
    )
    assert first.interrupted and 1_000 <= first.games < 6_000
    kept = sum(b - a for a, b in dist.existing_parts(out, 0, 6_000))
    assert kept >= first.games  # ranges still running when it stopped may finish too
    second = simulate(6_000, agents="heuristic,greedy", seed=8, client=client, out=out, resume=True)
    expected = local(6_000, "heuristic,greedy", 8)
    assert second.resumed >= kept and second.games == 6_000 and not second.interrupted
    assert second.stats.to_dict() == expected.stats.to_dict()
    assert_same_rows(out, expected)
    assert part_files(out) == sorted(
        dist.part_name(a, b) for a, b in dist.ranges(0, 6_000, 500)
    )  # the stored range size


@pytest.mark.parametrize("in_a_client_call", [False, True])
def test_ctrl_c_in_the_client_stops_the_run_between_dask_calls(
    client, in_a_client_call: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """A SIGINT to this process while it waits on the cluster, or while a blocking
    client call is under way (in ``progress``): that call finishes, the finished
    results come back with ``interrupted``, Python's Ctrl-C handler is back, and
    nothing is logged from Dask's event loop (a KeyboardInterrupt inside a client
    call made distributed 2026.8 log a NameError traceback there)."""
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    jobs = [((0.3,), 1)] * 12  # time.sleep(0.3) twelve times on two workers: about 1.8 s
    finished_calls = []

    def progress(done: int, total: int) -> None:
        if in_a_client_call and not finished_calls:
            threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT)).start()
            client.sync(asyncio.sleep, 0.5)  # the Ctrl-C arrives in this call
            finished_calls.append(done)

    if not in_a_client_call:
        threading.Timer(0.4, os.kill, (os.getpid(), signal.SIGINT)).start()
    with caplog.at_level(logging.ERROR):
        results, interrupted = dist.map_ranges(client, time.sleep, jobs, progress)
    assert interrupted and len(results) < len(jobs) and all(r is None for r in results.values())
    assert finished_calls == ([1] if in_a_client_call else [])
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_task_that_raises_stops_the_run_and_keeps_the_finished_parts(client, tmp_path: Path) -> None:
    out = tmp_path / "failed"
    out.mkdir()
    (out / dist.part_name(2_000, 2_500)).mkdir()  # the fifth range cannot be written
    with pytest.raises(IsADirectoryError) as info:
        simulate(6_000, agents="greedy,random", seed=3, client=client, out=out, range_size=500)
    assert "part-2000-2500.parquet" in str(info.value)
    assert any("resume" in note for note in info.value.__notes__)
    deadline = time.monotonic() + 30
    while any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.1)  # ranges that were running when it stopped finish or are dropped
    expected = local(6_000, "greedy,random", 3)
    parts = dist.existing_parts(out, 0, 6_000)
    assert parts and (2_000, 2_500) not in parts
    for a, b in parts:  # every kept part is complete
        np.testing.assert_array_equal(read_rows(out / dist.part_name(a, b)).scores, expected.scores[a:b])
    (out / dist.part_name(2_000, 2_500)).rmdir()  # the fix
    r = simulate(6_000, agents="greedy,random", seed=3, client=client, out=out, resume=True)
    assert r.resumed == sum(b - a for a, b in parts) and r.games == 6_000
    assert_same_rows(out, expected)


# -- refusals ----------------------------------------------------------------------------


def test_a_second_run_with_other_parameters_is_refused(client, tmp_path: Path) -> None:
    out = tmp_path / "batch"
    simulate(600, agents="greedy,greedy", seed=1, client=client, out=out, range_size=300)
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    for kwargs, field in [
        ({"seed": 2}, "seed 1 there, 2 here"),
        ({"agents": "greedy,heuristic"}, "agents"),
        ({"games": 700}, "games 600 there, 700 here"),
        ({"start": 5}, "start"),
        ({"rules": qc.Rules(opening="any_line")}, "rules"),
    ]:
        args = {"games": 600, "agents": "greedy,greedy", "seed": 1, **kwargs}
        for resume in (False, True):
            with pytest.raises(ValueError, match="holds another batch") as info:
                simulate(**args, client=client, out=out, resume=resume)
            assert field in str(info.value)
    with pytest.raises(ValueError, match="already holds this batch"):
        simulate(600, agents="greedy,greedy", seed=1, client=client, out=out)
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before  # untouched
    again = simulate(600, agents="greedy,greedy", seed=1, client=client, out=out, resume=True)
    assert (again.resumed, again.games) == (600, 600)  # nothing left to play
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before


def test_bad_arguments_are_refused_before_anything_runs(client, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs out="):
        simulate(10, client=client)
    with pytest.raises(ValueError, match="not a file"):
        simulate(10, client=client, out=tmp_path / "r.parquet")
    with pytest.raises(ValueError, match="keeps no rows"):
        simulate(10, client=client, out=tmp_path / "x", keep_rows=True)
    with pytest.raises(ValueError, match="range_size"):
        simulate(10, client=client, out=tmp_path / "x", range_size=0)
    with pytest.raises(TypeError, match="dask.distributed.Client"):
        simulate(10, client="tcp://127.0.0.1:8786", out=tmp_path / "x")
    with pytest.raises(FileNotFoundError):
        simulate(10, client=client, out=tmp_path / "no" / "such" / "folder")
    with pytest.raises(ValueError, match="distributed batch only"):
        simulate(10, resume=True)
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "part-0-5.parquet").write_bytes(b"")
    with pytest.raises(ValueError, match="no _batch.json"):
        simulate(10, client=client, out=stray, resume=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stray"]  # nothing created


def test_python_agents_are_refused_on_a_cluster(client, tmp_path: Path) -> None:
    with pytest.raises(
        TypeError, match="simulate runs built-in agents inside numba; play Python agents with qc.play_game"
    ):
        simulate(
            10,
            agents=("greedy", lambda observation, legal_moves, rng: legal_moves[0]),
            client=client,
            out=tmp_path / "x",
        )
    with pytest.raises(
        TypeError, match="a tournament on a cluster plays built-in agents only, not the Python agent 'bots:Best'"
    ):
        tournament(["bots:Best", "greedy"], games=2, client=client)
    assert not any(tmp_path.iterdir())


# -- tournaments -------------------------------------------------------------------------


def test_a_tournament_on_the_cluster_equals_the_local_one(client) -> None:
    agents = "greedy,heuristic,random"
    there = tournament(agents, games=300, seed=9, client=client, range_size=40, timing_games=2, timing_seconds=0.01)
    here = tournament(agents, games=300, seed=9, timing_games=2, timing_seconds=0.01)
    assert len(there.matches) == len(here.matches) == 3
    for m, n in zip(there.matches, here.matches):
        assert (m.first, m.second, m.wins, m.losses, m.ties) == (n.first, n.second, n.wins, n.losses, n.ties)
        np.testing.assert_array_equal(m.margin, n.margin)
        np.testing.assert_array_equal(m.scores_first, n.scores_first)
    assert set(there.seconds_per_move) == {"greedy", "heuristic", "random"}


# -- the command line --------------------------------------------------------------------


def test_cli_on_a_scheduler(cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    argv = [
        "simulate",
        "--games",
        "1500",
        "--agents",
        "greedy,heuristic",
        "--seed",
        "6",
        "--out",
        str(out),
        "--range-size",
        "500",
        "--no-progress",
    ]
    assert cli.main([*argv, "--scheduler", cluster.scheduler_address]) == 0
    text = " ".join(capsys.readouterr().out.split())  # as one line (rich wraps it)
    assert "1,500 games in" in text and "on 2 workers" in text and "1,500 of 1,500 games in 3 part files" in text
    assert_same_rows(out, local(1_500, "greedy,heuristic", 6))
    assert cli.main([*argv, "--scheduler", cluster.scheduler_address]) == 2  # the folder holds it already
    assert "--resume" in capsys.readouterr().err
    assert (
        cli.main(
            [
                "tournament",
                "--agents",
                "greedy,random",
                "--games",
                "40",
                "--no-progress",
                "--scheduler",
                cluster.scheduler_address,
            ]
        )
        == 0
    )
    assert "greedy" in capsys.readouterr().out


def test_cli_ctrl_c_then_resume(cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``qwirkle simulate --workers 2`` stopped by Ctrl-C (SIGINT), then ``--resume``
    on another cluster: the dataset of an uninterrupted run."""
    out = tmp_path / "ctrl-c"
    argv = [
        "simulate",
        "--games",
        "20000",
        "--agents",
        "greedy,greedy",
        "--seed",
        "12",
        "--out",
        str(out),
        "--no-progress",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "qwirkle_core.cli", *argv, "--workers", "2", "--range-size", "500"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(dist.existing_parts(out, 0, 20_000)) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert "interrupted" in stdout and "--resume" in stdout
    assert "Traceback" not in stderr and "ERROR" not in stderr
    kept = dist.existing_parts(out, 0, 20_000)
    assert 2 <= len(kept) < 40
    assert cli.main([*argv, "--scheduler", cluster.scheduler_address, "--resume"]) == 0
    assert f"{sum(b - a for a, b in kept):,} games were already in the part files" in " ".join(
        capsys.readouterr().out.split()
    )
    assert_same_rows(out, local(20_000, "greedy,greedy", 12))
    assert part_files(out) == sorted(dist.part_name(a, b) for a, b in dist.ranges(0, 20_000, 500))


def test_cli_tournament_on_local_workers(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        cli.main(
            [
                "tournament",
                "--agents",
                "greedy,random",
                "--games",
                "40",
                "--seed",
                "3",
                "--no-progress",
                "--workers",
                "1",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    here = tournament("greedy,random", games=40, seed=3, timing_games=1, timing_seconds=0.0)
    m = here.matches[0]
    low, high = m.interval()
    assert f"{m.win_rate:.1%} [{100 * low:.1f}, {100 * high:.1f}]" in text  # the same games as here
    assert f"{m.margin.mean():+.1f} ±" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--workers", "2"], "needs --out DIR"),
        (["--workers", "2", "--out", "r.parquet"], "give a folder"),
        (["--workers", "2", "--scheduler", "tcp://127.0.0.1:8786", "--out", "r"], "not allowed with argument"),
        (["--resume", "--out", "r.parquet"], "--resume: needs --scheduler or --workers"),
        (["--range-size", "10"], "--range-size: needs --scheduler or --workers"),
        (["--workers", "0", "--out", "r"], "--workers"),
        (["--scheduler", "nonsense", "--out", "r"], "cannot reach 'nonsense'"),
        (["--scheduler", "tcp://127.0.0.1:9", "--out", "r"], "cannot reach 'tcp://127.0.0.1:9'"),
    ],
)
def test_cli_usage_errors(
    argv: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli_common, "CONNECT_SECONDS", 1)
    assert cli.main(["simulate", "--games", "10", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("qwirkle: error:")
    assert not (tmp_path / "r").exists()


def test_without_dask_scheduler_says_what_to_install(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['distributed'] = None; sys.modules['dask'] = None\n"
        "from qwirkle_core.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "simulate",
            "--games",
            "10",
            "--out",
            str(tmp_path / "r"),
            "--scheduler",
            "tcp://127.0.0.1:8786",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "qwirkle: error: --scheduler and --workers need Dask (distributed): pip install 'qwirkle-core[dask]'"
    ]


def test_the_library_imports_dask_only_for_a_cluster() -> None:
    code = "import sys, qwirkle_core as qc\nqc.simulate(20, threads=1)\nqc.tournament('greedy,random', games=2, timing_games=1, timing_seconds=0)\nprint(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
