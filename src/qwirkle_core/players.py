"""Python agents: the protocol, ``package.module:Name`` specs, and games in which any
seat may be a built-in agent or a Python agent (see docs/env.md).

A Python agent is any object with a method ``act(observation, legal_moves, rng)``, or a
plain function of the same three arguments, returning one of ``legal_moves``:

observation:  the :class:`~qwirkle_core.Observation` of its seat (never more).
legal_moves:  every legal action now, a new list of :class:`~qwirkle_core.Move`:
              the placements first, in :meth:`Game.legal_moves` order, each with its
              ``score``; then every distinct exchange (smallest first; ``score`` None);
              then the pass when it is the only legal action.
rng:          a ``numpy.random.Generator`` of its own for this game, seeded from the
              game's seed and the seat, so a game replays exactly from its seed.

A class is instantiated (without arguments) once per game and seat. Built-in agents are
names such as ``"greedy"`` or ``"mc:playouts=32"`` and play through
:meth:`Game.play_agent`, exactly as inside a batch.

An agent that raises, returns something that is not a legal action, or runs past the
optional per-move time limit raises :class:`AgentFailure`, which names the agent, its
seat, the game's seed and the turn.
"""

import concurrent.futures
import importlib
import inspect
import itertools
import math
import multiprocessing
import os
import pickle
import re
import signal
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ._kernels.agents import AGENTS as _BUILTIN
from ._kernels.batch import seeds_for
from ._kernels.state import MAX_TURNS
from .game import Game, Move
from .rules import IllegalMoveError, resolve_rules

__all__ = [
    "AgentFailure",
    "check_time_limit",
    "GameResults",
    "Player",
    "Seat",
    "is_builtin",
    "legal_actions",
    "load_agent",
    "play_games",
    "resolve_agents",
    "run_game",
]

_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class AgentFailure(ValueError):
    """A Python agent failed during a game.

    agent:  the agent's label; seat: its seat; seed: the game's seed; turn: the turn
    (``Game.turn``) it was asked to play; kind: ``"raised"``, ``"malformed"`` (it
    returned something that is not a Move), ``"illegal"`` or ``"timeout"``;
    detail: what happened, in words.
    """

    def __init__(self, agent, seat, seed, turn, kind, detail):
        self.agent, self.seat, self.seed, self.turn, self.kind, self.detail = agent, seat, seed, turn, kind, detail
        super().__init__(f"agent {agent!r} (seat {seat}) {detail} (game seed {seed}, turn {turn})")

    def __reduce__(self):
        return (type(self), (self.agent, self.seat, self.seed, self.turn, self.kind, self.detail))


class _Timeout(BaseException):
    """Raised inside an agent by the alarm; a BaseException so ``except Exception`` in
    the agent's own code does not swallow it."""


def is_builtin(agent):
    """True when ``agent`` names a built-in agent (``"greedy"``, ``"mc:playouts=32"``,
    ``("mc", {"playouts": 32})``), False for anything else (a Python agent or spec)."""
    if isinstance(agent, tuple) and len(agent) == 2 and isinstance(agent[1], dict):
        return True
    if not isinstance(agent, str):
        return False
    text = agent.strip()
    return not _SPEC.match(text) or text.partition(":")[0] in _BUILTIN


def load_agent(spec):
    """The object named by ``spec``, ``"package.module:Name"`` (``Name`` may be a dotted
    attribute path). Raises ValueError naming the problem when it cannot be imported or
    found (an exception raised while importing the module is reported, not re-raised)."""
    if not isinstance(spec, str) or not _SPEC.match(spec.strip()):
        raise ValueError(f"a Python agent is written package.module:Name, not {spec!r}")
    module_name, _, attr = spec.strip().partition(":")
    try:
        obj = importlib.import_module(module_name)
    except Exception as e:  # the user's module may fail in any way while importing
        raise ValueError(f"cannot load agent {spec!r}: {type(e).__name__}: {e}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"cannot load agent {spec!r}: {module_name} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True, eq=False)
