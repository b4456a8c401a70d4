"""The search agent (``search``): legal moves only, the solver's move in the endgame,
the heuristic's move with one candidate, reproducible batches, and its playouts checked
against the Monte Carlo module's (rebuilt boards) to the last margin."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import qwirkle_core as qc
from naive import naive_legal_placements
from qwirkle_core._kernels import agents as _ag
from qwirkle_core._kernels import layout as _lo
from qwirkle_core._kernels import leaves as lv
from qwirkle_core._kernels import mc as _mc
from qwirkle_core._kernels import search as _se
from qwirkle_core._kernels.actions import legal_moves
from qwirkle_core._kernels.policies import heuristic_values
from qwirkle_core.batch.learn import leave_class, shipped_table
from qwirkle_core.batch.tournament import play_deals
from qwirkle_core.evaluation.endgame import solve_endgame
from qwirkle_core.game.agents import agent_params
from strategies import advance, assert_same_rows, examples, reachable_games
from test_leaves import reference_static

FAST = "search:time_ms=1"  # about 220 playout turns per decision (WORK_PER_MS)


def legal_now(g: qc.Game, move: qc.Move) -> bool:
    """Whether ``move`` is a legal action of the player to move (from the rule-level API)."""
    moves = g.legal_moves()
    if move.kind == "place":
        return move in moves
    if move.kind == "exchange":  # instead of a placement, after the opening
        return (
            g.turn > 0
            and 0 < len(move.tiles) <= g.bag_size
            and all(move.tiles.count(t) <= g.hand().count(t) for t in move.tiles)
        )
    return not moves and g.bag_size == 0


def greedy_until(seed: int, players: int, stop) -> qc.Game:
    g = qc.Game(players=players, seed=seed)
    while not g.is_over and not stop(g):
        g.play_agent("greedy")
    return g


def playout_values(
    g: qc.Game,
    limit: int,
    playouts: int,
    depth: int,
    seed: int,
    outlook: float = 0.0,
    tempo: float = 0.0,
    win: float = 0.0,
) -> np.ndarray:
    """float64[k, playouts]: the search's playout values of the ``limit`` best
    candidates of ``g`` (the heuristic playing every seat)."""
    a = g.kernel_arrays()
    scratch = _ag.new_agent_scratch(True)
    cands = np.zeros((_lo.MAX_CANDIDATES, _lo.CAND_COLS), np.int64)
    k = _se.engine_candidates(a, limit, scratch, cands)
    out = np.zeros((k, playouts))
    _se.bind_search(solver=False)
    _se.bind_heuristic()  # the playouts' policy
    _se.evaluate_candidates(
        a,
        cands,
        k,
        _lo.DEFAULT_SPECS[_lo.HEURISTIC].copy(),
        playouts,
        depth,
        np.uint64(seed),
        scratch,
        out,
        outlook,
        tempo,
        win,
    )
    return out


# -- the parameters -----------------------------------------------------------------------


def test_search_is_an_agent_with_checked_parameters():
    assert "search" in qc.AGENTS
    spec = qc.parse_agent("search:time_ms=20:budget=clock:candidates=8")
    assert spec.value("time_ms") == 20.0 and spec.value("budget") == "clock" and spec.value("depth") == 4
    assert (
        spec.value("outlook") == 1.05
        and spec.value("tempo") == 0.24
        and qc.parse_agent("search:outlook=0").row()[_lo.P_SEARCH_OUTLOOK] == 0.0
    )
    assert (
        qc.parse_agent("search").row()[_lo.P_SEARCH_TIME] == 50.0
        and spec.value("finish") == 12
        and spec.value("win") == 6.0
    )
    assert (
        spec.value("pcycle") == 1.0
        and spec.value("pfits") == 0.25
        and spec.value("pgroup") == 0.0
        and spec.value("pdup") == 0.5
        and spec.value("pout") == 0.0
        and spec.value("eval") == "learned"
        and qc.parse_agent("search:eval=heuristic").row()[_lo.P_SEARCH_EVAL] == _lo.EVAL_HEURISTIC
        and spec.value("policy") == "auto"
        and qc.parse_agent("search:policy=static").value("policy") == "static"
    )
    for bad, message in (
        ("search:time_ms=0", "time_ms must be"),
        ("search:budget=fast", "budget must be one of work, clock"),
        ("search:candidates=65", "candidates must be an int in 1..64"),
        ("search:solver=2", "solver must be"),
        ("search:outlook=nan", "outlook must be"),
        ("search:finish=109", "finish must be an int in 0..108"),
        ("search:win=-1", "win must be"),
        ("search:tempo=inf", "tempo must be"),
        ("search:pfits=nan", "pfits must be"),
        ("search:pout=inf", "pout must be"),
        ("search:eval=neural", "eval must be one of heuristic, learned"),
        ("mc:policy=static", "policy must be one of random, greedy, heuristic"),
    ):
        with pytest.raises(qc.AgentError, match=message):
            qc.parse_agent(bad)


def test_the_playouts_heuristic_takes_the_p_parameters():
    """The playout policy's row is that policy's default row, except that a heuristic
    policy's ``cycle``, ``fits``, ``group``, ``dup`` and ``out`` are the search's
    ``pcycle``, ``pfits``, ``pgroup``, ``pdup`` and ``pout``; the policy auto is
    static with eval learned (the default), the heuristic with eval heuristic."""
    out = np.full(_lo.SPEC_COLS, -1.0)
    columns = [_lo.P_HEUR_CYCLE, _lo.P_HEUR_FITS, _lo.P_HEUR_GROUP, _lo.P_HEUR_DUP, _lo.P_HEUR_OUT]
    for agent, weights in (
        ("search:eval=heuristic", [1.0, 0.25, 0.0, 0.5, 0.0]),
        ("search:policy=heuristic:pcycle=0:pfits=-2:pgroup=3:pdup=0:pout=-1", [0.0, -2.0, 3.0, 0.0, -1.0]),
    ):
        _se._policy(qc.parse_agent(agent).row(), out)
        expected = _lo.DEFAULT_SPECS[_lo.HEURISTIC].copy()
        expected[columns] = weights
        np.testing.assert_array_equal(out, expected)
    _se._policy(qc.parse_agent("search:policy=greedy:pcycle=3:pout=2").row(), out)
    np.testing.assert_array_equal(out, _lo.DEFAULT_SPECS[_lo.GREEDY])
    for agent in ("search", "search:policy=static:eval=heuristic:pcycle=3"):
        _se._policy(qc.parse_agent(agent).row(), out)
        np.testing.assert_array_equal(out, _lo.DEFAULT_SPECS[_lo.STATIC])


# -- legality -----------------------------------------------------------------------------


@examples(0.5)
@given(
    reachable_games(max_turns=60),
    st.sampled_from(
        [
            FAST,
            "search:time_ms=1:depth=0",
            "search:time_ms=1:candidates=3:policy=greedy",
            "search:time_ms=0.5:budget=clock",
        ]
    ),
)
def test_the_search_agent_plays_only_legal_actions(g, agent):
    before = g.copy()
    action = g.play_agent(agent)
    assert legal_now(before, action.move), (action, before)
    replayed = before.copy()
    replayed.play(action.move)
    assert replayed.scores == g.scores


@pytest.mark.parametrize("players", [2, 3])
def test_whole_games_of_search_are_legal_to_the_end(players):
    g = qc.Game(players=players, seed=11 + players)
    while not g.is_over:
        before = g.copy()
        action = g.play_agent(FAST if g.current_player == 0 else "greedy")
        assert legal_now(before, action.move)
    assert qc.replay(qc.GameRecord.from_game(g)).scores == g.scores


# -- the endgame ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_in_a_two_player_endgame_it_plays_the_solvers_move(seed):
    """With an empty bag the agent is the solver with a node limit of time_ms *
    NODES_PER_MS: the same move as solve_endgame given that limit."""
    g = greedy_until(300 + seed, 2, lambda g: g.bag_size == 0)
    if g.is_over:
        pytest.skip("the game ended before the bag ran empty")
    for time_ms in (1.0, 4.0):
        nodes = int(time_ms * _se.NODES_PER_MS)
        expected = solve_endgame(g, max_nodes=nodes).move
        action = g.copy().play_agent(f"search:time_ms={time_ms}")
        assert action.move == expected


def test_with_the_solver_off_it_still_searches_the_endgame():
    g = greedy_until(301, 2, lambda g: g.bag_size == 0)
    before = g.copy()
    assert legal_now(before, g.play_agent("search:time_ms=1:solver=0").move)


@pytest.mark.parametrize("seed", [41, 55])
def test_with_few_tiles_in_the_bag_playouts_go_to_the_end(seed):
    """``finish``: once the bag holds at most that many tiles, ``depth`` no longer
    counts (the same choice as ``depth`` 0); with one tile more it counts again.
    The positions are ones where playouts of 2 turns and playouts to the end choose
    differently (with eval heuristic, which the positions were chosen for)."""
    g = greedy_until(seed, 2, lambda g: 0 < g.bag_size <= 20)
    b = g.bag_size

    def choice(agent: str) -> qc.Move:
        return g.copy().play_agent(f"search:time_ms=2:candidates=4:eval=heuristic:{agent}").move

    assert choice("finish=0:depth=2") != choice("finish=0:depth=0")
    assert choice(f"finish={b}:depth=2") == choice("finish=0:depth=0")
    assert choice(f"finish={b - 1}:depth=2") == choice("finish=0:depth=2")


@pytest.mark.parametrize("seed", [4, 28])
def test_the_win_bonus_changes_choices_only_where_playouts_end(seed):
    """``win`` counts in playouts that reach the end of the game: with the bag at most
    ``finish`` it can change the choice (these positions are ones where it does); with
    the bag above ``finish`` the playouts stop after ``depth`` turns and it cannot
    (with eval heuristic, which the positions were chosen for)."""
    g = greedy_until(seed, 2, lambda g: 0 < g.bag_size <= 12)
    b = g.bag_size

    def choice(agent: str) -> qc.Move:
        return g.copy().play_agent(f"search:time_ms=2:candidates=4:eval=heuristic:{agent}").move

    assert choice("win=0") != choice("win=40")
    assert choice(f"finish={b - 1}:win=0") == choice(f"finish={b - 1}:win=40")


def test_three_players_with_an_empty_bag_search_to_the_end():
    g = greedy_until(5, 3, lambda g: g.bag_size == 0)
    assert not g.is_over
    while not g.is_over:
        before = g.copy()
        assert legal_now(before, g.play_agent(FAST).move)


# -- the choice -----------------------------------------------------------------------------


@examples(0.5)
@given(reachable_games(min_turns=2, max_turns=40, players=2))
def test_one_candidate_is_the_heuristics_best_placement(g):
    """With candidates=1 and eval=heuristic there is nothing to search: the placement
    of the highest heuristic value (checked where that value has a unique maximum)."""
    if g.bag_size == 0 or not g.legal_moves():
        return
    a = g.copy().kernel_arrays()
    moves, n = legal_moves(a, np.zeros((1024, _lo.MOVE_COLS), np.int32), False)
    values = np.zeros(n)
    heuristic_values(a, moves, n, _lo.DEFAULT_SPECS[_lo.HEURISTIC], values)
    if np.sum(values[:n] == values[:n].max()) > 1:
        return
    heuristic = g.copy().play_agent("heuristic").move
    assert g.copy().play_agent("search:candidates=1:eval=heuristic").move == heuristic


def static_reference(g):
    """The static agent's value of every move (its default weights; docs/agents.md):
    {move text or 'x[tiles]': value}, from test_leaves' reference."""
    w = {p.name: p.default for p in agent_params("static")}
    return reference_static(g, shipped_table(), w)


