"""Debug output: what autofuse compiles and launches, printed to stderr at fixed levels.

Set the level for a whole process with the environment variable ``AUTOFUSE_DEBUG`` (read once,
when autofuse is imported), or for a block of code with the context manager::

    with autofuse.debug(2):
        f(x)

Each level prints everything the levels below it print:

===== ======================================================================================
level what is printed (to stderr, each line starting ``[autofuse]``)
===== ======================================================================================
0     nothing (the default)
1     one line per compile: function, signature, backend, ops -> groups by kind, build time,
      ``miss``; and one ``hit`` line the first time a call finds that signature already
      compiled (later hits print nothing, so a loop does not flood the terminal)
2     one line per kernel launch: kernel, strategy (CUDA: grid x block), elements, host wall
      time of the step. CUDA launches are asynchronous: at level 2 and above autofuse
      synchronizes the stream after each launch so the time is the kernel's; below level 2 it
      never synchronizes. The ``numpy`` backend prints one line per call instead.
3     the traced and the fused program (``Lowered.as_text``) at each compile
4     the generated source of each kernel at each compile, and the CUDA backend's generated host
      call (or CUDA graph replay) at a signature's first call
5     the PTX of each kernel at each compile (CUDA backend; compiles the PTX if not yet done)
===== ======================================================================================

``autofuse.debug(level)`` overrides the environment variable inside its block, for the calling
thread (and asyncio task) only: other threads keep the level they had. Blocks nest; leaving one
restores the level before it. ``autofuse.debug_level()`` says the level in effect here.

With the level 0 everywhere, a call pays one attribute check (``STATE.active``) on its path.
"""
from __future__ import annotations

import contextvars
import os
import sys
import threading
import time

from .errors import ArgumentError
from .lowered import Lowered, class_text, signature_text

MAX_LEVEL = 5
ENV = "AUTOFUSE_DEBUG"
_override: contextvars.ContextVar = contextvars.ContextVar("autofuse_debug", default=None)
_lock = threading.Lock()
_print_lock = threading.Lock()


class _State:
    """`active` is False exactly when no debug output can be due anywhere (the hot-path check)."""
    __slots__ = ("env_level", "blocks", "active")

    def __init__(self):
        self.env_level = 0
        self.blocks = 0          # debug() blocks open in any thread
        self.active = False

    def update(self) -> None:
        self.active = self.env_level > 0 or self.blocks > 0


STATE = _State()


def _parse_env(value: str | None) -> int:
    if value is None or value.strip() == "":
        return 0
    try:
        level = int(value)
    except ValueError:
        emit(f"ignoring {ENV}={value!r}: expected an integer level 0..{MAX_LEVEL}")
        return 0
    return max(0, min(level, MAX_LEVEL))


def debug_level() -> int:
    """The debug level in effect for the calling thread."""
    level = _override.get()
    return STATE.env_level if level is None else level


class debug:
    """Print autofuse's debug output at `level` (0..5) inside a `with` block, for this thread."""

    def __init__(self, level: int = 1):
        if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level <= MAX_LEVEL:
            raise ArgumentError(f"autofuse.debug(level): level must be an int 0..{MAX_LEVEL}, "
                                f"got {level!r}")
        self.level = level
        self._tokens = []

    def __enter__(self):
        self._tokens.append(_override.set(self.level))
        with _lock:
            STATE.blocks += 1
            STATE.update()
        return self

    def __exit__(self, *exc):
        _override.reset(self._tokens.pop())
        with _lock:
            STATE.blocks -= 1
            STATE.update()
        return False

    def __repr__(self):
        return f"autofuse.debug({self.level})"


def emit(text: str) -> None:
    """Write lines to stderr, each prefixed, without interleaving with other threads."""
    lines = "".join(f"[autofuse] {line}\n" for line in text.splitlines() or [""])
    with _print_lock:
        stream = sys.stderr
        stream.write(lines)
        stream.flush()


# -- what the hooks print ------------------------------------------------------------------------

def _kinds_text(fused) -> str:
    summary = fused.summary()
    kinds = ", ".join(f"{kind} {count}" for kind, count in summary["kinds"].items()) or "none"
    groups = summary["groups"]
    return f"{summary['ops']} ops -> {groups} group{'s' if groups != 1 else ''} ({kinds})"


