"""What a stranger can cost the server (docs/server.md, "Limits"): the agents' bounds
derived from the parameter table, the agent threads shared fairly between clients, the
waits' deadline, the rate of new games, the cap on games in play, and expiry."""

from __future__ import annotations

import json
import os
import random
import socket
import statistics
import sys
import threading
import time

import httpx
import pytest

import qwirkle_core as qc
from qwirkle_core.game.agents import AGENTS, agent_params
from qwirkle_core.server import create_app, engine
from qwirkle_core.server.guard import RateLimit, Settings
from server_support import OPEN, LiveServer, ServerProcess, bearer

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

# -- the agents' bounds ---------------------------------------------------------------------


def test_every_parameter_that_buys_compute_is_bounded():
    """From the table: each ``*_ms`` parameter at most --max-agent-ms; each integer
    parameter of an agent without a time budget bounded (held to its default when the
    server has no bound for it); weights and choices free."""
    limits = engine.agent_limits(250)
    for name in AGENTS:
        params = agent_params(name)
        timed = any(p.name.endswith("_ms") and p.kind == "float" for p in params)
        for p in params:
            bound = limits.get(name, {}).get(p.name)
            if p.kind == "float" and p.name.endswith("_ms"):
                assert bound is not None and bound[1] <= 250, (name, p.name)
            elif p.kind == "int" and not timed:
                lo, hi = bound if bound is not None else (p.lo, p.hi)
                cap = engine.COUNT_CAPS.get(p.name, (p.default, p.default))
                assert p.lo <= lo and hi <= p.hi and hi <= max(cap[1], p.default), (name, p.name, bound)
            else:
                assert bound is None, (name, p.name)
    assert limits["search"]["time_ms"] == (0.1, 250)
    assert limits["mc"]["depth"][0] == 1  # depth 0 plays out to the end: refused
    assert engine.agent_limits(30)["mc"]["playouts"][1] < engine.agent_limits(300)["mc"]["playouts"][1]


@pytest.mark.parametrize(
    "spec, allowed",
    [
        ("search:time_ms=600000", False),
        ("search:time_ms=8000:budget=clock", False),
        ("search:time_ms=300:budget=clock", True),
        ("search:time_ms=300:candidates=64:depth=0", True),  # the time budget bounds the rest
        ("mc:depth=0", False),
        ("mc:playouts=257", False),
        ("mc:playouts=256:candidates=32:depth=8", True),
        ("heuristic:breadth=33", False),
        ("heuristic:horizon=108:breadth=32:samples=16:reply=3", True),
    ],
)
def test_specs_beyond_the_bounds_are_refused_with_422(spec, allowed, tmp_path):
    with TestClient(create_app(str(tmp_path / "g.sqlite"), settings=OPEN)) as c:
        r = c.post("/api/games", json={"seats": ["human", spec]})
        assert r.status_code == (201 if allowed else 422), r.text
        if not allowed:
            assert "on this server" in r.json()["error"]
        caps = c.get("/api/agents").json()
        assert caps["max_agent_ms"] == 300 and caps["caps"]["search"]["time_ms"] == [0.1, 300]


def test_max_agent_ms_sets_the_bound(tmp_path):
    with TestClient(create_app(str(tmp_path / "g.sqlite"), settings=Settings(max_agent_ms=40))) as c:
        r = c.post("/api/games", json={"seats": ["human", "search:time_ms=41"]})
        assert r.status_code == 422 and "time_ms is 0.1 .. 40 on this server, not 41" in r.json()["error"]
        assert c.post("/api/games", json={"seats": ["human", "search:time_ms=40"]}).status_code == 201


# -- games: rate, cap, expiry ---------------------------------------------------------------------


def test_new_games_are_rate_limited_per_address(tmp_path):
    app = create_app(str(tmp_path / "g.sqlite"), settings=Settings(games_per_minute=3))
    with TestClient(app, client=("10.0.0.1", 1000)) as a, TestClient(app, client=("10.0.0.2", 1000)) as b:
        for _ in range(3):
            assert a.post("/api/games", json={"seats": ["human", "greedy"]}).status_code == 201
        r = a.post("/api/games", json={"seats": ["human", "greedy"]})
        assert r.status_code == 429 and 1 <= int(r.headers["Retry-After"]) <= 21, r.text
        assert "at most 3 new games a minute" in r.json()["error"]
        assert b.post("/api/games", json={"seats": ["human", "greedy"]}).status_code == 201