@examples(0.5)
@given(reachable_games(min_turns=2, max_turns=40, players=2))
@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_one_learned_candidate_is_the_static_agents_move(g):
    """With candidates=1 and eval=learned (the default) there is nothing to search:
    the move of the highest static value, an exchange included (checked where that
    value has a unique maximum)."""
    if g.bag_size == 0:
        return
    values = static_reference(g)
    best = max(values.values())
    if sum(v == pytest.approx(best, abs=1e-9) for v in values.values()) > 1:
        return
    move = g.copy().play_agent("search:candidates=1").move
    key = str(move) if move.kind == "place" else f"x{sorted(move.tiles)}"
    assert values[key] == pytest.approx(best, abs=1e-9)
    assert move == g.copy().play_agent("static").move


@examples(0.5)
@given(reachable_games(min_turns=0, max_turns=60, players=2), st.integers(1, 16))
@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_learned_candidates_are_the_best_moves_by_static_value(g, limit):
    """rank_learned's list against the static reference: min(limit, moves) rows; the
    placements' values descending; the exchange (at most one) is a best one and stands
    where its value puts it, after the placements worth as much, and only while the bag
    has tiles after the opening."""
    a = g.copy().kernel_arrays()
    moves, n = legal_moves(a, np.zeros((4096, _lo.MOVE_COLS), np.int32), False)
    scratch = _ag.new_agent_scratch(True)
    _se.bind_search(solver=False)
    out = np.zeros((_lo.MAX_CANDIDATES, _lo.CAND_COLS), np.int64)
    kernel_values = np.zeros(max(n, 1))
    k = _se.rank_learned(a, moves, n, kernel_values, limit, out, scratch.work, scratch.search.static)
    values = static_reference(g)
    exchanges = {key: v for key, v in values.items() if key.startswith("x")}
    placed = sorted((v for key, v in values.items() if not key.startswith("x")), reverse=True)
    np.testing.assert_allclose(sorted(kernel_values[:n], reverse=True), placed, rtol=0, atol=1e-9)

    def cells_and_tiles(row, count, cell, tile):
        return tuple(int(x) for x in row[cell : cell + row[count]]), tuple(
            int(x) for x in row[tile : tile + row[count]]
        )

    value_of = {cells_and_tiles(moves[m], _lo.M_N, _lo.M_CELL, _lo.M_TILE): kernel_values[m] for m in range(n)}
    can_exchange = g.bag_size > 0 and g.turn > 0 and bool(exchanges)
    assert k == min(limit, n + can_exchange)
    hand = Counter(g.hand())
    table = shipped_table()
    b = int(sum(g.bag_size >= e for e in lv.BUCKET_EDGES))
    got, where = [], []
    for c in range(k):
        row = out[c]
        if row[_lo.A_KIND] == _lo.PLACE:
            got.append(value_of[cells_and_tiles(row, _lo.A_N, _lo.A_CELL, _lo.A_TILE)])
            continue
        tiles = [int(t) for t in row[_lo.A_TILE : _lo.A_TILE + row[_lo.A_N]]]
        leave = sorted((hand - Counter(tiles)).elements())
        assert not Counter(tiles) - hand and len(tiles) <= g.bag_size
        got.append(table.values[b, leave_class(leave)])
        where.append(c)
    assert len(where) <= 1
    in_order = [v for c, v in enumerate(got) if c not in where]
    assert in_order == pytest.approx(placed[: len(in_order)], abs=1e-9)  # the best placements, best first
    if can_exchange:
        best_x = max(exchanges.values())
        at = sum(v >= best_x - 1e-9 for v in placed)
        if at < limit:
            assert where == [at] and got[at] == pytest.approx(best_x, abs=1e-9)
        else:
            assert where == []
    else:
        assert where == []


