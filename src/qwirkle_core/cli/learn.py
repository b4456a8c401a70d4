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
    targets = p.add_subparsers(dest="target", metavar="net", title="what else it learns")
    n = targets.add_parser(
        "net",
        help="learn the move scorer (the net agent) by expert iteration on searched self-play",
        description="Play self-play games in which every turn is searched: the current move scorer ranks the "
        "moves, its TOP best and EXTRA others are played out as the search plays its playouts (PLAYOUTS each), "
        "the best is played and every position is recorded; then train the scorer (torch) to predict the "
        "candidates' values and play again with it, ITERATIONS times. Writes the weights and their provenance "
        "(the command, seed, games, positions, each iteration's loss and probe, version, date) to OUT after "
        "every iteration, so Ctrl-C or SIGTERM keeps the last finished one. Needs torch: pip install "
        "'qwirkle-core[rl-train]'. docs/agents.md, 'net'.",
    )
    n.add_argument("--seed", type=seed_type, default=0, help="the seed of the games and the training (default 0)")
    n.add_argument("--games", type=positive_int, default=800, help="self-play games per iteration (default 800)")
    n.add_argument("--iterations", type=positive_int, default=6, help="iterations (default 6)")
    n.add_argument("--playouts", type=positive_int, default=24, help="playouts per candidate (default 24)")
    n.add_argument("--top", type=positive_int, default=6, help="the scorer's best moves searched (default 6)")
    n.add_argument("--extra", type=int, default=2, help="other moves searched, drawn at random (default 2)")
    n.add_argument("--hidden", type=_hidden, default=(64, 32), help="the hidden layers' units, H1,H2 (default 64,32)")
    n.add_argument("--epochs", type=positive_int, default=8, help="training passes per iteration (default 8)")
    n.add_argument(
        "--probe-games", type=int, default=400, help="games of the probe against greedy per iteration (default 400)"
    )
    n.add_argument("--start", type=Path, default=None, help="a weights file to start from (default: static's values)")
    n.add_argument("--threads", type=positive_int, default=None, help="threads that play (default: every core)")
    n.add_argument("--out", type=Path, default=Path("net.npz"), help="the weights file to write (default net.npz)")
    add_cluster_options(n)
    n.add_argument("--no-progress", action="store_true", help="no progress display")
    n.set_defaults(run=_run_learn_net)


def _hidden(text: str) -> tuple[int, int]:
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() and 1 <= int(p) <= 1024 for p in parts):
        raise argparse.ArgumentTypeError(f"expected two unit counts 1..1024 such as 64,32, got {text!r}")
    return int(parts[0]), int(parts[1])


def _run_learn_net(args: argparse.Namespace, console: Console) -> int:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UsageError("qwirkle learn net trains with torch: pip install 'qwirkle-core[rl-train]'") from None
    from ..batch.netlearn import NetProgress, learn_net

    out: Path = args.out
    if out.is_dir() or not out.parent.is_dir():
        raise UsageError(f"--out: cannot write a file at {out}")
    if args.start is not None and not args.start.is_file():
        raise UsageError(f"--start: no weights file at {args.start}")
    if not 0 <= args.extra <= 32 or args.top > 32:
        raise UsageError("--top is 1..32 and --extra 0..32")
    live = console.is_terminal and not args.no_progress
    t0 = time.perf_counter()

    def progress(p: NetProgress) -> None:
        if p.loss is None:
            line = (
                f"iteration {p.iteration}/{p.iterations}: {p.games:,}/{p.games_per_iteration:,} games, "
                f"{p.positions:,} positions, {p.seconds:,.0f} s"
            )
            if live:
                console.print(line, end="\r")
            return
        probe = "" if p.win_rate is None else f", probe {100 * p.win_rate:.1f} % against greedy"
        line = (
            f"iteration {p.iteration}/{p.iterations}: {p.positions:,} positions in {p.seconds:,.0f} s, "
            f"held-out loss {p.loss:.2f}{probe}; wrote {out}"
        )
        if not args.no_progress:
            if live:
                console.print(line)
            else:
                print(line, flush=True)

    options: dict[str, Any] = dict(
        threads=args.threads,
        playouts=args.playouts,
        top=args.top,
        extra=args.extra,
        hidden=args.hidden,
        epochs=args.epochs,
        probe_games=args.probe_games,
        start=args.start,
        checkpoint=out,
        progress=progress,
    )
    try:
        if args.scheduler or args.workers:
            distributed_module()
            with cluster(args) as client:
                result = learn_net(args.seed, args.games, args.iterations, client=client, **options)
        else:
            result = learn_net(args.seed, args.games, args.iterations, **options)
    except KeyboardInterrupt:
        print("qwirkle: interrupted before the first iteration finished; nothing written", file=sys.stderr)
        return EXIT_INTERRUPTED
    done = result.provenance["iterations"]
    interrupted = done < args.iterations
    elapsed = time.perf_counter() - t0
    console.print(
        f"wrote {out}: {done} iteration(s) of {args.games:,} games, seed {args.seed}, in {elapsed:.1f} s"
        + (" (interrupted: the last finished iteration)" if interrupted else "")
    )
    return EXIT_INTERRUPTED if interrupted else 0


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
