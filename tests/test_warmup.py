"""batch/warmup.py and ``qwirkle warmup``: compiling the kernels ahead of time, the
first run's estimate, and the search agent's parts compiled in worker processes with
the very types its batch kernel calls them with."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import qwirkle_core as qc
from qwirkle_core import cli
from qwirkle_core.batch import warmup as wu


def _python(code, cache, **env):
    """Run ``code`` in a fresh interpreter on the numba cache folder ``cache``."""
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "NUMBA_CACHE_DIR": str(cache), **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_a_batch_lists_only_the_kernels_of_its_agents():
    assert wu.kernels_for("greedy,random") == ["batch.run_plain"]
    assert wu.kernels_for(["heuristic", "greedy"]) == ["batch.run_heuristic"]
    assert wu.kernels_for("mc,greedy") == ["batch.run_mc"]
    assert wu.kernels_for("search,greedy") == ["endgame.solve", "search.playout", "batch.run_search"]
    assert wu.kernels_for("search,mc") == ["endgame.solve", "search.playout", "batch.run_any"]
    assert wu.kernels_for("greedy,greedy", qc.Rules(variant="cubes")) == ["cubes.run_games"]
    every = wu.kernels_for()
    assert set(every) == set(wu.TASKS) and every.index("endgame.solve") < every.index("batch.run_search")
    with pytest.raises(qc.AgentError):
        wu.kernels_for("greedy,wizard")


def test_the_estimate_is_a_sum_of_calibrated_kernels():
    one = {name: wu.estimate_seconds(name + ",greedy", processes=1, cached=True) for name in qc.AGENTS}
    assert one["random"] == one["greedy"] == wu.TASKS["batch.run_plain"].seconds
    assert 3 < one["greedy"] < one["heuristic"] < one["mc"] < one["search"] < 120
    assert one["search"] == sum(wu.TASKS[n].seconds for n in wu.kernels_for("search,greedy"))
    # side by side the search agent's parts overlap: less, but never below its batch kernel
    two = wu.estimate_seconds("search,greedy", processes=2, cached=True)
    assert wu.TASKS["batch.run_search"].seconds < two < one["search"]
    assert wu.estimate_kernels([], cached=True) == 0.0


def test_waves_put_each_kernel_after_its_parts_and_bins_balance_them():
    names = wu.kernels_for("search,greedy")
    assert wu._waves(names) == [["endgame.solve", "search.playout"], ["batch.run_search"]]
    bins = wu._bins(["endgame.solve", "search.playout", "batch.run_plain"], 2)
    # solve 14 s, playouts 12 s, run_plain 10 s: the solver alone, the playouts with run_plain
    assert sorted(map(sorted, bins)) == [["batch.run_plain", "search.playout"], ["endgame.solve"]]
    assert wu._bins(["batch.run_plain"], 4) == [["batch.run_plain"]]


def test_warmup_compiles_into_the_cache_and_a_later_process_loads(tmp_path, capsys):
    out = _python(
        "import sys; from qwirkle_core.cli import main; sys.exit(main(['warmup', '--agents', 'greedy,random', '--no-progress']))",
        tmp_path,
    )
    assert "batch.run_plain" in out and "yes" in out and "1 of 1 kernels compiled" in out
    code = """
import qwirkle_core as qc
from qwirkle_core.batch.local import compile_seconds
from qwirkle_core._kernels import batch
seen = []
print(compile_seconds("greedy,greedy"), qc.warmup("greedy,greedy", progress=lambda *a: seen.append(a)))
print(seen, len(batch.run_plain.signatures))
"""
    lines = _python(code, tmp_path).splitlines()
    assert lines[0].startswith("0.0 [KernelTime(name='batch.run_plain', seconds=0.0, compiled=False)]")
    assert lines[1] == "[('batch.run_plain', True, 1, 1)] 0"  # ready at once (loaded by the first call)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["warmup", "--agents", "greedy,wizard"], "unknown agent 'wizard'"),
        (["warmup", "--agents", ","], "expected agents"),
        (["warmup", "--processes", "0"], "--processes"),
        (["warmup", "--variant", "cubes", "--agents", "search"], "--agents"),
    ],
)
def test_bad_warmup_arguments_are_one_line_without_a_traceback(argv, message, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_first_run_message_names_the_agents_and_the_estimate(monkeypatch):
    from qwirkle_core.cli.simulate import _kernel_status

    monkeypatch.setattr(wu, "_cached", lambda name: False)
    text = _kernel_status(list(qc.parse_agents("search,greedy")), qc.Rules())
    assert text.startswith("preparing the kernels: compiling them for search, greedy (first run only, about ")
    assert "qwirkle warmup" in text


def test_the_search_agents_parts_compiled_by_workers_are_the_ones_its_batch_loads(tmp_path):
    """Worker processes compile the endgame solver and the playouts into the cache; the
    batch kernel then loads both (one signature each: the types match exactly) and plays
    the same games as without them."""
    code = """
import qwirkle_core as qc
from qwirkle_core._kernels import endgame, search
from qwirkle_core.batch import warmup
times = warmup.warmup("search:time_ms=2,greedy", processes=2)
print([(k.name, k.compiled) for k in times])
r = qc.simulate(2, ["search:time_ms=2", "greedy"], seed=3, threads=1)
print(len(endgame.solve.signatures), len(search.playout.signatures), r.scores.tolist())
"""
    lines = _python(code, tmp_path).splitlines()
    assert lines[0] == str([("endgame.solve", True), ("search.playout", True), ("batch.run_search", True)])
    ones, scores = lines[1].split(" ", 2)[:2], lines[1].split(" ", 2)[2]
    assert ones == ["1", "1"]
    plain = qc.simulate(2, ["search:time_ms=2", "greedy"], seed=3, threads=1)
    assert scores == str(plain.scores.tolist())
