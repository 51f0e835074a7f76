"""How many of numba's threads a call's parallel kernels use: for a small program, every core
numba may use less the cores other processes keep busy now; for a large one, all of them.

A parallel kernel splits its work into fixed pieces across the threads and waits for the last
one. When other processes hold the cores, a woken thread waits its turn to run and every call
waits with it: on the 2-core machine with other work running (load 13), a sum of squares over
a million floats took 31 ms on two threads and 0.24 ms on one (NumPy 0.6-1.2 ms); a column sum
32 ms against 0.16. So before a program whose work is under FIT_ELEMENTS runs, the number of
running tasks is read from /proc/loadavg (at most every SAMPLE_SECONDS), the threads this
process may itself have running subtracted, and numba's thread count for the calling thread
(numba.set_num_threads, a per-thread setting) becomes the cores left, at least one. A larger
program takes every thread: over a long kernel, a thread's share of busy cores is worth more
than the wait for its turn. Results do not depend on the count: the generated kernels cut their
work into pieces of a fixed count, never one per thread. Where /proc/loadavg does not exist,
numba's own count stays.

The count is set through the threading layer runtime.py started where it started one (kernels
loaded as shared libraries: numba is not imported), else through numba.set_num_threads; both
set the same per-thread count of the same layer.
"""
from __future__ import annotations

import threading
import time

from . import runtime

SAMPLE_SECONDS = 0.1       # how old the reading of running tasks may be
# Programs with this much work (_work: elements, or a product's multiply-adds) or more keep all
# of numba's threads. At load 18-25 on the 2-core machine, a
# relu chain on 1024 x 1024 float32 took 2.1 ms fitted against 30.3 on two threads, on 4096 x 1024
# 37.5 against 27.3; softmax rows 33 against 31 and 94 against 81; examples/mlp.py (1024 x 2048
# hidden) 1032 ms fitted against 790 (NumPy 936).
FIT_ELEMENTS = 1 << 21


class Pool:
    """The thread count calls use now (`fit()` sets it for the calling thread)."""

    def __init__(self):
        self.cores = runtime.thread_count()     # numba's upper bound ($NUMBA_NUM_THREADS)
        self.wanted = self.cores
        self.checked = float("-inf")
        self.local = threading.local()

    def fit(self) -> None:
        now = time.monotonic()
        if now - self.checked > SAMPLE_SECONDS:
            self.checked = now
            self.wanted = self.threads(running_tasks())
        if getattr(self.local, "threads", None) != self.wanted:
            set_num_threads(self.wanted)
            self.local.threads = self.wanted

    def widen(self) -> None:
        """All of numba's threads for the calling thread (a large program's call)."""
        if getattr(self.local, "threads", self.cores) != self.cores:
            set_num_threads(self.cores)
            self.local.threads = self.cores

    def threads(self, running: int | None) -> int:
        """The count for `running` tasks on the machine (None: unknown), this process's own
        threads among them: the caller and, at most, the threads it runs kernels on now."""
        if running is None:
            return self.cores
        others = max(0, running - self.wanted)
        return max(1, self.cores - others)


def set_num_threads(count: int) -> None:
    """numba.set_num_threads(count), without importing numba where runtime.py runs the layer."""
    layer = runtime.threads()
    if layer is not None:
        layer.set_num_threads(count)
    else:
        import numba
        numba.set_num_threads(count)


def running_tasks() -> int | None:
    """Tasks running or ready to run on the machine now (Linux's /proc/loadavg), or None."""
    try:
        with open("/proc/loadavg", "rb") as file:
            fields = file.read().split()
        return int(fields[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return None


POOL = Pool()


def choice(steps):
    """What a program's call runs first: POOL.fit (parallel kernels whose work is under
    FIT_ELEMENTS), POOL.widen (a parallel kernel with more), or None (no parallel kernel: numba's
    threads are not used)."""
    parallel = [step for step in steps if getattr(getattr(step, "kernel", None), "parallel", False)]
    if not parallel:
        return None
    largest = max(_work(step.group) for step in parallel)
    return POOL.fit if largest < FIT_ELEMENTS else POOL.widen


def _work(group) -> int:
    """A group's work in elements: its largest array's, or a matrix product's multiply-adds."""
    work = max(node.size for node in list(group.nodes) + list(group.inputs))
    product = getattr(group, "matmul", None)
    if product is not None:
        work = max(work, product.size * product.inputs[0].shape[-1])
    return work
