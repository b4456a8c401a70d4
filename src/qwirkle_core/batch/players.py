"""Python agents: the protocol, ``package.module:Name`` specs, and games in which any
seat may be a built-in agent or a Python agent (see docs/env.md).

A Python agent is any object with a method ``act(observation, legal_moves, rng)``, or a
plain function of the same three arguments, returning one of ``legal_moves``:

``observation``
    the :class:`~qwirkle_core.Observation` of its seat (never more).
``legal_moves``
    every legal action now, a new list of :class:`~qwirkle_core.Move`
    (:func:`legal_actions`): the placements first, in :meth:`Game.legal_moves` order,
    each with its ``score``; then every distinct exchange (fewest tiles first; ``score``
    None); then the pass when it is the only legal action.
``rng``
    a ``numpy.random.Generator`` of its own for this game, seeded from the game's seed
    and the seat, so a game replays exactly from its seed.

A class is instantiated (without arguments) once per game and seat. Built-in agents are
names such as ``"greedy"`` or ``"mc:playouts=32"`` (anything
:func:`~qwirkle_core.parse_agent` takes) and play through :meth:`Game.play_agent`,
exactly as inside a batch.

An agent that raises, returns something that is not a legal action, or runs past the
optional per-move time limit raises :class:`~qwirkle_core.AgentFailure`, which names
the agent, its seat, the game's seed and the turn.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import math
import multiprocessing
import multiprocessing.context
import pickle
import re
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Protocol

import numpy as np

from .._checks import check_finite, check_int, check_seed
from .._threads import available_threads
from ..errors import AgentError, AgentFailure, IllegalMoveError
from ..game.agents import AGENTS, AgentSpec, check_cubes_agents, did_you_mean, parse_agent
from ..game.game import MAX_TURNS, Game
from ..game.move import Action, Move
from ..game.observation import Observation
from ..game.rules import Rules, resolve_rules
from .local import MAX_GAMES, game_seeds

__all__ = [
    "AgentFunction",
    "GameResults",
    "Player",
    "PythonAgent",
    "Seat",
    "WorkerPool",
    "check_processes",
    "check_time_limit",
    "in_process_unless_guarded",
    "unguarded_script",
    "is_builtin",
    "legal_actions",
    "load_agent",
    "play_games",
    "python_label",
    "resolve_agents",
    "run_game",
]

_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class PythonAgent(Protocol):
    """The protocol of a Python agent object (see the module's docstring)."""

    def act(self, observation: Observation, legal_moves: list[Move], rng: np.random.Generator) -> Move:
        """One of ``legal_moves``: the action to take."""
        ...


AgentFunction = Callable[[Observation, list[Move], np.random.Generator], Move]
"""A Python agent written as a function of the same arguments as :meth:`PythonAgent.act`."""


class _Timeout(BaseException):
    """Raised inside an agent by the alarm; a BaseException so ``except Exception`` in
    the agent's own code does not swallow it."""


def is_builtin(agent: object) -> bool:
    """True when ``agent`` names a built-in agent (``"greedy"``, ``"mc:playouts=32"``,
    ``("mc", {"playouts": 32})``, an :class:`~qwirkle_core.AgentSpec` or a spec row; a
    malformed built-in spec counts too), False for anything else (a Python agent or a
    ``package.module:Name`` spec)."""
    if isinstance(agent, (AgentSpec, np.ndarray)):
        return True
    if isinstance(agent, tuple) and len(agent) == 2 and isinstance(agent[0], str) and isinstance(agent[1], Mapping):
        return True
    if not isinstance(agent, str):
        return False
    text = agent.strip()
    return not _SPEC.match(text) or text.partition(":")[0] in AGENTS


def load_agent(spec: str) -> object:
    """The object named by ``spec``, ``"package.module:Name"`` (``Name`` may be a dotted
    attribute path). Raises ValueError naming the problem when it cannot be imported or
    found (an exception raised while importing the module is reported, not re-raised)."""
    if not isinstance(spec, str) or not _SPEC.match(spec.strip()):
        raise ValueError(f"a Python agent is written package.module:Name, not {spec!r:.60}")
    module_name, _, attr = spec.strip().partition(":")
    try:
        obj: object = importlib.import_module(module_name)
    except Exception as e:  # the user's module may fail in any way while importing
        raise ValueError(f"cannot load agent {spec!r}: {type(e).__name__}: {e}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            hint = did_you_mean(part, [n for n in dir(obj) if not n.startswith("_")])
            raise ValueError(f"cannot load agent {spec!r}: {module_name} has no attribute {attr!r}{hint}")
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True, eq=False)
class Player:
    """One seat's agent, resolved: a built-in agent or a Python agent.

    Attributes
    ----------
    label
        the name shown in results and records: a built-in agent's spec label; a
        Python agent's :func:`python_label` (its ``name`` attribute, else
        ``module:Name``, the same from Python as from a ``package.module:Name`` spec on
        the command line).
    spec
        the built-in agent's :class:`~qwirkle_core.AgentSpec`, or None.
    python
        the Python agent (object, class or function), or None.

    Notes
    -----
    Two Players are equal only when they are the same object.
    """

    label: str
    spec: AgentSpec | None = None
    python: Any = None

    @classmethod
    def of(cls, agent: Any) -> Player:
        """The Player of ``agent``: anything :func:`~qwirkle_core.parse_agent` takes,
        ``"package.module:Name"``, an object with ``act``, a class whose instances have
        ``act``, a function, or a Player (returned as is). Raises AgentError (a bad
        built-in agent), ValueError (a spec that cannot be loaded) or TypeError (not an
        agent)."""
        if isinstance(agent, Player):
            return agent
        if is_builtin(agent):
            spec = parse_agent(agent)
            return cls(spec.label, spec=spec)
        if isinstance(agent, str):
            agent = load_agent(agent.strip())
        if inspect.isclass(agent):
            if not callable(getattr(agent, "act", None)):
                raise TypeError(f"agent class {agent.__qualname__} has no act(observation, legal_moves, rng) method")
        elif not callable(getattr(agent, "act", None)) and not callable(agent):
            raise TypeError(
                "an agent is a built-in name such as 'greedy', 'package.module:Name', an object with "
                f"act(observation, legal_moves, rng) or a function of those arguments, not {agent!r:.60}"
            )
        return cls(python_label(agent), python=agent)

    def seat(self, seed: int, seat: int) -> Seat:
        """This agent ready to play ``seat`` of the game with ``seed``: a :class:`Seat`
        (a class is instantiated here; an exception from its constructor is an
        :class:`~qwirkle_core.AgentFailure` at turn 0)."""
        act = None
        if self.spec is None:
            obj = self.python
            if inspect.isclass(obj):
                try:
                    obj = obj()
                except Exception as e:
                    raise AgentFailure(
                        self.label, seat, seed, 0, "raised", f"could not be created: {type(e).__name__}: {e}"
                    ) from e
            act = obj.act if callable(getattr(obj, "act", None)) else obj
        return Seat(self, seat, act, np.random.default_rng([int(seed), int(seat)]))


def python_label(agent: Any) -> str:
    """A Python agent's label, the same however it is given (the object from Python, or
    its ``package.module:Name`` spec on the command line): its ``name`` attribute when it
    has one, else ``module:QualifiedName`` of the function or class (of an instance's
    class), without the module for one defined in the ``__main__`` script."""
    name = getattr(agent, "name", None)
    if isinstance(name, str) and name:
        return name
    owner = agent if inspect.isclass(agent) or inspect.isroutine(agent) else type(agent)
    qualname = str(getattr(owner, "__qualname__", type(agent).__qualname__))
    module = getattr(owner, "__module__", None)
    return qualname if not module or module in ("__main__", "__mp_main__") else f"{module}:{qualname}"


@dataclass(eq=False)
class Seat:
    """A :class:`Player` seated in one game: plays that seat's turns with :meth:`play`.

    Attributes
    ----------
    act
        the Python agent's ``act`` (None for a built-in agent).
    rng
        the agent's generator for this game.
    seconds
        wall time of the turns played so far (for a Python agent: its observation,
        legal actions, ``act`` and the move; for a built-in agent: ``play_agent``).
    moves
        turns played so far.

    """

    player: Player
    index: int
    act: Callable[..., Any] | None
    rng: np.random.Generator
    seconds: float = 0.0
    moves: int = 0

    def play(self, game: Game, time_limit: float | None = None) -> Action:
        """Play the current turn of ``game`` (whose current player must be this seat).

        Parameters
        ----------
        time_limit
            seconds allowed to a Python agent's ``act`` (None: no limit). In the

        Notes
        -----
        main thread of a process with SIGALRM (Unix) the call is interrupted at the
        limit; elsewhere the limit is checked when it returns.
        Returns the :class:`~qwirkle_core.Action`; raises :class:`~qwirkle_core.AgentFailure`.
        """
        start = time.perf_counter()
        if self.player.spec is not None:
            action = game.play_agent(self.player.spec)
        else:
            action = self._play_python(game, time_limit)
        self.seconds += time.perf_counter() - start
        self.moves += 1
        return action

    def _fail(self, game: Game, kind: str, detail: str) -> AgentFailure:
        return AgentFailure(self.player.label, self.index, game.seed, game.turn, kind, detail)

    def _play_python(self, game: Game, time_limit: float | None) -> Action:
        assert self.act is not None
        observation = game.observation(self.index)
        legal = legal_actions(game)
        try:
            move, elapsed = _call(self.act, (observation, legal, self.rng), time_limit)
        except _Timeout:
            raise self._fail(game, "timeout", f"took more than the limit of {time_limit:g} s to move") from None
        except Exception as e:
            raise self._fail(game, "raised", f"raised {type(e).__name__}: {e}") from e
        if time_limit is not None and elapsed > time_limit:
            raise self._fail(game, "timeout", f"took {elapsed:.3g} s to move, over the limit of {time_limit:g} s")
        if not isinstance(move, Move):
            raise self._fail(
                game,
                "malformed",
                f"returned {move!r:.60} ({type(move).__name__}), not a qwirkle_core.Move from legal_moves",
            )
        try:
            game.play(move)
        except IllegalMoveError as e:
            raise self._fail(game, "illegal", f"returned the illegal move {move} ({e})") from None
        return game.history[-1]


def _call(fn: Callable[..., Any], args: tuple[Any, ...], limit: float | None) -> tuple[Any, float]:
    """``(fn(*args), seconds)``; with a ``limit`` in a main thread that can use SIGALRM,
    ``_Timeout`` is raised inside ``fn`` when the limit passes."""
    alarm = limit is not None and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not alarm or limit is None:
        start = time.perf_counter()
        result = fn(*args)
        return result, time.perf_counter() - start

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise _Timeout

    old = signal.signal(signal.SIGALRM, on_alarm)
    start = time.perf_counter()
    try:
        signal.setitimer(signal.ITIMER_REAL, max(limit, 1e-6))
        try:
            result = fn(*args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, old)
    return result, time.perf_counter() - start


def legal_actions(game: Game) -> list[Move]:
    """Every legal action of the current player of ``game``, as handed to a Python agent:
    the placements (with ``score``, in :meth:`Game.legal_moves` order), then each
    distinct exchange (fewest tiles first, then by tiles), then the pass when it is
    legal. Empty when the game is over."""
    if game.is_over:
        return []
    moves = game.legal_moves()
    if game.bag_size and not game.opening_pending:
        hand = game.hand()
        for k in range(1, min(len(hand), game.bag_size) + 1):
            moves.extend(Move.exchange(tiles) for tiles in sorted(set(itertools.combinations(hand, k))))
    elif not moves:
        moves.append(Move.pass_turn())
    return moves


def check_rules(players: Sequence[Player], rules: Rules) -> None:
    """Refuse Python agents under Qwirkle Cubes rules (ValueError): a Python agent acts
    on the tile game's actions (placements, exchanges, the pass), not on re-rolls, so
    Cubes games take the built-in agents only (docs/limits.md); and the built-in agents
    that play the tile game only (AgentError, :func:`~qwirkle_core.game.agents.check_cubes_agents`)."""
    if rules.cubes:
        check_cubes_agents(p.spec.row() for p in players if p.spec is not None)
        python = [p.label for p in players if p.spec is None]
        if python:
            raise ValueError(f"Qwirkle Cubes is played by the built-in agents only, not the Python agent {python[0]!r}")


def resolve_agents(agents: Iterable[Any] | str) -> tuple[Player, ...]:
    """Agents (a sequence, one per seat, or one comma-separated str) as a tuple of
    :class:`Player`. Raises like :meth:`Player.of`; AgentError for no agents."""
    if isinstance(agents, str):
        items: list[Any] = agents.split(",")
    elif isinstance(agents, (AgentSpec, np.ndarray)) or not isinstance(agents, Iterable):
        raise TypeError(f"agents must be a list of agents (one per seat) or a comma-separated str, not {agents!r:.60}")
    else:
        items = list(agents)
    if not items:
        raise AgentError("no agents given")
    return tuple(Player.of(a) for a in items)


def check_time_limit(time_limit: Any) -> float | None:
    """``time_limit`` as float seconds (or None); TypeError for a non-number, ValueError
    unless positive and finite."""
    if time_limit is None:
        return None
    value = check_finite(time_limit, "time_limit")
    if value <= 0:
        raise ValueError(f"time_limit must be a positive number of seconds or None, not {time_limit!r}")
    return value


def _play(players: Sequence[Player], rules: Rules, seed: int, time_limit: float | None) -> tuple[Game, list[Seat]]:
    """One game from ``seed``: ``(game, seats)``; raises AgentFailure."""
    game = Game(seed=seed, rules=rules)
    seats = [p.seat(game.seed, i) for i, p in enumerate(players)]
    while not game.is_over and game.turn < MAX_TURNS:
        seats[game.current_player].play(game, time_limit)
    return game, seats


def run_game(
    agents: Iterable[Any] | str, seed: int = 0, rules: Rules | None = None, time_limit: float | None = None
) -> tuple[Game, list[str]]:
    """Play one game from ``seed`` with ``agents`` (one per seat, built-in or Python,
    mixed freely); returns ``(game, labels)``: the finished :class:`Game` (its history
    holds every action) and the agents' labels. Built-in agents play exactly as in a
    batch: a game of built-in agents only is the batch's game with that seed. Stops
    at the batch's turn limit (never reached in practice).

    Parameters
    ----------
    time_limit
        seconds per move allowed to each Python agent (None: no limit).

    Notes
    -----
    Raises :class:`~qwirkle_core.AgentFailure` when a Python agent fails; AgentError,
    TypeError or ValueError for bad arguments, before the game starts.
    """
    players = resolve_agents(agents)
    rules = resolve_rules(len(players), rules)
    check_rules(players, rules)
    game, _ = _play(players, rules, check_seed(seed), check_time_limit(time_limit))
    return game, [p.label for p in players]


@dataclass
class GameResults:
    """The games of :func:`play_games`, one row per game (failed games included).

    agents     the agents' labels, one per seat
    seeds      uint64[games]            each game's seed (as in a batch: game i of seed s)
    ok         bool[games]              False when an agent failed (its row is zeros)
    scores     int32[games, players]    final scores
    winner     int8[games]              winning seat, -1 for a tie (or a failed game)
    turns      int32[games]             actions taken
    truncated  bool[games]              stopped at the turn limit
    seconds    float64[games, players]  wall time of each seat's turns
    moves      int32[games, players]    turns each seat played
    failures   one :class:`~qwirkle_core.AgentFailure` per failed game, in game order
    elapsed    wall seconds of the whole call
    """

    agents: tuple[str, ...]
    seeds: np.ndarray
    ok: np.ndarray
    scores: np.ndarray
    winner: np.ndarray
    turns: np.ndarray
    truncated: np.ndarray
    seconds: np.ndarray
    moves: np.ndarray
    failures: list[AgentFailure] = field(default_factory=list)
    elapsed: float = 0.0

    _ROWS = ("seeds", "ok", "scores", "winner", "turns", "truncated", "seconds", "moves")

    @property
    def games(self) -> int:
        """The number of games (failed ones included)."""
        return len(self.seeds)

    @property
    def games_per_second(self) -> float:
        """Games per wall second of the call (nan when it took no measurable time)."""
        return self.games / self.elapsed if self.elapsed > 0 else math.nan

    def completed(self) -> GameResults:
        """The rows of the games that finished without a failure (a new GameResults)."""
        rows = {name: getattr(self, name)[self.ok] for name in self._ROWS}
        return GameResults(self.agents, **rows, elapsed=self.elapsed)

    @classmethod
    def concat(cls, parts: Sequence[GameResults], elapsed: float = 0.0) -> GameResults:
        """The rows of ``parts`` (of the same agents) one after the other."""
        rows = {name: np.concatenate([getattr(p, name) for p in parts]) for name in cls._ROWS}
        return cls(parts[0].agents, **rows, failures=[f for p in parts for f in p.failures], elapsed=elapsed)


def _play_chunk(players: tuple[Player, ...], rules: Rules, seeds: np.ndarray, time_limit: float | None) -> GameResults:
    """Play the games of ``seeds`` (in this process, or in a worker)."""
    n, p = len(seeds), len(players)
    out = GameResults(
        agents=tuple(x.label for x in players),
        seeds=seeds,
        ok=np.ones(n, bool),
        scores=np.zeros((n, p), np.int32),
        winner=np.full(n, -1, np.int8),
        turns=np.zeros(n, np.int32),
        truncated=np.zeros(n, bool),
        seconds=np.zeros((n, p), np.float64),
        moves=np.zeros((n, p), np.int32),
    )
    for i, seed in enumerate(seeds):
        try:
            game, seats = _play(players, rules, int(seed), time_limit)
        except AgentFailure as e:
            out.ok[i] = False
            out.failures.append(e)
            continue
        out.scores[i] = game.scores
        out.winner[i] = -1 if game.winner is None else game.winner
        out.turns[i] = game.turn
        out.truncated[i] = not game.is_over
        out.seconds[i] = [s.seconds for s in seats]
        out.moves[i] = [s.moves for s in seats]
    return out


def _play_chunk_args(args: tuple[tuple[Player, ...], Rules, np.ndarray, float | None]) -> GameResults:
    return _play_chunk(*args)


class WorkerPool:
    """Worker processes for :func:`play_games`, to reuse over several calls (a context
    manager): ``with WorkerPool(4) as pool: play_games(..., pool=pool)``.

    Attributes
    ----------
    processes
        the number of workers (None: one per core). The workers start from a

    Notes
    -----
    fork server that has imported qwirkle-core once (from a fresh interpreter where
    there is none, as on Windows) and ignore Ctrl-C: the calling process gets the
    KeyboardInterrupt, and leaving the ``with`` block stops the workers.
    """

    def __init__(self, processes: int | None = None) -> None:
        self.processes = check_processes(processes)
        path = unguarded_script()
        if path is not None:
            raise ValueError(f"{guard_message(path)}, or play with processes=1")
        self._pool = _context().Pool(self.processes, initializer=_ignore_interrupts)

    def _map(self, jobs: list[tuple[tuple[Player, ...], Rules, np.ndarray, float | None]]) -> list[GameResults]:
        """The results of :func:`_play_chunk` for each job, in order."""
        return self._pool.map(_play_chunk_args, jobs, chunksize=1)

    def close(self) -> None:
        """Stop the workers (also those still playing)."""
        self._pool.terminate()
        self._pool.join()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def check_processes(processes: Any) -> int:
    """A number of worker processes: an int 1 .. 1,024, or None for one per core."""
    return available_threads() if processes is None else check_int(processes, "processes", 1, 1024)


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _is_main_guard(node: ast.stmt) -> bool:
    """Whether ``node`` is ``if __name__ == "__main__":`` (either way round)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [x for x in sides if isinstance(x, ast.Name) and x.id == "__name__"]
    texts = [x for x in sides if isinstance(x, ast.Constant) and x.value == "__main__"]
    return len(names) == 1 and len(texts) == 1


def unguarded_script() -> str | None:
    """The path of the ``__main__`` script when this call comes from its top-level code
    outside an ``if __name__ == "__main__":`` block, else None.

    Worker processes (multiprocessing's spawn and forkserver, Dask's local workers)
    import the main script again before they start; its unguarded top-level code would
    then run in each worker and start workers of its own (a hang, or "An attempt has been
    made to start a new process before the current process has finished its
    bootstrapping phase"). The check reads the script's syntax tree: the top-level
    statement that is running now (the main module's frame on the stack) must be such
    an ``if`` block. An interactive session or a notebook (no script file) is never
    re-run and gives None."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not path or getattr(main, "__name__", "") != "__main__":
        return None
    frame: FrameType | None = inspect.currentframe()
    while frame is not None and not (frame.f_globals is vars(main) and frame.f_code.co_name == "<module>"):
        frame = frame.f_back
    if frame is None:
        return None
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    line = frame.f_lineno
    for node in tree.body:
        if node.lineno <= line <= (node.end_lineno or node.lineno):
            guarded = _is_main_guard(node) and any(
                b.lineno <= line <= (b.end_lineno or b.lineno)
                for b in node.body  # type: ignore[attr-defined]
            )
            return None if guarded else str(path)
    return None


def guard_message(path: str) -> str:
    """The words for a call from the unguarded top level of the script ``path``."""
    return (
        f"{path} starts qwirkle-core's worker processes from its top-level code; each worker "
        "would run the script again. Put the code that plays under "
        "'if __name__ == \"__main__\":' (docs/env.md)"
    )


def in_process_unless_guarded(processes: int, call: str) -> int:
    """``processes``, or 1 with a RuntimeWarning naming the fix when the call ``call``
    comes from the unguarded top level of a script (:func:`unguarded_script`)."""
    if processes > 1:
        path = unguarded_script()
        if path is not None:
            warnings.warn(f"{guard_message(path)}; {call} plays in this process instead", RuntimeWarning, stacklevel=3)
            return 1
    return processes


def _context() -> multiprocessing.context.BaseContext:
    """Worker processes start from a fork server that has imported qwirkle-core once
    (start-up in milliseconds, and no fork of a process running numba threads); where
    there is none (Windows), from a fresh interpreter."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def play_games(
    agents: Iterable[Any] | str,
    games: int,
    seed: int = 0,
    rules: Rules | None = None,
    time_limit: float | None = None,
    processes: int | None = 1,
    *,
    start: int = 0,
    pool: WorkerPool | None = None,
) -> GameResults:
    """Play games ``start .. start + games - 1`` of the batch ``seed`` with ``agents``
    (one per seat, built-in or Python) and keep going when an agent fails: the failure
    is recorded and the next game starts.

    Game ``i`` is played from the same seed as game ``i`` of ``simulate(..., seed=seed)``,
    so a batch of built-in agents gives the same games.

    Parameters
    ----------
    processes
        worker processes (1: in this process; None: one per core), started for
        this call; or give ``pool``, a :class:`WorkerPool` to reuse. Python
        agents are sent to the workers by pickling: give them as
        ``package.module:Name`` or define them at module level.
    time_limit
        seconds per move allowed to each Python agent (None: no limit).

    Notes
    -----
    Returns :class:`GameResults`. Raises AgentError/TypeError/ValueError for bad
    arguments (an agent that cannot be sent to the workers included).
    """
    players = resolve_agents(agents)
    rules = resolve_rules(len(players), rules)
    check_rules(players, rules)
    limit = check_time_limit(time_limit)
    games = check_int(games, "games", 1, MAX_GAMES)
    start = check_int(start, "start", 0, MAX_GAMES - games)
    seeds = game_seeds(check_seed(seed), start, games)
    workers = pool.processes if pool is not None else check_processes(processes)
    if pool is None and games > 1:
        workers = in_process_unless_guarded(workers, "play_games")
    clock = time.perf_counter()
    if workers == 1 or games == 1:
        result = _play_chunk(players, rules, seeds, limit)
    else:
        _check_picklable(players)
        jobs = [(players, rules, chunk, limit) for chunk in np.array_split(seeds, min(games, 4 * workers))]
        if pool is not None:
            parts = pool._map(jobs)
        else:
            with WorkerPool(min(workers, games)) as own:
                parts = own._map(jobs)
        result = GameResults.concat(parts)
    result.elapsed = time.perf_counter() - clock
    return result


def _check_picklable(players: Sequence[Player]) -> None:
    """ValueError unless every agent can travel to a worker process: it pickles, and
    is not defined in an interactive ``__main__`` (which a worker cannot import)."""
    for p in players:
        problem = None
        try:
            pickle.dumps(p)
        except Exception as e:
            problem = f"{type(e).__name__}: {e}"
        if p.python is not None:
            module = getattr(p.python, "__module__", None) or type(p.python).__module__
            if module == "__main__" and not hasattr(sys.modules["__main__"], "__file__"):
                problem = "it is defined in an interactive session, which a worker cannot import"
        if problem:
            raise ValueError(
                f"agent {p.label!r} cannot be sent to worker processes ({problem}); give it as "
                "'package.module:Name', define it at module level of a module or script, or use one process"
            )
