"""Leaves: their canonical classes against a slow naive reference, the learning's
reproducibility, the shipped table's provenance, and the static agent's choice against
a reference written from docs/agents.md."""

from __future__ import annotations

import shlex
from collections import Counter
from itertools import combinations, permutations

import numpy as np
import pytest

import qwirkle_core as qc
from qwirkle_core._kernels import leaves as lv
from qwirkle_core.batch.learn import LeaveTable, learn, leave_class, shipped_table
from qwirkle_core.cli import build_parser
from qwirkle_core.game.agents import agent_params
from test_play_agents import reference_heuristic

PERMS = np.array(list(permutations(range(6))), np.int64)  # 720 relabellings


def naive_form(leave):
    """The least sorted tile tuple over all 720 x 720 x 2 relabellings (colours, shapes,
    and colours swapped with shapes): the same for two leaves exactly when the rules
    cannot tell them apart."""
    if not leave:
        return ()
    c = np.array([t // 6 for t in leave])
    s = np.array([t % 6 for t in leave])
    best = None
    for a, b in ((c, s), (s, c)):
        tiles = PERMS[:, a][:, None, :] * 6 + PERMS[:, b][None, :, :]  # (720, 720, k)
        tiles = np.sort(tiles.reshape(-1, len(leave)), axis=1)
        keys = np.zeros(tiles.shape[0], np.int64)
        for i in range(len(leave)):
            keys = keys * 36 + tiles[:, i]
        j = int(np.argmin(keys))
        form = tuple(int(t) for t in tiles[j])
        best = form if best is None or form < best else best
    return best


def random_leave(rng, k):
    while True:
        leave = sorted(int(t) for t in rng.integers(0, 36, k))
        if max(Counter(leave).values(), default=0) <= 3:
            return leave


def relabel(rng, leave):
    pc, ps = rng.permutation(6), rng.permutation(6)
    out = [int(pc[t // 6] * 6 + ps[t % 6]) for t in leave]
    if rng.random() < 0.5:
        out = [(t % 6) * 6 + t // 6 for t in out]
    return out


def test_classes_match_the_naive_reference():
    rng = np.random.default_rng(57)
    leaves = [random_leave(rng, k) for k in (1, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5, 5) for _ in range(2)]
    leaves += [[0, 0, 7], [0, 1, 2, 3, 4], [0, 7, 14, 21, 28], [0, 0, 1, 1, 2], [0, 6, 1, 7, 0]]
    leaves += [relabel(rng, x) for x in leaves[:12]]
    forms = [naive_form(x) for x in leaves]
    ids = [leave_class(x) for x in leaves]
    for i in range(len(leaves)):
        for j in range(i):
            assert (forms[i] == forms[j]) == (ids[i] == ids[j]), (leaves[i], leaves[j])


def test_class_counts_and_ranks():
    codes, index = lv.classes()
    # leaves of k tiles fall into 1, 1, 3, 7, 20, 51 classes (k = 0..5)
    sizes = Counter(len(str(np.base_repr(int(c), 36))) - 1 if c else 0 for c in codes)
    assert [sizes[k] for k in range(6)] == [1, 1, 3, 7, 20, 51]
    # every leave of at most two tiles has its own rank; a tile four times has no class
    seen = set()
    for k in range(3):
        for leave in combinations(range(36 + k - 1), k):
            tiles = np.array([t - i for i, t in enumerate(leave)], np.int64)
            seen.add(int(lv.leave_rank.py_func(tiles, k)))
    assert seen == set(range(int(lv.OFFSETS[3])))
    assert index[int(lv.leave_rank.py_func(np.array([4, 4, 4, 4], np.int64), 4))] == -1
    with pytest.raises(ValueError, match="three times"):
        leave_class([4, 4, 4, 4])


def test_learning_is_reproducible_at_any_thread_count():
    a = learn(seed=5, games=300, iterations=2, threads=1)
    b = learn(seed=5, games=300, iterations=2, threads=2)
    c = learn(seed=6, games=300, iterations=2, threads=2)
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.counts, b.counts)
    assert not np.array_equal(a.values, c.values)
    assert a.counts.sum() > 300 * 20  # dozens of turns a game
    assert a.provenance["command"] == "qwirkle learn --seed 5 --games 300 --iterations 2"


def test_learn_refuses_bad_arguments():
    with pytest.raises(ValueError, match="games"):
        learn(seed=1, games=0)
    with pytest.raises(TypeError, match="seed"):
        learn(seed=1.5)


def test_shipped_table_names_the_command_that_reproduces_it(tmp_path):
    table = shipped_table()
    prov = table.provenance
    words = shlex.split(prov["command"])
    assert words[:2] == ["qwirkle", "learn"]
    args = build_parser().parse_args(words[1:])
    assert (args.seed, args.games, args.iterations) == (prov["seed"], prov["games_per_iteration"], prov["iterations"])
    assert prov["version"] and prov["date"]
    assert table.values.shape == (lv.BUCKETS, lv.classes()[0].shape[0])
    # a saved table reads back as it was
    path = table.save(tmp_path / "t.json")
    again = LeaveTable.load(path)
    np.testing.assert_array_equal(again.values, table.values)
    assert again.provenance == prov


def reference_static(g, table, w):
    """The static agent's values from docs/agents.md: each placement's points, +6 for
    going out, minus danger times the expected Qwirkles handed over, plus setup times
    those the mover may complete, plus the leave's value; each exchange (while the bag
    holds enough tiles) its leave's value. Returns {move text: value}."""
    h = {p.name: 0.0 for p in agent_params("heuristic")}
    h.update(danger=w["danger"], setup=w["setup"], out=6.0)
    b = int(sum(g.bag_size >= e for e in lv.BUCKET_EDGES))
    hand = Counter(g.hand())
    out = {}
    for m in g.legal_moves():
        leave = sorted((hand - Counter(m.tiles)).elements())
        out[str(m)] = reference_heuristic(g, m, h) + w["leave"] * table.values[b, leave_class(leave)]
    if g.bag_size > 0 and (w["exchange"] or not out):
        tiles = sorted(hand.elements())
        for k in range(1, min(len(tiles), g.bag_size) + 1):
            for swap in set(combinations(tiles, k)):
                leave = sorted((hand - Counter(swap)).elements())
                out[f"x{sorted(swap)}"] = w["leave"] * table.values[b, leave_class(leave)]
    return out


@pytest.mark.parametrize(
    "seed,turns,extra", [(1, 6, {}), (3, 20, {"setup": 3.0}), (4, 30, {}), (7, 41, {"exchange": 0})]
)
@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_static_agent_plays_a_best_move_of_the_reference(seed, turns, extra):
    table = shipped_table()
    w = {p.name: p.default for p in agent_params("static")}
    w.update(extra)
    g = qc.Game(seed=seed)
    while g.turn < turns and not g.is_over:
        g.play_agent("greedy")
    values = reference_static(g, table, w)
    action = g.play_agent(("static", w))
    move = action.move
    key = str(move) if move.kind == "place" else f"x{sorted(move.tiles)}"
    assert values[key] == pytest.approx(max(values.values()), abs=1e-9)


def test_an_interrupted_learning_keeps_its_last_finished_iteration():
    def stop_in_the_second(p):
        if p.iteration == 2:
            raise KeyboardInterrupt

    table = learn(seed=5, games=300, iterations=3, threads=2, progress=stop_in_the_second)
    one = learn(seed=5, games=300, iterations=1, threads=1)
    assert table.provenance["iterations"] == 1 and table.provenance["iterations_asked"] == 3
    np.testing.assert_array_equal(table.values, one.values)
    with pytest.raises(KeyboardInterrupt):  # nothing finished: nothing to keep
        learn(seed=5, games=300, iterations=2, progress=lambda p: (_ for _ in ()).throw(KeyboardInterrupt))


def test_cli_learn_writes_the_table_and_refuses_bad_arguments(tmp_path, capsys):
    from qwirkle_core import cli

    out = tmp_path / "t.json"
    argv = ["learn", "--seed", "5", "--games", "300", "--iterations", "1", "--no-progress", "--out", str(out)]
    assert cli.main(argv) == 0
    table = LeaveTable.load(out)
    assert table.provenance["command"] == "qwirkle learn --seed 5 --games 300 --iterations 1"
    np.testing.assert_allclose(table.values, learn(seed=5, games=300, iterations=1).values, rtol=0, atol=5e-5)
    capsys.readouterr()
    for bad, message in [
        (["--games", "0"], "--games"),
        (["--seed", "-1"], "--seed"),
        (["--out", str(tmp_path / "no" / "t.json")], "--out"),
    ]:
        assert cli.main(["learn", *bad]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_static_batches_replay_move_by_move_at_any_thread_count():
    one = qc.simulate(40, agents=("static", "greedy"), seed=9, threads=1)
    two = qc.simulate(40, agents=("static", "greedy"), seed=9, threads=2)
    np.testing.assert_array_equal(one.scores, two.scores)
    for i in (0, 17, 39):
        record = qc.play_game(("static", "greedy"), seed=int(one.seeds[i]))
        assert tuple(record.final_scores) == tuple(one.scores[i]) and len(record.actions) == one.turns[i]
        assert qc.replay(record).scores == tuple(one.scores[i])
    kinds = Counter(a.move.kind for a in qc.play_game(("static", "static"), seed=4).actions)
    assert kinds["place"] > 20


def test_static_is_refused_in_qwirkle_cubes():
    with pytest.raises(qc.AgentError, match="static"):
        qc.simulate(2, agents=("static", "greedy"), seed=1, rules=qc.Rules(variant="cubes"))


@pytest.mark.slow  # over 5 CPU-s with a cold cache (docs/testing.md): .ci/run runs it
def test_learning_on_a_dask_cluster_gives_the_local_table():
    distributed = pytest.importorskip("distributed")
    local = learn(seed=8, games=600, iterations=2, threads=2)
    learn(seed=8, games=1, iterations=1, threads=1)  # compiled here (or loaded): the workers load the cache
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        seen = []
        remote = learn(seed=8, games=600, iterations=2, client=client, progress=seen.append)
    np.testing.assert_array_equal(local.values, remote.values)
    np.testing.assert_array_equal(local.counts, remote.counts)
    assert [p.iteration for p in seen if p.change is not None] == [1, 2]
