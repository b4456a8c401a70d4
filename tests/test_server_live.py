"""The server as it runs, on each store (SQLite, PostgreSQL): uvicorn on 127.0.0.1 (in
a thread, or as a process killed with SIGKILL), WebSocket pushes, hidden information,
remote bots."""

import json
import random
import re
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

import qwirkle_core as qc
from qwirkle_core.server.bot import BotError, play_remote
from qwirkle_core.server.store import token_digest
from server_support import LiveServer, Moments, ServerProcess, bearer, leaks, play_out

SEED = 0xC0FFEE_D15EA5E_5  # long, so its digits cannot turn up by chance


@pytest.fixture
def live(store_url):
    with LiveServer(store_url) as server:
        yield server


def ws_url(live, game_id, token=None):
    url = live.url.replace("http://", "ws://") + f"/api/games/{game_id}/ws"
    return url + (f"?token={token}" if token else "")


class Listener:
    """Collects every message of a WebSocket in a thread until a view of a finished
    game (or ``count`` messages) arrives; ``first`` is the view at subscription."""

    def __init__(self, url, count=None):
        self.url = url
        self.count = count
        self.messages = []
        self.error = None
        self.subscribed = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.subscribed.wait(timeout=30) and self.messages, self.error
        self.first = self.messages[0]

    def _run(self):
        try:
            with connect(self.url, open_timeout=10) as ws:
                while True:
                    text = ws.recv(timeout=60)
                    self.messages.append(text)
                    self.subscribed.set()
                    if json.loads(text)["over"] or (self.count and len(self.messages) >= self.count):
                        return
        except Exception as e:  # reported by join()
            self.error = e
            self.subscribed.set()

    def join(self):
        self.thread.join(timeout=60)
        assert not self.thread.is_alive() and self.error is None, f"the pushes stopped: {self.error!r}"
        return self.messages


def create(client, seats, seed=None):
    r = client.post("/api/games", json={"seats": seats, "seed": seed})
    assert r.status_code == 201, r.text
    data = r.json()
    return data["id"], {s["seat"]: s["token"] for s in data["seats"] if s["token"]}


def test_websocket_pushes_a_view_after_every_action(live):
    with httpx.Client(base_url=live.url, timeout=30) as client:
        game_id, tokens = create(client, ["human", "greedy", "heuristic"], seed=3)
        auth = bearer(tokens[0])
        start = client.get(f"/api/games/{game_id}", headers=auth).json()
        seat = Listener(ws_url(live, game_id, tokens[0]), count=4)
        watcher = Listener(ws_url(live, game_id), count=4)
        assert json.loads(seat.first) == start
        assert json.loads(watcher.first) == client.get(f"/api/games/{game_id}").json()
        move = start["legal_moves"][0]["move"]
        assert client.post(f"/api/games/{game_id}/actions", json={"move": move}, headers=auth).status_code == 200
        end = client.get(f"/api/games/{game_id}", headers=auth).json()
        for listener, final in ((seat, end), (watcher, client.get(f"/api/games/{game_id}").json())):
            views = [json.loads(m) for m in listener.join()]
            assert [v["version"] for v in views] == list(range(start["version"], start["version"] + 4))
            assert [len(v["history"]) for v in views] == [len(start["history"]) + i for i in range(4)]
            assert [v["history"][-1]["player"] for v in views[1:]] == [0, 1, 2]
            assert views[-1] == final
        assert all(json.loads(m)["observation"]["hand"] == [] for m in watcher.messages)


@pytest.mark.parametrize(
    "game_id, token, code", [("nosuchgame", None, 4404), ("GOOD", "wrong-token", 4403), ("GOOD", "t" * 500, 4403)]
)
def test_websocket_refusals(live, game_id, token, code):
    with httpx.Client(base_url=live.url, timeout=30) as client:
        good, _ = create(client, ["human", "greedy"])
    with connect(ws_url(live, good if game_id == "GOOD" else game_id, token), open_timeout=10) as ws:
        with pytest.raises(Exception) as e:
            ws.recv(timeout=10)
    assert ws.close_code == code, e.value