@examples(0.3)
@given(reachable_games(min_turns=1, max_turns=50), st.integers(0, 4), st.integers(0, 2**63))
def test_search_playouts_are_the_monte_carlo_playouts(g, depth, seed):
    """The search's playouts put placements down and take them back (undo logs); the
    Monte Carlo module rebuilds the board for each. Same seeds, same margins."""
    if g.is_over or not g.legal_moves():
        return
    a = g.kernel_arrays()
    scratch = _ag.new_agent_scratch(True)
    cands = np.zeros((_lo.MAX_CANDIDATES, _lo.CAND_COLS), np.int64)
    k = _se.engine_candidates(a, 5, scratch, cands)
    policy = _lo.DEFAULT_SPECS[_lo.HEURISTIC].copy()
    ours = np.zeros((k, 6))
    _se.bind_search(solver=False)
    _se.bind_heuristic()  # the playouts' policy
    _se.evaluate_candidates(a, cands, k, policy, 6, depth, np.uint64(seed), scratch, ours)
    n = int(a.bmeta[_lo.B_TILES])
    rows, cols, tiles = np.zeros(max(n, 1), np.int64), np.zeros(max(n, 1), np.int64), np.zeros(max(n, 1), np.int8)
    _mc.board_tiles(a.board, a.bmeta, rows, cols, tiles)
    theirs = _mc.evaluate(
        rows,
        cols,
        tiles,
        n,
        a.hands.copy(),
        a.bag.copy(),
        a.gmeta.copy(),
        cands,
        k,
        policy,
        6,
        depth,
        np.uint64(seed),
        1,
    )
    assert ours.tolist() == theirs.tolist()


