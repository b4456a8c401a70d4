"""The ``qwirkle`` command line: ``qwirkle simulate``, ``qwirkle play``, ``qwirkle tournament``."""

import argparse
import os
import sys

from .rules import MAX_PLAYERS, MIN_PLAYERS, OPENING_RULES


class UsageError(Exception):
    """A mistake in the command line: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def seed_type(text):
    """argparse type of a seed: an int 0 .. 2**64-1 (decimal, or 0x.. hex)."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer seed, got {text!r}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"the seed must be 0 .. 2**64-1, got {value}")
    return value


def _agent_list(text):
    from .simulate import parse_agents

    names = [a.strip() for a in text.split(",") if a.strip()]
    try:
        parse_agents(names)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS:
        raise argparse.ArgumentTypeError(f"give {MIN_PLAYERS} to {MAX_PLAYERS} agents (one per seat), got {len(names)}")
    return names


def _output_path(text):
    ext = os.path.splitext(text)[1].lower()
    if ext not in (".parquet", ".csv"):
        raise argparse.ArgumentTypeError(f"{text!r}: the output must end in .parquet or .csv")
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"{text!r}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(text) and not os.access(text, os.W_OK)):
        raise argparse.ArgumentTypeError(f"{text!r}: cannot write there")
    return text


def _add_simulate(sub):
    p = sub.add_parser(
        "simulate",
        help="play a batch of games between agents and summarise them",
        description="Play GAMES complete games between AGENTS (one per seat) in parallel, print a summary "
        "(win rates with 95%% confidence intervals, mean scores, first-player advantage, turns) and "
        "optionally write one row per game to a Parquet or CSV file. Ctrl-C stops early and keeps the "
        "finished games.",
    )
    p.add_argument("--games", type=_positive_int, default=10_000, help="number of games (default: 10000)")
    p.add_argument("--agents", type=_agent_list, default=["greedy", "greedy"], help="comma-separated agents, one per seat, 2 to 6 (default: greedy,greedy); available: random, greedy, heuristic, mc; parameters as name:key=value, e.g. mc:playouts=32:depth=0")
    p.add_argument("--seed", type=seed_type, default=0, help="batch seed; game i plays from a hash of (seed, i) (default: 0)")
    p.add_argument("--threads", type=_positive_int, default=None, help="worker threads (default: all cores); results do not depend on it")
    p.add_argument("--opening", choices=sorted(OPENING_RULES), default="largest_group", help="opening rule (default: largest_group, the official one)")
    p.add_argument("--out", type=_output_path, default=None, help="write the per-game rows to this .parquet or .csv file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=_run_simulate)


def _write_rows(result, path):
    import pyarrow as pa

    table = pa.table(result.columns())
    if path.lower().endswith(".parquet"):
        import pyarrow.parquet as pq

        pq.write_table(table, path)
    else:
        import pyarrow.csv as pcsv

        pcsv.write_csv(table, path)


def summary_table(result):
    """A rich Table of the headline figures of a :class:`SimulationResult`."""
    from rich.table import Table

    table = Table(title=f"{result.games:,} games, seed {result.seed}", title_justify="left")
    for col in ("seat", "agent", "win rate [95% CI]", "mean score", "sd", "Qwirkles/game"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    means, sds, qw = result.mean_scores(), result.score_std(), result.mean_qwirkles()
    for seat, (rate, low, high) in enumerate(result.win_rates()):
        table.add_row(str(seat), result.agents[seat], f"{rate:.1%} [{low:.1%}, {high:.1%}]", f"{means[seat]:.1f}", f"{sds[seat]:.1f}", f"{qw[seat]:.2f}")
    return table


def print_summary(result, console):
    fp = result.first_player_advantage()
    console.print(summary_table(result))
    console.print(f"ties: {result.tie_rate:.1%}   mean turns: {result.mean_turns():.1f}   tiles placed: {result.tiles_placed.mean():.1f}")
    console.print(
        f"first player: wins {fp['win_rate']:.1%} [{fp['low']:.1%}, {fp['high']:.1%}] (fair share {fp['fair']:.1%}), "
        f"score margin {fp['score_margin']:+.2f} points"
    )
    if result.truncated.any():
        console.print(f"{int(result.truncated.sum())} games stopped at the turn limit (counted as no winner)")
    console.print(f"{result.games:,} games in {result.elapsed:.1f} s ({result.games_per_second:,.0f} games/s, {result.threads} threads)")


def _run_simulate(args, console):
    from .rules import Rules
    from .simulate import simulate

    rules = Rules(players=len(args.agents), opening=args.opening)
    result = simulate(args.games, agents=args.agents, seed=args.seed, threads=args.threads, rules=rules, progress=not args.no_progress)
    print_summary(result, console)
    if args.out:
        _write_rows(result, args.out)
        console.print(f"wrote {result.games:,} rows to {args.out}")
    if result.interrupted:
        console.print(f"interrupted: kept the {result.games:,} of {args.games:,} games finished before Ctrl-C")
        return 130
    return 0


def _add_tournament(sub):
    p = sub.add_parser(
        "tournament",
        help="round robin between agents",
        description="Every pair of AGENTS plays GAMES two-player games, half from each seat on the same "
        "deals. Prints each pairing's win rate with a 95%% confidence interval and mean score margin, "
        "and each agent's time per move (from a short self-play run).",
    )
    p.add_argument("--agents", type=_agent_list, default=["greedy", "heuristic", "mc"], help="comma-separated agents, at least 2 (default: greedy,heuristic,mc); parameters as name:key=value, e.g. mc:playouts=32")
    p.add_argument("--games", type=_positive_int, default=1000, help="games per pairing (default: 1000)")
    p.add_argument("--seed", type=seed_type, default=0, help="seed (default: 0)")
    p.add_argument("--threads", type=_positive_int, default=None, help="worker threads (default: all cores)")
    p.add_argument("--plot", type=_plot_path, default=None, help="save the score distributions to this .png file (needs matplotlib)")
    p.set_defaults(run=_run_tournament)


def _plot_path(text):
    if not text.lower().endswith(".png"):
        raise argparse.ArgumentTypeError(f"{text!r}: the plot must be a .png file")
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text!r}: cannot write there")
    return text


def _run_tournament(args, console):
    from rich.table import Table

    from .tournament import plot_scores, tournament

    if len(set(args.agents)) != len(args.agents):
        raise UsageError("argument --agents: each agent may appear once")
    result = tournament(args.agents, games=args.games, seed=args.seed, threads=args.threads)
    table = Table(title=f"Round robin, {args.games:,} games per pairing, seed {args.seed}", title_justify="left")
    for col in ("agent", "opponent", "win rate [95% CI]", "mean margin", "W-L-T"):
        table.add_column(col, justify="left" if col in ("agent", "opponent") else "right")
    for m in result.matches:
        low, high = m.interval()
        se = m.margin.std(ddof=1) / max(len(m.margin), 1) ** 0.5 if len(m.margin) > 1 else float("nan")
        table.add_row(m.first, m.second, f"{m.win_rate:.1%} [{low:.1%}, {high:.1%}]", f"{m.margin.mean():+.1f} ± {1.96 * se:.1f}", f"{m.wins}-{m.losses}-{m.ties}")
    console.print(table)
    timing = Table(title="Time per move (self-play, one thread)", title_justify="left")
    timing.add_column("agent")
    timing.add_column("ms per move", justify="right")
    timing.add_column("mean score", justify="right")
    for a in result.agents:
        timing.add_row(a, f"{1000 * result.seconds_per_move[a]:.3g}", f"{result.scores(a).mean():.1f}")
    console.print(timing)
    if args.plot:
        plot_scores(result, args.plot)
        console.print(f"wrote {args.plot}")
    return 0


def _add_play(sub):
    from .frontend import add_play_arguments, main_play

    p = sub.add_parser(
        "play",
        help="play a game against an agent in the terminal",
        description="Play Qwirkle against the built-in agents: the board in colour (plain text when "
        "piped), your hand, legal moves, hints, undo, and saving the game record. Reads commands from "
        "standard input, so it can be scripted.",
    )
    add_play_arguments(p)
    p.set_defaults(run=lambda args, console: main_play(args))


def _port(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 1 .. 65535, not {value}")
    return value


def _db_path(text):
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"{text!r}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(text) and not os.access(text, os.W_OK)):
        raise argparse.ArgumentTypeError(f"{text!r}: cannot write there")
    return text


def _add_serve(sub):
    p = sub.add_parser(
        "serve",
        help="run the game server: the web board and the HTTP/WebSocket API",
        description="Serve games over HTTP: the web board at http://HOST:PORT/, the API under /api "
        "(docs/server.md; OpenAPI at /docs). Games are stored in the SQLite file DB after every "
        "action, so a restarted server resumes them with the same seat tokens. Needs the [server] "
        "extra: pip install 'qwirkle-core[server]'.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=_port, default=8000, help="port (default: 8000)")
    p.add_argument("--db", type=_db_path, default="qwirkle.sqlite", help="SQLite file of the games (default: qwirkle.sqlite)")
    p.set_defaults(run=_run_serve)


def _check_server_extra():
    from importlib.util import find_spec

    missing = [name for name in ("fastapi", "uvicorn", "websockets", "httpx") if find_spec(name) is None]
    if missing:
        raise UsageError(f"this needs the [server] extra ({', '.join(missing)} missing): pip install 'qwirkle-core[server]'")


def _run_serve(args, console):
    _check_server_extra()
    from .server import serve

    console.print(f"qwirkle server on http://{args.host}:{args.port}/ (games in {args.db}); Ctrl-C stops it")
    serve(host=args.host, port=args.port, db_path=args.db)
    return 0


def _one_agent(text):
    from .simulate import parse_agents

    try:
        return parse_agents([text])[0][0]
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _add_bot(sub):
    p = sub.add_parser(
        "bot",
        help="play one seat of a game on a server with a built-in agent",
        description="Play the seat that TOKEN holds in game GAME on the server at URL with AGENT, "
        "through the HTTP/WebSocket API, until the game is over. The bot sees only its seat's view.",
    )
    p.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8000")
    p.add_argument("--game", required=True, help="the game id")
    p.add_argument("--token", default=os.environ.get("QWIRKLE_TOKEN"), help="the seat's token (default: $QWIRKLE_TOKEN)")
    p.add_argument("--agent", type=_one_agent, default="heuristic", help="the agent, e.g. greedy, heuristic, mc:playouts=32 (default: heuristic)")
    p.add_argument("--seed", type=seed_type, default=None, help="seed of the bot's guesses at the unseen tiles (default: random)")
    p.set_defaults(run=_run_bot)


def _run_bot(args, console):
    if not args.token:
        raise UsageError("argument --token: give the seat's token (or set QWIRKLE_TOKEN)")
    if not args.url.startswith(("http://", "https://")):
        raise UsageError(f"argument --url: expected http://HOST:PORT, got {args.url!r}")
    _check_server_extra()
    from .server.bot import BotError, play_remote

    try:
        view = play_remote(
            args.url, args.game, args.token, agent=args.agent, seed=args.seed,
            on_move=lambda r: console.print(f"seat {r['player']}: {r['move']} ({r['points']} points)"),
        )
    except BotError as e:
        print(f"qwirkle: error: {e}", file=sys.stderr)
        return 1
    winner = view["winner"]
    result = "a tie" if winner == -1 else f"seat {winner} wins" + (" (this bot)" if winner == view["seat"] else "")
    console.print(f"game over: {result}; scores {view['scores']}")
    return 0


def build_parser():
    parser = _Parser(prog="qwirkle", description="qwirkle-core: a fast, exact Qwirkle engine and simulator.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_simulate(sub)
    _add_play(sub)
    _add_tournament(sub)
    _add_serve(sub)
    _add_bot(sub)
    return parser


def main(argv=None):
    from rich.console import Console

    console = Console()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "run", None):
            parser.print_help()
            return 2
        return args.run(args, console)
    except UsageError as e:
        print(f"qwirkle: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("qwirkle: interrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError) as e:
        print(f"qwirkle: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
