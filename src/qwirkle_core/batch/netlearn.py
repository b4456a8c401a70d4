"""The move scorer learned by expert iteration on the search's games (``qwirkle learn net``).

Each iteration plays self-play games in which every turn is searched
(:func:`qwirkle_core._kernels.batch.net_games`): the current scorer lists and ranks
the moves, its ``top`` best and ``extra`` others drawn at random are played out as the
search plays its playouts (the static agent in every seat, the search's depth, outlook,
tempo and win terms, common random numbers), and the move of the best mean value is
played. Every searched position is recorded: the candidates' input rows and their mean
playout values. The scorer (:func:`.scorer.make_scorer`) is then trained to predict
each candidate's value relative to the other candidates of its position (the mean
squared error of the centred scores), on the positions of this iteration and the one
before, warm-started from the last iteration's network; the next iteration plays with
it. The first iteration's scorer is the static agent's value (:func:`.scorer.static_weights`).

Games are played in ranges of ``RANGE`` on threads (the kernel releases the GIL); game
``i`` of iteration ``j`` plays from ``game_seed(seed, j * games + i)``, and training
draws from ``seed`` alone, so a run depends on its arguments and torch's CPU kernels,
not on the thread count. Training needs torch (``pip install 'qwirkle-core[rl-train]'``).
"""

from __future__ import annotations

import datetime
import os
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .._checks import check_int, check_seed, check_threads
from .._compiling import compiling
from .._kernels import batch as _bt
from .._kernels import layout as _lo
from .._kernels import net as _net
from .._kernels.search import bind_search
from .._threads import available_threads
from .._version import __version__
from . import scorer as _sc
from .local import game_seeds

__all__ = ["NetProgress", "NetResult", "learn_net"]

RANGE = 10  # games per kernel call: the unit the threads share out
ROWS_PER_GAME = 160  # positions a game records at most, for the buffers (a game has about 50)
NET_COMPILE_SECONDS = 40.0
"""The first :func:`learn_net`'s compile from an empty cache, CPU seconds (37.6 s
measured on the project's 2-core machine with two other jobs running)."""


class NetProgress(NamedTuple):
    """One progress report of :func:`learn_net`: after each range of games, and with
    ``loss`` (the held-out positions' mean squared error, points squared) and
    ``win_rate`` (the new scorer's ``net`` agent against greedy) after each finished
    iteration."""

    iteration: int  # 1-based
    iterations: int
    games: int  # games played in this iteration so far
    games_per_iteration: int
    positions: int  # positions recorded in this iteration so far
    seconds: float  # since the iteration started
    loss: float | None
    win_rate: float | None


