"""The HTTP and WebSocket API and the web board: :func:`create_app`.

The routes are documented in docs/server.md (and by FastAPI at ``/docs``). Every
error answers ``{"error": "<message>"}`` with its status: 400 a move that is not
notation, 403 a missing or wrong token, 404 an unknown game, 409 an action the rules
or the game's state refuse (the library's message), 413 a body over
:data:`MAX_BODY` bytes, 422 a malformed request, 503 a failed write (nothing changed).
"""

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Annotated, Any

import anyio
from fastapi import FastAPI, Header, Query, Request, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import engine
from .games import ApiError, GameService, Subscriber
from .guard import CLIENT, Settings, client_key
from .guard import Request as Arrival
from .store import Store

__all__ = ["MAX_BODY", "MAX_MOVE", "create_app"]

MAX_BODY = 4096  # bytes of a request body
MAX_MOVE = 200  # characters of a move's notation (6 tiles with 9-digit coordinates fit)
MAX_TOKEN = 128
WS_PROTOCOL = "qwirkle"  # the WebSocket subprotocol the server selects when offered
WS_TOKEN_PREFIX = "qwirkle.token."  # a subprotocol that carries the seat token
WS_AUTH_MESSAGE = "qwirkle.auth"  # a subprotocol that says: the token comes as the first message
WS_AUTH_TIMEOUT = 10  # seconds to wait for that first message
STATIC = Path(__file__).resolve().parent / "static"  # a folder on disk (StaticFiles serves from one)
_PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


