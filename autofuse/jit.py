"""`autofuse.jit`: trace once per signature, simplify, fuse, compile, and run through a cached plan."""
from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass

import numpy as np

from . import cached_call, tree
from .debug import STATE as _DEBUG, compiled as _debug_compiled, hit as _debug_hit, run_program as _debug_run
from .dlpack import foreign, import_leaves
from .errors import ValueNeeded
from .lowered import Lowered
from .options import check_options
from .signature import Binder, static_key
from .tree import numeric_sequence
from .trace.context import current
from . import stages
from .autotune import tuned
from .running import run
from .stages import build
from .trace.budget import MAX_OPS
from .dynamic.classes import MAX_FAST, Classes
from .fastpath import _SCALARS, fast_key, native_key, tuple_key


@dataclass
class CacheInfo:
    """How the per-signature cache has been used: traces (misses), hits, and entries held."""
    traces: int = 0
    hits: int = 0
    entries: int = 0
    compiles: int = 0          # programs compiled: one a signature, or one a shape class
    instances: int = 0         # shape-class programs set up at a call's sizes (no compile)


class JitFunction:
    """A NumPy-style function compiled per call signature. Call it like the original."""

    def __init__(self, fn, static_argnames=(), static_argnums=(), backend="auto",
                 cuda_graph=None, float16="numpy", tuning=None, max_ops=MAX_OPS, dynamic=None,
                 matmul_precision="float32", fft_limits=None, autotune=True):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.backend = backend
        self.options = {"cuda_graph": cuda_graph, "float16": float16, "tuning": tuning,
                        "max_ops": max_ops, "matmul_precision": matmul_precision,
                        "fft_limits": fft_limits}
        self.autotune = autotune
        self._binder = Binder(fn, static_argnames, static_argnums)
        self._flat = self._binder.positional    # positional calls may take the fast path
        self._cache: dict = {}
        self._fast: dict = {}          # fast_key of a flat positional call -> caller(entry)
        # structure -> leaves a trace needed by value (Python ints deciding shapes, axes, loop
        # counts): later calls key on their values without a failed trace first
        self._learned: dict = {}
        self._fast_values: tuple = ()  # argument positions whose values join the fast key
        self._writes = False           # a program of it writes an argument: the fast key holds
        #                                NumPy's writeable flag (fastpath.fast_key)
        self._lock = threading.Lock()
        self._info = CacheInfo()
        self._classes = Classes(dynamic)   # shape classes (autofuse/dynamic/)

    def cache_info(self) -> CacheInfo:
        return CacheInfo(self._info.traces, self._info.hits, len(self._cache),
                         self._info.traces, self._classes.made)

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()
            self._fast.clear()
            self._classes.clear()

    def _entry(self, args, kwargs, backend=None, running=True):
        """(entry, leaves, imported): the built program for this call's signature, the call's
        leaves, and its DLPack-only arguments' record (dlpack.Imported; None where none)."""
        from .backends import choose_backend
        args, kwargs = self._binder.bind(args, kwargs)
        key, leaves, statics, structure = self._binder.split(args, kwargs, self._learned)
        imported = None
        if any(map(foreign, leaves)):
            leaves, imported = import_leaves(self._binder.name, leaves)
            args, kwargs = tree.unflatten(structure, leaves)
            key, leaves, statics, structure = self._binder.split(args, kwargs, self._learned)
        backend = choose_backend(backend or self.backend, leaves, running)
        entry = self._cache.get((backend, key)) or self._classes.instances.get((backend, key))
        if entry is not None:
            self._info.hits += 1
            return entry, _as_arrays(leaves, statics), imported
        with self._lock:
            while True:
                entry = self._cache.get((backend, key))
                if entry is not None:
                    self._info.hits += 1
                    break
                try:
                    entry, built = self._classes.find(self, self._cache, key, args, kwargs, leaves,
                                                      statics, structure, backend)
                    self._info.traces += built
                    if entry is not None:
                        break
                    entry = self._build(structure, leaves, statics, backend)
                    if self.autotune:
                        entry = self._tuned(entry, structure, leaves, statics, backend, key,
                                            running)
                    entry.dynamic = self._classes.reasons(structure, args, kwargs, self,
                                                          (backend, key))
                except ValueNeeded as need:
                    self._learn(structure, leaves, statics, need)
                    key, leaves, statics, structure = self._binder.split(args, kwargs, self._learned)
                    continue
                entry.specialized = self._specialized(args, kwargs, structure, statics)
                self._cache[(backend, key)] = entry
                if _DEBUG.active:
                    _debug_compiled(entry)
                break
        return entry, _as_arrays(leaves, statics), imported

    def _build(self, structure, leaves, statics, backend):
        start = time.perf_counter()
        entry = build(self.fn, structure, leaves, statics, backend, self._binder.name, self.options)
        entry.build_seconds = time.perf_counter() - start
        self._info.traces += 1
        return entry

    def _tuned(self, entry, structure, leaves, statics, backend, key, running: bool):
        """`entry` or the program its backend's candidates timed fastest (autofuse/autotune.py);
        `running` False (lower()): only a choice remembered on disk."""
        from .backends import get_backend

        def assemble(options):
            candidate = stages.assemble(self.fn, structure, leaves,
                                        stages.leaf_specs(leaves, statics, self._binder.name),
                                        statics, backend, self._binder.name, options)
            candidate.function_key = entry.function_key
            return candidate
        start = time.perf_counter()
        chosen = tuned(entry, assemble, get_backend(backend), _as_arrays(leaves, statics), key,
                       timing=running)
        chosen.build_seconds = entry.build_seconds + (time.perf_counter() - start)
        return chosen

    def _learn(self, structure, leaves, statics, need: ValueNeeded) -> None:
        """Remember that this call structure's leaves `need.leaves` are needed by value, as
        numba's literal dispatch does; the next split keys on their values."""
        new = need.leaves - set(statics)
        if not new:
            raise need
        for index in new:
            try:
                hash(static_key(leaves[index]))
            except TypeError:
                raise need from None
        self._learned[structure] = self._learned.get(structure, frozenset()) | new
        # NOTE: learned leaf indices are argument positions in a flat positional call (the only
        # calls the fast path takes); the fast key must hold their values from now on.
        self._fast_values = tuple(sorted(set(self._fast_values) | new))
        self._fast.clear()

    def _specialized(self, args, kwargs, structure, statics) -> dict:
        """name -> value of the leaves this entry took by value because the trace needed them."""
        learned = self._learned.get(structure, frozenset())
        if not learned:
            return {}
        names = self._binder.leaf_names(args, kwargs)
        return {names[index]: statics[index] for index in sorted(learned) if index in statics}

    def __call__(self, *args, **kwargs):
        # NOTE: the fast path: a flat positional call is looked up by a cheap per-argument key
        # (type, shape, dtype, strides), skipping binding, flattening and backend choice, and
        # runs what its signature's first call chose (caller()).
        if _DEBUG.active:
            return self._call_debug(args, kwargs)
        fast = None
        if self._flat and not kwargs:
            # (self._fast_key, written out: a method call was a tenth of a small call's cost)
            fast = native_key(args, self._writes)
            if fast is None:
                fast = tuple_key(args, self._writes)
            if fast is not None:
                if self._fast_values:
                    fast = (fast, self._values_key(args))
                call = self._fast.get(fast)
                if call is not None:
                    self._info.hits += 1
                    return call(args)
        if current() is not None:
            # NOTE: called inside another function's trace (a jitted helper, jit of a gradient):
            # its body joins that trace, to be fused with the rest.
            return self.fn(*args, **kwargs)
        entry, leaves, imported = self._entry(args, kwargs)
        result = run(entry, leaves)
        if imported is not None:
            return imported.back(result)
        if fast is not None and len(leaves) == len(args):
            # NOTE: chosen after the run: a program settles how it runs on its first call (CUDA:
            # its generated host call, where one applies). The key is made again: this call may
            # have learned that an argument is needed by value.
            if len(self._fast) >= MAX_FAST:
                self._fast.clear()
            if entry.traced.mutations and not self._writes:
                # NOTE: keys made without the flag would lead a read-only array to this
                # program, which writes it: from now on they hold it
                self._writes = True
                self._fast.clear()
            self._fast[self._fast_key(args)] = caller(entry, args)
        return result

    def _fast_key(self, args):
        key = fast_key(args, self._writes)
        if key is not None and self._fast_values:
            key = (key, self._values_key(args))
        return key

    def _values_key(self, args) -> tuple:
        """The fast key's part for arguments whose values a trace needed (_learn)."""
        return tuple(static_key(args[i]) if type(args[i]) in _SCALARS else None
                     for i in self._fast_values if i < len(args))

    def _call_debug(self, args, kwargs):
        """A call while debug output may be due (autofuse.debug / $AUTOFUSE_DEBUG): the full path."""
        entry, leaves, imported = self._entry(args, kwargs)
        _debug_hit(entry)
        result = _debug_run(entry, lambda: run(entry, leaves))
        return result if imported is None else imported.back(result)

    def lower(self, *args, backend=None, **kwargs) -> Lowered:
        """The program autofuse builds for these arguments, for inspection; runs nothing."""
        entry, _, _ = self._entry(args, kwargs, backend, running=False)
        return Lowered(entry)

    def __repr__(self):
        return f"<autofuse.jit {self._binder.name}>"

    def __get__(self, instance, owner):
        if instance is None:
            return self
        return functools.partial(self, instance)


