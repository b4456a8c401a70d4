"""Connections: uvicorn's HTTP protocol with a deadline for a request's headers.

uvicorn closes a keep-alive connection that stays idle between requests, but not one
that opens and sends nothing, nor one that sends a request's headers a byte at a time
(its ``timeout_keep_alive`` is armed only after a response). :class:`HeaderDeadline`
is uvicorn's protocol (httptools where installed, else h11) with one more timer: a
connection must complete a request's headers within :func:`header_timeout` seconds of
opening, or of sending the first byte of its next request, or it is closed. (The
body's deadline is the app's: ``Settings.body_timeout_s``, answered 408.)

uvicorn takes it as ``http="qwirkle_core.server.net:HeaderDeadline"`` (:data:`PROTOCOL`):
an import path, so that worker processes (``--workers``) load it too; the timeout
travels in ``$QWIRKLE_HEADER_TIMEOUT``.
"""

import asyncio
import logging
import os
from typing import Any

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _Base
except ImportError:  # no httptools: uvicorn's pure-Python protocol
    from uvicorn.protocols.http.h11_impl import H11Protocol as _Base  # type: ignore[assignment]

__all__ = ["PROTOCOL", "TIMEOUT_VARIABLE", "HeaderDeadline", "header_timeout"]

log = logging.getLogger("qwirkle_core.server")
PROTOCOL = "qwirkle_core.server.net:HeaderDeadline"
TIMEOUT_VARIABLE = "QWIRKLE_HEADER_TIMEOUT"
DEFAULT_TIMEOUT = 10.0


def header_timeout() -> float:
    """Seconds a connection has to send a request's headers: ``$QWIRKLE_HEADER_TIMEOUT``
    (set by :func:`qwirkle_core.server.serve`), 10 by default."""
    try:
        value = float(os.environ.get(TIMEOUT_VARIABLE, DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


class HeaderDeadline(_Base):
    """uvicorn's HTTP protocol, closing connections that do not complete a request's
    headers within :func:`header_timeout` seconds."""

    _header_timer: asyncio.TimerHandle | None = None
    _armed_for: Any = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and (self.cycle is None or self.cycle.response_complete):
            self._arm()  # the first bytes of a new request
        super().data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._armed_for = self.cycle
        self._header_timer = self.loop.call_later(header_timeout(), self._expire)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _expire(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            return  # closed, or upgraded to a WebSocket
        if self.cycle is not self._armed_for and self.cycle is not None:
            return  # the request's headers came in time
        log.info("closed a connection that sent no complete request headers in time")
        self.transport.close()
