"""Live games: loading, locking, catching up, acting, storing and pushing views.

A :class:`GameService` keeps the games in play in memory (at most ``max_live``; the
least recently used idle ones are dropped and rebuilt from the store on the next
request). Each game has an ``asyncio.Lock``: everything that reads or changes a game
runs under it, in a worker thread (the engine's kernels release the GIL), so two
requests of one process never interleave on one game and the event loop never waits
on the engine or the database. No request holds a game's lock while it waits for
another client's agent work: a hint is ranked outside the lock, on a copy, and while
agents' turns hold the lock, views are built from a copy of the game as stored
(``_Slot.frozen``).

Other processes may serve the same store. So every request first reads the game's
stored version and catches up with what others stored (the new action rows, or the
whole game after an undo); every change is then stored as a compare-and-swap on the
version it was computed from. A human's action and the agents' replies to it are
stored together, in one transaction, as one row per action (and pushed as one view
per action). A change that loses the race is taken back in memory and the request is
tried once more on the fresh state; then it is refused with 409 (:data:`CONFLICT`).
Nothing accepted is ever overwritten.
"""

import asyncio
import json
import logging
import os
import re
import secrets
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from anyio import to_thread

from ..game.game import Game
from . import engine
from .clocks import Clock
from .deals import new_deal, public_deal
from .guard import CLIENT, FairShare, RateLimit, Settings
from .store import Conflict, Head, Store, open_store, token_digest

__all__ = ["ApiError", "GameService", "Subscriber"]

_T = TypeVar("_T")
log = logging.getLogger("qwirkle_core.server")
_GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")

MAX_SUBSCRIBERS = 64  # WebSocket connections per game (Settings.max_sockets)
CHEAP_MS = 5.0  # agent turns measured at most this long run outside the agent threads' places
HOLD_INTERVAL = 2.0  # seconds between a process's reminders that it holds its WebSocket connections
HOLD_EXPIRY = 10.0  # the connections of a process silent this long (killed) stop counting
MAX_PENDING = 256  # views queued for one WebSocket before it is dropped as too slow
POLL_INTERVAL = 0.25  # seconds between looks for changes other processes stored in watched games
ATTEMPTS = 2  # a change that loses the race to another process is tried this often in all
AGENT_NICENESS = 10  # the agent threads' CPU priority below request handling's (Linux)
SWEEP_INTERVAL = 1.0  # seconds between looks for games whose seat to move ran out of time
CONFLICT = (
    "another server process stored a change of this game at the same moment; "
    "nothing of this request was stored: reload the view and try again"
)


def _url_token(nbytes: int) -> str:
    """A random URL-safe text of ``nbytes`` random bytes that does not begin with '-',
    so that a game id or token can follow an option on a command line
    (``qwirkle bot --game ID``) without being read as an option itself."""
    while True:
        token = secrets.token_urlsafe(nbytes)
        if not token.startswith("-"):
            return token


class ApiError(Exception):
    """A refused request: an HTTP ``status`` and a message for the client;
    ``retry_after``: seconds after which trying again may succeed (429, 503)."""

    def __init__(
        self, status: int, message: str, retry_after: int | None = None, extra: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after
        self.extra = extra or {}  # more fields of the answer (a stale action's current view)


class Busy(ApiError):
    """503: the request waited its longest for its game or an agent thread."""


class Subscriber:
    """One WebSocket's queue of views (JSON text) for ``seat`` (None: a spectator)."""

    def __init__(self, seat: int | None) -> None:
        self.seat = seat
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()

    def push(self, text: str) -> None:
        """Queue a view; a subscriber ``MAX_PENDING`` views behind gets None (hang up)."""
        self.queue.put_nowait(None if self.queue.qsize() >= MAX_PENDING else text)


class _Slot:
    """A game in memory: the Game, its seats, and the stored :class:`Head` it is at."""

    def __init__(
        self,
        game_id: str,
        game: Game,
        agents: Sequence[str],
        digests: Sequence[str | None],
        head: Head,
        deal: str | None = None,
        clock: str | None = None,
    ) -> None:
        self.id = game_id
        self.game = game
        self.agents = tuple(agents)
        self.digests = tuple(digests)
        self.head = head
        self.deal: dict[str, Any] | None = None if deal is None else json.loads(deal)
        self.clock = Clock.from_json(clock)
        self.lock = asyncio.Lock()
        self.subscribers: set[Subscriber] = set()
        self.evicted = False
        # while a request holds the lock for agent work (turns on an agent thread, or the
        # wait for one): the game as stored before it, which views are built from
        self.frozen: _Frozen | None = None

    @property
    def version(self) -> int:
        return self.head.version

    @property
    def humans(self) -> list[int]:
        return [i for i, a in enumerate(self.agents) if a == engine.HUMAN]

    def agent_to_move(self) -> bool:
        g = self.game
        return not g.is_over and self.agents[g.current_player] != engine.HUMAN

    def human_to_move(self) -> int | None:
        """The human seat to move (None: the game is over or an agent is to move)."""
        g = self.game
        return None if g.is_over or self.agents[g.current_player] != engine.HUMAN else g.current_player

    def out_of_time(self, now: float) -> bool:
        """Whether the human seat to move has run out of time at ``now``."""
        deadline = None if self.clock is None else self.clock.deadline(self.human_to_move())
        return deadline is not None and deadline <= now


class _Frozen(NamedTuple):
    """A copy of a game as stored, with its head and clock (:attr:`_Slot.frozen`)."""

    game: Game
    head: Head
    clock: Clock | None


Pushes = list[dict[int | None, str]]  # views to push, one {seat: view JSON} per change, in order


def _lower_priority() -> None:
    """Lower the calling thread's CPU priority by :data:`AGENT_NICENESS` (Linux, where
    a niceness is a thread's own; elsewhere, and where the system refuses, unchanged)."""
    if sys.platform.startswith("linux"):
        with suppress(OSError):
            tid = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + AGENT_NICENESS))