def _as_arrays(leaves: list, statics: dict) -> list:
    """The call's leaves as the program reads them: a traced list or tuple of numbers becomes
    np.asarray of it at the call boundary (one whose value the trace needed stays itself)."""
    if not any(type(leaf) in (list, tuple) for leaf in leaves):
        return leaves
    return [np.asarray(leaf) if index not in statics and numeric_sequence(leaf) else leaf
            for index, leaf in enumerate(leaves)]


def caller(entry, args: tuple):
    """What a cached flat call like `args` runs, as a function of the argument tuple: straight
    the program's generated call where run() would add nothing, else the entry's generated call
    (cached_call.py), else run(entry, args)."""
    # NOTE: a program's `fast` (the backends' generated host call: cpu/host.py, cuda/runtime/
    # host.py) is its call for this signature while no debug output is due (__call__ checks): it
    # reads the inputs in graph order and returns new arrays only, so a single array result
    # needs none of run()'s assembly or copying.
    direct = getattr(entry.program, "fast", None)
    if direct is not None and entry.single_array and entry.input_leaves == tuple(range(len(args))):
        one = getattr(entry.program, "fast_one", None)      # (CPU: the result, not a list)
        return one if one is not None else lambda call_args: direct(call_args)[0]
    generated = cached_call.build(entry, args, run) if direct is not None else None
    return generated if generated is not None else functools.partial(run, entry)


