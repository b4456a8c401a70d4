"""The one place that decides how kernels are compiled."""

import hashlib
import os
from pathlib import Path

import numba
from numba.core import types
from numba.extending import intrinsic

CACHE = os.environ.get("QWIRKLE_NO_CACHE", "") in ("", "0")


def drop_stale_cache(folder=Path(__file__).parent, cache=None):
    """Numba's on-disk cache notices edits to a kernel's own file only, not to the
    kernels it calls from other files (which it compiles in). So the whole cache is
    dropped whenever any kernel source in ``folder`` changes (an upgrade, or a
    developer's edit): the stamp beside it is a hash of every kernel file. ``cache``:
    the cache folder (default ``folder/__pycache__``; numba's choice, under
    ``NUMBA_CACHE_DIR`` when that is set, is :func:`cache_folder`)."""
    cache = folder / "__pycache__" if cache is None else cache
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(folder.glob("*.py")))).hexdigest()
    stamp = cache / "kernels.stamp"
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    try:
        cache.mkdir(parents=True, exist_ok=True)
        for f in cache.glob("*.nb[ic]"):
            f.unlink(missing_ok=True)
        stamp.write_text(digest)
    except OSError:  # a read-only install: numba then caches elsewhere
        pass


def _here():
    """A function of this folder, for :func:`cache_folder` (every kernel file here
    shares one cache folder)."""


def _cache_impl(func):
    from numba.core.caching import CompileResultCacheImpl

    return CompileResultCacheImpl(func)


def cache_folder():
    """The folder numba keeps the kernels' disk cache in: ``_kernels/__pycache__``, or
    one under ``NUMBA_CACHE_DIR`` when that is set (or elsewhere for a read-only
    install). None when numba finds none."""
    try:
        return Path(_cache_impl(_here).locator.get_cache_path())
    except RuntimeError:  # numba: no locator for this file
        return None


def is_cached(kernel):
    """Whether the dispatcher ``kernel`` has an index in the disk cache, so that its
    first call loads it rather than compiling it (a cache of an older numba, or of
    other argument types, still compiles)."""
    if not CACHE:
        return False
    try:
        impl = _cache_impl(kernel.py_func)
    except RuntimeError:
        return False
    return (Path(impl.locator.get_cache_path()) / f"{impl.filename_base}.nbi").exists()


if CACHE:
    drop_stale_cache(cache=cache_folder())


def njit(*args, **kwargs):
    """``numba.njit`` with on-disk caching on (unless ``QWIRKLE_NO_CACHE=1``)."""
    kwargs.setdefault("cache", CACHE)
    kwargs.setdefault("nogil", True)
    if args and callable(args[0]):
        return numba.njit(**kwargs)(args[0])
    return numba.njit(*args, **kwargs)


@intrinsic
def keep(typingctx, *arrays):
    """Nothing: a use of ``arrays`` that keeps them alive to this point (see
    :mod:`._kernels`, on reference counts). An intrinsic, not a kernel: it emits no
    code and compiles nothing of its own (a kernel of ``*arrays`` was compiled once
    per distinct list of argument types, a dozen times in a batch kernel)."""

    def codegen(context, builder, signature, args):
        return context.get_dummy_value()

    return types.none(types.StarArgTuple.from_types(arrays)), codegen


@njit(inline="always")
def copy_into(dst, src):
    """``dst[:] = src`` for 1-d arrays of the same length, element by element: a slice
    assignment compiles numba's shape-mismatch error, whose formatted message (numba's
    string formatting) cost the search agent's first compile about 3 s."""
    for i in range(src.shape[0]):
        dst[i] = src[i]
