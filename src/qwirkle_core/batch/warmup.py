"""Compiling the batch kernels ahead of time: :func:`warmup` (``qc.warmup``, ``qwirkle
warmup``), the first run's estimate (:func:`estimate_seconds`) and the parallel compile
of a first batch.

Numba compiles a kernel on its first call in a process and keeps the machine code in
its on-disk cache (``NUMBA_CACHE_DIR``, else ``_kernels/__pycache__``); later
processes load it in well under a second. A batch compiles only the kernel of its
agents (:func:`qwirkle_core._kernels.batch.kernel_for`). Some have parts that compile
independently, side by side in worker processes into the shared cache:

- the greedy and random batch links in its move generator and turn actions
  (:data:`TASKS`' ``needs``): those are compiled first, then the batch kernel, which
  loads them from the cache;
- the search agent's kernels call its endgame solver and playouts unlinked
  (``calls``, :class:`qwirkle_core._kernels._jit.External`): all three compile at the
  same time, and the solver and playouts are bound (loaded from the cache) before the
  first game.

Each worker is a fresh ``python -m qwirkle_core.batch.warmup`` (not multiprocessing, so
a script without a ``__main__`` guard is never re-run).

When the cache is reused (docs/cold-start.md): the same numba version, the same CPU
model and features, and the same kernel sources (a hash of them is kept beside the
cache; an upgrade or an edit drops it, see ``_kernels._jit.drop_stale_cache``).
"""

from __future__ import annotations

import importlib
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._compiling import compiling
from .._kernels import _jit
from .._kernels import actions as _ac
from .._kernels import batch as _bt
from .._kernels import cubes as _cu
from .._kernels import layout as _lo
from .._kernels import movegen as _mg
from .._kernels import state as _st
from .._threads import available_threads
from ..game.agents import AGENTS, AgentLike, parse_agents
from ..game.rules import Rules

__all__ = [
    "TASKS",
    "KernelTime",
    "WarmupProgress",
    "compile_first_batch",
    "compile_kernels",
    "compiling_batch",
    "pairs_kernels",
    "turn_kernel_cached",
    "default_processes",
    "estimate_kernels",
    "estimate_seconds",
    "kernels_for",
    "warmup",
]

WarmupProgress = Callable[[str, bool, int, int], None]
"""A progress callback ``f(kernel, ready, done, total)``: called when ``kernel`` starts
compiling (``ready`` False) and when it is ready (True; compiled or found in the
cache), with ``done`` kernels of ``total`` ready."""


@dataclass(frozen=True)
class KernelTime:
    """One kernel of a :func:`warmup`: its ``name``, the ``seconds`` until it was ready
    and whether it was ``compiled`` (False: it was already in the cache)."""

    name: str
    seconds: float
    compiled: bool


def _state_types() -> tuple[_lo.GameState, object]:
    """The numba types of a game state's arrays (a :class:`~qwirkle_core._kernels.layout.GameState`
    of them) and of its move buffer, as ``actions.new_state`` makes them for the batch
    kernels."""
    import numba

    gs, moves = _ac.new_state()
    return _lo.GameState(*map(numba.typeof, gs)), numba.typeof(moves)


def _compile_generate() -> None:
    """The move generator and a game's setup, with the types the turn loop
    (``policies.play_turns``) and the batch kernels call them with."""
    import numba

    int64, boolean = numba.types.int64, numba.types.boolean
    s, moves = _state_types()
    _st.new_game.compile((s.hands, s.bag, s.gmeta, s.rng, int64, int64))
    _mg.generate.compile((s.board, s.cross, s.anchors, s.bmeta, int64, int64, moves, s.gen_scratch, boolean))
    _ac.fallback.compile((s.hands, s.gmeta, s.rng, s.act, boolean))
    _ac.set_place.compile((s.act, moves, int64))


def _compile_apply() -> None:
    """A turn's actions (a placement, an exchange or a pass), with the types the turn
    loop calls them with."""
    s, _ = _state_types()
    board = (s.board, s.cross, s.anchors, s.bmeta, s.hands, s.bag, s.gmeta)
    _ac.apply_placement.compile((*board, s.act))
    _ac.apply_action.compile((*board, s.rng, s.act))


