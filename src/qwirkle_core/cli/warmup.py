"""``qwirkle warmup``: compile the kernels into numba's disk cache ahead of time (for a
container image or a cluster worker), with a progress bar naming each kernel."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any

from .common import add_variant, check_cubes_option, positive_int

if TYPE_CHECKING:
    from rich.console import Console


def register(sub: Any) -> None:
    p = sub.add_parser(
        "warmup",
        help="compile the kernels into the disk cache ahead of time",
        description="Compile the kernels that batches of AGENTS play into numba's on-disk cache "
        "(NUMBA_CACHE_DIR, else the package's __pycache__), so that a later process loads them in well "
        "under a second instead of compiling them: run it when building a container image or on a cluster "
        "worker's first start (docs/cold-start.md). Kernels already in the cache are skipped.",
    )
    p.add_argument(
        "--agents",
        type=_agent_set,
        action="append",
        default=None,
        metavar="AGENTS",
        help="comma-separated agents of a batch, e.g. search,greedy (as for 'qwirkle simulate'); repeat the option "
        "for several batches (default: the kernels of every agent)",
    )
    add_variant(p)
    p.add_argument(
        "--processes",
        type=positive_int,
        default=None,
        help="worker processes that compile independent kernels side by side (default: the cores, at most 4)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress display")
    p.set_defaults(run=_run_warmup)


def _agent_set(text: str) -> list[Any]:
    """argparse type of ``warmup --agents``: built-in agents (AgentSpecs)."""
    from ..game.agents import parse_agents

    names = [a.strip() for a in text.split(",") if a.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected agents, e.g. search,greedy")
    try:
        return list(parse_agents(names))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _run_warmup(args: argparse.Namespace, console: Console) -> int:
    from rich.table import Table

    from .._compiling import quiet
    from .._kernels._jit import cache_folder
    from ..batch.warmup import compile_kernels, kernels_for
    from ..game.rules import Rules

    rules = Rules(variant=args.variant)
    sets: list[Any] = args.agents if args.agents else [None]
    if rules.cubes:
        for agents in args.agents or []:
            check_cubes_option("--agents", agents)
    names: list[str] = []
    for agents in sets:
        names += [
            n for n in kernels_for(agents, rules if agents is not None or rules.cubes else None) if n not in names
        ]
    progress = _Bar(console, len(names), enabled=not args.no_progress)
    t0 = time.perf_counter()
    try:
        with quiet():  # the progress display names the kernels
            results = compile_kernels(names, args.processes, progress.update)
    finally:
        progress.stop()
    table = Table(title="kernels", title_justify="left")
    for col in ("kernel", "compiled", "ready after, s"):
        table.add_column(col, justify="left" if col == "kernel" else "right")
    for k in results:
        table.add_row(k.name, "yes" if k.compiled else "cached", f"{k.seconds:.1f}")
    console.print(table)
    compiled = sum(k.compiled for k in results)
    console.print(
        f"{compiled} of {len(results)} kernels compiled and {len(results) - compiled} found in the cache, "
        f"in {time.perf_counter() - t0:.1f} s; cache: {cache_folder()}"
    )
    return 0


class _Bar:
    """A rich progress bar over the kernels, naming the ones compiling."""

    def __init__(self, console: Console, total: int, enabled: bool) -> None:
        self.bar: Any = None
        self.running: list[str] = []
        if enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
            )
            self.task = self.bar.add_task("compiling the kernels", total=total)
            self.bar.start()

    def update(self, kernel: str, ready: bool, done: int, total: int) -> None:
        if ready:
            if kernel in self.running:
                self.running.remove(kernel)
        elif kernel not in self.running:
            self.running.append(kernel)
        if self.bar is not None:
            what = f"compiling {', '.join(self.running)}" if self.running else f"ready: {kernel}"
            self.bar.update(self.task, completed=done, total=total, description=what)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
