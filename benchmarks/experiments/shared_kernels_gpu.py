"""On a GPU: loops whose steps share one kernel taking slice starts and scalar constants as
arguments (backends/sharing.py) give NumPy's answers on CuPy arrays, and what their first call
and warm call cost beside NumPy's functions on CuPy op by op.

    python benchmarks/experiments/shared_kernels_gpu.py
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

import cupy as cp
import numpy as np

sys.path[:0] = [os.path.join(os.path.dirname(__file__), "..", "..", "tests"),
                os.path.join(os.path.dirname(__file__), "..", "..")]
os.environ.setdefault("AUTOFUSE_CACHE_DIR", tempfile.mkdtemp())

import autofuse  # noqa: E402
from benchmarks.index_loops import ewma, rows  # noqa: E402
from test_in_place import columns, increments  # noqa: E402


def scan(x):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = x[i] * (i + 1) + out[i - 1] * np.float32(0.5) + (i > 3)
    return out


def timed(fn, args, repeats=5, calls=10) -> float:
    fn(*args)
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        cp.cuda.Device().synchronize()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times) * 1e3


def main() -> int:
    rng = np.random.default_rng()
    cases = [(ewma, (rng.random((200, 4096)).astype(np.float32), np.float32(0.3))),
             (rows, (rng.standard_normal((100, 4096)).astype(np.float32),)),
             (scan, (rng.random((100, 4096)).astype(np.float32),)),
             (increments, (rng.random(3000),)),
             (columns, (rng.random((64, 40)),))]
    failures = 0
    print(f"{'program':12} {'kernels':>8} {'distinct':>8} {'first s':>8} {'warm ms':>8} "
          f"{'CuPy ms':>8}  result")
    for fn, args in cases:
        device = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        jitted = autofuse.jit(fn)
        start = time.perf_counter()
        got = jitted(*device)
        cp.cuda.Device().synchronize()
        first = time.perf_counter() - start
        want = fn(*args)
        ok = np.allclose(cp.asnumpy(got), want, rtol=1e-4, atol=1e-4)
        failures += not ok
        low = jitted.lower(*device)
        warm = timed(jitted, device)
        peer = timed(fn.__wrapped__ if hasattr(fn, "__wrapped__") else
                     (lambda *a, f=fn: f(*a)), device, repeats=3, calls=2)
        print(f"{fn.__name__:12} {len(low.kernels):8d} {len({k.source for k in low.kernels}):8d} "
              f"{first:8.2f} {warm:8.3f} {peer:8.3f}  {'ok' if ok else 'WRONG'}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
