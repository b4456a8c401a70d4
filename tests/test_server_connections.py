"""Connections (docs/server.md, "Limits"): slow senders are cut off, a process holds a
bounded number of connections, and a game's WebSocket connections are counted over
every process of the store. Real sockets on 127.0.0.1."""

from __future__ import annotations

import socket
import time

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from qwirkle_core.server import create_app
from qwirkle_core.server.store import open_store
from server_support import OPEN, ServerProcess

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("connections")
    args = ("--header-timeout", "1", "--body-timeout", "1", "--max-connections", "8")
    with open(folder / "log", "wb") as log:
        process = ServerProcess(folder / "g.sqlite", log, *args)
    yield process
    process.kill()


def _open(server):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def _closed_within(s, seconds):
    """Read until the server closes ``s``; the bytes it sent, or None if still open
    after ``seconds``."""
    s.settimeout(seconds)
    received = b""
    try:
        while chunk := s.recv(4096):
            received += chunk
    except TimeoutError:
        return None
    return received


def test_a_connection_that_sends_nothing_is_closed(server):
    with _open(server) as s:
        t = time.monotonic()
        assert _closed_within(s, 10) == b""
        assert 0.8 < time.monotonic() - t < 5


def test_headers_sent_a_byte_at_a_time_are_cut_off(server):
    with _open(server) as s:
        t = time.monotonic()
        request = b"GET /api/agents HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
        try:
            for i in range(len(request)):
                s.send(request[i : i + 1])
                time.sleep(0.05)
        except OSError:
            pass  # closed while sending: what is tested
        assert _closed_within(s, 10) is not None
        assert time.monotonic() - t < 5


def test_a_body_that_does_not_arrive_answers_408(server):
    with _open(server) as s:
        s.sendall(
            b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"
        )
        t = time.monotonic()
        received = _closed_within(s, 10)
        assert received is not None and time.monotonic() - t < 5
    assert received.startswith(b"HTTP/1.1 408 "), received
    assert b"did not arrive within 1 s" in received


def _response(s: socket.socket) -> bytes:
    """One whole HTTP response from ``s``: its head, then as many body bytes as its
    Content-Length says (a head and its body may arrive in separate reads)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, f"the connection closed after {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")),
        0,
    )
    while len(body) < length:
        chunk = s.recv(65536)
        assert chunk, "the connection closed inside the body"
        body += chunk
    assert len(body) == length, "more bytes than the response's Content-Length"
    return head + b"\r\n\r\n" + body


def test_a_request_in_time_is_served_and_the_connection_kept(server):
    with _open(server) as s:
        for _ in range(2):
            s.sendall(b"GET /api/agents HTTP/1.1\r\nHost: x\r\n\r\n")
            s.settimeout(10)
            assert _response(s).startswith(b"HTTP/1.1 200 ")
            time.sleep(0.6)  # idle between requests: the keep-alive timeout's business, not the header's


def test_each_process_holds_a_bounded_number_of_connections(server):
    """--max-connections 8: with 8 idle connections open, a request on a new one
    answers 503 until they are closed."""
    idle = [_open(server) for _ in range(8)]
    try:
        time.sleep(0.2)
        r = httpx.get(f"{server.url}/api/agents", timeout=10)
        assert r.status_code == 503, r.text
    finally:
        for s in idle:
            s.close()
    time.sleep(0.3)
    assert httpx.get(f"{server.url}/api/agents", timeout=10).status_code == 200


def test_a_games_websockets_are_capped_over_both_workers(tmp_path):
    """--max-sockets 3 with --workers 2: of eight connections (spread by the kernel over
    the two processes) three get views, the others are closed with 4429."""
    with open(tmp_path / "log", "wb") as log:
        server = ServerProcess(tmp_path / "g.sqlite", log, "--workers", "2", "--max-sockets", "3")
    game = httpx.post(f"{server.url}/api/games", json={"seats": ["human", "greedy"]}, timeout=30).json()
    url = server.url.replace("http", "ws") + f"/api/games/{game['id']}/ws"
    accepted, refused = [], 0
    try:
        for _ in range(8):
            ws = connect(url, open_timeout=10)
            try:
                ws.recv(timeout=10)
                accepted.append(ws)
            except ConnectionClosed as e:
                assert e.rcvd.code == 4429, e
                refused += 1
                ws.close()
        assert len(accepted) == 3 and refused == 5
        accepted.pop().close()
        time.sleep(0.5)
        ws = connect(url, open_timeout=10)  # a place is free again
        ws.recv(timeout=10)
        accepted.append(ws)
    finally:
        for ws in accepted:
            ws.close()
        server.kill()


def test_websocket_counts_are_shared_through_the_store(store_url):
    """Two apps on one store (two processes): the cap counts both; a process that has
    stopped renewing its count (killed) no longer counts after HOLD_EXPIRY."""
    settings = OPEN.__class__(games_per_minute=100, max_sockets=2)
    with (
        TestClient(create_app(store_url, settings=settings)) as a,
        TestClient(create_app(store_url, settings=settings)) as b,
    ):
        game = a.post("/api/games", json={"seats": ["human", "greedy"]}).json()["id"]
        path = f"/api/games/{game}/ws"
        with a.websocket_connect(path) as one, b.websocket_connect(path) as two:
            one.receive_json()
            two.receive_json()
            with b.websocket_connect(path) as three:
                with pytest.raises(WebSocketDisconnect) as refused:
                    three.receive_json()
            assert refused.value.code == 4429
        with b.websocket_connect(path) as again:  # the two closed: places again
            assert again.receive_json()["id"] == game
    store = open_store(store_url)
    try:
        now = time.time()
        assert store.join("g", "dead", 2, now - 10) and store.join("g", "dead", 2, now - 10)
        assert not store.join("g", "alive", 2, now - 10)
        assert store.join("g", "alive", 2, now + 1)  # 'dead' last said it held them before now + 1
        store.leave("g", "alive")
        store.release("dead")
        assert store.join("g", "alive", 2, now - 10) and store.join("g", "alive", 2, now - 10)
    finally:
        store.close()
