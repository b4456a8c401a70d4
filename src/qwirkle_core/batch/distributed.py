"""Batches on a Dask cluster: the same games, in ranges, one Parquet file per range.

Game ``i`` of a batch plays from a hash of ``(seed, i)``, so a batch split into ranges
of game indices gives exactly the games of the whole batch, whichever machine plays
which range. :func:`run_batch` (what ``qc.simulate(..., client=, out=)`` calls):

- cuts games ``start .. start + games - 1`` into ranges of ``range_size`` games (by
  default about :data:`TASK_SECONDS` of work each, measured on the workers);
- runs each range as one Dask task with the local code (:func:`~qwirkle_core.batch.local.play_range`),
  which writes ``part-<first>-<end>.parquet`` (games ``first .. end - 1``; the columns
  of a local ``out`` file) to a temporary name in ``out`` and renames it, so a part is
  complete or absent, and returns the range's :class:`~qwirkle_core.batch.stats.BatchStats`;
- merges those statistics into the summary (the client never holds the rows; they
  are read lazily from the folder on request), and writes ``_batch.json`` with the
  batch's description.

A task whose worker dies is run again elsewhere by Dask (a part already renamed into
place is read, not played again); a task that raises stops the run with its error and
the finished parts stay; ``resume=True`` plays only the ranges without a complete
part. The kernels are loaded on every worker before the first range
(:func:`warm_up`). Importing this module needs Dask (``pip install
'qwirkle-core[dask]'``); the rest of the library never imports it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import socket
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    from distributed import Client, as_completed
except ImportError as e:  # pragma: no cover - the message is what the command line shows
    raise ImportError("running on a Dask cluster needs Dask: pip install 'qwirkle-core[dask]'", name=e.name) from e

from .._checks import check_int
from .._version import __version__
from ..game.agents import AgentSpec, parse_agents
from ..game.rules import Rules
from .local import MEMORY_LIMIT, Progress, SimulationResult, batch_metadata, play_range, row_bytes
from .rows import read_metadata, write_rows
from .stats import BatchStats

__all__ = [
    "BATCH_FILE",
    "TASK_SECONDS",
    "WorkerReady",
    "auto_range_size",
    "check_batch_folder",
    "existing_parts",
    "map_ranges",
    "part_name",
    "play_part",
    "ranges",
    "run_batch",
    "warm_up",
]

BATCH_FILE = "_batch.json"
"""The batch's description in its folder (agents, rules, seed, start, games, range
size, version, date)."""
TASK_SECONDS = 5.0
"""Target seconds of work of one task (one range) when the range size is chosen."""
MIN_TASK_SECONDS = 0.5
"""Ranges are no shorter than this much work (fewer, larger files for small batches)."""
TASKS_PER_THREAD = 8
"""At least this many ranges per worker thread when the batch allows it, so every
worker finishes at about the same time."""
PROBE_SECONDS = 0.2
"""How long each worker times the batch's agents at warm-up (one thread)."""
COMPARED = ("agents", "rules", "seed", "start", "games", "version")
"""The fields of ``_batch.json`` a second run into the same folder must match."""
_PART = re.compile(r"part-(\d+)-(\d+)\.parquet")
_PROBE_SEED = 0x9E3779B97F4A7C15


def part_name(first: int, end: int) -> str:
    """The file name of the part holding games ``first .. end - 1``."""
    return f"part-{first}-{end}.parquet"