@dataclass(frozen=True)
class NetResult:
    """The weights of the last finished iteration and their provenance."""

    arrays: dict[str, np.ndarray]
    provenance: dict[str, Any]

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the weights file (atomically); returns its path."""
        return _sc.write_weights(path, self.arrays, self.provenance)


class _Part(NamedTuple):
    """The records of a range of games: input rows, mean values, each row's position
    (numbered within the range) and the positions."""

    x: np.ndarray
    v: np.ndarray
    group: np.ndarray
    positions: int


def _play_range(seeds: np.ndarray, slot: int, top: int, extra: int, playouts: int) -> _Part:
    n = seeds.shape[0]
    k = top + extra
    cap = n * ROWS_PER_GAME * k
    xs = np.zeros((cap, _net.INPUTS), np.float32)
    vs = np.zeros(cap, np.float32)
    gs = np.zeros(cap, np.int32)
    counts = np.zeros(2, np.int64)
    scores = np.zeros((n, 2), np.int32)
    qwirkles = np.zeros((n, 2), np.int16)
    stats = np.zeros((n, _lo.STATS), np.int32)
    spec = _lo.DEFAULT_SPECS[_lo.SEARCH].copy()
    _bt.net_games(seeds, 2, np.int64(0), slot, top, extra, playouts, spec, xs, vs, gs, counts, scores, qwirkles, stats)
    r = int(counts[0])
    return _Part(xs[:r], vs[:r], gs[:r], int(counts[1]))


def net_range(
    seed: int, first: int, n: int, arrays: dict[str, np.ndarray], top: int, extra: int, playouts: int
) -> _Part:
    """The records of games ``first .. first + n - 1`` of ``seed`` played with the scorer
    ``arrays`` (a cluster task of :func:`learn_net`: the worker loads the weights from a
    file of its own, named by their hash, once)."""
    import hashlib

    digest = hashlib.sha256(b"".join(np.ascontiguousarray(arrays[k]).tobytes() for k in _net.ARRAYS)).hexdigest()
    path = Path(tempfile.gettempdir()) / f"qwirkle-net-{digest[:24]}.npz"
    if not path.exists():
        _sc.write_weights(path, arrays, {"command": "a cluster task's copy"})
    bind_search()
    return _play_range(game_seeds(seed, first, n), _net.bind_net(path), top, extra, playouts)


def _pad(parts: list[_Part], k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The recorded rows as positions: ``x`` float32[P, k, D], ``v`` float32[P, k] and
    ``mask`` bool[P, k] (a position has fewer than ``k`` candidates when it had fewer moves)."""
    total = sum(p.positions for p in parts)
    x = np.zeros((total, k, _net.INPUTS), np.float32)
    v = np.zeros((total, k), np.float32)
    mask = np.zeros((total, k), bool)
    base = 0
    for xs, vs, gs, positions in parts:
        slot_in = np.zeros(xs.shape[0], np.int64)
        if xs.shape[0]:
            starts = np.r_[0, np.flatnonzero(np.diff(gs)) + 1]
            slot_in = np.arange(xs.shape[0]) - np.repeat(starts, np.diff(np.r_[starts, xs.shape[0]]))
        rows = base + gs.astype(np.int64)
        x[rows, slot_in] = xs
        v[rows, slot_in] = vs
        mask[rows, slot_in] = True
        base += positions
    return x, v, mask


def _centred_loss(torch: Any, scores: Any, v: Any, mask: Any) -> Any:
    m = mask.float()
    n = m.sum(1, keepdim=True).clamp(min=1.0)
    s = scores * m
    d = (s - (s.sum(1, keepdim=True) / n)) - (v - (v * m).sum(1, keepdim=True) / n)
    return ((d * d) * m).sum() / m.sum().clamp(min=1.0)


