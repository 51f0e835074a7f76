"""The suite's float16 rows programs (softmax, layernorm; 16384x4096) as shape classes and
specialized, at the rows kernel's default threads a row (Tuning.row_bytes 64: 32 halves a thread,
128 threads) and at half as many items a thread (row_bytes 32: 16 halves, 256 threads): whether
a class's float16 rows kernel (1.14x its specialized twin at 128 threads, issue 33) keeps up with
more threads. CUDA-event times of 20 calls, the variants taking turns (median of 5 rounds).

    python benchmarks/experiments/rows_f16_threads.py
"""
from __future__ import annotations

import os
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
sys.path.insert(0, here)

from rows_class_variants import softmax  # noqa: E402
from tiles_bound_ab import alternating  # noqa: E402


def layernorm(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + np.float16(1e-5)) * g + b


def main():
    import cupy
    import autofuse
    from autofuse.backends.cuda.tuning import Tuning
    os.environ.setdefault("AUTOFUSE_CACHE_DIR", tempfile.mkdtemp(prefix="rows-f16-"))
    rng = np.random.default_rng(0)
    rows, cols = 16384, 4096
    x = rng.standard_normal((rows, cols)).astype(np.float16)
    g, b = (rng.standard_normal(cols).astype(np.float16) for _ in range(2))
    floor_bytes = 2 * x.nbytes
    for fn, args in ((softmax, (x,)), (layernorm, (x, g, b))):
        full = [cupy.asarray(a) for a in args]
        short = [cupy.asarray(args[0][:-1])] + full[1:]
        calls, kernels = {}, {}
        want = None
        for label, tuning in (("row_bytes 64", Tuning()), ("row_bytes 32", Tuning(row_bytes=32))):
            special = autofuse.jit(fn, tuning=tuning, dynamic=False)
            shaped = autofuse.jit(fn, tuning=tuning)
            shaped(*short)
            for kind, f in (("specialized", special), ("class", shaped)):
                got = f(*full)
                want = got if want is None else want
                assert bool(cupy.allclose(got, want, rtol=1e-2, atol=1e-2)), (label, kind)
                (kernel,) = f.lower(*full).kernels
                kernels[f"{label} {kind}"] = (kernel.strategy, kernel.launch.get("registers"),
                                              kernel.launch.get("min_blocks_per_sm"),
                                              kernel.launch.get("block"))
                calls[f"{label} {kind}"] = lambda f=f: f(*full)
        times = alternating(calls, 5, 20)
        base = times["row_bytes 64 specialized"]
        for key, us in times.items():
            floor = floor_bytes / 4.8e12 * 1e6
            print(f"{fn.__name__:10s} {key:26s} {us:7.1f} us {us / base:6.3f} "
                  f"({us / floor:4.2f}x the 4.8 TB/s floor) {kernels[key]}", flush=True)


if __name__ == "__main__":
    main()
