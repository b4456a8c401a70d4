"""cli.py: the ``qwirkle`` command line, called through ``cli.main([...])``: argument
mistakes are one line and exit status 2, results are printed and written."""

from __future__ import annotations

import io
import re

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

import qwirkle_core as qc
from qwirkle_core import cli
from qwirkle_core.batch.rows import read_metadata


@pytest.mark.parametrize(
    "argv, message",
    [
        (["simulate", "--games", "0"], "--games"),
        (["simulate", "--games", "ten"], "--games"),
        (["simulate", "--agents", "greedy,wizard"], "unknown agent 'wizard'"),
        (["simulate", "--agents", "greedy"], "2 to 6 agents"),
        (["simulate", "--agents", ",".join(["greedy"] * 7)], "2 to 6 agents"),
        (["simulate", "--agents", "mc:playouts=0,greedy"], "playouts must be an int in 1..1000000"),
        (["simulate", "--out", "/no/such/folder/r.parquet"], "does not exist"),
        (["simulate", "--out", "results.txt"], ".parquet or .csv"),
        (["simulate", "--seed", "-1"], "seed"),
        (["simulate", "--seed", str(2**64)], "seed must be 0 .. 2**64-1"),
        (["simulate", "--start", "-5"], "--start"),
        (["simulate", "--threads", "0"], "--threads"),
        (["simulate", "--opening", "fast"], "invalid choice"),
        (["tournament", "--agents", "greedy,greedy"], "each agent may appear once"),
        (["tournament", "--agents", "greedy"], "at least 2 agents"),
        (["tournament", "--plot", "scores.jpg"], "must be a .png file"),
        (["play", "--players", "7"], "--players"),
        (["play", "--opponent", "grandmaster"], "unknown agent 'grandmaster'"),
        (["play", "--seed", "-1"], "seed"),
        (["frobnicate"], "invalid choice"),
        (["simulate", "--frobnicate"], "unrecognized arguments"),
    ],
)
def test_cli_rejects_bad_arguments(argv, message, capsys):
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err
    assert captured.err.startswith("qwirkle: error: ") and captured.err.count("\n") == 1
    assert captured.out == ""


def test_no_command_prints_the_help(capsys):
    assert cli.main([]) == 2
    out = capsys.readouterr().out
    assert "simulate" in out and "tournament" in out and "play" in out


def test_cli_simulate_writes_rows(tmp_path, capsys):
    def read_csv(path):  # seeds exceed int64, so say the column is uint64
        return pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(column_types={"seed": pa.uint64()}))

    expected = qc.simulate(40, seed=5, threads=1)
    for name, read in (("r.parquet", pq.read_table), ("r.csv", read_csv)):
        out = tmp_path / name
        assert (
            cli.main(["simulate", "--games", "40", "--seed", "5", "--threads", "1", "--no-progress", "--out", str(out)])
            == 0
        )
        table = read(str(out))
        assert table.num_rows == 40
        np.testing.assert_array_equal(np.asarray(table.column("score_0")), expected.scores[:, 0])
        np.testing.assert_array_equal(np.asarray(table.column("seed")).astype(np.uint64), expected.seeds)
        assert f"wrote 40 rows to {out}" in capsys.readouterr().out.replace("\n", "")
    meta = read_metadata(tmp_path / "r.parquet")
    assert (
        meta["agents"] == ["greedy", "greedy"]
        and meta["seed"] == 5
        and meta["games"] == 40
        and meta["version"] == qc.__version__
    )


