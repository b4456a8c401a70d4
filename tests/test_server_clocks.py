"""Time controls: seconds per move, or a game clock with an increment. A human seat out
of time has its turn played by the game's fallback agent, recorded as a timeout in the
views; the deadlines are stored, so the clocks hold across server processes, a worker
killed with SIGKILL and a restart (the sweep plays a timeout nobody asks about)."""

import json
import os
import signal
import time
import warnings
from pathlib import Path

import httpx
import pytest

import qwirkle_core as qc
from qwirkle_core.server import create_app
from qwirkle_core.server.clocks import Clock
from qwirkle_core.server.store import open_store
from server_support import ServerProcess, bearer

with warnings.catch_warnings():  # starlette asks for httpx2, the next httpx; httpx works
    warnings.filterwarnings("ignore", message=".*httpx2")
    from fastapi.testclient import TestClient


def new_game(client, body, base=""):
    r = client.post(f"{base}/api/games", json=body)
    assert r.status_code == 201, r.text
    data = r.json()
    return data["id"], {s["seat"]: s["token"] for s in data["seats"] if s["token"]}


def check_timeouts(record, timeouts):
    """The record replays, and each timeout is a move greedy (the fallback) makes at that
    point: a highest-scoring placement (its ties are broken at random, from a stream a
    restarted server does not share with this replay), or an exchange when none fits."""
    assert timeouts
    g = qc.Game(players=record.players, seed=record.seed)
    for i, a in enumerate(record.actions):
        if i in timeouts:
            moves = g.legal_moves()
            if moves:
                assert a.move.kind == "place" and a.points == max(m.score for m in moves), i
            else:
                assert a.move.kind in ("exchange", "pass"), i
        g.play(a.move)
    qc.replay(record)


def stored(db, game_id):
    """(version, clock) as stored: read without asking the server (which would catch up)."""
    store = open_store(db)
    try:
        row = store.load(game_id)
    finally:
        store.close()
    return row.head.version, json.loads(row.clock), row


def wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while not (result := condition()):
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.1)
    return result


def test_the_clock_arithmetic():
    c = Clock.new(["human", "greedy", "human"], "human", 100.0, base_s=10, increment_s=2)
    assert c.remaining == [10.0, None, 10.0] and c.deadline(0) == 110.0 and c.deadline(None) is None
    c.charge(0, 104.0)  # 4 s used, 2 gained
    assert c.remaining[0] == 8.0 and c.started == 104.0 and c.deadline(2) == 114.0
    c.charge(2, 120.0)  # 16 s used of 10: out of time, the clock stands at 0 + the increment
    assert c.remaining[2] == 2.0 and c.public(0, 121.0)["remaining"] == [7.0, None, 2.0]
    assert c.public(0, 119.0)["remaining"][0] == 8.0  # never more than it has
    m = Clock.new(["human", "human"], "human", 0.0, move_s=5)
    m.charge(1, 3.0)
    assert m.remaining is None and m.deadline(0) == 8.0 and Clock.from_json(m.to_json()) == m
    for bad in ({"move_s": 1, "base_s": 1}, {}, {"move_s": 1, "increment_s": 1}):
        with pytest.raises(ValueError):
            Clock.new(["human", "human"], "human", 0.0, **bad)


def test_seconds_per_move(tmp_path):
    db = str(tmp_path / "games.sqlite")
    with TestClient(create_app(db)) as client:
        game_id, tokens = new_game(client, {"seats": ["human", "human"], "clock": {"move_s": 2}})
        url = f"/api/games/{game_id}"
        view = client.get(url).json()
        first = view["to_move"]
        assert (
            view["clock"]["move_s"] == 2 and view["clock"]["fallback"] == "greedy" and view["clock"]["timeouts"] == []
        )
        assert 0 < view["clock"]["deadline"] - view["clock"]["now"] <= 2
        # nobody asks: the sweep plays the turn when its two seconds are up
        version, clock, _ = wait_for(lambda: (s := stored(db, game_id))[1]["timeouts"] and s, 5)
        assert clock["timeouts"] == [0] and version == view["version"] + 1
        view = client.get(url, headers=bearer(tokens[1 - first])).json()
        assert view["history"][0]["timeout"] is True and view["to_move"] == 1 - first
        # the other seat moves in time: not a timeout, and its clock starts afresh for the next turn
        r = client.post(
            f"{url}/actions",
            json={"move": view["legal_moves"][0]["move"], "expected_version": view["version"]},
            headers=bearer(tokens[1 - first]),
        )
        assert r.status_code == 200, r.text
        after = client.get(url).json()
        assert after["clock"]["timeouts"] == [0] and "timeout" not in after["history"][1]
        # the seat out of time tries its move late: refused (its turn is the fallback's, played or about to be)
        time.sleep(2.3)
        late = client.post(
            f"{url}/actions", json={"move": "pass", "expected_version": after["version"]}, headers=bearer(tokens[first])
        )
        assert late.status_code == 409, late.text
        assert "time ran out" in late.json()["error"] or late.json()["view"]["clock"]["timeouts"] == [0, 2]
        wait_for(lambda: stored(db, game_id)[1]["timeouts"] == [0, 2], 5)  # the sweep plays it
        record = qc.GameRecord.from_json(stored(db, game_id)[2].record)
    check_timeouts(record, {0, 2})


