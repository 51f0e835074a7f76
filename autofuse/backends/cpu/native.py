"""Kernels loaded from the disk cache as shared libraries, called without numba.

A process that finds a kernel compiled used to import numba (200-450 ms on the 2-core machine)
to load numba's cached object code. Now the process that compiles a kernel also writes it as a
shared library (linking.py), one per argument signature numba compiled, and a later process
opens that with dlopen, fills its slots from numba's extension modules (runtime.py) and calls
numba's own CPython wrapper of the kernel: the code numba compiled, run as numba runs it (the
wrapper unboxes the arrays, releases the GIL and raises what the kernel raises), with numba's
Python package never imported.

Each call checks its arguments' signature (dtype, dimensions, layout, writability, alignment:
what numba's dispatcher types an array by) against the signatures written; any other (or
anything that fails to open: a missing or corrupted library, a slot nothing can fill) goes to
numba's dispatcher, which compiles or loads as it always did and then writes that signature's
library too.

Where libraries are: cpu/native/ beside the generated modules, an index per kernel and machine
(`<module>.<kernel>.<machine>.json`, listing signatures) and the libraries by content
(`<digest>.so`, each checked against the index's SHA-256 before it is opened). The machine key
hashes the CPU's model and feature flags and numba's environment settings, so a cache directory
shared by different machines never hands one another's code.
"""
from __future__ import annotations

import atexit
import ctypes
import hashlib
import json
import os
import queue
import sys
import threading
from pathlib import Path

import numpy as np

from .. import disk_cache
from . import runtime

INDEX_VERSION = 1
# "0": no libraries are written or loaded in this process (numba loads every kernel, as before);
# the test suite sets it, since writing costs 0.15-0.2 s a kernel and it compiles thousands
SWITCH = "AUTOFUSE_CPU_LIBRARIES"
# numba settings that do not change the code it compiles (threads are chosen at run time)
UNKEYED = ("NUMBA_NUM_THREADS", "NUMBA_THREADING_LAYER", "NUMBA_THREADING_LAYER_PRIORITY",
           "NUMBA_CACHE_DIR", "NUMBA_DEBUG_CACHE")
# /proc/cpuinfo lines that differ between the cores of one machine or over time
VOLATILE = ("processor", "cpu MHz", "bogomips", "BogoMIPS", "core id", "apicid", "initial apicid",
            "physical id", "siblings", "cpu cores")
_state: dict = {}


def machine() -> str | None:
    """This machine's key (CPU model and flags, numba's settings), or None where shared
    libraries are not used here (not Linux, no /proc/cpuinfo, NRT statistics on)."""
    if "machine" not in _state:
        _state["machine"] = _machine()
    return _state["machine"]


def _machine() -> str | None:
    if not sys.platform.startswith("linux") or os.environ.get("NUMBA_NRT_STATS") or \
            os.environ.get(SWITCH, "1") == "0":
        return None
    try:
        with open("/proc/cpuinfo", "rb") as file:
            first = file.read(1 << 16).split(b"\n\n")[0].decode(errors="replace")
    except OSError:
        return None
    lines = [line for line in first.splitlines()
             if line.split(":")[0].strip() not in VOLATILE]
    if not lines:
        return None
    settings = sorted(f"{k}={v}" for k, v in os.environ.items()
                      if k.startswith("NUMBA_") and k not in UNKEYED)
    return disk_cache.digest(os.uname().machine, *lines, *settings)[:16]


def index_path(module: Path, name: str, key: str) -> Path:
    return module.parent / "native" / f"{module.stem}.{name}.{key}.json"


def signature_of(args) -> tuple | None:
    """What numba's dispatcher types each argument by, or None where one is neither a plain array
    nor a NumPy scalar (a shared kernel's slice start or constant: backends/sharing.py)."""
    key = []
    for value in args:
        if isinstance(value, (np.number, np.bool_)):
            key.append(_scalar(value.dtype.str))
            continue
        if type(value) is not np.ndarray:
            return None
        flags = value.flags
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
        key.append((value.dtype.str, value.ndim, layout, not flags.writeable, flags.aligned))
    return tuple(key)


