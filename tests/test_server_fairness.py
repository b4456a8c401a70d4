"""Fair deals: a game with several human seats is dealt from a server secret mixed with
the creator's seed, committed at creation (the secret's SHA-256 in every view) and
revealed at the end, so that anyone can check the deal with ``qc.Game(seed=...)``; a
creator's seed is the deal's only in a game with one human seat, and then every view
shows it. Undo is refused where another human plays."""

import hashlib
import random
import warnings

import qwirkle_core as qc
from qwirkle_core.server import create_app
from server_support import bearer, play_out

with warnings.catch_warnings():  # starlette asks for httpx2, the next httpx; httpx works
    warnings.filterwarnings("ignore", message=".*httpx2")
    from fastapi.testclient import TestClient


def new_game(client, seats, seed=None):
    body = {"seats": seats} if seed is None else {"seats": seats, "seed": seed}
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    data = r.json()
    return data["id"], {s["seat"]: s["token"] for s in data["seats"] if s["token"]}


def codes(tiles):
    return [qc.tile_code(t) for t in tiles]


def verify(deal, players):
    """What anyone can do with a finished game's view, as docs/server.md says: check the
    commitment, recompute the seed, deal the game again."""
    secret = bytes.fromhex(deal["secret"])
    assert hashlib.sha256(secret).hexdigest() == deal["commitment"]
    tail = b"" if deal["creator_seed"] is None else deal["creator_seed"].to_bytes(8, "big")
    seed = int.from_bytes(hashlib.sha256(b"qwirkle-core/deal/1\x00" + secret + tail).digest()[:8], "big")
    assert seed == deal["seed"]
    return qc.Game(players=players, seed=seed)


def test_several_humans_are_dealt_from_a_committed_secret(tmp_path):
    with TestClient(create_app(str(tmp_path / "games.sqlite"))) as client:
        games = [new_game(client, ["human", "human"], seed=424242) for _ in range(2)]
        starts = []
        for game_id, tokens in games:
            url = f"/api/games/{game_id}"
            views = [client.get(url, headers=bearer(tokens[s])).json() for s in (0, 1)] + [client.get(url).json()]
            deal = views[0]["deal"]
            assert all(v["deal"] == deal for v in views)  # the same for every seat and spectators
            assert deal["kind"] == "committed" and deal["creator_seed"] == 424242 and len(deal["commitment"]) == 64
            assert deal["secret"] is None and deal["seed"] is None
            # the creator's seed does not give away the other seat's hand
            chosen = qc.Game(players=2, seed=424242)
            assert views[1]["observation"]["hand"] != codes(chosen.hand(1))
            assert views[0]["observation"]["hand"] != codes(chosen.hand(0))
            r = client.post(f"{url}/undo", headers=bearer(tokens[0]))
            assert r.status_code == 409 and "every other seat is an agent" in r.json()["error"]
            starts.append((deal, views))
        assert starts[0][0]["commitment"] != starts[1][0]["commitment"]  # one secret per game
        assert starts[0][1][0]["observation"]["hand"] != starts[1][1][0]["observation"]["hand"]
        game_id, tokens = games[0]
        final, _ = play_out(client, game_id, tokens, random.Random(4))
        record = qc.GameRecord.from_json(client.get(f"/api/games/{game_id}/record").text)
        assert final["deal"]["commitment"] == starts[0][0]["commitment"]
        g = verify(final["deal"], 2)
        assert record.seed == final["deal"]["seed"] and record.hands == [g.hand(p) for p in (0, 1)]
        assert list(qc.replay(record).scores) == final["scores"]
        assert client.get(f"/api/games/{game_id}").json()["deal"] == final["deal"]  # spectators too


def test_one_human_with_a_seed_gets_that_deal_and_every_view_shows_it(tmp_path):
    with TestClient(create_app(str(tmp_path / "games.sqlite"))) as client:
        game_id, tokens = new_game(client, ["human", "greedy", "random"], seed=424242)
        url = f"/api/games/{game_id}"
        mine = client.get(url, headers=bearer(tokens[0])).json()
        assert mine["deal"] == client.get(url).json()["deal"] == {"kind": "chosen", "seed": 424242}
        assert mine["observation"]["hand"] == codes(qc.Game(players=3, seed=424242).hand(0))
        # no seed: a committed secret, as with several humans, revealed at the end
        game_id, tokens = new_game(client, ["greedy", "human"])
        deal = client.get(f"/api/games/{game_id}").json()["deal"]
        assert deal["kind"] == "committed" and deal["creator_seed"] is None and deal["secret"] is None
        final, _ = play_out(client, game_id, tokens, random.Random(5))
        record = qc.GameRecord.from_json(client.get(f"/api/games/{game_id}/record").text)
        assert verify(final["deal"], 2).hand(1) == record.hands[1] and final["deal"]["commitment"] == deal["commitment"]
