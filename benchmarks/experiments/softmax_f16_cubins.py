"""The suite's softmax rows float16 class against its specialized program, by their cubins: both
programs built into one empty disk cache, then each kernel's cubin loaded on its own
(cupy.RawModule) and launched with the same grid, block and arrays, timed by CUDA events over
20 launches (median of 7). Equal times put softmax_f16_class_probe.py's 1.14x in the programs'
calls; unequal ones in the kernels.

    python benchmarks/experiments/softmax_f16_cubins.py
"""
from __future__ import annotations

import json
import os
import pathlib
import statistics
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))

from softmax_f16_class_probe import softmax  # noqa: E402


def events(launch, calls=20, rounds=7):
    import cupy
    launch()
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(rounds):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        for _ in range(calls):
            launch()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) * 1000 / calls)
    return statistics.median(times)


def main():
    import cupy
    import autofuse
    cache = pathlib.Path(tempfile.mkdtemp(prefix="softmax-cubins-"))
    os.environ["AUTOFUSE_CACHE_DIR"] = str(cache)
    rows, cols = 16384, 4096
    x = cupy.asarray(np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float16))
    shaped = autofuse.jit(softmax)
    shaped(x[:-1].copy())
    shaped(x)
    special = autofuse.jit(softmax, dynamic=False)
    special(x)
    out = cupy.empty_like(x)
    for meta in sorted((cache / "cuda").glob("*.json")):
        facts = json.loads(meta.read_text())
        module = cupy.RawModule(path=str(meta.with_suffix(".cubin")))
        kernel = module.get_function(facts["entry"])
        takes_size = facts["entry"].endswith("x")
        args = (x, out, np.int64(rows)) if takes_size else (x, out)
        kernel((rows,), (128,), args)
        right = bool(cupy.allclose(out, special(x), rtol=1e-2, atol=1e-3))
        time = events(lambda: kernel((rows,), (128,), args))
        print(f"{'class' if takes_size else 'specialized':12s} {meta.stem[:14]} {time:8.1f} us "
              f"(right: {right}) min_blocks {facts['min_blocks']}", flush=True)
    for label, f in (("specialized program", special), ("class program", shaped)):
        print(f"{label:20s} {events(lambda: f(x)):8.1f} us", flush=True)


if __name__ == "__main__":
    main()
