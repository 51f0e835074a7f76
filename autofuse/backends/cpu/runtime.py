"""numba's C runtime without numba's Python package: what a kernel loaded as a shared library
(native.py) calls, found in numba's own extension modules.

Compiled numba code calls a few C functions that numba's Python package hands to LLVM when it
starts (core/base.py, core/runtime/nrt.py, np/ufunc/parallel.py): its helpers (`numba_*`, from
numba._helperlib and numba._dynfunc), its memory runtime (`NRT_*`, numba.core.runtime.
_nrt_python) and a threading layer's scheduler (numba.np.ufunc.omppool or workqueue). Those live
in small extension modules that load in about 2 ms, where `import numba` takes 200-450 ms on the
2-core machine. They are loaded here by file, under numba's module names and into sys.modules,
so that numba, if a later compile imports it, finds the same modules: one memory system and one
thread pool in the process. Their addresses are the ones numba itself binds, so a kernel linked
against them runs the code it runs under numba.

The threading layer is chosen as numba chooses it ($NUMBA_THREADING_LAYER, then
$NUMBA_THREADING_LAYER_PRIORITY, default tbb, omp, workqueue); where numba would take TBB (its
extension loads) or the setting names a purpose ("safe", ...), `threads()` says None and parallel
kernels keep numba's own path.
"""
from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import os
import sys
import threading
import types

_lock = threading.Lock()
_state: dict = {}

# Where numba's extension modules are, relative to its package, by module name.
EXTENSIONS = {"numba._helperlib": "_helperlib", "numba._dynfunc": "_dynfunc",
              "numba.core.runtime._nrt_python": os.path.join("core", "runtime", "_nrt_python")}
LAYERS = {"tbb": "numba.np.ufunc.tbbpool", "omp": "numba.np.ufunc.omppool",
          "workqueue": "numba.np.ufunc.workqueue"}
# The scheduler's functions a parallel kernel calls (parallel.py binds the same names)
LAYER_SYMBOLS = {"numba_parallel_for": "parallel_for", "do_scheduling_signed": None,
                 "do_scheduling_unsigned": None, "allocate_sched": None, "deallocate_sched": None,
                 "get_num_threads": None, "set_num_threads": None, "get_thread_id": None,
                 "set_parallel_chunksize": None, "get_parallel_chunksize": None,
                 "get_sched_size": None}


def numba_directory() -> str | None:
    """numba's package directory, found without importing it (None: not installed)."""
    if "numba" in sys.modules and getattr(sys.modules["numba"], "__file__", None):
        return os.path.dirname(sys.modules["numba"].__file__)
    try:
        spec = importlib.util.find_spec("numba")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def numba_version() -> str:
    """numba.__version__, read from numba/_version.py without importing numba (the key of every
    generated module and native library)."""
    if "version" not in _state:
        numba = sys.modules.get("numba")
        if numba is not None and hasattr(numba, "__version__"):
            _state["version"] = numba.__version__
        else:
            _state["version"] = _read_version()
    return _state["version"]


