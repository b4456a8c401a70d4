"""The working tree against a git revision, side by side in one run.

    python benchmarks/compare.py 2a3bb36                 # rates, enumeration, cold start
    python benchmarks/compare.py 2a3bb36 --rounds 5 --main-job

The revision's ``src/`` is exported (``git archive``) into a temporary folder; each
side runs in its own processes with ``PYTHONPATH`` on its ``src/`` and its own
``NUMBA_CACHE_DIR``, so neither sees the other's kernels or cache. Figures:

- batch rates, games/s of ``qwirkle_core.simulate(games, agents=..., seed=1,
  threads=...)``: greedy-vs-greedy on 1 thread, random, heuristic (1 thread), greedy on
  2 threads. One worker process per side stays up (kernels loaded, one warm-up batch
  each); each round asks both for every benchmark in turn, the side going first
  alternating, so both see the same machine. ``--only search``: the search agent's
  rate instead (``search`` against greedy, 4 games a batch, one thread; an agent that
  revisions before it lack). ``--only endgame``: the exact endgame solver's nodes per
  CPU second over the exact solves of 30 endgames (greedy games 1000-1029 once both
  hands hold at most 4 tiles). The ratios are of the median rounds and
  of the best rounds (on a shared machine other work only ever slows a round down, so
  the best round is the closer to the engine's own speed). One-thread figures are per
  second of the process's CPU time, which others' work on a shared machine stretches
  much less than wall time; the two-thread figure is per wall-clock second.
- enumeration: legal moves per second of ``movegen.generate`` (all moves, with their
  scores) over 350 mid-game positions (turns 10-40 of 50 greedy games), each 10 times
  in a row, through a small uncached driver kernel (a round: the best of 20 passes); and ``Game.legal_moves()`` calls
  per second over the same positions (the public call, Move objects included).
- cold start, each in a fresh process with an empty cache: ``import qwirkle_core;
  qc.simulate(10, threads=1)`` and ``qc.Game(2, seed=1).legal_moves()`` (seconds from
  before the import to the call's return, and peak RSS; the median of ``--rounds``
  rounds, the side going first alternating); then the same two again on the cache the
  first left (cached start). ``--only cold-search``: instead the cold start of one game
  of the search agent against greedy, ``qc.simulate(1, ["search", "greedy"],
  threads=1)`` (the largest set of kernels a call compiles), likewise.
- ``--main-job``: the README's main job, ``qwirkle simulate --games 1000000 --agents
  greedy,greedy --seed 1 --threads 2 --out FILE.parquet``, once per side on a warm
  cache: its wall time, the time it reports for the games, and its peak RSS.

Only APIs that both sides have are used (``simulate(n, agents=, seed=, threads=)``,
``Game.play_agent``, ``Game.legal_moves``, ``movegen.generate`` with ``best_only``,
``state.hand_mask``, the CLI's ``simulate`` flags), so revisions back to 2a3bb36 work.
On a shared machine the absolute figures move with the load; the ratios much less.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RATES = [  # name, agents, threads, games per timed batch
    ("greedy, 1 thread", ("greedy", "greedy"), 1, 20_000),
    ("random, 1 thread", ("random", "random"), 1, 5_000),
    ("heuristic, 1 thread", ("heuristic", "heuristic"), 1, 2_000),
    ("greedy, 2 threads", ("greedy", "greedy"), 2, 40_000),
]
SEARCH = [("search vs greedy, 1 thread", ("search", "greedy"), 1, 4)]  # --only search
ENUM = [("enumeration, moves/s", "enum"), ("Game.legal_moves(), calls/s", "legal")]
ENDGAME = [("exact endgame solves, nodes/s", "endgame")]  # --only endgame
COLD = {
    "simulate(10), s": "qc.simulate(10, threads=1)",
    "Game(2, seed=1).legal_moves(), s": "qc.Game(2, seed=1).legal_moves()",
}
COLD_SEARCH = {"simulate(1, search vs greedy), s": 'qc.simulate(1, ["search", "greedy"], threads=1)'}
COLD_SCRIPT = """
import resource, sys, time
t0 = time.perf_counter()
import qwirkle_core as qc
{call}
print(time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, qc.__file__)
"""


# --- the worker: one side's process, answering one JSON command per line ----------


def _positions():
    """Greedy self-play positions at turns 10, 15, .., 40 of games seeded 0..49."""
    import qwirkle_core as qc

    out = []
    for seed in range(50):
        g = qc.Game(2, seed=seed)
        while not g.is_over and g.turn <= 40:
            if g.turn % 5 == 0 and g.turn >= 10:
                out.append(g.copy())
            g.play_agent("greedy")
    return out


def _endgames():
    """Greedy games seeded 1000..1029 played until the bag is empty and both hands hold
    at most 4 tiles (the endgame benchmark's exact solves)."""
    import qwirkle_core as qc

    out = []
    for seed in range(1000, 1030):
        g = qc.Game(2, seed=seed)
        while not g.is_over and not (g.bag_size == 0 and max(g.hand_sizes) <= 4):
            g.play_agent("greedy")
        if not g.is_over:
            out.append(g)
    return out


def _enum_driver(games):
    """The stacked arrays of ``games`` and an uncached kernel enumerating them."""
    import numpy as np
    from numba import njit

    from qwirkle_core._kernels import movegen as mg
    from qwirkle_core._kernels.state import hand_mask

    def arrays(g):
        if hasattr(g, "kernel_arrays"):
            a = g.kernel_arrays()
            return a.board, a.cross, a.anchors, a.bmeta, a.hands, a.gmeta
        return g._board, g._cross, g._anchors, g._bmeta, g._hands, g._gmeta

    rows = [arrays(g) for g in games]
    stacked = [np.stack([r[i] for r in rows]) for i in range(4)]
    hands = np.array([hand_mask(r[4], r[5], g.current_player) for g, r in zip(games, rows)], np.int64)

    @njit
    def enumerate_all(board, cross, anchors, bmeta, hand, moves, st, reps):
        total = 0
        for i in range(board.shape[0]):
            for _ in range(reps):
                total += mg.generate(board[i], cross[i], anchors[i], bmeta[i], hand[i], 0, moves, st, False)
        return total

    args = (*stacked, hands, mg.new_move_buffer(100_000), mg.new_scratch_array(), 10)
    return enumerate_all, args


def _clock(threads):
    """The clock of a timed call: the process's CPU time for one thread (a shared
    machine's other work does not stretch it), wall time for more."""
    return time.process_time if threads == 1 else time.perf_counter


def worker():
    import qwirkle_core as qc

    warm = set()
    enum = legal = endgames = None
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["what"] == "rate":
            agents, threads, games = tuple(cmd["agents"]), cmd["threads"], cmd["games"]
            if (agents, threads) not in warm:
                qc.simulate(min(20, games), agents=agents, seed=0, threads=threads)
                warm.add((agents, threads))
            clock = _clock(threads)
            t = clock()
            qc.simulate(games, agents=agents, seed=1, threads=threads)
            value = games / (clock() - t)
        elif cmd["what"] == "endgame":
            if endgames is None:
                endgames = _endgames()
                qc.solve_endgame(endgames[0], max_nodes=10)  # compile
            t = time.process_time()
            nodes = sum(qc.solve_endgame(g).nodes for g in endgames)
            value = nodes / (time.process_time() - t)
        elif cmd["what"] == "enum":
            if enum is None:
                fn, args = enum = _enum_driver(_positions())
                fn(*args)  # compile
            fn, args = enum
            value = 0.0
            for _ in range(20):  # the best of 20 passes (each about 10 ms)
                t = time.process_time()
                total = fn(*args)
                value = max(value, total / (time.process_time() - t))
        else:
            if legal is None:
                legal = _positions()
            t = time.process_time()
            for _ in range(3):
                for g in legal:
                    g.legal_moves()
            value = 3 * len(legal) / (time.process_time() - t)
        print(json.dumps({"value": value, "file": qc.__file__}), flush=True)


# --- the driver ----------------------------------------------------------------------


class Side:
    """One side of the comparison: its ``src/`` folder and its own numba cache."""

    def __init__(self, name, src, tmp):
        self.name, self.src = name, src
        self.cache = Path(tempfile.mkdtemp(prefix="cache-", dir=tmp))
        self.proc = None

    def env(self, cache=None):
        return {**os.environ, "PYTHONPATH": str(self.src), "NUMBA_CACHE_DIR": str(cache or self.cache)}

    def ask(self, cmd):
        if self.proc is None:
            self.proc = subprocess.Popen(
                [sys.executable, __file__, "--worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=self.env(),
            )
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        assert reply["file"].startswith(str(self.src)), f"{self.name} imported {reply['file']}"
        return reply["value"]

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None

    def cold(self, call, cache):
        """Seconds and peak MB of a fresh process running ``call`` on ``cache``."""
        out = subprocess.run(
            [sys.executable, "-c", COLD_SCRIPT.format(call=call)],
            env=self.env(cache),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert out[2].startswith(str(self.src)), f"{self.name} imported {out[2]}"
        return float(out[0]), float(out[1])

    def main_job(self, tmp):
        """Wall seconds, the reported seconds of the games and peak MB of the main job."""
        out = Path(tmp) / f"{self.name}.parquet"
        cmd = [sys.executable, "-c", "import sys; from qwirkle_core.cli import main; sys.exit(main())"]
        args = [
            "simulate",
            "--games",
            "1000000",
            "--agents",
            "greedy,greedy",
            "--seed",
            "1",
            "--threads",
            "2",
            "--out",
            str(out),
            "--no-progress",
        ]
        t = time.perf_counter()
        proc = subprocess.Popen([*cmd, *args], env=self.env(), stdout=subprocess.PIPE, text=True)
        text = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        assert status == 0, text
        found = re.search(r"games in ([\d.]+) s", text)
        return wall, float(found.group(1)) if found else float("nan"), usage.ru_maxrss / 1024


def _cold_rounds(sides, call, rounds, tmp, verbose=False):
    """``(seconds, peak MB)`` of ``call`` from an empty cache, ``rounds`` times per side,
    the side going first alternating: one list per side."""
    res = ([], [])
    for r in range(rounds):
        for i in [0, 1] if r % 2 == 0 else [1, 0]:
            res[i].append(sides[i].cold(call, tempfile.mkdtemp(prefix="cold-", dir=tmp)))
            if verbose:
                print(f"  round {r + 1}, {sides[i].name}: {res[i][-1][0]:.1f} s, {res[i][-1][1]:.0f} MB", flush=True)
    return res


def show(name, a, b):
    """One line: the figure of each side and the ratio working tree / revision."""
    print(f"{name:34s} {a:14,.2f} {b:14,.2f} {b / a:8.3f}", flush=True)


def main():
    if sys.argv[1:] == ["--worker"]:
        return worker()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", help="the git revision to compare against (e.g. 2a3bb36)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the rate benchmarks (default 3)")
    ap.add_argument(
        "--only",
        choices=["cold", "rates", "enum", "search", "endgame", "cold-search"],
        help="just the cold and cached starts, the batch rates, the enumeration, or the search agent's rate, the endgame solver's or the search agent's cold start (not in the default set: revisions before them lack them)",
    )
    ap.add_argument(
        "--main-job", action="store_true", help="also the million-game main job on 2 threads (a few minutes)"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="qc-compare-") as tmp:
        rev_dir = Path(tmp) / "rev"
        rev_dir.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.rev, "src"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(rev_dir)], input=archive, check=True)
        sides = [Side(args.rev, rev_dir / "src", tmp), Side("tree", ROOT / "src", tmp)]
        sha = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", args.rev], capture_output=True, text=True
        ).stdout.strip()
        head = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True
        ).stdout.strip()
        print(f"A = {args.rev} ({sha}), B = working tree ({head}); ratio = B / A; {os.cpu_count()} cores", flush=True)
        print(f"{'':34s} {'A':>14s} {'B':>14s} {'B/A':>8s}")

        if args.only in (None, "cold"):
            print(f"cold start (empty cache), median of {args.rounds} rounds, seconds to the call's return; peak MB")
            for name, call in COLD.items():
                res = _cold_rounds(sides, call, args.rounds, tmp)
                show(name, *(statistics.median(t for t, _ in side) for side in res))
                show("  peak MB", *(max(m for _, m in side) for side in res))
            print("cached start (warm cache), seconds")
            for name, call in COLD.items():
                for s in sides:  # fill each side's own cache first
                    s.cold(call, s.cache)
                res = [s.cold(call, s.cache) for s in sides]
                show(name, res[0][0], res[1][0])

        if args.only == "cold-search":
            print(
                f"cold start (empty cache), median and best of {args.rounds} rounds, seconds to the call's return; peak MB"
            )
            for name, call in COLD_SEARCH.items():
                res = _cold_rounds(sides, call, args.rounds, tmp, verbose=True)
                seconds = [[t for t, _ in side] for side in res]
                show(name, statistics.median(seconds[0]), statistics.median(seconds[1]))
                show("  best round", min(seconds[0]), min(seconds[1]))
                show("  peak MB", max(m for _, m in res[0]), max(m for _, m in res[1]))

        rates = RATES if args.only in (None, "rates") else SEARCH if args.only == "search" else []
        enum = ENUM if args.only in (None, "enum") else ENDGAME if args.only == "endgame" else []
        if rates or enum:
            print(f"rates, median and best of {args.rounds} interleaved rounds (games/s, moves/s, calls/s)")
        figures = {name: ([], []) for name, *_ in rates + enum}
        try:
            for r in range(args.rounds):
                order = [0, 1] if r % 2 == 0 else [1, 0]
                for name, agents, threads, games in rates:
                    for i in order:
                        figures[name][i].append(
                            sides[i].ask({"what": "rate", "agents": agents, "threads": threads, "games": games})
                        )
                for name, what in enum:
                    for i in order:
                        figures[name][i].append(sides[i].ask({"what": what}))
        finally:
            for s in sides:
                s.close()
        for name, (a, b) in figures.items():
            show(name, statistics.median(a), statistics.median(b))
            show("  best round", max(a), max(b))
            print(f"{'  rounds':34s} {' '.join(f'{x:,.0f}' for x in a)} | {' '.join(f'{x:,.0f}' for x in b)}")

        if args.main_job:
            print("main job: 1,000,000 greedy games, 2 threads, --out parquet (wall s, games s, peak MB)")
            res = [s.main_job(tmp) for s in sides]
            for k, name in enumerate(["wall, s", "games, s", "peak MB"]):
                show(name, res[0][k], res[1][k])


if __name__ == "__main__":
    main()
