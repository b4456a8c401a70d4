"""One turn of any agent: the dispatch on the spec's agent id, and the agents' scratch.

This is the one kernel that knows every agent, so it sits above :mod:`.policies`
(random, greedy, heuristic and the heuristic's reply search), :mod:`.mc` (the Monte
Carlo agent, whose playouts the policies play) and :mod:`.search` (the search agent):
in any of them it would make an import cycle. The batch loop (:mod:`.batch`) and
``Game.play_agent`` both call :func:`take_turn`, so a turn is played the same way in
a batch and move by move.

To add an agent: its name and parameters in :data:`.layout.AGENT_PARAMS` (the spec
columns follow), its choice in :func:`.policies.play_turns` (or a kernel of its own and a
branch in :func:`search_turn` for an agent that searches; :func:`.batch.kernel_for`
then plays its batches with ``run_any``). The batch loop does not change.
"""

import numpy as np

from ._jit import njit
from .actions import apply_act, legal_moves, new_state
from .board import new_undo_stack
from .layout import (  # ids, kinds and spec rows are also read from here by the Python layer
    ACT_SIZE,
    AGENT_IDS,
    CAND_COLS,
    EVAL_NET,
    EXCHANGE,
    G_BAG,
    G_TURNS,
    GREEDY,
    HEURISTIC,
    MAX_CANDIDATES,
    MONTE_CARLO,
    NET,
    P_HEUR_HORIZON,
    P_HEUR_REPLY,
    P_NET_WEIGHTS,
    P_SEARCH_EVAL,
    PASS,
    PLACE,
    RANDOM,
    SEARCH,
    SPEC_COLS,
    SPEC_ID,
    STATIC,
    AgentScratch,
    RootScratch,
    make_spec,
)
from .leaves import bind_leaves
from .mc import mc_choose
from .net import bind_net, net_turn, new_net_scratch
from .policies import HEURISTIC_WORK, play_turns, reply_choose, simple_turn
from .search import bind_heuristic, bind_rank_net, bind_search, new_search_scratch, search_choose, uses_heuristic
from .state import NTILES

AGENTS = AGENT_IDS
__all__ = [
    "ACT_SIZE",
    "AGENTS",
    "EXCHANGE",
    "GREEDY",
    "HEURISTIC",
    "MONTE_CARLO",
    "NET",
    "PASS",
    "PLACE",
    "RANDOM",
    "SEARCH",
    "STATIC",
    "bind_for",
    "bind_leaves",
    "bind_search",
    "make_spec",
    "mc_agent_turn",
    "new_agent_scratch",
    "search_agent_turn",
    "searches",
    "take_turn",
]


@njit
def searches(specs):
    """Whether any row of ``specs`` (float64[seats, SPEC_COLS]) is the search agent."""
    for p in range(specs.shape[0]):
        if int(specs[p, SPEC_ID]) == SEARCH:
            return True
    return False


def bind_for(specs):
    """:func:`.search.bind_search` when a row of ``specs`` (float64[seats, SPEC_COLS])
    is the search agent, :func:`.leaves.bind_leaves` when one is the static agent and
    :func:`.net.bind_net` (the shipped weights in slot 0) when one is the net agent, and
    :func:`.search.bind_rank_net` (the net's ranking, which the search kernels call
    unlinked, and the weights) when one is a search with eval net, and
    :func:`.search.bind_heuristic` when one ranks or plays out with the heuristic: in
    Python, before a kernel plays them. A row's other weights slots were bound when the Python layer
    made the row."""
    if any(int(row[SPEC_ID]) == SEARCH for row in specs):
        bind_search()
    if any(int(row[SPEC_ID]) == STATIC for row in specs):
        bind_leaves()
    if any(int(row[SPEC_ID]) == NET for row in specs):
        bind_net()
    if any(int(row[SPEC_ID]) == SEARCH and row[P_SEARCH_EVAL] == EVAL_NET for row in specs):
        bind_rank_net()
    if any(int(row[SPEC_ID]) == SEARCH and uses_heuristic(row) for row in specs):
        bind_heuristic()


