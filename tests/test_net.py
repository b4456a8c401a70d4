"""The learned move scorer: its kernel against a naive numpy reference, its input rows
against the move list and the static agent's reference values, its weights files, the
net agent wherever an agent plays, the search with eval net, and the learning."""

from __future__ import annotations

import json

import numpy as np
import pytest

import qwirkle_core as qc
from qwirkle_core._kernels import net as _net
from qwirkle_core.batch import scorer
from qwirkle_core.batch.learn import shipped_table
from qwirkle_core.batch.rows import current_umask
from qwirkle_core.env.movelist import INPUT_NAMES, move_list, scorer_inputs
from qwirkle_core.game.agents import agent_params, parse_agent
from test_leaves import reference_static


def naive_scores(arrays, x):
    """The network of docs/agents.md in plain numpy."""
    z = (x - arrays["shift"]) * arrays["scale"]
    h1 = np.maximum(z @ arrays["w1"] + arrays["b1"], 0.0)
    h2 = np.maximum(h1 @ arrays["w2"] + arrays["b2"], 0.0)
    return h2 @ arrays["w3"] + arrays["b3"][0]


def random_arrays(rng, h1, h2):
    d = len(INPUT_NAMES)
    return {
        "shift": rng.normal(size=d),
        "scale": rng.uniform(0.1, 2.0, size=d),
        "w1": rng.normal(size=(d, h1)),
        "b1": rng.normal(size=h1),
        "w2": rng.normal(size=(h1, h2)),
        "b2": rng.normal(size=h2),
        "w3": rng.normal(size=h2),
        "b3": rng.normal(size=1),
    }


