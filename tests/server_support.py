"""Helpers of the server tests: a real uvicorn server, a server process, a player
that chooses moves from a seat's view only, and the hidden-information scanner."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import uvicorn

import qwirkle_core as qc
from qwirkle_core.server import create_app
from qwirkle_core.server.guard import Settings

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


OPEN = Settings(games_per_minute=100_000)  # the tests' servers: one client creates many games
OPEN_ARGS = ("--games-per-minute", "100000")


class LiveServer:
    """The app of ``db`` served by uvicorn in a thread on a free port of 127.0.0.1;
    ``settings`` default to :data:`OPEN`; ``config`` adds uvicorn options."""

    def __init__(self, db, settings=OPEN, **config):
        self.app = create_app(db, settings=settings)
        config = uvicorn.Config(self.app, host="127.0.0.1", port=0, log_level="warning", ws_max_size=4096, **config)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=30)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SUITE_MARK = "QWIRKLE_TEST_SUITE"
"""The environment variable every server process of the test suite carries (the pid of
the pytest process), so a test can find any that is left running."""


def suite_processes(mark=None):
    """The pids of live (not zombie) processes whose environment carries ``SUITE_MARK``
    (with the value ``mark``; default this process's pid)."""
    want = f"{SUITE_MARK}={mark or os.getpid()}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if want not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
        except OSError:
            continue
        found.append(int(entry))
    return found


class ServerProcess:
    """``qwirkle serve --db DB [ARGS]`` as a child process (stopped with SIGKILL by
    :meth:`kill`); ``port``: a given port (several processes may share one: --workers)."""

    def __init__(self, db, log, *args, port=None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "qwirkle_core.cli", "serve", "--port", str(self.port), "--db", str(db)]
        cmd += [*OPEN_ARGS, *args]
        # its own process group, so kill() stops its --workers processes with it
        env = {**os.environ, SUITE_MARK: str(os.getpid())}  # tests/test_no_leftovers.py looks for it
        self.proc = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, env=env
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{self.url}/api/agents", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"the server process did not start (exit status {self.proc.returncode})")
            time.sleep(0.1)

    def kill(self):
        """SIGKILL to the whole process group: the server and every worker it started."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)


# -- playing from a seat's view ---------------------------------------------------------


def choose(view, rng, exchange_rate=0.1):
    """A move (notation) for the seat of ``view``, which must be to move, chosen from
    what the view offers: a random legal placement, sometimes an exchange."""
    moves = view["legal_moves"]
    hand = view["observation"]["hand"]
    if view["can_exchange"] and (not moves or rng.random() < exchange_rate):
        k = rng.randint(1, view["can_exchange"])
        return "x " + " ".join(rng.sample(hand, k))
    if moves:
        return rng.choice(moves)["move"]
    assert view["can_pass"], view
    return "pass"


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def play_out(client, game_id, tokens, rng, seen=None, max_actions=500, exchange_rate=0.1, exchanges_first=0):
    """Play the human seats of a game (``tokens``: seat -> token) to the end through the
    API with :func:`choose`; the first ``exchanges_first`` actions posted are exchanges
    wherever one is allowed. ``seen(seat, text, k)`` gets every response body each seat
    receives, with ``k`` the number of actions the game had when it was sent (for a
    game without undos). Returns (final view of the first human seat, moves posted)."""
    posted = []
    first = min(tokens)
    for _ in range(max_actions):
        views = {}
        for seat, token in tokens.items():
            r = client.get(f"/api/games/{game_id}", headers=bearer(token))
            assert r.status_code == 200, r.text
            views[seat] = r.json()
            if seen:
                seen(seat, r.text, views[seat]["version"] - 1)
        view = views[first]
        if view["over"]:
            return view, posted
        seat = view["to_move"]
        assert seat in tokens, f"seat {seat} is an agent, but the game waits for it"
        move = choose(views[seat], rng, 1.0 if len(posted) < exchanges_first else exchange_rate)
        r = client.post(f"/api/games/{game_id}/actions", json={"move": move}, headers=bearer(tokens[seat]))
        assert r.status_code == 200, r.text
        if seen:
            seen(seat, r.text, views[seat]["version"])  # its own action's tiles are on view
        posted.append((seat, r.json()["move"]))
    raise AssertionError("the game did not end")


# -- hidden information -------------------------------------------------------------------

CODE = re.compile(r"\b[ROYGBP][1-6]\b")
FORBIDDEN_KEYS = {"seed", "hands", "bag", "rng", "record", "setup", "actions", "token"}


class Moments:
    """The true state after each number of actions of a finished game's record:
    every hand, the bag, the seed and random streams (from ``qc.replay``-style replay)."""

    def __init__(self, record):
        self.record = record
        g = qc.Game(seed=record.seed, rules=record.rules)
        self.states = [self._state(g)]
        self.observations = [self._observations(g)]
        for a in record.actions:
            g.play(a.move)
            self.states.append(self._state(g))
            self.observations.append(self._observations(g))

    @staticmethod
    def _observations(g):
        """Per seat: the library's observation document and legal moves (to move only)."""
        moves = sorted(str(m) for m in g.legal_moves())
        return [
            (g.observation(p).to_dict(), moves if p == g.current_player and not g.is_over else [])
            for p in range(g.players)
        ]

    @staticmethod
    def _state(g):
        pos = g.to_dict()
        return {
            "hands": pos["hands"],
            "bag": pos["bag"],
            "rng": pos["rng"],
            "board": [qc.tile_code(t) for t in g.board.values()],
        }

    def public_codes(self, k, seat):
        """Tile codes seat ``seat`` (None: a spectator) may know of after ``k`` actions:
        the board, its hand, every placement so far and its own exchanges."""
        codes = set(self.states[k]["board"])
        if seat is not None:
            codes |= set(self.states[k]["hands"][seat])
        for a in self.record.actions[:k]:
            if a.move.kind == "place" or a.player == seat:
                codes |= {qc.tile_code(t) for t in a.move.tiles}
        return codes


def _keys(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _keys(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _keys(v)


def _identifiers(obj):
    """The string values of the ids and tokens in ``obj`` (a parsed JSON document)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, str) and (k in ("id", "token") or k.endswith("_id")):
                yield v
            yield from _identifiers(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _identifiers(v)


def leaks(text, seat, moments, k):
    """What ``text`` (a response or message received by ``seat`` after ``k`` actions)
    shows that the seat may not see; an empty list when nothing."""
    found = []
    state = moments.states[k]
    public = moments.public_codes(k, seat)
    secret = {c for p, h in enumerate(state["hands"]) if p != seat for c in h} - public
    doc = json.loads(text)
    scan = text  # without the random identifiers, which may hold "-G3" by chance
    for ident in _identifiers(doc):
        scan = scan.replace(ident, "")
    shown = set(CODE.findall(scan))
    if shown & secret:
        found.append(f"tiles of another seat's hand: {sorted(shown & secret)}")
    if shown - public:
        found.append(f"tiles the seat has not seen: {sorted(shown - public)}")
    revealed = isinstance(doc, dict) and doc.get("over") is True  # a finished game's deal is public
    seed = moments.record.seed
    for form in (str(seed), f"{seed:x}", f"{seed:016x}"):
        if form in text and not revealed:
            found.append(f"the seed ({form})")
    for word in state["rng"]:
        if word in text:
            found.append(f"a random stream ({word})")
    tokens = CODE.findall(scan)
    bag = state["bag"]
    grams = {tuple(bag[i : i + 8]) for i in range(len(bag) - 7)} | {
        tuple(bag[::-1][i : i + 8]) for i in range(len(bag) - 7)
    }
    if any(tuple(tokens[i : i + 8]) in grams for i in range(len(tokens) - 7)):
        found.append("eight tiles in the bag's order")
    deal = doc.pop("deal", None) if isinstance(doc, dict) else None  # its "seed" is checked here
    if deal is not None and not revealed and (deal.get("seed") is not None or deal.get("secret") is not None):
        found.append("the deal's seed or secret before the end")
    bad = FORBIDDEN_KEYS & set(_keys(doc))
    if bad:
        found.append(f"fields {sorted(bad)}")
    return found


# -- a throwaway PostgreSQL cluster -------------------------------------------------------


def postgres_bin():
    """The folder of Debian's PostgreSQL server binaries (initdb, pg_ctl), or None."""
    import glob

    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.exists(os.path.join(folder, "initdb")) and os.path.exists(os.path.join(folder, "pg_ctl")):
            return folder
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb and shutil.which("pg_ctl") else None


class PostgresCluster:
    """A PostgreSQL cluster of its own in a temporary folder, listening only on a unix
    socket in that folder, stopped and deleted by :meth:`stop`. initdb refuses to run
    as root, so under root (CI) the cluster runs as the ``postgres`` user (Debian's
    package makes it) or ``nobody``, owning the folder."""

    def __init__(self, bin_dir, fsync=False):
        import tempfile

        self.bin = bin_dir
        self.dir = tempfile.mkdtemp(prefix="qwpg-")  # short: a socket path has at most 107 bytes
        self.data = os.path.join(self.dir, "data")
        self.prefix = []
        if os.geteuid() == 0:
            import pwd

            user = next((u for u in ("postgres", "nobody") if _has_user(u)), None)
            if user is None:
                raise RuntimeError("running as root, and no 'postgres' or 'nobody' user to run PostgreSQL as")
            entry = pwd.getpwnam(user)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
            self.prefix = ["runuser", "-u", user, "--"]
        os.chmod(self.dir, 0o755)
        self._run("initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        fsync = "on" if fsync else "off"  # off for the tests: nothing here outlives the cluster
        options = f"-k {self.dir} -c listen_addresses='' -c fsync={fsync} -c max_connections=300"
        self._run(
            "pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"), "-w", "-t", "60", "-o", options, "start"
        )
        self.count = 0

    def _run(self, tool, *args):
        r = subprocess.run(
            [*self.prefix, os.path.join(self.bin, tool), *args], capture_output=True, text=True, timeout=120
        )
        if r.returncode != 0:
            raise RuntimeError(f"{tool} failed ({r.returncode}): {r.stdout[-2000:]} {r.stderr[-2000:]}")

    def url(self, database="postgres"):
        return f"postgresql://postgres@/{database}?host={self.dir}"

    def create_database(self):
        """The URL of a new, empty database of the cluster."""
        import psycopg

        self.count += 1
        name = f"qw{os.getpid()}_{self.count}"
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self):
        try:
            self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def _has_user(name):
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