def _train(
    module: Any, x: np.ndarray, v: np.ndarray, mask: np.ndarray, epochs: int, seed: int, lr: float
) -> tuple[Any, float]:
    """Train ``module`` on positions ``x, v, mask`` (a tenth held out); returns it and
    the held-out loss."""
    import torch

    gen = torch.Generator().manual_seed(seed & 0x7FFF_FFFF_FFFF_FFFF)
    order = torch.randperm(x.shape[0], generator=gen)
    held = max(1, x.shape[0] // 10)
    test, train = order[:held], order[held:]
    xt, vt, mt = torch.from_numpy(x), torch.from_numpy(v), torch.from_numpy(mask)
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    batch = 256
    for _ in range(epochs):
        perm = train[torch.randperm(train.shape[0], generator=gen)]
        for a in range(0, perm.shape[0], batch):
            idx = perm[a : a + batch]
            loss = _centred_loss(torch, module(xt[idx]), vt[idx], mt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        held_loss = float(_centred_loss(torch, module(xt[test]), vt[test], mt[test]))
    return module, held_loss


def probe(weights: str | os.PathLike[str], games: int, seed: int, threads: int) -> float:
    """The ``net`` agent with ``weights`` against greedy: its share of the points (a
    win 1, a tie 1/2) over ``games`` // 2 deals played from both seats."""
    from .simulate import simulate

    deals = max(1, games // 2)
    net = f"net:weights={os.fspath(weights)}"
    a = simulate(deals, (net, "greedy"), seed=seed, threads=threads)
    b = simulate(deals, ("greedy", net), seed=seed, threads=threads)
    sa, sb = a.scores, b.scores
    points = np.sign(sa[:, 0] - sa[:, 1]) + np.sign(sb[:, 1] - sb[:, 0])
    return float((points.sum() / 2 + deals) / (2 * deals))


def learn_net(
    seed: int = 0,
    games: int = 400,
    iterations: int = 4,
    *,
    threads: int | None = None,
    playouts: int = 24,
    top: int = 6,
    extra: int = 2,
    hidden: tuple[int, int] = (64, 32),
    epochs: int = 8,
    probe_games: int = 400,
    start: str | os.PathLike[str] | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    progress: Callable[[NetProgress], None] | None = None,
    client: Any = None,
) -> NetResult:
    """Learn the move scorer by expert iteration on searched self-play (module doc).

    Parameters
    ----------
    seed : int
        0 .. 2**64-1: the games' deals and the training's draws.
    games : int
        two-player self-play games per iteration, >= 1.
    iterations : int
        >= 1.
    threads : int, optional
        threads that play (default: every core).
    playouts : int
        playouts per candidate, 1 .. 4096.
    top, extra : int
        the candidates of a position: the scorer's ``top`` best (1 .. 32) and ``extra``
        others at random (0 .. 32).
    hidden : (int, int)
        the two hidden layers' units (1 .. 1024).
    epochs : int
        passes over an iteration's training positions.
    probe_games : int
        games of the quick strength probe after each iteration (the ``net`` agent
        against greedy, both seats on each deal; 0: none).
    start : str or os.PathLike, optional
        a weights file to start from: it plays the first iteration, and its network is
        warm-started when its hidden sizes are ``hidden``; default the static agent's value.
    checkpoint : str or os.PathLike, optional
        written (atomically) after each finished iteration: a stop keeps it.
    progress : callable, optional
        called with a :class:`NetProgress` after each range of games and each iteration.
    client : dask.distributed.Client, optional
        play each iteration's ranges of games as tasks on this cluster (``pip install
        'qwirkle-core[dask]'``); the records, so the weights, are those of local threads.

    Returns
    -------
    NetResult
        the weights of the last finished iteration. Ctrl-C (KeyboardInterrupt) during an
        iteration returns those of the iterations before it (the provenance says how
        many), or re-raises when none finished.
    """
    try:
        import torch
    except ImportError:
        raise ImportError("learn_net trains with torch: pip install 'qwirkle-core[rl-train]'") from None

    seed = check_seed(seed)
    games = check_int(games, "games", 1, 1 << 40)
    iterations = check_int(iterations, "iterations", 1, 10_000)
    playouts = check_int(playouts, "playouts", 1, 4096)
    top = check_int(top, "top", 1, 32)
    extra = check_int(extra, "extra", 0, 32)
    epochs = check_int(epochs, "epochs", 1, 10_000)
    probe_games = check_int(probe_games, "probe_games", 0, 1 << 30)
    h1, h2 = (check_int(h, "hidden", 1, _net.MAX_HIDDEN) for h in hidden)
    workers = check_threads(threads, available_threads())
    if client is not None:
        from . import distributed

        distributed.check_client(client)
    torch.manual_seed(seed & 0x7FFF_FFFF_FFFF_FFFF)
    k = top + extra
    command = (
        f"qwirkle learn net --seed {seed} --games {games} --iterations {iterations} --playouts {playouts} "
        f"--top {top} --extra {extra} --hidden {h1},{h2} --epochs {epochs}"
    )
    module: Any = None
    if start is not None:
        arrays, _ = _sc.read_weights(start)
        if arrays["w1"].shape[1] == h1 and arrays["w2"].shape[1] == h2:
            module = _sc.make_scorer((h1, h2), arrays["shift"], arrays["scale"])
            with torch.no_grad():
                module.l1.weight.copy_(torch.from_numpy(arrays["w1"].T.copy()))
                module.l1.bias.copy_(torch.from_numpy(arrays["b1"]))
                module.l2.weight.copy_(torch.from_numpy(arrays["w2"].T.copy()))
                module.l2.bias.copy_(torch.from_numpy(arrays["b2"]))
                module.l3.weight.copy_(torch.from_numpy(arrays["w3"][None, :].copy()))
                module.l3.bias.copy_(torch.from_numpy(arrays["b3"]))
    else:
        arrays = _sc.static_weights()
    bind_search()
    tmp = tempfile.TemporaryDirectory(prefix="qwirkle-net-")
    current = Path(tmp.name) / "iteration-0.npz"
    _sc.write_weights(current, arrays, {"command": "the static agent's value"})
    result: NetResult | None = None
    history: list[dict[str, Any]] = []
    before: list[_Part] = []
    with compiling("the move scorer's self-play kernels", NET_COMPILE_SECONDS):
        _play_range(game_seeds(seed, 0, 0), _net.bind_net(current), top, extra, playouts)
    try:
        with ThreadPoolExecutor(workers) as pool:
            for it in range(iterations):
                t0 = time.perf_counter()
                slot = _net.bind_net(current)
                parts: list[_Part] = []
                played = positions = 0
                if client is not None:
                    from . import distributed

                    tasks = [
                        (
                            (seed, it * games + a, min(RANGE, games - a), arrays, top, extra, playouts),
                            min(RANGE, games - a),
                        )
                        for a in range(0, games, RANGE)
                    ]

                    def report(done: int, total: int, it: int = it, t0: float = t0) -> None:
                        if progress is not None:
                            progress(
                                NetProgress(it + 1, iterations, done, games, 0, time.perf_counter() - t0, None, None)
                            )

                    results, stopped = distributed.map_ranges(client, net_range, tasks, report)
                    if stopped:
                        raise KeyboardInterrupt
                    parts = [results[i] for i in range(len(tasks))]
                    positions = sum(p.positions for p in parts)
                else:
                    seeds = game_seeds(seed, it * games, games)
                    jobs = [
                        pool.submit(_play_range, seeds[a : a + RANGE], slot, top, extra, playouts)
                        for a in range(0, games, RANGE)
                    ]
                    try:
                        for a, job in zip(range(0, games, RANGE), jobs):
                            part = job.result()
                            parts.append(part)
                            played += min(RANGE, games - a)
                            positions += part.positions
                            if progress is not None:
                                progress(
                                    NetProgress(
                                        it + 1,
                                        iterations,
                                        played,
                                        games,
                                        positions,
                                        time.perf_counter() - t0,
                                        None,
                                        None,
                                    )
                                )
                    except BaseException:
                        for job in jobs:
                            job.cancel()
                        raise
                x, v, mask = _pad(before + parts, k)
                if module is None:
                    flat = x[mask]
                    shift = flat.mean(0)
                    scale = 1.0 / np.maximum(flat.std(0), 1e-3)
                    module = _sc.make_scorer((h1, h2), shift, scale)
                module, loss = _train(module, x, v, mask, epochs, seed + it, 1e-3)
                before = parts
                arrays = _sc.scorer_arrays(module)
                current = Path(tmp.name) / f"iteration-{it + 1}.npz"
                history.append({"iteration": it + 1, "positions": positions, "held_out_loss": round(loss, 4)})
                provenance = {
                    "command": command,
                    "seed": seed,
                    "games_per_iteration": games,
                    "iterations": it + 1,
                    "iterations_asked": iterations,
                    "positions": sum(h["positions"] for h in history),
                    "history": history,
                    "start": None if start is None else os.fspath(start),
                    "version": __version__,
                    "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                }
                _sc.write_weights(current, arrays, provenance)
                rate = probe(current, probe_games, seed ^ 0x5EED, workers) if probe_games else None
                history[-1]["probe_win_rate_vs_greedy"] = rate
                result = NetResult(arrays, provenance)
                if checkpoint is not None:
                    result.save(checkpoint)
                if progress is not None:
                    progress(
                        NetProgress(it + 1, iterations, games, games, positions, time.perf_counter() - t0, loss, rate)
                    )
    except KeyboardInterrupt:
        if result is None:
            raise
    finally:
        tmp.cleanup()
    assert result is not None
    return result
