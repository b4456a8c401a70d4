"""Load benchmark of the game server (run by hand; not a test).

Starts ``qwirkle serve`` on 127.0.0.1 with a fresh store (a SQLite file in a temporary
folder, or a new database of the PostgreSQL server ``--postgres URL`` names), once
per ``--workers`` count, and plays GAMES games of a human seat against an agent, all
at once, through the HTTP API from one client that keeps at most CONNECTIONS requests
in flight. The human seat plays the highest-scoring legal move its view offers (an
exchange, else a pass, when none). After one warm-up game per worker (a server
process's first game loads the compiled kernels), it reports actions/s and the
latency of the actions (POST .../actions, which returns after the agent's reply has
been stored) and of the views (GET), then checks that every game finished and that
its record replays.

``--baseline REV`` (e.g. ``bb60d5d``, the main branch before the stores) also runs
the server of that git revision, exported with ``git archive`` into a temporary
folder, in the same run with the same client, and prints the ratio.

The client is a minimal HTTP/1.1 client on asyncio streams (keep-alive, one request
per connection at a time): on a small machine the client shares the cores with the
server, and an ordinary client (httpx) spends more CPU per request than the server.

    python benchmarks/server_load.py --games 200 --connections 32 --workers 1,2 --baseline bb60d5d
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from io import BytesIO
from pathlib import Path

import qwirkle_core as qc

ROOT = Path(__file__).resolve().parent.parent


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q / 100 * len(values)))]


class Client:
    """At most ``size`` keep-alive HTTP/1.1 connections to 127.0.0.1:``port``."""

    def __init__(self, port, size):
        self.port = port
        self.size = size
        self.pool = asyncio.Queue()
        self.opened = 0

    async def _conn(self):
        if self.pool.empty() and self.opened < self.size:
            self.opened += 1
            return await asyncio.open_connection("127.0.0.1", self.port)
        return await self.pool.get()

    async def request(self, method, path, body=None, token=None):
        """(status, parsed JSON body); a connection the server closed is opened again once."""
        data = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(data)}\r\n"
        if body is not None:
            head += "Content-Type: application/json\r\n"
        if token:
            head += f"Authorization: Bearer {token}\r\n"
        message = head.encode() + b"\r\n" + data
        for attempt in (0, 1):
            reader, writer = await self._conn()
            try:
                writer.write(message)
                status_line = await reader.readline()
                if not status_line:
                    raise ConnectionError("closed")
                length = 0
                while (line := await reader.readline()) not in (b"\r\n", b""):
                    name, _, value = line.partition(b":")
                    if name.lower() == b"content-length":
                        length = int(value)
                payload = await reader.readexactly(length)
            except (ConnectionError, asyncio.IncompleteReadError):
                writer.close()
                self.opened -= 1
                if attempt:
                    raise
                continue
            self.pool.put_nowait((reader, writer))
            return int(status_line.split()[1]), json.loads(payload)
        raise AssertionError("unreachable")

    def close(self):
        while not self.pool.empty():
            self.pool.get_nowait()[1].close()


async def play(client, game_no, args, times):
    async def call(kind, method, url, body=None, token=None):
        start = time.perf_counter()
        status, doc = await client.request(method, url, body, token)
        times[kind].append(time.perf_counter() - start)
        if status not in (200, 201):
            raise RuntimeError(f"game {game_no}: {method} {url}: {status} {doc}")
        return doc

    game = await call("create", "POST", "/api/games", {"seats": ["human", args.agent], "seed": args.seed + game_no})
    game_id, token = game["id"], game["seats"][0]["token"]
    while True:
        view = await call("view", "GET", f"/api/games/{game_id}", token=token)
        if view["over"]:
            return game_id, view["scores"]
        if view["legal_moves"]:
            move = view["legal_moves"][0]["move"]
        elif view["can_exchange"]:
            move = "x " + " ".join(view["observation"]["hand"][: view["can_exchange"]])
        else:
            move = "pass"
        await call("action", "POST", f"/api/games/{game_id}/actions", {"move": move}, token)


async def run(port, args, workers):
    times = {"create": [], "view": [], "action": []}
    client = Client(port, args.connections)
    try:
        spare = {"create": [], "view": [], "action": []}
        # warm-up, not counted: enough games at once that every worker plays one
        await asyncio.gather(*(play(client, 10**6 + i, args, spare) for i in range(2 * workers)))
        start = time.perf_counter()
        results = await asyncio.gather(*(play(client, i, args, times) for i in range(args.games)))
        wall = time.perf_counter() - start
    finally:
        client.close()
    for game_id, scores in results:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/games/{game_id}/record") as r:
            game = qc.replay(qc.GameRecord.from_json(r.read().decode()))
        if not game.is_over or list(game.scores) != scores:
            raise SystemExit(f"game {game_id}: the record does not replay to the final view")
    return times, wall


def wait_ready(url, proc):
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"{url}/api/agents", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not start")


def export(rev, folder):
    """``git archive REV src`` unpacked into ``folder``; returns its src/."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(folder, filter="data")
    return os.path.join(folder, "src")


