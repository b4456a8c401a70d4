"""The named fields of the kernels' arrays: the one place that says which slot is what.

No kernel reads a bare offset: action words, move-buffer and candidate rows, the game
counters ``gmeta``, the board counters ``bmeta``, the batch's stats columns and the
agent spec rows are read through the constants below, and the tuples of arrays the
kernels pass around (the game state, the agent scratch, the Monte Carlo root) are named
tuples. Numba lowers a ``collections.namedtuple`` to the same struct as a plain tuple
(a field read is a constant-index read), so the names cost nothing at run time.

The agent parameter table :data:`AGENT_PARAMS` lists, per agent id, its parameters in
spec-column order with default, type and allowed range; the spec columns (``P_*``),
the spec width and :func:`make_spec` are derived from it, and the Python layer parses
and validates ``name:key=value`` agents from the same table. This module is plain
Python and numpy (no numba): it is imported by every kernel and by the Python layer.
"""

import math
from collections import namedtuple
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

# -- action words: int64[ACT_SIZE], one action of the current player ---------------------
# A_KIND the kind (PLACE, EXCHANGE, PASS, REROLL); A_N the tile count n; A_POINTS the
# points of a placement (without the going-out bonus); A_QWIRKLES the Qwirkles it made
# (set when it is applied); A_CELL + i the wrapped cell of tile i (placements); A_TILE + i
# tile i. A re-roll (Qwirkle Cubes) has no cells: A_FACE + i is the face cube i shows
# after the roll (written when it is applied).
A_KIND, A_N, A_POINTS, A_QWIRKLES, A_CELL, A_TILE = 0, 1, 2, 3, 4, 10
A_FACE = A_CELL
ACT_SIZE = 16
PLACE, EXCHANGE, PASS, REROLL = 0, 1, 2, 3

# -- candidate rows of the Monte Carlo agent and of evaluate: action words ---------------
CAND_COLS = ACT_SIZE
MAX_CANDIDATES = 64  # rows of the agent's candidate scratch; a larger limit is clamped

# -- move-buffer rows: int32[capacity, MOVE_COLS], one legal placement each -------------
# M_N the tile count n, M_SCORE its points, M_CELL + i the wrapped cells, M_TILE + i the
# tiles, in order along the line.
M_N, M_SCORE, M_CELL, M_TILE = 0, 1, 2, 8
MOVE_COLS = 14

# -- board counters: int64[BMETA] -------------------------------------------------------
# the tile count, the anchor count and the tiles' bounding box in true coordinates.
B_TILES, B_ANCHORS, B_MINR, B_MAXR, B_MINC, B_MAXC = 0, 1, 2, 3, 4, 5
BMETA = 8

# -- game counters: int64[GMETA] ----------------------------------------------------------
G_PLAYERS = 0
G_CURRENT = 1
G_BAG = 2  # tiles in the bag
G_PASSES = 3  # consecutive passes
G_OVER = 4
G_OPENING = 5  # 1 while the opening is still to be played
G_OPEN_LEN = 6  # exact opening length, 0 for any
G_TURNS = 7
G_RULE_OPENING = 8  # 0 largest group, 1 any line
G_STARTER = 9
G_WINNER = 10  # -1 tie, -2 not over
G_PLACED = 11  # tiles placed on the board in the game
G_VARIANT = 12  # CLASSIC or CUBES (read by the Python layer; the Cubes kernels are cubes.py)
G_REROLLED = 13  # Cubes: 1 once the current player has re-rolled in this turn
G_SCORE = 16  # G_SCORE + p: seat p's score (8 slots)
G_HAND = 24  # G_HAND + p: seat p's hand size
G_QWIRKLES = 32  # G_QWIRKLES + p: seat p's Qwirkles
GMETA = 40

# -- variants: the tile game and Qwirkle Cubes (gmeta[G_VARIANT]) -------------------------
CLASSIC, CUBES = 0, 1

# -- random streams: uint64[STREAMS] per game (see rng.py) -------------------------------
# R_GAME the shuffle, draws, exchanges and (Cubes) rolls; R_AGENTS the agents' tie-breaks and sampling.
R_GAME, R_AGENTS = 0, 1
STREAMS = 2

# -- batch stats: int32[games, STATS], one row per game ----------------------------------
S_WINNER, S_TURNS, S_PLACED, S_STARTER, S_TRUNCATED = 0, 1, 2, 3, 4
STATS = 5

