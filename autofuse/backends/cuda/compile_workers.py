"""A program's missing kernels compiled to PTX side by side, in warm worker processes.

numba's front end (typing, SSA, lowering) is single-threaded Python: a tiled product's kernel
takes 4-10 s, and a gradient's program holds five or six of them. A process's first compile
also pays numba-cuda's imports and its first typing, 1-3 s, in every process that compiles. So:
- the first CUDA build of a process starts the workers before it traces (`warm()`, from the
  backend's before_trace): they import numba-cuda and compile a trivial kernel while the calling
  process traces, simplifies, partitions and writes the kernels;
- a program's jobs are taken largest first, one at a time, by whichever worker is free (not in
  batches: a batch waited for its slowest kernel before the next began);
- the calling process takes jobs too once it has compiled a kernel itself (it is warm then); a
  cold caller waits for the workers instead of paying numba's first compile;
- workers stay for the process's next builds and leave after IDLE_S without a job, or at exit.

Run as `python -m autofuse.backends.cuda.compile_workers`, this module serves jobs, each a pickled
(module text, kernel name, numba signature, target, launch bound) framed by its length on stdin,
answered by a pickled (True, (PTX, entry)) or (False, error) on stdout; an empty frame first says
the worker is warm. A plain subprocess, not multiprocessing: a worker never imports the user's
`__main__` (which would run the user's script again).

Any worker that fails (it could not start, numba raised, it ran past WAIT_S) leaves its kernel
to the calling process, which compiles it as it always does and reports its error in its words.
$AUTOFUSE_COMPILE_PROCESSES caps the processes at once (1: compile in the calling process only).
"""
from __future__ import annotations

import atexit
import collections
import os
import pickle
import re
import subprocess
import sys
import threading
import time

VARIABLE = "AUTOFUSE_COMPILE_PROCESSES"
WAIT_S = 900          # a program's PTX, at most (the largest kernels take under a minute)
IDLE_S = 60.0         # a warm worker's life without a job
_FRAME = 8            # bytes of a frame's length
_ENTRY = re.compile(r"\.visible \.entry (\S+)\(")


def entry_name(ptx: str) -> str:
    """The kernel's (mangled) name in its PTX."""
    return _ENTRY.search(ptx).group(1)