class Player:
    """One seat's agent, resolved: a built-in spec or a Python agent.

    label:   the name shown in results and records (the spec text for built-in agents
             and ``package.module:Name`` specs, else the object's ``name`` attribute,
             class name or function name).
    builtin: the built-in agent's spec row (float64 array) or None.
    python:  the Python agent (object, class or function) or None.
    """

    label: str
    builtin: object = None
    python: object = None

    @classmethod
    def of(cls, agent):
        """The Player of ``agent``: a built-in name or spec, ``"package.module:Name"``,
        an object with ``act``, a class whose instances have ``act``, or a function.
        Raises ValueError (unknown or unloadable agent) or TypeError (not an agent)."""
        if isinstance(agent, Player):
            return agent
        if is_builtin(agent):
            # In 0.2.0 this is qc.parse_agent (agents.py); simulate holds it until then.
            from .simulate import parse_agents

            names, specs = parse_agents([agent])
            return cls(names[0], builtin=specs[0])
        label = None
        if isinstance(agent, str):
            label = agent.strip()
            agent = load_agent(label)
        if inspect.isclass(agent):
            if not callable(getattr(agent, "act", None)):
                raise TypeError(f"agent class {agent.__qualname__} has no act(observation, legal_moves, rng) method")
        elif not callable(getattr(agent, "act", None)) and not callable(agent):
            raise TypeError(
                "an agent is a built-in name such as 'greedy', 'package.module:Name', an object with "
                f"act(observation, legal_moves, rng) or a function of those arguments, not {agent!r}"
            )
        if label is None:
            name = getattr(agent, "name", None)
            label = name if isinstance(name, str) and name else getattr(agent, "__qualname__", type(agent).__qualname__)
        return cls(label, python=agent)

    def seat(self, seed, seat):
        """This agent ready to play ``seat`` of the game with ``seed``: a :class:`Seat`
        (a class is instantiated here; an exception from its constructor is an
        :class:`AgentFailure` at turn 0)."""
        act = None
        if self.python is not None:
            obj = self.python
            if inspect.isclass(obj):
                try:
                    obj = obj()
                except Exception as e:
                    raise AgentFailure(self.label, seat, seed, 0, "raised", f"could not be created: {type(e).__name__}: {e}") from e
            act = obj.act if callable(getattr(obj, "act", None)) else obj
        return Seat(self, seat, act, np.random.default_rng([int(seed), int(seat)]))


@dataclass
class Seat:
    """A :class:`Player` seated in one game: plays that seat's turns with :meth:`play`.

    seconds: wall time of the turns played so far (for a Python agent: its observation,
    legal actions, ``act`` and the move; for a built-in agent: ``play_agent``);
    moves: turns played so far.
    """

    player: Player
    index: int
    act: object
    rng: np.random.Generator
    seconds: float = 0.0
    moves: int = 0

    def play(self, game, time_limit=None):
        """Play the current turn of ``game`` (whose current player must be this seat).

        time_limit: seconds allowed to a Python agent's ``act`` (None: no limit). In the
        main thread of a process with SIGALRM (Unix) the call is interrupted at the
        limit; elsewhere the limit is checked when it returns.
        Returns the :class:`~qwirkle_core.Action`; raises :class:`AgentFailure`.
        """
        start = time.perf_counter()
        if self.player.builtin is not None:
            action = game.play_agent(self.player.builtin)
        else:
            action = self._play_python(game, time_limit)
        self.seconds += time.perf_counter() - start
        self.moves += 1
        return action

    def _fail(self, game, kind, detail):
        return AgentFailure(self.player.label, self.index, game.seed, game.turn, kind, detail)

    def _play_python(self, game, time_limit):
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
            raise self._fail(game, "malformed", f"returned {move!r} ({type(move).__name__}), not a qwirkle_core.Move from legal_moves")
        try:
            game.play(move)
        except IllegalMoveError as e:
            raise self._fail(game, "illegal", f"returned the illegal move {move} ({e})") from None
        return game.history[-1]


def _call(fn, args, limit):
    """``(fn(*args), seconds)``; with a ``limit`` in a main thread that can use SIGALRM,
    ``_Timeout`` is raised inside ``fn`` when the limit passes."""
    alarm = limit is not None and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not alarm:
        start = time.perf_counter()
        result = fn(*args)
        return result, time.perf_counter() - start

    def on_alarm(signum, frame):
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


def legal_actions(game):
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


def resolve_agents(agents):
    """Agents (a sequence, or one comma-separated str) -> a tuple of :class:`Player`."""
    if isinstance(agents, str):
        agents = [a for a in agents.split(",") if a.strip()]
    players = tuple(Player.of(a) for a in agents)
    if not players:
        raise ValueError("no agents given")
    return players


def _play(players, rules, seed, time_limit):
    """One game from ``seed``: ``(game, seats)``; raises AgentFailure."""
    game = Game(seed=seed, rules=rules)
    seats = [p.seat(game.seed, i) for i, p in enumerate(players)]
    while not game.is_over and game.turn < MAX_TURNS:
        seats[game.current_player].play(game, time_limit)
    return game, seats


def check_time_limit(time_limit):
    """``time_limit`` as float seconds (or None); ValueError unless positive and finite."""
    if time_limit is None:
        return None
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not math.isfinite(time_limit) or time_limit <= 0:
        raise ValueError(f"time_limit must be a positive number of seconds or None, not {time_limit!r}")
    return float(time_limit)


def run_game(agents, seed=0, rules=None, time_limit=None):
    """Play one game from ``seed`` with ``agents`` (one per seat, built-in or Python,
    mixed freely); returns ``(game, labels)``: the finished :class:`Game` and the
    agents' labels. Built-in agents play exactly as in a batch; an all-built-in game
    is the batch's game with that seed. Stops at the batch's turn limit (never seen).

    time_limit: seconds per move allowed to each Python agent (None: no limit).
    Raises :class:`AgentFailure` when a Python agent fails; ValueError/TypeError for
    bad arguments.
    """
    players = resolve_agents(agents)
    rules = resolve_rules(len(players), rules)
    game, _ = _play(players, rules, seed, check_time_limit(time_limit))
    return game, [p.label for p in players]


