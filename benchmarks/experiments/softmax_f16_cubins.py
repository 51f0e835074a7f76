"""The suite's softmax rows float16 class against its specialized program, by their cubins: both
programs built into one empty disk cache, then each kernel's cubin loaded on its own
(cupy.RawModule) and launched with the same grid, block and arrays, timed by CUDA events over
20 launches (median of 7). Equal times put softmax_f16_class_probe.py's 1.14x in the programs'
calls; unequal ones in the kernels.

    python benchmarks/experiments/softmax_f16_cubins.py [--sass DIR] [--dtype float16]
      [--shape 16384 4096]

--sass writes each cubin's `cuobjdump -sass` (and -res-usage) to DIR.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))

from softmax_f16_class_probe import softmax  # noqa: E402
from tiles_bound_ab import gpu_clock  # noqa: E402


def events(launch, rounds=7) -> float:
    """Median over `rounds` of tiles_bound_ab.gpu_clock's CUDA-event time of 20 launches, us."""
    return statistics.median(gpu_clock(launch, 20) for _ in range(rounds))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sass", default=None)
    parser.add_argument("--dtype", default="float16")
    parser.add_argument("--shape", type=int, nargs=2, default=(16384, 4096))
    args = parser.parse_args()
    import cupy
    import autofuse
    cache = pathlib.Path(tempfile.mkdtemp(prefix="softmax-cubins-"))
    os.environ["AUTOFUSE_CACHE_DIR"] = str(cache)
    rows, cols = args.shape
    x = cupy.asarray(np.random.default_rng(0).standard_normal((rows, cols)).astype(args.dtype))
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
        arguments = (x, out, np.int64(rows)) if takes_size else (x, out)
        block = special.lower(x).kernels[0].launch["block"]
        kernel((rows,), (block,), arguments)
        right = bool(cupy.allclose(out, special(x), rtol=1e-2, atol=1e-3))
        time = events(lambda: kernel((rows,), (block,), arguments))
        print(f"{'class' if takes_size else 'specialized':12s} {meta.stem[:14]} {time:8.1f} us "
              f"(right: {right}) min_blocks {facts['min_blocks']}", flush=True)
        if args.sass:
            for flag in ("-sass", "-res-usage"):
                dump = subprocess.run(["/usr/local/cuda/bin/cuobjdump", flag,
                                       str(meta.with_suffix(".cubin"))],
                                      capture_output=True, text=True).stdout
                name = f"{'class' if takes_size else 'specialized'}_{meta.stem[:10]}{flag}.txt"
                pathlib.Path(args.sass, name).write_text(dump)
    for label, f in (("specialized program", special), ("class program", shaped)):
        print(f"{label:20s} {events(lambda: f(x)):8.1f} us", flush=True)


if __name__ == "__main__":
    main()
