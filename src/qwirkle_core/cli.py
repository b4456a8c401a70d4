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


def python_agent(text):
    """argparse type of one agent, built-in or ``package.module:Name`` (imported now,
    with the current folder importable, so a mistake is a one-line error)."""
    from .players import Player

    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        Player.of(text.strip())
    except (TypeError, ValueError) as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text.strip()


def _agent_list(text, check=python_agent):
    names = [check(a) for a in text.split(",") if a.strip()]
    if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS:
        raise argparse.ArgumentTypeError(f"give {MIN_PLAYERS} to {MAX_PLAYERS} agents (one per seat), got {len(names)}")
    return names


def _builtin_agent(text):
    from .players import is_builtin

    if not is_builtin(text.strip()):
        raise argparse.ArgumentTypeError(f"{text.strip()!r}: simulate runs built-in agents only (inside numba); Python agents play in 'qwirkle tournament' and 'qwirkle play'")
    return python_agent(text)


def _builtin_agent_list(text):
    return _agent_list(text, check=_builtin_agent)


def time_limit_type(text):
    """argparse type of a time limit: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


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
    p.add_argument("--agents", type=_builtin_agent_list, default=["greedy", "greedy"], help="comma-separated agents, one per seat, 2 to 6 (default: greedy,greedy); available: random, greedy, heuristic, mc; parameters as name:key=value, e.g. mc:playouts=32:depth=0")
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
    p.add_argument("--agents", type=_agent_list, default=["greedy", "heuristic", "mc"], help="comma-separated agents, at least 2 (default: greedy,heuristic,mc); parameters as name:key=value, e.g. mc:playouts=32; Python agents as package.module:Name (docs/env.md)")
    p.add_argument("--games", type=_positive_int, default=1000, help="games per pairing (default: 1000)")
    p.add_argument("--seed", type=seed_type, default=0, help="seed (default: 0)")
    p.add_argument("--threads", type=_positive_int, default=None, help="worker threads, or worker processes for pairings with a Python agent (default: all cores)")
    p.add_argument("--time-limit", type=time_limit_type, default=None, metavar="SECONDS", help="seconds per move for Python agents; a slower move loses the game's result (default: no limit)")
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
    result = tournament(args.agents, games=args.games, seed=args.seed, threads=args.threads, time_limit=args.time_limit)
    table = Table(title=f"Round robin, {args.games:,} games per pairing, seed {args.seed}", title_justify="left")
    for col in ("agent", "opponent", "win rate [95% CI]", "mean margin", "W-L-T"):
        table.add_column(col, justify="left" if col in ("agent", "opponent") else "right")
    for m in result.matches:
        low, high = m.interval()
        se = m.margin.std(ddof=1) / max(len(m.margin), 1) ** 0.5 if len(m.margin) > 1 else float("nan")
        margin = f"{m.margin.mean():+.1f} ± {1.96 * se:.1f}" if m.games else "-"
        table.add_row(m.first, m.second, f"{m.win_rate:.1%} [{low:.1%}, {high:.1%}]", margin, f"{m.wins}-{m.losses}-{m.ties}")
    console.print(table)
    timing = Table(title="Time per move (built-in agents: self-play, one thread; Python agents: their turns above)", title_justify="left")
    timing.add_column("agent")
    timing.add_column("ms per move", justify="right")
    timing.add_column("mean score", justify="right")
    for a in result.agents:
        scores = result.scores(a)
        timing.add_row(a, f"{1000 * result.seconds_per_move[a]:.3g}", f"{scores.mean():.1f}" if len(scores) else "-")
    console.print(timing)
    for agent in dict.fromkeys(f.agent for f in result.failures):
        failed = [f for f in result.failures if f.agent == agent]
        console.print(f"{len(failed)} games not counted: {failed[0]}" + (" (the first of them)" if len(failed) > 1 else ""), markup=False, highlight=False, soft_wrap=True)
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


def build_parser():
    parser = _Parser(prog="qwirkle", description="qwirkle-core: a fast, exact Qwirkle engine and simulator.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_simulate(sub)
    _add_play(sub)
    _add_tournament(sub)
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
