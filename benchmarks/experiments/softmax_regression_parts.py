"""Where a step of the corpus's softmax_regression goes on the GPU: its three parts jitted and
timed alone at the corpus's large size (2^19 x 64 float32 features, 10 classes), beside CuPy's
op-by-op time and the bytes each part must move at least. CUDA events, median of 20.

    python benchmarks/experiments/softmax_regression_parts.py
    python benchmarks/experiments/softmax_regression_parts.py --widths 32 64 128 256
        (the gradient product again under Tuning.two_stage_columns = each width)
    python benchmarks/experiments/softmax_regression_parts.py --loads 4 8 12 16
        (... under Tuning.two_stage_loads = each count: elements a thread loads a step)
"""
from __future__ import annotations

import json
import sys

import cupy
import numpy as np

import autofuse


def logits(x, w):
    return x @ w


def probability(z):
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def gradient(x, p, y):
    return 0.5 * x.T @ (p - y) / x.shape[0]


def step(x, y, w):
    z = x @ w
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    return w - 0.5 * x.T @ (p - y) / x.shape[0]


def timed(fn, *args) -> float:
    fn(*args)
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    samples = []
    for _ in range(20):
        start.record()
        fn(*args)
        stop.record()
        stop.synchronize()
        samples.append(cupy.cuda.get_elapsed_time(start, stop))
    return float(np.median(samples))


def main() -> None:
    rng = np.random.default_rng(0)
    m, n, c = 1 << 19, 64, 10
    x = cupy.asarray(rng.standard_normal((m, n), dtype=np.float32))
    y = cupy.asarray(np.eye(c, dtype=np.float32)[rng.integers(0, c, m)])
    w = cupy.asarray(rng.standard_normal((n, c), dtype=np.float32) * 0.01)
    z = x @ w
    p = probability(z)
    parts = [("logits x @ w", logits, (x, w), x.nbytes + z.nbytes),
             ("softmax rows", probability, (z,), 2 * z.nbytes),
             ("gradient x.T @ (p - y)", gradient, (x, p, y), x.nbytes + p.nbytes + y.nbytes),
             ("whole step", step, (x, y, w), 2 * x.nbytes + y.nbytes)]
    for name, fn, args, floor in parts:
        jitted = autofuse.jit(fn)
        kernels = [(k.kind, k.strategy) for k in jitted.lower(*args).kernels]
        row = {"part": name, "autofuse_ms": round(timed(jitted, *args), 4),
               "cupy_ms": round(timed(fn, *args), 4),
               "floor_ms": round(floor / 4.8e12 * 1e3, 4), "kernels": kernels}
        print(json.dumps(row), flush=True)
    if sys.argv[1:2] in (["--widths"], ["--loads"]):
        from autofuse.backends.cuda.tuning import DEFAULT
        field = "two_stage_columns" if sys.argv[1] == "--widths" else "two_stage_loads"
        for width in map(int, sys.argv[2:]):
            jitted = autofuse.jit(gradient, tuning=DEFAULT.replace(**{field: width}))
            got = jitted(x, p, y)
            error = float(cupy.abs(got - gradient(x, p, y)).max())
            kernels = [k.strategy for k in jitted.lower(x, p, y).kernels]
            print(json.dumps({"part": "gradient", field: width,
                              "autofuse_ms": round(timed(jitted, x, p, y), 4),
                              "max_abs_difference_from_cupy": error, "kernels": kernels}),
                  flush=True)


if __name__ == "__main__":
    main()
