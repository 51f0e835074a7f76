"""Why the float16 softmax rows class kernel ran 1.16x the specialized one on an H200 (issue 33):
the texts differ only in `while row < n0` against `while row < 16384`. Prints, for both, the
launch facts as loaded (registers, local bytes, the launch bound the cubin was linked with) and
interleaved times; also the float32 twin, whose class ran at 1.00x.

    python benchmarks/experiments/class_softmax_f16.py
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import autofuse  # noqa: E402
from workloads import softmax  # noqa: E402


def timed(call, rounds=7, calls=20):
    import cupy
    for _ in range(3):
        call()
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        cupy.cuda.Device().synchronize()
        times.append((time.perf_counter() - start) / calls * 1e3)
    return statistics.median(times)


def profiled():
    """Three calls each, float16, for Nsight Compute to time the kernels alone:
    ncu --metrics gpu__time_duration.sum python class_softmax_f16.py --ncu"""
    import cupy
    fn = softmax(np)
    x = cupy.asarray(np.random.default_rng(0).standard_normal((16384, 4096)).astype(np.float16))
    special, shaped = autofuse.jit(fn, dynamic=False), autofuse.jit(fn)
    shaped(x[:-1])
    for f in (special, shaped, special, shaped, special, shaped):
        f(x)
    cupy.cuda.Device().synchronize()


def main():
    import cupy
    if "--ncu" in sys.argv:
        return profiled()
    fn = softmax(np)
    for dtype in (np.float16, np.float32):
        x = cupy.asarray(np.random.default_rng(0).standard_normal((16384, 4096)).astype(dtype))
        special = autofuse.jit(fn, dynamic=False)
        shaped = autofuse.jit(fn)
        shaped(x[:-1])
        for f in (special, shaped):
            f(x)
        cupy.cuda.Device().synchronize()
        for label, f in (("specialized", special), ("class", shaped)):
            lowered = f.lower(x)
            kernel = lowered.kernels[0]
            print(np.dtype(dtype).name, label, kernel.strategy, kernel.launch, flush=True)
            print((lowered.host_source or "(no host source)")[:700], flush=True)
        graphed_special = autofuse.jit(fn, dynamic=False, cuda_graph=True)
        graphed = autofuse.jit(fn, cuda_graph=True)
        graphed(x[:-1])
        pairs = (("specialized", special), ("class", shaped), ("specialized, graph", graphed_special),
                 ("class, graph", graphed))
        rounds = {label: [] for label, _ in pairs}
        for _ in range(3):
            for label, f in pairs:
                rounds[label].append(timed(lambda: f(x)))
        print(np.dtype(dtype).name, {k: round(statistics.median(v), 4) for k, v in rounds.items()},
              flush=True)
        # the host's cost a call: back-to-back calls on 64 rows (the GPU's time is a few us)
        small = x[:64].copy()
        for f in (special, shaped):
            f(small)
        for label, f in (("specialized", special), ("class", shaped)):
            cupy.cuda.Device().synchronize()
            best = float("inf")
            for _ in range(5):
                start = time.perf_counter()
                for _ in range(500):
                    f(small)
                best = min(best, (time.perf_counter() - start) / 500 * 1e6)
            cupy.cuda.Device().synchronize()
            program = getattr(f, "_last_program", None)
            print(np.dtype(dtype).name, label, "64 rows: us a call", round(best, 1),
                  f.cache_info(), flush=True)


if __name__ == "__main__":
    main()
