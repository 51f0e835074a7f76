"""Where a cached call's host time goes (CUDA backend, CuPy arguments): cProfile of many calls.

    python benchmarks/profile_call.py
"""
import cProfile
import pstats
import time

import cupy
import numpy as np

import autofuse

x = cupy.asarray(np.random.default_rng(0).standard_normal(1024, dtype=np.float32))
y, z = x * 2, x + 1
f = autofuse.jit(lambda a, b, c: np.maximum(a * b + c, 0))
f(x, y, z)
cupy.cuda.Device().synchronize()
for label, call in (("autofuse", lambda: f(x, y, z)), ("cupy.empty", lambda: cupy.empty(1024, cupy.float32))):
    start = time.perf_counter()
    for _ in range(5000):
        call()
    cupy.cuda.Device().synchronize()
    print(f"{label}: {(time.perf_counter() - start) / 5000 * 1e6:.2f} us per call")
profile = cProfile.Profile()
profile.enable()
for _ in range(5000):
    f(x, y, z)
profile.disable()
pstats.Stats(profile).sort_stats("tottime").print_stats(14)
