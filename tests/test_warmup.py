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
    assert wu.kernels_for("greedy,random") == ["movegen.generate", "actions.apply_action", "batch.run_plain"]
    assert wu.kernels_for(["heuristic", "greedy"]) == ["batch.run_heuristic"]
    assert wu.kernels_for("mc,greedy") == ["batch.run_mc"]
    search = ["leaves.leave_codes", "endgame.solve", "search.playout", "search.rank_learned"]
    assert wu.kernels_for("search,greedy") == [*search, "batch.run_search"]
    assert wu.kernels_for("search,mc") == [*search, "batch.run_any"]
    assert wu.kernels_for("static,greedy") == ["leaves.leave_codes", "batch.run_static"]
    assert wu.kernels_for("greedy,greedy", qc.Rules(variant="cubes")) == ["cubes.run_games"]
    every = wu.kernels_for()
    assert set(every) == set(wu.TASKS) and every.index("endgame.solve") < every.index("batch.run_search")
    with pytest.raises(qc.AgentError):
        wu.kernels_for("greedy,wizard")


def test_a_search_lists_what_it_binds_at_need(monkeypatch):
    """The net's ranking and the heuristic are not linked into the search's kernels: a
    search with eval net or with the heuristic (eval or policy) lists them as parts, the
    default search neither; their estimate counts even when the batch kernel is cached."""
    plain = ["leaves.leave_codes", "endgame.solve", "search.playout", "search.rank_learned", "batch.run_search"]
    assert wu.kernels_for("search:eval=net,greedy") == ["net.rank_net", *plain]
    assert wu.kernels_for("search:eval=heuristic,greedy") == ["search.rank_candidates", *plain]
    assert wu.kernels_for("search:policy=heuristic,greedy") == ["search.rank_candidates", *plain]
    assert wu.kernels_for("search:eval=net,search:eval=heuristic") == [
        "net.rank_net",
        "search.rank_candidates",
        *plain,
    ]

    def cached(name):  # the search's batch kernel and its parts, as after a default search
        return name in plain

    monkeypatch.setattr(wu, "_cached", cached)
    assert wu.estimate_seconds("search,greedy") == 0.0
    assert wu.estimate_seconds("search:eval=net,greedy") == wu.TASKS["net.rank_net"].seconds
    # a cache from before the leave codes were a part: they alone are left
    monkeypatch.setattr(wu, "_cached", lambda name: name in plain[1:])
    assert wu.estimate_seconds("search,greedy", processes=2) == wu.TASKS["leaves.leave_codes"].seconds


def test_the_estimate_is_a_sum_of_calibrated_kernels():
    one = {name: wu.estimate_seconds(name + ",greedy", processes=1, cached=True) for name in qc.AGENTS}
    assert one["random"] == one["greedy"] == sum(wu.TASKS[n].seconds for n in wu.kernels_for("greedy,greedy"))
    assert 3 < one["greedy"] < one["heuristic"] < one["mc"] < one["search"] < 120
    assert one["search"] == sum(wu.TASKS[n].seconds for n in wu.kernels_for("search,greedy"))
    # side by side the search agent's parts overlap: less, but never below its batch kernel
    two = wu.estimate_seconds("search,greedy", processes=2, cached=True)
    assert wu.TASKS["batch.run_search"].seconds < two < one["search"]
    assert (
        wu.TASKS["batch.run_plain"].seconds
        < wu.estimate_seconds("greedy,greedy", processes=2, cached=True)
        < one["greedy"]
    )
    assert wu.estimate_kernels([], cached=True) == 0.0


def test_waves_put_each_kernel_after_the_parts_it_links_and_bins_balance_them():
    names = wu.kernels_for("greedy,greedy")
    assert wu._waves(names) == [["movegen.generate", "actions.apply_action"], ["batch.run_plain"]]
    # the search's kernel calls its parts unlinked: all at once
    names = wu.kernels_for("search,greedy")
    assert wu._waves(names) == [names]
    bins = wu._bins(["endgame.solve", "search.playout", "batch.run_plain"], 2)
    # playouts 11 s, solve 10.5 s, run_plain 3 s: the playouts alone, the solver with run_plain
    assert sorted(map(sorted, bins)) == [["batch.run_plain", "endgame.solve"], ["search.playout"]]
    # the search's batch kernel after its learned ranking; the solver then the playouts
    # beside it: each bin the shortest first
    bins = wu._bins(names[1:], 2)
    assert bins == [["search.rank_learned", "batch.run_search"], ["endgame.solve", "search.playout"]]
    assert wu._bins(["batch.run_plain"], 4) == [["batch.run_plain"]]


