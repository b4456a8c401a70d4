"""Game analysis: the engine's verdict on every action of a record (:func:`analyse`).

For each action the position before it is evaluated: the engine's best action, its
value (the mover's expected final margin and chance to win, with standard errors, or
the exact values of the endgame solver) and the *loss* of the action played: how many
points of final margin it gave away against the best. See docs/agents.md, "Game
analysis", for the method and the JSON format.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._checks import check_int, check_seed, json_field, json_int, json_object, load_json
from .._kernels import agents as _ag
from .._kernels import layout as _lo
from .._kernels import search as _se
from .._kernels.rng import mix64
from ..errors import FormatError
from ..game.game import Game
from ..game.move import Move, MoveKind, format_move
from ..game.records import GameRecord, replay
from ..game.tiles import NUM_TILES
from .endgame import solve_endgame

__all__ = ["ActionAnalysis", "Analysis", "MoveValue", "analyse"]

FORMAT = "qwirkle-core/analysis"
VERSION = 1
METHODS = ("monte_carlo", "exact", "bounded", "forced")
"""How an action was judged: ``monte_carlo`` (determinized playouts), ``exact`` (the
endgame solver, to the end), ``bounded`` (the solver stopped at its node limit: the
values are its bounds or estimates), ``forced`` (no placement was possible: an exchange
or a pass, not compared with other actions)."""
MAX_PLAYOUTS = 100_000


@dataclass(frozen=True)
class MoveValue:
    """The value of one action for the player who takes it.

    Attributes
    ----------
    move
        the action.
    margin
        the mover's expected final margin: their final score minus the best
        other final score, in points (exact in a solved endgame).
    margin_se
        the standard error of ``margin`` (0 when exact).
    win_rate
        the mover's chance to win, a tie counting one half (0, 0.5 or 1 when exact).
    win_se
        its standard error.

    """

    move: Move
    margin: float
    margin_se: float
    win_rate: float
    win_se: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the move in the notation)."""
        return {
            "move": format_move(self.move),
            "margin": self.margin,
            "margin_se": self.margin_se,
            "win_rate": self.win_rate,
            "win_se": self.win_se,
        }

    @classmethod
    def from_dict(cls, data: Any, what: str) -> MoveValue:
        """The value of a dict written by :meth:`to_dict`; FormatError names the problem."""
        json_object(data, what)
        text = json_field(data, "move", what)
        if not isinstance(text, str):
            raise FormatError(f"{what} move must be a str in the notation")
        try:
            move = Move.parse(text)
        except ValueError as e:
            raise FormatError(f"{what}: {e}") from None
        return cls(
            move,
            *(
                _json_float(json_field(data, k, what), f"{what} {k}")
                for k in ("margin", "margin_se", "win_rate", "win_se")
            ),
        )


@dataclass(frozen=True)
class ActionAnalysis:
    """The verdict on one action of the record.

    Attributes
    ----------
    index
        the action's index in the record (from 0).
    player
        the seat that acted.
    bag
        tiles in the bag before the action.
    method
        how it was judged, one of :data:`METHODS`.
    candidates
        the actions compared (1 for a forced action).
    played
        the value of the action played.
    best
        the engine's best action and its value (``played`` when it is the best).
    loss
        ``best.margin - played.margin`` (>= 0): points of final margin given away.
    loss_se
        the standard error of ``loss`` (from the paired playouts; 0 when exact).

    """

    index: int
    player: int
    bag: int
    method: str
    candidates: int
    played: MoveValue
    best: MoveValue
    loss: float
    loss_se: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "index": self.index,
            "player": self.player,
            "bag": self.bag,
            "method": self.method,
            "candidates": self.candidates,
            "played": self.played.to_dict(),
            "best": self.best.to_dict(),
            "loss": self.loss,
            "loss_se": self.loss_se,
        }

    @classmethod
    def from_dict(cls, data: Any, what: str) -> ActionAnalysis:
        """The verdict of a dict written by :meth:`to_dict`; FormatError names the problem."""
        json_object(data, what)
        method = json_field(data, "method", what)
        if method not in METHODS:
            raise FormatError(f"{what} method must be one of {', '.join(METHODS)}, not {method!r}")
        return cls(
            index=json_int(json_field(data, "index", what), f"{what} index"),
            player=json_int(json_field(data, "player", what), f"{what} player", 0, 5),
            bag=json_int(json_field(data, "bag", what), f"{what} bag", 0, NUM_TILES),
            method=method,
            candidates=json_int(json_field(data, "candidates", what), f"{what} candidates", 1),
            played=MoveValue.from_dict(json_field(data, "played", what), f"{what} played"),
            best=MoveValue.from_dict(json_field(data, "best", what), f"{what} best"),
            loss=_json_float(json_field(data, "loss", what), f"{what} loss"),
            loss_se=_json_float(json_field(data, "loss_se", what), f"{what} loss_se"),
        )