# -- tuples of arrays --------------------------------------------------------------------
GameState = namedtuple("GameState", "board cross anchors bmeta hands bag gmeta rng gen_scratch act")
GameState.__doc__ = """One game's arrays as the kernels pass them: the board arrays of
:mod:`.board` (``board, cross, anchors, bmeta``), the game arrays of :mod:`.state`
(``hands, bag, gmeta, rng``), the move generator's scratch ``gen_scratch``
(:func:`.movegen.new_scratch_array`) and the action word ``act`` (int64[ACT_SIZE])."""

AgentScratch = namedtuple("AgentScratch", "values work sim sim_moves sim_values root search net")
AgentScratch.__doc__ = """What an agent may need beyond its game, made once per thread:
``values`` float64[>= moves] (the policies' move values), ``work`` the heuristic's
float64 scratch (``policies.HEURISTIC_WORK``), ``sim`` a scratch :class:`GameState`
the playouts rebuild from the root, with its move buffer ``sim_moves`` and values
``sim_values``, the :class:`RootScratch` ``root`` and the search agent's scratch
``search`` (:class:`.search.SearchScratch`) and the move scorer's ``net``
(:func:`.net.new_net_scratch`)."""

RootScratch = namedtuple("RootScratch", "rows cols tiles cells cands policy undo")
RootScratch.__doc__ = """The Monte Carlo agent's root position and candidates: the board
as a tile list in true coordinates (``rows, cols`` int64[108], ``tiles`` int8[108]),
``cells`` int64[108] the scratch to put it down, ``cands`` int64[MAX_CANDIDATES,
CAND_COLS] the candidate action words, ``policy`` float64[SPEC_COLS] the playout
policy's spec, and ``undo`` (:func:`.board.new_undo_stack` of one slot) for the heuristic's reply search."""

# -- agents ------------------------------------------------------------------------------
RANDOM, GREEDY, HEURISTIC, MONTE_CARLO, SEARCH, STATIC, NET = 0, 1, 2, 3, 4, 5, 6
AGENT_NAMES = ("random", "greedy", "heuristic", "mc", "search", "static", "net")  # indexed by agent id
AGENT_IDS = MappingProxyType({name: i for i, name in enumerate(AGENT_NAMES)})

FLOAT, INT, CHOICE, FILE = "float", "int", "choice", "file"
MAX_WEIGHT_SLOTS = 64  # weights files (and leave tables) one process may load


@dataclass(frozen=True)
class Param:
    """One agent parameter: its spec column is 1 + its index in the agent's tuple.

    ``kind`` is FLOAT (a finite number in ``lo .. hi``), INT (an integer in ``lo ..
    hi``), CHOICE (one of the names in ``choices``, ``(name, stored value)`` pairs;
    ``lo`` and ``hi`` are None) or FILE (a weights file: ``"shipped"`` or a path in the
    Python layer, which loads it into a slot of the process; the spec row stores the
    slot, an integer in ``lo .. hi``, 0 the shipped file). ``default`` is a value of that kind (a name for a
    CHOICE). A spec row stores every value as a float64.
    """

    name: str
    default: float | int | str
    kind: str
    lo: float | int | None
    hi: float | int | None
    doc: str
    choices: tuple[tuple[str, int], ...] = ()

    def allowed(self) -> str:
        """The allowed values in words, for error messages: ``an int in 1..64``."""
        if self.kind == CHOICE:
            return "one of " + ", ".join(name for name, _ in self.choices)
        if self.kind == INT:
            return f"an int in {self.lo}..{self.hi}"
        if self.kind == FILE:
            return "'shipped' or the path of a weights file (.npz)"
        return f"a finite number in {self.lo:g}..{self.hi:g}"

    def encode(self, value: object) -> float:
        """The spec-row value of ``value``; raises ValueError if it is not allowed.

        A CHOICE takes a name of ``choices`` or its stored number; an INT takes an int
        or an integral float (the stored form).
        """
        if self.kind == CHOICE:
            for name, stored in self.choices:
                if value == name or (_is_number(value) and value == stored):
                    return float(stored)
        elif self.kind == FILE and value == "shipped":
            return 0.0
        elif _is_number(value) and math.isfinite(value) and self.lo <= value <= self.hi:
            if self.kind == FLOAT or float(value).is_integer():
                return float(value)
        raise ValueError(f"{self.name} must be {self.allowed()}, not {value!r}")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


_POLICIES = tuple((name, AGENT_IDS[name]) for name in ("random", "greedy", "heuristic"))
POLICY_AUTO = 99  # the search's policy "auto" (stored; no agent id): static with eval learned, else heuristic
_SEARCH_POLICIES = (("auto", POLICY_AUTO), *_POLICIES, ("static", AGENT_IDS["static"]))
EVAL_HEURISTIC, EVAL_LEARNED, EVAL_NET = 0, 1, 2  # values of the search's eval parameter

