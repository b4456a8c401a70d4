"""Per-game random streams: splitmix64 over a small uint64 state.

A stream is one ``uint64`` slot in a state array; every draw advances that slot
only, so a game's draws depend on nothing but its own seed.
"""

import numpy as np

from ._jit import njit
from .layout import R_AGENTS, R_GAME

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_SALT_GAME = np.uint64(0x51A7E5B00C1D2E3F)
_SALT_AGENT = np.uint64(0xA6E27C0FFEE15EED)


@njit
def mix64(z):
    """The splitmix64 finaliser: a bijective hash of one uint64."""
    z = np.uint64(z)
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit
def next_u64(state, stream):
    """Advance ``state[stream]`` (uint64 array) and return the next uint64."""
    state[stream] = state[stream] + _GOLDEN
    return mix64(state[stream])


@njit
def below(state, stream, n):
    """A uniform int in ``[0, n)`` (n >= 1) from stream ``stream``; bias < n / 2**64."""
    return np.int64(next_u64(state, stream) % np.uint64(n))


@njit
def seed_streams(state, seed):
    """Initialise the two streams of one game from its 64-bit seed.

    ``state[R_GAME]`` is the game stream (shuffle, draws, exchanges);
    ``state[R_AGENTS]`` is the agents' stream (tie-breaks, random choices), so that a game replayed
    through :class:`qwirkle_core.Game` draws the same tiles as inside a batch.
    """
    s = np.uint64(seed)
    state[R_GAME] = mix64(s ^ _SALT_GAME)
    state[R_AGENTS] = mix64(s ^ _SALT_AGENT)


@njit
def game_seed(batch_seed, index):
    """The seed of game ``index`` of a batch started with ``batch_seed``."""
    return mix64(mix64(np.uint64(batch_seed)) + np.uint64(index) * _GOLDEN)
