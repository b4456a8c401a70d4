"""The HTTP API through FastAPI's test client, over each store (a real SQLite file and
a database of a throwaway PostgreSQL cluster): whole games, replays of their records,
refusals that change nothing, undo, hints, restarts."""

import json
import random
import warnings

import pytest

import qwirkle_core as qc
from qwirkle_core.server import create_app
from qwirkle_core.server.app import MAX_BODY, MAX_MOVE
from qwirkle_core.server.store import Head, open_store, token_digest
from server_support import OPEN, bearer, choose, play_out

with warnings.catch_warnings():  # starlette asks for httpx2, the next httpx; httpx works
    warnings.filterwarnings("ignore", message=".*httpx2")
    from fastapi.testclient import TestClient


@pytest.fixture
def db(store_url):
    return store_url


@pytest.fixture
def client(db):
    with TestClient(create_app(db, settings=OPEN)) as c:
        yield c


def new_game(client, seats, seed=None):
    body = {"seats": seats} if seed is None else {"seats": seats, "seed": seed}
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    data = r.json()
    assert [s["seat"] for s in data["seats"]] == list(range(len(seats)))
    tokens = {s["seat"]: s["token"] for s in data["seats"] if s["token"] is not None}
    return data["id"], tokens


def get_record(client, game_id):
    r = client.get(f"/api/games/{game_id}/record")
    assert r.status_code == 200, r.text
    return qc.GameRecord.from_json(r.text)


def check_record(record, labels, posted, final):
    """The record replays; agents' actions are what the library's agents choose; the
    humans' actions are the moves posted; the result is the final view's."""
    assert record.agents == labels
    game = qc.replay(record)
    assert game.is_over and list(game.scores) == final["scores"] and game.winner == final["winner"]
    g = qc.Game(seed=record.seed, rules=record.rules)
    humans = iter(posted)
    for a in record.actions:
        if labels[a.player] == "human":
            assert (a.player, str(a.move)) == next(humans)
            g.play(a.move)
        else:
            assert g.play_agent(labels[a.player]) == a
    assert next(humans, None) is None


@pytest.mark.parametrize(
    "seats, seed",
    [
        (["human", "greedy"], 11),
        (["greedy", "human", "random"], 12),
        (["human", "heuristic", "greedy", "mc:playouts=4:candidates=3:depth=2"], 13),
    ],
)
def test_full_game_against_agents_replays(client, seats, seed):
    game_id, tokens = new_game(client, seats, seed)
    assert set(tokens) == {i for i, s in enumerate(seats) if s == "human"}
    final, posted = play_out(client, game_id, tokens, random.Random(seed))
    assert final["over"] and final["to_move"] is None and final["legal_moves"] == []
    record = get_record(client, game_id)
    assert record.seed == seed
    labels = [s["agent"] for s in final["seats"]]
    assert labels == [s if s == "human" else qc.parse_agent(s).label for s in seats]
    check_record(record, labels, posted, final)


def test_full_game_human_vs_human_replays(client):
    game_id, tokens = new_game(client, ["human", "human", "human"], seed=21)
    final, posted = play_out(client, game_id, tokens, random.Random(5), max_actions=600)
    assert {seat for seat, _ in posted} == {0, 1, 2}
    assert any(move.startswith("x ") for _, move in posted)
    check_record(get_record(client, game_id), ["human"] * 3, posted, final)


def test_agent_labels_are_canonical_and_seed_deals(client):
    # one human seat: the creator's seed is the deal's (several: tests/test_server_fairness.py)
    game_id, tokens = new_game(client, ["greedy", "mc:depth=2:playouts=8", "HUMAN"], seed=99)
    seats = client.get(f"/api/games/{game_id}").json()["seats"]
    assert [s["agent"] for s in seats] == ["greedy", "mc:depth=2:playouts=8", "human"]
    dealt = qc.Game(players=3, seed=99)
    view = client.get(f"/api/games/{game_id}", headers=bearer(tokens[2])).json()
    assert view["deal"] == {"kind": "chosen", "seed": 99}
    assert view["observation"]["hand"] == [qc.tile_code(t) for t in dealt.hand(2)]  # seat 2 has not moved


def test_ids_and_tokens_can_follow_an_option_on_a_command_line(client):
    """No game id or token begins with '-', which argparse would read as an option
    (``qwirkle bot --game -x2...`` fails). One draw in 64 would, so 600 draws without
    the guard pass with probability 1e-4."""
    drawn = []
    for _ in range(100):
        game_id, tokens = new_game(client, ["human"] * 5 + ["greedy"], seed=1)
        drawn += [game_id, *tokens.values()]
    assert len(drawn) == 600 and len(set(drawn)) == 600
    assert [d for d in drawn if d.startswith("-")] == []