def test_rate_limit_refills():
    now = [0.0]
    rate = RateLimit(2, clock=lambda: now[0])
    assert rate.take("a") == 0 and rate.take("a") == 0
    assert rate.take("a") == pytest.approx(30.0)
    now[0] = 29.0
    assert rate.take("a") == pytest.approx(1.0)
    now[0] = 30.0
    assert rate.take("a") == 0 and rate.take("b") == 0


def test_games_in_play_are_capped(store_url):
    with TestClient(create_app(store_url, settings=Settings(games_per_minute=100, max_games=2))) as c:
        ids = [c.post("/api/games", json={"seats": ["human", "greedy"]}).json()["id"] for _ in range(2)]
        r = c.post("/api/games", json={"seats": ["human", "greedy"]})
        assert r.status_code == 503 and r.headers["Retry-After"] == "60" and "most games (2)" in r.json()["error"]
        assert len(ids) == 2


def test_idle_games_expire_and_their_records_are_kept(store_url, tmp_path):
    folder = tmp_path / "records"
    settings = Settings(games_per_minute=100, expire_after_s=0.5, records_dir=str(folder))
    with TestClient(create_app(store_url, settings=settings)) as c:
        game = c.post("/api/games", json={"seats": ["human", "greedy"], "seed": 5}).json()
        token = game["seats"][0]["token"]
        view = c.get(f"/api/games/{game['id']}", headers=bearer(token)).json()
        move = view["legal_moves"][0]["move"]
        assert c.post(f"/api/games/{game['id']}/actions", json={"move": move}, headers=bearer(token)).status_code == 200
        deadline = time.monotonic() + 20
        while c.get(f"/api/games/{game['id']}").status_code != 404:  # the sweeper runs every 0.5 s
            assert time.monotonic() < deadline, "the game did not expire"
            time.sleep(0.2)
    record = qc.GameRecord.from_json((folder / f"{game['id']}.json").read_text())
    assert record.seed == 5 and len(qc.replay(record).history) >= 2
    assert not [p for p in os.listdir(folder) if p.endswith(".tmp")]


# -- the agent threads and the waits ------------------------------------------------------------


def _client(address, url):
    """An HTTP client whose connections come from ``address`` (any of 127.0.0.0/8 is
    this machine), with Nagle's algorithm off, as browsers have it (else a POST's body
    may wait for the ACK of its headers, up to 40 ms)."""
    options = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    transport = httpx.HTTPTransport(local_address=address, socket_options=options)
    return httpx.Client(base_url=url, transport=transport, timeout=60)


def _game(client, seats):
    r = client.post("/api/games", json={"seats": seats})
    assert r.status_code == 201, r.text
    data = r.json()
    return data["id"], data["seats"][0]["token"]


def _round(client, game_id, token, rng, times):
    """One move of the human seat (a view, then a move): appends the seconds each
    request took; returns False once the game is over."""
    t = time.monotonic()
    view = client.get(f"/api/games/{game_id}", headers=bearer(token))
    times.append(time.monotonic() - t)
    assert view.status_code == 200, view.text
    view = view.json()
    if view["over"]:
        return False
    moves = view["legal_moves"]
    move = moves[0]["move"] if moves else ("x " + view["observation"]["hand"][0] if view["can_exchange"] else "pass")
    t = time.monotonic()
    r = client.post(f"/api/games/{game_id}/actions", json={"move": move}, headers=bearer(token))
    times.append(time.monotonic() - t)
    assert r.status_code == 200, r.text
    return True


def _play(client, rounds, times, rng):
    game_id, token = _game(client, ["human", "greedy"])
    for _ in range(rounds):
        if not _round(client, game_id, token, rng, times):
            game_id, token = _game(client, ["human", "greedy"])


