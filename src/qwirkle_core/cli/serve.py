"""``qwirkle serve`` (the game server) and ``qwirkle bot`` (a built-in agent in a seat of a
server's game)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import (
    UsageError,
    probe,
    reason,
    seed_type,
)

if TYPE_CHECKING:
    from rich.console import Console


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 1 .. 65535, not {value}")
    return value


def _db_path(text: str) -> str:
    if text.startswith(("postgresql://", "postgres://")):
        return text
    if "://" in text:
        raise argparse.ArgumentTypeError(f"expected a SQLite file or a postgresql:// URL, got {text!r}")
    try:
        probe(Path(text))
    except OSError as e:
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: {reason(e)}") from None
    return text


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of processes, got {text!r}") from None
    if not 1 <= value <= 64:
        raise argparse.ArgumentTypeError(f"workers is 1 .. 64, not {value}")
    return value


def _positive(kind: type, lo: float, hi: float, what: str) -> Any:
    """An argparse type: a ``kind`` (int or float) in ``lo .. hi``."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not lo <= value <= hi:  # also refuses nan
            raise argparse.ArgumentTypeError(f"{what} is {lo:g} .. {hi:g}, not {text}")
        return value

    return parse


def _check_server_extra() -> None:
    from importlib.util import find_spec

    missing = [name for name in ("fastapi", "uvicorn", "websockets", "httpx") if find_spec(name) is None]
    if missing:
        raise UsageError(
            f"this needs the [server] extra ({', '.join(missing)} missing): pip install 'qwirkle-core[server]'"
        )


def _proxy(text: str) -> str:
    """argparse type of ``--trusted-proxy``: an IP address or network."""
    import ipaddress

    try:
        return str(ipaddress.ip_network(text.strip(), strict=False))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an IP address or network, got {text!r}") from None


def register_serve(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="run the game server: the web board and the HTTP/WebSocket API",
        description="Serve games over HTTP: the web board at http://HOST:PORT/, the API under /api "
        "(docs/server.md; OpenAPI at /docs). Games are stored in DB (a SQLite file, or a "
        "postgresql:// URL) with every action, so a restarted server resumes them with the same seat "
        "tokens; several processes (--workers, or servers on other machines) may share one DB. Needs "
        "the [server] extra: pip install 'qwirkle-core[server]' (and [postgres] for PostgreSQL).",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=_port, default=8000, help="port (default: 8000)")
    p.add_argument(
        "--db",
        type=_db_path,
        default="qwirkle.sqlite",
        help="the games' store: a SQLite file or postgresql://USER@HOST/DB (default: qwirkle.sqlite)",
    )
    p.add_argument(
        "--workers",
        type=_workers,
        default=1,
        help="server processes sharing the port and the store (default: 1)",
    )
    p.add_argument("--no-access-log", action="store_true", help="do not log every request")
    p.add_argument(
        "--log-level",
        choices=("critical", "error", "warning", "info", "debug", "trace"),
        default="info",
        help="the level of every log (uvicorn's and every library's; seat tokens are redacted at all levels; "
        "default: info)",
    )
    limits = p.add_argument_group("limits (docs/server.md lists each with the status it answers)")
    limits.add_argument(
        "--max-agent-ms",
        type=_positive(float, 1, 60_000, "milliseconds"),
        default=300.0,
        help="an agent's time per turn: bounds every agent parameter that buys compute (default: 300)",
    )
    limits.add_argument(
        "--agent-threads",
        type=_positive(int, 1, 1024, "a number of threads"),
        default=None,
        help="agent turns and hints run on at most this many threads per process; one client holds one "
        "at a time (default: the cores, at least 2)",
    )
    limits.add_argument(
        "--max-wait",
        type=_positive(float, 0.01, 600, "seconds"),
        default=5.0,
        help="the longest a request waits for its game or an agent thread before 503 (default: 5)",
    )
    limits.add_argument(
        "--games-per-minute",
        type=_positive(int, 1, 10**9, "a number of games"),
        default=20,
        help="new games per client address per process, then 429 (default: 20)",
    )
    limits.add_argument(
        "--max-games",
        type=_positive(int, 1, 10**9, "a number of games"),
        default=10_000,
        help="games in play in the store; more new games answer 503 (default: 10000)",
    )
    limits.add_argument(
        "--games-per-address",
        type=_positive(int, 1, 10**9, "a number of games"),
        default=100,
        help="games in play in the store created by one client address (IPv6: one /64); more new games "
        "from it answer 429 (default: 100)",
    )
    limits.add_argument(
        "--expire-after",
        type=_positive(float, 0, 10**9, "hours"),
        default=168.0,
        help="delete a game, finished or not, unchanged for this many hours; 0: never (default: 168, a week)",
    )
    limits.add_argument(
        "--keep-records",
        metavar="DIR",
        default=None,
        help="write the record of each expired game to DIR/ID.json before deleting it",
    )
    limits.add_argument(
        "--max-connections",
        type=_positive(int, 1, 10**6, "a number of connections"),
        default=1000,
        help="connections and requests at once per process; more answer 503 (default: 1000)",
    )
    limits.add_argument(
        "--connections-per-address",
        type=_positive(int, 1, 10**6, "a number of connections"),
        default=50,
        help="connections (WebSockets included) at once from one client address per process; more "
        "answer 429 (default: 50)",
    )
    limits.add_argument(
        "--trusted-proxy",
        metavar="ADDRESS",
        type=_proxy,
        action="append",
        default=[],
        help="a reverse proxy (an address or a network; repeat for several) whose X-Forwarded-For header "
        "names the client for the per-address limits; without one, that header is ignored (docs/server.md)",
    )
    limits.add_argument(
        "--max-sockets",
        type=_positive(int, 1, 10**6, "a number of connections"),
        default=64,
        help="spectators' WebSocket connections per game over every process of the store; a seat's "
        "own connections do not count (default: 64)",
    )
    limits.add_argument(
        "--max-seat-sockets",
        type=_positive(int, 1, 10**6, "a number of connections"),
        default=4,
        help="WebSocket connections of one seat to its game per process (default: 4)",
    )
    limits.add_argument(
        "--header-timeout",
        type=_positive(float, 0.01, 3600, "seconds"),
        default=10.0,
        help="a connection must send a request's headers within this many seconds, or it is closed (default: 10)",
    )
    limits.add_argument(
        "--body-timeout",
        type=_positive(float, 0.01, 3600, "seconds"),
        default=10.0,
        help="a request's body must arrive within this many seconds of its headers, or 408 (default: 10)",
    )
    limits.add_argument(
        "--socket-idle",
        type=_positive(float, 1, 10**7, "seconds"),
        default=3600.0,
        help="close a WebSocket that has been sent no view for this many seconds (its game did not change), "
        "with 1000 (default: 3600)",
    )
    p.set_defaults(run=_run_serve)