@examples(0.3)
@given(reachable_games(min_turns=1, max_turns=60), st.integers(0, 2**63))
def test_a_playout_that_ends_the_game_counts_the_win_bonus(g, seed):
    """``win``: a playout to the end counts ``win`` more when the mover won, ``win``
    less when it lost, nothing for a tie; a playout cut off while the bag still holds
    tiles (2 turns from a bag of 20 or more cannot end the game) counts its margin."""
    if g.is_over or not g.legal_moves():
        return
    depth = 2 if g.bag_size >= 20 else 0
    margins = playout_values(g, 3, 4, depth, seed)
    assert (
        playout_values(g, 3, 4, depth, seed, win=5.0).tolist()
        == (margins if depth else margins + 5.0 * np.sign(margins)).tolist()
    )


@examples(0.3)
@given(reachable_games(min_turns=1, max_turns=60))
def test_the_outlook_is_the_best_next_score_of_each_side(g):
    """The playouts' horizon term: the most each side's hand could score on the board
    now (the naive generator of the rule text), the mover's minus its rival's (the
    other player of the highest score, the first of equals)."""
    if g.is_over or not g.board:
        return
    me = g.current_player
    rival = max((p for p in range(g.players) if p != me), key=lambda p: (g.scores[p], -p))

    def best(p: int) -> int:
        return max(naive_legal_placements(g.board, g.hand(p)).values(), default=0)

    mine, theirs, their_seat, _ = _se.next_scores(g.kernel_arrays(), np.zeros((4, _lo.MOVE_COLS), np.int32), me)
    assert (mine, theirs, their_seat) == (best(me), best(rival), rival)


