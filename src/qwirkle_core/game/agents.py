"""Built-in agents: their names, parameters (type, range, default) and parsing.

An agent is written ``name`` or ``name:key=value:key=value`` (``"mc:playouts=32"``)
and parsed into an :class:`AgentSpec`, whose :meth:`AgentSpec.row` is the float64 spec
row the kernels read. Every parameter is checked here against its documented range;
a bad name or value raises :class:`~qwirkle_core.errors.AgentError` (a ``ValueError``)
naming the agent, the parameter and the allowed range, so nothing unchecked ever
reaches a kernel.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from .._kernels import layout as _lay
from ..errors import AgentError

__all__ = [
    "AGENTS",
    "AgentLike",
    "AgentSpec",
    "Param",
    "agent_names",
    "agent_params",
    "check_cubes_agents",
    "did_you_mean",
    "parse_agent",
    "parse_agents",
    "spec_row",
]

Param = _lay.Param
AGENTS: tuple[str, ...] = tuple(_lay.AGENT_NAMES)
"""The names of the built-in agents: the one registry (the kernels' agent table,
``_kernels/layout.py``) that every help text, error message and docs table follows
(tests/test_agents_registry.py compares them)."""


def agent_names() -> str:
    """The built-in agents' names as a list for a help text or an error:
    ``"random, greedy, heuristic, ..."`` (:data:`AGENTS`, in table order)."""
    return ", ".join(AGENTS)


def agent_params(name: str) -> tuple[Param, ...]:
    """The parameters of a built-in agent, in spec-row order.

    Parameters
    ----------
    name
        an agent name (``"mc"``).

    Returns
    -------
    tuple of Param
        name, default, kind, range and doc of each.

    Raises
    ------
    AgentError
        an unknown agent.
    """
    if name not in _lay.AGENT_IDS:
        raise AgentError(f"unknown agent {name!r}{did_you_mean(name, AGENTS)}; available: {agent_names()}")
    return tuple(_lay.AGENT_PARAMS[_lay.AGENT_IDS[name]])


@dataclass(frozen=True)
class AgentSpec:
    """A built-in agent with its parameters, checked.

    Attributes
    ----------
    name
        one of :data:`AGENTS`.
    params
        the parameters given explicitly, as sorted ``(key, value)`` pairs (ints
        for integer parameters, names for choices, floats otherwise); the others
        take their defaults.

    """

    name: str
    params: tuple[tuple[str, float | int | str], ...] = ()

    @property
    def label(self) -> str:
        """The spec written back as text, e.g. ``"mc:playouts=32"``."""
        return self.name + "".join(f":{k}={_value_text(v)}" for k, v in self.params)

    def value(self, key: str) -> float | int | str:
        """The value of a parameter (its default when not given).

        Parameters
        ----------
        key
            the parameter's name.

        Returns
        -------
        float, int or str

        Raises
        ------
        KeyError
            not a parameter of this agent.
        """
        given = dict(self.params)
        for p in agent_params(self.name):
            if p.name == key:
                return given.get(key, p.default)
        raise AgentError(f"agent {self.name!r} has no parameter {key!r}")

    def row(self) -> np.ndarray:
        """The spec row the kernels read: float64[SPEC_COLS], the agent id then its
        parameters in table order. Raises AgentError for a spec made by hand with a bad
        name or parameter."""
        checked = _validated(self)
        params: dict[str, object] = dict(checked.params)
        for p in agent_params(checked.name):
            if p.kind == _lay.FILE and p.name in params:
                params[p.name] = _file_slot(p.name, str(params[p.name]))
        return _lay.make_spec(_lay.AGENT_IDS[checked.name], **params)

    def __str__(self) -> str:
        return self.label


AgentLike = Union[str, AgentSpec, "tuple[str, Mapping[str, Any]]", np.ndarray]


def parse_agent(agent: AgentLike) -> AgentSpec:
    """Parse an agent.

    Parameters
    ----------
    agent
        ``"name"``, ``"name:key=value:..."``, ``(name, {key: value})``, an
        :class:`AgentSpec` (returned as is) or a spec row (float64 array).

    Returns
    -------
    AgentSpec

    Raises
    ------
    AgentError
        naming the agent, the parameter and the allowed range.
    """
    if isinstance(agent, AgentSpec):
        _validated(agent)
        return agent
    if isinstance(agent, np.ndarray):
        return _from_row(agent)
    if isinstance(agent, tuple) and len(agent) == 2 and isinstance(agent[0], str) and isinstance(agent[1], Mapping):
        name, raw = agent[0].strip(), dict(agent[1])
        text = name
    elif isinstance(agent, str):
        text = agent.strip()
        name, raw = _split(text)
    else:
        raise AgentError(f"an agent is a name such as 'greedy' or 'mc:playouts=32', not {_short(agent)}")
    table = {p.name: p for p in agent_params(name)}
    params = []
    for key, value in raw.items():
        if key not in table:
            takes = ", ".join(table) or "no parameters"
            hint = did_you_mean(key, table)
            raise AgentError(f"agent {_short(text)}: unknown parameter {key!r}{hint}; {name} takes {takes}")
        params.append((key, _check_value(text, table[key], value)))
    return AgentSpec(name, tuple(sorted(params)))


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'greedy'?)"`` for the closest of ``choices`` to a misspelt
    ``word`` (difflib's ratio at least 0.6, case ignored), else ``""``."""
    import difflib

    lowered = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(str(word).lower(), list(lowered), n=1, cutoff=0.6)
    return f" (did you mean {lowered[close[0]]!r}?)" if close else ""


