"""The ``qwirkle`` command line: ``simulate``, ``tournament``, ``play``, ``analyse``.

All argument parsing, tables, progress displays and interruption handling live here;
the library underneath takes plain values and a progress callable. A mistake in the
arguments is one line on stderr and exit status 2; Ctrl-C stops within about a second,
keeps what finished and exits with status 130.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the heavy imports happen inside main(), where Ctrl-C is handled
    from rich.console import Console

    from ..batch.simulate import SimulationResult
    from ..batch.tournament import TournamentResult
    from ..evaluation.analysis import Analysis
    from ..game.records import GameRecord

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
CONNECT_SECONDS = 10
"""How long ``--scheduler`` waits to reach the scheduler."""


class UsageError(Exception):
    """A mistake in the command line: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise UsageError(f"{message} (see '{self.prog} --help')")


# -- argument types --------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _nonnegative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 <= value < 2**62:
        raise argparse.ArgumentTypeError(f"must be 0 to 2**62-1, got {value}")
    return value


def seed_type(text: str) -> int:
    """argparse type of a seed: an int 0 .. 2**64-1 (decimal, or 0x.. hex)."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer seed, got {text!r}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"the seed must be 0 .. 2**64-1, got {value}")
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
    return _seats(list(specs))


def _check_cubes_agents(option: str, specs: Sequence[Any]) -> None:
    """UsageError naming ``option`` when one of the built-in agents ``specs``
    (AgentSpecs) does not play Qwirkle Cubes (:func:`~qwirkle_core.game.agents.check_cubes_agents`)."""
    from ..errors import AgentError
    from ..game.agents import check_cubes_agents

    try:
        check_cubes_agents(s.row() for s in specs)
    except AgentError as e:
        raise UsageError(f"argument {option}: {e}") from None


def _seats(agents: list[Any]) -> list[Any]:
    from ..game.rules import MAX_PLAYERS, MIN_PLAYERS

    if not MIN_PLAYERS <= len(agents) <= MAX_PLAYERS:
        raise argparse.ArgumentTypeError(f"give {MIN_PLAYERS} to {MAX_PLAYERS} agents, got {len(agents)}")
    return agents


def _any_agent(text: str) -> Any:
    """argparse type of one agent, built-in or a Python agent ``package.module:Name``
    (imported now, with the working folder importable, so a mistake is one line):
    a :class:`qwirkle_core.batch.players.Player`."""
    from ..batch.players import Player

    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return Player.of(text.strip())
    except (TypeError, ValueError) as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _any_agent_list(text: str) -> list[Any]:
    """argparse type of ``tournament --agents``: built-in or Python agents (Players)."""
    return _seats([_any_agent(a) for a in text.split(",") if a.strip()])


def _agent(text: str) -> Any:
    from ..game.agents import parse_agent

    try:
        return parse_agent(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _time_limit(text: str) -> float:
    """argparse type of a time limit: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def _output_path(text: str) -> Path:
    from ..batch.rows import check_output_path

    try:
        return check_output_path(text)
    except (OSError, ValueError) as e:
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: {_reason(e)}") from None


def _file_of(suffix: str, refusal: str) -> Callable[[str], Path]:
    """argparse type of a file to write with ``suffix`` (``refusal``: the message for
    another suffix), checked writable now."""

    def path_type(text: str) -> Path:
        path = Path(text)
        if path.suffix.lower() != suffix:
            raise argparse.ArgumentTypeError(f"{text!r}: {refusal}")
        try:
            _probe(path)
        except OSError as e:
            raise argparse.ArgumentTypeError(f"cannot write {text!r}: {_reason(e)}") from None
        return path

    return path_type


_plot_path = _file_of(".png", "the plot must be a .png file")
_json_path = _file_of(".json", "the analysis is written to a .json file")


def _probe(path: Path) -> None:
    """Create and remove a file beside ``path`` (OSError if that folder is not writable)."""
    import tempfile

    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder")
    folder = path.resolve().parent
    if not folder.is_dir():
        raise FileNotFoundError(f"folder {folder} does not exist")
    fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".probe")
    os.close(fd)
    os.unlink(probe)


