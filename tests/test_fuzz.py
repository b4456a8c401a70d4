"""Fuzzing every public entry point that takes outside input (issue 9).

Each test feeds arbitrary values -- wrong types, huge and negative ints, floats with
nan and inf, numpy scalars, long and odd strings, mutated JSON documents -- and checks:

* the only exceptions are the documented ones: ``ValueError`` subclasses and
  ``TypeError`` (``FormatError`` for bad JSON text, ``AgentError`` for a bad agent);
  anything else (KeyError, OverflowError, RecursionError, SystemError, a crash...)
  fails the test;
* a refused action leaves the game exactly as it was (board, hands, bag order, scores,
  random streams via ``to_json()``, and the history);
* what is accepted is consistent (it round-trips, it can be played).

Games and batches are kept tiny so the module runs in about a minute.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, event, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import qwirkle_core as qc
from qwirkle_core._kernels.layout import SPEC_COLS
from qwirkle_core.batch.rows import read_rows
from qwirkle_core.game.agents import agent_params
from qwirkle_core.game.tiles import check_tile
from strategies import CUBES, advance_cubes, examples, finished_game, mid_game

# -- values of every kind ---------------------------------------------------------------

HUGE = st.sampled_from(
    [
        2**31 - 1,
        2**31,
        -(2**31),
        2**53 + 1,
        2**63 - 1,
        2**63,
        -(2**63) - 1,
        2**64 - 1,
        2**64,
        10**30,
        -(10**30),
        10**400,
    ]
)
NUMPY = st.one_of(
    st.integers(-128, 127).map(np.int8),
    st.integers(0, 2**64 - 1).map(np.uint64),
    st.integers(-(2**63), 2**63 - 1).map(np.int64),
    st.floats(allow_nan=True, allow_infinity=True).map(np.float64),
    st.booleans().map(np.bool_),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-50, 50),
    st.integers(),
    HUGE,
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.binary(max_size=6),
    NUMPY,
)
ANY = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.tuples(inner, inner), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
TILES = st.one_of(st.integers(0, 35), st.integers(-3, 40), SCALARS)
COORDS = st.one_of(
    st.integers(-8, 8), st.integers(-(2**31) - 2, -(2**31) + 2), st.integers(2**31 - 2, 2**31 + 2), HUGE, SCALARS
)

DOCUMENTED = (ValueError, TypeError)


def outcome(call, *args, documented=DOCUMENTED, **kwargs):
    """(True, result) or (False, the documented exception); any other exception
    propagates and fails the test."""
    try:
        result = call(*args, **kwargs)
    except documented as e:
        assert str(e), f"{type(e).__name__} without a message"
        event(f"{getattr(call, '__name__', call)}: {type(e).__name__}")
        return False, e
    event(f"{getattr(call, '__name__', call)}: accepted")
    return True, result


@st.composite
def arguments(draw, valid: dict, weird: dict) -> dict:
    """Keyword arguments: each from its ``valid`` strategy but none, one or two drawn
    from ``weird`` instead, so that every check is reached, not only the first."""
    broken = draw(st.sets(st.sampled_from(sorted(weird)), max_size=2), label="broken")
    return {name: draw(weird[name] if name in broken else strategy, label=name) for name, strategy in valid.items()}


def observable(g: qc.Game):
    """Everything observable about a game (bag order and random streams included)."""
    return g.to_json(), g.history, g.board, g.scores, [g.hand(p) for p in range(g.players)]


@functools.cache
def game_pool() -> tuple[qc.Game, ...]:
    """Games in every phase: the opening, the middle, an empty bag, over, near the
    coordinate limit; and Qwirkle Cubes games: a blocked opening, the middle, right after
    a re-roll, an empty bag, over."""
    endgame = qc.Game(seed=6)
    while endgame.bag_size and not endgame.is_over:
        endgame.play_agent("greedy")
    edge = mid_game(seed=5, turns=8)
    rows = [r for r, _ in edge.board]
    shifted = qc.Game.from_position(
        board={(r + 2**31 - 1 - max(rows), c): t for (r, c), t in edge.board.items()},
        hands=[edge.hand(p) for p in range(2)],
        bag=edge.position().bag,
        current_player=edge.current_player,
        seed=1,
    )
    blocked = qc.Game.from_position(board={}, hands=[[0, 7, 14, 21, 28, 35], [1, 2, 3]], bag=[0, 1, 2], rules=CUBES)
    cubes_mid = qc.Game(seed=7, rules=qc.Rules(players=3, variant="cubes"))
    advance_cubes(cubes_mid, 12, random.Random(7))
    rerolled = cubes_mid.copy()
    rerolled.reroll(rerolled.hand()[:2])
    cubes_end = qc.Game(seed=8, rules=CUBES)
    while cubes_end.bag_size and not cubes_end.is_over:
        cubes_end.play_agent("greedy")
    cubes_over = cubes_end.copy()
    while not cubes_over.is_over:
        cubes_over.play_agent("random")
    cubes = (qc.Game(seed=9, rules=CUBES), blocked, cubes_mid, rerolled, cubes_end, cubes_over)
    return (
        qc.Game(seed=1),
        qc.Game(players=3, seed=2),
        mid_game(seed=3, turns=10),
        endgame,
        finished_game(4),
        shifted,
        *cubes,
    )


GAMES = st.integers(0, 11).map(lambda i: game_pool()[i].copy())


# -- agents -----------------------------------------------------------------------------

PARAM_NAMES = sorted({p.name for a in qc.AGENTS for p in agent_params(a)})
NUMBER_TEXT = st.one_of(
    st.integers(-5, 70).map(str),
    HUGE.map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(
        [
            "nan",
            "inf",
            "-inf",
            "1e400",
            "1e12",
            "2.5",
            "0x10",
            "",
            " ",
            "1_000",
            "٣",
            "random",
            "greedy",
            "heuristic",
            "7",
        ]
    ),
)
AGENT_TEXT = st.one_of(
    st.text(max_size=30),
    st.builds(
        lambda name, pairs, sep: name + "".join(f":{k}{sep}{v}" for k, v in pairs),
        st.one_of(st.sampled_from(qc.AGENTS), st.text(max_size=6)),
        st.lists(st.tuples(st.one_of(st.sampled_from(PARAM_NAMES), st.text(max_size=5)), NUMBER_TEXT), max_size=4),
        st.sampled_from(["=", "=", " = ", "", "=="]),
    ),
)
SPEC_ROWS = st.one_of(
    hnp.arrays(np.float64, st.integers(0, 16), elements=st.floats(allow_nan=True, allow_infinity=True)),
    hnp.arrays(np.float64, 10, elements=st.one_of(st.integers(-2, 70).map(float), st.floats(-2, 2000))),
    st.builds(
        lambda agent, col, value: _mutated_row(agent, col, value),
        st.sampled_from(qc.AGENTS),
        st.integers(0, 9),
        st.floats(allow_nan=True, allow_infinity=True),
    ),
    hnp.arrays(st.sampled_from([np.int64, np.int8, np.uint64, np.bool_, np.float32, object]), st.integers(0, 12)),
    hnp.arrays(np.float64, st.tuples(st.integers(0, 3), st.integers(0, 11))),
)


@st.composite
def near_agents(draw):
    """An agent with parameters in, at and just beyond their ranges, as text."""
    name = draw(st.sampled_from(qc.AGENTS))
    params = agent_params(name)
    pairs = []
    for p in draw(st.lists(st.sampled_from(params), max_size=3, unique=True)) if params else []:
        if p.kind == "choice":
            value = draw(
                st.sampled_from([n for n, _ in p.choices] + [str(v) for _, v in p.choices] + ["3", "-1", "mc"])
            )
        elif p.kind == "int":
            value = str(
                draw(st.one_of(st.integers(p.lo, min(p.hi, p.lo + 3)), st.sampled_from([p.lo - 1, p.hi, p.hi + 1])))
            )
        else:
            value = repr(
                draw(st.one_of(st.floats(p.lo, p.hi), st.sampled_from([p.lo, p.hi, p.hi * 1.0001, float("nan")])))
            )
        pairs.append(f"{p.name}={value}")
    return ":".join([name, *pairs])


AGENTS = st.one_of(
    near_agents(),
    AGENT_TEXT,
    SPEC_ROWS,
    st.tuples(
        st.one_of(st.sampled_from(qc.AGENTS), st.text(max_size=5)),
        st.dictionaries(st.sampled_from(PARAM_NAMES), SCALARS, max_size=3),
    ),
    st.builds(
        qc.AgentSpec,
        st.one_of(st.sampled_from(qc.AGENTS), ANY),
        st.one_of(st.lists(st.tuples(st.sampled_from(PARAM_NAMES), SCALARS), max_size=3).map(tuple), ANY),
    ),
    ANY,
)


def _mutated_row(agent: str, col: int, value: float) -> np.ndarray:
    row = qc.parse_agent(agent).row()
    row[col] = value
    return row


def cheap(spec: qc.AgentSpec, budget: int = 1000) -> bool:
    """Whether one turn of ``spec`` is quick (about ``budget`` simple turns or fewer)."""
    if spec.name == "mc":
        return int(spec.value("playouts")) * int(spec.value("candidates")) * (int(spec.value("depth")) or 60) <= budget
    if spec.name == "heuristic":
        return int(spec.value("samples")) * int(spec.value("breadth")) <= budget // 4
    if spec.name == "search":  # about WORK_PER_MS playout turns per millisecond
        return float(spec.value("time_ms")) * 100 <= budget
    return True


@examples(24)
@given(AGENTS)
def test_agents_parse_or_are_refused_with_an_agent_error(agent):
    try:
        spec = qc.parse_agent(agent)
    except qc.AgentError as e:
        assert str(e)
        return
    row = spec.row()
    assert row.dtype == np.float64 and row.shape == (SPEC_COLS,)
    assert qc.parse_agent(row).row().tolist() == row.tolist()
    assert qc.parse_agent(spec.label).row().tolist() == row.tolist()  # the label is the agent, exactly


@examples(8)
@given(GAMES, AGENTS)
def test_play_agent_with_any_agent(g, agent):
    before = observable(g)
    ok, spec = outcome(qc.parse_agent, agent)
    assume(not ok or cheap(spec))
    ok, action = outcome(g.play_agent, agent)
    if ok:
        taken = g.history[len(before[1]) :]
        assert taken[-1] == action and all(a.move.kind is qc.MoveKind.REROLL for a in taken[:-1])
        assert len(taken) == 1 or g.rules.cubes
    else:
        assert isinstance(action, (qc.AgentError, qc.IllegalMoveError)), repr(action)
        assert observable(g) == before


# -- tiles, coordinates and moves -------------------------------------------------------------


@examples(24)
@given(ANY, ANY)
def test_tiles(a, b):
    for call, args in (
        (qc.parse_tile, (a,)),
        (check_tile, (a,)),
        (qc.tile, (a, b)),
        (qc.tile_code, (a,)),
        (qc.tile_name, (a,)),
        (qc.color_of, (a,)),
    ):
        ok, result = outcome(call, *args)
        if ok:
            assert isinstance(result, (int, str))
            if isinstance(result, int):
                assert 0 <= result < (36 if call is not qc.color_of else 6)


WORDS = st.one_of(
    st.builds(
        "{}@{},{}".format,
        st.sampled_from(["R1", "p6", "B4", "R7", "Z1", "R", "R12", ""]),
        COORDS.map(str),
        COORDS.map(str),
    ),
    st.sampled_from(
        [
            "x",
            "exchange",
            "pass",
            "PASS",
            "R1",
            "b6",
            "@",
            ",",
            "R1@",
            "R1@0",
            "R1@0,",
            "R1@,0",
            "R1@0,0,0",
            "R1@+0,-0",
            "R1@1e3,0",
            "r",
            "R",
            "reroll",
            "->",
            "-",
            ">",
            "r1->r2",
        ]
    ),
    st.text(max_size=6),
)
MOVE_TEXT = st.one_of(
    st.text(max_size=40), st.lists(WORDS, max_size=8).map(" ".join), st.lists(WORDS, max_size=8).map("\t ".join)
)


@examples(24)
@given(MOVE_TEXT)
def test_move_text(text):
    ok, move = outcome(qc.Move.parse, text)
    if ok:
        assert qc.Move.parse(str(move)) == move
        assert all(abs(r) < 2**31 and abs(c) < 2**31 and 0 <= t < 36 for r, c, t in move.placements)


PLACEMENTS = st.lists(st.tuples(COORDS, COORDS, TILES), max_size=7)
MOVE_ARGS = st.one_of(
    PLACEMENTS,
    st.lists(ANY, max_size=3),
    MOVE_TEXT,
    ANY,
)


@examples(12)
@given(MOVE_ARGS)
def test_moves_from_anything(arg):
    ok, move = outcome(qc.Move, arg)
    if ok:
        assert qc.Move.parse(str(move)) == move
    outcome(qc.Move.exchange, arg)


@examples(12)
@given(
    GAMES,
    st.sampled_from(["play", "check", "exchange", "check_exchange", "pass_turn", "reroll"]),
    st.one_of(MOVE_ARGS, st.lists(TILES, max_size=7), st.none()),
    st.data(),
)
def test_game_actions_with_any_input(g, action, arg, data):
    """A refused action changes nothing; check and check_exchange never change anything."""
    if action in ("play", "check") and g.legal_moves() and data.draw(st.booleans(), label="near a legal move"):
        m = data.draw(st.sampled_from(g.legal_moves()), label="legal")
        placements = [list(p) for p in m.placements]
        if data.draw(st.booleans(), label="damaged"):
            i = data.draw(st.integers(0, len(placements) - 1), label="i")
            placements[i][data.draw(st.integers(0, 2), label="field")] = data.draw(
                st.one_of(st.integers(-3, 3).map(lambda d: placements[i][0] + d), COORDS, TILES), label="value"
            )
        arg = placements
    before = observable(g)
    ok, result = outcome(getattr(g, action), *(() if action == "pass_turn" else (arg,)))
    if not ok or action.startswith("check"):
        assert observable(g) == before
    if ok and action in ("play", "check"):
        rolled = action == "play" and g.history[-1].move.kind is qc.MoveKind.REROLL
        assert isinstance(result, int) and (result >= 1 or rolled and result == 0)
        if action == "play":
            assert g.history[-1].points == result and len(g.history) == len(before[1]) + 1
    if ok and action == "reroll":  # a re-roll keeps every cube's colour
        assert (
            g.rules.cubes
            and result == g.history[-1].move
            and [t // 6 for t in result.tiles] == [f // 6 for f in result.faces]
        )


# -- games set up from arguments -----------------------------------------------------------------


@examples(8)
@given(
    arguments(
        {
            "players": st.one_of(st.none(), st.integers(2, 6)),
            "seed": st.one_of(st.none(), st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1).map(np.uint64)),
            "rules": st.none(),
        },
        {
            "players": st.one_of(st.integers(), ANY),
            "seed": st.one_of(st.integers(), SCALARS),
            "rules": st.one_of(
                st.builds(
                    qc.Rules,
                    st.integers(2, 6),
                    st.sampled_from(["largest_group", "any_line"]),
                    st.sampled_from(["classic", "cubes"]),
                ),
                ANY,
            ),
        },
    )
)
def test_game_arguments(kwargs):
    ok, g = outcome(qc.Game, **kwargs)
    if ok:
        # a Cubes opener none of whose cubes share a colour or a shape must re-roll first (docs/rules.md)
        assert (
            2 <= g.players <= 6
            and (g.legal_moves() or g.must_reroll)
            and qc.Game.from_json(g.to_json()).to_json() == g.to_json()
        )


@st.composite
def positions(draw):
    """from_position arguments of a real game, one part maybe replaced or damaged."""
    g = draw(GAMES)
    assume(not g.is_over)
    valid = {
        "board": st.just(g.board),
        "hands": st.just([list(g.hand(p)) for p in range(g.players)]),
        "bag": st.just(list(g.position().bag)),
        "scores": st.sampled_from([None, list(g.scores)]),
        "current_player": st.just(g.current_player),
        "rules": st.sampled_from([None, g.rules]),
        "seed": st.one_of(st.none(), st.integers(0, 2**64 - 1)),
    }

    def damaged_board(board):
        cells = dict(board)
        key = draw(st.sampled_from(sorted(cells)), label="cell") if cells else (0, 0)
        t = cells.pop(key, 0)
        if draw(st.booleans(), label="key"):
            cells[
                draw(
                    st.one_of(st.tuples(COORDS, COORDS), SCALARS, st.tuples(SCALARS, SCALARS, SCALARS)), label="new key"
                )
            ] = t
        else:
            cells[key] = draw(TILES, label="new tile")
        return cells

    weird = {
        "board": st.one_of(
            st.builds(damaged_board, st.just(g.board)),
            st.dictionaries(st.tuples(COORDS, COORDS), TILES, max_size=4),
            ANY,
        ),
        "hands": st.one_of(st.lists(st.lists(TILES, max_size=7), max_size=7), ANY),
        "bag": st.one_of(st.lists(TILES, max_size=4), ANY),
        "scores": st.one_of(st.lists(SCALARS, max_size=3), ANY),
        "current_player": st.one_of(st.integers(-1, 7), SCALARS),
        "rules": st.one_of(
            st.builds(qc.Rules, st.integers(2, 6), st.just("largest_group"), st.sampled_from(["classic", "cubes"])), ANY
        ),
        "seed": SCALARS,
    }
    return draw(arguments(valid, weird))


@examples(12)
@given(positions())
def test_from_position(kwargs):
    ok, g = outcome(qc.Game.from_position, **kwargs)
    if ok:
        assert qc.Game.from_json(g.to_json()).to_json() == g.to_json()
        for m in g.legal_moves()[:3]:
            assert g.copy().play(m) == m.score


# -- JSON documents -------------------------------------------------------------------------------


@functools.cache
def documents() -> dict[str, list[dict]]:
    """Valid documents of each kind to mutate."""
    games = game_pool()
    set_up = mid_game(seed=8, turns=3)
    set_up = qc.Game.from_json(set_up.to_json())
    set_up.play_agent("greedy")
    cubes = [qc.play_game(("greedy", "random"), seed=3, rules=CUBES)]
    return {
        "position": [g.to_dict() for g in games],
        "record": [json.loads(qc.play_game(("greedy", "random"), seed=s).to_json()) for s in (1, 2)]
        + [qc.GameRecord.from_game(set_up).to_dict()]
        + [r.to_dict() for r in cubes],
        "observation": [g.observation(p).to_dict() for g in games[:5] + games[6:11] for p in (0, 1)],
    }


READERS = {"position": qc.Game.from_json, "record": qc.GameRecord.from_json, "observation": qc.Observation.from_json}
JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 200),
        HUGE,
        st.floats(allow_nan=False),
        st.text(max_size=20),
        st.sampled_from(["R1", "R1@0,0", "x R1", "pass", "qwirkle-core/position"]),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=10,
)
RAW = st.sampled_from(
    [
        "[" * 3000 + "]" * 3000,
        "9" * 5000,
        "-" + "9" * 4400,
        '"' + "x" * 20000 + '"',
        "1e400",
        "-0",
        "NaN",
        "Infinity",
        "1.5e308",
        "[[[[[[[[[[1]]]]]]]]]]",
    ]
)
_HOLE = "\u0000hole\u0000"


def _paths(value, path=()):
    """Every path (keys/indices) into a JSON value."""
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*path, i))


@st.composite
def mutated(draw, kind):
    doc = json.loads(json.dumps(draw(st.sampled_from(documents()[kind]))))
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
        paths = [p for p in _paths(doc) if p]
        path = draw(st.sampled_from(paths))
        *parents, key = path
        parent = doc
        for k in parents:
            parent = parent[k]
        how = draw(st.sampled_from(["drop", "replace", "nudge", "nudge", "raw"]))
        if how == "drop":
            del parent[key]
        elif how == "nudge":  # a value of the same kind: more often accepted, maybe inconsistent
            old = parent[key]
            if isinstance(old, bool) or old is None:
                parent[key] = draw(st.sampled_from([True, False, None, 0]))
            elif isinstance(old, int):
                parent[key] = draw(st.one_of(st.integers(-2, max(3, 2 * old)), HUGE))
            elif isinstance(old, str):
                parent[key] = draw(
                    st.one_of(
                        st.sampled_from(
                            ["R1", "P6", "B4", "R1@0,0", "R1@0,1 R2@0,2", "R1@-1,0", "x R1", "pass", "0" * 16, "f" * 16]
                        ),
                        st.builds(
                            "{}@{},{}".format,
                            st.sampled_from(["R1", "Y3", "G6"]),
                            st.integers(-3, 3),
                            st.integers(-3, 3),
                        ),
                    )
                )
            elif isinstance(old, list) and old:
                del old[draw(st.integers(0, len(old) - 1))]
            else:
                parent[key] = draw(JSON_VALUES)
        elif how == "replace":
            parent[key] = draw(JSON_VALUES)
        else:
            parent[key] = _HOLE
            return json.dumps(doc).replace(json.dumps(_HOLE), draw(RAW), 1)
    text = json.dumps(doc)
    cut = draw(st.sampled_from([None] * 6 + ["cut", "insert"]))
    if cut == "cut":
        text = text[: draw(st.integers(0, len(text)))]
    elif cut == "insert":
        i = draw(st.integers(0, len(text)))
        text = text[:i] + draw(st.text(min_size=1, max_size=3)) + text[i:]
    return text


@pytest.mark.parametrize("kind", list(READERS))
@examples(12)
@given(data=st.data())
def test_json_readers_take_mutated_documents(kind, data):
    text = data.draw(mutated(kind), label="text")
    as_bytes = data.draw(st.booleans(), label="bytes")
    try:
        value = READERS[kind](text.encode("utf-8", "surrogatepass") if as_bytes else text)
    except qc.FormatError as e:
        assert str(e)
        event(type(e).__name__)
        if kind == "record" and isinstance(e, qc.RecordError) and e.action is not None:
            assert 0 <= e.action
        return
    except UnicodeEncodeError:
        return  # a lone surrogate cannot be bytes in the first place
    event("accepted")
    assert READERS[kind](value.to_json()).to_json() == value.to_json()
    if kind == "position" and not value.is_over:  # an accepted position can be played on
        before = observable(value)
        moves = value.legal_moves()
        for m in moves[:2]:
            assert value.copy().play(m) == m.score
        ok, _ = outcome(value.copy().play_agent, "greedy")
        assert ok or moves == [] and value.bag_size == 0 or observable(value) == before
    if kind == "record":
        try:
            g = qc.replay(value)
        except qc.RecordError as e:
            assert str(e)
        else:
            assert len(g.history) == len(value.actions)


@pytest.mark.parametrize("kind", list(READERS))
@examples(4)
@given(ANY)
def test_json_readers_take_anything(kind, value):
    ok, result = outcome(READERS[kind], value)
    if not ok and isinstance(value, (str, bytes)):
        assert isinstance(result, qc.FormatError)
    ok, result = outcome(
        {"position": qc.Game.from_dict, "record": qc.GameRecord.from_dict, "observation": qc.Observation.from_dict}[
            kind
        ],
        value,
    )
    if not ok:
        assert isinstance(result, qc.FormatError)


# -- batches: simulate, evaluate_moves, tournament ---------------------------------------------------

CHEAP_AGENTS = st.sampled_from(
    [
        "random",
        "greedy",
        "heuristic",
        "heuristic:reply=1:horizon=108:breadth=2",
        "mc:playouts=2:candidates=2:depth=2:policy=greedy",
    ]
)
AGENT_LISTS = st.one_of(
    st.lists(CHEAP_AGENTS, min_size=2, max_size=3),
    st.lists(st.one_of(CHEAP_AGENTS, AGENT_TEXT, SPEC_ROWS, ANY), max_size=7),
    CHEAP_AGENTS,
    ANY,
)
VALID_SEEDS = st.one_of(
    st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1).map(np.uint64), st.integers(0, 2**63 - 1).map(np.int64)
)
CHEAP_POLICIES = st.sampled_from(["random", "greedy", "heuristic:reply=0", "heuristic:horizon=108:breadth=2"])
# game counts that are valid are kept tiny; invalid ones of every kind
BAD_COUNTS = st.one_of(
    st.integers(max_value=0), st.just(2**62 + 1), st.sampled_from([1.0, 2.5, "3", True, None, [2], np.float64(2)])
)
THREADS = st.one_of(st.none(), st.sampled_from([1, 2, np.int64(1), 10**20]), SCALARS)


@contextlib.contextmanager
def empty_folder():
    """An empty temporary working folder for the block."""
    old = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            yield folder
        finally:
            os.chdir(old)


@pytest.mark.slow
@examples(8)
@given(
    arguments(
        {
            "games": st.integers(1, 3),
            "agents": st.lists(CHEAP_AGENTS, min_size=2, max_size=3),
            "seed": VALID_SEEDS,
            "threads": st.sampled_from([None, 1, 2]),
            "rules": st.none(),
            "progress": st.sampled_from([None, lambda d, n: None]),
            "start": st.integers(0, 2**62 - 3),
            "out": st.sampled_from([None, "r.parquet", "r.csv"]),
            "keep_rows": st.sampled_from([None, True, False]),
        },
        {
            "games": BAD_COUNTS,
            "agents": AGENT_LISTS,
            "seed": SCALARS,
            "threads": THREADS,
            "rules": st.one_of(
                st.sampled_from(
                    [qc.Rules(2), qc.Rules(3, "any_line"), qc.Rules(2, variant="cubes"), qc.Rules(3, variant="cubes")]
                ),
                ANY,
            ),
            "progress": st.sampled_from(["bar", 5, print]),
            "start": st.one_of(st.integers(max_value=-1), st.just(2**62), SCALARS),
            "out": st.sampled_from(["r.txt", "/sys/r.parquet", "", "no/r.csv", ".", "r.parquet/", 5, b"r.csv"]),
            "keep_rows": st.sampled_from(["yes", 0, 1, None]),
        },
    )
)
def test_simulate_arguments(kwargs):
    games = kwargs.pop("games")
    with empty_folder() as folder:
        ok, r = outcome(
            qc.simulate, games, documented=(*DOCUMENTED, OSError), **kwargs
        )  # OSError: out cannot be written
        if not ok:
            assert os.listdir(folder) == []  # nothing written, nothing left behind
            return
        assert r.games == games and not r.interrupted
        out = kwargs["out"]
        if out is not None:
            assert len(read_rows(out)) == games and os.listdir(folder) == [Path(out).name]
        if kwargs["keep_rows"] is not False or out is not None:
            assert len(r.rows) == games


@st.composite
def evaluations(draw):
    g = draw(GAMES)
    legal = [str(m) for m in g.legal_moves()[:5]]
    valid = {
        "playouts": st.integers(2, 3),
        "policy": CHEAP_POLICIES,
        "seed": VALID_SEEDS,
        "moves": st.one_of(st.none(), st.lists(st.sampled_from(legal), max_size=2) if legal else st.none()),
        "top": st.integers(1, 3),
        "depth": st.integers(0, 3),
        "threads": st.sampled_from([None, 1, 2]),
    }
    weird = {
        "playouts": st.one_of(BAD_COUNTS, st.just(10**6 + 1)),
        "policy": AGENTS,
        "seed": SCALARS,
        "moves": st.one_of(st.lists(MOVE_ARGS, max_size=3), ANY),
        "top": st.one_of(BAD_COUNTS, st.just(1001)),
        "depth": st.one_of(st.integers(max_value=-1), st.just(10**9), SCALARS),
        "threads": THREADS,
    }
    return g, draw(arguments(valid, weird))


@examples(8)
@given(evaluations())
def test_evaluate_moves_arguments(case):
    g, kwargs = case
    ok, spec = outcome(qc.parse_agent, kwargs["policy"])
    assume(not ok or cheap(spec, budget=32))
    before = observable(g)
    ok, result = outcome(qc.evaluate_moves, g, **kwargs)
    assert observable(g) == before
    if ok:
        assert all(e.playouts == kwargs["playouts"] and 0 <= e.win_rate <= 1 for e in result)
        if kwargs["moves"] is not None:
            assert len(result) == len(kwargs["moves"])


@examples(4)
@given(
    arguments(
        {
            "agents": st.lists(CHEAP_AGENTS, min_size=2, max_size=3, unique=True),
            "games": st.just(2),
            "seed": VALID_SEEDS,
            "threads": st.sampled_from([None, 1]),
            "timing_games": st.just(1),
            "timing_seconds": st.sampled_from([0, 0.0, -0.0]),
            "progress": st.sampled_from([None, lambda d, n: None]),
        },
        {
            "agents": AGENT_LISTS,
            "games": st.one_of(BAD_COUNTS, st.sampled_from([3, 10**9 + 2])),
            "seed": SCALARS,
            "threads": THREADS,
            "timing_games": st.one_of(BAD_COUNTS, st.just(4097)),
            "timing_seconds": st.sampled_from([-1, float("nan"), float("inf"), "0", None, 10**6, [0]]),
            "progress": st.sampled_from(["bar", 5]),
        },
    )
)
def test_tournament_arguments(kwargs):
    ok, t = outcome(qc.tournament, **kwargs)
    if ok:
        assert all(m.games == kwargs["games"] for m in t.matches) and not t.interrupted
        assert len(t.matches) == len(t.agents) * (len(t.agents) - 1) // 2
