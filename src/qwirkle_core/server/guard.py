"""What a stranger may cost the server: :class:`Settings` (the limits, set by
``qwirkle serve``'s options), the per-client rate limit of new games
(:class:`RateLimit`) and the request context (:data:`CLIENT`, the client's address
and when its request arrived) that the waits of a request are measured against.

Every limit and the status it answers is listed in docs/server.md ("Limits").
"""

import asyncio
import ipaddress
import math
import os
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import NamedTuple

from . import engine

__all__ = ["CLIENT", "FairShare", "Request", "RateLimit", "Settings", "client_key"]


def client_key(address: str) -> str:
    """The key per-address limits count a client under: an IPv4 address as it is, an
    IPv6 address by its /64 network (one subscriber's usual share, in which an attacker
    can pick any of 2**64 addresses)."""
    if ":" not in address:
        return address
    try:
        return str(ipaddress.IPv6Network((address.split("%")[0], 64), strict=False))
    except ValueError:
        return address


class Request(NamedTuple):
    """Who asks (the client's address, ``""`` when unknown) and when the request
    arrived (``time.monotonic()``; ``wall``: ``time.time()``, what a clock charges a
    seat for its turn, so that waiting on the server costs a seat no time)."""

    client: str
    arrived: float
    wall: float = 0.0


CLIENT: ContextVar[Request | None] = ContextVar("qwirkle_request", default=None)
"""The request being served (set by the app for every HTTP request and WebSocket)."""


@dataclass(frozen=True)
class Settings:
    """The server's limits (docs/server.md lists each with its status).

    max_agent_ms:  an agent's time per turn (:func:`engine.agent_limits` derives every
                   agent parameter's bound from it).
    agent_threads: agent turns and hints run on at most this many threads at once; one
                   client (address) holds at most one of them at a time.
    max_wait_s:    the longest a request waits, for its game (another request on it) or
                   for an agent thread; then it is refused with 503 and ``Retry-After``.
    games_per_minute: new games per client address per server process (a burst of as
                   many, then one per 60/N seconds); more answer 429 with ``Retry-After``.
    max_games:     games not over in the store; a new game beyond answers 503.
    games_per_address: games not over in the store created by one client address
                   (:func:`client_key`); a new game beyond answers 429.
    expire_after_s: a game (finished or not) unchanged this long is deleted (0: never).
    records_dir:   where the record of each expired game is written first
                   (``ID.json``; None: not kept).
    max_sockets:   spectators' WebSocket connections (no token) per game, over every
                   process of the store; a seat's connections do not count.
    max_seat_sockets: WebSocket connections of one seat (its token) to its game, per
                   process: a seat's own places, which spectators cannot take.
    body_timeout_s: a request's body must have arrived this long after its headers, or
                   it is answered 408 and the connection closed.
    socket_idle_s: a WebSocket that has been sent no view this long (its game did not
                   change) is closed with 1000 (a client reconnects for the current view).
    """

    max_agent_ms: float = engine.DEFAULT_MAX_AGENT_MS
    agent_threads: int = max(2, os.cpu_count() or 2)
    max_wait_s: float = 5.0
    games_per_minute: int = 20
    max_games: int = 10_000
    expire_after_s: float = 7 * 86400.0
    records_dir: str | None = None
    games_per_address: int = 100
    max_sockets: int = 64
    max_seat_sockets: int = 4
    body_timeout_s: float = 10.0
    socket_idle_s: float = 3600.0

    def __post_init__(self) -> None:
        for name in ("max_agent_ms", "max_wait_s", "body_timeout_s", "socket_idle_s"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a number > 0, not {value!r}")
        for name in (
            "agent_threads",
            "games_per_minute",
            "max_games",
            "games_per_address",
            "max_sockets",
            "max_seat_sockets",
        ):
            value = getattr(self, name)
            if not (isinstance(value, int) and value >= 1):
                raise ValueError(f"{name} must be an int >= 1, not {value!r}")
        if not (math.isfinite(self.expire_after_s) and self.expire_after_s >= 0):
            raise ValueError(f"expire_after_s must be >= 0, not {self.expire_after_s!r}")

    @property
    def request_limit_s(self) -> float:
        """The longest a request of the API takes to be answered: its waits
        (``max_wait_s``), the turns of up to five agents after a move, and a second for
        the store and the views."""
        return self.max_wait_s + (engine.MAX_PLAYERS - 1) * self.max_agent_ms / 1000 + 1.0


class RateLimit:
    """A token bucket per key: ``per_minute`` events at once, then one per
    ``60 / per_minute`` seconds. :meth:`take` answers 0 (allowed, counted) or the
    seconds to wait. Keys idle long enough to be full again are forgotten."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, key: str) -> float:
        now = self._clock()
        tokens, then = self._buckets.get(key, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - then) * self.rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate
        self._buckets[key] = (tokens - 1.0, now)
        if len(self._buckets) > 4096:
            full = [k for k, (t, w) in self._buckets.items() if t + (now - w) * self.rate >= self.capacity]
            for k in full:
                del self._buckets[k]
        return 0.0


class FairShare:
    """``places`` places (the agent threads) shared between clients: a free place goes
    to the waiting client that has used the places least lately (seconds held, halved
    every ``half_life`` seconds), first come first served between equals. So a client
    whose requests cost little is served before clients that keep the places busy,
    however many of those there are (first come, first served, a client behind five
    busy addresses waited for five of their turns).

    One event loop's object (no locks): :meth:`acquire` waits, :meth:`release` gives
    the place back with the seconds it was held."""

    def __init__(self, places: int, half_life: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.free = places
        self.half_life = half_life
        self._clock = clock
        self._used: dict[str, tuple[float, float]] = {}  # key -> (seconds held, decayed to when)
        self._waiting: list[tuple[int, str, asyncio.Future[None]]] = []
        self._count = 0

    def used(self, key: str) -> float:
        """The seconds ``key`` held places lately (decayed)."""
        seconds, then = self._used.get(key, (0.0, 0.0))
        return float(seconds * 0.5 ** ((self._clock() - then) / self.half_life))

    async def acquire(self, key: str) -> None:
        if self.free > 0 and not self._waiting:
            self.free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._count += 1
        entry = (self._count, key, future)
        self._waiting.append(entry)
        try:
            await future
        except BaseException:
            if entry in self._waiting:
                self._waiting.remove(entry)
            elif future.done() and not future.cancelled():
                self._hand_on()  # given a place while being cancelled: the next one gets it
            raise

    def release(self, key: str, held: float) -> None:
        """Give a place back; ``held``: the seconds ``key`` held it."""
        self._used[key] = (self.used(key) + held, self._clock())
        if len(self._used) > 4096:
            self._used = {k: v for k, v in self._used.items() if self.used(k) > 0.01}
        self._hand_on()

    def _hand_on(self) -> None:
        waiting = [w for w in self._waiting if not w[2].done()]
        self._waiting = waiting
        if not waiting:
            self.free += 1
            return
        best = min(waiting, key=lambda w: (self.used(w[1]), w[0]))
        self._waiting.remove(best)
        best[2].set_result(None)