AGENT_PARAMS = (
    (),  # random
    (),  # greedy
    (  # heuristic (see policies.heuristic_values and policies.reply_choose)
        Param("group", 0.0, FLOAT, -1000.0, 1000.0, "weight of the leave's largest group of one colour or shape"),
        Param("dup", 0.5, FLOAT, -1000.0, 1000.0, "penalty per duplicate tile left in the hand"),
        Param("danger", 6.0, FLOAT, -1000.0, 1000.0, "penalty per expected Qwirkle handed to the next player"),
        Param("setup", 6.0, FLOAT, -1000.0, 1000.0, "bonus per Qwirkle the mover can complete next turn"),
        Param("reply", 0.5, FLOAT, -1000.0, 1000.0, "weight of the next player's best reply (0: no reply search)"),
        Param("breadth", 4, INT, 1, 64, "placements whose reply is searched"),
        Param("horizon", 0, INT, 0, 108, "search replies once the bag holds at most this many tiles"),
        Param("samples", 1, INT, 1, 64, "next-player hands sampled while the bag has tiles"),
        Param("follow", 0.3, FLOAT, -1000.0, 1000.0, "weight of the leave's best single-tile score now"),
        Param("cycle", 0.0, FLOAT, -1000.0, 1000.0, "bonus per tile placed"),
        Param(
            "fits", 0.0, FLOAT, -1000.0, 1000.0, "bonus per distinct leave tile that fits somewhere on the board now"
        ),
        Param(
            "out",
            0.0,
            FLOAT,
            -1000.0,
            1000.0,
            "bonus for going out: a placement of the whole hand once the bag is empty",
        ),
    ),
    (  # mc (see mc.mc_choose)
        Param("playouts", 24, INT, 1, 1_000_000, "playouts per candidate"),
        Param("candidates", 8, INT, 1, MAX_CANDIDATES, "the policy's best placements that are played out"),
        Param("depth", 4, INT, 0, 10_000, "turns played after the candidate (0: to the end of the game)"),
        Param("policy", "heuristic", CHOICE, None, None, "the agent that plays every seat in the playouts", _POLICIES),
    ),
    (  # search (see search.search_choose)
        Param(
            "time_ms",
            50.0,
            FLOAT,
            0.1,
            600_000.0,
            "milliseconds per decision (as work on the reference machine, or on the clock)",
        ),
        Param(
            "budget",
            "work",
            CHOICE,
            None,
            None,
            "work: a fixed amount of work per millisecond (reproducible); clock: the true time",
            (("work", 0), ("clock", 1)),
        ),
        Param("candidates", 12, INT, 1, MAX_CANDIDATES, "the best moves by the evaluation (eval) that are searched"),
        Param("depth", 4, INT, 0, 10_000, "turns played after the candidate (0: to the end of the game)"),
        Param(
            "policy",
            "auto",
            CHOICE,
            None,
            None,
            "the agent that plays every seat in the playouts (auto: static with eval learned, heuristic with eval"
            " heuristic)",
            _SEARCH_POLICIES,
        ),
        Param(
            "solver", 1, INT, 0, 1, "1: the exact endgame solver once the bag is empty (two players); 0: keep searching"
        ),
        Param(
            "outlook",
            1.05,
            FLOAT,
            -1000.0,
            1000.0,
            "weight of the best score each side could make next, at a playout's horizon (mover's minus its rival's)",
        ),
        Param(
            "tempo",
            0.24,
            FLOAT,
            -1000.0,
            1000.0,
            "extra weight of the best next score of the side to move at a playout's horizon",
        ),
        Param(
            "finish", 12, INT, 0, 108, "playouts go to the end of the game once the bag holds at most this many tiles"
        ),
        Param(
            "win",
            6.0,
            FLOAT,
            0.0,
            1000.0,
            "points added to a playout's value when it ends the game with the mover ahead (taken off when behind)",
        ),
        Param(
            "pcycle",
            1.0,
            FLOAT,
            -1000.0,
            1000.0,
            "the playouts' heuristic (policy heuristic): its cycle, a bonus per tile placed",
        ),
        Param(
            "pfits",
            0.25,
            FLOAT,
            -1000.0,
            1000.0,
            "the playouts' heuristic (policy heuristic): its fits, a bonus per distinct leave tile that fits on the board now",
        ),
        Param(
            "pgroup",
            0.0,
            FLOAT,
            -1000.0,
            1000.0,
            "the playouts' heuristic (policy heuristic): its group, the weight of the leave's largest group",
        ),
        Param(
            "pdup",
            0.5,
            FLOAT,
            -1000.0,
            1000.0,
            "the playouts' heuristic (policy heuristic): its dup, the penalty per duplicate tile left in the hand",
        ),
        Param(
            "pout",
            0.0,
            FLOAT,
            -1000.0,
            1000.0,
            "the playouts' heuristic (policy heuristic): its out, the bonus for going out",
        ),
        Param(
            "eval",
            "learned",
            CHOICE,
            None,
            None,
            "the evaluation that ranks the candidates (and, with policy auto, plays the playouts): learned: the"
            " static agent's (learned leave values; the best exchange competes), heuristic: the heuristic's"
            " (placements only; the search before the learned values), net: the learned move scorer's"
            " (weights; every listed move, exchanges included)",
            (("heuristic", EVAL_HEURISTIC), ("learned", EVAL_LEARNED), ("net", EVAL_NET)),
        ),
        Param(
            "weights",
            "shipped",
            FILE,
            0,
            MAX_WEIGHT_SLOTS - 1,
            "the move scorer's weights with eval net: 'shipped' or the path of a weights file (.npz)",
        ),
        Param(
            "leaves",
            "shipped",
            FILE,
            0,
            MAX_WEIGHT_SLOTS - 1,
            "the leave values of eval learned and of the static playout policy: 'shipped' or the path of a leave"
            " table (.json, qwirkle learn)",
        ),
    ),
    (  # static (see leaves.static_choose)
        Param("leave", 1.0, FLOAT, -1000.0, 1000.0, "weight of the learned value of the tiles kept (leaves.json)"),
        Param("danger", 6.0, FLOAT, -1000.0, 1000.0, "penalty per expected Qwirkle handed to the next player"),
        Param("setup", 6.0, FLOAT, -1000.0, 1000.0, "bonus per Qwirkle the mover can complete next turn"),
        Param("follow", 0.0, FLOAT, -1000.0, 1000.0, "weight of the leave's best single-tile score now"),
        Param(
            "fits", 0.0, FLOAT, -1000.0, 1000.0, "bonus per distinct leave tile that fits somewhere on the board now"
        ),
        Param(
            "exchange",
            1,
            INT,
            0,
            1,
            "1: exchange instead of placing when the kept tiles are worth more; 0: only when it cannot place",
        ),
        Param(
            "leaves",
            "shipped",
            FILE,
            0,
            MAX_WEIGHT_SLOTS - 1,
            "the leave values: 'shipped' or the path of a leave table (.json, qwirkle learn)",
        ),
    ),
    (  # net (see net.net_choose)
        Param(
            "weights",
            "shipped",
            FILE,
            0,
            MAX_WEIGHT_SLOTS - 1,
            "the move scorer's weights: 'shipped' or the path of a weights file (.npz, qwirkle learn net)",
        ),
    ),
)
SPEC_ID = 0
SPEC_COLS = 1 + max(len(params) for params in AGENT_PARAMS)