def test_cli_simulate_prints_the_summary(capsys):
    assert (
        cli.main(
            [
                "simulate",
                "--games",
                "200",
                "--agents",
                "greedy,random",
                "--seed",
                "0x10",
                "--start",
                "5",
                "--no-progress",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    r = qc.simulate(200, agents=("greedy", "random"), seed=16, start=5)
    assert "200 games, seed 16" in out and "win rate" in out and "first player" in out
    rate, low, high = r.win_rates()[0]
    assert f"{rate:.1%} [{low:.1%}, {high:.1%}]" in out
    assert f"{r.mean_scores()[1]:.1f}" in out
    assert f"mean turns: {r.mean_turns():.1f}" in out


def table_rows(text: str, title: str) -> dict[str, list[str]]:
    """The rows of the rich table printed under ``title``: {first cell: other cells}."""
    block = text[text.index(title) :]
    rows = {}
    for line in block.splitlines()[1:]:
        if line.startswith("└"):
            break
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if len(cells) > 1 and "┃" not in line and not line.startswith(("┏", "┡")):
            rows[cells[0]] = cells[1:]
    return rows


def test_cli_tournament_prints_pairings_standings_and_timing(capsys, tmp_path):
    png = tmp_path / "scores.png"
    assert (
        cli.main(
            [
                "tournament",
                "--agents",
                "greedy,random",
                "--games",
                "20",
                "--seed",
                "3",
                "--no-progress",
                "--plot",
                str(png),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    t = qc.tournament(["greedy", "random"], games=20, seed=3, timing_games=1, timing_seconds=0)
    (m,) = t.matches
    assert "Round robin, 20 games per pairing, seed 3" in out
    assert table_rows(out, "Round robin")["greedy"][:2] == ["random", "20"]
    assert table_rows(out, "Round robin")["greedy"][-1] == f"{m.ties}"
    low, high = m.interval()
    assert table_rows(out, "Round robin")["greedy"][2] == f"{m.win_rate:.1%} [{100 * low:.1f}, {100 * high:.1f}]"
    standings = table_rows(out, "Standings")
    ratings = {r.agent: r for r in t.ratings()}
    assert list(standings) == ["greedy", "random"]  # by strength
    assert standings["greedy"] == [
        "1500 [1500, 1500]",
        "20",
        f"{ratings['greedy'].win_rate:.1%}",
        f"{t.scores('greedy').mean():.1f}",
    ]
    r = ratings["random"]
    assert standings["random"] == [
        f"{r.rating:.0f} [{r.low:.0f}, {r.high:.0f}]",
        "20",
        f"{r.win_rate:.1%}",
        f"{t.scores('random').mean():.1f}",
    ]
    timing = table_rows(out, "Time per move")
    assert set(timing) == {"greedy", "random"} and all(len(v) == 1 and float(v[0]) > 0 for v in timing.values())
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"wrote {png}" in out.replace("\n", "")


def test_cli_play_reads_commands_from_stdin(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("show\nquit\n"))
    assert (
        cli.main(["play", "--players", "3", "--seed", "0x10", "--seat", "1", "--no-color", "--opponent", "random"]) == 0
    )
    out = capsys.readouterr().out
    assert "you are seat 1; random plays seat 0, seat 2. Seed 16." in out
    assert "\x1b[" not in out and out.count("your hand: ") == 2


@pytest.mark.parametrize("argv", [["--help"], ["simulate", "--help"], ["tournament", "--help"], ["play", "--help"]])
def test_help(argv, capsys):
    with pytest.raises(SystemExit) as exit:
        cli.main(argv)
    assert exit.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: qwirkle") and "%%" not in out and "%(" not in out
    if argv[0] in ("simulate", "tournament"):
        assert re.search(r"95%\s+confidence", out)


# -- issue 67, point 9 ------------------------------------------------------------------


@pytest.mark.parametrize("text, games", [("1e6", 1_000_000), ("2.5e3", 2_500), ("1E2", 100), ("1_000", 1_000)])
def test_games_take_a_whole_number_in_e_notation(text, games):
    args = cli.build_parser().parse_args(["simulate", "--games", text])
    assert args.games == games and type(args.games) is int
    assert cli.build_parser().parse_args(["tournament", "--games", text]).games == games


@pytest.mark.parametrize(
    "text, words",
    [
        ("1.5e0", "expected a whole number, got '1.5e0'"),
        ("1e400", "expected a whole number, got '1e400'"),
        ("nan", "expected a whole number, got 'nan'"),
        ("1e", "expected a whole number, got '1e'"),
        ("1.0", "expected a whole number, got '1.0'"),
        ("0e0", "must be at least 1, got 0"),
    ],
)
def test_games_refuse_what_is_no_whole_positive_number(text, words, capsys):
    assert cli.main(["simulate", "--games", text]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"argument --games: {words}" in err


def test_a_refused_output_is_named_once(tmp_path, capsys):
    """ "cannot write 'results.xlsx': 'results.xlsx': ..." named the file twice."""
    assert cli.main(["simulate", "--games", "10", "--out", "results.xlsx"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "qwirkle: error: argument --out: 'results.xlsx': the output must end in .parquet or .csv "
        "(see 'qwirkle simulate --help')\n"
    )
    assert cli.main(["simulate", "--games", "10", "--out", str(tmp_path / "no" / "r.csv")]) == 2
    assert capsys.readouterr().err.count(repr(str(tmp_path / "no" / "r.csv"))) == 1
