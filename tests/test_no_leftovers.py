"""The test suite leaves no process running: a server started by the tests
(tests/server_support.py), with its --workers processes, is stopped as a whole process
group, and none of the suite's server processes is left after it."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the [server] extra is not installed")
if not sys.platform.startswith("linux"):
    pytest.skip("reads /proc", allow_module_level=True)

from server_support import ServerProcess, suite_processes  # noqa: E402


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def test_a_killed_server_leaves_none_of_its_workers(tmp_path: Path) -> None:
    with open(tmp_path / "server.log", "w") as log:
        server = ServerProcess(tmp_path / "games.db", log, "--workers", "2")
        try:
            deadline = time.monotonic() + 60
            while len(_children(server.proc.pid)) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            workers = _children(server.proc.pid)
            assert len(workers) >= 2 and set(workers) | {server.proc.pid} <= set(suite_processes())
        finally:
            server.kill()
    deadline = time.monotonic() + 10
    while suite_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert suite_processes() == [], "server processes of the test suite are still running"
