"""Learned leave values by self-play (``qc.learn``, ``qwirkle learn``).

The static agent values a move by its points plus the learned value of the tiles it
keeps (its *leave*, reduced to its class under the rules' symmetries: see
:mod:`qwirkle_core._kernels.leaves`). :func:`learn` estimates those values as Macondo
does its "superleaves": play self-play games of the static agent with the current
values, log for each turn what followed the leave it kept (the mover's next turn's
points, +6 for going out, plus the current value of the leave that turn kept), set a
leave's value to the mean of what followed it minus the mean over all turns of its
bag-size bucket, smooth the rarely seen leaves towards the mean of their sub-leaves,
and play again with the new values until they settle.

The games are played in the batch kernel (no Python per turn) on threads, or as tasks
on a Dask cluster (``client``), in ranges of fixed size; game ``i`` of iteration ``j`` plays from ``game_seed(seed, j * games + i)``
and the outcomes are summed as integers, so a table depends only on its arguments,
never on the thread count.
"""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .._checks import check_int, check_seed, check_threads
from .._compiling import compiling
from .._kernels import batch as _bt
from .._kernels import layout as _lo
from .._kernels import leaves as _lv
from .._threads import available_threads
from .._version import __version__
from .local import game_seeds

__all__ = ["LeaveTable", "LearnProgress", "learn", "leave_class", "shipped_table"]

RANGE = 250  # games per kernel call: the unit the threads share out
SMOOTHING = 100  # a leave seen n times keeps n / (n + SMOOTHING) of its own estimate
FORMAT = "qwirkle-core leave table"


class LearnProgress(NamedTuple):
    """One progress report of :func:`learn`: after each round of games, and with
    ``change`` and ``largest`` set after each finished iteration (``change``: the mean
    over the iteration's turns of the change of the value of the leave each kept)."""

    iteration: int  # 1-based, the iteration being played
    iterations: int
    games: int  # games played in this iteration so far
    games_per_iteration: int
    games_per_second: float  # of this iteration so far
    change: float | None  # finished iteration: mean change of a turn's leave value (points), else None
    largest: float | None  # finished iteration: largest change of any value (a rare leave's, often)


@dataclass(frozen=True)
class LeaveTable:
    """A learned leave table: ``values`` float64[buckets, classes] (points), the
    ``counts`` int64[buckets, classes] of turns that kept each class in the last
    iteration, the bag-size bucket edges, the class codes, and the provenance (``command``,
    ``seed``, ``games_per_iteration``, ``iterations``, ``version``, ``date``)."""

    values: np.ndarray
    counts: np.ndarray
    provenance: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of the table (values rounded to 1/10,000 point)."""
        codes, _ = _lv.classes()
        return {
            "format": FORMAT,
            "buckets": _lv.BUCKET_EDGES.tolist(),
            "classes": codes.tolist(),
            "values": [[round(float(v), 4) for v in row] for row in self.values],
            "counts": self.counts.tolist(),
            "provenance": dict(self.provenance),
        }

    def save(self, path: str | Path) -> Path:
        """Write the table to ``path`` (JSON) through a temporary file; returns the path."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1) + "\n")
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> LeaveTable:
        """Read a table file; ValueError for one of other classes or buckets."""
        values, doc = _lv.load_table(Path(path))
        counts = np.array(doc.get("counts", np.zeros_like(values)), np.int64)
        return cls(values, counts, dict(doc.get("provenance", {})))


def shipped_table() -> LeaveTable:
    """The table the package ships and the static agent plays with."""
    return LeaveTable.load(_lv.TABLE_FILE)


def leave_class(tiles: list[int]) -> int:
    """The class id of a leave (tile ids 0..35, at most five, any order)."""
    tiles = sorted(tiles)
    if len(tiles) > _lv.MAX_LEAVE:
        raise ValueError(f"a leave has at most {_lv.MAX_LEAVE} tiles, not {len(tiles)}")
    _, index = _lv.classes()
    rank = int(_lv.leave_rank.py_func(np.array(tiles, np.int64), len(tiles)))
    c = int(index[rank])
    if c < 0:
        raise ValueError("no game holds a tile more than three times")
    return c