@examples(0.3)
@given(reachable_games(min_turns=1, max_turns=40, players=2), st.integers(1, 4), st.integers(0, 2**63))
def test_the_tempo_counts_the_side_to_move_at_the_horizon(g, depth, seed):
    """``tempo``: at a cut-off playout's horizon the best next score of the side to
    move is added for the mover (``depth`` odd: the mover is to move there) or taken
    off for its rival (even), in proportion to ``tempo``; the playouts and horizons
    are the same whatever its weight (2 to 5 turns from a bag of 32 or more cannot end
    the game)."""
    if g.bag_size < 32 or not g.legal_moves():
        return

    def values(outlook: float, tempo: float) -> np.ndarray:
        return playout_values(g, 3, 3, depth, seed, outlook, tempo)

    margins, once, twice = values(0.0, 0.0), values(0.0, 1.0), values(1.0, 2.0)
    extra = once - margins  # the side to move's best next score, with its sign
    assert (extra >= 0).all() if depth % 2 else (extra <= 0).all()
    assert np.allclose(twice - values(1.0, 0.0), 2 * extra)


def test_the_search_leaves_the_game_as_the_action_says():
    """Searching touches a scratch game only: after play_agent the game equals one that
    played the same action directly (board arrays, hands, bag, counters)."""
    rng = random.Random(3)
    for seed in range(4):
        g = qc.Game(players=2, seed=seed)
        advance(g, rng.randint(3, 30), rng)
        direct = g.copy()
        action = g.play_agent(FAST)
        direct.play(action.move)
        assert g.board == direct.board and g.hand(0) == direct.hand(0) and g.hand(1) == direct.hand(1)
        assert g.scores == direct.scores and g.bag_size == direct.bag_size
        assert g.legal_moves() == direct.legal_moves()