def test_a_game_clock_with_an_increment(tmp_path):
    db = str(tmp_path / "games.sqlite")
    with TestClient(create_app(db)) as client:
        body = {
            "seats": ["human", "random"],
            "seed": 8,
            "clock": {"base_s": 2, "increment_s": 0.5, "fallback": "random"},
        }
        began = time.monotonic()
        game_id, tokens = new_game(client, body)
        url = f"/api/games/{game_id}"
        auth = bearer(tokens[0])
        view = client.get(url, headers=auth).json()
        assert view["clock"]["remaining"][1] is None and 0 < view["clock"]["remaining"][0] <= 2
        r = client.post(f"{url}/actions", json={"move": view["legal_moves"][0]["move"]}, headers=auth)
        assert r.status_code == 200
        view = client.get(url, headers=auth).json()
        # 2 s, less the time taken, plus the increment
        assert 2.5 - (time.monotonic() - began) <= view["clock"]["remaining"][0] <= 2.5
        r = client.post(f"{url}/undo", headers=auth)
        assert r.status_code == 409 and r.json()["error"] == "undo is not offered in a game with a clock"
        # out of time: random plays the turn; the clock then holds the increment only
        wait_for(lambda: stored(db, game_id)[1]["timeouts"], 6)
        view = client.get(url, headers=auth).json()
        timeouts = view["clock"]["timeouts"]
        assert timeouts and all(view["history"][i]["timeout"] for i in timeouts)
        assert view["clock"]["remaining"][0] <= 0.5
        # with half a second a turn, every later turn runs out too
        wait_for(lambda: len(stored(db, game_id)[1]["timeouts"]) >= len(timeouts) + 2, 6)
        record = qc.GameRecord.from_json(stored(db, game_id)[2].record)
        final = stored(db, game_id)[1]["timeouts"]
    g = qc.Game(players=2, seed=8)
    for i, a in enumerate(record.actions):
        if i in final or record.agents[a.player] != "human":
            assert g.play_agent("random") == a
        else:
            g.play(a.move)


def _children(pid):
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def test_clocks_hold_across_a_killed_worker_and_a_restart(tmp_path):
    db = str(tmp_path / "games.sqlite")
    with open(tmp_path / "server.log", "w") as log:
        server = ServerProcess(db, log, "--workers", "2")
        try:
            workers = wait_for(lambda: w if len(w := _children(server.proc.pid)) >= 2 else None, 60)
            game_id, tokens = new_game(httpx, {"seats": ["human", "human"], "clock": {"move_s": 1}}, server.url)
            url = f"{server.url}/api/games/{game_id}"
            view = httpx.get(url, headers=bearer(tokens[0]), timeout=30).json()
            seat = view["to_move"]
            mine = httpx.get(url, headers=bearer(tokens[seat]), timeout=30).json()
            move = {"move": mine["legal_moves"][0]["move"], "expected_version": mine["version"], "action_id": "m1"}
            r = httpx.post(f"{url}/actions", json=move, headers=bearer(tokens[seat]), timeout=30)
            # a second is short on a loaded machine: the turn may have run out (refused, or played already)
            assert r.status_code == 200 or ("time ran out" in r.text or "view" in r.json()), r.text
            moved = int(r.status_code == 200)
            # then both seats stay away: every turn runs out, and is played without a request
            wait_for(lambda: len(stored(db, game_id)[1]["timeouts"]) >= 2, 10)
            os.kill(workers[0], signal.SIGKILL)
            count = len(stored(db, game_id)[1]["timeouts"])
            wait_for(lambda: len(stored(db, game_id)[1]["timeouts"]) >= count + 2, 10)
        finally:
            for pid in _children(server.proc.pid):
                os.kill(pid, signal.SIGKILL)
            server.kill()
        # no server: the clock's deadline passes, and nothing is played
        version, clock, _ = stored(db, game_id)
        time.sleep(2.5)
        assert stored(db, game_id)[0] == version
        server = ServerProcess(db, log)
        try:
            # the restarted server finds the deadline passed and plays the timeout, unasked
            wait_for(lambda: stored(db, game_id)[0] > version, 10)
            view = httpx.get(f"{server.url}/api/games/{game_id}", timeout=30).json()
        finally:
            server.kill()
    timeouts = view["clock"]["timeouts"]
    assert timeouts == list(range(moved, len(view["history"])))  # every turn after the first move
    assert len(timeouts) >= len(clock["timeouts"]) + 1 and all(view["history"][i]["timeout"] for i in timeouts)
    check_timeouts(qc.GameRecord.from_json(stored(db, game_id)[2].record), set(timeouts))
