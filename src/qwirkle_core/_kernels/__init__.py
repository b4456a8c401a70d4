"""Numba kernels. Private: the public API in :mod:`qwirkle_core` validates input and wraps these.

Every kernel is ``@njit(cache=True)`` over plain numpy arrays and scalars. Set the
environment variable ``QWIRKLE_NO_CACHE=1`` to compile without the on-disk cache.
"""
