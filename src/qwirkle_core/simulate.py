"""Monte Carlo batches: ``simulate`` and its ``SimulationResult``; ``play_game``."""

import math
import time
from dataclasses import dataclass, field

import numba
import numpy as np

from ._kernels import agents as _ag
from ._kernels import batch as _bt
from .rules import Rules, resolve_rules

__all__ = ["AGENTS", "SimulationResult", "simulate", "play_game", "parse_agents"]

AGENTS = tuple(_ag.AGENTS)
_Z95 = 1.959963984540054


def _parse_one(agent):
    """(display name, spec row) of one agent: ``"mc"``, ``"mc:playouts=32:depth=0"``
    or ``("mc", {"playouts": 32})``."""
    if isinstance(agent, tuple) and len(agent) == 2 and isinstance(agent[1], dict):
        name, params = agent
    elif isinstance(agent, str):
        name, *pairs = agent.strip().split(":")
        params = {}
        for pair in pairs:
            key, eq, value = pair.partition("=")
            try:
                if not eq:
                    raise ValueError
                params[key.strip()] = float(value)
            except ValueError:
                raise ValueError(f"agent {agent!r}: parameters are written name:key=number:key=number") from None
    else:
        raise ValueError(f"an agent is a name such as 'greedy' or 'mc:playouts=32', not {agent!r}")
    if name not in _ag.AGENTS:
        raise ValueError(f"unknown agent {name!r}; available: {', '.join(AGENTS)}")
    spec = _ag.make_spec(_ag.AGENTS[name], **params)
    label = name + "".join(f":{k}={v:g}" for k, v in sorted(params.items()))
    return label, spec


def parse_agents(agents):
    """Agents (a sequence, or one comma-separated str) -> (names, float64[P, SPEC_COLS] specs)."""
    if isinstance(agents, str):
        agents = agents.split(",")
    parsed = [_parse_one(a) for a in agents]
    if not parsed:
        raise ValueError("no agents given")
    return tuple(n for n, _ in parsed), np.stack([s for _, s in parsed])


def agent_turn(game, spec, scratch=None):
    """Let the agent ``spec`` take the current turn of ``game`` in the kernel.

    Mutates ``game``'s arrays exactly as the batch kernel would (same choices, same
    draws). Returns ``(act, scratch)``: the kernel's action word (see
    ``_kernels.agents``) and the agent scratch to pass to the next call.
    """
    from ._kernels import mc as _mc

    if scratch is None:
        scratch = _mc.new_agent_scratch()
    gs = game._kernel_state()
    game._moves = _mc.take_turn(spec, gs, game._moves, scratch)
    return gs[9], scratch


def _check_seed(seed):
    from .game import _coord

    return _coord(seed, "seed") & 0xFFFFFFFFFFFFFFFF