def entry_point(function, args):
    """What `function` (a `Function`, numba's dispatcher, or a library's wrapper) runs for
    arguments typed as `args` are, once a call has resolved them: the compiled code's CPython
    wrapper, called without the per-call dispatch (a `Function`'s key of flag bits, numba's
    typing of each argument), or None where nothing is resolved for them yet."""
    if isinstance(function, Function):
        function = function.opened.get(signature_of(args))
        if function is None or isinstance(function, _Remembering):
            return None
    overloads = getattr(function, "overloads", None)
    if overloads is None:
        return function                 # (a library's wrapper: its signature's own code)
    from numba import typeof            # (numba's dispatcher: numba is imported already)
    try:
        compiled = overloads.get(tuple(typeof(value) for value in args))
    except (TypeError, ValueError):
        return None
    return compiled.entry_point if compiled is not None else None


def load(module: Path, name: str, numba_function):
    """A `Function` for kernel `name` of generated module `module` where this machine has any
    of its libraries, else None. `numba_function()` gives numba's dispatcher (other signatures)."""
    key = machine()
    if key is None:
        return None
    try:
        index = json.loads(index_path(module, name, key).read_text())
        records = {_signature(r["args"]): r for r in index["signatures"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if index.get("version") != INDEX_VERSION or not records:
        return None
    arity = len(next(iter(records)))
    return _function_class(arity)(module, name, records, numba_function)


def _scalar(dtype: str) -> tuple:
    """A NumPy scalar's place in a signature (an array's is dtype, ndim, layout, read-only,
    aligned)."""
    return (dtype, -1, "S", False, True)


def _signature(args) -> tuple:
    return tuple((str(d), int(n), str(l), bool(r), bool(a)) for d, n, l, r, a in args)


# NumPy's array flags a signature depends on (NPY_ARRAY_C_CONTIGUOUS, _F_CONTIGUOUS, _ALIGNED,
# _WRITEABLE): arrays of one dtype, ndim and these bits have one `signature_of`
FLAGS = 0x0001 | 0x0002 | 0x0100 | 0x0400


class Function:
    """A kernel's callable: its shared library for a signature written, numba's dispatcher for
    any other.

    A call is keyed by each argument's dtype, ndim and the flag bits above (`_fast`): NumPy's
    own dtype objects live as long as the process, so their ids stand for them; the first call
    of a key computes its full signature (`_resolve`). Keyed this way a call costs about what
    numba's dispatcher costs (its typing is in C); computing signature_of every call doubled it.
    """

    def __init__(self, module: Path, name: str, records: dict, numba_function):
        self.module = module
        self.name = name
        self.records = records
        self.numba_function = numba_function
        self.opened = {}            # signature -> callable
        self.fast = {}              # (id(dtype), ndim, flag bits) per argument -> callable

    def _resolve(self, *args):
        key = signature_of(args)
        function = self.opened.get(key)
        if function is None:
            function = self.opened[key] = self._open(key)
        if key is not None and all(np.dtype(a.dtype.str) is a.dtype for a in args):
            self.fast[tuple(v for a in args for v in (type(a) is np.ndarray, id(a.dtype), a.ndim,
                                                      a.flags.num & FLAGS))] = function
        return function(*args)

    def _open(self, key):
        record = self.records.get(key)
        if record is not None:
            function = open_library(self.module.parent / "native", record)
            if function is not None:
                return function
        return _Remembering(self, key, stale=record is not None)

    def __call__(self, *args):
        return self._resolve(*args)


_ARITIES: dict = {}


def _function_class(arity: int) -> type:
    """Function with a `__call__` written out for `arity` arguments (no *args packing)."""
    if arity not in _ARITIES:
        names = ", ".join(f"a{i}" for i in range(arity))
        plain = " and ".join(f"(type(a{i}) is ndarray or isinstance(a{i}, scalar))"
                             for i in range(arity)) or "True"
        key = "".join(f"type(a{i}) is ndarray, id(a{i}.dtype), a{i}.ndim, a{i}.flags.num & FLAGS, "
                      for i in range(arity))
        text = (f"def __call__(self, {names}):\n"
                f"    if {plain}:\n"
                f"        function = self.fast.get(({key}))\n"
                f"        if function is not None:\n"
                f"            return function({names})\n"
                f"    return self._resolve({names})\n")
        space = {"ndarray": np.ndarray, "FLAGS": FLAGS, "scalar": (np.number, np.bool_)}
        exec(compile(text, f"<autofuse native call of {arity} arguments>", "exec"), space)
        _ARITIES[arity] = type(f"Function{arity}", (Function,), {"__call__": space["__call__"]})
    return _ARITIES[arity]


class _Remembering:
    """numba's dispatcher for one signature: its first successful call also writes the library
    for that signature (again, where the one written could not be opened), then the dispatcher
    takes its place."""

    def __init__(self, owner: Function, key, stale: bool):
        self.owner = owner
        self.key = key
        self.stale = stale

    def __call__(self, *args):
        dispatcher = self.owner.numba_function()
        result = dispatcher(*args)
        save(dispatcher, self.owner.module, self.owner.name,
             replace={self.key} if self.stale else set())
        self.owner.opened[self.key] = dispatcher
        self.owner.fast.clear()         # (keys that led here lead to the dispatcher now)
        return result


def open_library(directory: Path, record: dict):
    """The kernel's CPython wrapper as a callable, or None where the library cannot be used
    (missing, corrupted, or calling a threading layer that numba must choose)."""
    try:
        path = directory / record["library"]
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != record["sha256"]:
            return None
        addresses = dict(runtime.helper_addresses())
        if record.get("parallel"):
            layer = runtime.threads()
            if layer is None:
                return None
            addresses.update(layer.addresses)
        if any(slot not in addresses for slot in record["slots"]):
            return None
        library = ctypes.CDLL(str(path), mode=os.RTLD_NOW | os.RTLD_LOCAL)
        for slot in record["slots"]:
            ctypes.c_void_p.in_dll(library, "autofuse_slot_" + slot).value = addresses[slot]
        environment = runtime.environment()
        for symbol in record["environments"]:
            ctypes.c_void_p.in_dll(library, symbol).value = id(environment)
        address = ctypes.cast(library[record["wrapper"]], ctypes.c_void_p).value
        return runtime.make_function(record["name"], address, (library, environment))
    except (OSError, KeyError, ValueError, TypeError, AttributeError, ImportError):
        return None


def save(dispatcher, module: Path, name: str, replace: set = frozenset()) -> None:
    """Write a library for each signature `dispatcher` has compiled that this machine's index
    lacks (or lists in `replace`: its library did not open). A kernel that cannot be linked
    (linking.NotLinkable) leaves the index as it is, and later processes use numba for it."""
    key = machine()
    if key is None or not getattr(dispatcher, "overloads", None):
        return
    from . import linking
    path = index_path(module, name, key)
    try:
        index = json.loads(path.read_text())
        if index.get("version") != INDEX_VERSION:
            raise ValueError(index.get("version"))
    except (OSError, ValueError, KeyError):
        index = {"version": INDEX_VERSION, "signatures": []}
    index["signatures"] = [r for r in index["signatures"] if _signature(r["args"]) not in replace]
    have = {_signature(r["args"]) for r in index["signatures"]}
    bound = linking.bound_names(runtime.helper_addresses())
    added = False
    for signature, cres in list(dispatcher.overloads.items()):
        args = _numba_signature(signature)
        if args is None or _signature(args) in have:
            continue
        try:
            shared, facts = linking.build(cres, bound)
        except linking.NotLinkable:
            continue
        digest = hashlib.sha256(shared).hexdigest()
        library = f"{digest[:32]}.so"
        disk_cache.write_checked(path.parent / library, shared)
        facts.update(args=args, library=library, sha256=digest, name=name,
                     parallel=any(s in runtime.LAYER_SYMBOLS for s in facts["slots"]))
        index["signatures"].append(facts)
        have.add(_signature(args))
        added = True
    if added:
        disk_cache.write_checked(path, json.dumps(index, indent=1).encode())


def _numba_signature(signature) -> list | None:
    """numba's argument types as `signature_of` keys, or None where one is not an array of
    numbers (nothing is written for such a kernel)."""
    from numba.core import types
    from numba.np.numpy_support import as_dtype
    args = []
    for kind in signature:
        if isinstance(kind, (types.Integer, types.Float, types.Boolean)):
            args.append(list(_scalar(as_dtype(kind).str)))
            continue
        if not isinstance(kind, types.Array) or not isinstance(kind.dtype, (types.Number,
                                                                            types.Boolean)):
            return None
        args.append([as_dtype(kind.dtype).str, kind.ndim, kind.layout, not kind.mutable,
                     kind.aligned])
    return args


def forget(module: Path, name: str) -> None:
    """Drop this machine's index for a kernel (a first call failed: it compiles anew)."""
    key = machine()
    if key is not None:
        index_path(module, name, key).unlink(missing_ok=True)


# -- writing libraries off the first call's path ------------------------------------------------
# Linking a kernel as a library takes 0.15-0.2 s (re-emitting numba's code, then `ld`); done on the
# first call it made every cold first call that much longer per distinct kernel. A thread does it
# instead, holding numba's compiler lock (LLVM's context is not safe from two threads at once), so
# it runs while the program goes on; at exit the process waits for what is queued, at most
# EXIT_WAIT_SECONDS (a library not written is written by the next process that compiles it).
EXIT_WAIT_SECONDS = 60.0
QUIET_SECONDS = 0.5


class Saver:
    """A queue of kernels to write as libraries, and the thread that writes them (started at the
    first kernel queued). Each dispatcher is queued once per process."""

    def __init__(self):
        self.queue: queue.Queue = queue.Queue()
        self.queued: set = set()
        self.lock = threading.Lock()
        self.thread = None

    def wants(self, dispatcher) -> bool:
        """Whether `dispatcher` is still to be queued (not yet, and libraries are used here)."""
        return machine() is not None and id(dispatcher) not in self.queued

    def add(self, dispatcher, module: Path, name: str) -> None:
        with self.lock:
            if not self.wants(dispatcher):
                return
            self.queued.add(id(dispatcher))
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="autofuse-library-writer",
                                               daemon=True)
                self.thread.start()
                atexit.register(self.wait, EXIT_WAIT_SECONDS)
        self.queue.put((dispatcher, module, name))

    def _run(self) -> None:
        from numba.core.compiler_lock import global_compiler_lock
        while True:
            batch = [self.queue.get()]
            # (a program's first call compiles its kernels one after another: wait until it has
            # gone QUIET_SECONDS without queueing one, so writing does not hold up compiling)
            while True:
                try:
                    batch.append(self.queue.get(timeout=QUIET_SECONDS))
                except queue.Empty:
                    break
            for dispatcher, module, name in batch:
                try:
                    with global_compiler_lock:
                        save(dispatcher, module, name)
                except Exception:   # a library not written: later processes use numba for it
                    pass
                finally:
                    self.queue.task_done()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every queued kernel is written (or `timeout` seconds pass); True if so."""
        done = threading.Event()
        threading.Thread(target=lambda: (self.queue.join(), done.set()), daemon=True).start()
        return done.wait(timeout)


SAVER = Saver()