def _reason(e: BaseException) -> str:
    return e.strerror if isinstance(e, OSError) and e.strerror and not e.args[1:2] == (None,) else str(e)


def _fallback(path: Path) -> Path:
    """Where to save an output that could not be written to ``path``: the working folder."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path.cwd() / f"qwirkle-{path.stem}-{stamp}{path.suffix}"


# -- progress ---------------------------------------------------------------------------


class _ProgressBar:
    """A rich progress display for a library call taking ``progress=f(done, total)``.

    Until the first call it shows that the kernels are being prepared (compiled on a
    first run, loaded from the cache after), so the rate clock starts with the games.
    """

    def __init__(self, console: Console, what: str, enabled: bool, status: str | None = None) -> None:
        self.console, self.what, self.enabled = console, what, enabled
        self.progress: Any = None
        self.status: Any = None
        if enabled:
            self.status = console.status(
                status or "preparing the kernels (compiled on the first run only; cached after)"
            )
            self.status.start()

    def workers_ready(self, ready: int, workers: int) -> None:
        """Show how many of a cluster's workers have their kernels loaded."""
        if self.status is not None and self.progress is None:
            self.status.update(
                f"loading the kernels on the workers: {ready} of {workers} ready (compiled on a machine's first run, about a minute; cached after)"
            )

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.progress is None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.status.stop()
            self.progress = Progress(
                TextColumn(self.what),
                BarColumn(),
                MofNCompleteColumn(),
                TaskProgressColumn(),
                TimeElapsedColumn(),
                TextColumn("left"),
                TimeRemainingColumn(),
                console=self.console,
            )
            self.task = self.progress.add_task(self.what, total=total)
            self.progress.start()
        self.progress.update(self.task, completed=done)

    def close(self) -> None:
        if self.status is not None:
            self.status.stop()
        if self.progress is not None:
            self.progress.stop()


# -- simulate ---------------------------------------------------------------------------


def _add_simulate(sub: Any) -> None:
    from ..game.rules import OPENING_RULES

    p = sub.add_parser(
        "simulate",
        help="play a batch of games between agents and summarise them",
        description="Play GAMES complete games between AGENTS (one per seat) in parallel, print a summary "
        "(win rates with 95% confidence intervals, mean scores, first-player advantage, turns) and "
        "optionally write one row per game to a Parquet or CSV file as the games finish. Ctrl-C stops "
        "early and keeps the finished games.",
    )
    p.add_argument("--games", type=_positive_int, default=10_000, help="number of games (default: 10000)")
    p.add_argument(
        "--agents",
        type=_agent_list,
        default="greedy,greedy",
        help="comma-separated agents, one per seat, 2 to 6 (default: greedy,greedy); available: random, greedy, "
        "heuristic, mc, search; parameters as name:key=value, e.g. mc:playouts=32:depth=0 (docs/agents.md)",
    )
    p.add_argument(
        "--seed", type=seed_type, default=0, help="batch seed; game i plays from a hash of (seed, i) (default: 0)"
    )
    p.add_argument(
        "--start", type=_nonnegative_int, default=0, help="index of the first game of the batch (default: 0)"
    )
    p.add_argument(
        "--threads",
        type=_positive_int,
        default=None,
        help="worker threads (default: all cores; on a cluster, numba threads per task, default 1); results do not depend on it",
    )
    p.add_argument(
        "--opening",
        choices=sorted(OPENING_RULES),
        default="largest_group",
        help="opening rule (default: largest_group, the official one)",
    )
    _add_variant(p)
    p.add_argument(
        "--out",
        default=None,
        metavar="PATH",
        help="write the per-game rows to this .parquet or .csv file (docs/results.md); with --scheduler or --workers, "
        "to this folder, one part-<first>-<end>.parquet file per range of games (docs/distributed.md)",
    )
    _add_cluster_options(p)
    p.add_argument(
        "--resume",
        action="store_true",
        help="with --scheduler/--workers: continue the batch in --out, playing only the ranges without a complete file",
    )
    p.add_argument(
        "--range-size",
        type=_positive_int,
        default=None,
        metavar="N",
        help="with --scheduler/--workers: games per task (default: about 5 seconds of work)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress display")
    p.set_defaults(run=_run_simulate)