def _p99(times):
    return statistics.quantiles(times, n=100)[98]


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_a_flood_of_maximal_cost_requests_leaves_another_client_served(tmp_path):
    """Client A (127.0.0.2) floods a ``qwirkle serve`` process with the most expensive
    requests it may make: six connections creating games of five ``search`` seats at the
    most time per turn on the clock, asking hints and moving. Client B (127.0.0.3) plays
    against greedy. B's p99 request time under the flood stays within 3x its quiet
    value, and no request of either takes longer than the documented limit."""
    settings = Settings(agent_threads=2, max_wait_s=2.0)
    heavy = ["human"] + ["search:time_ms=300:budget=clock"] * 5
    args = ("--agent-threads", "2", "--max-wait", "2", "--no-access-log")
    with open(tmp_path / "log", "wb") as log:
        server = ServerProcess(tmp_path / "g.sqlite", log, *args)
    try:
        b = _client("127.0.0.3", server.url)
        rng = random.Random(1)
        _play(b, 10, [], rng)  # warm up: compiles, connections
        with _client("127.0.0.2", server.url) as a:
            _game(a, heavy)
        stop, flooding, idle = threading.Event(), threading.Event(), threading.Semaphore(0)
        flood_times, statuses, errors = [], [], []

        def timed(call, *args, **kwargs):
            t = time.monotonic()
            r = call(*args, **kwargs)
            flood_times.append(time.monotonic() - t)
            statuses.append(r.status_code)
            assert r.status_code in (200, 201, 503), r.text
            if r.status_code == 503:
                assert r.headers["Retry-After"], r.text
            return r

        def flood():
            try:
                with _client("127.0.0.2", server.url) as c:
                    while not stop.is_set():
                        if not flooding.is_set():
                            idle.release()
                            while not (flooding.wait(0.05) or stop.is_set()):
                                pass
                            continue
                        r = timed(c.post, "/api/games", json={"seats": heavy})
                        if r.status_code != 201:
                            continue
                        game_id, token = r.json()["id"], r.json()["seats"][0]["token"]
                        timed(c.get, f"/api/games/{game_id}/hint", headers=bearer(token))
                        r = timed(c.get, f"/api/games/{game_id}", headers=bearer(token))
                        if r.status_code == 200 and r.json()["legal_moves"]:
                            move = {"move": r.json()["legal_moves"][0]["move"]}
                            timed(c.post, f"/api/games/{game_id}/actions", json=move, headers=bearer(token))
            except BaseException as e:  # noqa: BLE001 - reported by the test
                errors.append(e)
                idle.release()

        threads = [threading.Thread(target=flood) for _ in range(6)]
        for t in threads:
            t.start()
        quiet, loaded = [], []
        try:
            for _ in range(3):  # quiet and flooded in turns, so that both see the machine's other load alike
                for _ in threads:
                    idle.acquire()  # every flood thread has finished its requests
                _play(b, 40, quiet, rng)
                flooding.set()
                time.sleep(1.0)  # the flood is under way
                _play(b, 40, loaded, rng)
                flooding.clear()
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=120)
        b.close()
    finally:
        server.kill()
    assert not errors, errors
    assert statuses.count(200) + statuses.count(201) >= 6, statuses  # the flood did run agents
    limit = settings.request_limit_s
    assert max(flood_times + quiet + loaded) <= limit, (max(flood_times), limit)
    print(
        f"quiet p99 {_p99(quiet) * 1e3:.1f} ms, under the flood {_p99(loaded) * 1e3:.1f} ms; "
        f"flood: {len(statuses)} requests, {statuses.count(503)} answered 503, longest {max(flood_times):.2f} s"
    )
    # 3 times the quiet p99, but never less than 50 ms: on a quiet machine the quiet p99 is
    # 2-4 ms, below the scheduler's granularity while the flood's (niced) agent threads
    # hold both cores, and a ratio of such small numbers failed twice in CI (4.7x, 4.8x:
    # 18-24 ms, the other client still served at once by any measure a person notices)
    assert _p99(loaded) <= max(3 * _p99(quiet), 0.050), (_p99(quiet), _p99(loaded))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a niceness per thread is Linux's")