def ranges(first: int, end: int, size: int, done: Iterable[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """``[first, end)`` less the ``done`` ranges, cut into ranges of at most ``size``
    games at the multiples of ``size`` counted from ``first``: ``[(a, b), ...]``."""
    out: list[tuple[int, int]] = []
    at = first
    for a, b in [*sorted(done), (end, end)]:
        while at < a:
            cut = min(a, first + ((at - first) // size + 1) * size)
            out.append((at, cut))
            at = cut
        at = max(at, b)
    return out


# -- the batch folder -----------------------------------------------------------------


def existing_parts(folder: Path, start: int, games: int) -> list[tuple[int, int]]:
    """The ranges ``(first, end)`` of the complete part files in ``folder`` (none if it
    does not exist), sorted; ValueError when one lies outside games ``start .. start +
    games - 1`` or two overlap."""
    found = []
    if folder.is_dir():
        for entry in os.scandir(folder):
            m = _PART.fullmatch(entry.name)
            if m and entry.is_file():
                found.append((int(m.group(1)), int(m.group(2))))
    found.sort()
    end = start + games
    for i, (a, b) in enumerate(found):
        if not start <= a < b <= end:
            raise ValueError(f"{folder / part_name(a, b)} lies outside games {start} .. {end - 1} of this batch")
        if i and a < found[i - 1][1]:
            raise ValueError(f"{folder}: parts {part_name(*found[i - 1])} and {part_name(a, b)} overlap")
    return found


def check_batch_folder(
    out: str | os.PathLike[str],
    specs: Sequence[AgentSpec],
    rules: Rules,
    seed: int,
    start: int,
    games: int,
    resume: bool,
) -> Path:
    """``out`` as the folder of this batch, checked without changing anything: its
    absolute path.

    The folder may be new (its parent must exist and be writable), or hold this same
    batch when ``resume`` is True. Raises ValueError when ``out`` names a result file,
    holds another batch (the message names each differing field), holds this batch
    without ``resume``, or holds part files without ``_batch.json`` or outside the
    batch; OSError when it cannot be written.
    """
    folder = Path(out).expanduser().resolve()
    if folder.suffix.lower() in (".parquet", ".csv") or folder.is_file():
        raise ValueError(f"{str(out)!r}: a distributed batch writes a folder of part files; give a folder, not a file")
    if not folder.parent.is_dir():
        raise FileNotFoundError(f"{str(out)!r}: folder {folder.parent} does not exist")
    _probe_writable(folder if folder.is_dir() else folder.parent)
    stored = _read_batch_file(folder)
    if stored is not None:
        ours = batch_metadata(specs, rules, seed, start, games)
        differ = [f"{k} {stored.get(k)!r} there, {ours[k]!r} here" for k in COMPARED if stored.get(k) != ours[k]]
        if differ:
            raise ValueError(f"{folder} holds another batch ({BATCH_FILE}: {'; '.join(differ)}); use another folder")
    parts = existing_parts(folder, start, games)
    if stored is None:
        if parts:
            raise ValueError(
                f"{folder} holds part files but no {BATCH_FILE}: it is not the folder of a batch that can be continued"
            )
        return folder
    if not resume:
        done = sum(b - a for a, b in parts)
        raise ValueError(
            f"{folder} already holds this batch ({done:,} of {games:,} games): resume it (resume=True, --resume) or use another folder"
        )
    return folder


def _probe_writable(folder: Path) -> None:
    import tempfile

    fd, probe = tempfile.mkstemp(dir=folder, prefix=".qwirkle-", suffix=".probe")
    os.close(fd)
    os.unlink(probe)


def _read_batch_file(folder: Path) -> dict[str, Any] | None:
    path = folder / BATCH_FILE
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        raise ValueError(f"{path} is not valid JSON") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not describe a batch")
    return data


def _write_batch_file(folder: Path, description: dict[str, Any]) -> None:
    tmp = folder / f".{BATCH_FILE}.{uuid.uuid4().hex}.tmp"
    tmp.write_text(json.dumps(description, indent=2) + "\n")
    os.replace(tmp, folder / BATCH_FILE)


# -- tasks (run on the workers) -------------------------------------------------------


def _part_stats(path: Path, expected: dict[str, Any]) -> BatchStats:
    """The statistics stored in a complete part, checked to be the range ``expected``
    describes (ValueError otherwise)."""
    meta = read_metadata(path)
    keys = ("agents", "rules", "seed", "start", "games")
    if any(meta.get(k) != expected[k] for k in keys) or "stats" not in meta:
        raise ValueError(
            f"{path} is not games {expected['start']} .. {expected['start'] + expected['games'] - 1} of this batch"
        )
    return BatchStats.from_dict(meta["stats"])


def play_part(
    specs: tuple[AgentSpec, ...], rules: Rules, seed: int, first: int, end: int, folder: str, threads: int
) -> BatchStats:
    """One task: play games ``first .. end - 1`` of the batch ``seed`` and write them to
    ``folder/part-<first>-<end>.parquet`` (through a temporary name: the part is
    complete or absent); their statistics, also stored in the part's Parquet metadata
    under ``"stats"``.

    A part already there (written by an earlier attempt whose worker was lost after
    the rename) is read, not played again. Raises FileNotFoundError when the worker
    does not see the batch's ``_batch.json`` (``out`` must be a folder shared by the
    client and every worker), OSError when the part cannot be written.
    """
    base = Path(folder)
    path = base / part_name(first, end)
    expected = batch_metadata(specs, rules, seed, first, end - first)
    if not (base / BATCH_FILE).is_file():
        raise FileNotFoundError(
            f"worker {socket.gethostname()} does not see {base / BATCH_FILE}: out= must be a folder shared by the client and every worker"
        )
    if path.is_file():
        return _part_stats(path, expected)
    result = play_range(specs, rules, seed, first, end - first, threads, keep=True)
    if result.interrupted or result.games != end - first:
        raise RuntimeError(f"games {first} .. {end - 1} were interrupted")
    write_rows(path, result.rows, {**expected, "stats": result.stats.to_dict()})
    return result.stats


@dataclass(frozen=True)
class WorkerReady:
    """A worker with its kernels loaded (what :func:`warm_up` returns per worker).

    Attributes
    ----------
    seconds
        from the start of the warm-up task to loaded kernels (a minute or two

    Notes
    -----
    when they were compiled; a second or two from the on-disk cache).
    seconds_per_game: per probe, one thread's seconds per game of its agents.
    """

    address: str
    host: str
    pid: int
    threads: int
    seconds: float
    seconds_per_game: tuple[float, ...]


def _warm(
    version: str, probes: tuple[tuple[AgentSpec, ...], ...], opening: str, variant: str = "classic"
) -> tuple[str, int, float, tuple[float, ...]]:
    """The warm-up task: load the kernels, then time each probe's agents on one thread."""
    t0 = time.perf_counter()
    if version != __version__:
        raise RuntimeError(
            f"worker {socket.gethostname()} runs qwirkle-core {__version__}, the client {version}: install the same version everywhere"
        )
    greedy = parse_agents("greedy,greedy")
    play_range(
        greedy, Rules(variant=variant), _PROBE_SEED, 0, 1, threads=1, keep=False
    )  # compile, or load from the cache
    ready = time.perf_counter() - t0
    per_game = []
    for specs in probes:
        rules = Rules(players=len(specs), opening=opening, variant=variant)
        n = 1
        while True:
            r = play_range(specs, rules, _PROBE_SEED, 0, n, threads=1, keep=False)
            if r.elapsed >= PROBE_SECONDS or n >= 1 << 16:
                break
            n *= 4
        per_game.append(r.elapsed / n)
    return socket.gethostname(), os.getpid(), ready, tuple(per_game)


def warm_up(
    client: Client,
    probes: Sequence[Sequence[AgentSpec]] = (),
    rules: Rules | None = None,
    on_ready: Callable[[int, int], None] | None = None,
) -> list[WorkerReady]:
    """Load the numba kernels on every worker of ``client`` (a task per worker), and
    time each of ``probes`` (tuples of agents, one per seat) there for about
    :data:`PROBE_SECONDS` on one thread; their opening rule and variant are those of
    ``rules`` (the kernels of that variant are loaded).

    Waits for at least one worker. ``on_ready(ready, workers)`` is called once the
    tasks are sent (``ready = 0``) and as each worker is ready. A worker that joins
    later loads the kernels on its first task. The kernels are compiled on a worker's
    first use and cached on its disk (with the installed package), so later runs on
    that machine load them in seconds. Raises RuntimeError when a worker runs another
    version of qwirkle-core.
    """
    check_client(client)
    if not client.ncores():
        client.wait_for_workers(1)
    cores = client.ncores()
    rules = rules or Rules()
    frozen = tuple(tuple(p) for p in probes)
    futures = {
        client.submit(
            _warm,
            __version__,
            frozen,
            rules.opening,
            rules.variant,
            key=f"qwirkle-warm-up-{uuid.uuid4().hex}",
            workers=[address],
            allow_other_workers=True,
            pure=False,
        ): address
        for address in cores
    }
    if on_ready is not None:
        on_ready(0, len(futures))
    ready = []
    for future in _completed(futures):
        host, pid, seconds, per_game = future.result()
        address = futures[future]
        ready.append(WorkerReady(address, host, pid, int(cores[address]), seconds, per_game))
        if on_ready is not None:
            on_ready(len(ready), len(futures))
    return ready


@contextlib.contextmanager
def _ctrl_c_deferred() -> Iterator[threading.Event]:
    """While open, a first Ctrl-C (SIGINT) sets the yielded event instead of raising
    KeyboardInterrupt wherever the main thread is, and a second one raises as usual.

    A KeyboardInterrupt inside a blocking Dask client call makes distributed
    (2026.8) log a ``NameError`` traceback from its event-loop thread, so the waits
    below take the interrupt at a point of their own. Only in the main thread with
    Python's default handler installed; otherwise the event is never set.
    """
    stop = threading.Event()
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield stop
        return

    def handler(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    signal.signal(signal.SIGINT, handler)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _completed(futures: Iterable[Any]) -> Iterator[Any]:
    """``futures`` as they finish (``distributed.as_completed``); Ctrl-C raises
    KeyboardInterrupt here, between client calls, within 0.1 s."""
    pending = as_completed(futures)
    with _ctrl_c_deferred() as stop:
        while not stop.is_set():
            batch = pending.next_batch(block=False)
            if not batch and pending.is_empty():
                return
            yield from batch
            if not batch:
                stop.wait(0.1)
    raise KeyboardInterrupt


def check_client(client: Any) -> None:
    """TypeError unless ``client`` is a ``dask.distributed.Client``."""
    if not isinstance(client, Client):
        raise TypeError(f"client must be a dask.distributed.Client, not {type(client).__name__}")


def auto_range_size(games: int, seconds_per_game: float, worker_threads: float, threads: int = 1) -> int:
    """Games per range: about :data:`TASK_SECONDS` of work for a task of ``threads``
    numba threads playing a game in ``seconds_per_game`` on one thread, but small
    enough for :data:`TASKS_PER_THREAD` ranges per worker thread, and no shorter than
    :data:`MIN_TASK_SECONDS` of work."""
    rate = threads / max(seconds_per_game, 1e-9)
    longest = max(1, int(rate * TASK_SECONDS))
    shortest = max(1, int(rate * MIN_TASK_SECONDS))
    balanced = math.ceil(games / (TASKS_PER_THREAD * max(worker_threads, 1.0)))
    return max(1, min(games, max(shortest, min(longest, balanced))))


def map_ranges(
    client: Client,
    func: Callable[..., Any],
    jobs: Sequence[tuple[tuple[Any, ...], int]],
    progress: Progress | None = None,
    total: int | None = None,
    done: int = 0,
) -> tuple[dict[int, Any], bool]:
    """Run ``func(*args)`` on the cluster for each ``(args, games)`` of ``jobs``.

    Returns ``({job index: result}, interrupted)``. ``progress(done, total)`` is
    called after each finished job, ``done`` counting the jobs' games from ``done``.
    A job that raises stops the run: the other jobs are cancelled and its exception
    is raised (work already finished, such as written parts, stays). Ctrl-C (or a
    KeyboardInterrupt from ``progress``) cancels the rest and returns the finished
    results with ``interrupted=True``. A job whose worker died is run again by Dask
    (up to its ``distributed.scheduler.allowed-failures`` setting, then it raises
    ``KilledWorker``).
    """
    total = done + sum(g for _, g in jobs) if total is None else total
    name = getattr(func, "__name__", "task").strip("_").replace("_", "-")
    futures = {
        client.submit(func, *args, key=f"qwirkle-{name}-{uuid.uuid4().hex}", pure=False): i
        for i, (args, _) in enumerate(jobs)
    }
    results: dict[int, Any] = {}
    try:
        for future in _completed(futures):
            index = futures.pop(future)
            results[index] = future.result()  # raises the task's exception
            future.release()
            done += jobs[index][1]
            if progress is not None:
                progress(done, total)
    except KeyboardInterrupt:
        client.cancel(list(futures))
        return results, True
    except BaseException:
        client.cancel(list(futures))
        raise
    return results, False


def run_batch(
    client: Client,
    specs: tuple[AgentSpec, ...],
    rules: Rules,
    seed: int,
    start: int,
    games: int,
    out: str | os.PathLike[str] | None,
    threads: int | None = None,
    progress: Progress | None = None,
    resume: bool = False,
    range_size: int | None = None,
) -> SimulationResult:
    """Play games ``start .. start + games - 1`` of the batch ``seed`` on ``client``'s
    cluster into the folder ``out`` (see the module's description).

    The arguments are those of :func:`~qwirkle_core.batch.simulate.simulate`, with ``specs``
    parsed and ``rules`` matching them; ``threads``: numba threads per task (default
    1); ``range_size``: games per task (default :func:`auto_range_size`; on resume,
    the size stored in ``_batch.json``), at most the rows that fit in 1 GiB.
    ``progress(done, total)`` is called once every worker is ready (``done``: the
    games already in the folder, 0 for a new batch), then as ranges finish. Returns a :class:`SimulationResult` whose rows are read
    from ``out`` on request. Raises TypeError/ValueError for bad arguments and a
    folder holding another batch (:func:`check_batch_folder`) before anything runs;
    then the exception of a task that raised.
    """
    check_client(client)
    if out is None:
        raise ValueError(
            "a distributed batch needs out=: a folder shared by the client and every worker, for the part files"
        )
    threads = 1 if threads is None else check_int(threads, "threads", 1)
    if range_size is not None:
        range_size = check_int(range_size, "range_size", 1, MEMORY_LIMIT // row_bytes(rules.players))
    folder = check_batch_folder(out, specs, rules, seed, start, games, resume)
    clock = time.perf_counter()
    workers = warm_up(client, [specs], rules)
    compile_seconds = time.perf_counter() - clock
    stored = _read_batch_file(folder)
    if range_size is None:
        if stored is not None and isinstance(stored.get("range_size"), int) and stored["range_size"] >= 1:
            range_size = stored["range_size"]
        else:
            per_game = statistics.median(w.seconds_per_game[0] for w in workers)
            range_size = auto_range_size(games, per_game, sum(w.threads for w in workers), threads)
    folder.mkdir(exist_ok=True)
    if stored is None:
        _write_batch_file(folder, {**batch_metadata(specs, rules, seed, start, games), "range_size": range_size})
    done = existing_parts(folder, start, games)
    stats = BatchStats(rules.players)
    for a, b in done:
        stats = stats.merge(_part_stats(folder / part_name(a, b), batch_metadata(specs, rules, seed, a, b - a)))
    resumed = stats.games
    todo = ranges(start, start + games, range_size, done)
    if progress is not None:
        progress(resumed, games)
    jobs = [((specs, rules, seed, a, b, str(folder), threads), b - a) for a, b in todo]
    clock = time.perf_counter()
    try:
        results, interrupted = map_ranges(client, play_part, jobs, progress, games, resumed)
    except Exception as e:
        e.add_note(f"the finished ranges are kept in {folder}; resume=True (--resume) continues the batch")
        raise
    elapsed = time.perf_counter() - clock
    for part in results.values():
        stats = stats.merge(part)
    return SimulationResult(
        agents=tuple(a.label for a in specs),
        rules=rules,
        seed=seed,
        start=start,
        stats=stats,
        elapsed=elapsed,
        interrupted=interrupted,
        threads=sum(w.threads for w in workers),
        compile_seconds=compile_seconds,
        path=folder if stats.games else None,
        resumed=resumed,
        workers=len(workers),
    )