def _add_variant(p: Any) -> None:
    from ..game.rules import VARIANTS

    p.add_argument(
        "--variant",
        choices=sorted(VARIANTS),
        default="classic",
        help="the game: classic (the tile game, default) or cubes (Qwirkle Cubes: rolled cubes, open hands, re-rolls; docs/rules.md)",
    )


def _add_cluster_options(p: Any) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run on the Dask cluster whose scheduler is at ADDRESS, e.g. tcp://host:8786 (needs pip install 'qwirkle-core[dask]'; docs/distributed.md)",
    )
    group.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        metavar="K",
        help="run on a local Dask cluster of K worker processes, one thread each",
    )


def summary_table(result: SimulationResult) -> Any:
    """A rich Table of the headline figures of a :class:`SimulationResult`."""
    from rich.table import Table

    game = ", Qwirkle Cubes" if result.rules.cubes else ""
    table = Table(title=f"{result.games:,} games{game}, seed {result.seed}", title_justify="left")
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
        f"first player: wins {fp['win_rate']:.1%} [{fp['low']:.1%}, {fp['high']:.1%}] (fair share {fp['fair']:.1%}), "
        f"score margin {fp['score_margin']:+.2f} points"
    )
    if result.stats.truncated:
        console.print(f"{result.stats.truncated} games stopped at the turn limit (counted as no winner)")
    if result.workers:
        if result.resumed:
            console.print(f"{result.resumed:,} games were already in the part files (resumed)")
        console.print(
            f"{result.games - result.resumed:,} games in {result.elapsed:.1f} s ({result.games_per_second:,.0f} games/s) on {result.workers} workers "
            f"({result.threads} worker threads; kernels ready in {result.compile_seconds:.1f} s)"
        )
    else:
        console.print(
            f"{result.games:,} games in {result.elapsed:.1f} s ({result.games_per_second:,.0f} games/s, {result.threads} threads)"
        )


def _run_simulate(args: argparse.Namespace, console: Console) -> int:
    from ..batch.simulate import simulate
    from ..game.rules import Rules

    rules = Rules(players=len(args.agents), opening=args.opening, variant=args.variant)
    if rules.cubes:
        _check_cubes_agents("--agents", args.agents)
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
    bar = _ProgressBar(console, "games", not args.no_progress, _kernel_status(args.agents, rules))
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
        console.print(f"interrupted: kept the {result.games:,} of {args.games:,} games finished before Ctrl-C")
        return EXIT_INTERRUPTED
    return 0


def _run_simulate_on_cluster(args: argparse.Namespace, console: Console, rules: Any) -> int:
    from ..batch.simulate import simulate

    dist = _distributed()
    if args.out is None:
        raise UsageError(
            "argument --out: a run on a cluster needs --out DIR, the folder for its part files (see 'qwirkle simulate --help')"
        )
    try:
        folder = dist.check_batch_folder(args.out, args.agents, rules, args.seed, args.start, args.games, args.resume)
    except (OSError, ValueError) as e:
        raise UsageError(f"argument --out: {_reason(e)}") from None
    bar = _ProgressBar(console, "games", not args.no_progress, _cluster_status(args))
    try:
        with _cluster(args) as client:
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


def _distributed() -> Any:
    """The distributed module, or a usage error saying what to install."""
    try:
        from ..batch import distributed
    except ImportError as e:
        raise UsageError(
            f"--scheduler and --workers need Dask ({e.name or e}): pip install 'qwirkle-core[dask]'"
        ) from None
    return distributed


def _kernel_status(agents: Sequence[Any], rules: Any) -> str:
    """What the progress display says until the first game: whether this batch's kernel
    (for ``agents`` under ``rules``) is being compiled (a first run, with a rough
    duration) or loaded from the cache."""
    from ..batch.local import compile_seconds

    seconds = compile_seconds(agents, rules)
    if seconds:
        return f"preparing the kernels: compiling (first run only, about {seconds:.0f} s)"
    return "preparing the kernels: loading them from the cache"