def _compile_solve() -> None:
    """The endgame solver, with the types the search agent calls it with."""
    from .._kernels import endgame, search

    endgame.solve.compile(search.solve_types())


def _compile_playout() -> None:
    """The search agent's playout, with the types of its search loop."""
    from .._kernels import search

    search.playout.compile(search.playout_types())


def _compile_rank_learned() -> None:
    """The search agent's learned ranking (:func:`~qwirkle_core._kernels.search.rank_learned`:
    the static agent's values, which the playouts' static policy calls too), with the
    types of its search."""
    from .._kernels import search

    search.rank_learned.compile(search.rank_learned_types())


def _compile_rank_net() -> None:
    """The net's ranking of a search with ``eval`` ``net``, with the types of its
    search."""
    from .._kernels import net, search

    net.rank_net.compile(search.rank_net_types())


def _compile_heuristic() -> None:
    """The heuristic that a search with ``eval`` or ``policy`` ``heuristic`` calls
    unlinked, with the types of its search and playouts."""
    from .._kernels import policies, search

    rank, fill = search.heuristic_types()
    search.rank_candidates.compile(rank)
    policies.heuristic_fill.compile(fill)


def _compile_classes() -> None:
    """The kernel of the leave table's class index (:func:`~qwirkle_core._kernels.leaves.classes`),
    which the static, net and search agents' first batch computes."""
    from .._kernels import leaves

    leaves.leave_codes.compile(leaves.leave_codes_types())


def _compile_batch(kernel: Callable[..., None]) -> Callable[[], None]:
    def run() -> None:
        specs = np.stack([_lo.make_spec(_lo.GREEDY)] * 2)
        seeds = np.zeros(0, np.uint64)
        kernel(
            seeds,
            specs,
            Rules().opening_code,
            np.zeros((0, 2), np.int32),
            np.zeros((0, 2), np.int16),
            np.zeros((0, _lo.STATS), np.int32),
        )

    return run


@dataclass(frozen=True)
class _Task:
    compile: Callable[[], None]
    seconds: float  # CPU seconds of its compile on the project's machine (when alone)
    needs: tuple[str, ...] = ()  # parts it links in: compiled before it
    calls: tuple[str, ...] = ()  # parts it calls unlinked (_jit.External): compiled beside it


def _kernel(name: str) -> object:
    """The kernel ``name`` of :data:`TASKS` (``module.function`` of ``_kernels``), whose
    cache entry says that the task is done; its module imported at need."""
    module, function = name.split(".")
    return getattr(importlib.import_module(f".._kernels.{module}", __package__), function)


_SEARCH_CALLS = ("endgame.solve", "search.playout", "search.rank_learned")  # what the search calls unlinked