def processes() -> int:
    """How many kernels compile at once (the calling process counts as one)."""
    value = os.environ.get(VARIABLE, "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    return max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else (os.cpu_count() or 1), 8))


class _Worker:
    """One worker process and its pipes (used by one thread at a time)."""

    def __init__(self, process):
        self.process = process
        self.ready = False
        self.busy = False         # a program's compile holds it

    @classmethod
    def start(cls):
        """A new worker, or None where it could not start."""
        environment = dict(os.environ)
        environment["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        try:
            return cls(subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        env=environment))
        except OSError:
            return None

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def _receive(self) -> bytes | None:
        header = self.process.stdout.read(_FRAME)
        if len(header) < _FRAME:
            return None
        size = int.from_bytes(header, "little")
        data = self.process.stdout.read(size)
        return data if len(data) == size else None

    def wait_ready(self) -> bool:
        """Whether the worker is warm (waits for its first frame)."""
        if not self.ready:
            try:
                self.ready = self._receive() == b""
            except (OSError, ValueError):
                self.ready = False
            if not self.ready:
                self.kill()
        return self.ready

    def run(self, job):
        """The job's (PTX, entry), or None where it failed (the worker killed if it broke)."""
        try:
            data = pickle.dumps(job)
            self.process.stdin.write(len(data).to_bytes(_FRAME, "little") + data)
            self.process.stdin.flush()
            answer = self._receive()
        except (OSError, ValueError):
            answer = None
        if answer is None:
            self.kill()
            return None
        ok, value = pickle.loads(answer)
        return value if ok else None

    def kill(self) -> None:
        try:
            self.process.kill()
            self.process.wait()
        except OSError:
            pass

    def close(self) -> None:
        """Ask it to leave (its stdin closed) and wait a moment for that."""
        try:
            self.process.stdin.close()
            self.process.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()


_workers: list = []
_lock = threading.Lock()
_timer: list = [None]
_caller = {"warm": False}


def caller_compiled() -> None:
    """The calling process compiled a kernel itself (compile.py): it takes jobs from now on."""
    _caller["warm"] = True


def caller_warm() -> bool:
    return _caller["warm"]


def running() -> bool:
    """Whether workers were started and have not left."""
    with _lock:
        return any(worker.alive for worker in _workers)


def warm(count: int | None = None) -> list:
    """The running workers, started up to `count` (processes() - 1 by default) where fewer run;
    they warm up on their own (their first frame says when)."""
    want = processes() - 1 if count is None else count
    with _lock:
        _workers[:] = [worker for worker in _workers if worker.alive]
        while len(_workers) < want:
            worker = _Worker.start()
            if worker is None:
                break
            _workers.append(worker)
        _keep_for_a_while()
        return list(_workers)


def _keep_for_a_while() -> None:
    """(Re)start the clock after which idle workers leave."""
    if _timer[0] is not None:
        _timer[0].cancel()
    _timer[0] = threading.Timer(IDLE_S, close_all)
    _timer[0].daemon = True
    _timer[0].start()


def close_all() -> None:
    """Every idle worker leaves (after IDLE_S without a job, and at exit)."""
    with _lock:
        for worker in _workers:
            if not worker.busy:
                worker.close()
        _workers[:] = [worker for worker in _workers if worker.busy]


atexit.register(close_all)


def compile_side_by_side(jobs: list, compile_here) -> dict:
    """{index: (PTX, entry)} of `jobs`, a list of (module text, kernel name, numba signature,
    cc, launch bounds), taken largest first by the warm workers and, where it is warm (or no
    worker runs), by `compile_here(index)` in this process. A job whose worker failed is
    missing from the result (its caller compiles it)."""
    found: dict = {}
    if not jobs:
        return found
    workers = warm(min(processes() - 1, len(jobs))) if processes() > 1 else []
    with _lock:
        # (a program compiling in another thread takes other workers, or none: never the same)
        mine = [worker for worker in workers if not worker.busy]
        for worker in mine:
            worker.busy = True
    queue = collections.deque(sorted(range(len(jobs)), key=lambda i: -len(jobs[i][0])))
    taking = threading.Lock()

    def take():
        with taking:
            return queue.popleft() if queue else None

    def serve(worker):
        if not worker.wait_ready():
            return
        while (index := take()) is not None:
            result = worker.run(jobs[index])
            if result is not None:
                found[index] = result
            elif not worker.alive:
                return

    threads = [threading.Thread(target=serve, args=(worker,), daemon=True) for worker in mine]
    for thread in threads:
        thread.start()
    try:
        if caller_warm() or not mine:
            while (index := take()) is not None:
                compile_here(index)
    finally:
        deadline = time.monotonic() + WAIT_S
        for thread, worker in zip(threads, mine):
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                worker.kill()
                thread.join()
            worker.busy = False
        _keep_for_a_while()
    return found


def _send(out, data: bytes) -> None:
    out.write(len(data).to_bytes(_FRAME, "little") + data)
    out.flush()


def _warm_up(cuda) -> None:
    """numba-cuda's first compile in this process (its imports and typing), on a trivial kernel."""
    from numba import types

    def trivial(values, count):
        i = cuda.grid(1)
        if i < count:
            values[i] = values[i] * 2.0 + 1.0
    cuda.compile_ptx(trivial, (types.CPointer(types.float32), types.int64), cc=(9, 0))


def _serve() -> None:
    """The worker: warm up, say so, then one job after another until stdin closes."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)                 # (anything printed goes to stderr, not into the answers)
    source = sys.stdin.buffer
    from numba import cuda
    _warm_up(cuda)
    _send(out, b"")
    while True:
        header = source.read(_FRAME)
        if len(header) < _FRAME:
            return
        text, name, signature, cc, bounds = pickle.loads(
            source.read(int.from_bytes(header, "little")))
        try:
            namespace: dict = {}
            exec(compile(text, f"<autofuse {name}>", "exec"), namespace)
            ptx, _ = cuda.compile_ptx(namespace[name], signature, cc=cc, launch_bounds=bounds)
            answer = (True, (ptx, entry_name(ptx)))
        except Exception as error:
            answer = (False, f"{type(error).__name__}: {error}")
        _send(out, pickle.dumps(answer))


if __name__ == "__main__":
    _serve()
