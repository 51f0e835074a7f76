"""Where a CUDA autofuse call holding a library FFT spends its time beyond the library's own
(BENCHMARKS.md's FFT section: 50-80 µs a call against cupy.fft's 10-30). Times, on CuPy arrays,
µs a call (host clock around synchronized batches of 200): cupy.fft.rfft(x) as a user writes it;
with the keywords autofuse passes; with its contiguous copy; the jitted function; a kernel-only
jitted function of the same size; and cProfile's top entries over the jitted calls.

    python benchmarks/experiments/fft_call_probe.py
"""
import cProfile
import os
import pstats
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import cupy  # noqa: E402

import autofuse  # noqa: E402


def per_call(fn, x, calls=200):
    for _ in range(5):
        fn(x)
    cupy.cuda.Device().synchronize()
    began = time.perf_counter()
    for _ in range(calls):
        fn(x)
    cupy.cuda.Device().synchronize()
    return (time.perf_counter() - began) / calls * 1e6


def main():
    x = cupy.asarray(np.random.default_rng(0).standard_normal((4096, 1024)).astype(np.float32))
    jitted = autofuse.jit(np.fft.rfft)
    plain = autofuse.jit(lambda a: a * 2)
    rows = {
        "cupy.fft.rfft(x)": lambda a: cupy.fft.rfft(a),
        "cupy.fft.rfft(x, n=, axis=, norm=)": lambda a: cupy.fft.rfft(a, n=1024, axis=1,
                                                                      norm="backward"),
        "  + ascontiguousarray": lambda a: cupy.ascontiguousarray(
            cupy.fft.rfft(a, n=1024, axis=1, norm="backward")),
        "autofuse.jit(np.fft.rfft)": jitted,
        "autofuse.jit(lambda a: a * 2)": plain,
        "cupy x * 2": lambda a: a * 2,
    }
    for name, fn in rows.items():
        print(f"{name:40} {per_call(fn, x):8.1f} µs", flush=True)
    print(jitted.lower(x).host_source)
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(300):
        jitted(x)
    cupy.cuda.Device().synchronize()
    profile.disable()
    pstats.Stats(profile).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
