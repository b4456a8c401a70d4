"""The one place that decides how kernels are compiled."""

import ctypes
import hashlib
import os
from pathlib import Path

import numba
import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba.core import cgutils, types
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


def _prefetch_codegen(context, builder, signature, args):
    arrayty, indexty = signature.args
    array = context.make_array(arrayty)(context, builder, args[0])
    values = cgutils.unpack_tuple(builder, args[1])
    index = [context.cast(builder, v, t, types.intp) for v, t in zip(values, indexty.types)]
    pointer = cgutils.get_item_pointer(context, builder, arrayty, array, index, wraparound=False)
    i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0"
    )
    builder.call(fn, [builder.bitcast(pointer, i8p), i32(1), i32(3), i32(1)])  # for writing, keep, data
    return context.get_dummy_value()


@intrinsic
def prefetch(typingctx, array, *index):
    """Ask the CPU to bring the cache line of ``array[index]`` (one integer per axis, not
    bounds-checked: a prefetch of any address is harmless) into its caches, for reading
    and writing, without waiting for it: for data a kernel will touch a few microseconds
    later (a hint; no effect on any value)."""
    if len(index) != array.ndim or not all(isinstance(t, types.Integer) for t in index):
        return None
    return types.none(array, types.StarArgTuple.from_types(index)), _prefetch_codegen


@njit(inline="always")
def copy_into(dst, src):
    """``dst[:] = src`` for 1-d arrays of the same length, element by element: a slice
    assignment compiles numba's shape-mismatch error, whose formatted message (numba's
    string formatting) cost the search agent's first compile about 3 s."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


class External:
    """A kernel that other kernels call through a pointer, not by linking it in.

    Numba links a callee's code into every caller's library and optimises and generates
    machine code for all of it again there, so a large callee (the endgame solver, the
    search's playouts) is compiled once for itself and once more in each kernel above it.
    ``External(name, restype)`` is a call that is not linked: ``ext.call(*args)`` in a
    kernel loads the callee's address from a cell (a symbol, ``qwirkle_core.<name>``,
    that this process registers when it creates the External) and calls it with numba's
    calling convention (its errors raise in the caller as usual). The caller compiles
    without the callee, so both can compile at the same time, in different processes,
    and the caller's cached machine code holds no address.

    :meth:`bind` fills the cell in this process (it compiles the callee for the given
    argument types or loads it from the disk cache). A call with the cell empty, or bound
    for other argument types than the caller passes, raises RuntimeError instead.
    ``restype(*argtypes)``: the callee's numba return type for its argument types (the
    caller is typed without compiling the callee; :meth:`bind` checks it).
    """

    def __init__(self, name, restype):
        self.name = name
        self.restype = restype
        self.symbol = f"qwirkle_core.{name}"
        self.cell = (ctypes.c_uint64 * 2)()  # the callee's address, the hash of its types
        llvm.add_symbol(self.symbol, ctypes.addressof(self.cell))
        self.call = self._intrinsic()

    def signature_hash(self, argtypes):
        """64 bits that name the callee's argument and return types."""
        text = repr((tuple(str(t) for t in argtypes), str(self.restype(*argtypes))))
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")

    def bind(self, dispatcher, argtypes):
        """Compile ``dispatcher`` for ``argtypes`` (numba types; or load it from the disk
        cache) and point the calls at it."""
        argtypes = tuple(argtypes)
        dispatcher.compile(argtypes)
        cres = dispatcher.overloads[argtypes]
        expected = self.restype(*argtypes)
        if cres.signature.return_type != expected:
            raise TypeError(f"{self.name} returns {cres.signature.return_type}, not {expected}")
        self.cell[0] = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
        self.cell[1] = self.signature_hash(argtypes)

    def _intrinsic(self):
        ext = self

        def codegen(context, builder, signature, args):
            argtypes = signature.args[0].types
            args = cgutils.unpack_tuple(builder, args[0])
            i64 = ir.IntType(64)
            cell = builder.module.globals.get(ext.symbol)
            if cell is None:
                cell = ir.GlobalVariable(builder.module, ir.ArrayType(i64, 2), ext.symbol)
                cell.linkage = "external"
            zero = ir.Constant(ir.IntType(32), 0)
            address = builder.load(builder.gep(cell, [zero, zero]))
            bound = builder.load(builder.gep(cell, [zero, ir.Constant(ir.IntType(32), 1)]))
            wanted = ir.Constant(i64, ext.signature_hash(argtypes))
            with cgutils.if_unlikely(builder, builder.icmp_unsigned("!=", bound, wanted)):
                message = f"{ext.name} is not bound for these argument types (External.bind)"
                context.call_conv.return_user_exc(builder, RuntimeError, (message,))
            fnty = context.call_conv.get_function_type(signature.return_type, argtypes)
            callee = builder.inttoptr(address, fnty.as_pointer())
            status, result = context.call_conv.call_function(builder, callee, signature.return_type, argtypes, args)
            with cgutils.if_unlikely(builder, status.is_error):
                context.call_conv.return_status_propagate(builder, status)
            return result

        @intrinsic
        def call(typingctx, *args):
            return ext.restype(*args)(types.StarArgTuple.from_types(args)), codegen

        return call


class Table:
    """A read-only numpy array that kernels read from a cell of this process, not as an
    argument: ``table.get()`` in a kernel returns ``(pointer, length)``, which
    ``numba.carray(pointer, (length,))`` makes an array (no reference counts). Like
    :class:`External`'s calls, the cell is a symbol (``qwirkle_core.<name>``) that
    this process registers, so the cached machine code holds no address and a table
    can be bound (:meth:`bind`) after the kernels were compiled, and bound again.
    Unbound, the length is 0. The table keeps the array it is bound to alive.
    """

    def __init__(self, name, dtype):
        self.name = name
        self.dtype = np.dtype(dtype)
        self.symbol = f"qwirkle_core.{name}"
        self.cell = (ctypes.c_uint64 * 2)()  # the array's address, its length
        self.array = None
        llvm.add_symbol(self.symbol, ctypes.addressof(self.cell))
        self.get = self._intrinsic()

    def bind(self, array):
        """Point the kernels' reads at ``array`` (1-d, of this table's dtype; copied
        when not contiguous)."""
        array = np.ascontiguousarray(array, self.dtype)
        if array.ndim != 1:
            raise ValueError(f"{self.name}: a table is 1-d")
        self.array = array
        self.cell[0] = array.ctypes.data
        self.cell[1] = array.shape[0]

    def _intrinsic(self):
        table = self
        elem = numba.from_dtype(self.dtype)
        rtype = types.Tuple((types.CPointer(elem), types.int64))

        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            cell = builder.module.globals.get(table.symbol)
            if cell is None:
                cell = ir.GlobalVariable(builder.module, ir.ArrayType(i64, 2), table.symbol)
                cell.linkage = "external"
            zero = ir.Constant(ir.IntType(32), 0)
            address = builder.load(builder.gep(cell, [zero, zero]))
            length = builder.load(builder.gep(cell, [zero, ir.Constant(ir.IntType(32), 1)]))
            pointer = builder.inttoptr(address, context.get_value_type(types.CPointer(elem)))
            return context.make_tuple(builder, rtype, (pointer, length))

        @intrinsic
        def get(typingctx):
            return rtype(), codegen

        return get
