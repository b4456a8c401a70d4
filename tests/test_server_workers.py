"""Several server processes on one store (a SQLite file, a PostgreSQL database):
concurrent actions on the same games from two processes, a worker of
``qwirkle serve --workers 2`` killed with SIGKILL in the middle of a burst, WebSocket
pushes across processes.

What must hold: every action answered 200 is in the stored record, exactly once, and
the record replays; a request that loses a race is refused (409) or lands on the
fresh state, never merged into a stale one.
"""

import json
import os
import random
import signal
import threading
import time
import warnings
from collections import Counter
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

import qwirkle_core as qc
from qwirkle_core.server import create_app
from qwirkle_core.server.store import Conflict, Head, Store, open_store
from server_support import OPEN, ServerProcess, bearer, choose

with warnings.catch_warnings():  # starlette asks for httpx2, the next httpx; httpx works
    warnings.filterwarnings("ignore", message=".*httpx2")
    from fastapi.testclient import TestClient


def create(url, seats, seed):
    r = httpx.post(f"{url}/api/games", json={"seats": seats, "seed": seed}, timeout=30)
    assert r.status_code == 201, r.text
    data = r.json()
    return data["id"], {s["seat"]: s["token"] for s in data["seats"] if s["token"]}


class Burst:
    """Threads that play the human seats of ``games`` ([(id, {seat: token})]) at once:
    for every seat of every game one thread per URL in ``urls``, each choosing from
    its own view and posting, so the same turn is raced from several processes. A
    thread stops when its game is over or has ``limit`` actions. ``accepted``: per
    game, the (player, move, scores) of every action answered 200."""

    def __init__(self, urls, games, limit, seed=0):
        self.limit = limit
        self.accepted = {game_id: [] for game_id, _ in games}
        self.refused = Counter()
        self.unanswered = 0
        self.errors = []
        self._lock = threading.Lock()
        jobs = [
            (url, game_id, seat, token) for url in urls for game_id, tokens in games for seat, token in tokens.items()
        ]
        self.threads = [
            threading.Thread(target=self._play, args=(*job, random.Random(seed * 1000 + i)), daemon=True)
            for i, job in enumerate(jobs)
        ]

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def join(self):
        for t in self.threads:
            t.join(timeout=300)
        assert not any(t.is_alive() for t in self.threads), "a player thread hangs"
        assert not self.errors, self.errors[:3]

    def _play(self, url, game_id, seat, token, rng):
        auth = bearer(token)
        with httpx.Client(base_url=url, timeout=60) as client:
            while True:
                try:
                    r = client.get(f"/api/games/{game_id}", headers=auth)
                    if r.status_code != 200:
                        self.errors.append(f"GET {r.status_code} {r.text}")
                        return
                    view = r.json()
                    if view["over"] or len(view["history"]) >= self.limit:
                        return
                    if view["to_move"] != seat:
                        time.sleep(rng.random() * 0.01)
                        continue
                    move = choose(view, rng, exchange_rate=0.1)
                    r = client.post(f"/api/games/{game_id}/actions", json={"move": move}, headers=auth)
                except httpx.TransportError:  # a killed process: this request got no answer
                    with self._lock:
                        self.unanswered += 1
                    time.sleep(0.05)
                    continue
                if r.status_code == 200:
                    a = r.json()
                    with self._lock:
                        self.accepted[game_id].append((a["player"], a["move"], tuple(a["scores"])))
                elif r.status_code == 409:
                    with self._lock:
                        self.refused[r.json()["error"][:30]] += 1
                else:
                    self.errors.append(f"POST {r.status_code} {r.text}")
                    return


def stored_records(db, url, burst):
    """Check that every accepted action is in its game's stored record, exactly once,
    and that the record replays; returns {game id: record}."""
    store = open_store(db)
    records = {}
    try:
        for game_id, accepted in burst.accepted.items():
            row = store.load(game_id)
            record = qc.GameRecord.from_json(row.record)
            game = qc.replay(record)  # raises unless every action is legal, its points and scores right
            stored = Counter((a.player, str(a.move), tuple(a.scores)) for a in record.actions)
            missing = Counter(accepted) - stored
            assert not missing, f"game {game_id}: accepted actions not in the store: {list(missing)[:3]}"
            assert row.head.actions == len(record.actions) == game.turn
            view = httpx.get(f"{url}/api/games/{game_id}", timeout=30).json()  # a spectator's
            assert view["version"] == row.head.version and len(view["history"]) == len(record.actions)
            records[game_id] = record
    finally:
        store.close()
    return records


