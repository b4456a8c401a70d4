"""Connections: uvicorn's HTTP protocol with a deadline and a size limit for a request's
headers, and a cap on the connections of one client address.

uvicorn closes a keep-alive connection that stays idle between requests, but not one
that opens and sends nothing, nor one that sends a request's headers a byte at a time
(its ``timeout_keep_alive`` is armed only after a response); its httptools parser has
no limit on a request's head. :class:`HeaderDeadline` is uvicorn's protocol (httptools
where installed, else h11) with:

- a timer: a connection must complete a request's headers within
  :func:`header_timeout` seconds of opening, or of sending the first byte of each later
  request on it, or it is closed. (The body's deadline is the app's:
  ``Settings.body_timeout_s``, answered 408.)
- a size limit: a request head (request line and headers) over :data:`MAX_HEAD` bytes
  is answered 431 and the connection closed, before the head is parsed or kept.
- a cap per client address: a process holds at most :func:`connections_per_address`
  connections (WebSockets included) from one peer address; one more is answered 429
  and closed. Peers listed in :func:`trusted_proxies` (a reverse proxy that carries
  many clients) are not capped here: the app counts their clients.

uvicorn takes it as ``http="qwirkle_core.server.net:HeaderDeadline"`` (:data:`PROTOCOL`):
an import path, so that worker processes (``--workers``) load it too; the settings
travel in ``$QWIRKLE_HEADER_TIMEOUT``, ``$QWIRKLE_CONNECTIONS_PER_ADDRESS`` and
``$QWIRKLE_TRUSTED_PROXIES``.
"""

import asyncio
import ipaddress
import json
import logging
import os
from collections import Counter
from typing import Any

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _Base
except ImportError:  # no httptools: uvicorn's pure-Python protocol
    from uvicorn.protocols.http.h11_impl import H11Protocol as _Base  # type: ignore[assignment]

__all__ = [
    "MAX_HEAD",
    "PROTOCOL",
    "TIMEOUT_VARIABLE",
    "HeaderDeadline",
    "connections_per_address",
    "header_timeout",
    "trusted_proxies",
]

log = logging.getLogger("qwirkle_core.server")
PROTOCOL = "qwirkle_core.server.net:HeaderDeadline"
TIMEOUT_VARIABLE = "QWIRKLE_HEADER_TIMEOUT"
PER_ADDRESS_VARIABLE = "QWIRKLE_CONNECTIONS_PER_ADDRESS"
PROXIES_VARIABLE = "QWIRKLE_TRUSTED_PROXIES"
DEFAULT_TIMEOUT = 10.0
DEFAULT_PER_ADDRESS = 50
MAX_HEAD = 16384  # bytes of a request's line and headers (uvicorn's h11 limit; nginx allows 4 x 8 KiB)

_open: Counter[str] = Counter()  # this process's connections per peer address


