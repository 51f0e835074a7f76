"""Pointwise and rows kernels that assume the arguments aligned at the first call 16-byte
aligned (Tuning.assume_aligned: one vector body) against the checked two bodies (a vector body
and an element-by-element copy chosen by the base addresses; assume_aligned=False), on the GPU:
the suite's pointwise and rows workloads and a layernorm gradient, called with aligned arguments
and with the first argument 4 bytes past a 16-byte boundary (the same signature: one body then
takes the program built for misaligned arguments). Results checked against NumPy first; each
program's first call in this process (numba-cuda to PTX, the cubin linked) timed, each kernel
text new to the process.

    python benchmarks/experiments/assume_aligned_ab.py [--rounds 5] [--only "sum(x*x),..."]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from gpu import time_rounds, tuning  # noqa: E402
from workloads import workloads  # noqa: E402

NAMES = ("relu(x*y+z)*w", "bias+GELU", "softmax rows", "layernorm rows", "5-point stencil",
         "bias+GELU f16", "softmax rows f16", "layernorm rows f16", "sum(x*x)")


def layernorm_loss(x, w, b, r):
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    y = xc / np.sqrt((xc * xc).mean(-1, keepdims=True) + np.float32(1e-5)) * w + b
    return (y * r).sum()


def shifted(cupy, host):
    """`host` on the device at a base 4 bytes past a 16-byte boundary (a view of a longer
    buffer), same shape and contiguity."""
    flat = cupy.empty(host.size + 8, host.dtype)
    view = flat[1:1 + host.size].reshape(host.shape)
    view[...] = cupy.asarray(host)
    assert view.data.ptr % 16 != 0
    return view


def main():
    import cupy
    import autofuse
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated program names (default: all)")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else NAMES + ("layernorm gradient 8192x1024",)
    rng = np.random.default_rng(3)
    programs = [(w.name, w.fn(np), w.make(rng), w.tolerance) for w in workloads()
                if w.name in names]
    x = rng.standard_normal((8192, 1024)).astype(np.float32)
    w = rng.standard_normal(1024).astype(np.float32)
    programs += [] if "layernorm gradient 8192x1024" not in names else [(
                     "layernorm gradient 8192x1024",
                     autofuse.value_and_grad(layernorm_loss, argnums=(0, 1, 2)),
                     (x, w, w.copy(), rng.standard_normal(x.shape).astype(np.float32)), 1e-3)]
    variants = {"one body": tuning(""), "two bodies": tuning("assume_aligned=0")}
    results = []
    for name, fn, host, tolerance in programs:
        expected = fn(*host) if "gradient" not in name else None
        row = {"program": name}
        entries = {}
        for label, options in variants.items():
            for where, inputs in (("aligned", [cupy.asarray(a) for a in host]),
                                  ("shifted", [shifted(cupy, a) for a in host])):
                jitted = autofuse.jit(fn, tuning=options)
                start = time.perf_counter()
                got = jitted(*inputs)
                cupy.cuda.Device().synchronize()
                first = time.perf_counter() - start
                if expected is not None:
                    np.testing.assert_allclose(cupy.asnumpy(got).astype(np.float64),
                                               np.asarray(expected, np.float64),
                                               rtol=tolerance, atol=tolerance)
                if where == "aligned":
                    row[f"{label} first call s"] = round(first, 2)
                    row[f"{label} kernels"] = [k.strategy for k in jitted.lower(*inputs).kernels]
                entries[f"{label}, {where}"] = (lambda f=jitted, a=inputs: f(*a),
                                                lambda _: cupy.cuda.Device().synchronize())
        times = time_rounds(entries, rounds=args.rounds, short=2)
        for label, samples in times.items():
            row[f"{label} ms"] = float(np.median(samples))
        row["one / two bodies, aligned"] = row["one body, aligned ms"] / row["two bodies, aligned ms"]
        row["one / two bodies, shifted"] = row["one body, shifted ms"] / row["two bodies, shifted ms"]
        print(json.dumps(row), flush=True)
        results.append(row)
    out = os.environ.get("OUT", ".")
    name = "assume_aligned_ab_only.json" if args.only else "assume_aligned_ab.json"
    with open(os.path.join(out, name), "w") as handle:
        json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
