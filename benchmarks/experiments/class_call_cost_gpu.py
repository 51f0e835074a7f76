"""Whether a class instance's call costs more on the host than a specialized entry's (issue 33):
the same program at a tiny size (host-bound: the time a call is the host's cost) and at the
benchmark's size, specialized and as a class, interleaved rounds of synchronized batches; and
the host time of one call alone (no synchronization), CuPy inputs.

    python benchmarks/experiments/class_call_cost_gpu.py
"""
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.dirname(os.path.dirname(HERE))]

import autofuse  # noqa: E402
from dynamic_shapes import gpu_time  # noqa: E402


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def column_sum(x):
    return x.sum(axis=0)


def host_us(f, x, calls=2000):
    import cupy
    f(x)
    cupy.cuda.Device().synchronize()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            f(x)
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
        cupy.cuda.Device().synchronize()
    return best


def main():
    import cupy
    rng = np.random.default_rng(0)
    cases = [("softmax rows f32 x256", softmax, np.float32, (32768, 256), (8, 256)),
             ("softmax rows f16 x1024", softmax, np.float16, (16384, 1024), (8, 1024)),
             ("sum(0) f16", column_sum, np.float16, (8192, 4096), (8, 4096))]
    for name, fn, dtype, big, small in cases:
        for shape in (small, big):
            x = cupy.asarray(rng.standard_normal(shape).astype(dtype))
            smaller = x[:-1].copy()
            special = autofuse.jit(fn, dynamic=False)
            shaped = autofuse.jit(fn)
            shaped(smaller)
            shaped(x)
            assert shaped.cache_info().instances >= 1, shaped.cache_info()
            rounds = {"specialized": [], "class": []}
            for _ in range(3):
                for label, f in (("specialized", special), ("class", shaped)):
                    rounds[label].append(gpu_time(lambda: f(x)))
            a, b = (statistics.median(rounds[k]) * 1e3 for k in ("specialized", "class"))
            print(f"{name:24} {str(shape):14} GPU us/call specialized {a:8.2f} class {b:8.2f} "
                  f"({b / a:.3f}); host us/call {host_us(special, x):6.2f} / "
                  f"{host_us(shaped, x):6.2f}", flush=True)


if __name__ == "__main__":
    main()