def wilson_interval(successes, n, z=_Z95):
    """The Wilson score interval (low, high) of a binomial proportion."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class SimulationResult:
    """The per-game rows of a batch (numpy arrays, one row per game) and summaries.

    scores        int32[games, players]   final scores (going-out bonus included)
    winner        int8[games]             winning seat, -1 for a tie
    turns         int32[games]            actions taken (placements, exchanges, passes)
    tiles_placed  int16[games]            tiles on the board at the end
    qwirkles      int16[games, players]   lines of 6 completed by each seat
    starter       int8[games]             the seat that opened
    seeds         uint64[games]           each game's seed: ``play_game(agents, seed=...)``
                                          or ``Game(players, seed=...)`` replays it
    truncated     bool[games]             stopped at the turn limit (never seen in practice)
    """

    agents: tuple
    rules: Rules
    seed: int
    scores: np.ndarray
    winner: np.ndarray
    turns: np.ndarray
    tiles_placed: np.ndarray
    qwirkles: np.ndarray
    starter: np.ndarray
    seeds: np.ndarray
    truncated: np.ndarray
    elapsed: float = 0.0
    interrupted: bool = False
    threads: int = field(default=1)

    @property
    def games(self):
        return len(self.winner)

    @property
    def players(self):
        return len(self.agents)

    @property
    def games_per_second(self):
        return self.games / self.elapsed if self.elapsed > 0 else math.nan

    def win_rates(self):
        """Per seat: (rate, low, high) with a 95% Wilson interval; ties count as no win."""
        return [(float(np.mean(self.winner == p)) if self.games else math.nan, *wilson_interval(int(np.sum(self.winner == p)), self.games)) for p in range(self.players)]

    @property
    def tie_rate(self):
        return float(np.mean(self.winner == -1)) if self.games else math.nan

    def mean_scores(self):
        return self.scores.mean(axis=0) if self.games else np.full(self.players, math.nan)

    def score_std(self):
        return self.scores.std(axis=0, ddof=1) if self.games > 1 else np.full(self.players, math.nan)

    def mean_turns(self):
        return float(self.turns.mean()) if self.games else math.nan

    def mean_qwirkles(self):
        return self.qwirkles.mean(axis=0) if self.games else np.full(self.players, math.nan)

    def first_player_advantage(self):
        """How the opening seat fares, whatever its agent.

        Returns a dict: ``win_rate`` of the starter with its 95% interval
        (``low``, ``high``), ``fair`` (1 / players), and ``score_margin``: the
        starter's mean score minus the mean of the other seats' scores.
        """
        n = self.games
        if n == 0:
            return {"win_rate": math.nan, "low": math.nan, "high": math.nan, "fair": 1 / self.players, "score_margin": math.nan}
        wins = int(np.sum(self.winner == self.starter))
        idx = np.arange(n)
        start_scores = self.scores[idx, self.starter.astype(np.int64)]
        others = (self.scores.sum(axis=1) - start_scores) / (self.players - 1)
        low, high = wilson_interval(wins, n)
        return {"win_rate": wins / n, "low": low, "high": high, "fair": 1 / self.players, "score_margin": float(np.mean(start_scores - others))}

    def summary(self):
        """A dict of the headline figures (what the command line prints)."""
        return {
            "games": self.games,
            "agents": list(self.agents),
            "seed": self.seed,
            "win_rates": self.win_rates(),
            "tie_rate": self.tie_rate,
            "mean_scores": self.mean_scores().tolist(),
            "score_std": self.score_std().tolist(),
            "mean_turns": self.mean_turns(),
            "mean_qwirkles": self.mean_qwirkles().tolist(),
            "first_player": self.first_player_advantage(),
            "truncated": int(self.truncated.sum()),
            "seconds": self.elapsed,
            "games_per_second": self.games_per_second,
        }

    def columns(self):
        """The per-game rows as a dict of 1-D columns (for CSV / Parquet)."""
        cols = {"game": np.arange(self.games, dtype=np.int64), "seed": self.seeds}
        for p in range(self.players):
            cols[f"score_{p}"] = self.scores[:, p]
        cols["winner"] = self.winner
        cols["starter"] = self.starter
        cols["turns"] = self.turns
        cols["tiles_placed"] = self.tiles_placed
        for p in range(self.players):
            cols[f"qwirkles_{p}"] = self.qwirkles[:, p]
        cols["truncated"] = self.truncated
        return cols

    def __repr__(self):
        return f"<SimulationResult games={self.games} agents={','.join(self.agents)} mean_scores={np.round(self.mean_scores(), 1).tolist()}>"


def _chunk_size(threads):
    return 2048 * threads


def simulate(games, agents=("greedy", "greedy"), seed=0, threads=None, rules=None, progress=False):
    """Play ``games`` complete games with ``agents`` (one per seat) inside numba.

    games:    number of games (>= 1).
    agents:   agent names, one per seat (``len(agents)`` players, 2..6); see ``AGENTS``.
    seed:     the batch seed. Game ``i`` plays from ``result.seeds[i]``, a hash of
              ``(seed, i)``, so results do not depend on ``threads``.
    threads:  numba threads (default: all cores).
    rules:    a :class:`Rules`; its ``players`` must equal ``len(agents)``.
    progress: True for a progress bar (rich), or a callable ``f(done, total)``.

    Games run in chunks (memory stays bounded); Ctrl-C stops after the chunk in
    flight and returns the finished games with ``interrupted=True``.
    """
    if isinstance(games, bool) or not hasattr(games, "__index__"):
        raise TypeError(f"games must be an int, not {games!r}")
    games = games.__index__()
    if games < 1:
        raise ValueError(f"games must be at least 1, not {games}")
    from .players import is_builtin

    if not isinstance(agents, str) and not all(is_builtin(a) for a in agents):
        raise TypeError("simulate runs built-in agents inside numba; play Python agents with qc.play_game, qc.tournament or qwirkle_core.players.play_games")
    names, specs = parse_agents(agents)
    rules = resolve_rules(len(names), rules)
    seed = _check_seed(seed)
    max_threads = numba.config.NUMBA_NUM_THREADS
    if threads is None:
        threads = max_threads
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive int, not {threads!r}")
    threads = min(threads, max_threads)
    players = len(names)
    scores = np.zeros((games, players), np.int32)
    qwirkles = np.zeros((games, players), np.int16)
    stats = np.zeros((games, _bt.STATS), np.int32)
    seeds = _bt.seeds_for(np.uint64(seed), 0, games)
    chunk = _chunk_size(threads)
    report = _progress_reporter(progress, games)
    done = 0
    interrupted = False
    old_threads = numba.get_num_threads()
    numba.set_num_threads(threads)
    start = time.perf_counter()
    try:
        while done < games:
            hi = min(games, done + chunk)
            _bt.run_games(seeds[done:hi], specs, rules.opening_code, scores[done:hi], qwirkles[done:hi], stats[done:hi], min(4 * threads, hi - done))
            done = hi
            report.update(done)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        numba.set_num_threads(old_threads)
        report.close()
    elapsed = time.perf_counter() - start
    return SimulationResult(
        agents=names,
        rules=rules,
        seed=seed,
        scores=scores[:done],
        winner=stats[:done, _bt.S_WINNER].astype(np.int8),
        turns=stats[:done, _bt.S_TURNS].copy(),
        tiles_placed=stats[:done, _bt.S_PLACED].astype(np.int16),
        qwirkles=qwirkles[:done],
        starter=stats[:done, _bt.S_STARTER].astype(np.int8),
        seeds=seeds[:done],
        truncated=stats[:done, _bt.S_TRUNCATED].astype(bool),
        elapsed=elapsed,
        interrupted=interrupted,
        threads=threads,
    )


class _NoProgress:
    def update(self, done):
        pass

    def close(self):
        pass


class _CallbackProgress(_NoProgress):
    def __init__(self, fn, total):
        self.fn, self.total = fn, total

    def update(self, done):
        self.fn(done, self.total)


class _RichProgress(_NoProgress):
    def __init__(self, total):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self.progress = Progress(
            TextColumn("games"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            transient=False,
        )
        self.task = self.progress.add_task("games", total=total, rate="")
        self.start = time.perf_counter()
        self.progress.start()

    def update(self, done):
        rate = done / max(time.perf_counter() - self.start, 1e-9)
        self.progress.update(self.task, completed=done, rate=f"{rate:,.0f} games/s")

    def close(self):
        self.progress.stop()


def _progress_reporter(progress, total):
    if callable(progress):
        return _CallbackProgress(progress, total)
    if progress:
        return _RichProgress(total)
    return _NoProgress()


def play_game(agents=("greedy", "greedy"), seed=0, rules=None, time_limit=None):
    """Play one game with ``agents`` from ``seed`` exactly as a batch would; return its record.

    ``play_game(agents, seed=result.seeds[i])`` reproduces game ``i`` of a batch.
    Agents may also be Python agents (see :mod:`qwirkle_core.players`), mixed freely
    with built-in ones; ``time_limit`` is their seconds per move (None: no limit), and
    a Python agent that fails raises :class:`~qwirkle_core.players.AgentFailure`.
    """
    from .game import Game
    from .players import is_builtin, run_game

    if isinstance(agents, str):
        agents = agents.split(",")
    if time_limit is not None or not all(is_builtin(a) for a in agents):
        g, labels = run_game(agents, seed=seed, rules=rules, time_limit=time_limit)
        return g.record(agents=labels)
    names, specs = parse_agents(agents)
    rules = resolve_rules(len(names), rules)
    g = Game(seed=_check_seed(seed), rules=rules)
    while not g.is_over and g.turn < _bt.MAX_TURNS:
        g.play_agent(specs[g.current_player])
    return g.record(agents=list(names))