@pytest.mark.parametrize("h1,h2,count", [(1, 1, 1), (7, 3, 5), (64, 32, 128), (100, 5, 40)])
def test_the_kernel_scores_as_the_naive_network(h1, h2, count):
    rng = np.random.default_rng(h1 * 1000 + h2)
    arrays = random_arrays(rng, h1, h2)
    x = rng.normal(scale=5, size=(count, len(INPUT_NAMES)))
    x[:, 3] = 0.0  # a zero input (the kernel skips it)
    block = _net.pack(arrays)
    w = np.concatenate([np.full(5, 9.0), block])  # a slot at an offset
    out = np.zeros(count)
    _net.forward(w, 5, x, count, np.zeros(_net.MAX_HIDDEN), np.zeros(_net.MAX_HIDDEN), out)
    np.testing.assert_allclose(out, naive_scores(arrays, x), rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("seed,turns", [(1, 0), (2, 7), (5, 24), (8, 41)])
def test_input_rows_are_the_move_list_the_static_values_and_the_position(seed, turns):
    g = qc.Game(seed=seed)
    while g.turn < turns and not g.is_over:
        g.play_agent("greedy")
    x, moves = scorer_inputs(g)
    feats, mask, listed = move_list(g)
    assert [str(m) for m in moves] == [str(m) for m in listed]
    np.testing.assert_array_equal(x[:, : feats.shape[1]], feats[mask])
    w = {p.name: p.default for p in agent_params("static")}
    values = reference_static(g, shipped_table(), w)
    col = {name: x[:, i] for i, name in enumerate(INPUT_NAMES)}
    for i, m in enumerate(moves):
        key = str(m) if m.kind == "place" else f"x{sorted(m.tiles)}"
        expected = values.get(key, 0.0) if m.kind != "pass" else 0.0
        assert col["static"][i] == pytest.approx(expected, abs=1e-9), str(m)
    me = g.current_player
    scores = list(g.scores)
    assert set(col["margin"]) == {scores[me] - max(s for p, s in enumerate(scores) if p != me)}
    assert set(col["bag"]) == {g.bag_size}
    assert set(col["players"]) == {g.players}
    assert set(col["rival_hand"]) == {g.hand_sizes[(me + 1) % g.players]}


def test_static_weights_score_the_static_value_and_play_like_static():
    arrays = scorer.static_weights()
    g = qc.Game(seed=3)
    for _ in range(12):
        g.play_agent("greedy")
    x, moves = scorer_inputs(g)
    np.testing.assert_allclose(naive_scores(arrays, x), x[:, INPUT_NAMES.index("static")])


def test_weights_files_round_trip_and_bad_ones_are_refused(tmp_path):
    rng = np.random.default_rng(0)
    arrays = random_arrays(rng, 8, 4)
    path = scorer.write_weights(tmp_path / "w.npz", arrays, {"command": "test", "seed": 1})
    again, prov = scorer.read_weights(path)
    for k in arrays:
        np.testing.assert_array_equal(again[k], arrays[k])
    assert prov == {"command": "test", "seed": 1}
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left
    assert path.stat().st_mode & 0o777 == 0o666 & ~current_umask()  # as open() would make it
    with pytest.raises(scorer.WeightsError, match="no weights file"):
        scorer.read_weights(tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a weights file"):
        scorer.read_weights(tmp_path / "junk.npz")
    np.savez(tmp_path / "other.npz", a=np.zeros(2))
    with pytest.raises(ValueError, match="is not a qwirkle-core move scorer file"):
        scorer.read_weights(tmp_path / "other.npz")
    bad = dict(arrays, w2=np.zeros((3, 4)))
    with pytest.raises(ValueError, match="w2 has shape"):
        scorer.write_weights(tmp_path / "bad.npz", bad, {})
    nan = dict(arrays, b3=np.array([np.nan]))
    with pytest.raises(ValueError, match="not finite"):
        scorer.write_weights(tmp_path / "nan.npz", nan, {})
    assert not (tmp_path / "bad.npz").exists() and not (tmp_path / "nan.npz").exists()
    with pytest.raises(qc.AgentError, match="no weights file"):
        parse_agent(f"net:weights={tmp_path / 'missing.npz'}")


def test_the_shipped_weights_carry_their_provenance():
    arrays, prov = scorer.read_weights(_net.WEIGHTS_FILE)
    assert prov["command"].startswith("qwirkle learn net ")
    for key in ("seed", "games_per_iteration", "iterations", "positions", "version", "date", "history"):
        assert key in prov
    assert arrays["w1"].shape[0] == len(INPUT_NAMES)


def test_net_agents_of_two_files_share_a_table_and_are_labelled_by_file(tmp_path):
    path = scorer.write_weights(tmp_path / "static.npz", scorer.static_weights(), {"command": "static"})
    spec = parse_agent(f"net:weights={path}")
    assert spec.label == f"net:weights={path}"
    slot = int(spec.row()[1])
    assert slot > 0 and parse_agent("net").row()[1] == 0
    assert parse_agent(spec.row()) == parse_agent(("net", {"weights": str(path)}))
    r = qc.tournament([str(spec), "net"], games=4, seed=5, timing_seconds=0)
    assert r.agents == (spec.label, "net") and r.matches[0].games == 4


def test_the_static_scorer_places_where_static_places():
    """With the static value as its score, the net agent's best placements are those the
    static agent chooses among (exchanges aside: static weighs every subset of the
    hand, the list 14 of them)."""
    g = qc.Game(seed=11)
    while g.turn < 30 and not g.is_over:
        x, moves = scorer_inputs(g)
        static = x[:, INPUT_NAMES.index("static")]
        places = [(v, str(m)) for v, m in zip(static, moves) if m.kind == "place"]
        action = g.play_agent("static:exchange=0")
        if places:
            top = max(v for v, _ in places)
            assert str(action.move) in {m for v, m in places if v == pytest.approx(top, abs=1e-9)}


def test_net_plays_legal_games_everywhere_and_replays_exactly():
    one = qc.simulate(12, agents=("net", "greedy"), seed=4, threads=1)
    two = qc.simulate(12, agents=("net", "greedy"), seed=4, threads=2)
    np.testing.assert_array_equal(one.scores, two.scores)
    record = qc.play_game(("net", "greedy"), seed=int(one.seeds[3]))
    assert list(record.final_scores) == list(one.scores[3])
    g = qc.Game(seed=2, players=3)
    while not g.is_over:
        g.play_agent("net")  # three players: every move legal (play_agent checks)
    env = qc.env.VectorEnv(2, opponents=["net"], actions="moves")
    obs, _ = env.reset(seed=1)
    for _ in range(30):  # the env's seat plays its first listed move, the net agent answers
        obs, _, _, _, info = env.step(np.zeros(2, np.int64))
        assert not info["illegal_action"].any()


def test_search_with_eval_net_searches_the_scorers_candidates():
    g = qc.Game(seed=6)
    for _ in range(6):
        g.play_agent("greedy")
    a = g.copy().play_agent("search:eval=net:time_ms=5")
    assert a.move.kind in ("place", "exchange")
    one = qc.simulate(2, agents=("search:eval=net:time_ms=2", "greedy"), seed=3, threads=1)
    two = qc.simulate(2, agents=("search:eval=net:time_ms=2", "greedy"), seed=3, threads=2)
    np.testing.assert_array_equal(one.scores, two.scores)


def test_learning_writes_loadable_weights_and_is_reproducible(tmp_path):
    pytest.importorskip("torch")
    from qwirkle_core.batch.netlearn import learn_net

    runs = []
    for threads in (1, 2):
        ck = tmp_path / f"ck{threads}.npz"
        r = learn_net(
            seed=3, games=4, iterations=2, threads=threads, playouts=2, top=3, extra=1, hidden=(8, 4), epochs=1,
            probe_games=0, checkpoint=ck,
        )  # fmt: skip
        runs.append(r)
        again, prov = scorer.read_weights(ck)
        assert prov["iterations"] == 2 and prov["positions"] > 0 and prov["command"].startswith("qwirkle learn net")
        assert json.dumps(prov)  # JSON-able
        np.testing.assert_array_equal(again["w1"], r.arrays["w1"])
    np.testing.assert_array_equal(runs[0].arrays["w1"], runs[1].arrays["w1"])
    assert qc.simulate(2, agents=(f"net:weights={tmp_path / 'ck1.npz'}", "greedy"), seed=1).games == 2


def test_a_server_opens_no_weights_file_a_client_names(tmp_path):
    pytest.importorskip("fastapi")
    from qwirkle_core.server.engine import seat_label

    path = scorer.write_weights(tmp_path / "w.npz", scorer.static_weights(), {})
    assert (
        seat_label("net") == "net"
        and seat_label("search:eval=net:weights=shipped") == "search:eval=net:weights=shipped"
    )
    for text in (f"net:weights={path}", "net:weights=/etc/passwd", f"search:eval=net:weights={path}"):
        with pytest.raises(ValueError, match="'shipped' on this server"):
            seat_label(text)
    assert seat_label(f"net:weights={path}", caps={}) == f"net:weights={path}"  # a bot on its own machine


def test_every_learned_file_is_usable_by_path_and_labelled_by_it(tmp_path):
    table = shipped_table()
    changed = tmp_path / "leaves.json"
    table.values[:] = 0.0  # a table that values every leave at 0
    table.save(changed)
    spec = parse_agent(f"static:leaves={changed}")
    assert spec.label == f"static:leaves={changed}" and parse_agent(spec.row()) == parse_agent(
        ("static", {"leaves": str(changed)})
    )
    one = qc.simulate(6, agents=(f"static:leaves={changed}", "greedy"), seed=2, threads=1)
    same = qc.simulate(6, agents=("static:leave=0", "greedy"), seed=2, threads=1)
    np.testing.assert_array_equal(one.scores, same.scores)  # zero values play as a zero leave weight
    two = qc.simulate(6, agents=("static", "greedy"), seed=2, threads=1)
    assert not np.array_equal(one.scores, two.scores)
    s = qc.simulate(1, agents=(f"search:leaves={changed}:time_ms=2", "greedy"), seed=2, threads=1)
    assert s.games == 1
    assert qc.LeaveTable.load(changed).values.sum() == 0
    with pytest.raises(qc.AgentError, match="no leave table file"):
        parse_agent(f"static:leaves={tmp_path / 'missing.json'}")
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(qc.AgentError, match="bad.json"):
        parse_agent(f"static:leaves={tmp_path / 'bad.json'}")


def test_cli_learn_net_writes_weights_and_refuses_bad_arguments(tmp_path, capsys):
    pytest.importorskip("torch")
    from qwirkle_core.cli import main

    out = tmp_path / "n.npz"
    argv = ["learn", "net", "--games", "2", "--iterations", "1", "--playouts", "1", "--top", "2", "--extra", "0"]
    assert main([*argv, "--hidden", "4,2", "--probe-games", "0", "--out", str(out), "--no-progress"]) == 0
    assert "wrote" in capsys.readouterr().out
    arrays, prov = scorer.read_weights(out)
    assert arrays["w1"].shape == (len(INPUT_NAMES), 4) and prov["iterations"] == 1
    assert prov["command"].startswith("qwirkle learn net --seed 0 --games 2 --iterations 1 --playouts 1")
    assert main([*argv, "--hidden", "4", "--out", str(out)]) == 2
    assert "expected two unit counts" in capsys.readouterr().err
    assert main([*argv, "--start", str(tmp_path / "none.npz")]) == 2
    assert "no weights file" in capsys.readouterr().err


@pytest.mark.slow
def test_learning_on_a_dask_cluster_records_the_local_games(tmp_path):
    pytest.importorskip("torch")
    distributed = pytest.importorskip("distributed")
    from qwirkle_core.batch.netlearn import learn_net

    args = dict(seed=5, games=12, iterations=2, playouts=2, top=3, extra=1, hidden=(8, 4), epochs=1, probe_games=0)
    local = learn_net(threads=2, **args)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        seen = []
        remote = learn_net(client=client, progress=seen.append, **args)
    for k in local.arrays:
        np.testing.assert_array_equal(local.arrays[k], remote.arrays[k])
    assert local.provenance["positions"] == remote.provenance["positions"] > 0
    assert [p.loss is not None for p in seen].count(True) == 2
