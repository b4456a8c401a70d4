"""Load benchmark of the game server (run by hand; not a test).

Starts ``qwirkle serve`` on 127.0.0.1 with a fresh SQLite file (or uses --url), then
plays GAMES games of a human seat against an agent, all at once, through the HTTP API
with one bounded client (at most CONNECTIONS requests in flight). The human seat plays
the highest-scoring legal move its view offers (an exchange, else a pass, when none).
After one warm-up game (the server's first game loads the compiled kernels), it
reports the latency of the actions (POST .../actions, which returns after the agent's
reply has been stored) and of the views (GET), then checks that every game finished
and that its record replays.

    python benchmarks/server_load.py --games 200 --connections 32
"""

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time

import httpx

import qwirkle_core as qc


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q / 100 * len(values)))]


async def play(client, gate, game_no, args, times):
    async def call(kind, method, url, **kw):
        async with gate:
            start = time.perf_counter()
            r = await client.request(method, url, **kw)
            times[kind].append(time.perf_counter() - start)
        if r.status_code not in (200, 201):
            raise RuntimeError(f"game {game_no}: {method} {url}: {r.status_code} {r.text}")
        return r.json()

    game = await call(
        "create", "POST", "/api/games", json={"seats": ["human", args.agent], "seed": args.seed + game_no}
    )
    game_id, token = game["id"], game["seats"][0]["token"]
    auth = {"Authorization": f"Bearer {token}"}
    while True:
        view = await call("view", "GET", f"/api/games/{game_id}", headers=auth)
        if view["over"]:
            return game_id, view["scores"]
        if view["legal_moves"]:
            move = view["legal_moves"][0]["move"]
        elif view["can_exchange"]:
            move = "x " + " ".join(view["observation"]["hand"][: view["can_exchange"]])
        else:
            move = "pass"
        await call("action", "POST", f"/api/games/{game_id}/actions", json={"move": move}, headers=auth)


async def run(url, args):
    times = {"create": [], "view": [], "action": []}
    limits = httpx.Limits(max_connections=args.connections, max_keepalive_connections=args.connections)
    gate = asyncio.Semaphore(args.connections)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as client:
        await play(client, gate, args.games, args, {"create": [], "view": [], "action": []})  # warm-up, not counted
        start = time.perf_counter()
        results = await asyncio.gather(*(play(client, gate, i, args, times) for i in range(args.games)))
        wall = time.perf_counter() - start
        records = [await client.get(f"/api/games/{game_id}/record") for game_id, _ in results]
    for (game_id, scores), r in zip(results, records):
        game = qc.replay(qc.GameRecord.from_json(r.text))
        if not game.is_over or list(game.scores) != scores:
            raise SystemExit(f"game {game_id}: the record does not replay to the final view")
    return times, wall


def wait_ready(url, proc):
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"{url}/api/agents", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit("the server did not start")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games played at once (default: 200)")
    parser.add_argument(
        "--connections", type=int, default=32, help="the client's requests in flight at most (default: 32)"
    )
    parser.add_argument("--agent", default="greedy", help="the agent seat (default: greedy)")
    parser.add_argument("--seed", type=int, default=1, help="game i is dealt from seed + i (default: 1)")
    parser.add_argument("--port", type=int, default=8765, help="port of the server started here (default: 8765)")
    parser.add_argument("--url", default=None, help="use this running server instead of starting one")
    args = parser.parse_args()
    proc = None
    with tempfile.TemporaryDirectory() as tmp:
        url = args.url
        if url is None:
            url = f"http://127.0.0.1:{args.port}"
            cmd = [
                sys.executable,
                "-m",
                "qwirkle_core.cli",
                "serve",
                "--port",
                str(args.port),
                "--db",
                os.path.join(tmp, "load.sqlite"),
            ]
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_ready(url, proc)
        try:
            times, wall = asyncio.run(run(url, args))
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=30)
    actions = times["action"]
    print(
        f"{args.games} games (human vs {args.agent}) at once, client bounded to {args.connections} requests in flight, on {url}"
    )
    print(
        f"all {args.games} finished and replay; {len(actions)} actions, {len(times['view'])} views in {wall:.1f} s ({len(actions) / wall:.0f} actions/s)"
    )
    for kind in ("action", "view", "create"):
        ms = [1000 * t for t in times[kind]]
        print(
            f"{kind:>7} latency: p50 {percentile(ms, 50):.1f} ms, p99 {percentile(ms, 99):.1f} ms, max {max(ms):.1f} ms, mean {statistics.fmean(ms):.1f} ms"
        )


if __name__ == "__main__":
    main()
