"""Behind a reverse proxy (docs/server.md, "Behind a reverse proxy"): ``qwirkle serve
--trusted-proxy 127.0.0.1`` behind Debian's nginx, configured with the block the docs
give, counts each client's games in play by the address nginx forwards, not by nginx's.
Needs nginx (``.ci/run`` installs it); skipped without it, except under CI."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from server_support import SUITE_MARK, ServerProcess, free_port

pytest.importorskip("fastapi")

ROOT = Path(__file__).resolve().parent.parent
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)


def _docs_block():
    text = (ROOT / "docs" / "server.md").read_text()
    return re.search(r"```nginx\n(.*?)```", text, re.S).group(1)


class Nginx:
    """Debian's nginx with the docs' block in a folder of its own, listening on ``port``
    of 127.0.0.1 and passing to ``upstream``; stopped (and the folder deleted) by :meth:`stop`."""

    def __init__(self, port, upstream):
        self.dir = tempfile.mkdtemp(prefix="qwnginx-")
        os.chmod(self.dir, 0o755)
        block = _docs_block().replace("listen 80;", f"listen 127.0.0.1:{port};")
        block = block.replace("http://127.0.0.1:8000", f"http://127.0.0.1:{upstream}")
        temp = "".join(
            f"{kind}_temp_path {self.dir}/{kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        config = (
            f"daemon off;\nworker_processes 1;\npid {self.dir}/nginx.pid;\nerror_log {self.dir}/error.log;\n"
            f"events {{ worker_connections 128; }}\nhttp {{\naccess_log off;\n{temp}{block}\n}}\n"
        )
        (Path(self.dir) / "nginx.conf").write_text(config)
        env = {**os.environ, SUITE_MARK: str(os.getpid())}
        self.proc = subprocess.Popen(
            [NGINX, "-p", self.dir, "-c", f"{self.dir}/nginx.conf"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=env,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/agents", timeout=2)
                return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"nginx did not start: {self.proc.stderr.read().decode(errors='replace')[-2000:]}")
            time.sleep(0.1)

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def nginx_bin():
    if NGINX is None:
        message = "nginx is not installed (apt-get install nginx; .ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return NGINX


def _client(address, url):
    return httpx.Client(base_url=url, transport=httpx.HTTPTransport(local_address=address), timeout=60)


def test_per_address_limits_count_the_client_behind_nginx(tmp_path, nginx_bin):
    """``--games-per-address 2``: through nginx, 127.0.0.2 gets two games and then 429,
    while 127.0.0.3 gets its own two (without --trusted-proxy every client would be
    nginx's 127.0.0.1, and 127.0.0.3 would get 429 at once); a WebSocket through nginx
    gets its views."""
    from websockets.sync.client import connect

    args = ("--trusted-proxy", "127.0.0.1", "--games-per-address", "2", "--games-per-minute", "100")
    with open(tmp_path / "log", "wb") as log:
        server = ServerProcess(tmp_path / "g.sqlite", log, *args)
    port = free_port()
    proxy = Nginx(port, server.port)
    try:
        url = f"http://127.0.0.1:{port}"
        with _client("127.0.0.2", url) as a, _client("127.0.0.3", url) as b:
            body = {"seats": ["human", "greedy"]}
            assert [a.post("/api/games", json=body).status_code for _ in range(3)] == [201, 201, 429]
            answers = [b.post("/api/games", json=body) for _ in range(3)]
            assert [r.status_code for r in answers] == [201, 201, 429], [r.text for r in answers]
            assert "2 games in play" in answers[2].json()["error"]
            game = answers[0].json()
            token = game["seats"][0]["token"]
        ws_url = f"ws://127.0.0.1:{port}/api/games/{game['id']}/ws"
        with connect(ws_url, subprotocols=["qwirkle", f"qwirkle.token.{token}"], open_timeout=10) as ws:
            assert '"seat": 0' in ws.recv(timeout=10)
    finally:
        proxy.stop()
        server.kill()
