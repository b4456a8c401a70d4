"""The kernels called directly: the agent parameter table and spec rows of
``_kernels/layout.py``, the unseen-tile counts, the true coordinates of a move buffer,
the Monte Carlo candidate clamp and the playouts' turn limit, the batch kernel chosen per
agent set and the disk cache."""

import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import naive
import qwirkle_core as qc
from qwirkle_core._kernels import actions as _ac
from qwirkle_core._kernels import batch as _bt
from qwirkle_core._kernels import board as _bd
from qwirkle_core._kernels import layout as _lo
from qwirkle_core._kernels import mc as _mc
from qwirkle_core._kernels import state as _st
from qwirkle_core._kernels._jit import External, drop_stale_cache, prefetch
from qwirkle_core.game.agents import agent_params

ALL_PARAMS = [(agent, p) for agent, params in enumerate(_lo.AGENT_PARAMS) for p in params]


def greedy_game(seed, turns, players=2):
    g = qc.Game(players=players, seed=seed)
    while g.turn < turns and not g.is_over:
        g.play_agent("greedy")
    return g


# -- the parameter table and spec rows ---------------------------------------------------

W = _lo.SPEC_COLS  # a spec row's width


def test_spec_columns_follow_the_parameter_table():
    assert _lo.SPEC_ID == 0 and _lo.SPEC_COLS == 1 + max(len(p) for p in _lo.AGENT_PARAMS)
    assert [_lo.AGENT_IDS[name] for name in _lo.AGENT_NAMES] == list(range(len(_lo.AGENT_NAMES)))
    heuristic = [p.name for p in _lo.AGENT_PARAMS[_lo.HEURISTIC]]
    mc = [p.name for p in _lo.AGENT_PARAMS[_lo.MONTE_CARLO]]
    assert heuristic == [
        "group",
        "dup",
        "danger",
        "setup",
        "reply",
        "breadth",
        "horizon",
        "samples",
        "follow",
        "cycle",
        "fits",
        "out",
    ]
    assert mc == ["playouts", "candidates", "depth", "policy"]
    for name in heuristic:
        assert getattr(_lo, f"P_HEUR_{name.upper()}") == 1 + heuristic.index(name)
    for name in mc:
        assert getattr(_lo, f"P_MC_{name.upper()}") == 1 + mc.index(name)
    assert _lo.param(_lo.MONTE_CARLO, "candidates").hi == _lo.MAX_CANDIDATES == 64
    # The defaults as the agents have always played them (docs/agents.md).
    np.testing.assert_array_equal(
        _lo.DEFAULT_SPECS[_lo.HEURISTIC], np.r_[2, 0.0, 0.5, 6.0, 6.0, 0.5, 4, 0, 1, 0.3, np.zeros(W - 10)]
    )
    np.testing.assert_array_equal(
        _lo.DEFAULT_SPECS[_lo.MONTE_CARLO], np.r_[3, 24, 8, 4, _lo.HEURISTIC, np.zeros(W - 5)]
    )
    for agent in range(len(_lo.AGENT_NAMES)):
        np.testing.assert_array_equal(_lo.make_spec(agent), _lo.DEFAULT_SPECS[agent])


def allowed(p, value):
    """Whether ``value`` may be given for parameter ``p``, from the documented ranges."""
    if p.kind == _lo.CHOICE:
        return value in [name for name, _ in p.choices] or any(
            value == stored and not isinstance(value, (bool, str)) for _, stored in p.choices
        )
    if isinstance(value, (bool, str)) or not math.isfinite(value) or not p.lo <= value <= p.hi:
        return False
    return p.kind == _lo.FLOAT or float(value).is_integer()


values = st.one_of(
    st.integers(-2000, 2_000_000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 64, 65, 108, 109, 0.5, -1, 10**30, True, "greedy", "heuristic", "mc", "1"]),
)