def test_spectator_sees_no_hand(client):
    game_id, tokens = new_game(client, ["human", "greedy"], seed=3)
    play_a_few(client, game_id, tokens, 4)
    view = client.get(f"/api/games/{game_id}").json()
    obs = view["observation"]
    assert view["seat"] is None and obs["player"] is None and obs["hand"] == []
    assert view["legal_moves"] == [] and view["can_exchange"] == 0 and view["can_undo"] is False
    board = [c.split("@")[0] for c in obs["board"]]
    assert obs["unseen"] == [3 - board.count(qc.tile_code(t)) for t in range(36)]
    assert sum(obs["unseen"]) == obs["bag_size"] + sum(obs["hand_sizes"])


def play_a_few(client, game_id, tokens, n, rng=None):
    rng = rng or random.Random(0)
    for _ in range(n):
        view = next(
            v
            for v in (client.get(f"/api/games/{game_id}", headers=bearer(t)).json() for t in tokens.values())
            if v["to_move"] == v["seat"]
        )
        r = client.post(
            f"/api/games/{game_id}/actions",
            json={"move": choose(view, rng, exchange_rate=0)},
            headers=bearer(tokens[view["seat"]]),
        )
        assert r.status_code == 200, r.text


def snapshot(client, db, game_id, tokens):
    views = {s: client.get(f"/api/games/{game_id}", headers=bearer(t)).json() for s, t in tokens.items()}
    return views, open_store(db).load(game_id)


def test_refused_requests_change_nothing(client, db):
    game_id, tokens = new_game(client, ["human", "human"], seed=8)
    play_a_few(client, game_id, tokens, 5)
    before = snapshot(client, db, game_id, tokens)
    views = before[0]
    mover = next(s for s, v in views.items() if v["to_move"] == s)
    other = 1 - mover
    url = f"/api/games/{game_id}/actions"
    hand = views[mover]["observation"]["hand"]
    occupied = views[mover]["observation"]["board"][0].split("@")[1]
    missing = next(qc.tile_code(t) for t in range(36) if qc.tile_code(t) not in hand)
    replayed = qc.replay(qc.GameRecord.from_json(before[1].record))
    legal = views[mover]["legal_moves"][0]["move"]

    def expect(status, response, message=None):
        assert response.status_code == status, response.text
        error = response.json()["error"]
        assert isinstance(error, str) and error
        if message is not None:
            assert error == message

    def library_message(text):
        with pytest.raises(qc.IllegalMoveError) as e:
            replayed.copy().play(text)
        return str(e.value)

    for text in (f"{hand[0]}@{occupied}", f"{missing}@500,500", f"x {missing}", "pass"):
        expect(409, client.post(url, json={"move": text}, headers=bearer(tokens[mover])), library_message(text))
    expect(
        409,
        client.post(url, json={"move": legal}, headers=bearer(tokens[other])),
        f"it is seat {mover}'s turn, not seat {other}'s",
    )
    expect(403, client.post(url, json={"move": legal}))
    expect(403, client.post(url, json={"move": legal}, headers=bearer("not-a-token")))
    expect(403, client.post(url, json={"move": legal}, params={"token": "x" * 20}))
    expect(403, client.post(url, json={"move": legal}, headers={"Authorization": f"Basic {tokens[mover]}"}))
    expect(403, client.get(f"/api/games/{game_id}", headers=bearer("wrong")))
    expect(403, client.post(f"/api/games/{game_id}/undo", headers=bearer("wrong")))
    _, elsewhere = new_game(client, ["human", "greedy"])
    expect(403, client.post(url, json={"move": legal}, headers=bearer(elsewhere[0])))
    mover_auth = bearer(tokens[mover])
    expect(
        413,
        client.post(
            url,
            content=json.dumps({"move": "R1@0,0 " * 1000}),
            headers={**mover_auth, "Content-Type": "application/json"},
        ),
    )
    expect(
        413,
        client.post(
            url, content=b"{" + b" " * (MAX_BODY + 1) + b"}", headers={**mover_auth, "Content-Type": "application/json"}
        ),
    )
    expect(422, client.post(url, json={"move": "R1@0,0" + " " * MAX_MOVE}, headers=mover_auth))
    expect(
        422, client.post(url, content=b'{"move": "R1@0,0"', headers={**mover_auth, "Content-Type": "application/json"})
    )
    expect(422, client.post(url, json={}, headers=mover_auth))
    expect(422, client.post(url, json={"move": 7}, headers=mover_auth))
    expect(422, client.post(url, json={"move": legal, "points": 99}, headers=mover_auth))
    expect(422, client.post(url, json=[legal], headers=mover_auth))
    expect(422, client.post(url, json={"move": ""}, headers=mover_auth))
    for text in ("R9@0,0", "Z1@0,0", "R1@0;0", "hello", "x", "pass now", "R1@0,0 " * 7):
        expect(400, client.post(url, json={"move": text}, headers=mover_auth))
    expect(404, client.post("/api/games/nosuchgame/actions", json={"move": legal}, headers=mover_auth))
    expect(404, client.get("/api/games/../../etc"))
    expect(404, client.get("/api/games/" + "a" * 40))
    after = snapshot(client, db, game_id, tokens)
    assert after == before
    r = client.post(url, json={"move": legal}, headers=mover_auth)
    assert r.status_code == 200 and r.json()["move"] == legal


