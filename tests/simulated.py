"""Running a file of kernel cases under numba's CUDA simulator: in a fresh process (numba picks
the simulator when it is imported) with an empty kernel cache, one shard of the cases at a time
so that pytest-xdist can spread a long file over its workers (SHARDS tests a file)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SHARDS = 2
# numba's simulator runs a block's threads as Python threads, and its block manager polls them in
# a loop that holds the GIL; a thread released from a barrier (or waiting to reach one) runs only
# once the poller gives up the GIL, after the interpreter's switch interval (5 ms by default). A
# kernel's time under the simulator is mostly these waits: at 1 ms the same threads run the same
# code through the same barriers in a third to a half of the time (scan_sim_cases: 25 s -> 9-11 s).
SWITCH_INTERVAL = 0.001


def prepare_simulator() -> None:
    """In a process that runs kernels under the simulator, a shorter switch interval (see
    SWITCH_INTERVAL) and shared arrays that a block's threads cannot tear apart (see
    _shared_array); elsewhere (a GPU, the CPU backend) nothing."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        sys.setswitchinterval(SWITCH_INTERVAL)
        from numba.cuda.simulator import kernelapi
        if kernelapi.FakeCUDAShared.array is not _shared_array:
            _shared_array.original = kernelapi.FakeCUDAShared.array
            kernelapi.FakeCUDAShared.array = _shared_array


def _shared_array(self, shape, dtype, alignment=None):
    """`cuda.shared.array` under the simulator, one array a call site for all of a block's threads.

    numba-cuda 0.30's simulator (FakeCUDAShared.array) looks the call site up in a dict and, on a
    miss, makes an array and stores it: two threads that switch between the lookup and the store
    each make their own, and one of them then writes a "shared" array no other thread reads. Its
    barriers and reads see partial sums and never-written memory: wrong values at random, more
    often the shorter the switch interval (benchmarks/experiments/sim_switch_stress.py, static
    and class kernels alike: 4-9 wrong cases a run at 2e-6 s, none in three runs with this
    version). Here the array is made first and stored with dict.setdefault, which keeps the first
    one atomically; the call site is the caller's frame, as the simulator keys it (file, line)."""
    if shape == 0 or alignment is not None:      # (dynamic shared memory; refused alignments)
        return _shared_array.original(self, shape, dtype, alignment)
    from numba.core import types
    from numba.np import numpy_support
    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    caller = sys._getframe(1)
    site = (caller.f_code.co_filename, caller.f_lineno)
    return self._allocations.setdefault(site, np.empty(shape, dtype))


def run_cases(script: str, tmp_path, shard: int = 0, shards: int = 1, timeout: int = 900) -> list:
    """The lines `script` printed for its cases whose index is `shard` modulo `shards`; fails
    the test where the process failed."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", AUTOFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, os.path.join(HERE, script), "", f"{shard}/{shards}"],
                          env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return done.stdout.splitlines()


def in_shard(index: int, shard: str) -> bool:
    """Whether case `index` belongs to `shard` ("i/n"; "" is every case)."""
    if not shard:
        return True
    part, parts = (int(v) for v in shard.split("/"))
    return index % parts == part
