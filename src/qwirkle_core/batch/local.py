"""Playing one range of games of a batch in this process: :func:`play_range`, and the
:class:`SimulationResult` every batch returns (local or distributed).

A batch plays games ``start .. start + games - 1`` of the batch ``seed``; game ``i``
plays from its own seed, a hash of ``(seed, i)``, so a batch's rows do not depend on
the thread count, on how it is split into ranges, or on the machine that plays them.
:func:`~qwirkle_core.batch.simulate.simulate` checks its arguments and runs a batch here (or,
given a Dask client, in ranges on a cluster: :mod:`qwirkle_core.batch.distributed`, which
runs each range with :func:`play_range` on a worker).
"""

from __future__ import annotations

import datetime
import math
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._checks import check_threads
from .._kernels import agents as _ag
from .._kernels import batch as _bt
from .._kernels import cubes as _cu
from .._kernels import layout as _lo
from .._threads import available_threads
from .._version import __version__
from ..game.agents import AgentLike, AgentSpec
from ..game.rules import Rules
from . import warmup as _wu
from .rows import GameRows, RowWriter, read_rows
from .stats import BatchStats

__all__ = [
    "MAX_GAMES",
    "MEMORY_LIMIT",
    "ROW_BYTES",
    "Progress",
    "SimulationResult",
    "batch_metadata",
    "compile_seconds",
    "game_seeds",
    "keep_rows_for",
    "play_range",
    "row_bytes",
]

Progress = Callable[[int, int], None]
"""A progress callback ``f(done, total)``: called with ``done = 0`` once the kernels are
ready (compiled or loaded from the cache), then after every chunk of games. On a
cluster: once every worker is ready (``done`` = the games already in the folder when
resuming), then after every range."""

MAX_GAMES = 2**62
"""The largest game index of a batch (and so the most games one batch can hold)."""
MEMORY_LIMIT = 2**30
"""Rows kept in memory by default, in bytes: a larger batch streams them to ``out``."""
_CHUNK_SECONDS = 0.4  # target length of one kernel call: Ctrl-C and progress react within it


def row_bytes(players: int) -> int:
    """Bytes of memory per game kept by :func:`simulate` (the arrays of :class:`GameRows`)."""
    return 8 + 8 + 6 * players + 1 + 1 + 4 + 2 + 1


ROW_BYTES = row_bytes(2)
"""Bytes per kept game of a two-player batch."""


def game_seeds(seed: int, start: int, games: int) -> np.ndarray:
    """The seeds of games ``start .. start + games - 1`` of the batch ``seed``
    (uint64[games]): game ``i`` plays ``Game(seed=int(game_seeds(seed, i, 1)[0]))``.
    The arguments are not checked (the callers have)."""
    seeds: np.ndarray = _bt.seeds_for(np.uint64(seed), start, games)
    return seeds


