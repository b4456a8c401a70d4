"""The HTTP and WebSocket API and the web board: :func:`create_app`.

The routes are documented in docs/server.md (and by FastAPI at ``/docs``). Every
error answers ``{"error": "<message>"}`` with its status: 400 a move that is not
notation, 403 a missing or wrong token, 404 an unknown game, 409 an action the rules
or the game's state refuse (the library's message), 413 a body over
:data:`MAX_BODY` bytes, 422 a malformed request, 503 a failed write (nothing changed).
"""

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Header, Query, Request, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import engine
from .games import ApiError, GameService, Subscriber
from .store import Store

__all__ = ["MAX_BODY", "MAX_MOVE", "create_app"]

MAX_BODY = 4096  # bytes of a request body
MAX_MOVE = 200  # characters of a move's notation (6 tiles with 9-digit coordinates fit)
MAX_TOKEN = 128
STATIC = Path(__file__).resolve().parent / "static"  # a folder on disk (StaticFiles serves from one)
_PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}

SeatText = Annotated[str, StringConstraints(min_length=1, max_length=64)]
Token = Annotated[
    str | None, Query(max_length=MAX_TOKEN, description="the seat token (or use the Authorization header)")
]
Authorization = Annotated[str | None, Header(max_length=MAX_TOKEN + 7, description="Bearer TOKEN")]


class NewGame(BaseModel):
    """``POST /api/games``: one entry per seat, 'human' or an agent spec; an optional seed."""

    model_config = ConfigDict(extra="forbid", strict=True)
    seats: list[SeatText] = Field(
        min_length=engine.MIN_PLAYERS, max_length=engine.MAX_PLAYERS, examples=[["human", "greedy"]]
    )
    seed: int | None = Field(default=None, ge=0, lt=2**64, description="the deal's seed; random when left out")


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
    agent: str | None = Field(
        default=None, max_length=200, description="a remote bot's agent (recorded as the seat's label)"
    )


class ActionOut(BaseModel):
    player: int
    move: str = Field(description="the move as the library writes it")
    points: int
    scores: list[int] = Field(description="every seat's score after the move")
    to_move: int | None = Field(description="the seat to move after the agents' replies; null once over")
    over: bool


class _BodyLimit:
    """ASGI middleware: refuse HTTP request bodies over ``limit`` bytes with 413."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > self.limit:
            return await _too_large(scope, receive, send, self.limit)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.limit:
                return await _too_large(scope, receive, send, self.limit)
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
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


def create_app(db_path: str | os.PathLike[str] | Store = "qwirkle.sqlite", *, max_live_games: int = 256) -> FastAPI:
    """The ASGI app of a game server whose games are stored in ``db_path``: a SQLite
    file (created if missing; ``":memory:"`` for a throwaway store), a
    ``postgresql://`` URL (the [postgres] extra), or a :class:`Store` object. Several
    processes may serve one store.

    ``max_live_games``: games kept in memory; others are rebuilt from the store when
    next used. Raises ``sqlite3.Error`` or :class:`~qwirkle_core.server.store.StoreError`
    if ``db_path`` is not a usable database.
    """
    service = GameService(db_path, max_live=max_live_games)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
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
    app.add_middleware(_BodyLimit, limit=MAX_BODY)

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse({"error": exc.message}, status_code=exc.status)

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

    @app.get("/api/agents", summary="The agents a seat can be given")
    async def agents() -> dict[str, Any]:
        return {
            "human": engine.HUMAN,
            "agents": list(engine.agent_names()),
            "min_seats": engine.MIN_PLAYERS,
            "max_seats": engine.MAX_PLAYERS,
            "caps": engine.AGENT_CAPS,
        }

    @app.post("/api/games", status_code=201, response_model=NewGameOut, summary="Start a game")
    async def new_game(body: NewGame) -> dict[str, Any]:
        game_id, agents, tokens = await service.create(body.seats, body.seed)
        return {
            "id": game_id,
            "seats": [{"seat": i, "agent": a, "token": t} for i, (a, t) in enumerate(zip(agents, tokens))],
        }

    @app.get("/api/games/{game_id}", summary="A seat's view of a game (a spectator's without a token)")
    async def view(game_id: str, token: Token = None, authorization: Authorization = None) -> JSONResponse:
        # the view is JSON-ready: JSONResponse skips FastAPI's walk over every field
        return JSONResponse(await service.get_view(game_id, _token(authorization, token)))

    @app.post(
        "/api/games/{game_id}/actions",
        response_model=ActionOut,
        response_class=JSONResponse,
        summary="Play a move for the token's seat",
    )
    async def act(
        game_id: str, body: ActionIn, token: Token = None, authorization: Authorization = None
    ) -> JSONResponse:
        # the answer is built by the service with these fields: no second walk over it
        return JSONResponse(await service.act(game_id, _token(authorization, token), body.move, body.agent))

    @app.post("/api/games/{game_id}/undo", summary="Take back your last move and the agents' replies")
    async def undo(game_id: str, token: Token = None, authorization: Authorization = None) -> dict[str, int]:
        return await service.undo(game_id, _token(authorization, token))

    @app.get("/api/games/{game_id}/hint", summary="The engine's three best moves for the seat to move")
    async def hint(
        game_id: str, token: Token = None, authorization: Authorization = None
    ) -> dict[str, list[dict[str, Any]]]:
        return await service.hint(game_id, _token(authorization, token))

    @app.get("/api/games/{game_id}/record", summary="The game record, once the game is over")
    async def record(game_id: str) -> Response:
        text = await service.record(game_id)
        return Response(text, media_type="application/json")

    @app.websocket("/api/games/{game_id}/ws")
    async def updates(websocket: WebSocket, game_id: str, token: str | None = None) -> None:
        await websocket.accept()
        try:
            if token is not None and len(token) > MAX_TOKEN:
                raise ApiError(403, "this token holds no seat")
            async with service.subscribe(game_id, token) as sub:
                await _pump(websocket, sub)
        except ApiError as e:
            with suppress(Exception):
                await websocket.close(code=4000 + e.status, reason=e.message[:120])

    return app


async def _pump(websocket: WebSocket, sub: Subscriber) -> None:
    """Send the subscriber's views until the client leaves (incoming text is ignored)."""

    async def send() -> None:
        while (text := await sub.queue.get()) is not None:
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
