"""``qwirkle analyse``: the engine's verdict on every action of a game record."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._kernels.layout import MAX_CANDIDATES
from .common import (
    ProgressBar,
    UsageError,
    fallback,
    file_of,
    plural,
    positive_int,
    reason,
    seed_type,
)

if TYPE_CHECKING:
    from rich.console import Console

    from ..evaluation.analysis import Analysis
    from ..game.records import GameRecord


def register(sub: Any) -> None:
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
        "--html",
        type=_html_path,
        default=None,
        metavar="PATH",
        help="write the game with each action's verdict to this .html page (no network resource)",
    )
    p.add_argument(
        "--playouts",
        type=positive_int,
        default=100,
        help="playouts per candidate action before the endgame (default: 100)",
    )
    p.add_argument(
        "--candidates",
        type=positive_int,
        default=12,
        help=f"the engine's candidate placements per position, 1 to {MAX_CANDIDATES} (default: 12)",
    )
    p.add_argument(
        "--max-nodes", type=positive_int, default=1_000_000, help="positions per endgame solve (default: 1000000)"
    )
    p.add_argument("--seed", type=seed_type, default=0, help="seed of the playouts (default: 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress display")
    p.set_defaults(run=_run_analyse)


_json_path = file_of(".json", "the analysis is written to a .json file")
_html_path = file_of(".html", "the page is written to a .html file")


def _record_file(text: str) -> GameRecord:
    from ..game.records import GameRecord, replay

    try:
        data = Path(text).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise argparse.ArgumentTypeError(f"cannot read {text!r}: {reason(e)}") from None
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
    if args.candidates > MAX_CANDIDATES:
        raise UsageError(f"argument --candidates: must be 1 to {MAX_CANDIDATES}, got {args.candidates}")
    bar = ProgressBar(console, "actions", not args.no_progress)
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
            other = fallback(args.json)
            other.write_text(result.to_json(indent=1) + "\n", encoding="utf-8")
            console.print(f"could not write {args.json} ({reason(e)}); saved the analysis to {other} instead")
            return 1
        console.print(f"wrote {args.json}")
    if args.html is not None:
        page = args.record.to_html(notes=verdicts(result, len(args.record.actions)))
        try:
            args.html.write_text(page, encoding="utf-8")
        except OSError as e:
            other = fallback(args.html)
            other.write_text(page, encoding="utf-8")
            console.print(f"could not write {args.html} ({reason(e)}); saved the page to {other} instead")
            return 1
        console.print(f"wrote {args.html}")
    return 0


def verdicts(result: Analysis, actions: int) -> list[str | None]:
    """One line per action of the record: the engine's verdict on the actions analysed
    (the best action, its value, the loss of the one played), None for the others."""
    from ..game.move import format_move

    notes: list[str | None] = [None] * actions
    for a in result.actions:
        b = a.best
        best = "best played" if b.move == a.played.move else f"best {format_move(b.move)}"
        margin = f"{b.margin:+.1f}" + (f" ± {b.margin_se:.1f}" if b.margin_se else "")
        win = f"{b.win_rate:.0%}" + (f" ± {b.win_se:.0%}" if b.win_se else "")
        loss = f"{a.loss:.1f}" + (f" ± {a.loss_se:.1f}" if a.loss_se else "")
        how = a.method.replace("_", " ")
        notes[a.index] = f"{best} (margin {margin}, win {win}); loss {loss} ({how})"
    return notes


def _print_analysis(result: Analysis, console: Console) -> None:
    from rich import box
    from rich.table import Table

    from ..game.move import format_move

    who = "all seats" if result.seat is None else f"seat {result.seat}"
    table = Table(
        title=f"Analysis ({who}; {result.playouts} playouts x {result.candidates} candidates, seed {result.seed}); margin, win: of the best action",
        title_justify="left",
    )
    # 80 columns: no lines between the columns; a figure's standard error goes on a
    # second line; a move too long for its column folds onto the next lines (never cut
    # off with "…")
    table.box = box.SIMPLE_HEAD
    for col in ("#", "seat", "bag", "played", "best", "margin", "win", "loss", "how"):
        text = col in ("played", "best", "how")
        table.add_column(col, justify="left" if text else "right", overflow="fold", no_wrap=not text)
    for a in result.actions:
        b = a.best
        same = b.move == a.played.move
        table.add_row(
            str(a.index),
            str(a.player),
            str(a.bag),
            format_move(a.played.move),
            "=" if same else format_move(b.move),
            f"{b.margin:+.1f}" + (f"\n± {b.margin_se:.1f}" if b.margin_se else ""),
            f"{b.win_rate:.0%}" + (f"\n± {b.win_se:.0%}" if b.win_se else ""),
            f"{a.loss:.1f}" + (f"\n± {a.loss_se:.1f}" if a.loss_se else ""),
            a.method.replace("_", " ").replace("monte carlo", "MC"),
        )
    console.print(table)
    for p in range(result.players):
        judged = [a for a in result.actions if a.player == p and a.method != "forced"]
        if judged:
            name = f" ({result.agents[p]})" if result.agents else ""
            console.print(
                f"seat {p}{name}: mean loss {result.mean_loss(p):.2f} points over {plural(len(judged), 'action')}, best action played {plural(sum(a.loss == 0 for a in judged), 'time')}"
            )
