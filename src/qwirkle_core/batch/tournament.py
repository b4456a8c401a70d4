"""Round-robin tournaments between agents (two-player games, every deal from both seats)."""

from __future__ import annotations

import contextlib
import itertools
import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._checks import check_finite, check_int, check_seed, check_threads
from .._compiling import KERNELS, compiling
from .._threads import available_threads
from ..errors import AgentFailure
from ..game.agents import AgentSpec
from ..game.rules import Rules, resolve_rules
from .players import (
    GameResults,
    Player,
    WorkerPool,
    check_rules,
    check_time_limit,
    in_process_unless_guarded,
    play_games,
    resolve_agents,
)
from .ratings import ANCHOR, ANCHOR_RATING, Rating, bradley_terry, elo_scale
from .simulate import simulate
from .sprt import SprtResult, pair_scores
from .sprt import sprt as _sprt
from .stats import wilson_interval
from .warmup import estimate_kernels, pairs_kernels, turn_kernel_cached

__all__ = ["Match", "TimeLeft", "TournamentResult", "play_deals", "tournament"]

MAX_GAMES = 10**9
MAX_TIMING_SECONDS = 3600.0
_DEAL_SECONDS = 1.0  # target length of one round of deals: Ctrl-C stops within about this


@dataclass
class Match:
    """All finished games of one pair: ``first`` against ``second``, every deal played
    once from each seat (the same game seeds), so the deal's luck cancels.

    Attributes
    ----------
    margin
        ``first``'s score minus ``second``'s, per game (int32[games]); the games

    Notes
    -----
    with ``first`` in seat 0 come first, then those with ``first`` in seat 1.
    """

    first: str
    second: str
    wins: int
    losses: int
    ties: int
    margin: np.ndarray
    scores_first: np.ndarray
    scores_second: np.ndarray

    @property
    def games(self) -> int:
        """Finished games of the pair: twice the finished deals, less the games a
        Python agent broke."""
        return self.wins + self.losses + self.ties

    @property
    def win_rate(self) -> float:
        """``first``'s share of the games, a tie counting one half (nan for none)."""
        return (self.wins + 0.5 * self.ties) / self.games if self.games else float("nan")

    def interval(self) -> tuple[float, float]:
        """95% Wilson interval of ``first``'s win rate (ties as half wins)."""
        return wilson_interval(self.wins + 0.5 * self.ties, self.games)


