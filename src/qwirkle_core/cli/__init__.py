"""The ``qwirkle`` command line: ``simulate``, ``tournament``, ``play``, ``analyse``,
``serve``, ``bot``, ``warmup``, ``learn``; one module per command, what they share in :mod:`.common`.

All argument parsing, tables, progress displays and interruption handling live in this
folder; the library underneath takes plain values and a progress callable. A mistake in
the arguments is one line on stderr and exit status 2; Ctrl-C stops within about a
second, keeps what finished and exits with status 130. SIGTERM and SIGHUP do the same
(:mod:`qwirkle_core.stopping`, around every command) and exit with 143 and 129.
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
    mistake, 130 interrupted by Ctrl-C, 143 by SIGTERM, 129 by SIGHUP).

    SIGTERM and SIGHUP are handled as Ctrl-C for every command
    (:func:`qwirkle_core.stopping.stop_signals`): a command keeps what finished and
    returns :data:`~.common.EXIT_INTERRUPTED`, which becomes the signal's status here."""
    from ..stopping import exit_status, stop_signals, stopped_by

    try:
        with stop_signals():
            from rich.console import Console

            console = Console()
            parser = build_parser()
            args = parser.parse_args(argv)
            if not getattr(args, "run", None):
                parser.print_help()
                return EXIT_USAGE
            status = int(args.run(args, console))
            return exit_status() if status == EXIT_INTERRUPTED else status
    except UsageError as e:
        print(f"qwirkle: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        cause = stopped_by()
        print("qwirkle: interrupted" if cause == "Ctrl-C" else f"qwirkle: stopped by {cause}", file=sys.stderr)
        return exit_status()
    except (OSError, ValueError) as e:
        print(f"qwirkle: error: {e}", file=sys.stderr)
        return 1