def test_no_seat_receives_hidden_information(live):
    """Every HTTP response and WebSocket message each seat (and a spectator) receives
    during a whole game is checked against the final record: the seat's observation is
    the library's for that seat at that moment, and no tile of another seat's hand, no
    seed, random stream or bag order appears."""
    with httpx.Client(base_url=live.url, timeout=30) as client:
        game_id, tokens = create(client, ["human", "human", "greedy"], seed=SEED)
        received = {seat: [] for seat in (0, 1, None)}
        listeners = {seat: Listener(ws_url(live, game_id, tokens.get(seat))) for seat in received}
        final, posted = play_out(
            client,
            game_id,
            tokens,
            random.Random(2),
            seen=lambda s, text, k: received[s].append((text, k)),
            exchange_rate=0.2,
            exchanges_first=2,
        )
        spectator = client.get(f"/api/games/{game_id}")
        received[None].append((spectator.text, spectator.json()["version"] - 1))
        record = qc.GameRecord.from_json(client.get(f"/api/games/{game_id}/record").text)
    assert record.seed != SEED and final["over"]  # two humans: the seed is mixed with a server secret
    assert final["deal"]["creator_seed"] == SEED and final["deal"]["seed"] == record.seed
    assert sum(m.startswith("x ") for _, m in posted) >= 2  # exchanges: tiles back in the bag
    moments = Moments(record)
    start = json.loads(listeners[0].first)["version"]
    for seat, listener in listeners.items():
        messages = listener.join()
        versions = [json.loads(m)["version"] for m in messages]
        assert versions == list(range(start, start + len(messages)))  # one push per action
        assert len(messages) == len(record.actions) + 2 - start
        received[seat] += [(m, json.loads(m)["version"] - 1) for m in messages]
    checked = 0
    for seat, texts in received.items():
        for text, k in texts:
            assert leaks(text, seat, moments, k) == [], (seat, k, text)
            doc = json.loads(text)
            if "observation" in doc:
                obs = doc["observation"]
                assert obs["turn"] == k
                if seat is not None:
                    expected, moves = moments.observations[k][seat]
                    assert obs == expected
                    assert sorted(m["move"] for m in doc["legal_moves"]) == moves
                for a, h in zip(record.actions, doc["history"]):
                    hidden = a.move.kind == "exchange" and a.player != seat
                    assert h["move"] == (None if hidden else str(a.move)) and h["tiles"] == len(a.move)
            checked += 1
    assert checked > 3 * len(record.actions)
    # the scanner finds leaks planted in a real view
    text, k = next((t, k) for t, k in received[0] if k == 1 and "observation" in t)
    view = json.loads(text)
    other = moments.states[k]["hands"][1]
    planted = [
        {**view, "peek": other},
        {**view, "observation": {**view["observation"], "hand": other}},
        {**view, "note": f"seed {record.seed}"},
        {**view, "deal": {**view["deal"], "secret": final["deal"]["secret"]}},
        {**view, "bag": moments.states[k]["bag"]},
        {**view, "history": view["history"] + [{"move": " ".join(moments.states[k]["bag"])}]},
    ]
    assert all(leaks(json.dumps(doc), 0, moments, k) for doc in planted)
    # and not a tile's code by chance inside a random id (a game id "DmSs5OxOl-G3" was one)
    unseen = next(c + s for c in "ROYGBP" for s in "123456" if c + s not in moments.public_codes(k, 0))
    assert leaks(json.dumps({**view, "id": f"DmSs5OxOl-{unseen}"}), 0, moments, k) == []


