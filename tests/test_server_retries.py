"""Safe retries: an action may carry ``expected_version`` (the version of the view it was
made on) and ``action_id`` (the client's id of it). A repeat of an accepted action gets
the first answer and plays nothing; a stale version gets 409 with the current view.
Through the test client, and across two server processes on one store (SQLite and
PostgreSQL): duplicates raced on both processes, and a retry after the answer was lost
(the client hung up before reading it)."""

import json
import os
import signal
import socket
import threading
import time
import warnings
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

import qwirkle_core as qc
from qwirkle_core.server import create_app
from qwirkle_core.server.bot import play_remote
from qwirkle_core.server.store import open_store
from server_support import ServerProcess, bearer

with warnings.catch_warnings():  # starlette asks for httpx2, the next httpx; httpx works
    warnings.filterwarnings("ignore", message=".*httpx2")
    from fastapi.testclient import TestClient


def new_game(client, seats, seed=None):
    r = client.post("/api/games", json={"seats": seats, "seed": seed})
    assert r.status_code == 201, r.text
    data = r.json()
    return data["id"], {s["seat"]: s["token"] for s in data["seats"] if s["token"]}


def stored_moves(db, game_id):
    store = open_store(db)
    try:
        record = qc.GameRecord.from_json(store.load(game_id).record)
    finally:
        store.close()
    qc.replay(record)
    return [(a.player, str(a.move)) for a in record.actions]


def test_a_repeat_gets_the_first_answer_and_a_stale_version_the_view(tmp_path):
    db = str(tmp_path / "games.sqlite")
    with TestClient(create_app(db)) as client:
        game_id, tokens = new_game(client, ["human", "human"], seed=3)
        url = f"/api/games/{game_id}"
        view = client.get(url).json()
        seat = view["to_move"]
        auth = bearer(tokens[seat])
        mine = client.get(url, headers=auth).json()
        move = mine["legal_moves"][0]["move"]
        body = {"move": move, "expected_version": mine["version"], "action_id": "first-move.1"}
        first = client.post(f"{url}/actions", json=body, headers=auth)
        assert first.status_code == 200 and first.json()["version"] == mine["version"] + 1
        for again in (
            body,
            {**body, "move": "pass"},
            {**body, "expected_version": 1},
            {"move": move, "action_id": "first-move.1"},
        ):
            r = client.post(f"{url}/actions", json=again, headers=auth)
            assert r.status_code == 200 and r.json() == first.json()  # the id names the action: played once
        assert client.get(url).json()["version"] == mine["version"] + 1
        # the other seat's ids are its own; a stale version is refused with the current view
        other = bearer(tokens[1 - seat])
        theirs = client.get(url, headers=other).json()
        stale = {
            "move": theirs["legal_moves"][0]["move"],
            "expected_version": mine["version"],
            "action_id": "first-move.1",
        }
        r = client.post(f"{url}/actions", json=stale, headers=other)
        assert r.status_code == 409 and "version" in r.json()["error"]
        assert r.json()["view"] == client.get(url, headers=other).json() and r.json()["view"]["seat"] == 1 - seat
        r = client.post(f"{url}/actions", json={**stale, "expected_version": theirs["version"]}, headers=other)
        assert r.status_code == 200 and r.json()["player"] == 1 - seat
        second = r.json()["move"]
        for bad in (
            {"move": move, "action_id": ""},
            {"move": move, "action_id": "a b"},
            {"move": move, "action_id": "x" * 65},
            {"move": move, "expected_version": 0},
            {"move": move, "expected_version": "3"},
        ):
            r = client.post(f"{url}/actions", json=bad, headers=auth)
            assert r.status_code == 422, (bad, r.text)
    assert stored_moves(db, game_id) == [(seat, first.json()["move"]), (1 - seat, second)]


def post_and_hang_up(url, path, token, body):
    """POST ``body`` and close the connection before reading the answer: the answer is lost."""
    parts = urlsplit(url)
    data = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as s:
        s.sendall(head + data)
        s.shutdown(socket.SHUT_WR)