@given(st.sampled_from(ALL_PARAMS), values)
def test_make_spec_takes_exactly_the_documented_range(agent_param, value):
    agent, p = agent_param
    if allowed(p, value):
        spec = _lo.make_spec(agent, **{p.name: value})
        stored = dict(p.choices)[value] if isinstance(value, str) else value
        assert spec[1 + _lo.AGENT_PARAMS[agent].index(p)] == stored
        np.testing.assert_array_equal(_lo.check_spec(spec), spec)
    else:
        with pytest.raises(ValueError, match=f"agent '{_lo.AGENT_NAMES[agent]}': {p.name} must be"):
            _lo.make_spec(agent, **{p.name: value})


def test_make_spec_refuses_unknown_agents_and_parameters():
    for agent in (-1, len(_lo.AGENT_NAMES), 2.5, "mc", None):
        with pytest.raises(ValueError, match="unknown agent id"):
            _lo.make_spec(agent)
    with pytest.raises(ValueError, match="agent 'greedy': unknown parameter.*takes: none"):
        _lo.make_spec(_lo.GREEDY, depth=3)


def test_check_spec_refuses_rows_no_kernel_was_made_for():
    good = _lo.make_spec(_lo.MONTE_CARLO, playouts=3)
    np.testing.assert_array_equal(_lo.check_spec(good.astype(np.float32)), good)
    for row, message in [
        (np.array([3.0]), f"has {W} values, not 1"),
        (np.zeros(W + 2), f"has {W} values, not {W + 2}"),
        (np.r_[7.0, np.zeros(W - 1)], "unknown agent id"),
        (np.r_[_lo.GREEDY, 1.0, np.zeros(W - 2)], "columns past its 0 parameter"),
        (np.r_[3.0, 24, 65, 4, 2, np.zeros(W - 5)], "candidates must be an int in 1..64"),
        (np.r_[3.0, 24, 8, 4, 7, np.zeros(W - 5)], "policy must be one of random, greedy, heuristic"),
        (np.r_[2.0, np.nan, np.zeros(W - 2)], "group must be a finite number"),
    ]:
        with pytest.raises(ValueError, match=message):
            _lo.check_spec(row)
    with pytest.raises(TypeError):
        _lo.check_spec(np.array(["greedy"] * W))
    with pytest.raises(TypeError):
        _lo.check_spec(np.zeros((2, W)))


# -- unseen tiles and move coordinates ---------------------------------------------------


@pytest.mark.parametrize("players,seed,turns", [(2, 0, 0), (2, 1, 20), (3, 2, 35), (4, 3, 12), (2, 5, 60)])
def test_unseen_counts_are_the_bag_and_the_other_hands(players, seed, turns):
    g = greedy_game(seed, turns, players)
    bag = Counter(qc.parse_tile(t) for t in g.to_dict()["bag"])
    out = np.full(_st.NUM_TILE_TYPES, -5, np.int64)
    for viewer in range(players):
        a = g.kernel_arrays()
        total = _st.unseen_counts(a.hands, a.bag, a.gmeta, viewer, out)
        hidden = bag + sum((Counter(g.hand(p)) for p in range(players) if p != viewer), Counter())
        assert out.tolist() == [hidden[t] for t in range(36)] and total == sum(hidden.values())
        # All 108 tiles are in the game: the unseen ones are public knowledge.
        seen = Counter(g.board.values()) + Counter(g.hand(viewer))
        assert out.tolist() == [3 - seen[t] for t in range(36)]
        assert out.tolist() == list(g.observation(viewer).unseen)