@pytest.mark.parametrize(
    "body, status",
    [
        ({"seats": ["human"]}, 422),
        ({"seats": ["human"] * 7}, 422),
        ({"seats": ["greedy", "greedy"]}, 422),
        ({"seats": ["human", "nobody"]}, 422),
        ({"seats": ["human", "mc:playouts=100000"]}, 422),
        ({"seats": ["human", "mc:playouts=nan"]}, 422),
        ({"seats": ["human", "greedy:depth=3"]}, 422),
        ({"seats": ["human", "g" * 65]}, 422),
        ({"seats": ["human", 5]}, 422),
        ({"seats": "human,greedy"}, 422),
        ({"seats": ["human", "greedy"], "seed": -1}, 422),
        ({"seats": ["human", "greedy"], "seed": 2**64}, 422),
        ({"seats": ["human", "greedy"], "seed": "7"}, 422),
        ({"seats": ["human", "greedy"], "seed": True}, 422),
        ({"seats": ["human", "greedy"], "color": "red"}, 422),
        ({}, 422),
    ],
)
def test_new_game_refusals(client, db, body, status):
    r = client.post("/api/games", json=body)
    assert r.status_code == status, r.text
    assert r.json()["error"]
    assert open_store(db).count() == 0


def test_largest_seed_and_six_seats(client):
    game_id, tokens = new_game(client, ["human"] * 6, seed=2**64 - 1)
    assert len(tokens) == 6
    views = [client.get(f"/api/games/{game_id}", headers=bearer(t)).json() for t in tokens.values()]
    assert [v["seat"] for v in views] == list(range(6))
    assert sum(v["to_move"] == v["seat"] for v in views) == 1


def test_record_only_once_over(client):
    game_id, tokens = new_game(client, ["human", "greedy"], seed=4)
    r = client.get(f"/api/games/{game_id}/record")
    assert r.status_code == 409 and "over" in r.json()["error"]
    play_out(client, game_id, tokens, random.Random(1))
    assert client.get(f"/api/games/{game_id}/record").status_code == 200
    r = client.post(f"/api/games/{game_id}/actions", json={"move": "pass"}, headers=bearer(tokens[0]))
    assert r.status_code == 409 and r.json()["error"] == "the game is over"


def test_undo_takes_back_the_move_and_the_replies(client):
    game_id, tokens = new_game(client, ["human", "greedy", "heuristic"], seed=31)
    auth = bearer(tokens[0])
    url = f"/api/games/{game_id}"
    r = client.post(f"{url}/undo", headers=auth)
    first = client.get(url, headers=auth).json()
    assert r.status_code == 409 and first["can_undo"] is False
    play_a_few(client, game_id, tokens, 2, random.Random(2))
    before = client.get(url, headers=auth).json()
    assert before["can_undo"] is True
    move = before["legal_moves"][-1]["move"]
    assert client.post(f"{url}/actions", json={"move": move}, headers=auth).status_code == 200
    after_move = client.get(url, headers=auth).json()
    assert len(after_move["history"]) == len(before["history"]) + 3
    r = client.post(f"{url}/undo", headers=auth)
    assert r.status_code == 200 and r.json() == {"undone": 3}
    undone = client.get(url, headers=auth).json()
    assert undone["version"] > after_move["version"]
    assert undone["undos"] == before["undos"] + 1
    same = {k: v for k, v in undone.items() if k not in ("version", "undos")}
    assert same == {k: v for k, v in before.items() if k not in ("version", "undos")}
    client.post(f"{url}/actions", json={"move": move}, headers=auth)
    assert client.get(url, headers=auth).json()["history"] == after_move["history"]  # same draws, same replies


