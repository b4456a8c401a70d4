"""Run by .ci/wheel_check.sh with the fresh virtual environment's python, in an empty
folder: checks that WHEEL and SDIST carry the data files and that the installed wheel
(not an editable install) runs the main job's smoke test, a search game, the web
board's page and the shipped policy.

    python .ci/wheel_check.py WHEEL SDIST
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from pathlib import Path

DATA = (
    "qwirkle_core/py.typed",
    "qwirkle_core/_kernels/leaves.json",
    "qwirkle_core/env/ppo_moves.npz",
    "qwirkle_core/server/static/index.html",
    "qwirkle_core/server/static/game.html",
    "qwirkle_core/server/static/board.js",
)


def step(what: str) -> float:
    print(f"wheel check: {what}", flush=True)
    return time.monotonic()


def done(t0: float) -> None:
    print(f"  ok ({time.monotonic() - t0:.1f} s)", flush=True)


def run(*argv: str, timeout: float = 600) -> str:
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        sys.exit(f"wheel check: {' '.join(argv)} exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r.stdout


def main() -> None:
    wheel, sdist = Path(sys.argv[1]), Path(sys.argv[2])

    t0 = step(f"data files in {wheel.name} and {sdist.name}")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [d for d in DATA if d not in names]
    with tarfile.open(sdist) as tar:
        in_sdist = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    missing += [f"sdist: src/{d}" for d in DATA if f"src/{d}" not in in_sdist]
    if missing:
        sys.exit(f"wheel check: missing from the distributions: {missing}")
    done(t0)

    t0 = step("the package is the wheel's install, not the checkout")
    import qwirkle_core

    where = Path(qwirkle_core.__file__).resolve()
    if "site-packages" not in where.parts:
        sys.exit(f"wheel check: qwirkle_core imported from {where}, not from the installed wheel")
    for d in DATA:
        if not (where.parent.parent / d).is_file():
            sys.exit(f"wheel check: {d} not installed beside {where}")
    print(f"  qwirkle-core {qwirkle_core.__version__} at {where.parent}")
    done(t0)

    t0 = step("the main job's smoke test: qwirkle simulate --games 2000 --out r.parquet")
    out = run(
        "qwirkle", "simulate", "--games", "2000", "--agents", "greedy,greedy", "--seed", "1", "--out", "r.parquet"
    )
    if "wrote 2,000 rows to r.parquet" not in " ".join(out.split()):
        sys.exit(f"wheel check: the smoke test wrote no rows:\n{out}")
    done(t0)

    t0 = step("a search game: qc.play_game(('search', 'greedy'), seed=1), replayed")
    code = (
        "import qwirkle_core as qc\n"
        "r = qc.play_game(('search:time_ms=5', 'greedy'), seed=1)\n"
        "assert qc.replay(r).scores == tuple(r.final_scores), r.final_scores\n"
        "print(r.final_scores)\n"
    )
    print("  final scores", run(sys.executable, "-c", code).strip())
    done(t0)

    t0 = step("the shipped policy: qwirkle tournament --agents qwirkle_core.env.baselines:PPOAgent,greedy --games 2")
    out = run(
        "qwirkle", "tournament", "--agents", "qwirkle_core.env.baselines:PPOAgent,greedy", "--games", "2",
        "--seed", "1", "--threads", "1", "--no-progress",
    )  # fmt: skip
    if "ppo" not in out.lower() or "Traceback" in out:
        sys.exit(f"wheel check: the shipped policy did not play:\n{out}")
    done(t0)

    t0 = step("the web board's page: qwirkle serve, GET /")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        ["qwirkle", "serve", "--port", str(port), "--db", "games.sqlite"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as page:
                    html = page.read().decode()
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    sys.exit(f"wheel check: the server gave no page:\n{server.communicate()[0][-3000:]}")
                time.sleep(0.5)
        if page.status != 200 or "<html" not in html.lower():
            sys.exit(f"wheel check: GET / answered {page.status}:\n{html[:500]}")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/board.js", timeout=5) as script:
            if script.status != 200:
                sys.exit(f"wheel check: GET /static/board.js answered {script.status}")
    finally:
        server.terminate()
        server.wait(30)
    done(t0)
    print("wheel check: all passed")


if __name__ == "__main__":
    main()
