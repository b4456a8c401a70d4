"""Monte Carlo batches: :func:`simulate` and its :class:`SimulationResult`; :func:`play_game`.

A batch plays games ``start .. start + games - 1`` of the batch ``seed``; game ``i``
plays from its own seed, a hash of ``(seed, i)``, so a batch's rows do not depend on
the thread count, on how it is split into ranges, or on the machine that plays them.
Locally the games run in this process (:mod:`qwirkle_core.batch.local`); given a Dask client,
in ranges on the cluster's workers (:mod:`qwirkle_core.batch.distributed`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from .._checks import check_int, check_seed, check_threads
from .._threads import available_threads
from ..game.agents import AgentLike, AgentSpec, check_cubes_agents, parse_agents
from ..game.records import GameRecord
from ..game.rules import Rules, resolve_rules
from .local import (
    MAX_GAMES,
    ROW_BYTES,
    Progress,
    SimulationResult,
    batch_metadata,
    keep_rows_for,
    play_range,
    row_bytes,
)
from .players import is_builtin, run_game

__all__ = [
    "MAX_GAMES",
    "ROW_BYTES",
    "Progress",
    "SimulationResult",
    "batch_metadata",
    "play_game",
    "row_bytes",
    "simulate",
]


def simulate(
    games: int,
    agents: Iterable[AgentLike] | str = ("greedy", "greedy"),
    seed: int = 0,
    threads: int | None = None,
    rules: Rules | None = None,
    progress: Progress | None = None,
    start: int = 0,
    out: str | os.PathLike[str] | None = None,
    keep_rows: bool | None = None,
    *,
    client: Any = None,
    resume: bool = False,
    range_size: int | None = None,
) -> SimulationResult:
    """Play ``games`` complete games with ``agents`` (one per seat) inside numba.

    Parameters
    ----------
    games
        number of games (>= 1).
    agents
        one per seat (``len(agents)`` players, 2..6): names with parameters
        (``"mc:playouts=32"``), :class:`~qwirkle_core.AgentSpec` objects, or one
        comma-separated str; see :data:`~qwirkle_core.AGENTS`.
    seed
        the batch seed (an int 0..2**64-1). Game ``i`` plays from a hash of
        ``(seed, i)``, so results do not depend on ``threads`` or on chunking.
    threads
        numba threads (default: all cores); on a cluster, numba threads per
        task (default 1: a worker runs one task per worker thread).
    rules
        a :class:`Rules`; its ``players`` must equal ``len(agents)``.
    progress
        a callable ``f(done, total)`` (see :data:`Progress`).
    start
        the index of the first game: the batch plays games ``start`` ..
        ``start + games - 1`` of the batch ``seed``; any split of a batch into
        ranges gives exactly the rows of the whole batch.
    out
        a ``.parquet`` or ``.csv`` file to write the rows to, chunk by chunk as
        they are played (checked before the first game; docs/results.md); with
        ``client``, a folder (docs/distributed.md).
    keep_rows
        keep the rows in memory (True), or only the summary (False). By default
        they are kept when they fit in 1 GiB (:func:`row_bytes` per game); a
        larger batch needs ``out`` (the rows are then read from the file on
        request) or ``keep_rows=False``, and is refused otherwise. A
        distributed batch never keeps them (True is refused).
    client
        a ``dask.distributed.Client``: play the batch on its cluster, in ranges
        of ``range_size`` games, each written to ``out`` as
        ``part-<start>-<end>.parquet`` (:func:`qwirkle_core.batch.distributed.run_batch`).
    resume
        with ``client``: continue the batch already in ``out``, playing only
        the ranges that have no complete file yet.
    range_size
        with ``client``: games per task (default: about 5 seconds of work).

    Notes
    -----
    Games run in chunks of about half a second, so memory stays bounded and Ctrl-C
    stops within a chunk: the finished games are kept (and written) and the result
    says ``interrupted=True``.

    Returns
    -------
    SimulationResult

    Raises
    ------
    AgentError, TypeError, ValueError
        bad arguments, before any game is played.
    OSError
        ``out`` cannot be written.
    Exception
        on a cluster, the exception of a task that raised (the finished ranges stay in
        ``out``).
    """
    games = check_int(games, "games", 1, MAX_GAMES)
    start = check_int(start, "start", 0, MAX_GAMES - games)
    specs = parse_agents(_builtin_only(agents))
    rules = resolve_rules(len(specs), rules)
    if rules.cubes:
        check_cubes_agents(s.row() for s in specs)
    seed = check_seed(seed)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable f(done, total), not {progress!r}")
    if not isinstance(resume, bool):
        raise TypeError(f"resume must be True or False, not {resume!r}")
    if client is not None:
        from .distributed import run_batch

        if keep_rows:
            raise ValueError(
                "a distributed batch keeps no rows in memory: they are read from the files in out= on request"
            )
        return run_batch(
            client,
            specs,
            rules,
            seed,
            start,
            games,
            out,
            threads=threads,
            progress=progress,
            resume=resume,
            range_size=range_size,
        )
    if resume or range_size is not None:
        raise ValueError("resume and range_size apply to a distributed batch only (pass client=)")
    check_threads(threads, available_threads())  # before the output file is created
    keep = keep_rows_for(games, rules.players, keep_rows, out)
    return play_range(specs, rules, seed, start, games, threads, progress, out, keep)


def _builtin_only(agents: Iterable[AgentLike] | str) -> Iterable[AgentLike] | str:
    """``agents`` (as a list when it was another iterable, so it can be read twice);
    TypeError when one of them is a Python agent, which a batch cannot run."""
    if isinstance(agents, str):
        items: list[Any] = agents.split(",")
    elif isinstance(agents, Iterable) and not isinstance(agents, (AgentSpec, np.ndarray)):
        agents = items = list(agents)
    else:
        return agents  # parse_agents says what is wrong with it
    python = [a for a in items if not is_builtin(a)]
    if python:
        raise TypeError(
            "simulate runs built-in agents inside numba; play Python agents with qc.play_game or qc.tournament "
            f"(qwirkle tournament), not simulate: {python[0]!r:.60}"
        )
    return agents


def play_game(
    agents: Iterable[Any] | str = ("greedy", "greedy"),
    seed: int = 0,
    rules: Rules | None = None,
    time_limit: float | None = None,
) -> GameRecord:
    """Play one game from ``seed`` exactly as a batch would, and return its record.

    ``play_game(agents, seed=int(result.seeds[i]))`` reproduces game ``i`` of a batch.

    Parameters
    ----------
    agents
        one per seat: built-in agents and Python agents (:mod:`qwirkle_core.batch.players`),
        mixed freely.
    seed
        the game's seed (an int 0..2**64-1).
    rules
        a :class:`Rules` (default: the tile game for ``len(agents)`` players).
    time_limit
        a Python agent's seconds per move (None: no limit).

    Returns
    -------
    GameRecord

    Raises
    ------
    AgentFailure
        a Python agent failed (it raised, cheated or ran past the time limit).
    AgentError, TypeError, ValueError
        bad arguments, as :func:`simulate`.
    """
    game, labels = run_game(agents, seed=seed, rules=rules, time_limit=time_limit)
    return GameRecord.from_game(game, agents=labels)