def test_undo_refused_with_two_humans_and_once_over(client):
    game_id, tokens = new_game(client, ["human", "human"], seed=5)
    play_a_few(client, game_id, tokens, 2)
    for token in tokens.values():
        r = client.post(f"/api/games/{game_id}/undo", headers=bearer(token))
        assert r.status_code == 409 and "every other seat is an agent" in r.json()["error"]
    game_id, tokens = new_game(client, ["human", "greedy"], seed=6)
    play_out(client, game_id, tokens, random.Random(6))
    r = client.post(f"/api/games/{game_id}/undo", headers=bearer(tokens[0]))
    assert r.status_code == 409 and r.json()["error"] == "the game is over"


def test_hint_gives_three_legal_moves(client):
    game_id, tokens = new_game(client, ["human", "greedy"], seed=17)
    play_a_few(client, game_id, tokens, 3)
    view = client.get(f"/api/games/{game_id}", headers=bearer(tokens[0])).json()
    r = client.get(f"/api/games/{game_id}/hint", headers=bearer(tokens[0]))
    assert r.status_code == 200, r.text
    hints = r.json()["hints"]
    legal = {m["move"]: m["points"] for m in view["legal_moves"]}
    assert len(hints) == 3
    for h in hints:
        if h["move"].startswith("x "):
            assert h["points"] == 0
        else:
            assert legal[h["move"]] == h["points"]
        assert 0 <= h["win_rate"] <= 1
    assert [h["margin"] for h in hints] == sorted((h["margin"] for h in hints), reverse=True)
    assert client.get(f"/api/games/{game_id}/hint").status_code == 403


def test_restart_resumes_from_the_record_and_plays_pending_agents(db):
    with TestClient(create_app(db, settings=OPEN)) as c:
        game_id, tokens = new_game(c, ["human", "greedy"], seed=40)
        play_a_few(c, game_id, tokens, 3)
        view = c.get(f"/api/games/{game_id}", headers=bearer(tokens[0])).json()
    # the server stopped after the human's move was stored, before greedy replied
    store = open_store(db)
    row = store.load(game_id)
    game = qc.replay(qc.GameRecord.from_json(row.record))
    game.play(view["legal_moves"][0]["move"])
    store.append(game_id, row.head, [json.dumps(game.history[-1].to_dict())], game.is_over)
    store.close()
    with TestClient(create_app(db, settings=OPEN)) as c:
        resumed = c.get(f"/api/games/{game_id}", headers=bearer(tokens[0])).json()
    assert resumed["to_move"] == 0
    assert len(resumed["history"]) == len(view["history"]) + 2
    assert [a["player"] for a in resumed["history"][-2:]] == [0, 1]
    assert resumed["history"][-2]["move"] == view["legal_moves"][0]["move"]
    replayed = qc.replay(qc.GameRecord.from_json(open_store(db).load(game_id).record))
    assert replayed.history[-1] == game.copy().play_agent("greedy")


def test_pages_and_openapi(client):
    for path in ("/", "/game/abc"):
        r = client.get(path)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert "default-src 'self'" in r.headers["content-security-policy"]
    for name in ("board.js", "boardview.js", "tiles.js", "api.js", "lobby.js", "style.css", "favicon.svg"):
        assert client.get(f"/static/{name}").status_code == 200
    paths = client.get("/openapi.json").json()["paths"]
    assert {
        "/api/games",
        "/api/games/{game_id}",
        "/api/games/{game_id}/actions",
        "/api/games/{game_id}/undo",
        "/api/games/{game_id}/record",
    } <= set(paths)
    assert client.get("/api/agents").json()["agents"] == list(qc.AGENTS)


def test_games_dropped_from_memory_come_back_from_the_store(db):
    with TestClient(create_app(db, max_live_games=2, settings=OPEN)) as c:
        games = [new_game(c, ["human", "greedy"], seed=50 + i) for i in range(5)]
        service = c.app.state.service
        for round_ in range(3):
            for game_id, tokens in games:
                play_a_few(c, game_id, tokens, 1, random.Random(round_))
                assert service.live_games <= 2
        for game_id, tokens in games:
            view = c.get(f"/api/games/{game_id}", headers=bearer(tokens[0])).json()
            assert len(view["history"]) == 6 + (view["history"][0]["player"] == 1)
            record = qc.GameRecord.from_json(open_store(db).load(game_id).record)
            assert len(record.actions) == len(view["history"]) and qc.replay(record).turn == len(record.actions)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["serve", "--port", "70000"], "argument --port: a port is 1 .. 65535, not 70000"),
        (["serve", "--port", "http"], "argument --port: expected a port number, got 'http'"),
        (["serve", "--db", "/no/such/folder/games.sqlite"], "folder /no/such/folder does not exist"),
        (
            ["bot", "--url", "http://127.0.0.1:1", "--game", "g", "--token", "t", "--agent", "wizard"],
            "argument --agent: unknown agent 'wizard'",
        ),
        (
            ["bot", "--url", "127.0.0.1:8000", "--game", "g", "--token", "t"],
            "argument --url: expected http://HOST:PORT",
        ),
        (["bot", "--url", "http://127.0.0.1:1", "--game", "g"], "argument --token: give the seat's token"),
        (["bot", "--game", "g", "--token", "t"], "the following arguments are required: --url"),
    ],
)
def test_command_line_mistakes(argv, message, capsys, monkeypatch):
    from qwirkle_core.cli import main

    monkeypatch.delenv("QWIRKLE_TOKEN", raising=False)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("qwirkle: error:") and message in err and err.count("\n") == 1


