"""Running a file of kernel cases under numba's CUDA simulator: in a fresh process (numba picks
the simulator when it is imported) with an empty kernel cache, one shard of the cases at a time
so that pytest-xdist can spread a long file over its workers (SHARDS tests a file)."""
from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARDS = 2
# numba's simulator runs a block's threads as Python threads, and its block manager polls them in
# a loop that holds the GIL; a thread released from a barrier (or waiting to reach one) runs only
# once the poller gives up the GIL, after the interpreter's switch interval (5 ms by default). A
# kernel's time under the simulator is mostly these waits: at 1 ms the same threads run the same
# code through the same barriers in a third to a half of the time (scan_sim_cases: 25 s -> 9-11 s).
SWITCH_INTERVAL = 0.001


def quick_barriers() -> None:
    """In a process that runs kernels under the simulator, a shorter switch interval (see
    SWITCH_INTERVAL); elsewhere (a GPU, the CPU backend) nothing."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        sys.setswitchinterval(SWITCH_INTERVAL)


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
