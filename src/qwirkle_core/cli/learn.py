"""``qwirkle learn``: learn the static agent's leave values by self-play and write the
table with its provenance (docs/agents.md, "static")."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import (
    EXIT_INTERRUPTED,
    UsageError,
    add_cluster_options,
    cluster,
    distributed_module,
    positive_int,
    seed_type,
)

if TYPE_CHECKING:
    from rich.console import Console


def register(sub: Any) -> None:
    p = sub.add_parser(
        "learn",
        help="learn the static agent's leave values by self-play",
        description="Play self-play games of the static agent, estimate the value of every leave (the tiles a "
        "player keeps, up to the rules' symmetries) from what followed it, and play again with the new values, "
        "ITERATIONS times; write the table and its provenance (the command, seed, games, version, date) to OUT. "
        "The table depends only on --seed, --games and --iterations, not on --threads nor on a cluster "
        "(--scheduler, --workers). Ctrl-C (or SIGTERM, SIGHUP) keeps the last finished iteration.",
    )
    p.add_argument("--seed", type=seed_type, default=0, help="the seed of the games (default 0)")
    p.add_argument("--games", type=positive_int, default=20_000, help="self-play games per iteration (default 20000)")
    p.add_argument("--iterations", type=positive_int, default=6, help="iterations (default 6)")
    p.add_argument("--threads", type=positive_int, default=None, help="threads that play (default: every core)")
    p.add_argument(
        "--out", type=Path, default=Path("leaves.json"), help="the table file to write (default leaves.json)"
    )
    add_cluster_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress display")
    p.set_defaults(run=_run_learn)


def _run_learn(args: argparse.Namespace, console: Console) -> int:
    from ..batch.learn import LearnProgress, learn

    out: Path = args.out
    if out.is_dir() or not out.parent.is_dir():
        raise UsageError(f"--out: cannot write a file at {out}")
    live = console.is_terminal and not args.no_progress
    state: dict[str, Any] = {"status": None, "t0": time.perf_counter()}
    if live:
        state["status"] = console.status("preparing the kernels (compiled on the first run only; cached after)")
        state["status"].start()

    def progress(p: LearnProgress) -> None:
        change = "" if p.change is None else f", change {p.change:.3f} points (largest {p.largest:.2f})"
        line = (
            f"iteration {p.iteration}/{p.iterations}: {p.games:,}/{p.games_per_iteration:,} games, "
            f"{p.games_per_second:,.0f} games/s{change}"
        )
        if live:
            state["status"].update(line)
            if p.change is not None:
                console.print(line)
        elif p.change is not None and not args.no_progress:
            print(line, flush=True)

    interrupted = False
    try:
        if args.scheduler or args.workers:
            distributed_module()
            with cluster(args) as client:
                table = learn(args.seed, args.games, args.iterations, progress=progress, client=client)
        else:
            table = learn(args.seed, args.games, args.iterations, threads=args.threads, progress=progress)
    except KeyboardInterrupt:
        if state["status"] is not None:
            state["status"].stop()
        print("qwirkle: interrupted before the first iteration finished; nothing written", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if state["status"] is not None:
            state["status"].stop()
    done = table.provenance["iterations"]
    interrupted = done < args.iterations
    table.save(out)
    elapsed = time.perf_counter() - state["t0"]
    console.print(
        f"wrote {out}: {done} iteration(s) of {args.games:,} games, seed {args.seed}, in {elapsed:.1f} s"
        + (" (interrupted: the last finished iteration)" if interrupted else "")
    )
    return EXIT_INTERRUPTED if interrupted else 0