@dataclass
class TournamentResult:
    """The matches of a round robin and each agent's time per move.

    Attributes
    ----------
    seconds_per_move
        per agent, wall time per action (exchanges and passes included):

    Notes
    -----
    for a built-in agent from one-thread self-play, for a Python agent the mean of its
    turns in the tournament's games; missing for agents not timed before an
    interruption (or a Python agent that finished no game).
    interrupted: True when Ctrl-C stopped it; ``matches`` then hold only finished deals.
    failures: the :class:`~qwirkle_core.AgentFailure` of every game a Python agent
    broke (per pair, in the order of ``matches``: the games with ``first`` in seat 0,
    then the others, each in deal order); those games are left out of ``matches``.
    """

    agents: tuple[str, ...]
    matches: list[Match]
    seconds_per_move: dict[str, float]
    seed: int
    games: int
    interrupted: bool = False
    elapsed: float = 0.0
    failures: list[AgentFailure] = field(default_factory=list)
    sprt: SprtResult | None = None

    def scores(self, agent: str) -> np.ndarray:
        """Every final score an agent made in the round robin.

        Parameters
        ----------
        agent
            an agent's label.

        Returns
        -------
        numpy.ndarray
            int32 [games the agent played].
        """
        parts = [m.scores_first for m in self.matches if m.first == agent] + [
            m.scores_second for m in self.matches if m.second == agent
        ]
        return np.concatenate(parts) if parts else np.zeros(0, np.int32)

    def ratings(self) -> list[Rating]:
        """Each agent's Bradley-Terry rating on the Elo scale with its 95% interval,
        ``greedy`` anchored at 1500 when it plays (else the first agent), in the order of
        :attr:`agents` (:mod:`qwirkle_core.batch.ratings`: the model, its prior of one
        tie per pairing, the intervals). An agent without a finished game gets nan."""
        index = {a: k for k, a in enumerate(self.agents)}
        anchor = index.get(ANCHOR, 0)
        results = [
            (index[m.first], index[m.second], m.wins + 0.5 * m.ties, m.losses + 0.5 * m.ties)
            for m in self.matches
            if m.games
        ]
        theta, se = bradley_terry(self.agents, results, anchor)
        scale = elo_scale()
        out = []
        for k, agent in enumerate(self.agents):
            points = sum(m.wins + 0.5 * m.ties for m in self.matches if m.first == agent) + sum(
                m.losses + 0.5 * m.ties for m in self.matches if m.second == agent
            )
            games = sum(m.games for m in self.matches if agent in (m.first, m.second))
            r = ANCHOR_RATING + scale * theta[k]
            half = 1.96 * scale * se[k]
            out.append(Rating(agent, r, r - half, r + half, games, points / games if games else float("nan")))
        return out

    def standings(self) -> list[Rating]:
        """:meth:`ratings`, strongest first (agents without a game last)."""
        return sorted(
            self.ratings(), key=lambda r: (math.isnan(r.rating), -r.rating if not math.isnan(r.rating) else 0)
        )

    def summary(self) -> dict[str, Any]:
        """A dict of the headline figures (what the command line prints): the pairings,
        the standings with ratings, the time per move."""
        return {
            "agents": list(self.agents),
            "games": self.games,
            "seed": self.seed,
            "pairings": [
                {
                    "first": m.first,
                    "second": m.second,
                    "games": m.games,
                    "wins": m.wins,
                    "losses": m.losses,
                    "ties": m.ties,
                    "win_rate": m.win_rate,
                    "interval": m.interval(),
                    "mean_margin": float(m.margin.mean()) if m.games else float("nan"),
                }
                for m in self.matches
            ],
            "standings": [
                {
                    "agent": r.agent,
                    "rating": r.rating,
                    "interval": (r.low, r.high),
                    "games": r.games,
                    "win_rate": r.win_rate,
                    "mean_score": float(self.scores(r.agent).mean()) if r.games else float("nan"),
                }
                for r in self.standings()
            ],
            "anchor": ANCHOR if ANCHOR in self.agents else self.agents[0],
            "seconds_per_move": dict(self.seconds_per_move),
            "failures": len(self.failures),
            "interrupted": self.interrupted,
            "seconds": self.elapsed,
        }