def _run_serve(args: argparse.Namespace, console: Console) -> int:
    _check_server_extra()
    from ..server import serve
    from ..server.guard import Settings
    from ..server.store import StoreError

    if args.keep_records is not None:
        try:
            Path(args.keep_records).mkdir(parents=True, exist_ok=True)
            probe(Path(args.keep_records) / "probe.json")
        except OSError as e:
            raise UsageError(f"argument --keep-records: cannot write {args.keep_records!r}: {reason(e)}") from None
    settings = Settings(
        max_agent_ms=args.max_agent_ms,
        max_wait_s=args.max_wait,
        games_per_minute=args.games_per_minute,
        max_games=args.max_games,
        games_per_address=args.games_per_address,
        expire_after_s=args.expire_after * 3600.0,
        records_dir=args.keep_records,
        max_sockets=args.max_sockets,
        max_seat_sockets=args.max_seat_sockets,
        body_timeout_s=args.body_timeout,
        socket_idle_s=args.socket_idle,
        **({} if args.agent_threads is None else {"agent_threads": args.agent_threads}),
    )

    where = args.db.partition("@")[2] or args.db if "://" in args.db else args.db
    plural = f", {args.workers} workers" if args.workers > 1 else ""
    console.print(f"qwirkle server on http://{args.host}:{args.port}/ (games in {where}{plural}); Ctrl-C stops it")
    try:
        serve(
            host=args.host,
            port=args.port,
            db_path=args.db,
            workers=args.workers,
            access_log=not args.no_access_log,
            log_level=args.log_level,
            settings=settings,
            max_connections=args.max_connections,
            header_timeout=args.header_timeout,
            connections_per_address=args.connections_per_address,
            trusted_proxies=args.trusted_proxy,
        )
    except StoreError as e:
        raise UsageError(f"argument --db: {e}") from None
    return 0


def register_bot(sub: Any) -> None:
    from ..game.agents import agent_names

    p = sub.add_parser(
        "bot",
        help="play one seat of a game on a server with a built-in agent",
        description="Play the seat that TOKEN holds in game GAME on the server at URL with AGENT, "
        "through the HTTP/WebSocket API, until the game is over. The bot sees only its seat's view.",
    )
    p.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8000")
    p.add_argument("--game", required=True, help="the game id (write --game=ID if an id begins with '-')")
    p.add_argument(
        "--token",
        default=os.environ.get("QWIRKLE_TOKEN"),
        help="the seat's token (default: $QWIRKLE_TOKEN; write --token=TOKEN if it begins with '-')",
    )
    p.add_argument(
        "--agent",
        type=_agent,
        default="heuristic",
        help=f"the agent: {agent_names()}, with parameters as name:key=value, e.g. mc:playouts=32 (default: heuristic)",
    )
    p.add_argument(
        "--seed", type=seed_type, default=None, help="seed of the bot's guesses at the unseen tiles (default: random)"
    )
    p.set_defaults(run=_run_bot)


def _agent(text: str) -> Any:
    from ..game.agents import parse_agent

    try:
        return parse_agent(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _run_bot(args: argparse.Namespace, console: Console) -> int:
    if not args.token:
        raise UsageError("argument --token: give the seat's token (or set QWIRKLE_TOKEN)")
    if not args.url.startswith(("http://", "https://")):
        raise UsageError(f"argument --url: expected http://HOST:PORT, got {args.url!r}")
    _check_server_extra()
    from ..server.bot import BotError, play_remote

    try:
        view = play_remote(
            args.url,
            args.game,
            args.token,
            agent=args.agent.label,
            seed=args.seed,
            on_move=lambda r: console.print(f"seat {r['player']}: {r['move']} ({r['points']} points)"),
        )
    except BotError as e:
        print(f"qwirkle: error: {e}", file=sys.stderr)
        return 1
    winner = view["winner"]
    result = "a tie" if winner == -1 else f"seat {winner} wins" + (" (this bot)" if winner == view["seat"] else "")
    console.print(f"game over: {result}; scores {view['scores']}")
    return 0