@pytest.mark.slow
def test_warmup_compiles_into_the_cache_and_a_later_process_loads(tmp_path, capsys):
    out = _python(
        "import sys; from qwirkle_core.cli import main; sys.exit(main(['warmup', '--agents', 'greedy,random', '--no-progress']))",
        tmp_path,
    )
    assert "batch.run_plain" in out and "yes" in out and "3 of 3 kernels compiled" in out
    code = """
import qwirkle_core as qc
from qwirkle_core.batch.local import compile_seconds
from qwirkle_core._kernels import batch
seen = []
print(compile_seconds("greedy,greedy"), qc.warmup("greedy,greedy", progress=lambda *a: seen.append(a)))
print(seen, len(batch.run_plain.signatures))
"""
    lines = _python(code, tmp_path).splitlines()
    names = ["movegen.generate", "actions.apply_action", "batch.run_plain"]
    assert lines[0] == "0.0 " + str([wu.KernelTime(name, 0.0, False) for name in names])
    # each ready at once (the batch kernel is loaded by the first call)
    assert lines[1] == str([(name, True, k, 3) for k, name in enumerate(names, 1)]) + " 0"


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
    assert text.startswith("qwirkle-core: compiling the search, greedy batch kernels, about ")
    assert "qwirkle warmup" in text


_PARTS = """
from qwirkle_core._kernels import actions, endgame, leaves, movegen, search
def loaded(names):  # whether each part was loaded from the cache (not compiled) by this process
    kernels = {"endgame.solve": endgame.solve, "search.playout": search.playout,
               "search.rank_learned": search.rank_learned, "leaves.leave_codes": leaves.leave_codes,
               "movegen.generate": movegen.generate, "actions.apply_action": actions.apply_action}
    return [(sum(kernels[n].stats.cache_hits.values()), sum(kernels[n].stats.cache_misses.values())) for n in names]
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "agents, parts, first_batch",
    [
        # the search's kernel calls them unlinked: it compiles in this process after
        # its learned ranking (a miss), the leave codes, the solver and the playouts in
        # a worker (hits)
        (
            "search:time_ms=2,greedy",
            ["leaves.leave_codes", "endgame.solve", "search.playout", "search.rank_learned"],
            [(1, 0)] * 3 + [(0, 1)],
        ),
        # linked in: the longest part compiles in this process (a miss), the other in a
        # worker (a hit)
        ("greedy,random", ["movegen.generate", "actions.apply_action"], [(0, 1), (1, 0)]),
    ],
)
def test_parts_compiled_by_workers_are_the_ones_the_batch_loads(tmp_path, agents, parts, first_batch):
    """Worker processes compile a batch's parts (the search agent's endgame solver and
    playouts; the greedy batch's move generator and turn actions) into the cache with
    the very types the batch kernel calls them with: the batch loads each from the cache
    (a hit, no miss) and plays the same games as without them. A fresh process's first
    batch does the same by itself."""
    batch = wu.kernels_for(agents)[-1]
    plain = str(qc.simulate(2, agents.split(","), seed=3, threads=1).scores.tolist())
    code = f"""{_PARTS}
import qwirkle_core as qc
from qwirkle_core.batch import warmup
print([(k.name, k.compiled) for k in warmup.warmup({agents!r}, processes=2)])
r = qc.simulate(2, {agents!r}.split(","), seed=3, threads=1)
print(loaded({parts!r}), r.scores.tolist())
"""
    first, second = _python(code, tmp_path / "warmup").splitlines()
    assert first == str([(name, True) for name in (*parts, batch)])
    assert second == f"{[(1, 0)] * len(parts)} {plain}"
    code = f"""{_PARTS}
import qwirkle_core as qc
r = qc.simulate(2, {agents!r}.split(","), seed=3, threads=1)
print(loaded({parts!r}), r.scores.tolist())
"""
    out = _python(code, tmp_path / "first", QWIRKLE_COMPILE_PROCESSES="2").strip()
    assert out == f"{first_batch} {plain}"
