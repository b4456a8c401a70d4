"""The compile notice's estimates against cold compiles (docs/cold-start.md, "The
compile notice").

Runs each entry point in a fresh process with an empty numba cache and prints, per
entry point, the notice it said, the CPU seconds and wall seconds of the call, and each
top-level kernel compiled (numba's ``numba:compile`` event)::

    python benchmarks/compile_notice.py                     # every entry point below
    python benchmarks/compile_notice.py simulate vector     # some of them

CPU seconds are the figure to compare with the estimates on a shared machine: wall
time there stretches with the other jobs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

CALLS = {
    "legal": "qc.Game(2, seed=1).legal_moves()",
    "greedy": "qc.Game(2, seed=1).play_agent('greedy')",
    "search": "qc.Game(2, seed=1).play_agent('search')",
    "evaluate": "qc.evaluate_moves(qc.Game(2, seed=1), playouts=4, top=2)",
    "simulate": "qc.simulate(10, threads=1)",
    "tournament": "qc.tournament(['greedy', 'heuristic'], games=4, seed=1)",
    "vector": (
        "from qwirkle_core.env import VectorEnv\n"
        "e = VectorEnv(64, opponents=['greedy'], window=40); e.reset(seed=1); e.step(e.sample_actions())"
    ),
    "vectorself": (
        "from qwirkle_core.env import VectorEnv\n"
        "e = VectorEnv(64, window=40); e.reset(seed=1); e.step(e.sample_actions())"
    ),
    "vectormoves": (
        "from qwirkle_core.env import VectorEnv\n"
        "e = VectorEnv(8, opponents=['greedy'], actions='moves'); e.reset(seed=1); e.step(e.sample_actions())"
    ),
    "vectormovesany": (
        "from qwirkle_core.env import VectorEnv\n"
        "e = VectorEnv(8, opponents=['heuristic'], actions='moves'); e.reset(seed=1); e.step(e.sample_actions())"
    ),
    "gymmoves": (
        "from qwirkle_core.env import QwirkleGymEnv\n"
        "e = QwirkleGymEnv(actions='moves'); e.reset(seed=1); e.step(int(e.action_masks().argmax()))"
    ),
}

CHILD = """
import sys, time
from numba.core import event
depth = [0]
t = [0.0, 0.0]

class Listener(event.Listener):
    def on_start(self, ev):
        if depth[0] == 0:
            t[:] = [time.time(), time.process_time()]
        depth[0] += 1

    def on_end(self, ev):
        depth[0] -= 1
        if depth[0] == 0:
            f = ev.data["dispatcher"].py_func
            name = f.__module__.rsplit(".", 1)[-1] + "." + f.__qualname__
            print(f"  kernel {name}: {time.process_time() - t[1]:.1f} CPU-s, {time.time() - t[0]:.1f} s", flush=True)

event.register("numba:compile", Listener())
import qwirkle_core as qc
c0, w0 = time.process_time(), time.time()
exec(sys.argv[1])
print(f"  total: {time.process_time() - c0:.1f} CPU-s, {time.time() - w0:.1f} s", flush=True)
"""


def main(names: list[str]) -> None:
    for name in names or list(CALLS):
        print(f"{name}: {CALLS[name]!r} (load average {os.getloadavg()[0]:.1f})", flush=True)
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache}
            env.pop("QWIRKLE_QUIET_COMPILE", None)
            t = time.time()
            subprocess.run([sys.executable, "-c", CHILD, CALLS[name]], env=env, check=True, stderr=sys.stdout)
            print(f"  process: {time.time() - t:.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
