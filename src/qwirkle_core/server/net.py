"""Connections: uvicorn's HTTP protocol with a deadline for a request's headers.

uvicorn closes a keep-alive connection that stays idle between requests, but not one
that opens and sends nothing, nor one that sends a request's headers a byte at a time
(its ``timeout_keep_alive`` is armed only after a response). :func:`protocol_class`
gives uvicorn's protocol (httptools where installed, else h11) with one more timer: a
connection must complete a request's headers within ``header_timeout`` seconds of
opening, or of sending the first byte of its next request, or it is closed. (The
body's deadline is the app's: ``Settings.body_timeout_s``, answered 408.)
"""

import asyncio
import logging
from typing import Any

__all__ = ["protocol_class"]

log = logging.getLogger("qwirkle_core.server")


def protocol_class(header_timeout: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class with a ``header_timeout`` (seconds) for each
    request's headers; pass it as ``uvicorn.run(..., http=protocol_class(10))``."""
    if not header_timeout > 0:
        raise ValueError(f"header_timeout must be > 0, not {header_timeout!r}")
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Base
    except ImportError:  # no httptools: uvicorn's pure-Python protocol
        from uvicorn.protocols.http.h11_impl import H11Protocol as Base  # type: ignore[assignment]

    class HeaderDeadline(Base):
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
            self._header_timer = self.loop.call_later(header_timeout, self._expire)

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
            log.info("closed a connection that sent no complete request headers in %g s", header_timeout)
            self.transport.close()

    HeaderDeadline.__name__ = HeaderDeadline.__qualname__ = f"HeaderDeadline{Base.__name__}"
    return HeaderDeadline
