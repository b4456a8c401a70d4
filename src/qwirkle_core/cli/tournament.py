"""``qwirkle tournament``: a round robin between agents, its tables and its plot."""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import (
    EXIT_INTERRUPTED,
    ProgressBar,
    UsageError,
    add_cluster_options,
    add_variant,
    any_agent,
    check_cubes_option,
    cluster,
    cluster_status,
    distributed_module,
    fallback,
    file_of,
    plural,
    positive_int,
    reason,
    seed_type,
    time_limit,
)

if TYPE_CHECKING:
    from rich.console import Console

    from ..batch.tournament import TournamentResult


def register(sub: Any) -> None:
    from ..game.agents import agent_names

    p = sub.add_parser(
        "tournament",
        help="round robin between agents",
        description="Every pair of AGENTS plays GAMES two-player games, half from each seat on the same "
        "deals. Prints each pairing's win rate with a 95% confidence interval and mean score margin, "
        "the standings, and each agent's time per move (from a short self-play run; for a Python agent, "
        "its turns in the tournament). Games a Python agent breaks are not counted and are reported. "
        "Ctrl-C (or SIGTERM, SIGHUP) stops within about a second and reports the finished deals.",
    )
    p.add_argument(
        "--agents",
        type=_any_agent_list,
        default="greedy,heuristic,mc",
        help=f"comma-separated agents, at least 2 (default: greedy,heuristic,mc); built in: {agent_names()}; "
        "parameters as name:key=value, e.g. mc:playouts=32; "
        "Python agents as package.module:Name, importable from the working folder (docs/env.md)",
    )
    p.add_argument(
        "--games",
        type=_even_games,
        default=1000,
        help="games per pairing, an even number (each deal is played from both seats; default: 1000)",
    )
    p.add_argument("--seed", type=seed_type, default=0, help="seed (default: 0)")
    p.add_argument(
        "--threads",
        type=positive_int,
        default=None,
        help="worker threads, or worker processes for pairings with a Python agent (default: all cores; on a cluster, numba threads per task, default 1)",
    )
    p.add_argument(
        "--time-limit",
        type=time_limit,
        default=None,
        metavar="SECONDS",
        help="seconds per move for Python agents; a slower move loses the game from the results (default: no limit)",
    )
    p.add_argument(
        "--plot",
        type=_plot_path,
        default=None,
        help="save the score distributions to this .png file (needs matplotlib)",
    )
    p.add_argument(
        "--sprt",
        type=_sprt_bounds,
        default=None,
        metavar="ELO0,ELO1",
        help="two agents: stop as soon as the sequential probability ratio test on the deals (both seats) accepts "
        "H0 (the first is at most ELO0 Elo stronger) or H1 (at least ELO1); --games is then the most it plays "
        "(docs/agents.md, 'Deciding with fewer games')",
    )
    add_variant(p)
    add_cluster_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress display")
    p.set_defaults(run=_run_tournament)


def _any_agent_list(text: str) -> list[Any]:
    """argparse type of ``tournament --agents``: at least two built-in or Python agents
    (Players). Every pairing plays two-player games, so the seats' limit does not apply."""
    agents = [any_agent(a) for a in text.split(",") if a.strip()]
    if len(agents) < 2:
        raise argparse.ArgumentTypeError(f"give at least 2 agents, got {len(agents)}")
    return agents


_plot_path = file_of(".png", "the plot must be a .png file")