def parse_agents(agents: Iterable[AgentLike] | str) -> tuple[AgentSpec, ...]:
    """Parse several agents.

    Parameters
    ----------
    agents
        a sequence of anything :func:`parse_agent` takes, or one comma-separated str
        (``"greedy,mc"``).

    Returns
    -------
    tuple of AgentSpec

    Raises
    ------
    AgentError
        a bad agent or an empty list.
    """
    if isinstance(agents, str):
        agents = agents.split(",")
    elif isinstance(agents, (AgentSpec, np.ndarray)) or not isinstance(agents, Iterable):
        raise AgentError(f"agents must be a list of agents or a comma-separated str, not {_short(agents)}")
    parsed = tuple(parse_agent(a) for a in agents)
    if not parsed:
        raise AgentError("no agents given")
    return parsed


def spec_row(agent: AgentLike) -> np.ndarray:
    """The checked float64 spec row of ``agent`` (anything :func:`parse_agent` takes)."""
    return parse_agent(agent).row()


def _value_text(value: float | int | str) -> str:
    """A parameter value as text that parses back to exactly the same value (``1``,
    ``0.3``, ``100.9375``; ``format(v, 'g')`` would keep only 6 digits)."""
    if isinstance(value, (str, int)):
        return str(value)
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _validated(spec: AgentSpec) -> AgentSpec:
    """``spec`` parsed again from its name and parameters (an AgentSpec may have been
    made by hand, unchecked); AgentError unless they are valid and written as
    :func:`parse_agent` writes them (sorted, each once, in their stored type)."""
    params = spec.params
    if not (
        isinstance(spec.name, str)
        and isinstance(params, tuple)
        and all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in params)
    ):
        raise AgentError(f"not a valid agent: {_short(spec)}; make one with parse_agent('name:key=value')")
    checked = parse_agent((spec.name, dict(params)))
    if [(k, v, type(v)) for k, v in checked.params] != [(k, v, type(v)) for k, v in params]:
        raise AgentError(f"not a valid agent: {_short(spec)}; parse_agent would make {checked!r}")
    return checked


def _split(text: str) -> tuple[str, dict[str, str]]:
    name, *pairs = text.split(":")
    raw: dict[str, str] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise AgentError(
                f"agent {_short(text)}: parameters are written name:key=value:key=value, not {_short(pair)}"
            )
        if key.strip() in raw:
            raise AgentError(f"agent {_short(text)}: parameter {key.strip()!r} is given twice")
        raw[key.strip()] = value.strip()
    return name.strip(), raw