@dataclass(frozen=True)
class Analysis:
    """The verdicts on a record's actions (those of ``seat``, or all), in order, and the
    settings that produced them (:func:`analyse`)."""

    players: int
    agents: tuple[str, ...] | None
    seat: int | None
    playouts: int
    candidates: int
    max_nodes: int
    seed: int
    actions: tuple[ActionAnalysis, ...]

    def mean_loss(self, player: int) -> float:
        """The mean loss of a player's analysed actions, forced ones excluded.

        Parameters
        ----------
        player
            a seat.

        Returns
        -------
        float
            points of final margin (nan for no action).
        """
        losses = [a.loss for a in self.actions if a.player == player and a.method != "forced"]
        return sum(losses) / len(losses) if losses else float("nan")

    def to_dict(self) -> dict[str, Any]:
        """The analysis as a JSON-ready dict (docs/agents.md, "Game analysis")."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "players": self.players,
            "agents": None if self.agents is None else list(self.agents),
            "seat": self.seat,
            "settings": {
                "playouts": self.playouts,
                "candidates": self.candidates,
                "max_nodes": self.max_nodes,
                "seed": self.seed,
            },
            "mean_loss": [None if math.isnan(x := self.mean_loss(p)) else x for p in range(self.players)],
            "actions": [a.to_dict() for a in self.actions],
        }

    def to_json(self, indent: int | None = None) -> str:
        """The analysis as JSON text (:meth:`to_dict`).

        Parameters
        ----------
        indent
            spaces of indentation per level (None: one line).

        Returns
        -------
        str
        """
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Any) -> Analysis:
        """The analysis of a dict written by :meth:`to_dict`.

        Parameters
        ----------
        data
            a dict.

        Returns
        -------
        Analysis

        Raises
        ------
        FormatError
            naming the problem.
        """
        what = "analysis"
        json_object(data, what, FORMAT, VERSION)
        players = json_int(json_field(data, "players", what), "analysis players", 2, 6)
        agents = data.get("agents")
        if agents is not None and not (
            isinstance(agents, list) and len(agents) == players and all(isinstance(a, str) for a in agents)
        ):
            raise FormatError(f"analysis agents must be null or {players} strings")
        seat = data.get("seat")
        seat = None if seat is None else json_int(seat, "analysis seat", 0, players - 1)
        settings = json_object(json_field(data, "settings", what), "analysis settings")
        actions = json_field(data, "actions", what)
        if not isinstance(actions, list):
            raise FormatError("analysis actions must be a list")
        return cls(
            players=players,
            agents=None if agents is None else tuple(agents),
            seat=seat,
            playouts=json_int(json_field(settings, "playouts", "analysis settings"), "analysis playouts", 1),
            candidates=json_int(json_field(settings, "candidates", "analysis settings"), "analysis candidates", 1),
            max_nodes=json_int(json_field(settings, "max_nodes", "analysis settings"), "analysis max_nodes", 1, 2**62),
            seed=json_int(json_field(settings, "seed", "analysis settings"), "analysis seed", 0, 2**64 - 1),
            actions=tuple(ActionAnalysis.from_dict(a, f"analysis action {i}") for i, a in enumerate(actions)),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Analysis:
        """Parse an analysis written by :meth:`to_json`.

        Parameters
        ----------
        text
            str or bytes.

        Returns
        -------
        Analysis

        Raises
        ------
        FormatError
            naming the problem.
        """
        return cls.from_dict(load_json(text, "analysis"))


def _json_float(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise FormatError(f"{what} must be a finite number, not {value!r}")
    return float(value)


def analyse(
    record: GameRecord,
    seat: int | None = None,
    playouts: int = 100,
    candidates: int = 12,
    max_nodes: int = 1_000_000,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> Analysis:
    """The engine's verdict on every action of a record: see :class:`ActionAnalysis`.

    Before the bag is empty (and, with three or more players, to the end) an action is
    compared with the search agent's candidates by determinized playouts to the end of
    the game, the heuristic playing every seat; playout j of every action shares its
    sampled hidden tiles (common random numbers), so the loss is measured on paired games.
    Once the bag is empty in a two-player game the exact endgame solver judges it. Runs on
    one thread: about 0.2 to 1 s per action at the defaults.

    Parameters
    ----------
    record
        a :class:`GameRecord` (the tile game).
    seat
        judge only this seat's actions (default: every seat).
    playouts
        playouts per candidate action, 2 .. 100,000.
    candidates
        the placements of the highest heuristic value compared, 1 .. 64.
    max_nodes
        positions per endgame solve, 1 .. 2**62; past that its bounds are reported
        (method ``bounded``).
    seed
        makes the playouts reproducible.
    progress
        ``progress(done, total)``, called after each analysed action.

    Returns
    -------
    Analysis

    Raises
    ------
    TypeError
        ``record`` is not a :class:`GameRecord`.
    RecordError
        it does not replay.
    ValueError
        a bad seat or setting, or a Qwirkle Cubes record.
    """
    if not isinstance(record, GameRecord):
        raise TypeError(f"analyse() takes a GameRecord, not {type(record).__name__}")
    if record.rules.cubes:
        raise ValueError(
            "analyse() judges tile games: its playouts and endgame solver know no re-rolls, so a Qwirkle Cubes record is refused"
        )
    players = record.players
    if seat is not None:
        seat = check_int(seat, "seat", 0, players - 1)
    playouts = check_int(playouts, "playouts", 2, MAX_PLAYOUTS)
    candidates = check_int(candidates, "candidates", 1, _lo.MAX_CANDIDATES)
    max_nodes = check_int(max_nodes, "max_nodes", 1, 2**62)
    seed = check_seed(seed)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable f(done, total), not {progress!r}")
    game = replay(record).root()
    todo = [i for i, a in enumerate(record.actions) if seat is None or a.player == seat]
    judge = _Judge(playouts, candidates, max_nodes, seed)
    out = []
    for i, action in enumerate(record.actions):
        if seat is None or action.player == seat:
            out.append(judge.action(game, i, action.move))
            if progress is not None:
                progress(len(out), len(todo))
        game.play(action.move)
    return Analysis(
        players,
        None if record.agents is None else tuple(record.agents),
        seat,
        playouts,
        candidates,
        max_nodes,
        seed,
        tuple(out),
    )


class _Judge:
    """The analysis of single positions, with the kernels' scratch made once."""

    def __init__(self, playouts: int, candidates: int, max_nodes: int, seed: int) -> None:
        self.playouts, self.candidates, self.max_nodes, self.seed = playouts, candidates, max_nodes, seed
        self.scratch = _ag.new_agent_scratch(True)
        _se.bind_search(solver=False)  # the playouts
        _se.bind_heuristic()  # their policy
        self.policy = _lo.DEFAULT_SPECS[_lo.HEURISTIC].copy()

    def action(self, game: Game, index: int, played: Move) -> ActionAnalysis:
        if game.players == 2 and game.bag_size == 0:
            return self._endgame(game, index, played)
        return self._monte_carlo(game, index, played)

    def _monte_carlo(self, game: Game, index: int, played: Move) -> ActionAnalysis:
        g = game.copy()
        arrays = g.kernel_arrays()
        rows = np.zeros((self.candidates + 1, _lo.CAND_COLS), np.int64)
        k = int(_se.engine_candidates(arrays, self.candidates, self.scratch, rows))
        moves = [g.decode_action(rows[c]) for c in range(k)]
        if played.kind is MoveKind.PASS or (k == 0 and played.kind is MoveKind.EXCHANGE):
            return self._forced(g, index, played)
        mine = _index_of(moves, played)
        if mine < 0:
            rows[k] = g.encode_action(played)
            moves.append(played)
            mine = k
            k += 1
        margins = np.zeros((k, self.playouts), np.float64)
        _se.evaluate_candidates(
            arrays, rows, k, self.policy, self.playouts, 0, self._seed(index), self.scratch, margins
        )
        means = margins.mean(axis=1)
        best = int(np.argmax(means))
        if means[best] <= means[mine]:
            best = mine
        diff = margins[best] - margins[mine]
        return ActionAnalysis(
            index=index,
            player=game.current_player,
            bag=game.bag_size,
            method="monte_carlo",
            candidates=k,
            played=_summary(moves[mine], margins[mine]),
            best=_summary(moves[best], margins[best]),
            loss=float(diff.mean()),
            loss_se=_se_of(diff),
        )

    def _forced(self, g: Game, index: int, played: Move) -> ActionAnalysis:
        """No placement was possible: the played action's value only (by the solver in
        a two-player endgame, a bound if it stops at its node limit; else from playouts)."""
        if g.players == 2 and g.bag_size == 0:
            value = _certain(played, self._after(g, played)[0])
        else:
            margins = np.zeros((1, self.playouts), np.float64)
            row = np.zeros((1, _lo.CAND_COLS), np.int64)
            row[0] = g.encode_action(played)
            _se.evaluate_candidates(
                g.kernel_arrays(), row, 1, self.policy, self.playouts, 0, self._seed(index), self.scratch, margins
            )
            value = _summary(played, margins[0])
        return ActionAnalysis(index, g.current_player, g.bag_size, "forced", 1, value, value, 0.0, 0.0)

    def _after(self, game: Game, move: Move) -> tuple[float, bool]:
        """The mover's final margin after ``move`` and best play by both (two players,
        empty bag), and whether it is exact (the solver finished)."""
        p = game.current_player
        child = game.copy()
        child.play(move)
        if child.is_over:
            return float(child.scores[p] - child.scores[1 - p]), True
        reply = solve_endgame(child, max_nodes=self.max_nodes)
        return float(-reply.value), reply.exact

    def _endgame(self, game: Game, index: int, played: Move) -> ActionAnalysis:
        if not game.has_legal_placement():
            return self._forced(game.copy(), index, played)
        best = solve_endgame(game, max_nodes=self.max_nodes)
        exact = best.exact
        if best.move == played:
            mine = float(best.value)
        else:
            mine, exact_after = self._after(game, played)
            exact = exact and exact_after
        best_move, best_value = (best.move, float(best.value)) if best.value > mine else (played, mine)
        return ActionAnalysis(
            index=index,
            player=game.current_player,
            bag=0,
            method="exact" if exact else "bounded",
            candidates=len(game.legal_moves()),
            played=_certain(played, mine),
            best=_certain(best_move, best_value),
            loss=best_value - mine,
            loss_se=0.0,
        )

    def _seed(self, index: int) -> np.uint64:
        """The playouts' seed of action ``index``: a hash of (seed, index)."""
        return np.uint64(mix64(np.uint64(self.seed) ^ mix64(np.uint64(index))))


def _certain(move: Move, margin: float) -> MoveValue:
    return MoveValue(move, margin, 0.0, 1.0 if margin > 0 else 0.5 if margin == 0 else 0.0, 0.0)


def _summary(move: Move, margins: np.ndarray) -> MoveValue:
    wins = (margins > 0) + 0.5 * (margins == 0)
    return MoveValue(move, float(margins.mean()), _se_of(margins), float(wins.mean()), _se_of(wins))


def _se_of(x: np.ndarray) -> float:
    return float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0


def _index_of(moves: list[Move], move: Move) -> int:
    for i, m in enumerate(moves):
        if m == move:
            return i
    return -1