def _cluster_status(args: argparse.Namespace) -> str:
    return (
        f"starting {args.workers} local workers" if args.workers else f"connecting to the scheduler at {args.scheduler}"
    )


@contextmanager
def _cluster(args: argparse.Namespace) -> Iterator[Any]:
    """A Dask client: of a LocalCluster of ``--workers`` processes (closed after), or
    connected to ``--scheduler``."""
    import logging
    import signal

    from distributed import Client, LocalCluster

    if args.workers:
        # The worker processes inherit an ignored SIGINT, so Ctrl-C reaches this process
        # only: it stops the run and closes the cluster (no traceback from each worker).
        # The cluster's own log lines are silenced (a worker's heartbeat can race the
        # scheduler's close and log a traceback); a task's error reaches this process.
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            cluster = LocalCluster(
                n_workers=args.workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=":0",
                silence_logs=logging.CRITICAL,
            )
        finally:
            signal.signal(signal.SIGINT, handler)
        with cluster, Client(cluster) as client:
            yield client
        return
    try:
        client = Client(args.scheduler, timeout=CONNECT_SECONDS)
    except (OSError, ValueError) as e:
        raise UsageError(f"argument --scheduler: cannot reach {args.scheduler!r}: {e}") from None
    with client:
        yield client


def _save_elsewhere(result: SimulationResult, path: Path, console: Console) -> int:
    """After a failure to write ``path``, save the kept rows in the working folder."""
    from ..batch.rows import write_rows
    from ..batch.simulate import batch_metadata

    if result.games == 0 or result.path is not None:
        console.print(f"could not finish writing {result.write_error}")
        return 1
    other = _fallback(path)
    metadata = batch_metadata(result.agents, result.rules, result.seed, result.start, result.games)
    write_rows(other, result.rows, metadata)
    console.print(f"could not write {result.write_error}; saved the {result.games:,} rows to {other} instead")
    return 1


# -- tournament -------------------------------------------------------------------------


def _add_tournament(sub: Any) -> None:
    p = sub.add_parser(
        "tournament",
        help="round robin between agents",
        description="Every pair of AGENTS plays GAMES two-player games, half from each seat on the same "
        "deals. Prints each pairing's win rate with a 95% confidence interval and mean score margin, "
        "the standings, and each agent's time per move (from a short self-play run; for a Python agent, "
        "its turns in the tournament). Games a Python agent breaks are not counted and are reported. "
        "Ctrl-C stops within about a second and reports the finished deals.",
    )
    p.add_argument(
        "--agents",
        type=_any_agent_list,
        default="greedy,heuristic,mc",
        help="comma-separated agents, at least 2 (default: greedy,heuristic,mc); parameters as name:key=value, e.g. mc:playouts=32; "
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
        type=_positive_int,
        default=None,
        help="worker threads, or worker processes for pairings with a Python agent (default: all cores; on a cluster, numba threads per task, default 1)",
    )
    p.add_argument(
        "--time-limit",
        type=_time_limit,
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
    _add_variant(p)
    _add_cluster_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress display")
    p.set_defaults(run=_run_tournament)


def _even_games(text: str) -> int:
    value = _positive_int(text)
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
    if python and (args.scheduler or args.workers):
        raise UsageError(
            f"argument --agents: {python[0]!r} is a Python agent; a tournament on a cluster plays built-in agents only (see 'qwirkle tournament --help')"
        )
    if python and rules.cubes:
        raise UsageError(
            f"argument --agents: {python[0]!r} is a Python agent; Qwirkle Cubes is played by the built-in agents only"
        )
    if rules.cubes:
        _check_cubes_agents("--agents", [a.spec for a in args.agents])
    if args.plot is not None:
        _plot_backend()
    dist = _distributed() if args.scheduler or args.workers else None
    bar = _ProgressBar(console, "games", not args.no_progress, _cluster_status(args) if dist is not None else None)
    try:
        if dist is not None:
            with _cluster(args) as client:
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
            )
    finally:
        bar.close()
    _print_tournament(result, args.agents, console)
    if args.plot is not None and any(m.games for m in result.matches):
        _save_plot(result, args.plot, console)
    return EXIT_INTERRUPTED if result.interrupted else 0