# CPU seconds measured on the project's machine (2 cores, numba 0.68) from an empty
# cache; an entry kernel's seconds exclude its parts. The search's (docs/cold-start.md),
# compiled one after the other in one fresh process: the leave codes 1.1, the learned
# ranking 5.8, then the solver 10.5, the playouts 10.7 (each counting what it adds to
# those before it) and the batch kernel 11.1 (18.2 alone): it counts as alone, since
# side by side it loads only some of the parts' kernels from the workers.
TASKS: dict[str, _Task] = {
    "endgame.solve": _Task(_compile_solve, 10.5),
    "search.playout": _Task(_compile_playout, 11.0),
    "search.rank_learned": _Task(_compile_rank_learned, 5.5),
    "leaves.leave_codes": _Task(_compile_classes, 1.0),
    "net.rank_net": _Task(_compile_rank_net, 25.0),
    "search.rank_candidates": _Task(_compile_heuristic, 5.0),
    "movegen.generate": _Task(_compile_generate, 5.5),
    "actions.apply_action": _Task(_compile_apply, 3.7),
    "batch.run_plain": _Task(_compile_batch(_bt.run_plain), 2.8, ("movegen.generate", "actions.apply_action")),
    "batch.run_heuristic": _Task(_compile_batch(_bt.run_heuristic), 20.0),
    "batch.run_search": _Task(_compile_batch(_bt.run_search), 18.0, calls=_SEARCH_CALLS),
    "batch.run_mc": _Task(_compile_batch(_bt.run_mc), 28.0),
    "batch.run_static": _Task(_compile_batch(_bt.run_static), 25.0),
    "batch.run_net": _Task(_compile_batch(_bt.run_net), 30.0),
    "batch.run_any": _Task(_compile_batch(_bt.run_any), 35.0, calls=_SEARCH_CALLS),
    "cubes.run_games": _Task(_compile_batch(_cu.run_games), 34.0),
}
"""The kernels :func:`warmup` compiles: the batch kernels (``batch.run_*``,
``cubes.run_games``) and their independent parts (the move generator and the turn
actions that the greedy and random batch links in; the search agent's endgame solver,
playouts and learned ranking, which its kernels call unlinked, and the net's ranking
and the heuristic that a search with ``eval`` ``net`` or ``heuristic`` calls unlinked;
the kernel of the leave table's class index, which the static, net and search agents
compute before their first game), with rough seconds of each. The
heuristic's and Monte Carlo's batches are not split: their own part dwarfs the shared
ones (18 and 21 s against 5.5 and 3.7), so compiling those first would only add a
wave."""


def kernels_for(agents: Iterable[AgentLike] | str | None = None, rules: Rules | None = None) -> list[str]:
    """The names (:data:`TASKS`) of the kernels a batch of ``agents`` (one per seat;
    None: every agent, one kernel each) under ``rules`` (default: the tile game; None
    with ``agents`` None: the tile game and Qwirkle Cubes) compiles, the parts first.
    Raises what :func:`~qwirkle_core.game.agents.parse_agents` raises for bad agents."""
    entries: list[str] = []
    if agents is None:
        sets: list[Sequence[AgentLike]] = [[name] for name in AGENTS]
        sets.append(list(AGENTS))
        sets += [["search:eval=net"], ["search:eval=heuristic"]]  # what they call unlinked
        if rules is None or rules.cubes:
            entries.append("cubes.run_games")
        if rules is not None and rules.cubes:
            sets = []
    else:
        sets = [list(parse_agents(agents))]
    parts: list[str] = []
    for agent_set in sets:
        if rules is not None and rules.cubes:
            name = "cubes.run_games"
        else:
            specs = np.stack([a.row() for a in parse_agents(agent_set)])
            name = f"batch.{_bt.kernel_for(specs).__name__}"
            parts += _unlinked(specs)
        if name not in entries:
            entries.append(name)
    parts += [part for name in entries for part in (*TASKS[name].needs, *TASKS[name].calls)]
    return list(dict.fromkeys(parts)) + [e for e in entries if e not in parts]


_CLASSES = "leaves.leave_codes"
_AT_NEED = ("net.rank_net", "search.rank_candidates", _CLASSES)
"""The parts of :func:`_unlinked`: compiled (or loaded) only for the agents that call them."""


def _unlinked(specs: np.ndarray) -> list[str]:
    """The parts (:data:`TASKS`) that the agents of ``specs`` call unlinked beyond their
    batch kernel's own ``calls``: the net's ranking of a search with ``eval`` ``net``,
    the heuristic of one with ``eval`` or ``policy`` ``heuristic``, and the kernel of
    the leave table's class index that the static, net and search agents read."""
    from .._kernels import search

    ids = {int(row[_lo.SPEC_ID]) for row in specs}
    searches = [row for row in specs if int(row[_lo.SPEC_ID]) == _lo.SEARCH]
    parts = ["net.rank_net"] if any(row[_lo.P_SEARCH_EVAL] == _lo.EVAL_NET for row in searches) else []
    parts += ["search.rank_candidates"] if any(search.uses_heuristic(row) for row in searches) else []
    return parts + ([_CLASSES] if ids & {_lo.SEARCH, _lo.STATIC, _lo.NET} else [])


def _cached(name: str) -> bool:
    return bool(_jit.is_cached(_kernel(name)))


