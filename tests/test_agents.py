"""agents.py: agent names, their parameters (type, range, default) and parsing into
AgentSpec and spec rows. Every bad name, parameter or row is an AgentError naming the
agent, the parameter and the allowed range."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import qwirkle_core as qc
from qwirkle_core._kernels.layout import SPEC_COLS as W  # a spec row's width
from qwirkle_core.game.agents import agent_params, spec_row

PARAMS = [(a, p) for a in qc.AGENTS for p in agent_params(a)]


def test_agent_names_and_parameter_tables():
    assert qc.AGENTS == ("random", "greedy", "heuristic", "mc", "search", "static", "net")
    assert agent_params("greedy") == () and agent_params("random") == ()
    for agent, p in PARAMS:
        if p.kind == "choice":
            assert p.default in dict(p.choices)
        elif p.kind == "file":
            assert p.default == "shipped" and p.encode("shipped") == 0.0
        else:
            assert p.lo <= p.default <= p.hi, (agent, p.name)
    with pytest.raises(qc.AgentError, match="unknown agent 'wizard'; available: random, greedy, heuristic, mc, search"):
        agent_params("wizard")


def test_the_forms_of_an_agent():
    spec = qc.parse_agent("mc:playouts=32:depth=0")
    assert spec == qc.AgentSpec("mc", (("depth", 0), ("playouts", 32)))
    assert spec.label == "mc:depth=0:playouts=32" and str(spec) == spec.label
    assert qc.parse_agent(" mc : playouts = 32 : depth=0 ") == spec
    assert qc.parse_agent(("mc", {"playouts": 32, "depth": 0})) == spec
    assert qc.parse_agent(spec) is spec
    assert qc.parse_agent(spec.row()).row().tolist() == spec.row().tolist()
    assert spec.value("playouts") == 32 and spec.value("candidates") == 8 and spec.value("policy") == "heuristic"
    with pytest.raises(qc.AgentError, match="agent 'mc' has no parameter 'speed'"):
        spec.value("speed")
    assert qc.parse_agent("greedy") == qc.AgentSpec("greedy") and qc.parse_agent("greedy").label == "greedy"


def test_spec_rows_hold_the_agent_id_then_its_parameters_in_table_order():
    for agent_id, agent in enumerate(qc.AGENTS):
        row = qc.parse_agent(agent).row()
        assert row.dtype == np.float64 and row.ndim == 1
        assert row[0] == agent_id
        table = agent_params(agent)
        for col, p in enumerate(table, start=1):
            expected = dict(p.choices)[p.default] if p.kind == "choice" else 0.0 if p.kind == "file" else p.default
            assert row[col] == expected, (agent, p.name)
        assert not row[1 + len(table) :].any()
    assert spec_row("mc:policy=greedy")[4] == 1.0
    assert qc.parse_agent("mc:policy=1") == qc.parse_agent("mc:policy=greedy")


@st.composite
def valid_values(draw):
    agent, p = draw(st.sampled_from(PARAMS))
    if p.kind == "choice":
        value = draw(st.sampled_from([name for name, _ in p.choices]))
    elif p.kind == "file":
        value = "shipped"
    elif p.kind == "int":
        value = draw(st.integers(p.lo, p.hi))
    else:
        value = draw(st.floats(p.lo, p.hi, allow_nan=False))
    return agent, p, value


@given(valid_values())
def test_every_value_in_range_is_taken_and_round_trips(case):
    agent, p, value = case
    text = f"{agent}:{p.name}={value!r}" if isinstance(value, float) else f"{agent}:{p.name}={value}"
    spec = qc.parse_agent(text)
    assert spec.value(p.name) == value
    col = 1 + [q.name for q in agent_params(agent)].index(p.name)
    stored = dict(p.choices)[value] if p.kind == "choice" else 0.0 if p.kind == "file" else value
    assert spec.row()[col] == stored
    assert qc.parse_agent(spec.label).row().tolist() == pytest.approx(spec.row().tolist(), rel=1e-5)
    assert qc.parse_agent((agent, {p.name: value})) == spec


def out_of_range(p):
    if p.kind == "choice":
        return ["7", "-1", "best", "", "nan"]
    if p.kind == "file":
        return ["", "no-such-file", "/no/such/folder/x"]
    bad = [str(p.lo - 1), str(p.hi + 1), "nan", "inf", "-inf", "1e400", "x", ""]
    if p.kind == "int":
        bad += [str(p.lo + 0.5), "1e12", str(10**30)]
    return bad


@pytest.mark.parametrize("agent, p", PARAMS, ids=[f"{a}:{p.name}" for a, p in PARAMS])
def test_values_out_of_range_name_the_agent_the_parameter_and_the_range(agent, p):
    for value in out_of_range(p):
        with pytest.raises(qc.AgentError) as err:
            qc.parse_agent(f"{agent}:{p.name}={value}")
        message = str(err.value)
        assert f"agent '{agent}:{p.name}={value}'" in message
        assert f"{p.name} must be {p.allowed()}" in message, message
        if p.kind not in ("choice", "file"):
            assert str(p.lo) in message.replace(".0", "") or f"{p.lo:g}" in message


def test_numbers_in_python_form_are_checked_too():
    assert qc.parse_agent(("mc", {"playouts": np.int64(5)})).value("playouts") == 5
    assert qc.parse_agent(("mc", {"playouts": 5.0})).value("playouts") == 5
    for bad in (0, 2.5, math.nan, math.inf, True, None, [3], 10**30):
        with pytest.raises(qc.AgentError, match="playouts must be an int in 1..1000000"):
            qc.parse_agent(("mc", {"playouts": bad}))


@pytest.mark.parametrize(
    "agent, message",
    [
        ("wizard", "unknown agent 'wizard'"),
        ("", "unknown agent ''"),
        (
            "heuristic:boldness=2",
            "agent 'heuristic:boldness=2': unknown parameter 'boldness'; heuristic takes group, dup",
        ),
        ("greedy:x=1", "greedy takes no parameters"),
        ("mc:playouts", "parameters are written name:key=value:key=value, not 'playouts'"),
        ("mc:=3", "parameters are written name:key=value"),
        ("mc:playouts=3:playouts=4", "parameter 'playouts' is given twice"),
        (("mc", {"speed": 1}), "unknown parameter 'speed'"),
        (5, "an agent is a name such as 'greedy' or 'mc:playouts=32', not 5"),
        (None, "an agent is a name"),
        (("mc",), "an agent is a name"),
    ],
)
def test_bad_agents_are_refused(agent, message):
    with pytest.raises(qc.AgentError, match=message):
        qc.parse_agent(agent)


def test_agent_errors_are_value_errors():
    assert issubclass(qc.AgentError, ValueError)


@pytest.mark.parametrize(
    "row, message",
    [
        (np.array([3.0]), f"spec row: a spec row has {W} values, not 1"),
        (np.zeros(W + 1), f"a spec row has {W} values, not {W + 1}"),
        (np.zeros((1, W)), "1-d numeric array"),
        (np.array(["a"] * W), "1-d numeric array"),
        (np.full(W, np.nan), "unknown agent id nan"),
        (np.r_[7.0, np.zeros(W - 1)], "unknown agent id 7"),
        (np.r_[6.0, 9.0, np.zeros(W - 2)], "no weights are loaded in slot 9"),
        (np.r_[1.5, np.zeros(W - 1)], "unknown agent id 1.5"),
        (np.r_[1.0, 1.0, np.zeros(W - 2)], "spec columns past its 0 parameter(s) must be 0"),
        (np.r_[3.0, 0.0, 8, 4, 2, np.zeros(W - 5)], "playouts must be an int in 1..1000000"),
        (np.r_[3.0, 24, 65, 4, 2, np.zeros(W - 5)], "candidates must be an int in 1..64"),
        (np.r_[3.0, 24, 8, 4, 7, np.zeros(W - 5)], "policy must be one of random, greedy, heuristic"),
        (np.r_[2.0, 0, 0.5, 6, 6, 0.5, 4, -5, 1, 0.3, np.zeros(W - 10)], "horizon must be an int in 0..108"),
        (np.r_[2.0, 0, 0.5, 6, 6, 0.5, 4, 0, 1e12, 0.3, np.zeros(W - 10)], "samples must be an int in 1..64"),
        (
            np.r_[2.0, np.inf, 0.5, 6, 6, 0.5, 4, 0, 1, 0.3, np.zeros(W - 10)],
            "group must be a finite number in -1000..1000",
        ),
    ],
)
def test_bad_spec_rows_are_refused(row, message):
    with pytest.raises(qc.AgentError, match=message.replace("(", r"\(").replace(")", r"\)")):
        qc.parse_agent(row)


def test_parse_agents():
    assert qc.parse_agents("greedy, mc:playouts=3") == (qc.AgentSpec("greedy"), qc.AgentSpec("mc", (("playouts", 3),)))
    assert qc.parse_agents(["random", qc.AgentSpec("greedy")]) == (qc.AgentSpec("random"), qc.AgentSpec("greedy"))
    with pytest.raises(qc.AgentError, match="no agents given"):
        qc.parse_agents([])
    for bad in (None, 3, qc.AgentSpec("greedy"), np.zeros(W)):
        with pytest.raises(qc.AgentError, match="agents must be a list of agents"):
            qc.parse_agents(bad)
    with pytest.raises(qc.AgentError, match="unknown agent 'nobody'"):
        qc.parse_agents("greedy,nobody")


def test_agent_parameters_are_checked_before_a_batch():
    with pytest.raises(ValueError, match="unknown parameter"):
        qc.simulate(2, agents=("heuristic:boldness=2", "greedy"))
    with pytest.raises(ValueError, match="key=value"):
        qc.simulate(2, agents=("mc:playouts", "greedy"))


@pytest.mark.parametrize(
    "spec, message",
    [
        (qc.AgentSpec("wizard"), "unknown agent 'wizard'"),
        (qc.AgentSpec("mc", (("speed", 1),)), "unknown parameter 'speed'"),
        (qc.AgentSpec("mc", (("playouts", 0),)), "playouts must be an int in 1..1000000"),
        (qc.AgentSpec(5), "not a valid agent"),
        (qc.AgentSpec("mc", 5), "not a valid agent"),
        (qc.AgentSpec("mc", (("candidates", False), ("candidates", 1))), "parse_agent would make"),
        (
            qc.AgentSpec("mc", (("playouts", 3.0),)),
            r"parse_agent would make AgentSpec\(name='mc', params=\(\('playouts', 3\),\)\)",
        ),
    ],
)
def test_agent_specs_made_by_hand_are_checked_too(spec, message):
    """An AgentSpec built directly (not by parse_agent) is checked wherever it is used."""
    for use in (
        qc.parse_agent,
        lambda s: s.row(),
        lambda s: qc.Game(seed=1).play_agent(s),
        lambda s: qc.simulate(1, agents=(s, "greedy")),
    ):
        with pytest.raises(qc.AgentError, match=message):
            use(spec)
    good = qc.AgentSpec("mc", (("playouts", 3),))
    assert qc.parse_agent(good) is good and good.row()[1] == 3


def test_labels_keep_every_digit():
    """A label is the agent exactly (it names agents in result files and tournaments)."""
    a, b = qc.parse_agent("heuristic:group=100.9375"), qc.parse_agent("heuristic:dup=0.1234561:group=2")
    assert a.label == "heuristic:group=100.9375" and b.label == "heuristic:dup=0.1234561:group=2"
    assert qc.parse_agent(a.label) == a and qc.parse_agent(b.label) == b
    assert qc.parse_agent("heuristic:dup=1.0").label == "heuristic:dup=1"
    t = qc.tournament(["heuristic:dup=0.1234561", "heuristic:dup=0.1234562"], games=2, timing_games=1, timing_seconds=0)
    assert t.agents == ("heuristic:dup=0.1234561", "heuristic:dup=0.1234562")
