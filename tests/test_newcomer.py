"""What a new user tripped over (issue 59): moves shown in the notation, exchanges as
text, records to and from files, game equality, "did you mean", result files' modes."""

from __future__ import annotations

import os
import stat

import pytest

import qwirkle_core as qc
from qwirkle_core import cli


def test_a_move_shows_in_the_notation_and_is_built_from_it() -> None:
    g = qc.Game(2, seed=1)
    m = max(g.legal_moves(), key=lambda m: m.score)
    assert repr(m) == f"Move({str(m)!r}, score={m.score})"
    assert qc.Move(str(m), score=m.score) == m and qc.Move(str(m), score=m.score).score == m.score
    assert repr(qc.Move.exchange([0, 27])) == "Move('x R1 B4')" and qc.Move("x R1 B4") == qc.Move.exchange([0, 27])
    assert repr(qc.Move.pass_turn()) == "Move('pass')"
    with pytest.raises(ValueError, match="not a move"):
        qc.Move("hello")


def test_exchange_takes_tile_codes() -> None:
    g = qc.Game(2, seed=3)
    g.play(max(g.legal_moves(), key=lambda m: m.score))
    hand = g.hand()
    codes = [qc.tile_code(t) for t in hand[:2]]
    a, b, c = g.copy(), g.copy(), g.copy()
    a.exchange(hand[:2])
    b.exchange(codes)
    c.exchange(" ".join(codes).lower())
    assert a.position() == b.position() == c.position()
    before = g.position()
    with pytest.raises(ValueError):
        g.exchange(["R1", "ZZ"])
    with pytest.raises(qc.IllegalMoveError):
        g.exchange([qc.tile_code(t) for t in range(36) if t not in hand][:1])
    assert g.position() == before  # refused: unchanged


def test_records_save_and_load_and_a_path_to_from_json_gets_a_hint(tmp_path) -> None:
    record = qc.play_game(("greedy", "random"), seed=5)
    path = tmp_path / "game.json"
    record.save(path)
    assert qc.GameRecord.load(path).to_dict() == record.to_dict()
    assert qc.GameRecord.load(str(path)).to_dict() == record.to_dict()
    with pytest.raises(qc.RecordError, match=r"looks like a file name; read the file with GameRecord.load\(path\)"):
        qc.GameRecord.from_json(str(path))
    with pytest.raises(TypeError, match="GameRecord.load"):
        qc.GameRecord.from_json(path)  # type: ignore[arg-type]
    with pytest.raises(qc.RecordError, match="not valid JSON") as e:
        qc.GameRecord.from_json('{"format": ')
    assert "load" not in str(e.value)


def test_games_compare_by_identity_and_positions_by_value() -> None:
    a, b = qc.Game(2, seed=9), qc.Game(2, seed=9)
    assert a != b and a == a and len({a, b}) == 2
    assert a.position() == b.position()
    a.play_agent("greedy")
    assert a.position() != b.position()


@pytest.mark.parametrize(
    "agent, hint",
    [
        ("greddy", "did you mean 'greedy'?"),
        ("Heuristic", "did you mean 'heuristic'?"),
        ("mc:playout=4", "did you mean 'playouts'?"),
    ],
)
def test_a_misspelt_agent_gets_a_did_you_mean(agent: str, hint: str, capsys) -> None:
    with pytest.raises(qc.AgentError, match=hint.replace("?", r"\?")):
        qc.parse_agent(agent)
    assert cli.main(["simulate", "--agents", f"{agent},greedy"]) == 2
    assert hint in capsys.readouterr().err
    with pytest.raises(qc.AgentError) as e:
        qc.parse_agent("wizard")
    assert "did you mean" not in str(e.value)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_result_files_get_the_umask_mode(tmp_path, suffix: str) -> None:
    """--out files and a cluster's part files (written by write_rows) get the mode the
    umask gives, not mkstemp's 0600."""
    from qwirkle_core.batch.rows import write_rows

    old = os.umask(0o022)
    try:
        path = tmp_path / f"r{suffix}"
        assert cli.main(["simulate", "--games", "20", "--out", str(path), "--no-progress", "--threads", "1"]) == 0
        part = write_rows(tmp_path / f"part-0-20{suffix}", qc.simulate(20, seed=1, threads=1).rows, {})
        os.umask(0o027)
        strict = write_rows(tmp_path / f"strict{suffix}", qc.simulate(5, seed=1, threads=1).rows, {})
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644 and stat.S_IMODE(part.stat().st_mode) == 0o644
    assert stat.S_IMODE(strict.stat().st_mode) == 0o640


def test_the_agents_example_of_docs_server_md_is_the_servers_answer() -> None:
    import json
    import re
    from pathlib import Path

    pytest.importorskip("fastapi", reason="the [server] extra is not installed")
    from fastapi.testclient import TestClient

    from qwirkle_core.server import create_app

    text = (Path(__file__).resolve().parent.parent / "docs" / "server.md").read_text()
    shown = json.loads(re.search(r"### `GET /api/agents`\n\n`(\{.*\})`", text).group(1))
    with TestClient(create_app(":memory:")) as client:
        assert client.get("/api/agents").json() == shown


def test_a_remote_bot_is_recorded_with_its_agents_label() -> None:
    """What ``qwirkle bot`` sends: each move with its agent; the record names the seat
    by that agent, not "human" (a seat that also played moves of its own stays human)."""
    pytest.importorskip("fastapi", reason="the [server] extra is not installed")
    from fastapi.testclient import TestClient

    from qwirkle_core.server import create_app

    def play_out(client, game_id: str, token: str, agent: str | None, moves: int | None = None) -> None:
        auth = {"Authorization": f"Bearer {token}"}
        while moves is None or moves > 0:
            view = client.get(f"/api/games/{game_id}", headers=auth).json()
            if view["over"]:
                return
            if view["legal_moves"]:
                move = view["legal_moves"][0]["move"]
            elif view["can_exchange"]:
                move = "x " + view["observation"]["hand"][0]
            else:
                move = "pass"
            body = {"move": move} if agent is None else {"move": move, "agent": agent}
            assert client.post(f"/api/games/{game_id}/actions", json=body, headers=auth).status_code == 200
            moves = None if moves is None else moves - 1

    with TestClient(create_app(":memory:")) as client:
        new = client.post("/api/games", json={"seats": ["greedy", "human"], "seed": 4}).json()
        game_id, token = new["id"], new["seats"][1]["token"]
        bad = client.post(
            f"/api/games/{game_id}/actions",
            json={"move": "pass", "agent": "wizard"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert bad.status_code == 400 and "unknown agent 'wizard'" in bad.text
        play_out(client, game_id, token, "heuristic:dup=0.5")
        record = qc.GameRecord.from_json(client.get(f"/api/games/{game_id}/record").text)
        assert record.agents == ["greedy", "heuristic:dup=0.5"] and qc.replay(record).is_over

        mixed = client.post("/api/games", json={"seats": ["greedy", "human"], "seed": 5}).json()
        play_out(client, mixed["id"], mixed["seats"][1]["token"], None, moves=1)  # a person's move first
        play_out(client, mixed["id"], mixed["seats"][1]["token"], "greedy")
        record = qc.GameRecord.from_json(client.get(f"/api/games/{mixed['id']}/record").text)
        assert record.agents == ["greedy", "human"]