def test_remote_bots_play_a_game(live):
    with httpx.Client(base_url=live.url, timeout=30) as client:
        game_id, tokens = create(client, ["human", "human"], seed=77)
    results = {}

    def bot(seat, agent):
        results[seat] = play_remote(live.url, game_id, tokens[seat], agent=agent, seed=seat)

    threads = [threading.Thread(target=bot, args=(seat, agent)) for seat, agent in ((0, "heuristic"), (1, "greedy"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert set(results) == {0, 1}
    assert all(v["over"] for v in results.values())
    assert results[0]["scores"] == results[1]["scores"]
    record = qc.GameRecord.from_json(httpx.get(f"{live.url}/api/games/{game_id}/record").text)
    assert list(qc.replay(record).scores) == results[0]["scores"]
    with pytest.raises(BotError, match="403"):
        play_remote(live.url, game_id, "not-a-token", agent="greedy")
    with pytest.raises(BotError, match="cannot talk"):
        play_remote("http://127.0.0.1:9", game_id, tokens[0], agent="greedy", timeout=2)
    with pytest.raises(ValueError, match="unknown agent"):
        play_remote(live.url, game_id, tokens[0], agent="genius")


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_qwirkle_bot_command(live):
    with httpx.Client(base_url=live.url, timeout=30) as client:
        game_id, tokens = create(client, ["greedy", "human"], seed=5)
    cmd = [
        sys.executable,
        "-m",
        "qwirkle_core.cli",
        "bot",
        "--url",
        live.url,
        "--game",
        game_id,
        "--token",
        tokens[1],
        "--agent",
        "heuristic",
        "--seed",
        "1",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "game over" in done.stdout and "seat 1:" in done.stdout
    record = qc.GameRecord.from_json(httpx.get(f"{live.url}/api/games/{game_id}/record").text)
    assert record.agents == ["greedy", "heuristic"] and qc.replay(record).is_over  # the bot's agent
    bad = subprocess.run(cmd[:-6] + ["--token", "wrong"], capture_output=True, text=True, timeout=60)
    assert (
        bad.returncode == 1
        and bad.stderr.startswith("qwirkle: error:")
        and "403" in bad.stderr
        and "Traceback" not in bad.stderr
    )


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_killed_server_resumes_every_game(store_url, tmp_path):
    """Play half a game on a server process, SIGKILL it, start it again on the same
    database: the same token finds the same game, which plays to an end that replays."""
    db = store_url
    log = open(tmp_path / "server.log", "w")
    server = ServerProcess(db, log)
    rng = random.Random(9)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            game_id, tokens = create(client, ["human", "greedy"], seed=123)
            auth = bearer(tokens[0])
            while True:
                view = client.get(f"/api/games/{game_id}", headers=auth).json()
                if view["observation"]["bag_size"] < 54:
                    break
                move = (
                    view["legal_moves"][rng.randrange(len(view["legal_moves"]))]["move"]
                    if view["legal_moves"]
                    else "x " + view["observation"]["hand"][0]
                )
                assert (
                    client.post(f"/api/games/{game_id}/actions", json={"move": move}, headers=auth).status_code == 200
                )
        server.kill()
        assert server.proc.returncode == -9
        if not db.startswith("postgresql://"):
            stored = Path(db).read_bytes() + Path(db + "-wal").read_bytes()
            assert tokens[0].encode() not in stored and token_digest(tokens[0]).encode() in stored
        server = ServerProcess(db, log)
        with httpx.Client(base_url=server.url, timeout=30) as client:
            assert client.get(f"/api/games/{game_id}", headers=auth).json() == view
            assert client.get(f"/api/games/{game_id}", params={"token": tokens[0]}).json() == view
            final, _ = play_out(client, game_id, {0: tokens[0]}, rng)
            record = qc.GameRecord.from_json(client.get(f"/api/games/{game_id}/record").text)
        game = qc.replay(record)
        assert game.is_over and list(game.scores) == final["scores"]
        for a, h in zip(record.actions, view["history"]):
            assert (a.player, a.points, list(a.scores), len(a.move)) == (
                h["player"],
                h["points"],
                h["scores"],
                h["tiles"],
            )
            assert h["move"] in (str(a.move), None)
    finally:
        server.kill()
        log.close()
    access_log = (tmp_path / "server.log").read_text()
    assert f"/api/games/{game_id}?token=***" in access_log and tokens[0] not in access_log


def test_the_minimal_bot_of_the_docs_plays_a_game(live, tmp_path):
    docs = (Path(__file__).parents[1] / "docs" / "server.md").read_text()
    code = re.search(r"```python script\n(import json, sys, time, urllib\.request\n.*?)```", docs, re.S).group(1)
    assert len(code.strip().splitlines()) <= 30
    (tmp_path / "bot.py").write_text(code)
    with httpx.Client(base_url=live.url, timeout=30) as client:
        game_id, tokens = create(client, ["human", "greedy"], seed=8)
    done = subprocess.run(
        [sys.executable, str(tmp_path / "bot.py"), live.url, game_id, tokens[0]],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    record = qc.GameRecord.from_json(httpx.get(f"{live.url}/api/games/{game_id}/record").text)
    assert done.stdout.splitlines()[-1] == f"final scores {list(qc.replay(record).scores)}"
