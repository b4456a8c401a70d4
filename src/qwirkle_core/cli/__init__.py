"""The ``qwirkle`` command line: ``simulate``, ``tournament``, ``play``, ``analyse``,
``serve``, ``bot``, ``warmup``, ``learn``; one module per command, what they share in :mod:`.common`.

All argument parsing, tables, progress displays and interruption handling live in this
folder; the library underneath takes plain values and a progress callable. A mistake in
the arguments is one line on stderr and exit status 2; Ctrl-C stops within about a
second, keeps what finished and exits with status 130.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .common import EXIT_INTERRUPTED, EXIT_USAGE, Parser, UsageError


def build_parser() -> argparse.ArgumentParser:
    """The ``qwirkle`` argument parser, every command registered."""
    from .._version import __version__
    from . import analyse, learn, play, serve, simulate, tournament, warmup

    parser = Parser(prog="qwirkle", description="qwirkle-core: a fast, exact Qwirkle engine and simulator.")
    parser.add_argument("--version", action="version", version=f"qwirkle-core {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for register in (
        simulate.register,
        play.register,
        tournament.register,
        analyse.register,
        serve.register_serve,
        serve.register_bot,
        warmup.register,
        learn.register,
    ):
        register(sub)
    return parser


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