@njit
def new_agent_scratch(search):
    """The :class:`.layout.AgentScratch` of one thread: everything an agent may need
    beyond its game (move values, the heuristic's scratch, a sim game for playouts,
    the root scratch, and with ``search`` the search agent's scratch of about 4 MB,
    else a minimal one)."""
    sim, smoves = new_state()
    root = RootScratch(
        np.zeros(NTILES, np.int64),
        np.zeros(NTILES, np.int64),
        np.zeros(NTILES, np.int8),
        np.zeros(NTILES, np.int64),
        np.zeros((MAX_CANDIDATES, CAND_COLS), np.int64),
        np.zeros(SPEC_COLS, np.float64),
        new_undo_stack(1),
    )
    return AgentScratch(
        np.zeros(1024, np.float64),
        np.zeros(HEURISTIC_WORK, np.float64),
        sim,
        smoves,
        np.zeros(1024, np.float64),
        root,
        new_search_scratch(search),
        new_net_scratch(),
    )


@njit(inline="always")  # into the heuristic batch loop and take_turn
def search_turn(spec, gs, moves, scratch, searchers):
    """One turn of an agent that searches this turn (not a
    :func:`.policies.simple_turn`): the heuristic's reply search, or with ``searchers``
    (a constant at each call site) also the Monte Carlo and search agents. Returns the
    move buffer."""
    moves, n = legal_moves(gs, moves, np.bool_(False))
    values = scratch.values
    if values.shape[0] < n:
        values = np.zeros(n, np.float64)
    agent = int(spec[SPEC_ID])
    if searchers and agent == MONTE_CARLO:
        mc_choose(spec, gs, moves, n, values, scratch)
    elif searchers and agent == SEARCH:
        search_choose(spec, gs, moves, n, values, scratch)
    else:
        reply_choose(spec, gs, moves, n, values, scratch.sim_moves, scratch.root.undo)
    apply_act(gs)
    return moves


@njit(inline="always")  # a thin wrapper: one level less to re-optimise (see _jit)
def search_agent_turn(spec, gs, moves, scratch):
    """:func:`search_turn` of the search agent alone (``spec`` is one): the turn
    ``take_turn`` plays for it, without compiling the other agents that search (the
    search batch kernel's). Returns the move buffer."""
    moves, n = legal_moves(gs, moves, np.bool_(False))
    values = scratch.values
    if values.shape[0] < n:
        values = np.zeros(n, np.float64)
    search_choose(spec, gs, moves, n, values, scratch)
    apply_act(gs)
    return moves


@njit(inline="always")  # a thin wrapper: one level less to re-optimise (see _jit)
def mc_agent_turn(spec, gs, moves, scratch):
    """:func:`search_agent_turn` of the Monte Carlo agent (``spec`` is one)."""
    moves, n = legal_moves(gs, moves, np.bool_(False))
    values = scratch.values
    if values.shape[0] < n:
        values = np.zeros(n, np.float64)
    mc_choose(spec, gs, moves, n, values, scratch)
    apply_act(gs)
    return moves


@njit
def take_turn(spec, gs, moves, scratch):
    """One turn of agent ``spec`` for the current player of ``gs``.

    ``scratch`` is :func:`new_agent_scratch`'s tuple (used in place). Returns the
    (maybe grown) move buffer.
    """
    board, cross, anchors, bmeta, hands, bag, gmeta, rng, st, act = gs
    agent = int(spec[SPEC_ID])
    if agent == NET:
        net_turn(int(spec[P_NET_WEIGHTS]), gs, scratch.net)
        return moves
    if agent != STATIC and not simple_turn(agent, spec[P_HEUR_REPLY], spec[P_HEUR_HORIZON], gmeta[G_BAG], True):
        return search_turn(spec, gs, moves, scratch, True)
    specs = spec.reshape((1, spec.shape[0]))
    moves, _ = play_turns(
        specs,
        board,
        cross,
        anchors,
        bmeta,
        hands,
        bag,
        gmeta,
        rng,
        st,
        act,
        moves,
        scratch.values,
        scratch.work,
        gmeta[G_TURNS] + 1,
        True,
        True,
        True,
    )
    return moves