def _check_value(text: str, p: Param, value: Any) -> float | int | str:
    """``value`` (a str from a spec, or a number) checked against ``p``: a name for a
    choice, an int for an integer parameter, a float otherwise."""
    if p.kind == _lay.FILE:
        why = ""
        try:
            if isinstance(value, str) and value.strip():
                _file_slot(p.name, value.strip())  # loads and checks the file
                return value.strip()
            number = _number(value)
            if number is not None and math.isfinite(number) and number == int(number):
                return _file_name(p.name, int(number))
        except ValueError as e:
            why = f" ({e})"
        raise AgentError(f"agent {_short(text)}: {p.name} must be {p.allowed()}, not {_short(value)}{why}")
    if p.kind == _lay.CHOICE:
        names = dict(p.choices)
        stored = {v: n for n, v in p.choices}
        if isinstance(value, str) and value.strip() in names:
            return value.strip()
        number = _number(value)
        if number is not None and number in stored:
            return stored[int(number)]
    else:
        number = _number(value)
        if number is not None:
            try:
                p.encode(number)
            except ValueError:
                pass
            else:
                return int(number) if p.kind == _lay.INT else number
    raise AgentError(f"agent {_short(text)}: {p.name} must be {p.allowed()}, not {_short(value)}")


def _file_slot(param: str, file: str) -> int:
    """The slot of this process holding the file ``file`` (``"shipped"`` or a path) of
    the file parameter ``param`` (``weights``: a move scorer's weights, ``leaves``: a
    leave table), loading it on first use; ValueError for a file that cannot be used."""
    from .._kernels import leaves as _lv
    from .._kernels import net as _net

    return int(_net.bind_net(file) if param == "weights" else _lv.leave_slot(file))


def _file_name(param: str, slot: int) -> str:
    """The file (``"shipped"`` or its absolute path) of a slot of this process."""
    from .._kernels import leaves as _lv
    from .._kernels import net as _net

    if slot == 0:  # the shipped file, whether or not this process has loaded it yet
        return "shipped"
    return str(_net.slot_name(slot) if param == "weights" else _lv.leave_slot_name(slot))


def _number(value: Any) -> float | None:
    """``value`` as a float (a str is parsed), or None if it is not a number."""
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _from_row(row: np.ndarray) -> AgentSpec:
    """The agent of a spec row, every column checked."""
    try:
        checked = _lay.check_spec(row)
    except (TypeError, ValueError) as e:
        raise AgentError(f"spec row: {e}") from None
    agent = int(checked[_lay.SPEC_ID])
    table = _lay.AGENT_PARAMS[agent]
    given = []
    for col, p in enumerate(table, start=1):
        value = _check_value(_lay.AGENT_NAMES[agent], p, checked[col])
        if value != p.default:
            given.append((p.name, value))
    return AgentSpec(_lay.AGENT_NAMES[agent], tuple(sorted(given)))


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_cubes_agents(rows: Iterable[np.ndarray]) -> None:
    """Refuse, for a Qwirkle Cubes game, the built-in agents (spec rows, as
    :meth:`AgentSpec.row` makes) that play the tile game only: the search agent, whose
    endgame solver and playouts know no re-rolls, and the static agent, whose leave
    values were learned there. Raises AgentError naming it."""
    ids = {int(row[0]) for row in rows}
    if _lay.STATIC in ids:
        raise AgentError(
            "the static agent's leave values were learned in the tile game; in Qwirkle Cubes use heuristic or mc"
        )
    if _lay.NET in ids:
        raise AgentError(
            "the net agent's move scorer was trained in the tile game; in Qwirkle Cubes use heuristic or mc"
        )
    if _lay.SEARCH in ids:
        raise AgentError(
            "the search agent plays the tile game only (its endgame solver and playouts know no re-rolls); in Qwirkle Cubes use mc"
        )