def _read_version() -> str:
    directory = numba_directory()
    path = os.path.join(directory, "_version.py") if directory else None
    if path and os.path.exists(path):
        spec = importlib.util.spec_from_file_location("_autofuse_numba_version", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.get_versions()["version"]
    import numba        # (an install without _version.py: ask numba itself)
    return numba.__version__


def extension(name: str):
    """numba's extension module `name`, loaded by file where numba has not loaded it."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    directory = numba_directory()
    if directory is None:
        raise ImportError("numba is not installed")
    relative = EXTENSIONS.get(name) or os.path.join("np", "ufunc", name.rsplit(".", 1)[1])
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(directory, relative + suffix)
        if os.path.exists(path):
            break
    else:
        raise ImportError(f"numba's extension {name} was not found in {directory}")
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules[name] = module
    return module


def helper_addresses() -> dict[str, int]:
    """Symbol name -> address of numba's C helpers and memory runtime, as numba binds them
    (base._load_global_helpers, externals.c_math_functions, nrt.Runtime.initialize)."""
    with _lock:
        if "helpers" not in _state:
            table = {}
            helperlib = extension("numba._helperlib")
            for py_name, address in helperlib.c_helpers.items():
                table["numba_" + py_name] = address
                table.setdefault(py_name, address)      # the C math functions, by their own names
            for py_name, address in extension("numba._dynfunc").c_helpers.items():
                table["numba_" + py_name] = address
            for py_name, address in extension("numba.core.runtime._nrt_python").c_helpers.items():
                table[py_name if py_name.startswith("_") else "NRT_" + py_name] = address
            _state["helpers"] = table
    return _state["helpers"]


class Layer:
    """A started threading layer: its scheduler's addresses and the per-thread count."""

    def __init__(self, name: str, module, count: int, launch: bool = True):
        self.name = name
        self.count = count
        self.addresses = {symbol: getattr(module, attribute or symbol)
                          for symbol, attribute in LAYER_SYMBOLS.items()}
        self._set = ctypes.CFUNCTYPE(None, ctypes.c_int)(module.set_num_threads)
        if launch:      # (as parallel._launch_threads does: start the pool, count this thread)
            ctypes.CFUNCTYPE(None, ctypes.c_int)(module.launch_threads)(count)
            self._set(count)

    def set_num_threads(self, count: int) -> None:
        """numba.set_num_threads for the calling thread (1 <= count <= self.count)."""
        self._set(count)


def thread_count() -> int:
    """numba.config.NUMBA_NUM_THREADS, computed as numba computes it."""
    value = os.environ.get("NUMBA_NUM_THREADS")
    if value:
        return int(value)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def threads() -> Layer | None:
    """The threading layer numba would start, started (once; numba's own where numba is
    imported), or None where numba must choose it (TBB, a purpose such as "safe", a
    .numba_config.yaml)."""
    with _lock:
        if "layer" not in _state:
            _state["layer"] = _start_layer()
    return _state["layer"]


def _start_layer() -> Layer | None:
    if "numba" in sys.modules:
        return _numba_layer()
    if os.path.exists(".numba_config.yaml"):
        return None
    chosen = os.environ.get("NUMBA_THREADING_LAYER", "default").lower()
    priority = os.environ.get("NUMBA_THREADING_LAYER_PRIORITY", "tbb omp workqueue").split()
    if chosen != "default":
        priority = [chosen]
    for name in priority:
        if name not in LAYERS:
            return None
        try:
            module = extension(LAYERS[name])
        except ImportError:
            continue
        if name == "tbb":
            return None     # numba checks TBB's version before it takes it: leave TBB to numba
        return Layer(name, module, thread_count())
    return None


def _numba_layer() -> Layer | None:
    """The layer numba started (numba is imported: it chooses, and starts it once)."""
    from numba.np.ufunc import parallel
    parallel._launch_threads()
    module = sys.modules.get(LAYERS.get(parallel._threading_layer, ""))
    if module is None:
        return None
    return Layer(parallel._threading_layer, module, thread_count(), launch=False)


def environment():
    """An empty numba execution environment (what a kernel's wrapper is handed; it holds the
    constants a returned object would need, and autofuse's kernels return a plain 0)."""
    with _lock:
        if "environment" not in _state:
            _state["environment"] = extension("numba._dynfunc").Environment({})
    return _state["environment"]


_MODULE = types.ModuleType("autofuse_native_kernels")


def make_function(name: str, address: int, keepalive: tuple):
    """A Python callable for the CPython wrapper at `address`, as numba makes a dispatcher's
    overload callable (cpu.CPUContext.get_executable)."""
    return extension("numba._dynfunc").make_function(
        _MODULE, name, f"native kernel {name}", address, environment(), keepalive)