def param(agent: int, name: str) -> Param:
    """The :class:`Param` ``name`` of agent id ``agent``; raises KeyError if it has none."""
    for p in AGENT_PARAMS[agent]:
        if p.name == name:
            return p
    raise KeyError(f"agent {AGENT_NAMES[agent]!r} has no parameter {name!r}")


def _column(agent: int, name: str) -> int:
    return 1 + AGENT_PARAMS[agent].index(param(agent, name))


P_HEUR_GROUP = _column(HEURISTIC, "group")
P_HEUR_DUP = _column(HEURISTIC, "dup")
P_HEUR_DANGER = _column(HEURISTIC, "danger")
P_HEUR_SETUP = _column(HEURISTIC, "setup")
P_HEUR_REPLY = _column(HEURISTIC, "reply")
P_HEUR_BREADTH = _column(HEURISTIC, "breadth")
P_HEUR_HORIZON = _column(HEURISTIC, "horizon")
P_HEUR_SAMPLES = _column(HEURISTIC, "samples")
P_HEUR_FOLLOW = _column(HEURISTIC, "follow")
P_HEUR_CYCLE = _column(HEURISTIC, "cycle")
P_HEUR_FITS = _column(HEURISTIC, "fits")
P_HEUR_OUT = _column(HEURISTIC, "out")
P_MC_PLAYOUTS = _column(MONTE_CARLO, "playouts")
P_MC_CANDIDATES = _column(MONTE_CARLO, "candidates")
P_MC_DEPTH = _column(MONTE_CARLO, "depth")
P_MC_POLICY = _column(MONTE_CARLO, "policy")
P_SEARCH_TIME = _column(SEARCH, "time_ms")
P_SEARCH_BUDGET = _column(SEARCH, "budget")
P_SEARCH_CANDIDATES = _column(SEARCH, "candidates")
P_SEARCH_DEPTH = _column(SEARCH, "depth")
P_SEARCH_POLICY = _column(SEARCH, "policy")
P_SEARCH_SOLVER = _column(SEARCH, "solver")
P_SEARCH_OUTLOOK = _column(SEARCH, "outlook")
P_SEARCH_TEMPO = _column(SEARCH, "tempo")
P_SEARCH_FINISH = _column(SEARCH, "finish")
P_SEARCH_WIN = _column(SEARCH, "win")
P_SEARCH_PCYCLE = _column(SEARCH, "pcycle")
P_SEARCH_PFITS = _column(SEARCH, "pfits")
P_SEARCH_PGROUP = _column(SEARCH, "pgroup")
P_SEARCH_PDUP = _column(SEARCH, "pdup")
P_SEARCH_POUT = _column(SEARCH, "pout")
P_SEARCH_EVAL = _column(SEARCH, "eval")
P_SEARCH_WEIGHTS = _column(SEARCH, "weights")
P_SEARCH_LEAVES = _column(SEARCH, "leaves")
P_NET_WEIGHTS = _column(NET, "weights")
P_STATIC_LEAVE = _column(STATIC, "leave")
P_STATIC_DANGER = _column(STATIC, "danger")
P_STATIC_SETUP = _column(STATIC, "setup")
P_STATIC_FOLLOW = _column(STATIC, "follow")
P_STATIC_FITS = _column(STATIC, "fits")
P_STATIC_EXCHANGE = _column(STATIC, "exchange")
P_STATIC_LEAVES = _column(STATIC, "leaves")
MAX_SAMPLES = param(HEURISTIC, "samples").hi  # the reply search clamps its sample count to it