@pytest.fixture
def log(tmp_path):
    with open(tmp_path / "server.log", "w") as f:
        yield f


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_two_processes_on_one_store_never_lose_an_accepted_action(store_url, log):
    servers = [ServerProcess(store_url, log), ServerProcess(store_url, log)]
    urls = [s.url for s in servers]
    try:
        games = [create(urls[i % 2], ["human", "human"], seed=200 + i) for i in range(3)]
        burst = Burst(urls, games, limit=36, seed=1).start()
        burst.join()
        records = stored_records(store_url, urls[0], burst)
    finally:
        for s in servers:
            s.kill()
    # two humans: every stored action is one that was accepted, and none twice
    for game_id, accepted in burst.accepted.items():
        assert len(accepted) == len(records[game_id].actions) >= 36
        assert sorted(accepted) == sorted((a.player, str(a.move), tuple(a.scores)) for a in records[game_id].actions)
    assert sum(burst.refused.values()) > 0, "no turn was raced: the test tested nothing"


def _children(pid):
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def test_a_worker_killed_in_a_burst_loses_nothing_accepted(store_url, log, tmp_path):
    """``qwirkle serve --workers 2``: one worker is killed with SIGKILL while a burst of
    actions runs on both; the burst goes on (on the other worker, and on the one the
    supervisor starts again), and every accepted action is stored."""
    server = ServerProcess(store_url, log, "--workers", "2")
    try:
        deadline = time.monotonic() + 60
        while len(workers := _children(server.proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(workers) >= 2, workers
        games = [create(server.url, ["human", "greedy"], seed=300 + i) for i in range(2)] + [
            create(server.url, ["human", "human"], seed=310)
        ]
        burst = Burst([server.url, server.url], games, limit=30, seed=2).start()
        deadline = time.monotonic() + 120
        while sum(map(len, burst.accepted.values())) < 15 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(workers[0], signal.SIGKILL)
        burst.join()
        records = stored_records(store_url, server.url, burst)
    finally:
        server.kill()
    for game_id, accepted in burst.accepted.items():
        humans = [a for a in records[game_id].actions if records[game_id].agents[a.player] == "human"]
        assert len(accepted) <= len(humans)  # an unanswered request may still have been stored
        assert len(records[game_id].actions) >= 30
    assert sum(map(len, burst.accepted.values())) >= 15


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_pushes_reach_subscribers_of_another_process(store_url, log):
    servers = [ServerProcess(store_url, log), ServerProcess(store_url, log)]
    try:
        game_id, tokens = create(servers[0].url, ["human", "greedy"], seed=11)
        ws = servers[1].url.replace("http://", "ws://") + f"/api/games/{game_id}/ws?token={tokens[0]}"
        auth = bearer(tokens[0])
        with connect(ws, open_timeout=10) as sub, httpx.Client(base_url=servers[0].url, timeout=30) as client:
            first = json.loads(sub.recv(timeout=10))
            rng = random.Random(3)
            for _ in range(4):  # each action and greedy's reply, stored by the other process
                view = client.get(f"/api/games/{game_id}", headers=auth).json()
                r = client.post(f"/api/games/{game_id}/actions", json={"move": choose(view, rng)}, headers=auth)
                assert r.status_code == 200, r.text
            final = client.get(f"/api/games/{game_id}", headers=auth).json()
            pushed = [json.loads(sub.recv(timeout=10)) for _ in range(final["version"] - first["version"])]
    finally:
        for s in servers:
            s.kill()
    assert [v["version"] for v in pushed] == list(range(first["version"] + 1, final["version"] + 1))
    assert [len(v["history"]) for v in pushed] == list(range(len(first["history"]) + 1, len(final["history"]) + 1))
    assert pushed[-1] == final


# -- the compare-and-swap, deterministically ------------------------------------------------


def test_a_stale_change_is_refused_by_the_store(store_url):
    store = open_store(store_url)
    try:
        h0 = store.create("g1", ["human", "human"], [None, None], '{"header": 1}')
        h1 = store.append("g1", h0, ['{"a": 0}', '{"a": 1}'], False)
        assert (h1.version, h1.actions, h1.resets) == (3, 2, 0)
        for stale in (h0, Head(3, 1, 0), Head(3, 2, 1)):
            with pytest.raises(Conflict):
                store.append("g1", stale, ['{"a": "lost"}'], False)
            with pytest.raises(Conflict):
                store.truncate("g1", stale, 0)
        row = store.load("g1")
        assert row.actions == ('{"a": 0}', '{"a": 1}') and row.head == h1
        h2 = store.truncate("g1", h1, 1)
        assert h2 == Head(4, 1, 1) and store.load("g1").actions == ('{"a": 0}',)
        assert store.load("g1", start=1).actions == () and store.versions(["g1", "nope"]) == {"g1": 4}
    finally:
        store.close()


class RacingStore(Store):
    """A real store whose ``append`` first runs ``race()`` (another server storing a
    change of the same game at that moment), as many times as ``races`` says."""

    def __init__(self, inner, race, races):
        self.inner, self.race, self.races = inner, race, races
        self.url = inner.url
        self.appends = 0

    def append(self, game_id, expected, actions, over, request=None, clock=None):
        self.appends += 1
        if self.races > 0:
            self.races -= 1
            self.race()
        return self.inner.append(game_id, expected, actions, over, request, clock)

    def answer(self, game_id, seat, action_id):
        return self.inner.answer(game_id, seat, action_id)

    def due(self, now, limit=100):
        return self.inner.due(now, limit)

    def close(self):
        self.inner.close()

    def create(self, *args, **kwargs):
        return self.inner.create(*args, **kwargs)

    def head(self, game_id):
        return self.inner.head(game_id)

    def load(self, game_id, start=0):
        return self.inner.load(game_id, start)

    def truncate(self, game_id, expected, keep):
        return self.inner.truncate(game_id, expected, keep)

    def versions(self, game_ids):
        return self.inner.versions(game_ids)

    def count(self):
        return self.inner.count()

    def running(self):
        return self.inner.running()

    def stale(self, before, limit=100):
        return self.inner.stale(before, limit)

    def delete(self, game_id, before):
        return self.inner.delete(game_id, before)

    def join(self, game_id, owner, cap, fresh):
        return self.inner.join(game_id, owner, cap, fresh)

    def leave(self, game_id, owner):
        self.inner.leave(game_id, owner)

    def hold(self, owner):
        self.inner.hold(owner)

    def release(self, owner):
        self.inner.release(owner)


@pytest.mark.parametrize("races, status", [(1, 200), (2, 409)])
def test_a_change_that_loses_the_race_is_retried_then_refused(store_url, races, status):
    """Server A computes a move; before it stores it, server B (another app on the same
    store) takes back the seat's last move and plays it again (the same state, a newer
    version). A's compare-and-swap fails, A catches up and tries again: stored (one
    race), or refused with 409 and nothing stored (a race on the retry too)."""
    with TestClient(create_app(store_url, settings=OPEN)) as b:
        game_id, tokens = create_with(b, ["human", "greedy"], seed=21)
        auth = bearer(tokens[0])
        first = b.get(f"/api/games/{game_id}", headers=auth).json()["legal_moves"][0]["move"]
        assert b.post(f"/api/games/{game_id}/actions", json={"move": first}, headers=auth).status_code == 200

        def race():
            assert b.post(f"/api/games/{game_id}/undo", headers=auth).json() == {"undone": 2}
            assert b.post(f"/api/games/{game_id}/actions", json={"move": first}, headers=auth).status_code == 200

        store = RacingStore(open_store(store_url), race, races)
        with TestClient(create_app(store, settings=OPEN)) as a:
            before = a.get(f"/api/games/{game_id}", headers=auth).json()
            move = before["legal_moves"][0]["move"]
            r = a.post(f"/api/games/{game_id}/actions", json={"move": move}, headers=auth)
            assert r.status_code == status, r.text
            after = b.get(f"/api/games/{game_id}", headers=auth).json()
    assert store.appends == 2
    assert after["version"] == before["version"] + 3 * races + (2 if status == 200 else 0)
    if status == 409:
        assert "another server process stored a change of this game" in r.json()["error"]
        assert after["history"] == before["history"]  # B's undo and replay gave the same state
    else:
        assert r.json()["move"] == move and after["history"][: len(before["history"])] == before["history"]
        assert [a["player"] for a in after["history"][len(before["history"]) :]] == [0, 1]
    record = qc.GameRecord.from_json(open_store(store_url).load(game_id).record)
    assert len(qc.replay(record).history) == len(after["history"])


def create_with(client, seats, seed):
    r = client.post("/api/games", json={"seats": seats, "seed": seed})
    assert r.status_code == 201, r.text
    data = r.json()
    return data["id"], {s["seat"]: s["token"] for s in data["seats"] if s["token"]}