def test_a_failed_write_refuses_the_action_and_changes_nothing(client, db, monkeypatch):
    game_id, tokens = new_game(client, ["human", "greedy"], seed=60)
    auth = bearer(tokens[0])
    url = f"/api/games/{game_id}"
    before = client.get(url, headers=auth).json()
    store = client.app.state.service.store
    append = store.append
    calls = []

    def failing_append(game_id, expected, actions, over, **changes):
        calls.append(list(actions))
        if len(calls) in plan:
            raise OSError("disk I/O error")
        return append(game_id, expected, actions, over, **changes)

    monkeypatch.setattr(store, "append", failing_append)
    move = before["legal_moves"][0]["move"]
    plan = {1}  # the human's move and greedy's reply cannot be stored: refused, nothing changed
    r = client.post(f"{url}/actions", json={"move": move}, headers=auth)
    assert r.status_code == 503 and "nothing changed" in r.json()["error"] and r.headers["Retry-After"] == "1"
    assert client.get(url, headers=auth).json() == before
    assert open_store(db).load(game_id).head.version == before["version"]
    assert len(calls[0]) == 2  # the move and the reply go in one transaction
    r = client.post(f"{url}/actions", json={"move": move}, headers=auth)
    assert r.status_code == 200 and r.json()["to_move"] == 0 and calls[1] == calls[0]
    after = client.get(url, headers=auth).json()
    assert after["version"] == before["version"] + 2
    assert after["to_move"] == 0 and [a["player"] for a in after["history"][-2:]] == [0, 1]
    assert qc.replay(qc.GameRecord.from_json(open_store(db).load(game_id).record)).turn == len(after["history"])


def test_a_version_1_sqlite_file_is_converted(tmp_path):
    """A file of the earlier layout (one whole record per game) opens as header + rows,
    with the same versions and tokens, and its games play on."""
    import sqlite3

    game = qc.Game(players=2, seed=33)
    while len(game.history) < 7 or game.current_player != 0:  # the human seat 0 to move
        game.play_agent("greedy")
    n = len(game.history)
    path = tmp_path / "v1.sqlite"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE games (id TEXT PRIMARY KEY, created REAL NOT NULL, updated REAL NOT NULL,"
        " version INTEGER NOT NULL, over INTEGER NOT NULL, record TEXT NOT NULL);"
        "CREATE TABLE seats (game_id TEXT NOT NULL REFERENCES games(id), seat INTEGER NOT NULL,"
        " agent TEXT NOT NULL, token TEXT, PRIMARY KEY (game_id, seat));"
        "PRAGMA user_version=1;"
    )
    token = "t" * 32
    record = qc.GameRecord.from_game(game, ["human", "greedy"]).to_json()
    db.execute("INSERT INTO games VALUES ('old', 1.0, 2.0, ?, 0, ?)", (n + 1, record))
    db.execute("INSERT INTO seats VALUES ('old', 0, 'human', ?), ('old', 1, 'greedy', NULL)", (token_digest(token),))
    db.commit()
    db.close()
    store = open_store(path)
    row = store.load("old")
    assert row.head == Head(n + 1, n, 0) and len(row.actions) == n and row.agents == ("human", "greedy")
    assert qc.replay(qc.GameRecord.from_json(row.record)).history == game.history
    store.close()
    with TestClient(create_app(path, settings=OPEN)) as c:
        view = c.get("/api/games/old", headers=bearer(token)).json()
        assert view["version"] == n + 1 and len(view["history"]) == n and view["to_move"] == 0
        r = c.post("/api/games/old/actions", json={"move": view["legal_moves"][0]["move"]}, headers=bearer(token))
        assert r.status_code == 200, r.text
        assert c.get("/api/games/old", headers=bearer(token)).json()["version"] == n + 3