def compiled(entry) -> None:
    """Hook: `entry` was just built (a cache miss). Called only when STATE.active."""
    level = debug_level()
    if level < 1:
        return
    entry.debug_reported = True
    specialized = ""
    if entry.specialized:
        specialized = f" (specialized by value: {', '.join(entry.specialized)})"
    emit(f"compile {signature_text(entry)} backend={entry.backend}: {_kinds_text(entry.fused)}"
         f" in {entry.build_seconds * 1e3:.1f} ms [miss]{specialized}{class_text(entry)}")
    if level >= 3:
        lowered = Lowered(entry)
        emit(lowered.as_text("traced"))
        emit(lowered.as_text("fused"))
    if level >= 4:
        for kernel in entry.kernels:
            if kernel.source is None:
                why = kernel.strategy or f"backend {entry.backend} interprets the program op by op"
                emit(f"source of {kernel.name}: none ({why})")
            else:
                emit(f"source of {kernel.name} (strategy {kernel.strategy}):\n{kernel.source}")
    if level >= 5:
        for kernel in entry.kernels:
            ptx = kernel.ptx
            emit(f"ptx of {kernel.name}:\n" + (ptx if ptx is not None else
                 f"(no PTX: backend {entry.backend} does not generate it)"))


def host_call(text: str) -> None:
    """Hook: the CUDA backend generated a signature's host call (runtime/graph.py or, with
    cuda_graph=False, runtime/host.py) at its first call. Printed at level >= 4."""
    if debug_level() >= 4:
        emit(f"host call:\n{text}")


def hit(entry) -> None:
    """Hook: a call found `entry` in the cache. Prints once per entry. Called only when active."""
    if getattr(entry, "debug_reported", False) or debug_level() < 1:
        return
    entry.debug_reported = True
    emit(f"cache hit {signature_text(entry)} backend={entry.backend}: {_kinds_text(entry.fused)}"
         f" (built in {entry.build_seconds * 1e3:.1f} ms; later hits are not printed)"
         f"{class_text(entry)}")


def elements(group) -> int:
    """The elements a kernel produces: its largest output (or, with none, its root's size)."""
    sizes = [n.size for n in group.outputs.values()]
    return max(sizes) if sizes else group.root.size


def launch_text(group, seconds: float, synchronized: bool = False, first: bool = False,
                kernel=None) -> str:
    """A launch's line: the group's kernel, its strategy and launch (`kernel`, the backend's
    record, where there is one), elements and time."""
    launch = kernel.launch if kernel is not None else None
    strategy = kernel.strategy if kernel is not None else "?"
    where = f" grid={launch['grid']} block={launch['block']}" if launch else ""
    if launch and "registers" in launch:
        where += f" registers={launch['registers']}"
    sync = ", synchronized" if synchronized else ""
    sync += ", first call: includes numba's compile or cache load" if first else ""
    return (f"launch {group.kind}_{group.id} strategy={strategy}{where} "
            f"elements={elements(group)} time={seconds * 1e6:.1f} us (host wall{sync})")


def run_steps(steps, run_one, synchronize=None, records=None) -> None:
    """Hook for a backend's launch loop when STATE.active: `run_one(step)` each step, printing a
    launch line per step at level >= 2 (timed on the host; `synchronize()` after each launch;
    `records`: {group id: kernels.Kernel}, the backend's records of the steps' kernels)."""
    if debug_level() < 2:
        for step in steps:
            run_one(step)
        return
    clock = time.perf_counter
    for step in steps:
        # NOTE: numba compiles a CPU kernel on its first call (or loads numba's cache): say so.
        function = getattr(step, "function", None)
        first = function is not None and not getattr(function, "signatures", True)
        start = clock()
        run_one(step)
        if synchronize is not None:
            synchronize()
        group = step.group if hasattr(step, "group") else step.kernel.group
        emit(launch_text(group, clock() - start, synchronize is not None, first,
                         records.get(group.id) if records else None))


def run_program(entry, call):
    """Hook for a call when STATE.active: `call()`; the numpy backend has no kernels to report,
    so at level >= 2 it prints one line per call instead."""
    if entry.backend != "numpy" or debug_level() < 2:
        return call()
    start = time.perf_counter()
    result = call()
    ops = entry.fused.summary()["ops"] if entry.fused is not None else "?"
    emit(f"run {signature_text(entry)} backend=numpy: {ops} ops interpreted op by op, "
         f"time={(time.perf_counter() - start) * 1e6:.1f} us (host wall)")
    return result


STATE.env_level = _parse_env(os.environ.get(ENV))
STATE.update()