@pytest.mark.parametrize(
    "seed,turns,shift",
    [(1, 0, (0, 0)), (2, 9, (70_001, -130_000)), (6, 24, (-(2**30), 2**30 - 60)), (7, 40, (127, -129))],
)
def test_true_coords_give_the_legal_placements_in_true_coordinates(seed, turns, shift):
    g = greedy_game(seed, turns)
    dr, dc = shift
    d = g.to_dict()
    shifted = qc.Game.from_dict({**d, "board": [_shift_cell(x, dr, dc) for x in d["board"]]}) if g.board else g
    gs = shifted.kernel_arrays()
    moves, n = _ac.legal_moves(gs, np.zeros((8, _lo.MOVE_COLS), np.int32), False)  # grown as needed
    rows, cols = _bd.true_coords(gs.bmeta, moves[:n, _lo.M_CELL : _lo.M_CELL + 6])
    found = {}
    for i in range(n):
        k = moves[i, _lo.M_N]
        found[
            frozenset(zip(rows[i, :k].tolist(), cols[i, :k].tolist(), moves[i, _lo.M_TILE : _lo.M_TILE + k].tolist()))
        ] = int(moves[i, _lo.M_SCORE])
        cells = moves[i, _lo.M_CELL : _lo.M_CELL + k]
        assert [
            (_bd.unwrap(c >> _bd.GRID_BITS, gs.bmeta[_lo.B_MINR]), _bd.unwrap(c & _bd.GMASK, gs.bmeta[_lo.B_MINC]))
            for c in cells
        ] == list(zip(rows[i, :k], cols[i, :k]))
    opening = int(_st.opening_len(gs.gmeta)) or None
    assert len(found) == n and found == naive.naive_legal_placements(shifted.board, shifted.hand(), opening)


def _shift_cell(text, dr, dc):
    """A board group of a position dict ("R1@r,c R2@r,c ...") moved by (dr, dc)."""
    out = []
    for placed in text.split():
        tile, cell = placed.split("@")
        r, c = (int(x) for x in cell.split(","))
        out.append(f"{tile}@{r + dr},{c + dc}")
    return " ".join(out)


# -- Monte Carlo: the candidate clamp and the playouts' turn limit -----------------------


@pytest.mark.parametrize("limit,expected", [(1000, 64), (65, 64), (64, 64), (5, 5), (0, 64), (-3, 64)])
def test_candidates_never_pass_the_scratch(limit, expected):
    rng = np.random.default_rng(limit % 17)
    n = 200
    moves = rng.integers(0, 1000, (n, _lo.MOVE_COLS)).astype(np.int32)
    moves[:, _lo.M_N] = rng.integers(1, 7, n)
    values = rng.permutation(n).astype(np.float64)
    big = np.full((100, _lo.CAND_COLS), -7, np.int64)
    k = _mc.candidates_from_values(moves, n, values, limit, big[: _lo.MAX_CANDIDATES])
    assert k == expected
    assert (big[_lo.MAX_CANDIDATES :] == -7).all()
    best = np.argsort(-values)[:k]
    for row, i in zip(big[:k], best):
        m = moves[i, _lo.M_N]
        assert row[_lo.A_KIND] == _lo.PLACE and row[_lo.A_N] == m and row[_lo.A_POINTS] == moves[i, _lo.M_SCORE]
        assert row[_lo.A_CELL : _lo.A_CELL + m].tolist() == moves[i, _lo.M_CELL : _lo.M_CELL + m].tolist()
        assert row[_lo.A_TILE : _lo.A_TILE + m].tolist() == moves[i, _lo.M_TILE : _lo.M_TILE + m].tolist()


def test_a_raw_spec_asking_for_too_many_candidates_plays_like_the_largest_allowed():
    """Python refuses candidates > 64, but a spec row that bypasses it must not write past
    the kernel's scratch: it plays exactly like candidates=64."""

    def batch(candidates):
        spec = _lo.make_spec(_lo.MONTE_CARLO, playouts=2, depth=2)
        spec[_lo.P_MC_CANDIDATES] = candidates
        specs = np.stack([spec, _lo.make_spec(_lo.GREEDY)])
        games = 3
        scores, qwirkles = np.zeros((games, 2), np.int32), np.zeros((games, 2), np.int16)
        stats = np.zeros((games, _lo.STATS), np.int32)
        _bt.run_games(_bt.seeds_for(np.uint64(5), 0, games), specs, 0, scores, qwirkles, stats)
        return scores.tolist(), stats.tolist()

    assert batch(1000) == batch(64)
    assert batch(64) != batch(8)


