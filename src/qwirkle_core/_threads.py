"""The numba thread count of a parallel kernel call, set and restored in one place."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numba

from ._checks import check_threads

__all__ = ["available_threads", "numba_threads"]


def available_threads() -> int:
    """The most threads a kernel may use (numba's thread pool size: the cores)."""
    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]


@contextmanager
def numba_threads(threads: Any) -> Iterator[int]:
    """Run the block with ``threads`` numba threads (None: all; checked, capped at the
    cores) and restore the previous count after; yields the count used."""
    n = check_threads(threads, available_threads())
    old = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield n
    finally:
        numba.set_num_threads(old)