def tournament(
    agents: Iterable[Any] | str,
    games: int = 1000,
    seed: int = 0,
    threads: int | None = None,
    timing_games: int = 8,
    timing_seconds: float = 0.5,
    progress: Callable[[int, int], None] | None = None,
    *,
    client: Any = None,
    range_size: int | None = None,
    time_limit: float | None = None,
    rules: Rules | None = None,
    sprt: tuple[float, float] | None = None,
) -> TournamentResult:
    """Play every pair of ``agents`` (at least 2, each once) for ``games`` games.

    Parameters
    ----------
    agents
        built-in agents (anything :func:`~qwirkle_core.parse_agent` takes) and
        Python agents (:mod:`qwirkle_core.batch.players`: objects, functions or
        ``package.module:Name`` specs), mixed freely.
    games
        games per pairing: an even number >= 2, since each of the ``games // 2``
        deals is played once from each seat.
    seed
        deal ``i`` is game ``i`` of the batch ``seed`` (see :func:`simulate`).
    threads
        numba threads (default: all cores); on a cluster, per task (default 1).
        A pairing with a Python agent plays in ``threads`` worker processes
        (1: in this process; :class:`~qwirkle_core.batch.players.WorkerPool`).
    progress
        a callable ``f(done, total)`` counting finished games of all pairings. When it
        also has a method ``time_left(seconds, lower_bound)``, that is called before
        each ``f(done, total)`` of a local run with the time left estimated from the
        measured cost of the games played, per pairing (:class:`TimeLeft`): games of
        unequal cost are not counted as equal.
    timing_seconds
        0 to 3,600 (see below).
    client
        a ``dask.distributed.Client``: play the deals on its cluster, each pair's
        deals split into ranges of ``range_size`` deals (default: about 5
        seconds of work per task), both seats of a deal in the same task; the
        time per move is then measured on a worker. The matches are the same
        as a local tournament's. Built-in agents only.
    rules
        a two-player :class:`Rules` (default: the tile game's), e.g.
        ``Rules(variant="cubes")`` for a Qwirkle Cubes tournament.
    time_limit
        seconds per move allowed to each Python agent (None: no limit).
    sprt
        ``(elo0, elo1)``: stop as soon as the sequential probability ratio test
        (:func:`~qwirkle_core.batch.sprt.sprt`, on the deals' pair scores, error rates
        0.05) accepts H0 (the first agent is at most ``elo0`` Elo stronger) or H1 (at
        least ``elo1``), at the latest after ``games`` games; two agents, locally. The
        test's state is ``result.sprt``.

    Notes
    -----
    A game in which a Python agent fails (it raises, returns an illegal move or runs
    past ``time_limit``) is left out of the matches and its
    :class:`~qwirkle_core.AgentFailure` goes into ``result.failures``; the tournament
    goes on. Time per move of a built-in agent is measured separately on one thread:
    it plays games against itself, ``timing_games`` first and twice as many each time
    until a run lasts ``timing_seconds`` (at most 4,096 games); the wall time of the
    last run is divided by its number of turns. A Python agent's is the mean wall time
    of its turns in the tournament. Ctrl-C stops within about a second and returns the
    finished deals with ``interrupted=True``.

    Returns
    -------
    TournamentResult

    Raises
    ------
    AgentError
        a bad agent.
    TypeError, ValueError
        other bad arguments (TypeError for a Python agent with ``client``).
    """
    players = resolve_agents(agents)
    names = tuple(p.label for p in players)
    if len(set(names)) != len(names):
        raise ValueError("each agent may appear once in a tournament")
    if len(names) < 2:
        raise ValueError("a tournament needs at least 2 agents")
    games = check_int(games, "games", 2, MAX_GAMES)
    if games % 2:
        raise ValueError(f"games must be even (each deal is played from both seats), not {games}")
    seed = check_seed(seed)
    rules = resolve_rules(2, rules)
    check_rules(players, rules)
    check_int(timing_games, "timing_games", 1, 4096)
    if not 0 <= check_finite(timing_seconds, "timing_seconds") <= MAX_TIMING_SECONDS:
        raise ValueError(f"timing_seconds must be 0 to {MAX_TIMING_SECONDS:g}, not {timing_seconds!r}")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable f(done, total), not {progress!r}")
    limit = check_time_limit(time_limit)
    stop: Callable[[list[tuple[np.ndarray, np.ndarray]]], bool] | None = None
    state: list[SprtResult] = []
    if sprt is not None:
        if len(players) != 2 or client is not None:
            raise ValueError("the SPRT compares two agents in a local tournament (no client)")
        elo0, elo1 = (check_finite(e, "sprt") for e in sprt)
        _sprt(np.zeros(0), elo0, elo1)  # checks them

        def stop(halves: list[tuple[np.ndarray, np.ndarray]]) -> bool:
            ab = np.concatenate([h[0] for h in halves]) if halves else np.zeros((0, 2))
            ba = np.concatenate([h[1] for h in halves]) if halves else np.zeros((0, 2))
            state[:] = [_sprt(pair_scores(ab[:, 0] - ab[:, 1], ba[:, 1] - ba[:, 0]), elo0, elo1)]
            return state[0].decision is not None

    specs = [p.spec for p in players if p.spec is not None]
    clock = time.perf_counter()
    timing: dict[str, float] = {}
    failures: list[AgentFailure] = []
    if client is not None:
        if len(specs) < len(players):
            python = next(p.label for p in players if p.spec is None)
            raise TypeError(
                f"a tournament on a cluster plays built-in agents only, not the Python agent {python!r}; play it locally (threads= worker processes)"
            )
        matches, interrupted = _play_pairs_on(
            client, list(itertools.combinations(specs, 2)), games // 2, seed, threads, progress, range_size, rules
        )
        if not interrupted:
            timing, interrupted = client.submit(
                _time_agents, specs, seed, timing_games, timing_seconds, rules, pure=False
            ).result()
    else:
        if range_size is not None:
            raise ValueError("range_size applies to a tournament on a cluster only (pass client=)")
        run = _LocalRun(games // 2, seed, threads, progress, limit, rules, stop)
        with compiling(*compile_notice(names, specs, rules)):  # says so once if it compiles
            matches, interrupted = run.play(list(itertools.combinations(players, 2)))
            failures = run.failures
            if not interrupted:
                timing, interrupted = _time_agents(specs, seed, timing_games, timing_seconds, rules)
        timing.update(run.python_timing())
    return TournamentResult(
        agents=names,
        matches=matches,
        seconds_per_move={a: timing[a] for a in names if a in timing},
        seed=seed,
        games=games,
        interrupted=interrupted,
        elapsed=time.perf_counter() - clock,
        failures=failures,
        sprt=state[0] if state else None,
    )


def compile_notice(names: Sequence[str], specs: Sequence[AgentSpec], rules: Rules) -> tuple[str, float | None]:
    """The compile notice's words and estimate for a tournament of the agents ``names``
    (the built-in ones ``specs``): the batch kernels of every pairing of built-in
    agents, and the built-in agents' turn kernel when a Python agent meets one."""
    seconds = estimate_kernels(pairs_kernels(specs, rules)) if len(specs) > 1 else 0.0
    if 0 < len(specs) < len(names) and not turn_kernel_cached():
        seconds += KERNELS["agents.take_turn"][1]
    return f"the kernels of a {', '.join(names)} tournament", seconds or None


class TimeLeft:
    """The time left of a round robin from the measured cost of the games played, per
    pairing.

    :meth:`book` takes each round's wall time and deals. A pairing's cost per deal is
    measured on its rounds after the first (the first may include compiling its
    kernels; it counts while it is the only one). The pairings not begun are
    estimated from their agents' costs: a pairing's cost split between its two agents
    (half each when neither is known yet, else the known one's part subtracted). An
    agent not seen in any pairing yet has no cost: :meth:`seconds_left` then says the
    estimate is a lower bound.
    """

    def __init__(self, deals: int) -> None:
        self.deals = deals
        self._rounds: dict[tuple[str, str], list[tuple[float, int]]] = {}

    def book(self, pair: tuple[str, str], seconds: float, deals: int) -> None:
        """A round of ``deals`` deals (both seats) of ``pair`` took ``seconds``."""
        if deals > 0:
            self._rounds.setdefault(pair, []).append((seconds, deals))

    def pair_cost(self, pair: tuple[str, str]) -> float | None:
        """Measured seconds per deal of ``pair``, or None before its first round."""
        rounds = self._rounds.get(pair)
        if not rounds:
            return None
        used = rounds[1:] or rounds
        return sum(t for t, _ in used) / sum(n for _, n in used)

    def agent_costs(self) -> dict[str, float]:
        """Each agent's share of a deal's cost, from the pairings measured (in play order)."""
        cost: dict[str, float] = {}
        for a, b in self._rounds:
            c = self.pair_cost((a, b))
            assert c is not None
            if a in cost and b not in cost:
                cost[b] = max(c - cost[a], 0.0)
            elif b in cost and a not in cost:
                cost[a] = max(c - cost[b], 0.0)
            elif a not in cost and b not in cost:
                cost[a] = cost[b] = c / 2
        return cost

    def seconds_left(self, pairs: Sequence[tuple[str, str]], done: Sequence[int]) -> tuple[float, bool]:
        """Seconds left for ``pairs`` of which ``done[i]`` deals are finished, and
        whether that is a lower bound (an agent of a pairing not begun is not measured yet)."""
        agents = self.agent_costs()
        left, lower = 0.0, False
        for pair, finished in zip(pairs, done):
            rest = self.deals - finished
            if rest <= 0:
                continue
            cost = self.pair_cost(pair)
            if cost is None:
                known = [agents[x] for x in pair if x in agents]
                lower = lower or len(known) < 2
                cost = sum(known)
            left += rest * cost
        return left, lower


class _LocalRun:
    """The deals of every pair in this machine, in rounds of about a second each (both
    seats of a round's deals): numba batches for two built-in agents,
    :func:`~qwirkle_core.batch.players.play_games` (in worker processes when ``threads`` > 1)
    for a pair with a Python agent. Ctrl-C keeps the finished rounds."""

    def __init__(
        self,
        deals: int,
        seed: int,
        threads: int | None,
        progress: Callable[[int, int], None] | None,
        time_limit: float | None,
        rules: Rules,
        stop: Callable[[list[tuple[np.ndarray, np.ndarray]]], bool] | None = None,
    ) -> None:
        self.deals, self.seed, self.threads, self.progress, self.time_limit, self.rules = (
            deals,
            seed,
            threads,
            progress,
            time_limit,
            rules,
        )
        self.stop = stop  # called with a pair's finished deals after each round: True ends the pair
        self.processes = check_threads(threads, available_threads())  # for pairs with a Python agent
        self.failures: list[AgentFailure] = []
        # the current pair's broken games: those with its first agent in seat 0, in seat 1
        self.broken: tuple[list[AgentFailure], list[AgentFailure]] = ([], [])
        self.turns: dict[str, tuple[float, int]] = {}  # a Python agent's (seconds, turns)
        self.pool: WorkerPool | None = None

    def play(self, pairs: list[tuple[Player, Player]]) -> tuple[list[Match], bool]:
        """The matches of ``pairs`` (those finished or begun) and whether Ctrl-C stopped it."""
        total = 2 * self.deals * len(pairs)
        done_games = 0
        matches = []
        interrupted = False
        clock = TimeLeft(self.deals)
        labels = [(a.label, b.label) for a, b in pairs]
        deals_done = [0] * len(pairs)
        time_left = getattr(self.progress, "time_left", None)
        with contextlib.ExitStack() as stack:
            for index, (a, b) in enumerate(pairs):
                python = a.spec is None or b.spec is None
                if python and self.pool is None and in_process_unless_guarded(self.processes, "tournament") > 1:
                    self.pool = stack.enter_context(WorkerPool(self.processes))
                halves: list[tuple[np.ndarray, np.ndarray]] = []
                self.broken = ([], [])
                done, chunk = 0, 2 * self.processes if python else 64
                decided = False
                while done < self.deals and not interrupted and not decided:
                    n = min(chunk, self.deals - done)
                    t = time.perf_counter()
                    try:
                        finished, interrupted = (
                            self._python_round(a, b, done, n, halves)
                            if python
                            else self._builtin_round(a, b, done, n, halves)
                        )
                        done += finished
                        done_games += 2 * finished
                        clock.book(labels[index], time.perf_counter() - t, finished)
                        deals_done[index] = done
                        if callable(time_left):
                            time_left(*clock.seconds_left(labels, deals_done))
                        decided = self.stop is not None and self.stop(halves)
                        if self.progress is not None:
                            self.progress(done_games, total)
                    except (
                        KeyboardInterrupt
                    ):  # outside a kernel call (the progress display), or in a Python agent's round, which is lost
                        interrupted = True
                    # about _DEAL_SECONDS of games, but a deal per thread at least (fewer leave threads idle)
                    chunk = max(
                        self.processes, min(1 << 16, int(n * _DEAL_SECONDS / max(time.perf_counter() - t, 1e-6)))
                    )
                matches.append(_match(a.label, b.label, halves))
                self.failures += self.broken[0] + self.broken[1]
                if interrupted:
                    break
        return matches, interrupted

    def _builtin_round(
        self, a: Player, b: Player, start: int, n: int, halves: list[tuple[np.ndarray, np.ndarray]]
    ) -> tuple[int, bool]:
        """Deals ``start .. start + n - 1`` as two batches: the number of deals finished
        from both seats, and whether Ctrl-C stopped them."""
        assert a.spec is not None and b.spec is not None
        ab = simulate(n, (a.spec, b.spec), seed=self.seed, threads=self.threads, start=start, rules=self.rules)
        ba = (
            simulate(n, (b.spec, a.spec), seed=self.seed, threads=self.threads, start=start, rules=self.rules)
            if not ab.interrupted
            else ab
        )
        finished = min(ab.games, ba.games) if not ab.interrupted else 0
        if finished:
            halves.append((ab.scores[:finished], ba.scores[:finished]))
        return finished, ab.interrupted or ba.interrupted

    def _python_round(
        self, a: Player, b: Player, start: int, n: int, halves: list[tuple[np.ndarray, np.ndarray]]
    ) -> tuple[int, bool]:
        """Deals ``start .. start + n - 1`` from both seats with play_games (Ctrl-C
        raises and loses the round): ``(n, False)``. Broken games go to ``broken``."""
        rounds = [
            play_games(
                pair, n, self.seed, self.rules, time_limit=self.time_limit, processes=1, start=start, pool=self.pool
            )
            for pair in ((a, b), (b, a))
        ]
        for r, seated, broken in zip(rounds, ((a, b), (b, a)), self.broken):
            broken += r.failures
            self._book_turns(r, seated)
        ab, ba = (r.completed() for r in rounds)
        halves.append((ab.scores, ba.scores))
        return n, False

    def _book_turns(self, r: GameResults, seated: tuple[Player, Player]) -> None:
        for seat, p in enumerate(seated):
            if p.spec is None:
                seconds, turns = self.turns.get(p.label, (0.0, 0))
                self.turns[p.label] = (seconds + float(r.seconds[:, seat].sum()), turns + int(r.moves[:, seat].sum()))

    def python_timing(self) -> dict[str, float]:
        """Each Python agent's mean seconds per turn in the games played (those with turns)."""
        return {label: seconds / turns for label, (seconds, turns) in self.turns.items() if turns}


def play_deals(
    a: AgentSpec, b: AgentSpec, seed: int, first: int, end: int, threads: int, rules: Rules | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """One task of a tournament on a cluster: deals ``first .. end - 1`` of the batch
    ``seed``, ``a`` against ``b`` and from the other seats.

    Parameters
    ----------
    a, b
        the two agents (:class:`AgentSpec`).
    seed
        the tournament's seed.
    first, end
        the deals, ``first .. end - 1``.
    threads
        numba threads.
    rules
        the two-player :class:`Rules` (default: the tile game's).

    Returns
    -------
    tuple of numpy.ndarray
        the final scores of both orders, int32 [deals, 2] each, in seat order.
    """
    ab = simulate(end - first, (a, b), seed=seed, threads=threads, start=first, rules=rules)
    ba = simulate(end - first, (b, a), seed=seed, threads=threads, start=first, rules=rules)
    return ab.scores, ba.scores


def _play_pairs_on(
    client: Any,
    pairs: list[tuple[AgentSpec, AgentSpec]],
    deals: int,
    seed: int,
    threads: int | None,
    progress: Callable[[int, int], None] | None,
    range_size: int | None,
    rules: Rules,
) -> tuple[list[Match], bool]:
    """The deals of every pair on ``client``'s cluster, in ranges (see :func:`tournament`)."""
    from .distributed import auto_range_size, map_ranges, ranges, warm_up

    threads = 1 if threads is None else check_int(threads, "threads", 1)
    size = None if range_size is None else check_int(range_size, "range_size", 1, MAX_GAMES)
    agents = list(dict.fromkeys(a for pair in pairs for a in pair))
    workers = warm_up(client, [(a, a) for a in agents], rules)
    per_game = {a: statistics.median(w.seconds_per_game[i] for w in workers) for i, a in enumerate(agents)}
    threads_per_pair = sum(w.threads for w in workers) / len(pairs)
    if progress is not None:
        progress(0, 2 * deals * len(pairs))
    jobs = []
    for a, b in pairs:
        # a deal is one game from each seat: about one self-play game of each agent
        pair_size = size or auto_range_size(deals, per_game[a] + per_game[b], threads_per_pair, threads)
        jobs += [
            ((a, b, seed, first, end, threads, rules), 2 * (end - first)) for first, end in ranges(0, deals, pair_size)
        ]
    results, interrupted = map_ranges(client, play_deals, jobs, progress)
    matches = []
    for a, b in pairs:
        halves = [results[i] for i, (args, _) in enumerate(jobs) if args[:2] == (a, b) and i in results]
        matches.append(_match(a.label, b.label, halves))
    return matches, interrupted


def _match(first: str, second: str, halves: list[tuple[np.ndarray, np.ndarray]]) -> Match:
    """A pair's match from its deals' scores: ``(ab, ba)`` per range of deals, in order."""
    s_ab = [ab for ab, _ in halves]
    s_ba = [ba for _, ba in halves]
    empty = np.zeros((0, 2), np.int32)
    ab = np.concatenate(s_ab) if s_ab else empty
    ba = np.concatenate(s_ba) if s_ba else empty
    margin = np.concatenate([ab[:, 0] - ab[:, 1], ba[:, 1] - ba[:, 0]]).astype(np.int32)
    return Match(
        first=first,
        second=second,
        wins=int(np.sum(margin > 0)),
        losses=int(np.sum(margin < 0)),
        ties=int(np.sum(margin == 0)),
        margin=margin,
        scores_first=np.concatenate([ab[:, 0], ba[:, 1]]),
        scores_second=np.concatenate([ab[:, 1], ba[:, 0]]),
    )


def _time_agents(
    specs: Iterable[AgentSpec], seed: int, timing_games: int, timing_seconds: float, rules: Rules
) -> tuple[dict[str, float], bool]:
    """Each agent's seconds per move (the agents timed before an interruption), and
    whether it was interrupted."""
    timing: dict[str, float] = {}
    for a in specs:
        n = timing_games
        while True:
            try:
                r = simulate(n, agents=(a, a), seed=seed ^ 0x5EED, threads=1, rules=rules)
            except KeyboardInterrupt:
                return timing, True
            if r.interrupted:
                return timing, True
            if r.elapsed >= timing_seconds or n >= 4096:
                break
            n *= 2
        timing[a.label] = r.elapsed / max(r.stats.turns, 1)
    return timing, False