def _sub_classes() -> list[list[int]]:
    """For each class, the classes of its sub-leaves (one tile fewer), from a
    representative leave."""
    codes, index = _lv.classes()
    _, first = np.unique(index, return_index=True)
    first = first[1:] if index[first[0]] < 0 else first
    out: list[list[int]] = []
    tiles = np.zeros(_lv.MAX_LEAVE, np.int64)
    for c in range(codes.shape[0]):
        k = _lv.unrank.py_func(int(first[c]), tiles)
        leave = [int(t) for t in tiles[:k]]
        subs = sorted({leave_class(leave[:i] + leave[i + 1 :]) for i in range(k)})
        out.append(subs)
    return out


def estimate(sums: np.ndarray, counts: np.ndarray, smoothing: float = SMOOTHING) -> np.ndarray:
    """Leave values from one iteration's logs: per bucket, the mean outcome of the
    turns that kept each class minus the mean of all turns, smoothed towards the mean of
    its sub-leaves' values by ``smoothing`` pseudo-counts (the empty leave towards 0).
    Classes go by size, so a sub-leave is done before its leaves."""
    subs = _sub_classes()
    values = np.zeros(sums.shape, np.float64)
    for b in range(sums.shape[0]):
        total = counts[b].sum()
        mean_all = sums[b].sum() / _lv.SCALE / total if total else 0.0
        for c in range(sums.shape[1]):  # codes ascend by leave size
            n = counts[b, c]
            prior = float(np.mean(values[b, subs[c]])) if subs[c] else 0.0
            own = sums[b, c] / _lv.SCALE / n - mean_all if n else 0.0
            values[b, c] = (n * own + smoothing * prior) / (n + smoothing)
    return values


