"""Every Python example in README.md and docs/*.md runs as written.

The ```python blocks of one document run in order in one namespace (a later block may
use what an earlier one made), in a temporary working directory; a ```python script
block is a whole script, run by the test of its subject instead (docs/server.md's bot:
tests/test_server_live.py). The package's doctests run too. So the documentation cannot rot: an example that stops working
fails here.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

import qwirkle_core

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """The ```python blocks of a Markdown file, each with its first line number."""
    text = path.read_text()
    return [(text[: m.start()].count("\n") + 2, m.group(1)) for m in _BLOCK.finditer(text)]


def test_the_block_reader_finds_blocks() -> None:
    blocks = python_blocks(ROOT / "README.md")
    assert blocks and all("import qwirkle_core" in code or "qc." in code for _, code in blocks[:1])


@pytest.mark.parametrize("path", [p for p in DOCUMENTS if python_blocks(p)], ids=lambda p: p.name)
def test_python_examples_run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"docs_{path.stem}"}
    for line, code in python_blocks(path):
        try:
            exec(compile(code, f"{path.name}:{line}", "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - report which block failed
            pytest.fail(f"{path.name}, the block at line {line} fails: {type(e).__name__}: {e}")


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
