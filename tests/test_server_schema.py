"""Documented answers (docs/server.md, "Statuses"): every route's statuses with their
schemas in /openapi.json, integer bounds as integers, and schemathesis with every check
against a live ``qwirkle serve`` for a bounded time."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qwirkle_core.server import create_app
from server_support import OPEN, ServerProcess

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
STATUSES = {
    ("get", "/api/agents"): {200, 503},
    ("get", "/api/ready"): {200, 503},
    ("post", "/api/games"): {201, 408, 413, 422, 429, 503},
    ("get", "/api/games/{game_id}"): {200, 403, 404, 422, 503},
    ("post", "/api/games/{game_id}/actions"): {200, 400, 403, 404, 408, 409, 413, 422, 503},
    ("post", "/api/games/{game_id}/undo"): {200, 403, 404, 408, 409, 413, 422, 503},
    ("get", "/api/games/{game_id}/hint"): {200, 403, 404, 409, 422, 503},
    ("get", "/api/games/{game_id}/record"): {200, 404, 409, 422, 503},
}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with TestClient(create_app(str(tmp_path_factory.mktemp("schema") / "g.sqlite"), settings=OPEN)) as c:
        yield c


def test_every_route_lists_its_statuses_with_the_error_schema(client):
    document = client.get("/openapi.json").json()
    found = {
        (method, path): {int(s) for s in operation["responses"]}
        for path, item in document["paths"].items()
        for method, operation in item.items()
    }
    assert found == STATUSES
    error = document["components"]["schemas"]["ErrorOut"]
    assert error["required"] == ["error"] and error["properties"]["error"]["type"] == "string"
    for (method, path), statuses in STATUSES.items():
        responses = document["paths"][path][method]["responses"]
        for status in statuses - {200, 201}:
            schema = responses[str(status)]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorOut"}, (method, path, status)


def test_integer_bounds_are_integers(client):
    text = client.get("/openapi.json").text
    assert '"maximum":18446744073709551615,"minimum":0' in text.replace(" ", "")
    assert "e+19" not in text
    seed = client.get("/openapi.json").json()["components"]["schemas"]["NewGame"]["properties"]["seed"]
    assert seed["anyOf"][0] == {"type": "integer", "minimum": 0, "maximum": 2**64 - 1}
    assert client.post("/api/games", json={"seats": ["human", "greedy"], "seed": 2**64 - 1}).status_code == 201
    assert client.post("/api/games", json={"seats": ["human", "greedy"], "seed": 2**64}).status_code == 422


@pytest.mark.parametrize(
    "body",
    [b'{"seats": ["human", "gr\xffedy"]}', b'{"seats": ["\xc3"]}', b"\xfe\xff"],
)
def test_a_body_that_is_not_utf8_answers_422(client, body):
    r = client.post("/api/games", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith("malformed request: the body is not UTF-8")


def test_the_documented_statuses_are_the_served_ones():
    """docs/server.md's table of statuses names each status a route can answer."""
    text = (ROOT / "docs" / "server.md").read_text()
    documented = {int(s) for s in re.findall(r"^\| (\d{3}) \|", text, re.M)}
    assert {s for statuses in STATUSES.values() for s in statuses} - {200, 201} <= documented


def _schemathesis():
    folder = os.path.dirname(sys.executable)
    path = os.path.join(folder, "st")
    if os.path.exists(path):
        return path
    path = shutil.which("st")
    if path is None:
        message = "schemathesis is not installed (the [dev] extra)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def _warm_up(url):
    """A game against greedy with a view, a hint and a move: every kernel the example
    requests use is compiled (or loaded from numba's cache) before the run."""
    import httpx

    game = httpx.post(f"{url}/api/games", json={"seats": ["human", "greedy"]}, timeout=600).json()
    auth = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
    view = httpx.get(f"{url}/api/games/{game['id']}", headers=auth, timeout=600).json()
    if view["to_move"] == 0 and view["legal_moves"]:
        assert httpx.get(f"{url}/api/games/{game['id']}/hint", headers=auth, timeout=600).status_code == 200
        move = {"move": view["legal_moves"][0]["move"]}
        assert httpx.post(f"{url}/api/games/{game['id']}/actions", json=move, headers=auth, timeout=600).is_success


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_schemathesis_finds_nothing(tmp_path):
    """schemathesis (every check, every phase; tests/schemathesis.toml names the
    statuses a schema-valid request may get) against ``qwirkle serve`` for at most 75 s,
    with a fixed seed. One worker: its coverage phase builds ASTs in threads, which
    CPython 3.11.7 can get wrong (a SystemError in schemathesis, not the server)."""
    st = _schemathesis()
    with open(tmp_path / "server.log", "wb") as log:
        server = ServerProcess(tmp_path / "g.sqlite", log)
    try:
        _warm_up(server.url)  # the kernels' first compile is not what schemathesis' response time check is for
        cmd = [st, "--config-file", str(ROOT / "tests" / "schemathesis.toml"), "run", f"{server.url}/openapi.json"]
        cmd += ["--checks", "all", "--workers", "1", "--max-examples", "25", "--max-time", "75", "--seed", "1"]
        cmd += ["--no-color", "--request-timeout", "30"]
        env = {**os.environ, "SCHEMATHESIS_HOOKS": ""}
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    finally:
        server.kill()
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-6000:]
    assert re.search(r"\d+ generated, \d+ passed", out), out[-3000:]
    log = (tmp_path / "server.log").read_text(errors="replace")
    assert "Traceback" not in log and " 500 " not in log, log[-3000:]