def _sprt_bounds(text: str) -> tuple[float, float]:
    parts = text.split(",")
    try:
        elo0, elo1 = (float(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected two Elo differences ELO0,ELO1 such as 0,20, got {text!r}") from None
    if not (math.isfinite(elo0) and math.isfinite(elo1) and elo0 < elo1):
        raise argparse.ArgumentTypeError(f"expected finite ELO0 < ELO1, got {text!r}")
    return elo0, elo1


def _even_games(text: str) -> int:
    value = positive_int(text)
    if value < 2 or value % 2:
        raise argparse.ArgumentTypeError(
            f"must be an even number of at least 2 (each deal is played from both seats), got {value}"
        )
    return value


def _run_tournament(args: argparse.Namespace, console: Console) -> int:
    from ..batch.tournament import tournament
    from ..game.rules import Rules

    rules = Rules(variant=args.variant)
    labels = [a.label for a in args.agents]
    if len(set(labels)) != len(labels):
        raise UsageError("argument --agents: each agent may appear once")
    python = [a.label for a in args.agents if a.spec is None]
    if args.sprt is not None and (len(args.agents) != 2 or args.scheduler or args.workers):
        raise UsageError("argument --sprt: the test compares exactly two agents, on this machine (no cluster)")
    if python and (args.scheduler or args.workers):
        raise UsageError(
            f"argument --agents: {python[0]!r} is a Python agent; a tournament on a cluster plays built-in agents only (see 'qwirkle tournament --help')"
        )
    if python and rules.cubes:
        raise UsageError(
            f"argument --agents: {python[0]!r} is a Python agent; Qwirkle Cubes is played by the built-in agents only"
        )
    if rules.cubes:
        check_cubes_option("--agents", [a.spec for a in args.agents])
    if args.plot is not None:
        _plot_backend()
    dist = distributed_module() if args.scheduler or args.workers else None
    status = (
        cluster_status(args)
        if dist is not None
        else _kernel_status([a.label for a in args.agents], [a.spec for a in args.agents if a.spec], rules)
    )
    bar = ProgressBar(console, "games", not args.no_progress, status)
    try:
        if dist is not None:
            with cluster(args) as client:
                dist.warm_up(client, rules=rules, on_ready=bar.workers_ready)
                result = tournament(
                    args.agents,
                    games=args.games,
                    seed=args.seed,
                    threads=args.threads,
                    progress=bar,
                    client=client,
                    rules=rules,
                )
        else:
            result = tournament(
                args.agents,
                games=args.games,
                seed=args.seed,
                threads=args.threads,
                progress=bar,
                time_limit=args.time_limit,
                rules=rules,
                sprt=args.sprt,
            )
    finally:
        bar.close()
    _print_tournament(result, args.agents, console)
    if args.plot is not None and any(m.games for m in result.matches):
        _save_plot(result, args.plot, console)
    return EXIT_INTERRUPTED if result.interrupted else 0


def tournament_tables(result: TournamentResult, python_agents: Iterable[str] = ()) -> list[Any]:
    """A tournament's result as rich tables (what ``qwirkle tournament`` prints; as
    :func:`~qwirkle_core.cli.simulate.summary_table` for a batch): the pairings,
    the standings by rating with each agent's overall win rate, the time per move.
    ``python_agents``: labels of Python agents (their time per move is that of their
    turns in the games). Each fits 80 columns."""
    from rich.table import Table

    from ..batch.ratings import ANCHOR

    deals = (sum(m.games for m in result.matches) + len(result.failures)) // 2  # broken games were played too
    title = f"Round robin, {result.games:,} games per pairing, seed {result.seed}"
    if result.interrupted:
        title = f"Round robin, INTERRUPTED: {deals:,} finished deals ({2 * deals:,} games) of {result.games // 2 * len(result.matches):,}+, seed {result.seed}"
    # 80 columns with the built-in agents' labels: figures never wrap, labels fold
    pairs = Table(title=title, title_justify="left")
    for col in ("agent", "opponent", "games", "win rate [95% CI]", "mean margin", "ties"):
        label = col in ("agent", "opponent")
        pairs.add_column(col, justify="left" if label else "right", overflow="fold", no_wrap=not label)
    for m in result.matches:
        if not m.games:
            continue
        low, high = m.interval()
        se = m.margin.std(ddof=1) / len(m.margin) ** 0.5 if len(m.margin) > 1 else float("nan")
        pairs.add_row(
            m.first,
            m.second,
            f"{m.games:,}",
            f"{m.win_rate:.1%} [{100 * low:.1f}, {100 * high:.1f}]",
            f"{m.margin.mean():+.1f} ± {1.96 * se:.1f}",
            f"{m.ties:,}",
        )
    anchor = ANCHOR if ANCHOR in result.agents else result.agents[0]
    standings = Table(title=f"Standings: Bradley-Terry rating, {anchor} = 1500 (Elo scale)", title_justify="left")
    for col in ("agent", "rating [95% CI]", "games", "win rate", "mean score"):
        standings.add_column(col, justify="left" if col == "agent" else "right")
    for r in result.standings():
        scores = result.scores(r.agent)
        standings.add_row(
            r.agent,
            f"{r.rating:.0f} [{r.low:.0f}, {r.high:.0f}]" if r.games else "-",
            f"{r.games:,}",
            f"{r.win_rate:.1%}" if r.games else "-",
            f"{scores.mean():.1f}" if len(scores) else "-",
        )
    out: list[Any] = [pairs, standings]
    if result.seconds_per_move:
        python = set(python_agents)
        heading = "Time per move" if python else "Time per move (self-play, one thread)"
        timing = Table(title=heading, title_justify="left", min_width=len(heading))
        timing.add_column("agent")
        timing.add_column("ms per move", justify="right")
        if python:
            timing.add_column("measured in")
        for a, seconds in result.seconds_per_move.items():
            timing.add_row(
                a,
                f"{1000 * seconds:.3g}",
                *(["its turns above" if a in python else "self-play, one thread"] if python else []),
            )
        out.append(timing)
    return out


def _print_tournament(result: TournamentResult, agents: list[Any], console: Console) -> None:
    for table in tournament_tables(result, (p.label for p in agents if p.spec is None)):
        console.print(table)
    for agent in dict.fromkeys(f.agent for f in result.failures):
        failed = [f for f in result.failures if f.agent == agent]
        first = " (the first of them)" if len(failed) > 1 else ""
        console.print(
            f"{plural(len(failed), 'game')} not counted: {failed[0]}{first}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if result.interrupted:
        console.print("interrupted: only finished deals (both seats) are counted")
    if result.sprt is not None:
        console.print(str(result.sprt), markup=False, highlight=False)


def _plot_backend() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'qwirkle-core[plot]'") from None
    return plt


def _save_plot(result: TournamentResult, path: Path, console: Console) -> None:
    """Save a histogram of each agent's final scores to ``path`` (or, if that fails,
    to a fallback file in the working folder)."""
    import numpy as np

    plt = _plot_backend()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    everything = np.concatenate([result.scores(a) for a in result.agents])
    bins = np.arange(everything.min() - 5, everything.max() + 10, 5)
    for a in result.agents:
        scores = result.scores(a)
        if len(scores):
            ax.hist(scores, bins=bins, histtype="step", linewidth=1.5, label=f"{a} (mean {scores.mean():.1f})")
    ax.set_xlabel("final score")
    ax.set_ylabel("games")
    ax.set_title(f"Score distributions, round robin, seed {result.seed}")
    ax.legend()
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=120)
        console.print(f"wrote {path}")
    except OSError as e:
        other = fallback(path)
        fig.savefig(other, dpi=120)
        console.print(f"could not write {path} ({reason(e)}); saved the plot to {other} instead")
    plt.close(fig)


def _kernel_status(names: list[str], specs: list[Any], rules: Any) -> str | None:
    """What the progress display says until the first game: the compile notice of a
    first run (the kernels of every pairing), or None (the default words)."""
    from .._compiling import message
    from ..batch.tournament import compile_notice

    what, seconds = compile_notice(names, specs, rules)
    if not seconds:
        return None
    return f"{message(what, seconds)} ('qwirkle warmup' compiles them ahead of time)"
