"""Legal-move enumeration and move application on fixed mid-game positions.

Run: ``pytest benchmarks/ --benchmark-only``. Each round enumerates every legal move
(with its score) of all the positions; ``extra_info`` holds moves per second.
"""

import numpy as np
from numba import njit

from qwirkle_core._kernels import movegen as mg
from qwirkle_core._kernels.board import place_cells


@njit(cache=True)
def enumerate_all(board, cross, anchors, bmeta, hand, moves, st):
    total = 0
    for i in range(board.shape[0]):
        total += mg.generate(board[i], cross[i], anchors[i], bmeta[i], hand[i], 0, moves, st)
    return total


@njit(cache=True)
def apply_best(board, cross, anchors, bmeta, hand, moves, st):
    """Copy each position, generate, and apply its best move (generation included)."""
    applied = 0
    for i in range(board.shape[0]):
        b, c, a, m = board[i].copy(), cross[i].copy(), anchors[i].copy(), bmeta[i].copy()
        n = mg.generate(b, c, a, m, hand[i], 0, moves, st)
        if n == 0:
            continue
        best = np.argmax(moves[:n, mg.M_SCORE])
        k = moves[best, mg.M_N]
        place_cells(b, c, a, m, moves[best, mg.M_CELL : mg.M_CELL + k], moves[best, mg.M_TILE : mg.M_TILE + k], k)
        applied += 1
    return applied


def test_enumerate_legal_moves(benchmark, positions):
    p = positions
    moves = mg.new_move_buffer(100_000)
    st = mg.new_scratch_array()
    args = (p["board"], p["cross"], p["anchors"], p["bmeta"], p["hand"], moves, st)
    total = enumerate_all(*args)  # compile / load from cache
    assert total == sum(len(g.legal_moves()) for g in p["games"])
    benchmark.pedantic(enumerate_all, args=args, rounds=30, iterations=5, warmup_rounds=2)
    median = benchmark.stats.stats.median
    benchmark.extra_info["positions"] = len(p["games"])
    benchmark.extra_info["moves_per_round"] = total
    benchmark.extra_info["moves_per_second"] = total / median
    benchmark.extra_info["positions_per_second"] = len(p["games"]) / median


def test_apply_moves(benchmark, positions):
    p = positions
    moves = mg.new_move_buffer(100_000)
    st = mg.new_scratch_array()
    args = (p["board"], p["cross"], p["anchors"], p["bmeta"], p["hand"], moves, st)
    applied = apply_best(*args)
    benchmark.pedantic(apply_best, args=args, rounds=20, iterations=2, warmup_rounds=1)
    benchmark.extra_info["moves_applied_per_second"] = applied / benchmark.stats.stats.median
