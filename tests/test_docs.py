"""Every Python example in README.md and docs/ runs as written, as a script.

The ```python blocks of one document run in order as one script (a later block may use
what an earlier one made): written to a file in a temporary working directory and run
with ``python FILE`` in a fresh process, so ``__name__`` is ``"__main__"`` exactly as
when a reader saves the example and runs it (an example that starts worker processes
needs its ``if __name__ == "__main__":`` guard, and a missing one fails here). A
```python script block is a whole script, run by the test of its subject instead
(docs/server.md's bot: tests/test_server_live.py). The package's doctests run too. So
the documentation cannot rot: an example that stops working fails here.
"""

from __future__ import annotations

import doctest
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import qwirkle_core

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
# Documents whose examples take long (a Dask cluster, an RL training loop): run with
# the slow tests (pytest -m slow).
SLOW = {"distributed.md", "env.md"}
SCRIPT_SECONDS = 600


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """The ```python blocks of a Markdown file, each with its first line number."""
    text = path.read_text()
    return [(text[: m.start()].count("\n") + 2, m.group(1)) for m in _BLOCK.finditer(text)]


def script_of(path: Path) -> str:
    """The document's ```python blocks as one script, each block preceded by a comment
    naming its line, and its lines at the same line numbers as in the document (blank
    lines between the blocks), so a traceback's line number is the document's."""
    lines: list[str] = []
    for line, code in python_blocks(path):
        while len(lines) < line - 2:
            lines.append("")
        lines.append(f"# {path.name}, the block at line {line}")
        lines += code.splitlines()
    return "\n".join(lines) + "\n"


def test_the_block_reader_finds_blocks() -> None:
    blocks = python_blocks(ROOT / "README.md")
    assert blocks and all("import qwirkle_core" in code or "qc." in code for _, code in blocks[:1])
    script = script_of(ROOT / "README.md")
    line, code = blocks[0]
    assert script.splitlines()[line - 1] == code.splitlines()[0]  # the document's line numbers


def _documents() -> list[object]:
    return [
        pytest.param(p, id=str(p.relative_to(ROOT)), marks=[pytest.mark.slow] if p.name in SLOW else [])
        for p in DOCUMENTS
        if python_blocks(p)
    ]


@pytest.mark.parametrize("path", _documents())
def test_python_examples_run_as_scripts(path: Path, tmp_path: Path) -> None:
    script = tmp_path / f"example_{path.stem}.py"
    script.write_text(script_of(path))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    env["QWIRKLE_QUIET_COMPILE"] = "1"
    with subprocess.Popen(
        [sys.executable, script.name],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: a hang is killed with every worker it started
    ) as proc:
        try:
            _, err = proc.communicate(timeout=SCRIPT_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
            pytest.fail(
                f"{path.name}'s examples, run as a script, did not finish in {SCRIPT_SECONDS} s:\n{err[-4000:]}"
            )
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # anything it left running
            except ProcessLookupError:
                pass
    if proc.returncode != 0:
        pytest.fail(f"{path.name}'s examples fail as a script (line numbers are the document's):\n{err[-4000:]}")


def test_package_doctests() -> None:
    result = doctest.testmod(qwirkle_core, verbose=False)
    assert result.attempted > 0 and result.failed == 0


# -- figures quoted in more than one place ------------------------------------------------
#
# A figure that README.md and a page of docs/ both quote is written
# ``<!--fig:NAME-->VALUE<!--/fig-->`` (the comments do not show when rendered) at every
# place; the quotes of one NAME must agree (spaces aside), so a figure updated in one
# place and not in the other fails here.

_FIGURE = re.compile(r"<!--fig:([\w-]+)-->(.*?)<!--/fig-->", re.S)


def quoted_figures(texts: dict[str, str]) -> dict[str, set[tuple[str, str]]]:
    """{figure name: {(document, value)}} over documents ``{name: text}``."""
    found: dict[str, set[tuple[str, str]]] = {}
    for doc, text in texts.items():
        for name, value in _FIGURE.findall(text):
            found.setdefault(name, set()).add((doc, "".join(value.split())))
    return found


def disagreements(texts: dict[str, str]) -> list[str]:
    """One line for each figure whose quotes differ."""
    return [
        f"figure {name!r} is quoted as " + ", ".join(f"{v!r} in {d}" for d, v in sorted(quotes))
        for name, quotes in sorted(quoted_figures(texts).items())
        if len({v for _, v in quotes}) > 1
    ]


def test_figures_quoted_twice_agree() -> None:
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "benchmarks" / "README.md"]
    texts = {str(p.relative_to(ROOT)): p.read_text() for p in documents}
    figures = quoted_figures(texts)
    assert any(len({d for d, _ in q}) > 1 for q in figures.values()), "no figure is tagged in two documents"
    assert not disagreements(texts), "\n".join(disagreements(texts))


def test_the_figure_check_sees_a_disagreement() -> None:
    texts = {
        "a.md": "rate <!--fig:rate-->30,910<!--/fig--> games/s",
        "b.md": "about <!--fig:rate--> 30,910 <!--/fig--> and <!--fig:other-->1<!--/fig-->",
    }
    assert disagreements(texts) == []
    texts["c.md"] = "<!--fig:rate-->15,740<!--/fig-->"
    assert disagreements(texts) == ["figure 'rate' is quoted as '30,910' in a.md, '30,910' in b.md, '15,740' in c.md"]


# -- the newcomer's pages (issue 67) -------------------------------------------------------


def test_the_readme_is_a_newcomers_page() -> None:
    """At most 200 lines: set-up, the two commands, how to install from a checkout or a
    wheel, one line on the test runs; the figures and their history live in docs/testing.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert "qwirkle simulate --games 1000000 --agents greedy,greedy --seed 1 --out results.parquet" in text
    assert "pip install -e '.[dev]' && pytest" in text and 'pytest -m "slow or not slow"' in text
    assert "python -m build" in text and "docs/testing.md" in text and "CONTRIBUTING.md" in text
    assert "pip install 'qwirkle-core[" not in text  # not on an index: from a checkout or a wheel


def test_testing_md_states_the_default_runs_measured_cpu_time() -> None:
    text = " ".join((ROOT / "docs" / "testing.md").read_text(encoding="utf-8").split())
    seconds = re.search(r"the default `pytest` took ([\d,.]+) CPU-seconds", text)
    assert seconds is not None and float(seconds.group(1).replace(",", "")) <= 360
    for words in ("pytest -m slow", "chromium", "benchmarks/compare.py", "load average"):
        assert words in text


def test_contributing_md_gives_the_habits() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for heading in ("## Layers", "## Where tests go", "## The naive-reference pattern", "## How to measure"):
        assert heading in text


def test_the_changelog_is_cut_at_the_packages_version() -> None:
    """An empty "Unreleased" heading, then this version's section with its date."""
    lines = [line for line in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert lines[1] == "## Unreleased"
    assert re.fullmatch(rf"## {re.escape(qwirkle_core.__version__)} \(\d{{4}}-\d\d-\d\d\)", lines[2]), lines[2]
    assert qwirkle_core.__version__ == "0.3.0"