@dataclass
class SimulationResult:
    """A batch's summary (:attr:`stats`, always) and its per-game rows (on request).

    Attributes
    ----------
    agents
        the agents' labels, one per seat.
    rules, seed, start
        the batch (its games are ``start .. start + games - 1``).
    stats
        :class:`~qwirkle_core.batch.stats.BatchStats` of the finished games.
    elapsed
        seconds of play (kernel compilation excluded; see ``compile_seconds``).
    interrupted
        True when Ctrl-C stopped the batch early (the finished games are kept).
    threads
        numba threads of a local batch; the worker threads of a distributed one.
    compile_seconds
        seconds until the kernels were ready (compiled or loaded from the
        cache; on a cluster, until every worker was ready).
    path
        the result file or folder the rows were written to, if any.
    write_error
        why ``out`` could not be written (the kept rows are then still here,
        for the caller to save elsewhere), or None.
    resumed
        games of a distributed batch found already played in ``path`` (counted in
        :attr:`stats`, not in :attr:`games_per_second`).
    workers
        the Dask worker processes of a distributed batch (0 for a local one).

    Notes
    -----
    The row arrays (``scores``, ``winner``, ``seeds``... see :class:`GameRows`) are
    read from memory, or lazily from ``path`` when the rows were not kept in memory.
    """

    agents: tuple[str, ...]
    rules: Rules
    seed: int
    start: int
    stats: BatchStats
    elapsed: float = 0.0
    interrupted: bool = False
    threads: int = 1
    compile_seconds: float = 0.0
    path: Path | None = None
    write_error: str | None = None
    resumed: int = 0
    workers: int = 0
    _rows: GameRows | None = None

    # -- rows ----------------------------------------------------------------------------

    @property
    def rows(self) -> GameRows:
        """The per-game rows (read from :attr:`path` on first use if not kept in memory).

        Raises ValueError when the rows were neither kept nor written to a file.
        """
        if self._rows is None:
            if self.path is None:
                raise ValueError("this batch kept no per-game rows (keep_rows=False and no out=)")
            self._rows = read_rows(self.path)
        return self._rows

    @property
    def scores(self) -> np.ndarray:
        """int32[games, players]: final scores."""
        return self.rows.scores

    @property
    def winner(self) -> np.ndarray:
        """int8[games]: the winning seat, -1 for a tie."""
        return self.rows.winner

    @property
    def turns(self) -> np.ndarray:
        """int32[games]: actions taken per game."""
        return self.rows.turns

    @property
    def tiles_placed(self) -> np.ndarray:
        """int16[games]: tiles on the board at the end."""
        return self.rows.tiles_placed

    @property
    def qwirkles(self) -> np.ndarray:
        """int16[games, players]: Qwirkles per seat."""
        return self.rows.qwirkles

    @property
    def starter(self) -> np.ndarray:
        """int8[games]: the seat that opened."""
        return self.rows.starter

    @property
    def seeds(self) -> np.ndarray:
        """uint64[games]: each game's seed (``play_game(agents, seed=...)`` replays it)."""
        return self.rows.seeds

    @property
    def truncated(self) -> np.ndarray:
        """bool[games]: stopped at the turn limit."""
        return self.rows.truncated

    def columns(self) -> dict[str, np.ndarray]:
        """The per-game rows as a dict of 1-D columns (docs/results.md)."""
        return self.rows.columns()

    # -- summary -------------------------------------------------------------------------

    @property
    def games(self) -> int:
        """The number of finished games."""
        return self.stats.games

    @property
    def players(self) -> int:
        """The number of seats."""
        return len(self.agents)

    @property
    def games_per_second(self) -> float:
        """Games played per second of play (games resumed from files excluded)."""
        return (self.games - self.resumed) / self.elapsed if self.elapsed > 0 else math.nan

    def win_rates(self) -> list[tuple[float, float, float]]:
        """Per seat: (rate, low, high) with a 95% Wilson interval; ties count as no win."""
        return self.stats.win_rates()

    @property
    def tie_rate(self) -> float:
        """The share of tied games."""
        return self.stats.tie_rate

    def mean_scores(self) -> np.ndarray:
        """float64[players]: mean final scores."""
        return self.stats.mean_scores()

    def score_std(self) -> np.ndarray:
        """float64[players]: standard deviations of the final scores."""
        return self.stats.score_std()

    def mean_turns(self) -> float:
        """Mean actions per game."""
        return self.stats.mean_turns()

    def mean_qwirkles(self) -> np.ndarray:
        """float64[players]: Qwirkles per game of each seat."""
        return self.stats.mean_qwirkles()

    def first_player_advantage(self) -> dict[str, float]:
        """See :meth:`BatchStats.first_player_advantage`."""
        return self.stats.first_player_advantage()

    def summary(self) -> dict[str, Any]:
        """A dict of the headline figures (what the command line prints)."""
        return {
            "games": self.games,
            "agents": list(self.agents),
            "seed": self.seed,
            "start": self.start,
            "win_rates": self.win_rates(),
            "tie_rate": self.tie_rate,
            "mean_scores": self.mean_scores().tolist(),
            "score_std": self.score_std().tolist(),
            "mean_turns": self.mean_turns(),
            "mean_qwirkles": self.mean_qwirkles().tolist(),
            "first_player": self.first_player_advantage(),
            "truncated": self.stats.truncated,
            "seconds": self.elapsed,
            "games_per_second": self.games_per_second,
        }

    def __repr__(self) -> str:
        return f"<SimulationResult games={self.games} agents={','.join(self.agents)} mean_scores={np.round(self.mean_scores(), 1).tolist()}>"


