"""The kernels' compilation cache and their tables of agents (the kernels themselves
are tested through the API against naive.py, and in test_play_agents.py)."""

from __future__ import annotations

import numpy as np

import qwirkle_core as qc
from qwirkle_core._kernels import layout
from qwirkle_core._kernels._jit import _drop_stale_cache
from qwirkle_core.agents import agent_params


def test_kernel_cache_is_dropped_when_any_kernel_source_changes(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    cached = tmp_path / "__pycache__" / "a.f-1.py311.nbi"

    def compile_something():
        cached.parent.mkdir(exist_ok=True)
        cached.write_bytes(b"index")

    _drop_stale_cache(tmp_path)
    compile_something()
    _drop_stale_cache(tmp_path)  # nothing changed: the cache stays
    assert cached.exists()
    (tmp_path / "b.py").write_text("y = 3\n")  # a callee in another file changed
    _drop_stale_cache(tmp_path)
    assert not cached.exists()
    compile_something()
    _drop_stale_cache(tmp_path)
    assert cached.exists()


def test_the_kernels_default_specs_are_the_documented_defaults():
    assert layout.AGENT_NAMES == qc.AGENTS
    for agent_id, name in enumerate(qc.AGENTS):
        np.testing.assert_array_equal(layout.DEFAULT_SPECS[agent_id], qc.parse_agent(name).row())
        assert layout.SPEC_COLS >= 1 + len(agent_params(name))
    # the spec columns the kernels read are derived from the parameter table
    assert [layout.P_MC_PLAYOUTS, layout.P_MC_CANDIDATES, layout.P_MC_DEPTH, layout.P_MC_POLICY] == [1, 2, 3, 4]
    assert layout.MAX_CANDIDATES == agent_params("mc")[1].hi