@pytest.mark.parametrize("turn", [4_999, 5_000, 10**6])
def test_playouts_count_their_turn_limit_from_the_root(turn):
    """A position's turn counter (however large) does not cut its playouts short: the
    same position at turn 14 and at ``turn`` evaluates and plays identically."""
    g = greedy_game(4, 14)
    late = qc.Game.from_dict({**g.to_dict(), "turn": turn})
    a = qc.evaluate_moves(g, playouts=6, top=3, seed=1, threads=1)
    b = qc.evaluate_moves(late, playouts=6, top=3, seed=1, threads=1)
    assert [(e.move, e.margin, e.margin_se) for e in a] == [(e.move, e.margin, e.margin_se) for e in b]
    assert all(e.margin_se > 0 for e in b)
    for seed in range(4):
        g = greedy_game(seed, 10 + seed)
        late = qc.Game.from_dict({**g.to_dict(), "turn": turn})
        agent = "mc:playouts=3:candidates=4:depth=0:policy=1"
        assert g.play_agent(agent).move == late.play_agent(agent).move


def test_kernel_cache_is_dropped_when_any_kernel_source_changes(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    cached = tmp_path / "__pycache__" / "a.f-1.py311.nbi"

    def compile_something():
        cached.parent.mkdir(exist_ok=True)
        cached.write_bytes(b"index")

    drop_stale_cache(tmp_path)
    compile_something()
    drop_stale_cache(tmp_path)  # nothing changed: the cache stays
    assert cached.exists()
    (tmp_path / "b.py").write_text("y = 3\n")  # a callee in another file changed
    drop_stale_cache(tmp_path)
    assert not cached.exists()
    compile_something()
    drop_stale_cache(tmp_path)
    assert cached.exists()


def _python(code, **env):
    """The stdout of ``python -c code`` in a fresh process (its own numba dispatchers)."""
    return subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True, check=True
    ).stdout.split()


def test_a_stale_cache_under_numba_cache_dir_is_dropped(tmp_path):
    """With NUMBA_CACHE_DIR set, numba caches the kernels there, not in the package: the
    stamp is kept, and the stale cache dropped, in the folder numba uses."""
    code = "from qwirkle_core._kernels import _jit; print(_jit.cache_folder())"
    folder = Path(_python(code, NUMBA_CACHE_DIR=str(tmp_path))[0])
    assert folder.parent == tmp_path and (folder / "kernels.stamp").exists()
    stale = folder / "batch.run_plain-77.py311.nbi"
    stale.write_bytes(b"index of other sources")
    (folder / "kernels.stamp").write_text("a hash of other sources")
    assert Path(_python(code, NUMBA_CACHE_DIR=str(tmp_path))[0]) == folder
    assert not stale.exists() and (folder / "kernels.stamp").read_text() != "a hash of other sources"


def test_a_batch_compiles_only_the_kernel_of_its_agents():
    """Random and greedy batches share the smallest kernel; the heuristic, the search
    and the Monte Carlo agents each add a larger one, and a mixture of them the one that
    knows every agent. A greedy batch neither compiles nor loads them (nor the
    heuristic)."""
    kind = {
        name: _bt.kernel_for(np.stack([_lo.make_spec(_lo.AGENT_IDS[name])] * 2)).__name__ for name in _lo.AGENT_NAMES
    }
    assert kind == {
        "random": "run_plain",
        "greedy": "run_plain",
        "heuristic": "run_heuristic",
        "mc": "run_mc",
        "search": "run_search",
        "static": "run_static",
        "net": "run_net",
    }
    assert _bt.kernel_for(np.stack([_lo.make_spec(_lo.NET), _lo.make_spec(_lo.STATIC)])).__name__ == "run_net"
    mixed = np.stack([_lo.make_spec(_lo.SEARCH), _lo.make_spec(_lo.MONTE_CARLO)])
    assert _bt.kernel_for(mixed).__name__ == "run_any"
    code = """
import qwirkle_core as qc
from qwirkle_core._kernels import batch, mc, policies
from qwirkle_core.batch.local import compile_seconds
qc.simulate(3, ("greedy", "random"), seed=1, threads=1)
print(compile_seconds(("greedy", "greedy")), len(batch.run_plain.signatures))
print(len(batch.run_heuristic.signatures), len(batch.run_any.signatures), len(mc.mc_choose.signatures), len(policies.reply_choose.signatures), len(policies.heuristic_fill.signatures))
"""
    out = _python(code)
    assert float(out[0]) == 0.0 and out[1] == "1"  # compiled or loaded, and now cached
    assert out[2:] == ["0", "0", "0", "0", "0"]