def header_timeout() -> float:
    """Seconds a connection has to send a request's headers: ``$QWIRKLE_HEADER_TIMEOUT``
    (set by :func:`qwirkle_core.server.serve`), 10 by default."""
    try:
        value = float(os.environ.get(TIMEOUT_VARIABLE, DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


def connections_per_address() -> int:
    """Connections a process holds at once from one peer address:
    ``$QWIRKLE_CONNECTIONS_PER_ADDRESS`` (set by :func:`qwirkle_core.server.serve`),
    :data:`DEFAULT_PER_ADDRESS` by default."""
    try:
        value = int(os.environ.get(PER_ADDRESS_VARIABLE, DEFAULT_PER_ADDRESS))
    except ValueError:
        return DEFAULT_PER_ADDRESS
    return value if value > 0 else DEFAULT_PER_ADDRESS


def trusted_proxies() -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """The trusted reverse proxies (``$QWIRKLE_TRUSTED_PROXIES``: addresses or networks,
    comma-separated; set by :func:`qwirkle_core.server.serve`)."""
    text = os.environ.get(PROXIES_VARIABLE, "")
    if text not in _proxies:
        _proxies.clear()  # one text at a time
        _proxies[text] = tuple(ipaddress.ip_network(a.strip(), strict=False) for a in text.split(",") if a.strip())
    return _proxies[text]


_proxies: dict[str, tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]] = {}  # the variable's text: its networks


def _trusted(address: str) -> bool:
    networks = trusted_proxies()
    if not networks:
        return False
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False
    return any(ip in network for network in networks)


def _refusal(status: int, reason: str, message: str, retry_after: int | None = None) -> bytes:
    body = json.dumps({"error": message}).encode()
    head = [f"HTTP/1.1 {status} {reason}", "content-type: application/json", "connection: close"]
    if retry_after is not None:
        head.append(f"retry-after: {retry_after}")
    head.append(f"content-length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class HeaderDeadline(_Base):
    """uvicorn's HTTP protocol, closing connections that do not complete a request's
    headers within :func:`header_timeout` seconds, answering 431 to a request head over
    :data:`MAX_HEAD` bytes, and 429 to a connection beyond
    :func:`connections_per_address` from one address."""

    _header_timer: asyncio.TimerHandle | None = None
    _in_head = False  # between a request's first byte and the end of its headers
    _head_bytes = 0
    _tail = b""  # the last bytes of the head so far (its end may straddle two reads)
    _address: str | None = None  # counted in _open (None: not counted)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        if address and not _trusted(address):
            cap = connections_per_address()
            if _open[address] >= cap:
                log.info("refused a connection: %d connections from one address already", cap)
                message = f"at most {cap} connections at once from one address; close some and try again"
                transport.write(_refusal(429, "Too Many Requests", message, retry_after=5))
                transport.close()
                return
            _open[address] += 1
            self._address = address
        self._begin()

    def data_received(self, data: bytes) -> None:
        if not self._in_head and (self.cycle is None or self.cycle.response_complete):
            self._begin()  # the first bytes of a new request
        if self._in_head:
            seen = self._tail + data
            end = seen.find(b"\r\n\r\n")
            size = self._head_bytes + (len(data) if end < 0 else end + 4 - len(self._tail))
            if size > MAX_HEAD:
                self._too_large()
                return
            if end < 0:
                self._head_bytes += len(data)
                self._tail = seen[-3:]
            else:
                self._in_head = False  # the headers are complete: their deadline is met
                self._disarm()
        super().data_received(data)

    def handle_websocket_upgrade(self, *args: Any) -> None:
        super().handle_websocket_upgrade(*args)
        address, self._address = self._address, None
        protocol = self.transport.get_protocol()
        if address is None or protocol is self:
            return
        lost = protocol.connection_lost

        def release(exc: Exception | None) -> None:  # the WebSocket's end ends the count
            _release(address)
            lost(exc)

        protocol.connection_lost = release  # type: ignore[method-assign]

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._address is not None:
            _release(self._address)
            self._address = None
        super().connection_lost(exc)

    def _begin(self) -> None:
        self._in_head = True
        self._head_bytes = 0
        self._tail = b""
        self._arm()

    def _too_large(self) -> None:
        log.info("refused a request head over %d bytes", MAX_HEAD)
        self._disarm()
        if not self.transport.is_closing():
            message = f"the request's line and headers are over {MAX_HEAD} bytes"
            self.transport.write(_refusal(431, "Request Header Fields Too Large", message))
            self.transport.close()

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(header_timeout(), self._expire)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _expire(self) -> None:
        self._header_timer = None
        if not self._in_head or self.transport.is_closing() or self.transport.get_protocol() is not self:
            return  # the headers came in time, closed, or upgraded to a WebSocket
        log.info("closed a connection that sent no complete request headers in time")
        self.transport.close()


def _release(address: str) -> None:
    _open[address] -= 1
    if _open[address] <= 0:
        del _open[address]