def default_processes() -> int:
    """Worker processes of a parallel compile: ``QWIRKLE_COMPILE_PROCESSES`` when set,
    else the cores this process may use (at most 4); 1 means none (compile here)."""
    text = os.environ.get("QWIRKLE_COMPILE_PROCESSES", "")
    if text.strip():
        try:
            return max(1, int(text))
        except ValueError:
            return 1
    return max(1, min(4, available_threads()))


def _bins(names: list[str], processes: int) -> list[list[str]]:
    """``names`` split over at most ``processes`` workers, the longest first (each to the
    least loaded worker); each bin in the order to compile it, the shortest first, so
    that the kernels a short part shares with a longer part of another bin are in the
    cache when that one reaches them (loaded there, not compiled twice)."""
    bins: list[list[str]] = [[] for _ in range(min(processes, len(names)))]
    load = [0.0] * len(bins)
    for name in sorted(names, key=lambda n: -TASKS[n].seconds):
        i = load.index(min(load))
        bins[i].append(name)
        load[i] += TASKS[name].seconds
    return [b[::-1] for b in bins if b]


def _waves(names: list[str]) -> list[list[str]]:
    """``names`` in waves: each kernel after the ones it needs."""
    waves: list[list[str]] = []
    done: set[str] = set()
    rest = list(names)
    while rest:
        wave = [n for n in rest if all(need in done or need not in names for need in TASKS[n].needs)]
        waves.append(wave)
        done.update(wave)
        rest = [n for n in rest if n not in done]
    return waves


def compile_first_batch(specs: np.ndarray) -> None:
    """Before a batch's first call: when its kernel (for the spec rows ``specs``) is not
    in the disk cache and has parts that compile independently (:data:`TASKS`' ``needs``
    and ``calls``, and what its agents bind at need: :func:`_unlinked`), compile them
    (and, for ``calls``, the kernel too) side by side in
    :func:`default_processes` processes, the longest in this one, the others in workers
    into the disk cache (:func:`_bins`); the batch loads them from there. A worker
    compiles the kernel of the leave table's class index first, which this process
    computes after its own compile. Nothing otherwise (the first call compiles all in this
    process)."""
    processes = default_processes()
    if processes < 2 or not _jit.CACHE:
        return
    kernel = _bt.kernel_for(specs)
    if _jit.is_cached(kernel):
        return
    name = f"batch.{kernel.__name__}"
    task = TASKS[name]
    todo = [n for n in (*task.needs, *task.calls, *_unlinked(specs)) if not _cached(n)]
    if task.calls:
        todo.append(name)
    if len(todo) < 2:
        return
    first = [n for n in todo if n == _CLASSES]
    here, *others = _bins([n for n in todo if n != _CLASSES], processes)
    workers = [_spawn(first + names if i == 0 else names) for i, names in enumerate(others)]
    try:
        for part in here:
            TASKS[part].compile()
        _bind_meanwhile(specs)
        for worker in workers:
            worker.communicate()  # a part a worker failed on: the batch kernel compiles it
    finally:
        _stop(workers)


def _bind_meanwhile(specs: np.ndarray) -> None:
    """After this process's compile, while the workers may still compile: bind the leave
    table of the static agent and the search (:func:`_unlinked`), whose class index a
    worker compiled first."""
    from .._kernels import leaves

    if _CLASSES in _unlinked(specs):
        leaves.bind_leaves()


def estimate_seconds(
    agents: Iterable[AgentLike] | str | None = None,
    rules: Rules | None = None,
    processes: int | None = None,
    cached: bool = False,
) -> float:
    """Rough wall seconds of compiling the kernels of a batch of ``agents`` under
    ``rules`` (as :func:`kernels_for`) with ``processes`` workers (default
    :func:`default_processes`) on an idle machine like the project's (2 cores). Kernels
    already in the disk cache count nothing (0.0 when all are), unless ``cached``: then
    every kernel counts as if the cache were empty."""
    return estimate_kernels(kernels_for(agents, rules), processes, cached)


