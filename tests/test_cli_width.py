"""The command line's tables fit 80 columns, cut nothing off ("…"), and say "1 action",
not "1 actions"."""

from __future__ import annotations

import numpy as np
from rich.console import Console

import qwirkle_core as qc
from qwirkle_core import cli
from qwirkle_core.batch.tournament import Match, TournamentResult
from qwirkle_core.cli.analyse import _print_analysis
from qwirkle_core.cli.common import plural
from qwirkle_core.cli.tournament import tournament_tables
from qwirkle_core.evaluation.analysis import ActionAnalysis, Analysis, MoveValue


def _console() -> Console:
    return Console(width=80, record=True, color_system=None, force_terminal=False)


def _fits(text: str) -> None:
    assert max(len(line) for line in text.splitlines()) <= 80, text
    assert "…" not in text, text


def test_plural() -> None:
    assert plural(1, "action") == "1 action" and plural(2, "action") == "2 actions"
    assert plural(0, "time") == "0 times" and plural(12_000, "game") == "12,000 games"


def test_the_analysis_table_folds_long_moves_instead_of_cutting_them() -> None:
    six = qc.Move("R1@0,0 R2@0,1 R3@0,2 R4@0,3 R5@0,4 R6@0,5")
    five = qc.Move("B1@-12,-30 B2@-11,-30 B3@-10,-30 B4@-9,-30 B5@-8,-30")
    played, best = MoveValue(five, 3.25, 1.5, 0.4, 0.05), MoveValue(six, 18.5, 1.25, 0.75, 0.04)
    actions = (
        ActionAnalysis(0, 0, 96, "monte_carlo", 20, played, best, 15.25, 1.5),
        ActionAnalysis(1, 1, 90, "exact", 1, best, best, 0.0, 0.0),
    )
    result = Analysis(2, ("heuristic:dup=0.5", "greedy"), None, 200, 20, 100_000, 7, actions)
    console = _console()
    _print_analysis(result, console)
    text = console.export_text()
    _fits(text)
    assert text.count("@") == 5 + 6 + 6  # every tile of every move is shown
    assert "over 1 action," in text and "played 0 times" in text and "played 1 time" in text


def test_the_tournament_tables_fit_with_long_labels() -> None:
    def match(first: str, second: str, wins: int, losses: int, ties: int) -> Match:
        n = wins + losses + ties
        margin = np.array([105] * wins + [-5] * losses + [0] * ties, np.int32)
        return Match(first, second, wins, losses, ties, margin, np.full(n, 200, np.int32), 200 - margin)

    agents = ("heuristic:dup=0.5", "greedy", "mc:playouts=32")
    result = TournamentResult(
        agents=agents,
        matches=[
            match(agents[0], agents[1], 5970, 3830, 200),
            match(agents[0], agents[2], 4000, 5900, 100),
            match(agents[1], agents[2], 3000, 6990, 10),
        ],
        seconds_per_move={a: 1e-5 for a in agents},
        seed=2026,
        games=10_000,
    )
    console = _console()
    for table in tournament_tables(result):
        console.print(table)
    _fits(console.export_text())


def test_simulate_prints_within_80_columns(capsys) -> None:
    assert (
        cli.main(["simulate", "--games", "50", "--agents", "heuristic,greedy", "--no-progress", "--threads", "1"]) == 0
    )
    _fits(capsys.readouterr().out)
