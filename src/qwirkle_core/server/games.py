"""Live games: loading, locking, catching up, acting, storing and pushing views.

A :class:`GameService` keeps the games in play in memory (at most ``max_live``; the
least recently used idle ones are dropped and rebuilt from the store on the next
request). Each game has an ``asyncio.Lock``: everything that reads or changes a game
runs under it, in a worker thread (the engine's kernels release the GIL), so two
requests of one process never interleave on one game and the event loop never waits
on the engine or the database.

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
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from anyio import to_thread

from ..game.game import Game
from . import engine
from .store import Conflict, Head, Store, open_store, token_digest

__all__ = ["ApiError", "GameService", "Subscriber"]

log = logging.getLogger("qwirkle_core.server")
_GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")

MAX_SUBSCRIBERS = 64  # WebSocket connections per game
MAX_PENDING = 256  # views queued for one WebSocket before it is dropped as too slow
POLL_INTERVAL = 0.25  # seconds between looks for changes other processes stored in watched games
ATTEMPTS = 2  # a change that loses the race to another process is tried this often in all
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
    """A refused request: an HTTP ``status`` and a message for the client."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


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
        self, game_id: str, game: Game, agents: Sequence[str], digests: Sequence[str | None], head: Head
    ) -> None:
        self.id = game_id
        self.game = game
        self.agents = tuple(agents)
        self.digests = tuple(digests)
        self.head = head
        self.lock = asyncio.Lock()
        self.subscribers: set[Subscriber] = set()
        self.evicted = False

    @property
    def version(self) -> int:
        return self.head.version

    @property
    def humans(self) -> list[int]:
        return [i for i, a in enumerate(self.agents) if a == engine.HUMAN]

    def agent_to_move(self) -> bool:
        g = self.game
        return not g.is_over and self.agents[g.current_player] != engine.HUMAN