@pytest.fixture
def log(tmp_path):
    with open(tmp_path / "server.log", "w") as f:
        yield f


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_retries_across_two_processes_never_play_twice(store_url, log):
    servers = [ServerProcess(store_url, log), ServerProcess(store_url, log)]
    a, b = (s.url for s in servers)
    try:
        with httpx.Client(timeout=30) as http:
            game_id, tokens = new_game_http(http, a, ["human", "greedy"], seed=17)
            auth = bearer(tokens[0])
            path = f"/api/games/{game_id}"
            # 1. the answer is lost: the client hangs up; it retries the same action on the other process
            view = http.get(f"{b}{path}", headers=auth).json()
            body = {"move": view["legal_moves"][0]["move"], "expected_version": view["version"], "action_id": "lost-1"}
            post_and_hang_up(a, f"{path}/actions", tokens[0], body)
            deadline = time.monotonic() + 30
            while http.get(f"{b}{path}").json()["version"] == view["version"] and time.monotonic() < deadline:
                time.sleep(0.05)
            retry = http.post(f"{b}{path}/actions", json=body, headers=auth)
            assert retry.status_code == 200, retry.text
            after = http.get(f"{a}{path}", headers=auth).json()
            assert retry.json()["move"] == after["history"][len(view["history"])]["move"]
            assert retry.json()["version"] == after["version"] == view["version"] + 2  # the move and greedy's reply
            # the same retried without an id: the version says it is stale
            r = http.post(f"{a}{path}/actions", json={k: v for k, v in body.items() if k != "action_id"}, headers=auth)
            assert r.status_code == 409 and r.json()["view"]["version"] == after["version"]
            # 2. duplicates of one action raced on both processes: one play, the same answer to all
            for turn in range(3):
                view = http.get(f"{a}{path}", headers=auth).json()
                body = {
                    "move": view["legal_moves"][-1]["move"],
                    "expected_version": view["version"],
                    "action_id": f"race-{turn}",
                }
                answers = []

                def post(url):
                    with httpx.Client(timeout=30) as c:
                        answers.append(c.post(f"{url}{path}/actions", json=body, headers=auth))

                threads = [threading.Thread(target=post, args=(u,)) for u in (a, b) * 4]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join(timeout=60)
                assert len(answers) == 8 and {r.status_code for r in answers} == {200}, [r.text for r in answers]
                assert len({r.text for r in answers}) == 1
                assert http.get(f"{b}{path}").json()["version"] == view["version"] + 2
    finally:
        for s in servers:
            s.kill()
    moves = stored_moves(store_url, game_id)
    humans = [m for p, m in moves if p == 0]
    assert len(humans) == 4 and len(moves) == 8 + (moves[0][0] == 1)  # greedy may have opened


def new_game_http(http, url, seats, seed):
    r = http.post(f"{url}/api/games", json={"seats": seats, "seed": seed})
    assert r.status_code == 201, r.text
    data = r.json()
    return data["id"], {s["seat"]: s["token"] for s in data["seats"] if s["token"]}


def test_a_schema_2_store_is_converted(store_url):
    """A store of schema 2 (before deals, clocks and action ids) opens as schema 3: its
    games play on, with action ids, and their deal shows as unrecorded."""
    with TestClient(create_app(store_url)) as client:
        game_id, tokens = new_game(client, ["human", "greedy"], seed=5)
    downgrade = [
        "DROP TABLE requests",
        "DROP INDEX games_deadline",
        "ALTER TABLE games DROP COLUMN deal",
        "ALTER TABLE games DROP COLUMN clock",
        "ALTER TABLE games DROP COLUMN deadline",
    ]
    if store_url.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(store_url, autocommit=True) as db:
            for statement in [*downgrade, "UPDATE qwirkle_schema SET version = 2"]:
                db.execute(statement)
    else:
        import sqlite3

        db = sqlite3.connect(store_url)
        for statement in [*downgrade, "PRAGMA user_version=2"]:
            db.execute(statement)
        db.commit()
        db.close()
    with TestClient(create_app(store_url)) as client:
        auth = bearer(tokens[0])
        view = client.get(f"/api/games/{game_id}", headers=auth).json()
        assert view["deal"] == {"kind": "unrecorded"} and view["clock"] is None
        body = {"move": view["legal_moves"][0]["move"], "expected_version": view["version"], "action_id": "after"}
        first = client.post(f"/api/games/{game_id}/actions", json=body, headers=auth)
        assert (
            first.status_code == 200
            and client.post(f"/api/games/{game_id}/actions", json=body, headers=auth).json() == first.json()
        )
        assert new_game(client, ["human", "human"])[0]


def _children(pid):
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def test_qwirkle_bot_plays_on_through_a_killed_worker(tmp_path, log):
    """``play_remote`` (what ``qwirkle bot`` runs) against ``qwirkle serve --workers 2``
    whose workers are killed with SIGKILL in the game: it sends its requests again
    (the same action ids) and connects its WebSocket again, and finishes the game with
    each of its moves played once."""
    db = str(tmp_path / "games.sqlite")
    server = ServerProcess(db, log, "--workers", "2")
    try:
        deadline = time.monotonic() + 60
        while len(_children(server.proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        with httpx.Client(timeout=30) as http:
            game_id, tokens = new_game_http(http, server.url, ["human", "greedy"], seed=23)
        answers, result, kills = [], {}, []

        def bot():
            try:
                result["view"] = play_remote(
                    server.url, game_id, tokens[0], agent="greedy", seed=1, on_move=answers.append
                )
            except Exception as e:  # reported below
                result["error"] = e

        thread = threading.Thread(target=bot)
        thread.start()
        for target in (6, 14):  # kill a worker twice, mid-game
            while len(answers) < target and thread.is_alive():
                time.sleep(0.01)
            workers = _children(server.proc.pid)
            if workers:
                os.kill(workers[0], signal.SIGKILL)
                kills.append(workers[0])
        thread.join(timeout=240)
    finally:
        for pid in _children(server.proc.pid):
            os.kill(pid, signal.SIGKILL)
        server.kill()
    assert "error" not in result, result.get("error")
    assert len(kills) == 2 and result["view"]["over"]
    moves = stored_moves(db, game_id)
    assert [m for p, m in moves if p == 0] == [a["move"] for a in answers]  # each move once, in order
