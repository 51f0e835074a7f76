"""Where the first call of a one-kernel function goes in a new process whose kernels are in the
disk cache (CUDA backend, CuPy arguments): cProfile of that call, top entries by cumulative time.

    python benchmarks/profile_first_call.py      # runs twice: fills the cache, then profiles
"""
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import cProfile, pstats, sys, time
import numpy as np, cupy
x = cupy.ones(4096, dtype=cupy.float32)
cupy.cuda.Device().synchronize()
start = time.perf_counter()
import autofuse
imported = time.perf_counter()
f = autofuse.jit(lambda x: np.tanh(x) * 2 + 1)
profile = cProfile.Profile()
profile.enable()
f(x); cupy.cuda.Device().synchronize()
profile.disable()
done = time.perf_counter()
print(f"import {(imported - start) * 1e3:.1f} ms, first call {(done - imported) * 1e3:.1f} ms")
if sys.argv[1] == "show":
    pstats.Stats(profile).sort_stats("cumulative").print_stats(35)
"""

with tempfile.TemporaryDirectory() as cache:
    env = dict(os.environ, AUTOFUSE_CACHE_DIR=cache)
    for mode in ("fill", "show", "show"):
        out = subprocess.run([sys.executable, "-c", CHILD, mode], env=env, capture_output=True,
                             text=True)
        print(mode, out.stdout[:6000] if mode == "show" else out.stdout, out.stderr[-2000:])