Pushes = list[dict[int | None, str]]  # views to push, one {seat: view JSON} per change, in order


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

    def __init__(self, db: str | os.PathLike[str] | Store, max_live: int = 256) -> None:
        self.store = db if isinstance(db, Store) else open_store(db)
        self.max_live = max_live
        self._live: OrderedDict[str, _Slot] = OrderedDict()
        self._load_lock = asyncio.Lock()
        self._watcher: asyncio.Task[None] | None = None

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None
        self.store.close()

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
        return _Slot(game_id, game, row.agents, row.digests, row.head)

    def _evict(self) -> None:
        for game_id in list(self._live)[:-1]:
            if len(self._live) <= self.max_live:
                return
            slot = self._live[game_id]
            if not slot.lock.locked() and not slot.subscribers:
                slot.evicted = True
                del self._live[game_id]

    @asynccontextmanager
    async def _locked(self, game_id: str) -> AsyncIterator[_Slot]:
        """The game's slot, locked, caught up with the store, with any agent turns due
        already played."""
        while True:
            slot = await self._slot(game_id)
            await slot.lock.acquire()
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
                await self._advance(slot)
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
        return [self._views(slot)] if slot.subscribers else []

    def _store(self, slot: _Slot, base: Head, count: int, by: str | None = None) -> None:
        """Store the game's last ``count`` actions, played on ``base``, as one
        compare-and-swap. On :class:`Conflict` (raised on) or a failed write (503) the
        game goes back to ``base`` first."""
        try:
            slot.head = self.store.append(slot.id, base, engine.action_json(slot.game, count, by), slot.game.is_over)
        except Conflict:
            self._take_back(slot, count)
            raise
        except Exception:
            log.exception("game %s: storing the actions failed; they are refused", slot.id)
            self._take_back(slot, count)
            raise ApiError(503, "the server could not store the action; nothing changed, try again") from None

    @staticmethod
    def _take_back(slot: _Slot, count: int) -> None:
        for _ in range(count):
            slot.game.undo()

    def _view(self, slot: _Slot, seat: int | None) -> dict[str, Any]:
        """The view document of ``seat`` (see docs/server.md)."""
        v = engine.seat_view(slot.game, seat)
        can_undo = (
            seat is not None
            and slot.humans == [seat]
            and not v["over"]
            and any(a["player"] == seat for a in v["history"])
        )
        return {
            "id": slot.id,
            "version": slot.version,
            "seats": [{"seat": i, "agent": a} for i, a in enumerate(slot.agents)],
            **v,
            "can_undo": can_undo,
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
            engine.play_agent(slot.game, slot.agents[slot.game.current_player])
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

    async def _advance(self, slot: _Slot) -> None:
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
            return pushes

        for _ in range(3):
            if not slot.agent_to_move():
                return
            try:
                self._push(slot, await to_thread.run_sync(step))
            except ApiError:
                return

    # -- the operations of the API -----------------------------------------------------

    async def create(self, seats: Sequence[str], seed: int | None = None) -> tuple[str, list[str], list[str | None]]:
        """A new game; ``seats``: one label per seat ('human' or an agent spec, checked
        with :func:`engine.seat_label`). Returns ``(game_id, labels, tokens)``: the
        canonical seat labels and a token per human seat (None for agents)."""
        try:
            agents = [engine.seat_label(s) for s in seats]
        except (TypeError, ValueError) as e:
            raise ApiError(422, str(e)) from None
        if not engine.MIN_PLAYERS <= len(agents) <= engine.MAX_PLAYERS:
            raise ApiError(422, f"a game has {engine.MIN_PLAYERS} to {engine.MAX_PLAYERS} seats, not {len(agents)}")
        if engine.HUMAN not in agents:
            raise ApiError(422, "at least one seat must be 'human' (a person or a remote bot)")
        tokens = [_url_token(24) if a == engine.HUMAN else None for a in agents]
        digests = [None if t is None else token_digest(t) for t in tokens]
        game_id = _url_token(9)

        def make() -> _Slot:
            game = engine.new_game(len(agents), seed)
            head = self.store.create(game_id, agents, digests, engine.record_header(game, agents))
            return _Slot(game_id, game, agents, digests, head)

        try:
            slot = await to_thread.run_sync(make)
        except ApiError:
            raise
        except Exception:
            log.exception("storing a new game failed")
            raise ApiError(503, "the server could not store the new game; try again") from None
        async with self._load_lock:
            self._live[game_id] = slot
            self._evict()
        async with self._locked(game_id):
            pass  # plays the agents' turns if an agent opens
        return game_id, agents, tokens

    async def get_view(self, game_id: str, token: str | None) -> dict[str, Any]:
        """The view of the seat holding ``token`` (a spectator's without one)."""
        async with self._locked(game_id) as slot:
            seat = self._seat(slot, token)
            # built on the event loop: a millisecond of Python that a thread would only
            # make longer (the GIL), with no I/O
            return self._view(slot, seat)

    async def act(self, game_id: str, token: str | None, text: str, agent: str | None = None) -> dict[str, Any]:
        """Play the move ``text`` for the token's seat, then the agents' replies, and
        store them as one compare-and-swap. If another process stored a change of the
        game first, the move is tried once more on the fresh state, then refused (409).
        ``agent``: the label of the agent a remote bot plays the seat with (recorded as
        the seat's label once every action of the seat came from it). Returns
        ``{"player", "move", "points", "scores", "to_move", "over"}``."""
        by = None
        if agent is not None:
            try:
                by = engine.seat_label(agent, caps={})
            except (TypeError, ValueError) as e:
                raise ApiError(400, str(e)) from None
            by = None if by == engine.HUMAN else by
        for _ in range(ATTEMPTS):
            async with self._locked(game_id) as slot:
                seat = self._holder(slot, token)

                def apply() -> tuple[dict[str, Any], Pushes]:
                    g = slot.game
                    if g.is_over:
                        raise ApiError(409, "the game is over")
                    if g.current_player != seat:
                        raise ApiError(409, f"it is seat {g.current_player}'s turn, not seat {seat}'s")
                    base = slot.head
                    try:
                        result = engine.play_move(g, text)
                    except engine.IllegalMoveError as e:
                        raise ApiError(409, str(e)) from None
                    except (TypeError, ValueError) as e:
                        raise ApiError(400, str(e)) from None
                    pushes = [self._views_at(slot, base, 1)] if slot.subscribers else []
                    moved = self._play_agents(slot, base, 1, pushes)
                    self._store(slot, base, 1 + moved, by)
                    return result, pushes

                try:
                    result, pushes = await to_thread.run_sync(apply)
                except Conflict:
                    continue  # the next round catches up with the store first
                self._push(slot, pushes)
                g = slot.game
                return {**result, "to_move": None if g.is_over else g.current_player, "over": g.is_over}
        raise ApiError(409, CONFLICT)

    async def undo(self, game_id: str, token: str | None) -> dict[str, int]:
        """Take back the token's seat's last action and the agents' replies (only in a
        game where every other seat is an agent). Returns ``{"undone": n}``."""
        for _ in range(ATTEMPTS):
            async with self._locked(game_id) as slot:
                seat = self._holder(slot, token)
                if slot.humans != [seat]:
                    raise ApiError(409, "undo is only for games in which every other seat is an agent")

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
                        raise ApiError(503, "the server could not store the undo; nothing changed, try again") from None
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

            def run() -> list[dict[str, Any]]:
                try:
                    return engine.hint(slot.game, seat)
                except engine.IllegalMoveError as e:
                    raise ApiError(409, str(e)) from None

            return {"hints": await to_thread.run_sync(run)}

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
        async with self._locked(game_id) as slot:
            seat = self._seat(slot, token)
            if len(slot.subscribers) >= MAX_SUBSCRIBERS:
                raise ApiError(429, f"game {game_id!r} has {MAX_SUBSCRIBERS} connections already")
            sub = Subscriber(seat)
            sub.push(await to_thread.run_sync(lambda: json.dumps(self._view(slot, seat))))
            slot.subscribers.add(sub)
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch())
        try:
            yield sub
        finally:
            slot.subscribers.discard(sub)

    async def _watch(self) -> None:
        """Every :data:`POLL_INTERVAL` seconds, read the stored versions of the games
        with subscribers (one query) and push the changes other processes stored."""
        while True:
            await asyncio.sleep(POLL_INTERVAL)
            watched = [slot for slot in self._live.values() if slot.subscribers]
            if not watched:
                continue
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
