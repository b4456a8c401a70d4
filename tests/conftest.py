"""Fixtures and hypothesis profiles (the helpers live in strategies.py).

Hypothesis profiles: "ci" (default), "dev" (quick), "thorough" (slow); pick one with
HYPOTHESIS_PROFILE.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import time

import pytest
from hypothesis import HealthCheck, settings

import qwirkle_core as qc

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile("ci", deadline=None, max_examples=40, print_blob=True, suppress_health_check=_QUIET)
settings.register_profile("dev", deadline=None, max_examples=10, suppress_health_check=_QUIET)
settings.register_profile("thorough", deadline=None, max_examples=300, suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# A shell starts a background job (`pytest &`, nohup) with SIGINT ignored, and Python
# leaves it so. The Ctrl-C tests need what a run at a terminal has: Python's handler
# here, and SIGINT at its default in the processes they start (which then install
# Python's handler themselves).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def warm_jit():
    """Compile (or load) the numba kernels once, before any hypothesis example runs."""
    g = qc.Game(players=2, seed=12345)
    for _ in range(6):
        if g.is_over:
            break
        moves = g.legal_moves()
        if moves:
            g.copy().play(moves[-1])
            g.play(moves[0])
        elif g.bag_size:
            g.exchange(g.hand()[:1])
        else:
            break
    if g.bag_size and not g.is_over:
        g.copy().exchange(g.hand()[:1])
    g.copy().play_agent("greedy")
    yield


# -- the server's stores ------------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_cluster():
    """A throwaway PostgreSQL cluster for the session (tests/server_support.py). Skips
    only where no PostgreSQL server binaries are installed (CI installs them)."""
    pytest.importorskip("psycopg", reason="the [postgres] extra (psycopg 3) is not installed")
    from server_support import PostgresCluster, postgres_bin

    folder = postgres_bin()
    if folder is None:
        message = "no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql"
        if os.environ.get("CI"):  # .ci/run installs them: there a missing cluster is a failure
            pytest.fail(message)
        pytest.skip(message)
    cluster = PostgresCluster(folder)
    yield cluster
    cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """A fresh, empty store: a SQLite file, or a new database of the session's cluster."""
    if request.param == "sqlite":
        return str(tmp_path / "games.sqlite")
    return request.getfixturevalue("postgres_cluster").create_database()


# -- per-test CPU time: pytest --cpu-times FILE (docs/testing.md) ----------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-times",
        metavar="FILE",
        default=None,
        help="write each test's CPU seconds (this process and the processes it waited for) and wall seconds to FILE (JSON)",
    )


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


_CPU_TIMES: list[tuple[str, float, float]] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not item.config.getoption("--cpu-times"):
        yield
        return
    cpu, wall = _cpu_seconds(), time.monotonic()
    yield
    _CPU_TIMES.append((item.nodeid, _cpu_seconds() - cpu, time.monotonic() - wall))


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("--cpu-times")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(sorted(_CPU_TIMES, key=lambda row: -row[1]), f, indent=0)