def new_postgres_database(url, n):
    import psycopg

    name = f"qwirkle_load_{os.getpid()}_{n}"
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"DROP DATABASE IF EXISTS {name}")
        db.execute(f"CREATE DATABASE {name}")
    base, _, query = url.partition("?")
    return base.rsplit("/", 1)[0] + "/" + name + (f"?{query}" if query else "")


def _serve_help(src):
    """``qwirkle serve --help`` of the code in ``src`` (which options it has)."""
    env = {**os.environ, "PYTHONPATH": src}
    cmd = [sys.executable, "-m", "qwirkle_core.cli", "serve", "--help"]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120).stdout


def measure(label, src, workers, args, tmp, n):
    """Start a server of the code in ``src`` with ``workers`` processes and run the load."""
    port = args.port + n
    if args.postgres and not label.startswith("baseline"):  # a baseline may predate the PostgreSQL store
        db = new_postgres_database(args.postgres, n)
    else:
        db = os.path.join(tmp, f"load{n}.sqlite")
    cmd = [sys.executable, "-m", "qwirkle_core.cli", "serve", "--port", str(port), "--db", db]
    if workers > 1:
        cmd += ["--workers", str(workers)]
    if args.no_access_log and not label.startswith("baseline"):
        cmd += ["--no-access-log"]
    if "--games-per-minute" in _serve_help(src):
        cmd += ["--games-per-minute", str(10**9)]  # one client creates every game of the load
    env = {**os.environ, "PYTHONPATH": src}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        wait_ready(f"http://127.0.0.1:{port}", proc)
        times, wall = asyncio.run(run(port, args, workers))
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    actions = times["action"]
    rate = len(actions) / wall
    store = "PostgreSQL" if args.postgres and not label.startswith("baseline") else "SQLite"
    print(
        f"{label} ({store}), {workers} worker{'s' if workers > 1 else ''}: all {args.games} games finished and replay; "
        f"{len(actions)} actions, {len(times['view'])} views in {wall:.1f} s ({rate:.0f} actions/s)"
    )
    for kind in ("action", "view"):
        ms = [1000 * t for t in times[kind]]
        print(
            f"  {kind:>6} latency: p50 {percentile(ms, 50):.1f} ms, p99 {percentile(ms, 99):.1f} ms, "
            f"max {max(ms):.1f} ms, mean {statistics.fmean(ms):.1f} ms"
        )
    sys.stdout.flush()
    return rate


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games played at once (default: 200)")
    parser.add_argument(
        "--connections", type=int, default=32, help="the client's requests in flight at most (default: 32)"
    )
    parser.add_argument("--agent", default="greedy", help="the agent seat (default: greedy)")
    parser.add_argument("--seed", type=int, default=1, help="game i is dealt from seed + i (default: 1)")
    parser.add_argument("--port", type=int, default=8765, help="first port of the servers started here (default: 8765)")
    parser.add_argument("--workers", default="1,2", help="worker counts to measure, comma-separated (default: 1,2)")
    parser.add_argument("--baseline", metavar="REV", help="also measure the server of this git revision (1 worker)")
    parser.add_argument(
        "--postgres", metavar="URL", help="store this tree's games in new databases of this PostgreSQL server"
    )
    parser.add_argument("--no-access-log", action="store_true", help="start this tree's servers with --no-access-log")
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    print(
        f"{args.games} games (human vs {args.agent}) at once, client bounded to {args.connections} requests "
        f"in flight, {os.cpu_count()} cores"
    )
    rates = {}
    with tempfile.TemporaryDirectory() as tmp:
        n = 0
        if args.baseline:
            src = export(args.baseline, os.path.join(tmp, "baseline"))
            rates["baseline"] = measure(f"baseline {args.baseline}", src, 1, args, tmp, n)
            n += 1
        for workers in counts:
            rates[workers] = measure("this tree", str(ROOT / "src"), workers, args, tmp, n)
            n += 1
    if "baseline" in rates:
        best = max(counts, key=lambda w: rates[w])
        print(
            ", ".join(f"{w} worker{'s' if w > 1 else ''}: {rates[w] / rates['baseline']:.1f}x" for w in counts)
            + f" the baseline's actions/s (best: {best})"
        )


if __name__ == "__main__":
    main()
