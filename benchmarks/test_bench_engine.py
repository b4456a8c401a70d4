"""Legal-move enumeration and move application on fixed mid-game positions.

Run: ``pytest benchmarks/ --benchmark-only``. One round of the enumeration benchmark
lists every legal move (with its score) of all the positions; one round of the apply
benchmark also puts each of those moves on the board and takes it back.
``extra_info`` holds the rates. The two driver kernels here are not cached on disk:
numba's cache would not notice a change in the engine kernels they compile in.
"""

import numpy as np
import pytest
from numba import njit

from qwirkle_core._kernels import movegen as mg
from qwirkle_core._kernels.board import new_undo_stack, place_in_slot, take_back_slot


@njit
def enumerate_all(board, cross, anchors, bmeta, hand, moves, st, reps):
    """Enumerate every position's moves ``reps`` times in a row; returns the count."""
    total = 0
    for i in range(board.shape[0]):
        for _ in range(reps):
            total += mg.generate(board[i], cross[i], anchors[i], bmeta[i], hand[i], 0, moves, st, False)
    return total


@njit
def apply_all(board, cross, anchors, bmeta, hand, moves, st, undo):
    """Put every legal move of every position on its board (masks and anchors
    updated) and take it back again; returns the number of moves applied."""
    applied = 0
    for i in range(board.shape[0]):
        n = mg.generate(board[i], cross[i], anchors[i], bmeta[i], hand[i], 0, moves, st, False)
        for j in range(n):
            k = moves[j, mg.M_N]
            cells = moves[j, mg.M_CELL : mg.M_CELL + k]
            place_in_slot(
                board[i],
                cross[i],
                anchors[i],
                bmeta[i],
                cells,
                moves[j, mg.M_TILE : mg.M_TILE + k],
                k,
                undo[0],
                undo[1],
                undo[2],
                undo[3],
                np.int64(0),
            )
            take_back_slot(
                board[i], cross[i], anchors[i], bmeta[i], cells, k, undo[0], undo[1], undo[2], undo[3], np.int64(0)
            )
        applied += n
    return applied


@pytest.mark.parametrize("reps", [1, 10], ids=["cold", "warm"])
def test_enumerate_legal_moves(benchmark, positions, reps):
    """cold: one pass over the 350 positions (about 100 MB of board arrays, so each
    position starts out of the cache); warm: each position 10 times in a row, as a game
    in play keeps its board in the cache."""
    p = positions
    moves = mg.new_move_buffer(100_000)
    st = mg.new_scratch_array()
    args = (p["board"], p["cross"], p["anchors"], p["bmeta"], p["hand"], moves, st, reps)
    total = enumerate_all(*args)  # compile / load from cache
    assert total == reps * sum(len(g.legal_moves()) for g in p["games"])
    benchmark.pedantic(enumerate_all, args=args, rounds=30 // reps, iterations=5, warmup_rounds=2)
    median = benchmark.stats.stats.median
    benchmark.extra_info["positions"] = len(p["games"])
    benchmark.extra_info["moves_per_round"] = total
    benchmark.extra_info["moves_per_second"] = total / median


def test_apply_moves(benchmark, positions):
    """Apply-and-take-back of every legal move (minus the enumeration time of the round)."""
    p = positions
    moves = mg.new_move_buffer(100_000)
    st = mg.new_scratch_array()
    args = (p["board"], p["cross"], p["anchors"], p["bmeta"], p["hand"], moves, st, new_undo_stack(1))
    applied = apply_all(*args)
    benchmark.pedantic(apply_all, args=args, rounds=20, iterations=2, warmup_rounds=1)
    benchmark.extra_info["moves_applied_and_undone_per_second"] = applied / benchmark.stats.stats.median