def _whole(value: object) -> object:
    """A JSON number with no fraction (``3.0``, ``1e2``) as the integer it is: JSON
    Schema's ``integer`` admits it, and so does the API; other values go on to the
    strict check (``3.5``, ``"3"`` and ``true`` stay refused)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _wholes(data: object, *names: str) -> object:
    """``data`` (a request body) with the fields ``names`` through :func:`_whole`."""
    if isinstance(data, dict) and any(isinstance(data.get(n), float) for n in names):
        return {k: _whole(v) if k in names else v for k, v in data.items()}
    return data


SeatText = Annotated[str, StringConstraints(min_length=1, max_length=64)]
ActionId = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")]
Token = Annotated[
    str | None, Query(max_length=MAX_TOKEN, description="the seat token (or use the Authorization header)")
]
Authorization = Annotated[str | None, Header(max_length=MAX_TOKEN + 7, description="Bearer TOKEN")]


class ClockIn(BaseModel):
    """A time control: ``move_s`` seconds per move, or a game clock of ``base_s`` seconds
    per seat plus ``increment_s`` per move; ``fallback`` plays a turn out of time."""

    model_config = ConfigDict(extra="forbid", strict=True)
    move_s: float | None = Field(default=None, ge=1, le=7 * 86400, description="seconds per move")
    base_s: float | None = Field(default=None, ge=1, le=30 * 86400, description="seconds per seat for the game")
    increment_s: float = Field(default=0, ge=0, le=86400, description="seconds added after each move (with base_s)")
    fallback: SeatText = Field(default="greedy", description="the agent that plays a turn whose time ran out")


class NewGame(BaseModel):
    """``POST /api/games``: one entry per seat, 'human' or an agent spec; an optional
    seed; an optional time control."""

    model_config = ConfigDict(extra="forbid", strict=True)
    seats: list[SeatText] = Field(
        min_length=engine.MIN_PLAYERS, max_length=engine.MAX_PLAYERS, examples=[["human", "greedy"]]
    )
    seed: int | None = Field(
        default=None,
        ge=0,
        le=2**64 - 1,
        description="the deal's seed (0 .. 2**64-1) with one human seat (shown in every view); with several, "
        "mixed with a server secret (docs/server.md, fair deals); random when left out",
    )
    clock: ClockIn | None = Field(default=None, description="a time control; none when left out")

    @model_validator(mode="before")
    @classmethod
    def _integers(cls, data: object) -> object:
        return _wholes(data, "seed")


def _integer_bounds(document: dict[str, Any], models: tuple[type[BaseModel], ...]) -> dict[str, Any]:
    """``document`` (FastAPI's OpenAPI) with the integer bounds of ``models``' fields as
    pydantic writes them: FastAPI's OpenAPI models hold bounds as floats, and the float
    of 2**64 - 1 is 2**64 (a seed bound that is neither an integer nor right)."""
    schemas = document.get("components", {}).get("schemas", {})
    for model in models:
        own = model.model_json_schema().get("properties", {})
        for name, field in schemas.get(model.__name__, {}).get("properties", {}).items():
            exact = own.get(name, {})
            for option, truth in zip(field.get("anyOf", [field]), exact.get("anyOf", [exact])):
                if option.get("type") == "integer":
                    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
                        if key in truth:
                            option[key] = truth[key]
    return document


class ErrorOut(BaseModel):
    """Every refusal: one sentence saying what is wrong (and, with 429 and 503, a
    ``Retry-After`` header)."""

    error: str
    view: dict[str, Any] | None = Field(
        default=None, description="with 409 for a stale expected_version: the seat's current view"
    )


_WHEN = {
    400: "the move is not notation",
    403: "no token where one is needed, or a token of no seat of this game",
    404: "no such game",
    408: "the request's body did not arrive in time",
    409: "the rules or the game's state refuse the request",
    413: f"the request body is over {MAX_BODY} bytes",
    422: "a malformed request (not JSON, not UTF-8, missing or unknown fields, values out of range)",
    429: "too many new games from this address (Retry-After)",
    503: "the server is busy or could not store the change; nothing changed (Retry-After)",
}


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` of a route's refusals."""
    return {status: {"model": ErrorOut, "description": _WHEN[status]} for status in statuses}


# OpenAPI links from a new game to what can be done with it (seat 0's token), for
# clients and for tools that chain requests (schemathesis' stateful tests)
_GAME = {"game_id": "$response.body#/id"}
_SEAT = {**_GAME, "token": "$response.body#/seats/0/token"}
_LINKS = {
    "View": {"operationId": "view", "parameters": _SEAT},
    "Spectate": {"operationId": "view", "parameters": _GAME},
    "Act": {"operationId": "act", "parameters": _SEAT},
    "Undo": {"operationId": "undo", "parameters": _SEAT},
    "Hint": {"operationId": "hint", "parameters": _SEAT},
    "Record": {"operationId": "record", "parameters": _GAME},
}


class SeatOut(BaseModel):
    seat: int
    agent: str
    token: str | None = Field(description="the secret that acts for this seat; null for agent seats")


class NewGameOut(BaseModel):
    id: str
    seats: list[SeatOut]


class ActionIn(BaseModel):
    """``POST /api/games/{id}/actions``: a move in notation."""

    model_config = ConfigDict(extra="forbid", strict=True)
    move: str = Field(min_length=1, max_length=MAX_MOVE, examples=["R1@0,1 R2@0,2", "x R1 B4", "pass"])
    expected_version: int | None = Field(
        default=None, ge=1, description="the version of the view the move was made on: 409 with the view if stale"
    )
    action_id: ActionId | None = Field(
        default=None, description="the client's id of this action: a repeat gets the first answer, plays nothing"
    )
    agent: str | None = Field(
        default=None, max_length=200, description="a remote bot's agent (recorded as the seat's label)"
    )

    @model_validator(mode="before")
    @classmethod
    def _integers(cls, data: object) -> object:
        return _wholes(data, "expected_version")


class ActionOut(BaseModel):
    player: int
    move: str = Field(description="the move as the library writes it")
    points: int
    scores: list[int] = Field(description="every seat's score after the move")
    to_move: int | None = Field(description="the seat to move after the agents' replies; null once over")
    over: bool
    version: int = Field(description="the game's version after the move and the agents' replies")


class _Arrival:
    """ASGI middleware: note who asks and when (:data:`guard.CLIENT`), for the waits'
    deadline and the per-client limits."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        client = scope.get("client")
        CLIENT.set(Arrival(client_key(str(client[0])) if client else "", time.monotonic(), time.time()))
        await self.app(scope, receive, send)


class _BodyLimit:
    """ASGI middleware: refuse HTTP request bodies over ``limit`` bytes with 413, and
    bodies that have not all arrived ``timeout`` seconds after the headers with 408
    (and the connection closed)."""

    def __init__(self, app: ASGIApp, limit: int, timeout: float = 10.0) -> None:
        self.app = app
        self.limit = limit
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > self.limit:
            return await _too_large(scope, receive, send, self.limit)
        chunks, size = [], 0
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                async with asyncio.timeout(max(deadline - time.monotonic(), 0.0)):
                    message = await receive()
            except TimeoutError:
                response = JSONResponse(
                    {"error": f"the request body did not arrive within {self.timeout:g} s"},
                    status_code=408,
                    headers={"Connection": "close"},
                )
                return await response(scope, receive, send)
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.limit:
                return await _too_large(scope, receive, send, self.limit)
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        if body and b"json" in dict(scope["headers"]).get(b"content-type", b""):
            try:
                body.decode("utf-8")
            except UnicodeDecodeError as e:
                error = f"malformed request: the body is not UTF-8 (byte {e.start})"
                return await JSONResponse({"error": error}, status_code=422)(scope, receive, send)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


async def _too_large(scope: Scope, receive: Receive, send: Send, limit: int) -> None:
    response = JSONResponse({"error": f"the request body is over {limit} bytes"}, status_code=413)
    await response(scope, receive, send)


def _token(authorization: str | None, token: str | None) -> str | None:
    """The token of the Authorization header (Bearer) or of ?token=."""
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise ApiError(403, "the Authorization header must be 'Bearer TOKEN'")
        return value.strip()
    return token


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for e in exc.errors()[:3]:
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
        parts.append(f"{where}: {e.get('msg')}" if where else str(e.get("msg")))
    return "malformed request: " + "; ".join(parts)


def create_app(
    db_path: str | os.PathLike[str] | Store = "qwirkle.sqlite",
    *,
    max_live_games: int = 256,
    settings: Settings | None = None,
) -> FastAPI:
    """The ASGI app of a game server whose games are stored in ``db_path``: a SQLite
    file (created if missing; ``":memory:"`` for a throwaway store), a
    ``postgresql://`` URL (the [postgres] extra), or a :class:`Store` object. Several
    processes may serve one store.

    ``max_live_games``: games kept in memory; others are rebuilt from the store when
    next used. ``settings``: the limits (:class:`~qwirkle_core.server.guard.Settings`;
    docs/server.md lists them). Raises ``sqlite3.Error`` or :class:`~qwirkle_core.server.store.StoreError`
    if ``db_path`` is not a usable database.
    """
    service = GameService(db_path, max_live=max_live_games, settings=settings)

    ready: dict[str, Any] = {"ready": False, "kernels_s": None}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # every kernel loaded (or compiled) before uvicorn accepts a connection: the first
        # request costs what later ones do
        ready["kernels_s"] = round(await anyio.to_thread.run_sync(engine.warm), 3)
        ready["ready"] = True
        service.start()  # the background tasks: expiry, the sweep of the clocks
        yield
        service.close()

    app = FastAPI(
        title="qwirkle-core game server",
        version="1",
        description="Play Qwirkle through the qwirkle-core engine: people in the browser, "
        "agents on the server, remote bots over HTTP and WebSocket. See docs/server.md.",
        lifespan=lifespan,
    )
    app.state.service = service

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _integer_bounds(FastAPI.openapi(app), (NewGame, ActionIn))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    app.add_middleware(_BodyLimit, limit=MAX_BODY, timeout=service.settings.body_timeout_s)
    app.add_middleware(_Arrival)

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        headers = None if exc.retry_after is None else {"Retry-After": str(exc.retry_after)}
        return JSONResponse({"error": exc.message, **exc.extra}, status_code=exc.status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": _validation_message(exc)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)

    # -- pages ---------------------------------------------------------------------------

    def page(name: str) -> FileResponse:
        return FileResponse(STATIC / name, media_type="text/html", headers=_PAGE_HEADERS)

    @app.get("/", include_in_schema=False)
    async def lobby() -> FileResponse:
        return page("index.html")

    @app.get("/game/{game_id}", include_in_schema=False)
    async def board(game_id: str) -> FileResponse:
        return page("game.html")

    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")

    # -- the API -------------------------------------------------------------------------

    @app.get("/api/agents", summary="The agents a seat can be given", operation_id="agents", responses=_errors(503))
    async def agents() -> dict[str, Any]:
        return {
            "human": engine.HUMAN,
            "agents": list(engine.agent_names()),
            "min_seats": engine.MIN_PLAYERS,
            "max_seats": engine.MAX_PLAYERS,
            "caps": service.caps,
            "max_agent_ms": service.settings.max_agent_ms,
        }

    @app.get("/api/ready", summary="Whether the server is ready", operation_id="ready", responses=_errors(503))
    async def is_ready() -> JSONResponse:
        """``{"ready": true, "kernels_s": S}`` once every kernel is loaded (S: the seconds
        loading them took at start); 503 before (which uvicorn does not let happen: the
        app accepts no connection before)."""
        return JSONResponse(ready, status_code=200 if ready["ready"] else 503)

    @app.post(
        "/api/games",
        status_code=201,
        response_model=NewGameOut,
        summary="Start a game",
        operation_id="new_game",
        responses={201: {"links": _LINKS}, **_errors(408, 413, 422, 429, 503)},
    )
    async def new_game(body: NewGame) -> dict[str, Any]:
        clock = None if body.clock is None else body.clock.model_dump()
        game_id, agents, tokens = await service.create(body.seats, body.seed, clock)
        return {
            "id": game_id,
            "seats": [{"seat": i, "agent": a, "token": t} for i, (a, t) in enumerate(zip(agents, tokens))],
        }

    @app.get(
        "/api/games/{game_id}",
        summary="A seat's view of a game (a spectator's without a token)",
        operation_id="view",
        responses=_errors(403, 404, 422, 503),
    )
    async def view(game_id: str, token: Token = None, authorization: Authorization = None) -> JSONResponse:
        # the view is JSON-ready: JSONResponse skips FastAPI's walk over every field
        return JSONResponse(await service.get_view(game_id, _token(authorization, token)))

    @app.post(
        "/api/games/{game_id}/actions",
        response_model=ActionOut,
        response_class=JSONResponse,
        summary="Play a move for the token's seat",
        operation_id="act",
        responses=_errors(400, 403, 404, 408, 409, 413, 422, 503),
    )
    async def act(
        game_id: str, body: ActionIn, token: Token = None, authorization: Authorization = None
    ) -> JSONResponse:
        # the answer is built by the service with these fields: no second walk over it
        answer = await service.act(
            game_id, _token(authorization, token), body.move, body.expected_version, body.action_id, body.agent
        )
        return JSONResponse(answer)

    @app.post(
        "/api/games/{game_id}/undo",
        summary="Take back your last move and the agents' replies",
        operation_id="undo",
        responses=_errors(403, 404, 408, 409, 413, 422, 503),
    )
    async def undo(game_id: str, token: Token = None, authorization: Authorization = None) -> dict[str, int]:
        return await service.undo(game_id, _token(authorization, token))

    @app.get(
        "/api/games/{game_id}/hint",
        summary="The engine's three best moves for the seat to move",
        operation_id="hint",
        responses=_errors(403, 404, 409, 422, 503),
    )
    async def hint(
        game_id: str, token: Token = None, authorization: Authorization = None
    ) -> dict[str, list[dict[str, Any]]]:
        return await service.hint(game_id, _token(authorization, token))

    @app.get(
        "/api/games/{game_id}/record",
        summary="The game record, once the game is over",
        operation_id="record",
        responses=_errors(404, 409, 422, 503),
    )
    async def record(game_id: str) -> Response:
        text = await service.record(game_id)
        return Response(text, media_type="application/json")

    @app.websocket("/api/games/{game_id}/ws")
    async def updates(websocket: WebSocket, game_id: str, token: str | None = None) -> None:
        offered = list(websocket.scope.get("subprotocols") or [])
        await websocket.accept(subprotocol=WS_PROTOCOL if WS_PROTOCOL in offered else None)
        try:
            token = await _ws_token(websocket, offered, token)
            async with service.subscribe(game_id, token) as sub:
                await _pump(websocket, sub, service.settings.socket_idle_s)
        except ApiError as e:
            with suppress(Exception):
                await websocket.close(code=4000 + e.status, reason=e.message[:120])

    return app


async def _ws_token(websocket: WebSocket, offered: list[str], query: str | None) -> str | None:
    """The token of a WebSocket: from the subprotocol ``qwirkle.token.TOKEN``, from a
    first message ``{"token": TOKEN}`` (when the client offers ``qwirkle.auth``), or
    from ``?token=`` (older clients; redacted from the logs). None: a spectator."""
    tokens = [p[len(WS_TOKEN_PREFIX) :] for p in offered if p.startswith(WS_TOKEN_PREFIX)]
    if tokens:
        token: object = tokens[0]
    elif WS_AUTH_MESSAGE in offered:
        try:
            with anyio.fail_after(WS_AUTH_TIMEOUT):
                message = await websocket.receive()
        except TimeoutError:
            raise ApiError(408, f"send {{'token': TOKEN}} within {WS_AUTH_TIMEOUT} s of connecting") from None
        text = message.get("text") or (message.get("bytes") or b"").decode("utf-8", "replace")
        try:
            data = json.loads(text) if len(text) <= MAX_TOKEN + 32 else None
        except ValueError:
            data = None
        if not isinstance(data, dict) or set(data) != {"token"}:
            raise ApiError(400, 'the first message must be {"token": TOKEN} (null for a spectator)')
        token = data["token"]
    else:
        token = query
    if token is not None and (not isinstance(token, str) or len(token) > MAX_TOKEN):
        raise ApiError(403, "this token holds no seat")
    return token


async def _pump(websocket: WebSocket, sub: Subscriber, idle: float) -> None:
    """Send the subscriber's views until the client leaves (incoming text is ignored),
    or until no view came for ``idle`` seconds (closed with 1000: not a refusal, so
    the web board and ``qwirkle bot`` connect again, to a fresh count of idle time)."""

    async def send() -> None:
        while True:
            try:
                async with asyncio.timeout(idle):
                    text = await sub.queue.get()
            except TimeoutError:
                reason = f"no change of the game for {idle:g} s: reconnect for the current view"
                return await websocket.close(code=1000, reason=reason)
            if text is None:
                break
            await websocket.send_text(text)
        await websocket.close(code=1013, reason="too slow: reconnect for the current view")

    async def receive() -> None:
        while (await websocket.receive())["type"] != "websocket.disconnect":
            pass

    tasks = [asyncio.create_task(send()), asyncio.create_task(receive())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with suppress(Exception, asyncio.CancelledError):
                await task
