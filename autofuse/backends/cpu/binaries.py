"""Loading a generated function's compiled binary from numba's disk cache without starting
numba's compiler.

numba's cache (caching.Cache.load_overload) refreshes the CPU target before it loads anything:
it imports and installs every typing and lowering registry numba has (NumPy's functions,
linalg, which imports SciPy, random, typed containers...), which a compilation needs and a
load does not: loading links the cached object code into the JIT and looks up its entry
point. On the 2-core machine the refresh is about 1.5 times numba's own import; a new process
whose kernels are all cached paid it at the first call. A miss here compiles as numba always
does (its compiler refreshes the target itself, compiler.CompilerBase).

What a load does need is numba's runtime (NRT: allocation and reference counting, which the
generated code calls), so that is started first.
"""
from __future__ import annotations

from numba.core.caching import FunctionCache
from numba.core.runtime import rtsys


class LoadingCache(FunctionCache):
    """numba's per-function cache, loading without the target's registry refresh."""

    def load_overload(self, sig, target_context):
        rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)
        return None     # (the guard swallowed an I/O error: compile, as numba's own load does)


def load_lightly(dispatcher) -> None:
    """Give a `@numba.njit(cache=True)` dispatcher the cache above (same files, same keys)."""
    dispatcher._cache = LoadingCache(dispatcher.py_func)
