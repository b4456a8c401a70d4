"""Live games: loading, locking, acting, storing and pushing views.

A :class:`GameService` keeps the games in play in memory (at most ``max_live``; the
least recently used idle ones are dropped and rebuilt from their record on the next
request). Each game has an ``asyncio.Lock``: everything that reads or changes a game
runs under it, in a worker thread (the engine's kernels release the GIL), so two
requests never interleave on one game and the event loop never waits on the engine
or on SQLite. After a human's action, the agent seats move at once, each action
stored and pushed to the game's WebSocket subscribers before the next.
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
from .store import Store, token_digest

__all__ = ["ApiError", "GameService", "Subscriber"]

log = logging.getLogger("qwirkle_core.server")
_GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")

MAX_SUBSCRIBERS = 64  # WebSocket connections per game
MAX_PENDING = 256  # views queued for one WebSocket before it is dropped as too slow


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
    """A game in memory: the Game, its seats, the last stored record and version."""

    def __init__(
        self, game_id: str, game: Game, agents: Sequence[str], digests: Sequence[str | None], record: str, version: int
    ) -> None:
        self.id = game_id
        self.game = game
        self.agents = tuple(agents)
        self.digests = tuple(digests)
        self.record = record
        self.version = version
        self.lock = asyncio.Lock()
        self.subscribers: set[Subscriber] = set()
        self.evicted = False

    @property
    def humans(self) -> list[int]:
        return [i for i, a in enumerate(self.agents) if a == engine.HUMAN]

    def agent_to_move(self) -> bool:
        g = self.game
        return not g.is_over and self.agents[g.current_player] != engine.HUMAN


class GameService:
    """The games of one server over the SQLite database at ``db_path``.

    The ``async`` operations are the API's; each raises :class:`ApiError` (an HTTP
    status and a message) for a request it refuses, having changed nothing.
    """

    def __init__(self, db_path: str | os.PathLike[str], max_live: int = 256) -> None:
        self.store = Store(db_path)
        self.max_live = max_live
        self._live: OrderedDict[str, _Slot] = OrderedDict()
        self._load_lock = asyncio.Lock()

    def close(self) -> None:
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
        game = engine.restore(row.record)
        return _Slot(game_id, game, row.agents, row.digests, row.record, row.version)

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
        """The game's slot, locked, with any agent turns due already played."""
        while True:
            slot = await self._slot(game_id)
            await slot.lock.acquire()
            if not slot.evicted:
                break
            slot.lock.release()
        try:
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

    # -- storing and pushing (worker threads hold the slot's lock) ----------------------

    def _commit(self, slot: _Slot) -> None:
        """Store the game's record; if that fails, go back to the last stored one (503)."""
        record = engine.record_json(slot.game, slot.agents)
        try:
            slot.version = self.store.save(slot.id, record, slot.game.is_over)
        except Exception:
            log.exception("game %s: storing the record failed; the action is refused", slot.id)
            slot.game = engine.restore(slot.record)
            raise ApiError(503, "the server could not store the action; nothing changed, try again") from None
        slot.record = record

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
    def _push(slot: _Slot, views: dict[int | None, str]) -> None:
        for sub in list(slot.subscribers):
            if sub.seat in views:
                sub.push(views[sub.seat])

    async def _advance(self, slot: _Slot) -> None:
        """Let the agent seats move until a human is to move or the game is over. If an
        agent's action cannot be stored, the agent stays to move (and moves on the
        game's next request); the request that led here is not refused for it."""

        def step() -> dict[int | None, str]:
            label = slot.agents[slot.game.current_player]
            engine.play_agent(slot.game, label)
            self._commit(slot)
            return self._views(slot)

        while slot.agent_to_move():
            try:
                views = await to_thread.run_sync(step)
            except ApiError:
                return
            self._push(slot, views)

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
            record = engine.record_json(game, agents)
            version = self.store.create(game_id, agents, digests, record, game.is_over)
            return _Slot(game_id, game, agents, digests, record, version)

        slot = await to_thread.run_sync(make)
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
            return await to_thread.run_sync(self._view, slot, seat)

    async def act(self, game_id: str, token: str | None, text: str) -> dict[str, Any]:
        """Play the move ``text`` for the token's seat, then the agents' replies.
        Returns ``{"player", "move", "points", "scores", "to_move", "over"}``."""
        async with self._locked(game_id) as slot:
            seat = self._holder(slot, token)

            def apply() -> tuple[dict[str, Any], dict[int | None, str]]:
                g = slot.game
                if g.is_over:
                    raise ApiError(409, "the game is over")
                if g.current_player != seat:
                    raise ApiError(409, f"it is seat {g.current_player}'s turn, not seat {seat}'s")
                try:
                    result = engine.play_move(g, text)
                except engine.IllegalMoveError as e:
                    raise ApiError(409, str(e)) from None
                except (TypeError, ValueError) as e:
                    raise ApiError(400, str(e)) from None
                self._commit(slot)
                return result, self._views(slot)

            result, views = await to_thread.run_sync(apply)
            self._push(slot, views)
            await self._advance(slot)
            g = slot.game
            return {**result, "to_move": None if g.is_over else g.current_player, "over": g.is_over}

    async def undo(self, game_id: str, token: str | None) -> dict[str, int]:
        """Take back the token's seat's last action and the agents' replies (only in a
        game where every other seat is an agent). Returns ``{"undone": n}``."""
        async with self._locked(game_id) as slot:
            seat = self._holder(slot, token)
            if slot.humans != [seat]:
                raise ApiError(409, "undo is only for games in which every other seat is an agent")

            def apply() -> tuple[int, dict[int | None, str]]:
                try:
                    undone = engine.undo_last(slot.game, seat)
                except engine.IllegalMoveError as e:
                    raise ApiError(409, str(e)) from None
                self._commit(slot)
                return undone, self._views(slot)

            undone, views = await to_thread.run_sync(apply)
            self._push(slot, views)
            return {"undone": undone}

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
            return slot.record

    @asynccontextmanager
    async def subscribe(self, game_id: str, token: str | None) -> AsyncIterator[Subscriber]:
        """A :class:`Subscriber` for the token's seat whose queue starts with the
        current view and then receives a view after every change of the game."""
        async with self._locked(game_id) as slot:
            seat = self._seat(slot, token)
            if len(slot.subscribers) >= MAX_SUBSCRIBERS:
                raise ApiError(429, f"game {game_id!r} has {MAX_SUBSCRIBERS} connections already")
            sub = Subscriber(seat)
            sub.push(await to_thread.run_sync(lambda: json.dumps(self._view(slot, seat))))
            slot.subscribers.add(sub)
        try:
            yield sub
        finally:
            slot.subscribers.discard(sub)