def test_the_kernels_default_specs_are_the_documented_defaults():
    assert _lo.AGENT_NAMES == qc.AGENTS
    for agent_id, name in enumerate(qc.AGENTS):
        np.testing.assert_array_equal(_lo.DEFAULT_SPECS[agent_id], qc.parse_agent(name).row())
        assert _lo.SPEC_COLS >= 1 + len(agent_params(name))
    # the spec columns the kernels read are derived from the parameter table
    assert [_lo.P_MC_PLAYOUTS, _lo.P_MC_CANDIDATES, _lo.P_MC_DEPTH, _lo.P_MC_POLICY] == [1, 2, 3, 4]
    assert _lo.MAX_CANDIDATES == agent_params("mc")[1].hi


def test_an_unlinked_call_raises_until_bound_then_calls_its_kernel():
    """``_jit.External``: a kernel's call of another through a pointer (the search's
    solver and playouts). Unbound, or bound for other argument types, it raises; bound,
    it returns the callee's value and passes its errors on."""
    import numba
    from numba import types

    @numba.njit
    def scaled_sum(a, k):
        if k < 0:
            raise ValueError("a negative factor")
        return a.sum() * k

    ext = External("tests.scaled_sum", lambda a, k: types.float64)
    call = ext.call

    @numba.njit
    def caller(a, k):
        return call(a, k) + 1.0

    a = np.arange(4.0)
    with pytest.raises(RuntimeError, match="tests.scaled_sum is not bound"):
        caller(a, 2)
    ext.bind(scaled_sum, (numba.typeof(a), types.int64))
    assert caller(a, 2) == 13.0
    with pytest.raises(ValueError, match="a negative factor"):
        caller(a, -1)
    with pytest.raises(RuntimeError, match="not bound for these argument types"):
        caller(a.astype(np.float32), 2)
    wrong = External("tests.wrong_return", lambda a, k: types.int64)
    with pytest.raises(TypeError, match="returns float64, not int64"):
        wrong.bind(scaled_sum, (numba.typeof(a), types.int64))


def test_prefetch_takes_an_index_per_axis_and_changes_no_value():
    """``_jit.prefetch`` (the batched environment's hint to the caches): any integer
    types, one per axis; the kernel's results are those without it; a wrong number of
    indices is a typing error."""
    import numba

    @numba.njit
    def summed(flat, grid, cube):
        total = 0.0
        for i in range(flat.shape[0]):
            prefetch(flat, np.int16(i))
            prefetch(grid, i, np.int32(i))
            prefetch(cube, np.uint8(i), i, 0)
            total += flat[i] + grid[i, i] + cube[i, i, 0]
        return total

    flat, grid, cube = np.arange(5.0), np.arange(25, dtype=np.int32).reshape(5, 5), np.ones((5, 5, 2), np.int8)
    before = (flat.copy(), grid.copy(), cube.copy())
    assert summed(flat, grid, cube) == flat.sum() + np.trace(grid) + 5
    assert all(np.array_equal(a, b) for a, b in zip(before, (flat, grid, cube)))

    @numba.njit
    def one_index_short(grid):
        prefetch(grid, 1)

    with pytest.raises(numba.core.errors.TypingError):
        one_index_short(grid)