def estimate_kernels(names: Sequence[str], processes: int | None = None, cached: bool = False) -> float:
    """:func:`estimate_seconds` of the kernels ``names`` (of :data:`TASKS`)."""
    names = list(dict.fromkeys(names))
    if not cached:
        if all(_cached(n) for n in names if n.startswith(("batch.", "cubes."))):
            # the batch kernels are in the cache: loaded, not compiled; but what a search
            # binds only at need (_unlinked) may not be
            names = [n for n in names if n in _AT_NEED]
        names = [n for n in names if not _cached(n)]
    if not names:
        return 0.0
    processes = default_processes() if processes is None else max(1, processes)
    if processes == 1 or not _jit.CACHE:
        return sum(TASKS[n].seconds for n in names)
    total = 0.0
    for wave in _waves(names):
        rest = [n for n in wave if n != _CLASSES]
        if len(rest) <= 1:  # one kernel (and the leave codes): one after the other here
            total += sum(TASKS[n].seconds for n in wave)
            continue
        wave = rest  # the leave codes compile first in a worker beside the rest
        bins = _bins(wave, processes)
        # a worker starts in about a second; two compiling at once on two cores each
        # run a little slower than alone
        total += 1.0 + max(sum(TASKS[n].seconds for n in b) for b in bins) * (1.15 if len(bins) > 1 else 1.0)
    return total


def batch_description(agents: Iterable[AgentLike] | str, rules: Rules | None = None) -> str:
    """What a batch of ``agents`` compiles, in the compile notice's words: "the greedy
    batch kernels", "the Qwirkle Cubes batch kernel"."""
    if rules is not None and rules.cubes:
        return "the Qwirkle Cubes batch kernel"
    names = ", ".join(dict.fromkeys(a.name for a in parse_agents(agents)))
    return f"the {names} batch kernels"


def pairs_kernels(agents: Sequence[AgentLike], rules: Rules | None = None) -> list[str]:
    """The kernels (:data:`TASKS`) of every two-seat pairing of the built-in ``agents``
    (a tournament's)."""
    names: list[str] = []
    for i, a in enumerate(agents):
        for b in agents[i + 1 :]:
            names += [n for n in kernels_for((a, b), rules) if n not in names]
    return names


def turn_kernel_cached() -> bool:
    """Whether the built-in agents' one-turn kernel (``Game.play_agent``'s) is in the
    disk cache."""
    from .._kernels import agents as _ag

    return bool(_jit.is_cached(_ag.take_turn))


def compiling_batch(agents: Iterable[AgentLike] | str, rules: Rules | None = None) -> Any:
    """The compile notice's scope (:func:`qwirkle_core._compiling.compiling`) of a
    first batch of ``agents`` under ``rules``: its words and its estimate."""
    return compiling(batch_description(agents, rules), estimate_seconds(agents, rules))


def warmup(
    agents: Iterable[AgentLike] | str | None = None,
    rules: Rules | None = None,
    processes: int | None = None,
    progress: WarmupProgress | None = None,
) -> list[KernelTime]:
    """Compile the kernels of batches of ``agents`` (one per seat, as for
    :func:`~qwirkle_core.batch.simulate.simulate`; default: every agent's) under
    ``rules`` into numba's on-disk cache, so that a later process (a container started
    from an image, a cluster worker) loads them instead of compiling them.

    Parameters
    ----------
    agents
        agents (names, specs, or one comma-separated str), one per seat; None: the
        kernels of every agent (and of Qwirkle Cubes unless ``rules`` says the tile
        game).
    rules
        the rules of the batches (default: the tile game).
    processes
        worker processes that compile independent kernels side by side (default: the
        cores this process may use, at most 4; ``QWIRKLE_COMPILE_PROCESSES`` sets it);
        1 compiles every kernel in this process. Without the disk cache
        (``QWIRKLE_NO_CACHE=1``) every kernel is compiled here.
    progress
        called as ``progress(kernel, ready, done, total)`` when a kernel starts and
        when it is ready (:data:`WarmupProgress`).

    Returns
    -------
    list of KernelTime
        each kernel's name, seconds until it was ready and whether it was compiled.

    Raises
    ------
    AgentError
        a bad agent (what :func:`~qwirkle_core.game.agents.parse_agents` raises).
    """
    return compile_kernels(kernels_for(agents, rules), processes, progress)


