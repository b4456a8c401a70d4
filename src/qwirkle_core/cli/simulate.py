"""``qwirkle simulate``: a batch of games between built-in agents, its summary and its rows."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import (
    EXIT_INTERRUPTED,
    ProgressBar,
    UsageError,
    add_cluster_options,
    add_variant,
    check_cubes_option,
    cluster,
    cluster_status,
    distributed_module,
    fallback,
    plural,
    positive_int,
    reason,
    seats,
    seed_type,
    whole_number,
)

if TYPE_CHECKING:
    from rich.console import Console

    from ..batch.simulate import SimulationResult


def register(sub: Any) -> None:
    from ..game.agents import agent_names
    from ..game.rules import OPENING_RULES

    p = sub.add_parser(
        "simulate",
        help="play a batch of games between agents and summarise them",
        description="Play GAMES complete games between AGENTS (one per seat) in parallel, print a summary "
        "(win rates with 95% confidence intervals, mean scores, first-player advantage, turns) and "
        "optionally write one row per game to a Parquet or CSV file as the games finish. Ctrl-C (or "
        "SIGTERM, SIGHUP) stops early and keeps the finished games.",
    )
    p.add_argument("--games", type=positive_int, default=10_000, help="number of games (default: 10000)")
    p.add_argument(
        "--agents",
        type=_agent_list,
        default="greedy,greedy",
        help="comma-separated agents, one per seat, 2 to 6 (default: greedy,greedy); available: "
        f"{agent_names()}; parameters as name:key=value, e.g. mc:playouts=32:depth=0 (docs/agents.md)",
    )
    p.add_argument(
        "--seed", type=seed_type, default=0, help="batch seed; game i plays from a hash of (seed, i) (default: 0)"
    )
    p.add_argument(
        "--start", type=_nonnegative_int, default=0, help="index of the first game of the batch (default: 0)"
    )
    p.add_argument(
        "--threads",
        type=positive_int,
        default=None,
        help="worker threads (default: all cores; on a cluster, numba threads per task, default 1); results do not depend on it",
    )
    p.add_argument(
        "--opening",
        choices=sorted(OPENING_RULES),
        default="largest_group",
        help="opening rule (default: largest_group, the official one)",
    )
    add_variant(p)
    p.add_argument(
        "--out",
        default=None,
        metavar="PATH",
        help="write the per-game rows to this .parquet or .csv file (docs/results.md); with --scheduler or --workers, "
        "to this folder, one part-<first>-<end>.parquet file per range of games (docs/distributed.md)",
    )
    add_cluster_options(p)
    p.add_argument(
        "--resume",
        action="store_true",
        help="with --scheduler/--workers: continue the batch in --out, playing only the ranges without a complete file",
    )
    p.add_argument(
        "--range-size",
        type=positive_int,
        default=None,
        metavar="N",
        help="with --scheduler/--workers: games per task (default: about 5 seconds of work)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress display")
    p.set_defaults(run=_run_simulate)


def _nonnegative_int(text: str) -> int:
    value = whole_number(text)
    if not 0 <= value < 2**62:
        raise argparse.ArgumentTypeError(f"must be 0 to 2**62-1, got {value}")
    return value


def _agent_list(text: str) -> list[Any]:
    """argparse type of ``simulate --agents``: built-in agents, one per seat (AgentSpecs)."""
    from ..batch.players import is_builtin
    from ..game.agents import parse_agents

    names = [a.strip() for a in text.split(",") if a.strip()]
    python = [a for a in names if not is_builtin(a)]
    if python:
        raise argparse.ArgumentTypeError(
            f"{python[0]!r}: simulate runs built-in agents only (inside numba); Python agents play in 'qwirkle tournament' and 'qwirkle play'"
        )
    try:
        specs = parse_agents(names)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return seats(list(specs))


def _output_path(text: str) -> Path:
    from ..batch.rows import check_output_path

    try:
        return check_output_path(text)
    except (OSError, ValueError) as e:
        why = reason(e)  # the library's own message names the path already: not twice
        raise argparse.ArgumentTypeError(
            why if why.startswith(repr(text)) else f"cannot write {text!r}: {why}"
        ) from None


def summary_table(result: SimulationResult) -> Any:
    """A rich Table of the headline figures of a :class:`SimulationResult`."""
    from rich.table import Table

    game = ", Qwirkle Cubes" if result.rules.cubes else ""
    table = Table(title=f"{plural(result.games, 'game')}{game}, seed {result.seed}", title_justify="left")
    for col in ("seat", "agent", "win rate [95% CI]", "mean score", "sd", "Qwirkles/game"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    means, sds, qw = result.mean_scores(), result.score_std(), result.mean_qwirkles()
    for seat, (rate, low, high) in enumerate(result.win_rates()):
        table.add_row(
            str(seat),
            result.agents[seat],
            f"{rate:.1%} [{low:.1%}, {high:.1%}]",
            f"{means[seat]:.1f}",
            f"{sds[seat]:.1f}",
            f"{qw[seat]:.2f}",
        )
    return table


def print_summary(result: SimulationResult, console: Console) -> None:
    """Print the summary of a batch (or say that no game finished)."""
    if result.games == 0:
        console.print("no game finished")
        return
    fp = result.first_player_advantage()
    console.print(summary_table(result))
    console.print(
        f"ties: {result.tie_rate:.1%}   mean turns: {result.mean_turns():.1f}   tiles placed: {result.stats.mean_tiles_placed():.1f}"
    )
    console.print(
        f"first player: wins {fp['win_rate']:.1%} [{fp['low']:.1%}, {fp['high']:.1%}] (fair {fp['fair']:.1%}), "
        f"margin {fp['score_margin']:+.2f} points"
    )
    if result.stats.truncated:
        console.print(f"{plural(result.stats.truncated, 'game')} stopped at the turn limit (counted as no winner)")
    if result.workers:
        if result.resumed:
            console.print(f"{result.resumed:,} games were already in the part files (resumed)")
        console.print(
            f"{result.games - result.resumed:,} games in {result.elapsed:.1f} s ({result.games_per_second:,.0f} games/s) on {plural(result.workers, 'worker')}\n"
            f"({plural(result.threads, 'worker thread')}; kernels ready in {result.compile_seconds:.1f} s)"
        )
    else:
        console.print(
            f"{result.games:,} games in {result.elapsed:.1f} s ({result.games_per_second:,.0f} games/s, {plural(result.threads, 'thread')})"
        )


def _run_simulate(args: argparse.Namespace, console: Console) -> int:
    from ..batch.simulate import simulate
    from ..game.rules import Rules

    rules = Rules(players=len(args.agents), opening=args.opening, variant=args.variant)
    if rules.cubes:
        check_cubes_option("--agents", args.agents)
    if args.scheduler or args.workers:
        return _run_simulate_on_cluster(args, console, rules)
    if args.resume or args.range_size is not None:
        raise UsageError(
            f"argument {'--resume' if args.resume else '--range-size'}: needs --scheduler or --workers (see 'qwirkle simulate --help')"
        )
    if args.out is not None:
        try:
            args.out = _output_path(args.out)
        except argparse.ArgumentTypeError as e:
            raise UsageError(f"argument --out: {e} (see 'qwirkle simulate --help')") from None
    bar = ProgressBar(console, "games", not args.no_progress, _kernel_status(args.agents, rules))
    try:
        result = simulate(
            args.games,
            agents=args.agents,
            seed=args.seed,
            threads=args.threads,
            rules=rules,
            progress=bar,
            start=args.start,
            out=args.out,
        )
    finally:
        bar.close()
    print_summary(result, console)
    if result.write_error is not None:
        return _save_elsewhere(result, args.out, console)
    if args.out:
        if result.path is not None:
            console.print(f"wrote {result.games:,} rows to {result.path}")
        else:
            console.print(f"no game finished: {args.out} was not written")
    if result.interrupted:
        from ..stopping import stopped_by

        console.print(f"interrupted: kept the {result.games:,} of {args.games:,} games finished before {stopped_by()}")
        return EXIT_INTERRUPTED
    return 0


def _run_simulate_on_cluster(args: argparse.Namespace, console: Console, rules: Any) -> int:
    from ..batch.simulate import simulate

    dist = distributed_module()
    if args.out is None:
        raise UsageError(
            "argument --out: a run on a cluster needs --out DIR, the folder for its part files (see 'qwirkle simulate --help')"
        )
    try:
        folder = dist.check_batch_folder(args.out, args.agents, rules, args.seed, args.start, args.games, args.resume)
    except (OSError, ValueError) as e:
        raise UsageError(f"argument --out: {reason(e)}") from None
    bar = ProgressBar(console, "games", not args.no_progress, cluster_status(args))
    try:
        with cluster(args) as client:
            dist.warm_up(client, rules=rules, on_ready=bar.workers_ready)
            result = simulate(
                args.games,
                agents=args.agents,
                seed=args.seed,
                threads=args.threads,
                rules=rules,
                progress=bar,
                start=args.start,
                out=folder,
                client=client,
                resume=args.resume,
                range_size=args.range_size,
            )
    except UsageError:
        raise
    except Exception as e:  # a task's error: one line, and where the finished ranges are
        bar.close()
        print(f"qwirkle: error: {type(e).__name__}: {e}", file=sys.stderr)
        for note in getattr(e, "__notes__", []):
            print(f"qwirkle: {note}", file=sys.stderr)
        return 1
    finally:
        bar.close()
    print_summary(result, console)
    parts = dist.existing_parts(folder, args.start, args.games)
    console.print(f"{folder}: {sum(b - a for a, b in parts):,} of {args.games:,} games in {len(parts):,} part files")
    if result.interrupted:
        console.print("interrupted: the finished ranges are kept; run again with --resume to continue")
        return EXIT_INTERRUPTED
    return 0


def _kernel_status(agents: Sequence[Any], rules: Any) -> str:
    """What the progress display says until the first game: the compile notice of this
    batch's kernel (for ``agents`` under ``rules``) on a first run, with its estimate,
    else that it is loaded from the cache."""
    from .._compiling import message
    from ..batch.local import compile_seconds
    from ..batch.warmup import batch_description

    seconds = compile_seconds(agents, rules)
    if seconds:
        return f"{message(batch_description(agents, rules), seconds)} ('qwirkle warmup' compiles them ahead of time)"
    return "preparing the kernels: loading them from the cache"


def _save_elsewhere(result: SimulationResult, path: Path, console: Console) -> int:
    """After a failure to write ``path``, save the kept rows in the working folder."""
    from ..batch.rows import write_rows
    from ..batch.simulate import batch_metadata

    if result.games == 0 or result.path is not None:
        console.print(f"could not finish writing {result.write_error}")
        return 1
    other = fallback(path)
    metadata = batch_metadata(result.agents, result.rules, result.seed, result.start, result.games)
    write_rows(other, result.rows, metadata)
    console.print(f"could not write {result.write_error}; saved the {result.games:,} rows to {other} instead")
    return 1
