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
    from collections.abc import Sequence

    from fastapi import FastAPI

    from .guard import Settings

__all__ = ["app_from_environment", "create_app", "redact", "redact_logs", "serve"]

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

    redact_logs()
    settings = Settings(**json.loads(os.environ.get(SETTINGS_VARIABLE) or "{}"))
    return create_app(os.environ.get(DB_VARIABLE, "qwirkle.sqlite"), settings=settings)


# A seat token as it may appear in a log line: ?token=T, 'Bearer T' (a header), the
# WebSocket subprotocol 'qwirkle.token.T', a first message {"token": "T"}.
_SECRET = re.compile(r"""(?i)((?:\btoken(?:=|%3D|\.|\\?["']\s*:\s*\\?["'])|\bbearer(?:\s|%20|\+)+))[A-Za-z0-9_\-]+""")


# an escape a log line may hold a token's characters in: %74, \u0074, \x74 (and \\u0074)
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})|\\+u([0-9A-Fa-f]{4})|\\+x([0-9A-Fa-f]{2})")


def _decoded(text: str) -> str:
    """``text`` with its percent-escapes and JSON or Python escapes decoded, three
    rounds at most (a doubly encoded ``%2574``)."""
    for _ in range(3):
        plain = _ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2) or m.group(3), 16)), text)
        if plain == text:
            break
        text = plain
    return text


def redact(text: str) -> str:
    """``text`` with every seat token in it replaced by ``***`` (see :data:`_SECRET`),
    matched after decoding: a line in which a token shows only once its escapes are
    decoded (``?to%6Ben=T``, ``token=%41...``, ``{"\\u0074oken": ...}``) is written
    decoded, with the token replaced."""
    plain = _decoded(text)
    if plain != text and _SECRET.search(plain):
        return _SECRET.sub(r"\1***", plain)
    return _SECRET.sub(r"\1***", text)


def _redacted(value: object) -> object:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = value if isinstance(value, str) else str(value)
    clean = redact(text)
    return value if clean == text else clean


_factory_installed = False


def _incoming_data(record: logging.LogRecord) -> bool:
    """Whether ``record`` is the WebSocket library's debug line of a received data
    frame (``< TEXT '...'``): the first message of a connection carries its token."""
    if not (isinstance(record.msg, str) and record.msg.startswith("<")):
        return False
    first = record.args[0] if isinstance(record.args, tuple) and record.args else record.msg[1:]
    return str(first).lstrip().startswith(("TEXT", "BINARY", "CONT"))


def redact_logs() -> None:
    """Make every log record of this process (any logger, any level: uvicorn's access
    and error logs, the WebSocket library's frames and headers at debug, uvicorn's
    trace of the ASGI scope) carry no seat token: its message and arguments go through
    :func:`redact` when the record is made. Installed once per process by
    :func:`serve` and :func:`app_from_environment`."""
    global _factory_installed
    if _factory_installed:
        return
    make = logging.getLogRecordFactory()

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = make(*args, **kwargs)
        if record.name.startswith("websockets") and _incoming_data(record):
            record.args = ("a data frame (not logged: a first message carries a seat token)",)
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redacted(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: _redacted(v) for k, v in record.args.items()}
        return record

    logging.setLogRecordFactory(factory)
    _factory_installed = True


def log_config(level: str) -> dict[str, object]:
    """uvicorn's logging configuration with the root logger (every other library's
    logs: the WebSocket library, asyncio, the server's own) at ``level`` too, but
    numba's compiler no lower than info."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["root"] = {"handlers": ["default"], "level": level.upper()}
    # numba's debug log is its compiler's bytecode trace (thousands of lines a kernel)
    config["loggers"]["numba"] = {"level": "INFO"}
    return config


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
    connections_per_address: int = 50,
    trusted_proxies: Sequence[str] = (),
) -> None:
    """Serve the app with uvicorn on ``host``:``port`` (blocks until stopped), storing
    games in ``db_path`` (a SQLite file or a ``postgresql://`` URL), in ``workers``
    processes that share the port and the store, with the limits of ``settings``
    (:class:`~qwirkle_core.server.guard.Settings`). Each process holds at most
    ``max_connections`` connections and requests at once (more answer 503); a client
    has ``header_timeout`` seconds to send a request's headers (and
    ``settings.body_timeout_s`` to send its body), or the connection is closed; one
    client address holds at most ``connections_per_address`` connections per process
    (WebSockets included; more answer 429). ``trusted_proxies``: the addresses (or
    networks) of reverse proxies whose ``X-Forwarded-For`` names the client, for the
    per-address limits (without any, the header is ignored and the client is the peer;
    a proxy's connections are not capped per address). Raises OSError if the address
    cannot be bound."""
    import dataclasses
    import json

    import uvicorn

    from .guard import Settings
    from .net import PER_ADDRESS_VARIABLE, PROTOCOL, PROXIES_VARIABLE, TIMEOUT_VARIABLE

    settings = settings or Settings()

    redact_logs()
    options: dict[str, object] = {
        "host": host,
        "port": port,
        "log_level": log_level,
        "log_config": log_config(log_level),
        "access_log": access_log,
        "ws_max_size": 4096,
        "ws_ping_interval": 20.0,  # a peer that does not answer a ping within 20 s is closed
        "ws_ping_timeout": 20.0,
        "timeout_keep_alive": 30,
        "timeout_graceful_shutdown": 5,
        "limit_concurrency": max_connections,
        "http": PROTOCOL,
        # uvicorn trusts X-Forwarded-For from 127.0.0.1 unless told otherwise: only from
        # the proxies named here
        "proxy_headers": bool(trusted_proxies),
        "forwarded_allow_ips": ",".join(trusted_proxies) or "",
    }
    if not header_timeout > 0:
        raise ValueError(f"header_timeout must be > 0, not {header_timeout!r}")
    os.environ[TIMEOUT_VARIABLE] = str(header_timeout)
    if not connections_per_address >= 1:
        raise ValueError(f"connections_per_address must be >= 1, not {connections_per_address!r}")
    os.environ[PER_ADDRESS_VARIABLE] = str(connections_per_address)
    os.environ[PROXIES_VARIABLE] = ",".join(trusted_proxies)
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
