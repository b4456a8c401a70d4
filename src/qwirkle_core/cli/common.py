"""What the ``qwirkle`` commands share: usage errors, argument types, the progress
display, the variant and cluster options.

A mistake in the arguments raises :class:`UsageError` (or ``argparse.ArgumentTypeError``
inside an argument type), which :func:`qwirkle_core.cli.main` prints as one line with
exit status 2.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the heavy imports happen inside main(), where Ctrl-C is handled
    from rich.console import Console

EXIT_USAGE = 2


EXIT_INTERRUPTED = 130


CONNECT_SECONDS = 10
"""How long ``--scheduler`` waits to reach the scheduler."""


def plural(n: int, word: str, words: str | None = None) -> str:
    """``"1 action"``, ``"2 actions"``, ``"1,000 games"``: ``n`` (with thousands
    separators) and ``word``, or its plural ``words`` (default ``word + "s"``)."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


class UsageError(Exception):
    """A mistake in the command line: printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def whole_number(text: str) -> int:
    """``text`` as an int: digits (``1000000``, ``1_000_000``) or a whole number in
    e-notation (``1e6``, ``2.5e3``); ArgumentTypeError otherwise."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text) if "e" in text.lower() else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value != int(value) or abs(value) >= 2**63:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    return int(value)


def positive_int(text: str) -> int:
    value = whole_number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
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


def check_cubes_option(option: str, specs: Sequence[Any]) -> None:
    """UsageError naming ``option`` when one of the built-in agents ``specs``
    (AgentSpecs) does not play Qwirkle Cubes (:func:`~qwirkle_core.game.agents.check_cubes_agents`)."""
    from ..errors import AgentError
    from ..game.agents import check_cubes_agents

    try:
        check_cubes_agents(s.row() for s in specs)
    except AgentError as e:
        raise UsageError(f"argument {option}: {e}") from None


def seats(agents: list[Any]) -> list[Any]:
    from ..game.rules import MAX_PLAYERS, MIN_PLAYERS

    if not MIN_PLAYERS <= len(agents) <= MAX_PLAYERS:
        raise argparse.ArgumentTypeError(f"give {MIN_PLAYERS} to {MAX_PLAYERS} agents, got {len(agents)}")
    return agents


def any_agent(text: str) -> Any:
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


def time_limit(text: str) -> float:
    """argparse type of a time limit: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def file_of(suffix: str, refusal: str) -> Callable[[str], Path]:
    """argparse type of a file to write with ``suffix`` (``refusal``: the message for
    another suffix), checked writable now."""

    def path_type(text: str) -> Path:
        path = Path(text)
        if path.suffix.lower() != suffix:
            raise argparse.ArgumentTypeError(f"{text!r}: {refusal}")
        try:
            probe(path)
        except OSError as e:
            raise argparse.ArgumentTypeError(f"cannot write {text!r}: {reason(e)}") from None
        return path

    return path_type


def probe(path: Path) -> None:
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


def reason(e: BaseException) -> str:
    return e.strerror if isinstance(e, OSError) and e.strerror and not e.args[1:2] == (None,) else str(e)


def fallback(path: Path) -> Path:
    """Where to save an output that could not be written to ``path``: the working folder."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path.cwd() / f"qwirkle-{path.stem}-{stamp}{path.suffix}"


PLAIN_SECONDS = 5.0
"""Seconds between two plain progress lines (stdout not a terminal)."""


