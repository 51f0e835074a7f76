"""A program's missing kernels compiled to PTX side by side, each in a Python process of its own.

numba's front end (typing, SSA, lowering) is single-threaded Python: a tiled product's kernel
takes 4-10 s, and a gradient's program holds five or six of them, compiled one after another on
its first call. Run as `python -m autofuse.backends.cuda.compile_workers`, this module reads one
pickled job (the module text, the kernel's name, its numba signature, the target, the launch
bound) from stdin and writes the pickled (PTX, entry) back; the calling process compiles one of
the kernels itself meanwhile. A plain subprocess, not multiprocessing: a worker never imports the
user's `__main__` (which would run the user's script again).

Any worker that fails (it could not start, numba raised, it ran past WAIT_S) leaves its kernel
to the calling process, which compiles it as it always does and reports its error in its words.
$AUTOFUSE_COMPILE_PROCESSES caps the processes at once (1: compile in the calling process only).
"""
from __future__ import annotations

import os
import pickle
import re
import subprocess
import sys

VARIABLE = "AUTOFUSE_COMPILE_PROCESSES"
WAIT_S = 900          # a worker's PTX, at most (the largest kernels take under a minute)
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


def compile_side_by_side(jobs: list, compile_here) -> dict:
    """{index: (PTX, entry)} of `jobs`, a list of (module text, kernel name, numba signature,
    cc, launch bounds), compiled at most processes() at once: workers take all but the first
    of each batch, `compile_here(index)` the first. A job whose worker failed is missing from
    the result (its caller compiles it)."""
    found: dict = {}
    width = processes()
    for start in range(0, len(jobs), width):
        batch = list(range(start, min(start + width, len(jobs))))
        workers = [(index, _start(jobs[index])) for index in batch[1:]]
        compile_here(batch[0])
        for index, worker in workers:
            result = _finish(worker)
            if result is not None:
                found[index] = result
    return found


def _start(job):
    """A worker process given its job, or None where it could not start."""
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    try:
        worker = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  env=environment)
        worker.stdin.write(pickle.dumps(job))
        worker.stdin.close()
    except OSError:
        return None
    worker.stdin = None           # (written and closed: communicate() only reads)
    return worker


def _finish(worker):
    """The worker's (PTX, entry), or None where it failed."""
    if worker is None:
        return None
    try:
        output, _ = worker.communicate(timeout=WAIT_S)
    except (OSError, subprocess.TimeoutExpired):
        worker.kill()
        worker.wait()
        return None
    if worker.returncode != 0:
        return None
    try:
        ptx, entry = pickle.loads(output)
    except Exception:
        return None
    return ptx, entry


def _serve() -> None:
    """The worker: one job from stdin, its (PTX, entry) to stdout."""
    text, name, signature, cc, bounds = pickle.loads(sys.stdin.buffer.read())
    from numba import cuda
    namespace: dict = {}
    exec(compile(text, f"<autofuse {name}>", "exec"), namespace)
    ptx, _ = cuda.compile_ptx(namespace[name], signature, cc=cc, launch_bounds=bounds)
    sys.stdout.buffer.write(pickle.dumps((ptx, entry_name(ptx))))
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    _serve()
