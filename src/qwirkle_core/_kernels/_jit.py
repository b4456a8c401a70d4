"""The one place that decides how kernels are compiled."""

import os

import numba

CACHE = os.environ.get("QWIRKLE_NO_CACHE", "") in ("", "0")


def njit(*args, **kwargs):
    """``numba.njit`` with on-disk caching on (unless ``QWIRKLE_NO_CACHE=1``)."""
    kwargs.setdefault("cache", CACHE)
    kwargs.setdefault("nogil", True)
    if args and callable(args[0]):
        return numba.njit(**kwargs)(args[0])
    return numba.njit(*args, **kwargs)