class ProgressBar:
    """A rich progress display for a library call taking ``progress=f(done, total)``.

    Until the first call it shows that the kernels are being prepared (compiled on a
    first run, with the compile notice's estimate; loaded from the cache after), so the
    rate clock starts with the games. When the console is not a terminal (a pipe, a
    log file, CI) it prints plain lines instead: the ``status`` (the compile notice)
    once, then every :data:`PLAIN_SECONDS` a line of what is done, the rate and the
    time left, and one when all is done. While it shows a ``status``, the library's own
    compile notice (qwirkle_core._compiling) is silent, so the notice appears once.
    """

    def __init__(self, console: Console, what: str, enabled: bool, status: str | None = None) -> None:
        from .. import _compiling

        self.console, self.what, self.enabled = console, what, enabled
        self.progress: Any = None
        self.status: Any = None
        self.plain = enabled and not console.is_terminal
        self._quiet: Any = None
        self._clock = 0.0
        self._last = 0.0
        self._left: tuple[float, bool] | None = None
        if enabled and status:
            self._quiet = _compiling.quiet()
            self._quiet.__enter__()
        if self.plain:
            if status:
                console.print(status, highlight=False, soft_wrap=True)
        elif enabled:
            self.status = console.status(
                status or "preparing the kernels (compiled on the first run only; cached after)"
            )
            self.status.start()

    def workers_ready(self, ready: int, workers: int) -> None:
        """Show how many of a cluster's workers have their kernels loaded."""
        text = f"loading the kernels on the workers: {ready} of {workers} ready (compiled on a machine's first run, about a minute; cached after)"
        if self.plain:
            self.console.print(text, highlight=False, soft_wrap=True)
        elif self.status is not None and self.progress is None:
            self.status.update(text)

    def time_left(self, seconds: float, lower_bound: bool = False) -> None:
        """The library's own estimate of the time left (a tournament's, from the measured
        cost of each pairing's games): shown instead of the rate's from the next call on;
        ``lower_bound``: a part of the work is not measured yet (shown as "at least")."""
        self._left = (seconds, lower_bound)

    def _left_text(self) -> str:
        if self._left is None:
            return "-:--:--"
        seconds, lower = self._left
        s = max(0, round(seconds))
        return f"{'≥ ' if lower else ''}{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"

    def _plain(self, done: int, total: int) -> None:
        import time

        now = time.monotonic()
        if self._clock == 0.0:
            self._clock = self._last = now
            return
        if now - self._last < PLAIN_SECONDS and done < total:
            return
        self._last = now
        elapsed = now - self._clock
        rate = done / elapsed if elapsed > 0 else 0.0
        line = f"{self.what}: {done:,} of {total:,} ({100 * done / max(total, 1):.0f}%), {rate:,.0f} {self.what}/s"
        if done < total and self._left is not None:
            seconds, lower = self._left
            line += f", {'at least' if lower else 'about'} {_duration(seconds)} left"
        elif done < total and rate > 0:
            line += f", about {_duration((total - done) / rate)} left"
        else:
            line += f", {_duration(elapsed)} in all"
        self.console.print(line, highlight=False, soft_wrap=True)

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.plain:
            self._plain(done, total)
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
                # the library's estimate where it gives one (a tournament's pairings differ
                # in cost), else rich's from the recent rate
                TimeRemainingColumn() if self._left is None else TextColumn("{task.fields[left]}"),
                console=self.console,
            )
            self.task = self.progress.add_task(self.what, total=total, left=self._left_text())
            self.progress.start()
        self.progress.update(self.task, completed=done, left=self._left_text())

    def close(self) -> None:
        if self.status is not None:
            self.status.stop()
        if self.progress is not None:
            self.progress.stop()
        if self._quiet is not None:
            self._quiet.__exit__(None, None, None)
            self._quiet = None


def _duration(seconds: float) -> str:
    """``seconds`` as "42 s", "3 min 5 s" or "2 h 7 min"."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def add_variant(p: Any) -> None:
    from ..game.rules import VARIANTS

    p.add_argument(
        "--variant",
        choices=sorted(VARIANTS),
        default="classic",
        help="the game: classic (the tile game, default) or cubes (Qwirkle Cubes: rolled cubes, open hands, re-rolls; docs/rules.md)",
    )


def add_cluster_options(p: Any) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run on the Dask cluster whose scheduler is at ADDRESS, e.g. tcp://host:8786 (needs pip install 'qwirkle-core[dask]'; docs/distributed.md)",
    )
    group.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        metavar="K",
        help="run on a local Dask cluster of K worker processes, one thread each",
    )


def distributed_module() -> Any:
    """The distributed module, or a usage error saying what to install."""
    try:
        from ..batch import distributed
    except ImportError as e:
        raise UsageError(
            f"--scheduler and --workers need Dask ({e.name or e}): pip install 'qwirkle-core[dask]'"
        ) from None
    return distributed


def cluster_status(args: argparse.Namespace) -> str:
    return (
        f"starting {args.workers} local workers" if args.workers else f"connecting to the scheduler at {args.scheduler}"
    )


def _probe(address: str) -> None:
    """Open and close a plain TCP connection to a ``tcp://`` or ``tls://`` scheduler
    address (OSError when nothing listens there, ValueError when it has no port).

    Dask's client, failing to connect, can itself fail while closing under load (a bare
    AssertionError); the probe gives the common mistake, a wrong host or port, its own
    error before the client starts."""
    import socket

    from distributed.comm.addressing import get_address_host_port, parse_address

    if parse_address(address)[0] not in ("tcp", "tls"):
        return
    with socket.create_connection(get_address_host_port(address), timeout=CONNECT_SECONDS):
        pass


@contextmanager
def cluster(args: argparse.Namespace) -> Iterator[Any]:
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
        _probe(args.scheduler)
        client = Client(args.scheduler, timeout=CONNECT_SECONDS)
    except (OSError, ValueError) as e:
        raise UsageError(f"argument --scheduler: cannot reach {args.scheduler!r}: {e}") from None
    with client:
        yield client
