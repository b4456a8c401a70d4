"""The qwirkle-core game server (``pip install 'qwirkle-core[server]'``).

- :func:`create_app`: the ASGI app (FastAPI): the HTTP/WebSocket API and the web board.
- :func:`serve`: run it with uvicorn (what ``qwirkle serve`` does).
- :func:`qwirkle_core.server.bot.play_remote`: play one seat of a game on a server
  with a built-in agent (what ``qwirkle bot`` does).

Games are stored in SQLite (the default) or PostgreSQL, and several server processes
may serve one database; see docs/server.md for the API, the storage, the workers and
the security rules (nothing a seat may not see leaves the server).
"""

from __future__ import annotations

import logging
import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from .guard import Settings

__all__ = ["app_from_environment", "create_app", "serve"]

DB_VARIABLE = "QWIRKLE_DB"  # the store of the app that app_from_environment builds
SETTINGS_VARIABLE = "QWIRKLE_SETTINGS"  # its limits (JSON of guard.Settings' fields)


def create_app(
    db_path: str | os.PathLike[str] = "qwirkle.sqlite", *, max_live_games: int = 256, settings: Settings | None = None
) -> FastAPI:
    """The ASGI app; see :func:`qwirkle_core.server.app.create_app`."""
    from .app import create_app as make

    return make(db_path, max_live_games=max_live_games, settings=settings)


def app_from_environment() -> FastAPI:
    """The app over the store named by ``$QWIRKLE_DB`` (default ``qwirkle.sqlite``):
    the app factory each uvicorn worker process calls (``qwirkle serve --workers N``,
    or ``uvicorn --factory qwirkle_core.server:app_from_environment --workers N``)."""
    import json

    from .guard import Settings

    logging.getLogger("uvicorn.access").addFilter(_RedactTokens())
    settings = Settings(**json.loads(os.environ.get(SETTINGS_VARIABLE) or "{}"))
    return create_app(os.environ.get(DB_VARIABLE, "qwirkle.sqlite"), settings=settings)


class _RedactTokens(logging.Filter):
    """Keeps seat tokens (``?token=...``) out of the access log."""

    _TOKEN = re.compile(r"(token=)[^&\s]+")

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(self._TOKEN.sub(r"\1***", a) if isinstance(a, str) else a for a in record.args)
        return True


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    db_path: str | os.PathLike[str] = "qwirkle.sqlite",
    log_level: str = "info",
    workers: int = 1,
    access_log: bool = True,
    settings: Settings | None = None,
    max_connections: int = 1000,
    header_timeout: float = 10.0,
) -> None:
    """Serve the app with uvicorn on ``host``:``port`` (blocks until stopped), storing
    games in ``db_path`` (a SQLite file or a ``postgresql://`` URL), in ``workers``
    processes that share the port and the store, with the limits of ``settings``
    (:class:`~qwirkle_core.server.guard.Settings`). Each process holds at most
    ``max_connections`` connections and requests at once (more answer 503); a client
    has ``header_timeout`` seconds to send a request's headers (and
    ``settings.body_timeout_s`` to send its body), or the connection is closed. Raises OSError if the address cannot be
    bound."""
    import dataclasses
    import json

    import uvicorn

    from .guard import Settings
    from .net import PROTOCOL, TIMEOUT_VARIABLE

    settings = settings or Settings()

    logging.getLogger("uvicorn.access").addFilter(_RedactTokens())
    options: dict[str, object] = {
        "host": host,
        "port": port,
        "log_level": log_level,
        "access_log": access_log,
        "ws_max_size": 4096,
        "timeout_keep_alive": 30,
        "timeout_graceful_shutdown": 5,
        "limit_concurrency": max_connections,
        "http": PROTOCOL,
    }
    if not header_timeout > 0:
        raise ValueError(f"header_timeout must be > 0, not {header_timeout!r}")
    os.environ[TIMEOUT_VARIABLE] = str(header_timeout)
    if workers == 1:
        uvicorn.run(create_app(db_path, settings=settings), **options)  # type: ignore[arg-type]
        return
    # each worker process builds its own app (its own connections) from the environment
    create_app(db_path, settings=settings).state.service.close()  # fails here, once, for a database it cannot use
    os.environ[DB_VARIABLE] = os.fspath(db_path)
    os.environ[SETTINGS_VARIABLE] = json.dumps(dataclasses.asdict(settings))
    uvicorn.run(
        "qwirkle_core.server:app_from_environment",
        factory=True,
        workers=workers,
        **options,  # type: ignore[arg-type]
    )