class GameService:
    """The games of one server process over a :class:`Store` (or the ``--db`` text of
    one: a SQLite path or a ``postgresql://`` URL).

    Several processes may serve the same store: each request first reads the stored
    version of its game (one indexed read) and catches up with changes stored by
    other processes; each change is stored with a compare-and-swap on the version it
    was computed from. A request whose change loses that race is tried once more on
    the fresh state, then refused with 409 (:data:`CONFLICT`). Changes stored by other
    processes reach this process's WebSocket subscribers within :data:`POLL_INTERVAL`.

    The ``async`` operations are the API's; each raises :class:`ApiError` (an HTTP
    status and a message) for a request it refuses, having changed nothing.
    """

    def __init__(
        self, db: str | os.PathLike[str] | Store, max_live: int = 256, settings: Settings | None = None
    ) -> None:
        self.store = db if isinstance(db, Store) else open_store(db)
        self.max_live = max_live
        self.settings = settings or Settings()
        self.caps = engine.agent_limits(self.settings.max_agent_ms)
        self.owner = f"{os.getpid()}-{_url_token(6)}"  # this process, in the store's socket counts
        self._live: OrderedDict[str, _Slot] = OrderedDict()
        self._load_lock = asyncio.Lock()
        self._watcher: asyncio.Task[None] | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._pool = FairShare(self.settings.agent_threads)
        self._agent_threads = ThreadPoolExecutor(
            self.settings.agent_threads, thread_name_prefix="qwirkle-agent", initializer=_lower_priority
        )
        self._clients: dict[str, tuple[asyncio.Semaphore, list[int]]] = {}
        self._rate = RateLimit(self.settings.games_per_minute)
        self._held = 0.0
        self._clocks: asyncio.Task[None] | None = None
        self._turn_ms: dict[str, float] = {}  # agent label -> its turns' time (ms), for _cheap
        # (game id, seat) -> arrival times (time.time()) of that seat's moves in flight:
        # a turn is not played by the clock's fallback while a move that came in time waits
        self._claims: dict[tuple[str, int], list[float]] = {}

    def start(self) -> None:
        """Start the background tasks (the app's lifespan does; needs a running loop):
        the sweeper of expired games, and the sweep of the clocks (:meth:`_sweep_clocks`)."""
        if self.settings.expire_after_s and (self._sweeper is None or self._sweeper.done()):
            self._sweeper = asyncio.create_task(self._sweep_forever())
        if self._clocks is None or self._clocks.done():
            self._clocks = asyncio.create_task(self._sweep_clocks())

    def close(self) -> None:
        for task in (self._watcher, self._sweeper, self._clocks):
            if task is not None:
                task.cancel()
        self._watcher = self._sweeper = self._clocks = None
        self._agent_threads.shutdown(wait=False, cancel_futures=True)
        with suppress(Exception):
            self.store.release(self.owner)
        self.store.close()

    # -- what a request may cost: waits with a deadline, the agent threads ---------------

    def _remaining(self) -> float:
        """Seconds the current request may still wait (:attr:`Settings.max_wait_s` from
        its arrival)."""
        request = CLIENT.get()
        if request is None:
            return self.settings.max_wait_s
        return request.arrived + self.settings.max_wait_s - time.monotonic()

    async def _wait(self, acquire: Callable[[], Any], what: str) -> None:
        """Await ``acquire()`` (a lock's or a semaphore's) until the request's deadline;
        then 503 with Retry-After."""
        try:
            async with asyncio.timeout(max(self._remaining(), 0.0)):
                await acquire()
        except TimeoutError:
            raise Busy(
                503,
                f"the server is busy ({what} for {self.settings.max_wait_s:g} s); try again shortly",
                retry_after=1,
            ) from None

    @asynccontextmanager
    async def _thread_slot(self) -> AsyncIterator[None]:
        """One of the :attr:`Settings.agent_threads` places for an agent's turns or a
        hint, and the client's only one (a client's requests take turns, so one client
        never holds every place); a free place goes to the waiting client that used the
        places least lately (:class:`~.guard.FairShare`), not to the first in line."""
        request = CLIENT.get()
        key = request.client if request is not None else ""
        entry = self._clients.get(key)
        if entry is None:
            entry = self._clients[key] = (asyncio.Semaphore(1), [0])
        own, users = entry
        users[0] += 1
        try:
            await self._wait(own.acquire, "this client's earlier request is running")
            try:
                await self._wait(lambda: self._pool.acquire(key), "every agent thread is taken")
                start = time.monotonic()
                try:
                    yield
                finally:
                    self._pool.release(key, time.monotonic() - start)
            finally:
                own.release()
        finally:
            users[0] -= 1
            if not users[0]:
                self._clients.pop(key, None)

    async def _compute(
        self, fn: Callable[[], _T], agents: Sequence[str] | None = None, slot: _Slot | None = None
    ) -> _T:
        """Run ``fn`` in a worker thread: for a hint (``agents`` None) or for turns of
        ``agents`` of which one is not yet known to be cheap (:meth:`_cheap`), within
        :meth:`_thread_slot` on one of the agent threads, which run at a lower CPU
        priority than the requests' handling (:func:`_lower_priority`), so that a busy
        machine serves the other requests first; cheap turns need no place (they cost
        less than the queueing). ``slot``: the game whose lock the caller holds, changed by
        ``fn``: until ``fn`` is done, views of it are built from a copy of it as it is now
        (:attr:`_Slot.frozen`), so that no read waits for an agent thread or an agent's turn."""
        if agents is not None and all(self._cheap(a) for a in agents):
            return await to_thread.run_sync(fn)
        if slot is not None:
            slot.frozen = _Frozen(slot.game.copy(), slot.head, slot.clock)
        try:
            async with self._thread_slot():
                # waited for in a worker thread: like every other thread's work, not abandoned
                # when the request is cancelled (the game's lock is held until it is done)
                return await to_thread.run_sync(lambda: self._agent_threads.submit(fn).result())
        finally:
            if slot is not None:
                slot.frozen = None

    def _cheap(self, label: str) -> bool:
        """Whether the turns of agent ``label`` took, on average in this process, at most
        :data:`CHEAP_MS` (greedy, random, the heuristic at its defaults); an agent not yet
        measured is not."""
        if label == engine.HUMAN:
            return True
        measured = self._turn_ms.get(label)
        return measured is not None and measured <= CHEAP_MS

    def _timed_turn(self, game: Game, label: str) -> None:
        """Let agent ``label`` take the turn (on the clock: see engine.on_the_clock),
        measuring it for :meth:`_cheap`."""
        start = time.perf_counter()
        engine.play_agent(game, label, on_clock=True)
        ms = (time.perf_counter() - start) * 1000.0
        before = self._turn_ms.get(label)
        self._turn_ms[label] = ms if before is None else max(ms, 0.8 * before + 0.2 * ms)
        if len(self._turn_ms) > 4096:
            self._turn_ms.clear()

    @property
    def live_games(self) -> int:
        """How many games are in memory now."""
        return len(self._live)

    # -- finding, loading and locking games ---------------------------------------------

    async def _slot(self, game_id: str) -> _Slot:
        if not _GAME_ID.fullmatch(game_id):
            raise ApiError(404, f"no game {game_id[:40]!r}")
        slot = self._live.get(game_id)
        if slot is None:
            async with self._load_lock:
                slot = self._live.get(game_id)
                if slot is None:
                    slot = await to_thread.run_sync(self._load, game_id)
                    self._live[game_id] = slot
                    self._evict()
        self._live.move_to_end(game_id)
        return slot

    def _load(self, game_id: str) -> _Slot:
        row = self.store.load(game_id)
        if row is None:
            raise ApiError(404, f"no game {game_id!r}")
        game = engine.restore(row.header, row.actions)
        return _Slot(game_id, game, row.agents, row.digests, row.head, row.deal, row.clock)

    def _evict(self) -> None:
        for game_id in list(self._live)[:-1]:
            if len(self._live) <= self.max_live:
                return
            slot = self._live[game_id]
            if not slot.lock.locked() and not slot.subscribers:
                slot.evicted = True
                del self._live[game_id]

    @asynccontextmanager
    async def _locked(self, game_id: str, strict: bool = True) -> AsyncIterator[_Slot]:
        """The game's slot, locked, caught up with the store, with any agent turns due
        already played (``strict``: or 503 when no agent thread is free in time; else
        they wait for the game's next request)."""
        while True:
            slot = await self._slot(game_id)
            await self._wait(slot.lock.acquire, "another request on this game is running")
            if not slot.evicted:
                break
            slot.lock.release()
        try:
            if self.store.inline_reads:  # a local read of microseconds: no thread
                head = self.store.head(slot.id)
                if head != slot.head:
                    self._push(slot, await to_thread.run_sync(self._sync, slot))
            else:
                self._push(slot, await to_thread.run_sync(self._sync, slot))
            if slot.agent_to_move():
                await self._advance(slot, strict)
            yield slot
        finally:
            slot.lock.release()

    @staticmethod
    def _seat(slot: _Slot, token: str | None) -> int | None:
        """The seat ``token`` holds (None for no token); 403 for a token of no seat."""
        if token is None:
            return None
        digest = token_digest(token)
        seat = next(
            (i for i, d in enumerate(slot.digests) if d is not None and secrets.compare_digest(d, digest)), None
        )
        if seat is None:
            raise ApiError(403, f"this token holds no seat in game {slot.id!r}")
        return seat

    @classmethod
    def _holder(cls, slot: _Slot, token: str | None) -> int:
        """The seat ``token`` holds; 403 without a token or for a token of no seat."""
        seat = cls._seat(slot, token)
        if seat is None:
            raise ApiError(403, "this needs a seat token (header 'Authorization: Bearer TOKEN' or ?token=TOKEN)")
        return seat

    # -- catching up, storing and pushing (worker threads hold the slot's lock) ---------

    def _sync(self, slot: _Slot) -> Pushes:
        """Catch the game up with the store (changes stored by other processes); the
        views to push for them. One indexed read when nothing changed."""
        head = self.store.head(slot.id)
        if head is None:
            raise ApiError(404, f"no game {slot.id!r}")
        return [] if head == slot.head else self._catch_up(slot)

    def _catch_up(self, slot: _Slot) -> Pushes:
        pushes: Pushes = []
        base = slot.head
        row = self.store.load(slot.id, start=base.actions)
        if row is None:
            raise ApiError(404, f"no game {slot.id!r}")
        appended = row.head.resets == base.resets and row.head.version - base.version == len(row.actions)
        slot.clock = Clock.from_json(row.clock)
        if appended:
            try:
                for i, text in enumerate(row.actions):
                    engine.apply_action(slot.game, text)
                    slot.head = Head(base.version + i + 1, base.actions + i + 1, base.resets)
                    if slot.subscribers:
                        pushes.append(self._views(slot))
                return pushes
            except engine.RecordError:
                log.warning("game %s: the stored actions do not follow the game in memory; reloading", slot.id)
        full = self.store.load(slot.id)
        if full is None:
            raise ApiError(404, f"no game {slot.id!r}")
        slot.game = engine.restore(full.header, full.actions)
        slot.head = full.head
        slot.clock = Clock.from_json(full.clock)
        return [self._views(slot)] if slot.subscribers else []

    @staticmethod
    def _next_clock(slot: _Slot, count: int, at: float) -> Clock | None:
        """The clock after the game's last ``count`` actions, the human ones made at ``at``;
        the next turn is timed from now."""
        if slot.clock is None:
            return None
        clock = slot.clock.copy()
        g = slot.game
        for a in g.history[len(g.history) - count :] if count else ():
            if slot.agents[a.player] == engine.HUMAN:
                clock.charge(a.player, at)
        clock.started = max(clock.started, time.time())
        return clock

    def _store(
        self,
        slot: _Slot,
        base: Head,
        count: int,
        request: tuple[int, str, str] | None = None,
        clock: Clock | None = None,
        by: str | None = None,
    ) -> None:
        """Store the game's last ``count`` actions, played on ``base``, as one
        compare-and-swap, with ``request`` (an action id and its answer) and the clock
        after them (``clock``, or the one :meth:`_next_clock` makes now). On
        :class:`Conflict` (raised on) or a failed write (503) the game goes back to
        ``base`` first."""
        if clock is None:
            clock = self._next_clock(slot, count, time.time())
        stored = None if clock is None else (clock.to_json(), clock.deadline(slot.human_to_move()))
        try:
            slot.head = self.store.append(
                slot.id,
                base,
                engine.action_json(slot.game, count, by),
                slot.game.is_over,
                request=request,
                clock=stored,
            )
            if clock is not None:
                slot.clock = clock
        except Conflict:
            self._take_back(slot, count)
            raise
        except Exception:
            log.exception("game %s: storing the actions failed; they are refused", slot.id)
            self._take_back(slot, count)
            raise ApiError(503, "the server could not store the action; nothing changed, try again", 1) from None

    @staticmethod
    def _take_back(slot: _Slot, count: int) -> None:
        for _ in range(count):
            slot.game.undo()

    def _view(self, slot: _Slot, seat: int | None, frozen: _Frozen | None = None) -> dict[str, Any]:
        """The view document of ``seat`` (see docs/server.md); of the game as ``frozen``
        holds it when given."""
        game, head, timer = (slot.game, slot.head, slot.clock) if frozen is None else frozen
        v = engine.seat_view(game, seat)
        can_undo = (
            seat is not None
            and slot.humans == [seat]
            and timer is None
            and not v["over"]
            and any(a["player"] == seat for a in v["history"])
        )
        clock = None
        if timer is not None:
            to_move = v["to_move"]
            human = to_move if to_move is not None and slot.agents[to_move] == engine.HUMAN else None
            clock = timer.public(human, time.time())
            history = v["history"]
            for i in timer.timeouts:
                if i < len(history):
                    history[i]["timeout"] = True
        return {
            "id": slot.id,
            "version": head.version,
            "seats": [{"seat": i, "agent": a} for i, a in enumerate(slot.agents)],
            **v,
            "can_undo": can_undo,
            "undos": head.resets,
            "deal": public_deal(slot.deal, game.seed, v["over"]),
            "clock": clock,
        }

    def _views(self, slot: _Slot) -> dict[int | None, str]:
        """``{seat: view JSON}`` for every seat with a WebSocket subscriber."""
        return {seat: json.dumps(self._view(slot, seat)) for seat in {s.seat for s in slot.subscribers}}

    @staticmethod
    def _push(slot: _Slot, pushes: Pushes) -> None:
        for views in pushes:
            for sub in list(slot.subscribers):
                if sub.seat in views:
                    sub.push(views[sub.seat])

    def _play_agents(self, slot: _Slot, base: Head, played: int, pushes: Pushes) -> int:
        """Let the agent seats move in memory until a human is to move or the game is
        over, adding a push per action; returns how many moved. The views carry the
        versions the actions will have once stored (``played`` unstored actions after
        ``base`` came before)."""
        moved = 0
        while slot.agent_to_move():
            self._timed_turn(slot.game, slot.agents[slot.game.current_player])
            moved += 1
            if slot.subscribers:
                pushes.append(self._views_at(slot, base, played + moved))
        return moved

    def _views_at(self, slot: _Slot, base: Head, ahead: int) -> dict[int | None, str]:
        """The subscribers' views with the version ``ahead`` changes after ``base``."""
        stored = slot.head
        slot.head = Head(base.version + ahead, base.actions + ahead, base.resets)
        try:
            return self._views(slot)
        finally:
            slot.head = stored

    async def _advance(self, slot: _Slot, strict: bool = True) -> None:
        """Let the agent seats move until a human is to move or the game is over (stored
        as one change per action, in one transaction). If the actions cannot be stored,
        the agent stays to move (and moves on the game's next request); the request
        that led here is not refused for it."""

        def step() -> Pushes:
            pushes: Pushes = []
            base = slot.head
            moved = self._play_agents(slot, base, 0, pushes)
            try:
                self._store(slot, base, moved)
            except Conflict:
                return self._catch_up(slot)  # another process stored first: take its actions
            return self._timed(slot, pushes)

        for _ in range(3):
            if not slot.agent_to_move():
                return
            try:
                self._push(slot, await self._compute(step, slot.agents, slot))
            except ApiError as e:
                if strict and isinstance(e, Busy):
                    raise  # no agent thread was free in time: the request is refused
                return

    def _timed(self, slot: _Slot, pushes: Pushes) -> Pushes:
        """``pushes`` with the last view made again once the clock after the change is
        stored (the views of a change are made before it is stored)."""
        if slot.clock is not None and pushes:
            pushes[-1] = self._views(slot)
        return pushes

    async def _expire(self, slot: _Slot) -> None:
        """Play the turns of the human seats out of time (see :mod:`.clocks`): each such
        turn is played by the game's fallback agent and recorded as a timeout, the
        agents reply, and it is all stored as one change (on an agent thread, as
        :meth:`_advance`), at most one round of the seats at a time (the next sweep
        goes on). Another process that stored first wins; its change is taken. Only
        the sweep calls this: a request never waits for a timeout's turns."""

        claimed = {seat: min(times) for (gid, seat), times in self._claims.items() if gid == slot.id and times}

        def step() -> Pushes:
            assert slot.clock is not None
            clock = slot.clock.copy()
            first = len(clock.timeouts)
            now = time.time()
            base = slot.head
            pushes: Pushes = []
            moved = 0
            while (seat := slot.human_to_move()) is not None and len(clock.timeouts) < first + len(slot.agents):
                deadline = clock.deadline(seat)
                if deadline is None or deadline > now or claimed.get(seat, deadline) < deadline:
                    break  # in time, or its move arrived in time and waits for the game
                self._timed_turn(slot.game, clock.fallback)
                clock.timeouts.append(len(slot.game.history) - 1)
                clock.charge(seat, now)
                moved += 1
                if slot.subscribers:
                    pushes.append(self._views_at(slot, base, moved))
                moved += self._play_agents(slot, base, moved, pushes)
            if not moved:
                return []
            clock.started = max(clock.started, time.time())
            try:
                self._store(slot, base, moved, clock=clock)
            except Conflict:
                return self._catch_up(slot)
            log.info("game %s: %d action(s) played for seats out of time", slot.id, moved)
            return self._timed(slot, pushes)

        for _ in range(ATTEMPTS):
            if not slot.out_of_time(time.time()):
                return
            version = slot.version
            fallback = () if slot.clock is None else (slot.clock.fallback,)
            self._push(slot, await self._compute(step, (*slot.agents, *fallback), slot))
            if slot.version != version:
                return  # stored (ours or another process's): the next sweep goes on

    async def _sweep_clocks(self) -> None:
        """Every :data:`SWEEP_INTERVAL` seconds, find the stored games whose seat to move
        has run out of time (one indexed query) and play their timeouts: a game's
        clock is enforced even when nobody asks for it (and by any process, after a
        restart too)."""
        while True:
            await asyncio.sleep(SWEEP_INTERVAL)
            try:
                due = await to_thread.run_sync(self.store.due, time.time())
            except Exception:
                log.exception("reading the games out of time failed")
                continue
            for game_id in due:
                try:
                    async with self._locked(game_id, strict=False) as slot:
                        if slot.out_of_time(time.time()):
                            await self._expire(slot)
                except ApiError:
                    pass
                except Exception:
                    log.exception("game %s: playing a timeout failed", game_id)

    # -- the operations of the API -----------------------------------------------------

    async def create(
        self, seats: Sequence[str], seed: int | None = None, clock: dict[str, Any] | None = None
    ) -> tuple[str, list[str], list[str | None]]:
        """A new game; ``seats``: one label per seat ('human' or an agent spec, checked
        with :func:`engine.seat_label`); ``seed``: the creator's seed (the deal's seed
        only in a game with one human seat: :mod:`.deals`); ``clock``: a time control
        (the arguments of :meth:`Clock.new`: ``move_s``, or ``base_s`` and
        ``increment_s``; ``fallback``, an agent spec). Returns ``(game_id, labels,
        tokens)``: the canonical seat labels and a token per human seat (None for agents)."""
        try:
            agents = [engine.seat_label(s, self.caps) for s in seats]
            if clock is not None:
                fallback = engine.seat_label(clock.get("fallback") or "greedy", self.caps)
                if fallback == engine.HUMAN:
                    raise ValueError("a clock's fallback is an agent such as 'greedy', not 'human'")
                clock = {**clock, "fallback": fallback}
        except (TypeError, ValueError) as e:
            raise ApiError(422, str(e)) from None
        if not engine.MIN_PLAYERS <= len(agents) <= engine.MAX_PLAYERS:
            raise ApiError(422, f"a game has {engine.MIN_PLAYERS} to {engine.MAX_PLAYERS} seats, not {len(agents)}")
        if engine.HUMAN not in agents:
            raise ApiError(422, "at least one seat must be 'human' (a person or a remote bot)")
        request = CLIENT.get()
        creator = request.client if request is not None else ""
        wait = self._rate.take(creator)
        if wait:
            raise ApiError(
                429,
                f"at most {self.settings.games_per_minute} new games a minute from one address; "
                f"try again in {wait:.0f} s",
                retry_after=max(1, round(wait + 0.5)),
            )
        try:
            running = await to_thread.run_sync(self.store.running)
            mine = await to_thread.run_sync(self.store.running, creator) if creator else 0
        except Exception:
            log.exception("counting the running games failed")
            raise ApiError(503, "the server could not read its store; try again", retry_after=1) from None
        if mine >= self.settings.games_per_address:
            raise ApiError(
                429,
                f"this address has {self.settings.games_per_address} games in play, the most one address may "
                "have; finish some (or let them expire) and try again",
                retry_after=60,
            )
        if running >= self.settings.max_games:
            raise ApiError(
                503, f"the server holds its most games ({self.settings.max_games}) in play; try again later", 60
            )
        tokens = [_url_token(24) if a == engine.HUMAN else None for a in agents]
        digests = [None if t is None else token_digest(t) for t in tokens]
        game_id = _url_token(9)

        deal_seed, deal = new_deal(agents.count(engine.HUMAN), seed)
        try:
            timer = None if clock is None else Clock.new(agents, engine.HUMAN, time.time(), **clock)
        except (TypeError, ValueError) as e:
            raise ApiError(422, str(e)) from None

        def make() -> _Slot:
            game = engine.new_game(len(agents), deal_seed)
            timed = None if timer is None else timer.to_json()
            first = None if game.is_over or agents[game.current_player] != engine.HUMAN else game.current_player
            deadline = None if timer is None else timer.deadline(first)
            header = engine.record_header(game, agents)
            head = self.store.create(
                game_id, agents, digests, header, deal=deal, clock=timed, deadline=deadline, creator=creator or None
            )
            return _Slot(game_id, game, agents, digests, head, deal, timed)

        try:
            slot = await to_thread.run_sync(make)
        except ApiError:
            raise
        except Exception:
            log.exception("storing a new game failed")
            raise ApiError(503, "the server could not store the new game; try again", retry_after=1) from None
        async with self._load_lock:
            self._live[game_id] = slot
            self._evict()
        async with self._locked(game_id):
            pass  # plays the agents' turns if an agent opens
        return game_id, agents, tokens

    async def get_view(self, game_id: str, token: str | None) -> dict[str, Any]:
        """The view of the seat holding ``token`` (a spectator's without one). While
        another request holds the game for agent work, the view is of the game as stored
        before it (:attr:`_Slot.frozen`): a read never waits for an agent."""
        while True:
            slot = await self._slot(game_id)
            seat = self._seat(slot, token)  # the seats' digests never change
            frozen = slot.frozen
            if frozen is not None and slot.lock.locked() and not slot.evicted:
                return self._view(slot, seat, frozen)
            if await self._free_or_frozen(slot):
                break
        async with self._locked(game_id, strict=False) as slot:
            # built on the event loop: a millisecond of Python that a thread would only
            # make longer (the GIL), with no I/O
            return self._view(slot, self._seat(slot, token))

    async def _free_or_frozen(self, slot: _Slot) -> bool:
        """Wait (until the request's deadline) until ``slot``'s lock is free (True) or
        a request holding it has frozen the game for agent work (False)."""
        while slot.lock.locked() and slot.frozen is None and self._remaining() > 0:
            await asyncio.sleep(0.01)
        return slot.frozen is None or not slot.lock.locked()

    async def act(
        self,
        game_id: str,
        token: str | None,
        text: str,
        expected_version: int | None = None,
        action_id: str | None = None,
        agent: str | None = None,
    ) -> dict[str, Any]:
        """Play the move ``text`` for the token's seat, then the agents' replies, and
        store them as one compare-and-swap. If another process stored a change of the
        game first, the move is tried once more on the fresh state, then refused (409).
        Returns ``{"player", "move", "points", "scores", "to_move", "over", "version"}``.

        ``action_id``: the client's id of this action; if the seat's action of that id
        was accepted already, its first answer is returned and nothing is played.
        ``expected_version``: the version of the view the move was made on; if the
        game is at another one, 409 with the seat's current view (``view``).
        ``agent``: the label of the agent a remote bot plays the seat with (recorded as
        the seat's label once every action of the seat came from it)."""
        by = None
        if agent is not None:
            try:
                by = engine.seat_label(agent, caps={})
            except (TypeError, ValueError) as e:
                raise ApiError(400, str(e)) from None
            by = None if by == engine.HUMAN else by
        request = CLIENT.get()
        # the seat's clock is charged up to the move's arrival, not to when the server
        # got to it: waiting for the game or an agent thread costs the seat no time
        arrived = request.wall if request is not None and request.wall else time.time()
        claim = await self._claim(game_id, token, arrived)
        try:
            return await self._act(game_id, token, text, expected_version, action_id, by, arrived)
        finally:
            if claim is not None:
                times = self._claims.get(claim, [])
                times.remove(arrived)
                if not times:
                    self._claims.pop(claim, None)

    async def _claim(self, game_id: str, token: str | None, arrived: float) -> tuple[str, int] | None:
        """Note that the token's seat has a move in flight that arrived at ``arrived``
        (:attr:`_claims`); None when the token holds no seat (the request is refused later)."""
        try:
            seat = self._seat(await self._slot(game_id), token)
        except ApiError:
            return None
        if seat is None:
            return None
        key = (game_id, seat)
        self._claims.setdefault(key, []).append(arrived)
        return key

    async def _act(
        self,
        game_id: str,
        token: str | None,
        text: str,
        expected_version: int | None,
        action_id: str | None,
        by: str | None,
        arrived: float,
    ) -> dict[str, Any]:
        for _ in range(ATTEMPTS):
            async with self._locked(game_id) as slot:
                seat = self._holder(slot, token)

                def apply() -> tuple[dict[str, Any], Pushes]:
                    g = slot.game
                    if action_id is not None:
                        first = self.store.answer(slot.id, seat, action_id)
                        if first is not None:
                            answer: dict[str, Any] = json.loads(first)
                            return answer, []
                    if expected_version is not None and expected_version != slot.version:
                        raise ApiError(
                            409,
                            f"the game is at version {slot.version}, not {expected_version}: "
                            "the move was made on an old view (the current one is in 'view')",
                            extra={"view": self._view(slot, seat)},
                        )
                    if g.is_over:
                        raise ApiError(409, "the game is over")
                    if g.current_player != seat:
                        raise ApiError(409, f"it is seat {g.current_player}'s turn, not seat {seat}'s")
                    if slot.out_of_time(arrived):
                        assert slot.clock is not None
                        raise ApiError(
                            409,
                            f"seat {seat}'s time ran out: {slot.clock.fallback} plays this turn "
                            "(within a second; the view will show it)",
                        )
                    base = slot.head
                    try:
                        result = engine.play_move(g, text)
                    except engine.IllegalMoveError as e:
                        raise ApiError(409, str(e)) from None
                    except (TypeError, ValueError) as e:
                        raise ApiError(400, str(e)) from None
                    at = arrived
                    pushes = [self._views_at(slot, base, 1)] if slot.subscribers else []
                    moved = self._play_agents(slot, base, 1, pushes)
                    answer = {
                        **result,
                        "to_move": None if g.is_over else g.current_player,
                        "over": g.is_over,
                        "version": base.version + 1 + moved,
                    }
                    request = None if action_id is None else (seat, action_id, json.dumps(answer))
                    self._store(slot, base, 1 + moved, request, self._next_clock(slot, 1 + moved, at), by)
                    return answer, self._timed(slot, pushes)

                try:
                    answer, pushes = await self._compute(apply, slot.agents, slot)
                except Conflict:
                    continue  # the next round catches up with the store first (and finds a stored id)
                self._push(slot, pushes)
                return answer
        raise ApiError(409, CONFLICT)

    async def undo(self, game_id: str, token: str | None) -> dict[str, int]:
        """Take back the token's seat's last action and the agents' replies (only in a
        game where every other seat is an agent). Returns ``{"undone": n}``."""
        for _ in range(ATTEMPTS):
            async with self._locked(game_id) as slot:
                seat = self._holder(slot, token)
                if slot.humans != [seat]:
                    raise ApiError(409, "undo is only for games in which every other seat is an agent")
                if slot.clock is not None:
                    raise ApiError(409, "undo is not offered in a game with a clock")

                def apply() -> tuple[int, Pushes]:
                    base = slot.head
                    try:
                        undone = engine.undo_last(slot.game, seat)
                    except engine.IllegalMoveError as e:
                        raise ApiError(409, str(e)) from None
                    try:
                        slot.head = self.store.truncate(slot.id, base, base.actions - undone)
                    except Conflict:
                        self._reload(slot)
                        raise
                    except Exception:
                        log.exception("game %s: storing the undo failed; it is refused", slot.id)
                        self._reload(slot)
                        raise ApiError(
                            503, "the server could not store the undo; nothing changed, try again", 1
                        ) from None
                    return undone, [self._views(slot)] if slot.subscribers else []

                try:
                    undone, pushes = await to_thread.run_sync(apply)
                except Conflict:
                    continue
                self._push(slot, pushes)
                return {"undone": undone}
        raise ApiError(409, CONFLICT)

    def _reload(self, slot: _Slot) -> None:
        """Rebuild the game from the store (after a change in memory that was not stored)."""
        row = self.store.load(slot.id)
        if row is None:
            raise ApiError(404, f"no game {slot.id!r}")
        slot.game = engine.restore(row.header, row.actions)
        slot.head = row.head

    async def hint(self, game_id: str, token: str | None) -> dict[str, list[dict[str, Any]]]:
        """The engine's top three moves for the token's seat, which must be to move."""
        async with self._locked(game_id) as slot:
            seat = self._holder(slot, token)
            try:
                # a copy with the hidden tiles dealt afresh (fast); the game's lock is not
                # held while the hint waits for an agent thread and is computed
                world = engine.hint_world(slot.game, seat)
            except engine.IllegalMoveError as e:
                raise ApiError(409, str(e)) from None
        return {"hints": await self._compute(lambda: engine.rank_hints(world))}

    async def record(self, game_id: str) -> str:
        """The record (JSON text) of a finished game; 409 while it runs."""
        async with self._locked(game_id) as slot:
            if not slot.game.is_over:
                raise ApiError(409, "the record is available once the game is over (it holds every hand)")

            def build() -> str:
                row = self.store.load(game_id)  # the seats a remote bot played (their rows' "by")
                labels = engine.played_by(slot.agents, row.actions) if row is not None else slot.agents
                return engine.record_json(slot.game, labels)

            return await to_thread.run_sync(build)

    @asynccontextmanager
    async def subscribe(self, game_id: str, token: str | None) -> AsyncIterator[Subscriber]:
        """A :class:`Subscriber` for the token's seat whose queue starts with the
        current view and then receives a view after every change of the game (made by
        this process at once, by another one within :data:`POLL_INTERVAL`)."""
        async with self._locked(game_id, strict=False) as slot:
            seat = self._seat(slot, token)
            if seat is None:  # a spectator: counted over every process of the store
                cap = self.settings.max_sockets
                fresh = time.time() - HOLD_EXPIRY
                if not await to_thread.run_sync(self.store.join, slot.id, self.owner, cap, fresh):
                    raise ApiError(429, f"game {game_id!r} has {cap} spectators' connections already", retry_after=5)
            else:  # a seat: its own places, which no spectator takes
                cap = self.settings.max_seat_sockets
                if sum(1 for s in slot.subscribers if s.seat == seat) >= cap:
                    raise ApiError(429, f"seat {seat} has {cap} connections to this game already", retry_after=5)
            try:
                sub = Subscriber(seat)
                sub.push(await to_thread.run_sync(lambda: json.dumps(self._view(slot, seat))))
            except BaseException:
                if seat is None:
                    await self._leave(slot.id)
                raise
            slot.subscribers.add(sub)
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch())
        try:
            yield sub
        finally:
            slot.subscribers.discard(sub)
            if seat is None:
                await self._leave(slot.id)

    async def _leave(self, game_id: str) -> None:
        try:
            await asyncio.shield(to_thread.run_sync(self.store.leave, game_id, self.owner))
        except Exception:
            log.exception("game %s: counting a closed WebSocket failed", game_id)

    async def _watch(self) -> None:
        """Every :data:`POLL_INTERVAL` seconds, read the stored versions of the games
        with subscribers (one query) and push the changes other processes stored."""
        while True:
            await asyncio.sleep(POLL_INTERVAL)
            watched = [slot for slot in self._live.values() if slot.subscribers]
            if not watched:
                continue
            if time.monotonic() - self._held >= HOLD_INTERVAL:
                self._held = time.monotonic()
                try:
                    await to_thread.run_sync(self.store.hold, self.owner)
                except Exception:
                    log.exception("renewing this process's WebSocket counts failed")
            try:
                versions = await to_thread.run_sync(self.store.versions, [s.id for s in watched])
            except Exception:
                log.exception("reading the games' versions failed")
                continue
            for slot in watched:
                if versions.get(slot.id, slot.version) == slot.version or slot.lock.locked():
                    continue  # unchanged, or a request that catches up is under way
                async with slot.lock:
                    if slot.evicted:
                        continue
                    try:
                        self._push(slot, await to_thread.run_sync(self._sync, slot))
                    except Exception:
                        log.exception("game %s: catching up with the store failed", slot.id)

    # -- expiry ------------------------------------------------------------------------

    async def _sweep_forever(self) -> None:
        interval = min(60.0, max(0.5, self.settings.expire_after_s / 4))
        while True:
            await asyncio.sleep(interval)
            try:
                await self.sweep()
            except Exception:
                log.exception("deleting expired games failed")

    async def sweep(self) -> list[str]:
        """Delete the games unchanged for :attr:`Settings.expire_after_s` (writing each
        one's record to :attr:`Settings.records_dir` first, when set); the ids deleted."""
        if not self.settings.expire_after_s:
            return []
        before = time.time() - self.settings.expire_after_s
        gone = await to_thread.run_sync(self._sweep, before)
        for game_id in gone:
            slot = self._live.pop(game_id, None)
            if slot is not None:
                slot.evicted = True
        return gone

    def _sweep(self, before: float) -> list[str]:
        gone = []
        folder = None if self.settings.records_dir is None else Path(self.settings.records_dir)
        for game_id in self.store.stale(before):
            if folder is not None:
                row = self.store.load(game_id)
                if row is None:
                    continue
                folder.mkdir(parents=True, exist_ok=True)
                partial = folder / f".{game_id}.{self.owner}.tmp"
                partial.write_text(row.record, encoding="utf-8")
                os.replace(partial, folder / f"{game_id}.json")
            if self.store.delete(game_id, before):
                gone.append(game_id)
        if gone:
            log.info("deleted %d expired games", len(gone))
        return gone
