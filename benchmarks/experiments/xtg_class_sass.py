"""x.T @ g float64, (524288, 64).T @ (524288, 10): the one products-sweep point whose class runs
1.18x its specialized program on an H200 (issue 33). Times the two programs in turns (CUDA events
over 20 calls, median of 5 rounds), prints each kernel's launch facts, and writes every cubin's
SASS (cuobjdump) to DIR, to read beside the two kernels' texts.

    python benchmarks/experiments/xtg_class_sass.py [--sass DIR] [--dtype float64]
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
sys.path.insert(0, here)

from tiles_bound_ab import alternating  # noqa: E402


def product(x, g):
    return x.T @ g


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sass", default=None)
    parser.add_argument("--dtype", default="float64")
    args = parser.parse_args()
    cache = pathlib.Path(tempfile.mkdtemp(prefix="xtg-"))
    os.environ["AUTOFUSE_CACHE_DIR"] = str(cache)
    import cupy
    import autofuse
    rng = np.random.default_rng(0)
    x = cupy.asarray(rng.standard_normal((524288, 64)).astype(args.dtype))
    g = cupy.asarray(rng.standard_normal((524288, 10)).astype(args.dtype))
    special = autofuse.jit(product, dynamic=False)
    shaped = autofuse.jit(product)
    shaped(x[:-1], g[:-1])
    want = special(x, g)
    assert bool(cupy.allclose(shaped(x, g), want)), "the class reads wrong"
    for label, f in (("specialized", special), ("class", shaped)):
        for kernel in f.lower(x, g).kernels:
            print(f"{label:12s} {kernel.strategy} {kernel.launch}", flush=True)
            if args.sass:
                pathlib.Path(args.sass, f"{label}_{kernel.name}.py").write_text(kernel.source)
    times = alternating({"specialized": lambda: special(x, g), "class": lambda: shaped(x, g)},
                        5, 20)
    print({k: round(v, 2) for k, v in times.items()},
          f"class / specialized {times['class'] / times['specialized']:.3f}", flush=True)
    if args.sass:
        for meta in sorted((cache / "cuda").glob("*.json")):
            facts = json.loads(meta.read_text())
            cubin = meta.with_suffix(".cubin")
            for flag in ("-sass", "-res-usage"):
                dump = subprocess.run(["/usr/local/cuda/bin/cuobjdump", flag, str(cubin)],
                                      capture_output=True, text=True).stdout
                name = f"{facts['entry'][-12:]}_{meta.stem[:12]}{flag}.txt"
                pathlib.Path(args.sass, name).write_text(dump)


if __name__ == "__main__":
    main()
