"""Flat Monte Carlo evaluation of the moves of a position: :func:`evaluate_moves`."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .._checks import check_int, check_seed
from .._compiling import compiling, evaluation_notice
from .._kernels import layout as _lo
from .._kernels import mc as _mc
from .._threads import numba_threads
from ..errors import AgentError, IllegalMoveError
from ..game.agents import AgentLike, parse_agent
from ..game.game import Game
from ..game.move import Move, MoveKind

__all__ = ["MoveEvaluation", "evaluate_moves"]

MAX_PLAYOUTS = 1_000_000
MAX_DEPTH = 10_000


@dataclass(frozen=True)
class MoveEvaluation:
    """The playout statistics of one candidate move, from the mover's point of view.

    Attributes
    ----------
    margin
        mean final score margin (the mover's score minus the best other score)
    margin_se
        its standard error
    win_rate
        share of playouts the mover wins (a tie counts one half)
    win_se
        its standard error

    """

    move: Move
    playouts: int
    margin: float
    margin_se: float
    win_rate: float
    win_se: float


def evaluate_moves(
    game: Game,
    playouts: int = 200,
    policy: AgentLike = "greedy",
    seed: int = 0,
    moves: Iterable[Move | str] | None = None,
    top: int = 20,
    depth: int = 0,
    threads: int | None = None,
) -> list[MoveEvaluation]:
    """Evaluate candidate moves of ``game``'s current player by determinized playouts.

    Parameters
    ----------
    playouts
        playouts per candidate (2 .. 1,000,000). Playout j of every candidate
        uses the same sampled hidden tiles and random streams (common random
        numbers).
    policy
        the agent that plays every seat after the candidate: "greedy" (default),
        "heuristic" (with parameters) or "random".
    seed
        makes the evaluation reproducible (results do not depend on ``threads``).
    moves
        the candidates (Move objects or their text: placements or exchanges); by
        default the ``top`` (1 .. 1,000) highest-scoring placements plus, when the
        bag holds a full hand, the exchange of the whole hand.
    depth
        turns to play after the candidate (0 .. 10,000; 0: to the end of the
        game); the margin is then taken at that point. Playouts count their turn
        limit (5,000) from this position, whatever its turn number.

    Returns
    -------
    list of MoveEvaluation
        best mean margin first.

    Raises
    ------
    IllegalMoveError
        the game is over or a candidate is not legal.
    AgentError
        a bad policy.
    TypeError, ValueError
        other bad arguments (ValueError for a Qwirkle Cubes game, which it does not
        play out).
    """
    if not isinstance(game, Game):
        raise TypeError(f"evaluate_moves() takes a Game, not {type(game).__name__}")
    playouts = check_int(playouts, "playouts", 2, MAX_PLAYOUTS)
    depth = check_int(depth, "depth", 0, MAX_DEPTH)
    top = check_int(top, "top", 1, 1000)
    seed = check_seed(seed)
    spec = _policy_row(policy)
    if game.is_over:
        raise IllegalMoveError("the game is over")
    if game.rules.cubes:
        raise ValueError(
            "evaluate_moves() plays out the tile game; for Qwirkle Cubes use the mc agent (play_agent('mc'))"
        )
    with compiling(evaluation_notice):  # a first call compiles: says so once
        return _evaluate(game, moves, top, spec, playouts, depth, seed, threads)


def _evaluate(
    game: Game,
    moves: Iterable[Move | str] | None,
    top: int,
    spec: np.ndarray,
    playouts: int,
    depth: int,
    seed: int,
    threads: int | None,
) -> list[MoveEvaluation]:
    candidates = (
        _default_candidates(game, top)
        if moves is None
        else [m if isinstance(m, Move) else Move.parse(m) for m in moves]
    )
    if not candidates:
        return []
    cands = _candidate_rows(game, candidates)
    arrays = game.kernel_arrays()
    ntiles = int(arrays.bmeta[_lo.B_TILES])
    rows = np.zeros(max(ntiles, 1), np.int64)
    cols = np.zeros(max(ntiles, 1), np.int64)
    tiles = np.zeros(max(ntiles, 1), np.int8)
    _mc.board_tiles(arrays.board, arrays.bmeta, rows, cols, tiles)
    with numba_threads(threads) as n:
        margins = _mc.evaluate(
            rows,
            cols,
            tiles,
            ntiles,
            arrays.hands.copy(),
            arrays.bag.copy(),
            arrays.gmeta.copy(),
            cands,
            len(candidates),
            spec,
            playouts,
            depth,
            np.uint64(seed),
            min(len(candidates) * playouts, 4 * n),
        )
    out = [_summarise(m, margins[i], playouts) for i, m in enumerate(candidates)]
    out.sort(key=lambda e: -e.margin)
    return out


def _policy_row(policy: AgentLike) -> np.ndarray:
    spec = parse_agent(policy)
    if spec.name not in ("random", "greedy", "heuristic"):
        raise AgentError(f"a playout policy is random, greedy or heuristic, not {spec.label!r}")
    return spec.row()


def _default_candidates(game: Game, top: int) -> list[Move]:
    moves = sorted(game.legal_moves(), key=lambda m: -(m.score or 0))[:top]
    hand = game.hand()
    if not game.opening_pending and game.bag_size >= len(hand):
        moves.append(Move.exchange(hand))
    return moves


def _candidate_rows(game: Game, moves: list[Move]) -> np.ndarray:
    """The candidates as the kernels' action rows, each checked legal now."""
    if any(m.kind is MoveKind.PASS for m in moves):
        raise ValueError("a pass cannot be evaluated; it is only legal when nothing else is")
    return np.array([game.encode_action(m) for m in moves], np.int64).reshape(len(moves), _lo.CAND_COLS)


def _summarise(move: Move, x: np.ndarray, playouts: int) -> MoveEvaluation:
    wins = (x > 0) + 0.5 * (x == 0)
    return MoveEvaluation(
        move=move,
        playouts=playouts,
        margin=float(x.mean()),
        margin_se=float(x.std(ddof=1) / math.sqrt(playouts)),
        win_rate=float(wins.mean()),
        win_se=float(wins.std(ddof=1) / math.sqrt(playouts)),
    )