def _print_tournament(result: TournamentResult, agents: list[Any], console: Console) -> None:
    from rich.table import Table

    deals = (sum(m.games for m in result.matches) + len(result.failures)) // 2  # broken games were played too
    title = f"Round robin, {result.games:,} games per pairing, seed {result.seed}"
    if result.interrupted:
        title = f"Round robin, INTERRUPTED: {deals:,} finished deals ({2 * deals:,} games) of {result.games // 2 * len(result.matches):,}+, seed {result.seed}"
    table = Table(title=title, title_justify="left")
    for col in ("agent", "opponent", "games", "win rate [95% CI]", "mean margin", "W-L-T"):
        table.add_column(col, justify="left" if col in ("agent", "opponent") else "right")
    for m in result.matches:
        if not m.games:
            continue
        low, high = m.interval()
        se = m.margin.std(ddof=1) / len(m.margin) ** 0.5 if len(m.margin) > 1 else float("nan")
        table.add_row(
            m.first,
            m.second,
            f"{m.games:,}",
            f"{m.win_rate:.1%} [{low:.1%}, {high:.1%}]",
            f"{m.margin.mean():+.1f} ± {1.96 * se:.1f}",
            f"{m.wins}-{m.losses}-{m.ties}",
        )
    console.print(table)
    standings = Table(title="Standings (all pairings)", title_justify="left")
    for col in ("agent", "games", "mean score"):
        standings.add_column(col, justify="left" if col == "agent" else "right")
    for a in result.agents:
        scores = result.scores(a)
        standings.add_row(a, f"{len(scores):,}", f"{scores.mean():.1f}" if len(scores) else "-")
    console.print(standings)
    if result.seconds_per_move:
        python = {p.label for p in agents if p.spec is None}
        timing = Table(
            title="Time per move" if python else "Time per move (self-play, one thread)", title_justify="left"
        )
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
        console.print(timing)
    for agent in dict.fromkeys(f.agent for f in result.failures):
        failed = [f for f in result.failures if f.agent == agent]
        first = " (the first of them)" if len(failed) > 1 else ""
        console.print(
            f"{len(failed)} games not counted: {failed[0]}{first}", markup=False, highlight=False, soft_wrap=True
        )
    if result.interrupted:
        console.print("interrupted: only finished deals (both seats) are counted")


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
        other = _fallback(path)
        fig.savefig(other, dpi=120)
        console.print(f"could not write {path} ({_reason(e)}); saved the plot to {other} instead")
    plt.close(fig)


# -- play -------------------------------------------------------------------------------


def _add_play(sub: Any) -> None:
    from ..game.rules import OPENING_RULES

    p = sub.add_parser(
        "play",
        help="play a game against an agent in the terminal",
        description="Play Qwirkle against the built-in agents or a Python agent: the board in colour (plain "
        "text when piped), your hand, legal moves, hints, undo, and saving the game record. Reads commands "
        "from standard input, so it can be scripted. An opponent that fails ends the game with a one-line error.",
    )
    p.add_argument(
        "--players", type=int, choices=range(2, 7), default=2, metavar="N", help="number of seats, 2 to 6 (default: 2)"
    )
    p.add_argument(
        "--opponent",
        type=_any_agent,
        default="greedy",
        help="the agent in the other seats: random, greedy, heuristic, mc, search, with parameters, or a Python agent as package.module:Name (default: greedy)",
    )
    p.add_argument(
        "--time-limit",
        type=_time_limit,
        default=None,
        metavar="SECONDS",
        help="a Python opponent's seconds per move (default: no limit)",
    )
    p.add_argument("--seat", type=int, default=0, help="your seat, from 0 (default: 0); the rules decide who opens")
    p.add_argument(
        "--seed", type=seed_type, default=None, help="the game's seed (default: random; printed at the start)"
    )
    p.add_argument(
        "--opening",
        choices=sorted(OPENING_RULES),
        default="largest_group",
        help="opening rule (default: largest_group, the official one)",
    )
    _add_variant(p)
    p.add_argument("--no-color", action="store_true", help="no colours even on a terminal")
    p.set_defaults(run=_run_play)