def jit(fn=None, *, static_argnames=(), static_argnums=(), backend="auto", cuda_graph=None,
        float16="numpy", tuning=None, max_ops=MAX_OPS, dynamic=None, matmul_precision="float32",
        fft_limits=None, autotune=True):
    """Compile a NumPy-style function: `@autofuse.jit` or `@autofuse.jit(static_argnames=("axis",))`.

    `cuda_graph` says how the CUDA backend launches a signature's kernels once its arguments are
    device arrays (autofuse/backends/cuda/runtime/graph.py): by default (None) as one CUDA graph, one
    driver launch a call, with intermediates allocated per call like results, unless a call
    moves 32 MiB or more a kernel: then the kernels launch one by one, each starting while the
    one before it ends (the graph's saving is host time, which such a call hides); `True` lets
    the graph own its intermediates (no allocation for them per call, kept while the signature
    is cached; like torch.compile's mode="reduce-overhead"); `False` launches the kernels one by
    one (calls of one signature on different streams may then overlap; a graph's launches are
    ordered). Results are the same; other backends ignore it.

    `float16` says how CUDA kernels round float16 values: "numpy" (the default) rounds every
    float16 op's result to float16 before the next op reads it, as NumPy does (same answers,
    an overflowing intermediate is inf); "float32" keeps a fused chain's float16 intermediates,
    reductions and matmul sums in float32 and rounds only what is stored or cast with
    `.astype(np.float16)`, as torch.compile and jax.jit do: fewer conversions (measured in
    BENCHMARKS.md), answers closer to the exact ones than NumPy's. Other backends compute float16
    as NumPy does.

    `matmul_precision`: CUDA float32 products on CUDA cores ("float32", the default), or on tensor
    cores as "tf32" (operands rounded to 10 fraction bits: ~1e-3 relative error, jax's default)
    or "3xtf32" (a high and a low TF32 part each, three products: about 10x float32's error
    over K = 4096, since the tensor cores' float32 sums truncate). float64 and float16 products
    take the tensor cores whatever this says (Tuning(mma=False) keeps them on the CUDA cores).

    `tuning` (an `autofuse.backends.cuda.Tuning`) compiles CUDA kernels with other generator
    values than the defaults, e.g. `Tuning(threads=128)`; other backends ignore it.

    `fft_limits` (an `autofuse.FourierLimits`) says which np.fft transforms run as the array
    library's FFT between kernels and which as traced kernels fused with their neighbours
    (autofuse/ir/fourier_plan.py): by default those of a length above 16, or with no elementwise
    neighbour, run by the library (scipy.fft or np.fft on the CPU; cupy.fft or torch.fft on the
    GPU); `FourierLimits(library=None)` traces every one, `max_traced_length=` moves the line.

    `autotune`: where a CUDA planning choice sits near the bound it was measured at (a
    whole-column program of 8-32 MiB: column tiles, or a kernel a level), the first call with
    the arguments on the device compiles both programs, times them on those arguments and keeps
    the faster, remembered on disk per GPU and signature (autofuse/autotune.py; every kernel's
    reason says what was timed). False takes the planner's choice untimed.

    `max_ops` bounds the operations one trace records (Python loops unroll while tracing, and
    compiling takes time in proportion, about 0.1 ms an operation): past it the call raises a
    TraceError naming the loop and what to change (autofuse/trace/budget.py).

    `dynamic` says which sizes compile once per class of shapes rather than once per shape
    (autofuse/dynamic/): None (the default) makes a dimension of an array argument dynamic once
    calls have shown two sizes in it; True makes every dimension dynamic from the first call;
    False specializes every shape. A dynamic dimension is a runtime argument of the kernels where
    the program allows it; one the function decides on (an `if`, a loop count, int(), a reshape
    that merges it) stays static, with the reason in `f.lower(...).as_text()`. Sizes 0 and 1 run
    the class program where it was checked to be theirs, else compile on their own.

    >>> import numpy as np, autofuse
    >>> @autofuse.jit
    ... def scale(x):
    ...     return x * 2 + 1
    >>> scale(np.arange(3.0))
    array([1., 3., 5.])
    """
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    if isinstance(static_argnums, (str, bytes)) or not hasattr(static_argnums, "__iter__"):
        static_argnums = (static_argnums,)      # one number (or a bad value, refused by Binder)
    check_options(cuda_graph, float16, tuning, max_ops, dynamic, matmul_precision, fft_limits,
                  autotune)

    def decorate(function):
        return JitFunction(function, static_argnames, static_argnums, backend, cuda_graph, float16,
                           tuning, max_ops, dynamic, matmul_precision, fft_limits, autotune)

    return decorate if fn is None else decorate(fn)
