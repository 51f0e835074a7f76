"""Why the suite's softmax rows float16 class (16384x4096) times 1.10-1.14x its specialized
program in dynamic_shapes.py while Nsight Compute times their kernels within 1.5%: the host call
each runs (printed), and the two timed four ways (the harness's wall clock over 20 calls, CUDA
events over 20 calls, a synchronized call at a time, and both with Tuning(overlap=False), which
launches without programmatic stream serialization).

    python benchmarks/experiments/softmax_f16_class_probe.py [ROWS COLS]
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, ".."))

from dynamic_shapes import gpu_time  # noqa: E402
from tiles_bound_ab import gpu_clock  # noqa: E402


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def wall(call) -> float:
    """The harness's clock (dynamic_shapes.gpu_time), in microseconds."""
    return gpu_time(call) * 1e3


def synced(call, calls=50):
    import cupy
    times = []
    for _ in range(calls):
        cupy.cuda.Device().synchronize()
        start = time.perf_counter()
        call()
        cupy.cuda.Device().synchronize()
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def main():
    import cupy
    import autofuse
    from autofuse.backends.cuda.tuning import Tuning
    rows, cols = (int(v) for v in sys.argv[1:3]) if len(sys.argv) > 2 else (16384, 4096)
    rng = np.random.default_rng(0)
    for dtype in (np.float16, np.float32):
        host = rng.standard_normal((rows, cols)).astype(dtype)
        x = cupy.asarray(host)
        smaller = cupy.asarray(host[:-1])
        for overlap in (True, False):
            os.environ["AUTOFUSE_CACHE_DIR"] = tempfile.mkdtemp(prefix="softmax-probe-")
            tuning = Tuning(overlap=overlap)
            shaped = autofuse.jit(softmax, tuning=tuning)
            shaped(smaller)
            special = autofuse.jit(softmax, tuning=tuning, dynamic=False)
            calls = {"specialized": lambda: special(x), "class": lambda: shaped(x)}
            for label, call in calls.items():
                call()
                f = special if label == "specialized" else shaped
                low = f.lower(x)
                for k in low.kernels:
                    print(f"  {np.dtype(dtype).name} overlap={overlap} {label}: {k.strategy} "
                          f"{k.launch}", flush=True)
                host_text = low.host_source
                print(f"  host: {(host_text or 'None')[:400]}", flush=True)
            result = {label: [] for label in calls}
            for _ in range(3):
                for label, call in calls.items():
                    result[label].append((wall(call), gpu_clock(call, 20), synced(call)))
            for label in calls:
                w, e, s = (statistics.median(v[i] for v in result[label]) for i in range(3))
                print(f"{np.dtype(dtype).name} {rows}x{cols} overlap={overlap} {label:12s} "
                      f"wall {w:8.1f} us  events {e:8.1f} us  synced {s:8.1f} us", flush=True)


if __name__ == "__main__":
    main()