# -- reproducibility --------------------------------------------------------------------------


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_batches_with_search_are_reproducible_and_replay_move_by_move():
    agents = (FAST, "greedy")
    a = qc.simulate(6, agents, seed=9, threads=1)
    b = qc.simulate(6, agents, seed=9, threads=2)
    assert_same_rows(a.rows, b.rows)
    for i in (0, 5):
        record = qc.play_game(agents, seed=int(a.seeds[i]))
        assert record.final_scores == tuple(int(s) for s in a.scores[i])


@pytest.mark.slow
def test_the_default_searchs_games_against_greedy_are_pinned():
    """The default search's margins against greedy in deals 0-2 of tournament seed 1000
    (the tuning seed; ``tournament.play_deals``: from seat 0, then seat 1) are pinned:
    they are the first of the games every tuning round of docs/agents.md pairs its
    trials with. So a change meant to keep the games (a faster kernel, one compile
    fewer) cannot change them unnoticed; a change of play updates them with the docs."""
    # The first is the default (eval learned); the second the search before the learned
    # values (eval heuristic), with the margins it had then; the third is the fifteenth
    # round's trial (docs/agents.md), the fourth plays the fifth round's defaults
    # (before the fourteenth round's playout player).
    pinned_games = (
        ("search", [[-24, -8], [-22, -28], [20, 27]]),
        ("search:eval=heuristic", [[19, 24], [25, 6], [31, 6]]),
        ("search:eval=heuristic:pgroup=0.2:pdup=0.75:pout=6", [[17, 12], [-7, 6], [32, 1]]),
        ("search:eval=heuristic:pcycle=0:pfits=0", [[15, 11], [67, 19], [44, -11]]),
    )
    for agent, pinned in pinned_games:
        ab, ba = play_deals(qc.parse_agent(agent), qc.parse_agent("greedy"), 1000, 0, 3, 2)
        assert np.stack([ab[:, 0] - ab[:, 1], ba[:, 1] - ba[:, 0]], 1).tolist() == pinned


@pytest.mark.slow  # a fresh process that may compile the search (minutes on a cold cache)
def test_the_default_search_binds_neither_the_net_nor_the_heuristic():
    """The search calls the net's ranking (eval net) and the heuristic (eval heuristic,
    policy heuristic) unlinked (_jit.External): a process that plays only the default
    search (eval learned, policy auto) never compiles or loads them (issue 67: the cold
    start of its first game), and one that plays a search that uses them binds them
    first (an unbound call would raise RuntimeError)."""
    import subprocess
    import sys

    code = (
        "import qwirkle_core as qc\n"
        "from qwirkle_core._kernels import policies, search\n"
        "def bound():\n"
        "    return [int(x.cell[1] != 0) for x in (search.RANK_NET, search.RANK_HEURISTIC, policies.HEURISTIC_FILL)]\n"
        f"qc.simulate(1, ['{FAST}', 'greedy'], seed=1, threads=1)\n"
        "print(*bound())\n"
        "qc.simulate(1, ['search:eval=heuristic', 'greedy'], seed=1, threads=1)\n"
        "print(*bound())\n"
        "qc.simulate(1, ['search:eval=net', 'greedy'], seed=1, threads=1)\n"
        "print(*bound())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=900)
    assert out.stdout.split("\n")[:3] == ["0 0 0", "0 1 1", "1 1 1"]
