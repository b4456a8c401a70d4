"""No seat token in any log line: ``qwirkle serve --workers 2 --log-level trace`` (every
logger at uvicorn's most verbose level, below debug) serves whole games played over
every way a token can travel (the Authorization header, the WebSocket subprotocol, a
first WebSocket message, the older ``?token=``), and its whole output is searched for
every token issued."""

import json
import threading

import httpx
from websockets.sync.client import connect

from qwirkle_core.server import redact
from qwirkle_core.server.bot import play_remote
from server_support import ServerProcess, bearer


def test_redact_covers_every_form_a_token_takes():
    t = "AbC-_9xyz0123456789012345678901"
    for text in (
        f"GET /api/games/g?token={t} HTTP/1.1",
        f"WebSocket /api/games/g/ws?token={t}&x=1",
        f"(b'authorization', b'Bearer {t}')",
        f"< Sec-WebSocket-Protocol: qwirkle, qwirkle.token.{t}",
        f'< TEXT \'{{"token": "{t}"}}\' [44 bytes]',
        f"token%3D{t}",
    ):
        assert t not in redact(text) and "***" in redact(text), text
    assert redact("the token holds no seat") == "the token holds no seat"


def test_no_token_in_any_log_line(tmp_path):
    log_path = tmp_path / "server.log"
    with open(log_path, "w") as log:
        server = ServerProcess(tmp_path / "games.sqlite", log, "--workers", "2", "--log-level", "trace")
        try:
            issued = []
            r = httpx.post(f"{server.url}/api/games", json={"seats": ["human", "human"], "seed": 5}, timeout=30)
            assert r.status_code == 201, r.text
            game_id = r.json()["id"]
            tokens = [s["token"] for s in r.json()["seats"]]
            issued += tokens
            ws = server.url.replace("http://", "ws://") + f"/api/games/{game_id}/ws"
            # the older forms, still served: ?token= on HTTP and on the WebSocket
            assert httpx.get(f"{server.url}/api/games/{game_id}?token={tokens[1]}", timeout=30).json()["seat"] == 1
            with connect(f"{ws}?token={tokens[0]}", open_timeout=10) as sub:
                assert json.loads(sub.recv(timeout=10))["seat"] == 0
            # a first message carries the token
            with connect(ws, subprotocols=["qwirkle", "qwirkle.auth"], open_timeout=10) as sub:
                assert sub.subprotocol == "qwirkle"
                sub.send(json.dumps({"token": tokens[1]}))
                assert json.loads(sub.recv(timeout=10))["seat"] == 1
            # two bots (Authorization header + WebSocket subprotocol) play the whole game
            finals = {}

            def bot(seat):
                finals[seat] = play_remote(server.url, game_id, tokens[seat], agent="greedy", seed=seat)

            threads = [threading.Thread(target=bot, args=(seat,)) for seat in (0, 1)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=240)
            assert finals[0]["over"] and finals[1]["over"] and finals[0]["scores"] == finals[1]["scores"]
            # tokens of games against agents, used once each way
            for seats in (["human", "greedy"], ["greedy", "human", "human"]):
                r = httpx.post(f"{server.url}/api/games", json={"seats": seats}, timeout=30)
                game = r.json()
                for s in game["seats"]:
                    if s["token"]:
                        issued.append(s["token"])
                        path = f"{server.url}/api/games/{game['id']}"
                        assert httpx.get(path, headers=bearer(s["token"]), timeout=30).status_code == 200
                        assert httpx.get(f"{path}/hint?token={s['token']}", timeout=30).status_code in (200, 409)
        finally:
            server.kill()
    text = log_path.read_text(errors="replace")
    assert "TRACE" in text and "DEBUG" in text  # every level was on
    assert "qwirkle.token.***" in text and "token=***" in text and '"token": "***"' in text  # tokens passed
    for token in issued:
        assert token not in text, f"a token is in the log: {[x for x in text.splitlines() if token in x][:2]}"
    assert not any(token[:12] in text for token in issued)