def make_spec(agent_id: int, **params: object) -> np.ndarray:
    """The spec row (float64[SPEC_COLS]) of agent ``agent_id`` with ``params`` (by
    name; defaults for those not given). Raises ValueError naming the agent and the
    parameter for an unknown agent id, an unknown parameter or a value out of range."""
    if not (_is_number(agent_id) and 0 <= agent_id < len(AGENT_NAMES) and agent_id == int(agent_id)):
        raise ValueError(
            f"unknown agent id {agent_id!r}; the ids are 0..{len(AGENT_NAMES) - 1} ({', '.join(AGENT_NAMES)})"
        )
    agent = int(agent_id)
    table = AGENT_PARAMS[agent]
    unknown = set(params) - {p.name for p in table}
    if unknown:
        takes = ", ".join(p.name for p in table) or "none"
        raise ValueError(
            f"agent {AGENT_NAMES[agent]!r}: unknown parameter(s) {', '.join(sorted(unknown))}; it takes: {takes}"
        )
    spec = np.zeros(SPEC_COLS, np.float64)
    spec[SPEC_ID] = agent
    for col, p in enumerate(table, start=1):
        try:
            spec[col] = p.encode(params.get(p.name, p.default))
        except ValueError as e:
            raise ValueError(f"agent {AGENT_NAMES[agent]!r}: {e}") from None
    return spec


def check_spec(spec: object) -> np.ndarray:
    """``spec`` as a valid spec row (a float64[SPEC_COLS] copy): a known agent id in
    column 0, every parameter of that agent allowed, the unused columns 0. Raises
    ValueError (TypeError for something that is not a numeric 1-d array) naming what
    is wrong, so no kernel ever reads a row it was not made for."""
    row = np.asarray(spec)
    if row.ndim != 1 or not (np.issubdtype(row.dtype, np.integer) or np.issubdtype(row.dtype, np.floating)):
        raise TypeError(f"a spec row is a 1-d numeric array of {SPEC_COLS} values, not {spec!r}")
    if row.shape[0] != SPEC_COLS:
        raise ValueError(f"a spec row has {SPEC_COLS} values, not {row.shape[0]}")
    row = row.astype(np.float64)
    agent = row[SPEC_ID].item()
    make_spec(agent)  # raises for an unknown id
    table = AGENT_PARAMS[int(agent)]
    if np.any(row[1 + len(table) :] != 0):
        raise ValueError(
            f"agent {AGENT_NAMES[int(agent)]!r}: spec columns past its {len(table)} parameter(s) must be 0"
        )
    return make_spec(int(agent), **{p.name: row[col].item() for col, p in enumerate(table, start=1)})


# Default spec rows, one per agent id (read by the kernels as constants).
DEFAULT_SPECS = np.stack([make_spec(agent) for agent in range(len(AGENT_NAMES))])