def _run_play(args: argparse.Namespace, console: Console) -> int:
    from .play import run_play

    if not 0 <= args.seat < args.players:
        raise UsageError(
            f"argument --seat: must be 0 to {args.players - 1} with {args.players} players, got {args.seat}"
        )
    if args.variant == "cubes" and args.opponent.spec is None:
        raise UsageError(
            f"argument --opponent: {args.opponent.label!r} is a Python agent; Qwirkle Cubes is played by the built-in agents only"
        )
    if args.variant == "cubes":
        _check_cubes_agents("--opponent", [args.opponent.spec])
    run_play(
        players=args.players,
        opponent=args.opponent,
        seed=args.seed,
        human_seat=args.seat,
        color=False if args.no_color else None,
        opening=args.opening,
        time_limit=args.time_limit,
        variant=args.variant,
    )
    return 0


# -- serve and bot ----------------------------------------------------------------------


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 1 .. 65535, not {value}")
    return value


def _db_path(text: str) -> str:
    try:
        _probe(Path(text))
    except OSError as e:
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: {_reason(e)}") from None
    return text


def _check_server_extra() -> None:
    from importlib.util import find_spec

    missing = [name for name in ("fastapi", "uvicorn", "websockets", "httpx") if find_spec(name) is None]
    if missing:
        raise UsageError(
            f"this needs the [server] extra ({', '.join(missing)} missing): pip install 'qwirkle-core[server]'"
        )


def _add_serve(sub: Any) -> None:
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
    p.add_argument(
        "--db", type=_db_path, default="qwirkle.sqlite", help="SQLite file of the games (default: qwirkle.sqlite)"
    )
    p.set_defaults(run=_run_serve)


def _run_serve(args: argparse.Namespace, console: Console) -> int:
    _check_server_extra()
    from ..server import serve

    console.print(f"qwirkle server on http://{args.host}:{args.port}/ (games in {args.db}); Ctrl-C stops it")
    serve(host=args.host, port=args.port, db_path=args.db)
    return 0


def _add_bot(sub: Any) -> None:
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
        help="the agent, e.g. greedy, heuristic, mc:playouts=32 (default: heuristic)",
    )
    p.add_argument(
        "--seed", type=seed_type, default=None, help="seed of the bot's guesses at the unseen tiles (default: random)"
    )
    p.set_defaults(run=_run_bot)


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


# -- analyse ----------------------------------------------------------------------------


def _add_analyse(sub: Any) -> None:
    p = sub.add_parser(
        "analyse",
        help="the engine's verdict on every action of a game record",
        description="Replay RECORD (a qwirkle-core game record, JSON) and judge every action: the engine's "
        "best action in that position, its value (the mover's expected final margin and chance to win, "
        "with standard errors, or exact once the bag is empty in a two-player game) and the loss of the "
        "action played, in points of final margin. Prints a table and the mean loss per seat; --json "
        "writes the analysis for a front end (docs/agents.md).",
    )
    p.add_argument("record", type=_record_file, metavar="RECORD", help="the game record, a JSON file (docs/records.md)")
    p.add_argument("--seat", type=int, default=None, help="analyse only this seat's actions (from 0)")
    p.add_argument(
        "--json", type=_json_path, default=None, metavar="PATH", help="write the analysis to this .json file"
    )
    p.add_argument(
        "--playouts",
        type=_positive_int,
        default=100,
        help="playouts per candidate action before the endgame (default: 100)",
    )
    p.add_argument(
        "--candidates",
        type=_positive_int,
        default=12,
        help="the engine's candidate placements per position, 1 to 64 (default: 12)",
    )
    p.add_argument(
        "--max-nodes", type=_positive_int, default=1_000_000, help="positions per endgame solve (default: 1000000)"
    )
    p.add_argument("--seed", type=seed_type, default=0, help="seed of the playouts (default: 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress display")
    p.set_defaults(run=_run_analyse)