def compile_kernels(
    names: Sequence[str], processes: int | None = None, progress: WarmupProgress | None = None
) -> list[KernelTime]:
    """Compile the kernels ``names`` (of :data:`TASKS`, each after those it needs, as
    :func:`kernels_for` lists them) into the disk cache: :func:`warmup` of a list of
    kernels. Raises KeyError for an unknown name."""
    names = list(dict.fromkeys(names))
    tasks = [TASKS[n] for n in names]  # KeyError first
    del tasks
    with compiling(lambda: (f"the kernels {', '.join(names)}", estimate_kernels(names, processes))):
        return _compile_kernels(names, processes, progress)


def _compile_kernels(names: list[str], processes: int | None, progress: WarmupProgress | None) -> list[KernelTime]:
    processes = default_processes() if processes is None else max(1, int(processes))
    results: dict[str, KernelTime] = {}
    total = len(names)

    def report(name: str, ready: bool) -> None:
        if progress is not None:
            progress(name, ready, len(results), total)

    todo = []
    for name in names:
        if _cached(name):
            results[name] = KernelTime(name, 0.0, False)
            report(name, True)
        else:
            todo.append(name)
    t0 = time.perf_counter()
    for wave in _waves(todo):
        if processes > 1 and _jit.CACHE and len(wave) > 1:
            for name in wave:
                report(name, False)
            _compile_in_workers(wave, processes, t0, results, lambda name: report(name, True))
        for name in wave:  # in this process: the last wave's lone kernel, or what a worker missed
            if name not in results:
                report(name, False)
                TASKS[name].compile()
                results[name] = KernelTime(name, time.perf_counter() - t0, True)
                report(name, True)
    for name in names:  # load what the workers compiled into this process too
        if results[name].compiled and name.startswith(("batch.", "cubes.")):
            TASKS[name].compile()
    return [results[n] for n in names]


def _compile_in_workers(
    wave: list[str],
    processes: int,
    t0: float,
    results: dict[str, KernelTime],
    report: Callable[[str], None],
) -> None:
    """Compile the kernels of ``wave`` in worker processes into the disk cache; a kernel a
    worker failed on is left for this process."""
    workers = [_spawn(names) for names in _bins(wave, processes)]
    try:
        with selectors.DefaultSelector() as sel:
            for worker in workers:
                assert worker.stdout is not None
                sel.register(worker.stdout, selectors.EVENT_READ)
            open_pipes = len(workers)
            while open_pipes:
                for key, _ in sel.select():
                    line = key.fileobj.readline()  # type: ignore[union-attr]
                    if not line:
                        sel.unregister(key.fileobj)
                        open_pipes -= 1
                        continue
                    name = line.strip()
                    if name in TASKS and name not in results:
                        results[name] = KernelTime(name, time.perf_counter() - t0, True)
                        report(name)
        for worker in workers:
            worker.wait()
    finally:
        _stop(workers)


def _spawn(names: Sequence[str]) -> subprocess.Popen[str]:
    """A worker process compiling the kernels ``names`` into the disk cache (it prints
    each name when done)."""
    here = str(Path(__file__).resolve().parents[2])  # the folder this qwirkle_core is imported from
    path = os.environ.get("PYTHONPATH", "")
    env = {
        **os.environ,
        "QWIRKLE_COMPILE_PROCESSES": "1",
        "PYTHONPATH": here + (os.pathsep + path if path else ""),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "qwirkle_core.batch.warmup", *names],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def _stop(workers: Sequence[subprocess.Popen[str]]) -> None:
    """Kill the workers still running (an error or an interrupt in this process)."""
    for worker in workers:
        if worker.poll() is None:
            worker.kill()
            worker.wait()


def _worker(names: Sequence[str]) -> int:
    """A worker process: compile ``names`` one after the other, printing each name when
    it is in the cache."""
    for name in names:
        TASKS[name].compile()
        print(name, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_worker(sys.argv[1:]))
