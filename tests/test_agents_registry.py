"""One registry of agents (issue 67, point 3): ``qwirkle_core.game.agents.AGENTS``, from
the kernels' agent table, feeds every help text, error and docs table.

`qwirkle simulate --help` and `qwirkle play --help` once left out `static`, listed by
hand while the errors listed it. These tests read the names from the registry, so a new
agent added to the table fails here until every help, error and docs table has it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qwirkle_core import cli
from qwirkle_core.game.agents import AGENTS, agent_names, agent_params

ROOT = Path(__file__).resolve().parent.parent


def _help(command: str) -> str:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return " ".join(sub.choices[command].format_help().split())


def test_the_registry_is_the_kernels_table_in_order():
    assert AGENTS[:6] == ("random", "greedy", "heuristic", "mc", "search", "static")
    assert agent_names() == ", ".join(AGENTS)


@pytest.mark.parametrize("command", ["simulate", "tournament", "play", "bot"])
def test_every_agent_help_lists_every_agent(command, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    assert agent_names() in _help(command)


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--agents", "greedyy,greedy", "--games", "2"],
        ["tournament", "--agents", "greedyy,greedy", "--games", "2"],
        ["play", "--opponent", "greedyy"],
    ],
)
def test_an_unknown_agent_error_lists_every_agent(argv, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "did you mean 'greedy'?" in err and f"available: {agent_names()}" in err
    assert err.count("\n") == 1


def _first_column(table_start: str, text: str) -> list[str]:
    """The backticked names of the first column of the table whose header row starts with ``table_start``."""
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(table_start))
    names = []
    for line in lines[i + 2 :]:
        if not line.startswith("|"):
            break
        names.append(line.split("|")[1].strip().strip("`"))
    return names


def test_the_agents_table_of_docs_agents_md_has_every_agent_once_in_order():
    names = _first_column("| agent | what it does |", (ROOT / "docs/agents.md").read_text(encoding="utf-8"))
    assert names == list(AGENTS)


def test_the_parameter_table_of_docs_limits_md_names_every_agent_with_parameters():
    names = _first_column("| agent | parameter |", (ROOT / "docs/limits.md").read_text(encoding="utf-8"))
    assert set(names) == {a for a in AGENTS if agent_params(a)}


_NAME = "|".join(sorted(map(re.escape, AGENTS), key=len, reverse=True))
_LIST = re.compile(rf"`?\b(?:{_NAME})\b`?(?:(?:,\s*|,?\s+(?:and|or)\s+)`?\b(?:{_NAME})\b`?)+")


@pytest.mark.parametrize(
    "page", ["README.md", "CONTRIBUTING.md", *sorted(p.name for p in (ROOT / "docs").glob("*.md"))]
)
def test_no_page_lists_the_agents_by_hand_with_one_missing(page):
    """A list of five or more agent names written in prose is meant as a list of them all
    (the stale help listed five of six); shorter lists (``random, greedy or heuristic``,
    the playout policies) are about a few."""
    path = ROOT / page if (ROOT / page).exists() else ROOT / "docs" / page
    if not path.exists():
        pytest.skip(f"no {page}")
    text = " ".join(path.read_text(encoding="utf-8").split())
    for m in _LIST.finditer(text):
        named = set(re.findall(_NAME, m.group(0)))
        if len(named) >= 5:
            assert named == set(AGENTS), f"{page}: {m.group(0)!r} leaves out {sorted(set(AGENTS) - named)}"
