"""Flat Monte Carlo evaluation of the moves of a position (``Game.evaluate_moves``)."""

import math
from dataclasses import dataclass

import numba
import numpy as np

from ._kernels import agents as _ag
from ._kernels import board as _bd
from ._kernels import mc as _mc
from .rules import IllegalMoveError

__all__ = ["MoveEvaluation", "evaluate_moves"]


@dataclass(frozen=True)
class MoveEvaluation:
    """The playout statistics of one candidate move, from the mover's point of view.

    margin:    mean final score margin (the mover's score minus the best other score)
    margin_se: its standard error
    win_rate:  share of playouts the mover wins (a tie counts one half)
    win_se:    its standard error
    """

    move: object
    playouts: int
    margin: float
    margin_se: float
    win_rate: float
    win_se: float


def _policy_spec(policy):
    from .simulate import parse_agents

    names, specs = parse_agents([policy])
    if int(specs[0, 0]) not in (_ag.GREEDY, _ag.HEURISTIC, _ag.RANDOM):
        raise ValueError(f"a playout policy is random, greedy or heuristic, not {names[0]!r}")
    return specs[0]


def evaluate_moves(game, playouts=200, policy="greedy", seed=0, moves=None, top=20, depth=0, threads=None):
    """Evaluate candidate moves of ``game``'s current player by determinized playouts.

    playouts: playouts per candidate (>= 2). Playout j of every candidate uses the same
              sampled hidden tiles and random streams (common random numbers).
    policy:   the agent that plays every seat after the candidate: "greedy" (default),
              "heuristic" or "random".
    seed:     makes the evaluation reproducible (results do not depend on ``threads``).
    moves:    the candidates (Move objects, placements or exchanges); by default the
              ``top`` highest-scoring placements plus, when the bag holds a full hand,
              the exchange of the whole hand.
    depth:    turns to play after the candidate (0: to the end of the game); the margin
              is then taken at that point.
    Returns a list of :class:`MoveEvaluation`, best mean margin first.
    """
    from .game import Move

    if game.is_over:
        raise IllegalMoveError("the game is over")
    if isinstance(playouts, bool) or not isinstance(playouts, int) or playouts < 2:
        raise ValueError(f"playouts must be an int >= 2, not {playouts!r}")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise ValueError(f"depth must be an int >= 0, not {depth!r}")
    spec = _policy_spec(policy)
    if moves is None:
        legal = sorted(game.legal_moves(), key=lambda m: -m.score)[:top]
        moves = list(legal)
        hand = game.hand()
        if not game.opening_pending and game.bag_size >= len(hand):
            moves.append(Move.exchange(hand))
    moves = [m if isinstance(m, Move) else Move(m) for m in moves]
    if not moves:
        return []
    cands = np.zeros((len(moves), _ag.CAND_COLS), np.int64)
    for i, m in enumerate(moves):
        if m.kind == "place":
            points = game.check(m)
            cands[i, 0] = _ag.PLACE
            cands[i, 1] = len(m.placements)
            cands[i, 2] = points
            for j, (r, c, t) in enumerate(m.placements):
                cands[i, 4 + j] = _bd.cell_of(r, c)
                cands[i, 10 + j] = t
        elif m.kind == "exchange":
            game._check_exchange(m.tiles)
            cands[i, 0] = _ag.EXCHANGE
            cands[i, 1] = len(m.tiles)
            cands[i, 10 : 10 + len(m.tiles)] = m.tiles
        else:
            raise ValueError("a pass cannot be evaluated; it is only legal when nothing else is")
    ntiles = int(game._bmeta[_bd.B_TILES])
    rows = np.zeros(max(ntiles, 1), np.int64)
    cols = np.zeros(max(ntiles, 1), np.int64)
    tiles = np.zeros(max(ntiles, 1), np.int8)
    _mc.board_tiles(game._board, game._bmeta, rows, cols, tiles)
    threads = numba.config.NUMBA_NUM_THREADS if threads is None else threads
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        margins = _mc.evaluate(
            rows, cols, tiles, ntiles, game._hands, game._bag, game._gmeta, cands, len(moves), spec, playouts, depth,
            np.uint64(seed & 0xFFFFFFFFFFFFFFFF), min(len(moves) * playouts, 4 * threads),
        )
    finally:
        numba.set_num_threads(old)
    out = []
    for i, m in enumerate(moves):
        x = margins[i]
        wins = (x > 0) + 0.5 * (x == 0)
        out.append(
            MoveEvaluation(
                move=m,
                playouts=playouts,
                margin=float(x.mean()),
                margin_se=float(x.std(ddof=1) / math.sqrt(playouts)),
                win_rate=float(wins.mean()),
                win_se=float(wins.std(ddof=1) / math.sqrt(playouts)),
            )
        )
    out.sort(key=lambda e: -e.margin)
    return out
