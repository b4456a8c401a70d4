"""A remote bot: play one seat of a game on a qwirkle-core server with a built-in agent.

The bot sees only what its seat sees (the view of ``GET /api/games/{id}``). On its turn
it deals the tiles it cannot see at random into the other hands and the bag, lets the
agent choose in that world (:func:`engine.choose_move`) and posts the move with the
view's version and an action id of its own, so that a request sent again after a lost
answer is never played twice; between turns it waits for the views the server pushes
over the WebSocket (its token goes as a subprotocol, never in a URL). This is what
``qwirkle bot`` runs; docs/server.md has a 30-line version in plain Python.
"""

import json
import random
import secrets
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx
from websockets.exceptions import ConnectionClosed, WebSocketException
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Subprotocol

from . import engine

__all__ = ["BotError", "play_remote"]

RETRIES = 6  # tries of a request that gets no answer (about 8 s of waiting in all)


class BotError(Exception):
    """The server refused the bot (bad token, unknown game, a move it would not take),
    or could not be reached."""


def _error(response: httpx.Response) -> BotError:
    try:
        message = response.json().get("error", response.text)
    except ValueError:
        message = response.text
    return BotError(f"{response.request.method} {response.request.url.path}: {response.status_code} {message}")


def _ws_url(base: str, game_id: str) -> str:
    """The game's WebSocket address (the token travels as a subprotocol, not in it)."""
    parts = urlsplit(base)
    scheme = "wss" if parts.scheme == "https" else "ws"
    path = parts.path.rstrip("/") + f"/api/games/{quote(game_id, safe='')}/ws"
    return urlunsplit((scheme, parts.netloc, path, "", ""))


def play_remote(
    url: str,
    game_id: str,
    token: str,
    agent: str = "heuristic",
    seed: int | None = None,
    on_move: Callable[[dict[str, Any]], None] | None = None,
    timeout: float = 60.0,
) -> dict[str, Any]:
    """Play the seat that ``token`` holds in game ``game_id`` on the server at ``url``
    (``http://HOST:PORT``) with ``agent`` (a spec such as ``"mc:playouts=32"``) until the
    game is over; returns the final view (a dict, see docs/server.md).

    seed:    seeds the bot's random deals of the unseen tiles (None: random).
    on_move: called as ``on_move(result)`` with the server's answer to each move.
    timeout: seconds to wait for an answer to a request; between turns the bot waits
             for pushes as long as the opponents take (asking for the view every
             ``timeout`` seconds).
    Raises ValueError for a bad agent, :class:`BotError` when the server refuses or
    cannot be reached.
    """
    label = engine.seat_label(agent, caps={})
    if label == engine.HUMAN:
        raise ValueError("a bot plays with an agent such as 'greedy' or 'heuristic', not 'human'")
    try:
        return _play(url.rstrip("/"), game_id, token, label, random.Random(seed), on_move, timeout)
    except (httpx.HTTPError, WebSocketException, OSError) as e:
        raise BotError(f"cannot talk to {url}: {e}") from e


def _turns(
    ws: ClientConnection,
    view: dict[str, Any],
    fetch: Callable[[], dict[str, Any]],
    call: Callable[..., httpx.Response],
    path: str,
    label: str,
    rng: random.Random,
    on_move: Callable[[dict[str, Any]], None] | None,
    timeout: float,
) -> dict[str, Any]:
    """Play the seat's turns from ``view`` until the game is over (the final view)."""
    while not view["over"]:
        if view["to_move"] != view["seat"]:
            try:
                pushed = json.loads(ws.recv(timeout=timeout))
            except TimeoutError:  # a slow opponent, or a lost push: ask
                pushed = fetch()
            if pushed["version"] >= view["version"]:
                view = pushed
            continue
        move = engine.choose_move(view["observation"], label, rng.getrandbits(64))
        body = {
            "move": move,
            "agent": label,
            "expected_version": view["version"],
            "action_id": secrets.token_urlsafe(12),
        }
        r = call("POST", f"{path}/actions", body)
        if r.status_code == 409 and "view" in r.json():
            view = r.json()["view"]  # the game moved on (a clock ran out): play from the current view
            continue
        if r.status_code != 200:
            raise _error(r)
        if on_move is not None:
            on_move(r.json())
        view = fetch()
    return view


def _play(
    base: str,
    game_id: str,
    token: str,
    label: str,
    rng: random.Random,
    on_move: Callable[[dict[str, Any]], None] | None,
    timeout: float,
) -> dict[str, Any]:
    path = f"/api/games/{quote(game_id, safe='')}"
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http:

        def call(method: str, url: str, body: dict[str, Any] | None = None) -> httpx.Response:
            """The request, sent again (the same body: the same action id) when it got
            no answer (a server process killed, a connection dropped) or a 503."""
            attempt = 0
            while True:
                attempt += 1
                try:
                    r = http.request(method, url, json=body)
                except httpx.TransportError:
                    if attempt == RETRIES:
                        raise
                else:
                    if r.status_code != 503 or attempt == RETRIES:
                        return r
                time.sleep(min(0.25 * 2**attempt, 4.0))

        def fetch() -> dict[str, Any]:
            r = call("GET", path)
            if r.status_code != 200:
                raise _error(r)
            view: dict[str, Any] = r.json()
            return view

        view = fetch()
        if view["seat"] is None:
            raise BotError("the token holds no seat")
        protocols = [Subprotocol("qwirkle"), Subprotocol(f"qwirkle.token.{token}")]
        failures = 0
        while not view["over"]:  # once per WebSocket connection
            try:
                with connect(
                    _ws_url(base, game_id), subprotocols=protocols, open_timeout=timeout, max_size=2**22
                ) as ws:
                    view = _turns(ws, view, fetch, call, path, label, rng, on_move, timeout)
            except (ConnectionClosed, OSError) as e:  # the server process went: connect again
                before = view["version"]
                time.sleep(0.25)
                view = fetch()
                failures = 0 if view["version"] > before else failures + 1
                if failures >= RETRIES:
                    raise BotError(f"the server keeps closing the WebSocket: {e}") from None
        return view