def test_agents_and_hints_run_at_a_lower_cpu_priority_than_the_requests(tmp_path):
    """Hints and not-yet-cheap agents' turns run on the agent threads, ten steps nicer
    than the threads that handle the requests; cheap turns are not put there."""
    me = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    app = create_app(str(tmp_path / "g.sqlite"), settings=Settings(agent_threads=3))

    before = set(threading.enumerate())

    def agent_threads():
        return [t for t in threading.enumerate() if t.name.startswith("qwirkle-agent") and t not in before]

    with TestClient(app) as c:
        game_id, token = _game(c, ["human", "greedy"])
        view = c.get(f"/api/games/{game_id}", headers=bearer(token)).json()
        body = {"move": view["legal_moves"][0]["move"]}
        assert c.post(f"/api/games/{game_id}/actions", json=body, headers=bearer(token)).status_code == 200
        first = len(agent_threads())  # greedy's first turn (not yet measured cheap) ran there
        assert c.get(f"/api/games/{game_id}/hint", headers=bearer(token)).status_code == 200
        threads = agent_threads()
        assert first == 1 and 1 <= len(threads) <= 3, (first, threads)
        assert [os.getpriority(os.PRIO_PROCESS, t.native_id) for t in threads] == [min(19, me + 10)] * len(threads)
        assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == me
    for t in threads:  # the app's end ends them
        t.join(timeout=10)
        assert not t.is_alive()


def test_a_request_that_cannot_get_its_game_in_time_answers_503(tmp_path):
    """A second request on a game whose lock is held by agents' turns longer than the
    wait answers 503 with Retry-After, within the wait."""
    settings = Settings(games_per_minute=100, max_wait_s=0.3, max_agent_ms=600)
    with LiveServer(str(tmp_path / "g.sqlite"), settings=settings) as server:
        with _client("127.0.0.2", server.url) as c:
            game_id, token = _game(c, ["human"] + ["search:time_ms=600:budget=clock"] * 2)
            view = c.get(f"/api/games/{game_id}", headers=bearer(token)).json()
            answers = {}

            def move():
                body = {"move": view["legal_moves"][0]["move"]}
                answers["move"] = c.post(f"/api/games/{game_id}/actions", json=body, headers=bearer(token))

            mover = threading.Thread(target=move)
            mover.start()
            time.sleep(0.3)
            with _client("127.0.0.3", server.url) as other:
                t = time.monotonic()
                r = other.get(f"/api/games/{game_id}/hint", headers=bearer(token))
                waited = time.monotonic() - t
            mover.join()
    assert answers["move"].status_code == 200
    assert r.status_code == 503 and r.headers["Retry-After"] == "1", r.text
    assert "another request on this game" in r.json()["error"] and waited < 1.0
    json.loads(r.text)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["serve", "--max-agent-ms", "0"], "argument --max-agent-ms: milliseconds is 1 .. 60000, not 0"),
        (["serve", "--max-agent-ms", "nan"], "argument --max-agent-ms: milliseconds is 1 .. 60000, not nan"),
        (["serve", "--max-wait", "x"], "argument --max-wait: expected seconds, got 'x'"),
        (["serve", "--games-per-minute", "0"], "argument --games-per-minute: a number of games is 1 .. 1e+09"),
        (["serve", "--header-timeout", "-1"], "argument --header-timeout: seconds is 0.01 .. 3600, not -1"),
        (["serve", "--max-sockets", "1.5"], "argument --max-sockets: expected a number of connections, got '1.5'"),
    ],
)
def test_limit_options_are_checked(argv, message, capsys):
    from qwirkle_core.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("qwirkle: error:") and message in err and err.count("\n") == 1, err


def test_keep_records_must_be_writable(tmp_path, capsys):
    from qwirkle_core.cli import main

    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["serve", "--db", str(tmp_path / "g.sqlite"), "--keep-records", str(blocker / "records")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("qwirkle: error: argument --keep-records: cannot write") and err.count("\n") == 1, err
