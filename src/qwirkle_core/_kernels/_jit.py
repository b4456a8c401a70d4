"""The one place that decides how kernels are compiled."""

import hashlib
import os
from pathlib import Path

import numba

CACHE = os.environ.get("QWIRKLE_NO_CACHE", "") in ("", "0")


def drop_stale_cache(folder=Path(__file__).parent):
    """Numba's on-disk cache notices edits to a kernel's own file only, not to the
    kernels it calls from other files (which it compiles in). So the whole cache is
    dropped whenever any kernel source changes (an upgrade, or a developer's edit): the
    stamp beside it is a hash of every kernel file."""
    cache = folder / "__pycache__"
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(folder.glob("*.py")))).hexdigest()
    stamp = cache / "kernels.stamp"
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    try:
        cache.mkdir(exist_ok=True)
        for f in cache.glob("*.nb[ic]"):
            f.unlink(missing_ok=True)
        stamp.write_text(digest)
    except OSError:  # a read-only install: numba then caches elsewhere
        pass


if CACHE:
    drop_stale_cache()


def njit(*args, **kwargs):
    """``numba.njit`` with on-disk caching on (unless ``QWIRKLE_NO_CACHE=1``)."""
    kwargs.setdefault("cache", CACHE)
    kwargs.setdefault("nogil", True)
    if args and callable(args[0]):
        return numba.njit(**kwargs)(args[0])
    return numba.njit(*args, **kwargs)


@njit
def keep(*arrays):
    """Nothing: a use of ``arrays`` that keeps them alive to this point (see
    :mod:`._kernels`, on reference counts)."""