def _record_file(text: str) -> GameRecord:
    from ..game.records import GameRecord, replay

    try:
        data = Path(text).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise argparse.ArgumentTypeError(f"cannot read {text!r}: {_reason(e)}") from None
    try:
        record = GameRecord.from_json(data)
        replay(record)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{text!r} is not a valid game record: {e}") from None
    return record


def _run_analyse(args: argparse.Namespace, console: Console) -> int:
    from ..evaluation.analysis import analyse

    players = args.record.players
    if args.record.rules.cubes:
        raise UsageError(
            "argument RECORD: a Qwirkle Cubes game; analyse judges tile games only (its playouts and endgame solver know no re-rolls)"
        )
    if args.seat is not None and not 0 <= args.seat < players:
        raise UsageError(
            f"argument --seat: must be 0 to {players - 1} for a game of {players} players, got {args.seat}"
        )
    if args.playouts < 2:
        raise UsageError(f"argument --playouts: must be at least 2, got {args.playouts}")
    if args.candidates > 64:
        raise UsageError(f"argument --candidates: must be 1 to 64, got {args.candidates}")
    bar = _ProgressBar(console, "actions", not args.no_progress)
    try:
        result = analyse(
            args.record,
            seat=args.seat,
            playouts=args.playouts,
            candidates=args.candidates,
            max_nodes=args.max_nodes,
            seed=args.seed,
            progress=bar,
        )
    finally:
        bar.close()
    _print_analysis(result, console)
    if args.json is not None:
        try:
            args.json.write_text(result.to_json(indent=1) + "\n", encoding="utf-8")
        except OSError as e:
            other = _fallback(args.json)
            other.write_text(result.to_json(indent=1) + "\n", encoding="utf-8")
            console.print(f"could not write {args.json} ({_reason(e)}); saved the analysis to {other} instead")
            return 1
        console.print(f"wrote {args.json}")
    return 0


def _print_analysis(result: Analysis, console: Console) -> None:
    from rich.table import Table

    from ..game.move import format_move

    who = "all seats" if result.seat is None else f"seat {result.seat}"
    table = Table(
        title=f"Analysis ({who}; {result.playouts} playouts x {result.candidates} candidates, seed {result.seed})",
        title_justify="left",
    )
    for col in ("#", "seat", "bag", "played", "best", "margin of best", "win of best", "loss", "how"):
        table.add_column(col, justify="left" if col in ("played", "best", "how") else "right")
    for a in result.actions:
        b = a.best
        same = b.move == a.played.move
        table.add_row(
            str(a.index),
            str(a.player),
            str(a.bag),
            format_move(a.played.move),
            "=" if same else format_move(b.move),
            f"{b.margin:+.1f}" + (f" ± {b.margin_se:.1f}" if b.margin_se else ""),
            f"{b.win_rate:.0%}" + (f" ± {b.win_se:.0%}" if b.win_se else ""),
            f"{a.loss:.1f}" + (f" ± {a.loss_se:.1f}" if a.loss_se else ""),
            a.method.replace("_", " "),
        )
    console.print(table)
    for p in range(result.players):
        judged = [a for a in result.actions if a.player == p and a.method != "forced"]
        if judged:
            name = f" ({result.agents[p]})" if result.agents else ""
            console.print(
                f"seat {p}{name}: mean loss {result.mean_loss(p):.2f} points over {len(judged)} actions, best action played {sum(a.loss == 0 for a in judged)} times"
            )


# -- main -------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``qwirkle`` argument parser."""
    from .._version import __version__

    parser = _Parser(prog="qwirkle", description="qwirkle-core: a fast, exact Qwirkle engine and simulator.")
    parser.add_argument("--version", action="version", version=f"qwirkle-core {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for add in _COMMANDS:
        add(sub)
    return parser


_COMMANDS: list[Callable[[Any], None]] = [_add_simulate, _add_play, _add_tournament, _add_analyse, _add_serve, _add_bot]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 an error, 2 a usage
    mistake, 130 interrupted)."""
    try:
        from rich.console import Console

        console = Console()
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "run", None):
            parser.print_help()
            return EXIT_USAGE
        return int(args.run(args, console))
    except UsageError as e:
        print(f"qwirkle: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("qwirkle: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (OSError, ValueError) as e:
        print(f"qwirkle: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