@dataclass
class GameResults:
    """The games of :func:`play_games`, one row per game (failed games included).

    seeds      uint64[games]            each game's seed (as in a batch: game i of seed s)
    ok         bool[games]              False when an agent failed (its row is zeros)
    scores     int32[games, players]    final scores
    winner     int8[games]              winning seat, -1 for a tie (or a failed game)
    turns      int32[games]             actions taken
    truncated  bool[games]              stopped at the turn limit
    seconds    float64[games, players]  wall time of each seat's turns
    moves      int32[games, players]    turns each seat played
    failures   list of AgentFailure     one per failed game, in game order
    elapsed    wall seconds of the whole call
    """

    agents: tuple
    seeds: np.ndarray
    ok: np.ndarray
    scores: np.ndarray
    winner: np.ndarray
    turns: np.ndarray
    truncated: np.ndarray
    seconds: np.ndarray
    moves: np.ndarray
    failures: list = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def games(self):
        return len(self.seeds)

    @property
    def games_per_second(self):
        return self.games / self.elapsed if self.elapsed > 0 else math.nan

    def completed(self):
        """The rows of the games that finished without a failure (a new GameResults)."""
        keep = self.ok
        return GameResults(
            self.agents, self.seeds[keep], self.ok[keep], self.scores[keep], self.winner[keep], self.turns[keep],
            self.truncated[keep], self.seconds[keep], self.moves[keep], [], self.elapsed,
        )


def _play_chunk(players, rules, seeds, time_limit):
    """Play the games of ``seeds``; the rows of :class:`GameResults` as a tuple."""
    n, p = len(seeds), len(players)
    ok = np.ones(n, bool)
    scores = np.zeros((n, p), np.int32)
    winner = np.full(n, -1, np.int8)
    turns = np.zeros(n, np.int32)
    truncated = np.zeros(n, bool)
    seconds = np.zeros((n, p), np.float64)
    moves = np.zeros((n, p), np.int32)
    failures = []
    for i, seed in enumerate(seeds):
        try:
            game, seats = _play(players, rules, int(seed), time_limit)
        except AgentFailure as e:
            ok[i] = False
            failures.append(e)
            continue
        scores[i] = game.scores
        winner[i] = game.winner if game.is_over else -1
        turns[i] = game.turn
        truncated[i] = not game.is_over
        seconds[i] = [s.seconds for s in seats]
        moves[i] = [s.moves for s in seats]
    return ok, scores, winner, turns, truncated, seconds, moves, failures


def play_games(agents, games, seed=0, rules=None, time_limit=None, processes=1):
    """Play ``games`` games with ``agents`` (one per seat, built-in or Python) and keep
    going when an agent fails: the failure is recorded and the next game starts.

    Game ``i`` is played from the same seed as game ``i`` of ``simulate(games, ...,
    seed=seed)``, so a batch of built-in agents gives the same games.

    processes: worker processes (1: in this process; None: one per core). Python
               agents are sent to the workers by pickling: give them as
               ``package.module:Name`` or define them at module level.
    time_limit: seconds per move allowed to each Python agent (None: no limit).
    Returns :class:`GameResults`. Raises ValueError/TypeError for bad arguments.
    """
    players = resolve_agents(agents)
    rules = resolve_rules(len(players), rules)
    time_limit = check_time_limit(time_limit)
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be a positive int, not {games!r}")
    seeds = seeds_for(np.uint64(_check_seed(seed)), 0, games)
    processes = _check_processes(processes, games)
    start = time.perf_counter()
    if processes == 1:
        parts = [_play_chunk(players, rules, seeds, time_limit)]
    else:
        _check_picklable(players)
        chunks = np.array_split(seeds, min(games, 4 * processes))
        with concurrent.futures.ProcessPoolExecutor(processes, mp_context=_context()) as pool:
            futures = [pool.submit(_play_chunk, players, rules, c, time_limit) for c in chunks]
            parts = [f.result() for f in futures]
    elapsed = time.perf_counter() - start
    columns = [np.concatenate([part[k] for part in parts]) for k in range(7)]
    failures = [f for part in parts for f in part[7]]
    return GameResults(tuple(p.label for p in players), seeds, *columns, failures=failures, elapsed=elapsed)


def _context():
    """Worker processes start from a fork server that has imported qwirkle-core once
    (start-up in milliseconds, and no fork of a process running numba threads); where
    there is none (Windows), from a fresh interpreter."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def _check_seed(seed):
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise TypeError(f"seed must be an int, not {seed!r}")
    if not 0 <= seed.__index__() < 2**64:
        raise ValueError(f"seed must be 0 .. 2**64-1, not {seed}")
    return seed.__index__()


def _check_processes(processes, games):
    if processes is None:
        processes = os.cpu_count() or 1
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ValueError(f"processes must be a positive int or None, not {processes!r}")
    return min(processes, games)


def _check_picklable(players):
    for p in players:
        try:
            pickle.dumps(p)
        except Exception as e:
            raise ValueError(
                f"agent {p.label!r} cannot be sent to worker processes ({type(e).__name__}: {e}); give it as "
                "'package.module:Name', define it at module level, or use processes=1"
            ) from None