def batch_metadata(
    agents: Iterable[AgentSpec | str], rules: Rules, seed: int, start: int, games: int
) -> dict[str, Any]:
    """The description of a batch written into its result files."""
    return {
        "agents": [a if isinstance(a, str) else a.label for a in agents],
        "rules": rules.to_dict(),
        "seed": seed,
        "start": start,
        "games": games,
        "version": __version__,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


def compile_seconds(agents: Iterable[AgentLike] | str, rules: Rules | None = None) -> float:
    """Rough seconds the first batch of ``agents`` (one per seat, as for
    :func:`~qwirkle_core.batch.simulate.simulate`) under ``rules`` (default: the tile game) in
    this process spends compiling its kernels: 0.0 when they are in the disk cache
    (they are then only loaded, well under a second). Only the kernels of those agents
    are compiled (:func:`~qwirkle_core.batch.warmup.kernels_for`: greedy and random
    share one; the heuristic, the Monte Carlo and the search agent each have their own,
    a mixture of them the one of every agent); Qwirkle Cubes has one kernel for every
    agent. The figure is :func:`~qwirkle_core.batch.warmup.estimate_seconds`'s (within
    a factor of two on the project's 2-core machine when it is not busy). Raises what
    :func:`~qwirkle_core.game.agents.parse_agents` raises for bad agents."""
    return float(_wu.estimate_seconds(agents, rules))


def play_range(
    specs: tuple[AgentSpec, ...],
    rules: Rules,
    seed: int,
    start: int,
    games: int,
    threads: int | None = None,
    progress: Progress | None = None,
    out: str | os.PathLike[str] | None = None,
    keep: bool = True,
) -> SimulationResult:
    """Play games ``start .. start + games - 1`` of the batch ``seed`` in this process.

    The arguments are those of :func:`~qwirkle_core.batch.simulate.simulate`, already checked
    (``specs`` parsed, ``rules`` matching them, ``games >= 0``); ``keep``: keep the rows
    in memory. Ctrl-C stops within a chunk and returns the finished games with
    ``interrupted=True``. Raises OSError when ``out`` cannot be created.
    """
    n_threads = check_threads(threads, available_threads())
    writer = (
        RowWriter(out, rules.players, batch_metadata(specs, rules, seed, start, games)) if out is not None else None
    )
    run = _RangeRun(specs, rules, seed, start, games, keep, writer)
    with ThreadPoolExecutor(n_threads) if n_threads > 1 else nullcontext() as pool:
        run.run(n_threads, progress, pool)
    path = run.finish()
    return SimulationResult(
        agents=tuple(a.label for a in specs),
        rules=rules,
        seed=seed,
        start=start,
        stats=run.stats,
        elapsed=run.elapsed,
        interrupted=run.interrupted,
        threads=n_threads,
        compile_seconds=run.compile_seconds,
        path=path,
        write_error=run.write_error,
        _rows=run.rows() if keep else None,
    )


def keep_rows_for(games: int, players: int, keep_rows: bool | None, out: Any) -> bool:
    """Whether a local batch keeps its rows in memory (``keep_rows`` checked; see
    :func:`~qwirkle_core.batch.simulate.simulate`). Raises TypeError/ValueError."""
    if keep_rows is not None:
        if not isinstance(keep_rows, bool):
            raise TypeError(f"keep_rows must be True, False or None, not {keep_rows!r}")
        return keep_rows
    need = games * row_bytes(players)
    if need <= MEMORY_LIMIT:
        return True
    if out is not None:
        return False
    raise ValueError(
        f"simulate({games:,} games) would keep {need / 2**30:.1f} GiB of per-game rows in memory "
        f"({row_bytes(players)} bytes per game); pass out='results.parquet' to stream them to a file, "
        "or keep_rows=False to keep only the summary statistics"
    )


class _RangeRun:
    """The chunk loop of one :func:`play_range` call.

    A failure to write the rows does not lose them when they are kept in memory: the
    writer is dropped, ``write_error`` says why, and the caller saves them elsewhere;
    when they are not kept, the batch stops at the failure (the file keeps what was
    written before it).
    """

    def __init__(
        self,
        specs: tuple[AgentSpec, ...],
        rules: Rules,
        seed: int,
        start: int,
        games: int,
        keep: bool,
        writer: RowWriter | None,
    ) -> None:
        self.agents = specs
        self.specs = np.stack([a.row() for a in specs])
        self.rules, self.seed, self.start, self.games = rules, seed, start, games
        self.stats = BatchStats(rules.players)
        self.parts: list[GameRows] = []
        self.keep = keep
        self.writer = writer
        self.write_error: str | None = None
        self.elapsed = 0.0
        self.compile_seconds = 0.0
        self.interrupted = False
        self.pool: ThreadPoolExecutor | None = None

    def run(self, threads: int, progress: Progress | None, pool: ThreadPoolExecutor | None) -> None:
        self.pool = pool
        try:
            t0 = time.perf_counter()
            with _wu.compiling_batch(self.agents, self.rules):  # says so once if it compiles
                if not self.rules.cubes:  # a first run: the independent parts side by side, where it pays
                    _wu.compile_first_batch(self.specs)
                self._play(0, 0, 1)  # compile the kernel, or load it from the cache
            self.compile_seconds = time.perf_counter() - t0
            if progress is not None:
                progress(0, self.games)
        except BaseException:
            if self.writer is not None:
                self.writer.abort()
            raise
        clock = time.perf_counter()
        done, chunk = 0, 4 * threads
        try:
            while done < self.games and (self.keep or self.write_error is None):
                n = min(chunk, self.games - done)
                t = time.perf_counter()
                rows = self._play(self.start + done, n, min(4 * threads, n))
                seconds = time.perf_counter() - t
                self._book(rows)
                done += n
                if progress is not None:
                    progress(done, self.games)
                chunk = max(threads, min(1 << 20, int(n * _CHUNK_SECONDS / max(seconds, 1e-6))))
        except KeyboardInterrupt:
            self.interrupted = True
        self.elapsed = time.perf_counter() - clock

    def finish(self) -> Path | None:
        """Close the result file; its path, or None when nothing was written."""
        if self.writer is None or (self.write_error is not None and self.keep):
            return None  # no file, or it was dropped after a failure (the rows are kept)
        try:
            path = self.writer.close()
            return path if self.writer.rows else None
        except OSError as e:
            self.writer.abort()
            self.write_error = f"{self.writer.path}: {e}"
            return None

    def _play(self, first: int, n: int, nchunks: int) -> GameRows:
        players = self.rules.players
        seeds = game_seeds(self.seed, first, n)
        scores = np.zeros((n, players), np.int32)
        qwirkles = np.zeros((n, players), np.int16)
        stats = np.zeros((n, _lo.STATS), np.int32)
        if self.rules.cubes:
            kernel = _cu.run_games
        else:
            kernel = _bt.kernel_for(self.specs)
            _ag.bind_for(self.specs)
        opening = self.rules.opening_code
        if self.pool is None or nchunks <= 1:
            kernel(seeds, self.specs, opening, scores, qwirkles, stats)
        else:  # ranges of games on the pool's threads (the kernel releases the GIL)
            ends = [n * i // nchunks for i in range(nchunks + 1)]
            jobs = [
                self.pool.submit(kernel, seeds[a:b], self.specs, opening, scores[a:b], qwirkles[a:b], stats[a:b])
                for a, b in zip(ends, ends[1:])
            ]
            try:
                for job in jobs:
                    job.result()
            finally:  # Ctrl-C: let the ranges already running finish before returning
                wait(jobs)
        return GameRows(
            game=np.arange(first, first + n, dtype=np.int64),
            seeds=seeds,
            scores=scores,
            winner=stats[:, _lo.S_WINNER].astype(np.int8),
            starter=stats[:, _lo.S_STARTER].astype(np.int8),
            turns=stats[:, _lo.S_TURNS].copy(),
            tiles_placed=stats[:, _lo.S_PLACED].astype(np.int16),
            qwirkles=qwirkles,
            truncated=stats[:, _lo.S_TRUNCATED].astype(bool),
        )

    def _book(self, rows: GameRows) -> None:
        self.stats = self.stats.merge(
            BatchStats.from_rows(
                rows.scores, rows.winner, rows.starter, rows.turns, rows.tiles_placed, rows.qwirkles, rows.truncated
            )
        )
        if self.keep:
            self.parts.append(rows)
        if self.writer is not None and self.write_error is None:
            try:
                self.writer.write(rows)
            except OSError as e:
                self.write_error = f"{self.writer.path}: {e}"
                if self.keep:
                    self.writer.abort()

    def rows(self) -> GameRows:
        if not self.parts:
            return self._play(self.start, 0, 1)
        return self.parts[0] if len(self.parts) == 1 else GameRows.concat(self.parts)