def learn(
    seed: int = 0,
    games: int = 20_000,
    iterations: int = 6,
    *,
    threads: int | None = None,
    progress: Callable[[LearnProgress], None] | None = None,
    start: LeaveTable | None = None,
    client: Any = None,
) -> LeaveTable:
    """Learn leave values by self-play of the static agent (module doc).

    Parameters
    ----------
    seed : int
        0 .. 2**64-1; the table depends only on ``seed``, ``games``, ``iterations`` and
        ``start``, not on ``threads``.
    games : int
        self-play games (two players) per iteration, >= 1.
    iterations : int
        >= 1; each plays with the values of the one before (the first with ``start``'s,
        or all zero).
    threads : int, optional
        threads that play (default: every core).
    progress : callable, optional
        called with a :class:`LearnProgress` after each range of games and each iteration.
    client : dask.distributed.Client, optional
        play each iteration's ranges of games as tasks on this cluster (``pip install
        'qwirkle-core[dask]'``); the table is the same as on local threads.

    Returns
    -------
    LeaveTable
        the values of the last finished iteration. Ctrl-C (KeyboardInterrupt) during an
        iteration returns the table of the iterations finished before it (its
        provenance says how many), or re-raises when none was.
    """
    seed = check_seed(seed)
    games = check_int(games, "games", 1, 1 << 40)
    iterations = check_int(iterations, "iterations", 1, 10_000)
    workers = check_threads(threads, available_threads())
    if client is not None:
        _dist().check_client(client)
    codes, index = _lv.classes()
    shape = (_lv.BUCKETS, codes.shape[0])
    values = np.zeros(shape) if start is None else np.array(start.values, np.float64)
    if values.shape != shape:
        raise ValueError(f"start: a table of {shape[0]} x {shape[1]} values, not {values.shape}")
    spec = _lo.make_spec(_lo.STATIC)
    counts = np.zeros(shape, np.int64)
    done = 0
    command = f"qwirkle learn --seed {seed} --games {games} --iterations {iterations}"
    # compile (or load) the kernel before the clock of the first iteration starts
    if client is not None:
        client.run(learn_range, seed, 0, 0, spec, np.zeros(shape[0] * shape[1]))
    with compiling("the self-play learning kernels", LEARN_COMPILE_SECONDS):  # says so once if it compiles
        _play(np.zeros(0, np.uint64), spec, index, np.ascontiguousarray(values.ravel()), counts, counts.copy())
    with ThreadPoolExecutor(workers) as pool:
        try:
            for it in range(iterations):
                t0 = time.perf_counter()
                flat = np.ascontiguousarray(values.ravel())
                sums = np.zeros(shape, np.int64)
                counts_it = np.zeros(shape, np.int64)
                played = 0
                first = it * games
                if client is not None:
                    tasks = [
                        ((seed, first + a, min(RANGE, games - a), spec, flat), min(RANGE, games - a))
                        for a in range(0, games, RANGE)
                    ]

                    def report(done_games: int, total: int, it: int = it, t0: float = t0) -> None:
                        if progress is not None:
                            rate = done_games / max(time.perf_counter() - t0, 1e-9)
                            progress(LearnProgress(it + 1, iterations, done_games, games, rate, None, None))

                    results, stopped = _dist().map_ranges(client, learn_range, tasks, report)
                    if stopped:
                        raise KeyboardInterrupt
                    for part_sums, part_counts in results.values():
                        sums += part_sums
                        counts_it += part_counts
                    played = games
                while played < games:  # a batch of ranges per round, so progress is reported
                    n = min(games - played, RANGE * 4 * workers)
                    seeds = game_seeds(seed, first + played, n)
                    ends = list(range(0, n, RANGE)) + [n]
                    parts = [(np.zeros(shape, np.int64), np.zeros(shape, np.int64)) for _ in ends[1:]]
                    jobs = [
                        pool.submit(_play, seeds[a:b], spec, index, flat, s, c)
                        for (a, b), (s, c) in zip(zip(ends, ends[1:]), parts)
                    ]
                    try:
                        for job in jobs:
                            job.result()
                    finally:
                        wait(jobs)
                    for s, c in parts:
                        sums += s
                        counts_it += c
                    played += n
                    if progress is not None:
                        rate = played / max(time.perf_counter() - t0, 1e-9)
                        progress(LearnProgress(it + 1, iterations, played, games, rate, None, None))
                new = estimate(sums, counts_it)
                delta = np.abs(new - values)
                change = float((delta * counts_it).sum() / max(counts_it.sum(), 1))
                values, counts, done = new, counts_it, it + 1
                if progress is not None:
                    rate = games / max(time.perf_counter() - t0, 1e-9)
                    progress(LearnProgress(it + 1, iterations, games, games, rate, change, float(delta.max())))
        except KeyboardInterrupt:
            if done == 0:
                raise
    provenance = {
        "command": command,
        "seed": seed,
        "games_per_iteration": games,
        "iterations": done,
        "iterations_asked": iterations,
        "start": None if start is None else start.provenance.get("command"),
        "version": __version__,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    return LeaveTable(values, counts, provenance)


LEARN_COMPILE_SECONDS = 18.0
"""The first :func:`learn`'s compile from an empty cache, CPU seconds on the project's
2-core machine (17.7 and 18.1 s: ``learn(seed=1, games=4, iterations=1, threads=1)``
with a fresh ``NUMBA_CACHE_DIR``)."""


def _dist() -> Any:
    from . import distributed

    return distributed


def learn_range(seed: int, first: int, n: int, spec: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``(sums, counts)`` of games ``first .. first + n - 1`` of ``seed`` (a cluster
    task of :func:`learn`)."""
    codes, index = _lv.classes()
    shape = (_lv.BUCKETS, codes.shape[0])
    sums, counts = np.zeros(shape, np.int64), np.zeros(shape, np.int64)
    _play(game_seeds(seed, first, n), spec, index, values, sums, counts)
    return sums, counts


def _play(
    seeds: np.ndarray, spec: np.ndarray, index: np.ndarray, values: np.ndarray, sums: np.ndarray, counts: np.ndarray
) -> None:
    n = seeds.shape[0]
    scores = np.zeros((n, 2), np.int32)
    qwirkles = np.zeros((n, 2), np.int16)
    stats = np.zeros((n, _lo.STATS), np.int32)
    _bt.learn_games(seeds, spec, index, values, np.int64(0), sums, counts, scores, qwirkles, stats)
