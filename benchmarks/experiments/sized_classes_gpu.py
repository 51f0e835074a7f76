"""Class kernels for what had been kept static as faster for its sizes (issue 33): attention's
flash kernel over a batch that varies, and products with a few columns (x @ w, x.T @ g) whose
kernels compute runs of a row's outputs a thread.

For each program: the kernel specialized to the shape (jit(dynamic=False)) against the class
built after a call one batch entry (or row) smaller, alternating rounds, median ms of
synchronized batches (dynamic_shapes.gpu_time); each answer checked against NumPy in float64;
the compiles 50 batch sizes take under the automatic policy, through cache_info().

    python benchmarks/experiments/sized_classes_gpu.py [--json OUT] [--only NAME ...]
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.dirname(os.path.dirname(HERE))]

import autofuse  # noqa: E402

from dynamic_shapes import gpu_time  # noqa: E402


def attention(q, k, v):
    s = q @ np.swapaxes(k, -1, -2) * (q.shape[-1] ** -0.5)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


def logits(x, w):
    return x @ w


def gradient(x, g):
    return x.T @ g


def programs() -> list:
    """(name, fn, make(batch) -> host arrays, batch at full size)."""
    def heads(dtype, h, s, d):
        return lambda b, rng: tuple((rng.standard_normal((b, h, s, d)) * 0.5).astype(dtype)
                                    for _ in range(3))

    def few(dtype, k, n, left):
        w = None

        def make(m, rng):
            nonlocal w
            if left:
                if w is None:
                    w = rng.standard_normal((k, n)).astype(dtype)
                return rng.standard_normal((m, k)).astype(dtype), w
            return (rng.standard_normal((m, k)).astype(dtype),
                    rng.standard_normal((m, n)).astype(dtype))
        return make
    return [
        ("attention f32 (B,16,1024,64)", attention, heads(np.float32, 16, 1024, 64), 8),
        ("attention f32 (B,32,2048,64)", attention, heads(np.float32, 32, 2048, 64), 1),
        ("attention f16 (B,16,1024,64)", attention, heads(np.float16, 16, 1024, 64), 8),
        ("attention f16 (B,32,2048,64)", attention, heads(np.float16, 32, 2048, 64), 1),
        ("x@w f32 (M,64)@(64,10)", logits, few(np.float32, 64, 10, True), 1 << 19),
        ("x@w f32 (M,32)@(32,16)", logits, few(np.float32, 32, 16, True), 1 << 20),
        ("x@w f64 (M,64)@(64,10)", logits, few(np.float64, 64, 10, True), 1 << 19),
        ("x.T@g f32 (M,64).T@(M,10)", gradient, few(np.float32, 64, 10, False), 1 << 19),
        ("x.T@g f64 (M,64).T@(M,10)", gradient, few(np.float64, 64, 10, False), 1 << 19),
    ]


def _error(got, host, fn) -> float:
    import cupy
    want = fn(*(a.astype(np.float64) for a in host))
    return float(np.max(np.abs(cupy.asnumpy(got).astype(np.float64) - want) /
                        (1 + np.abs(want))))


def one(name, fn, make, batch, rng) -> dict:
    import cupy
    host = make(batch, rng)
    device = [cupy.asarray(a) for a in host]
    smaller = [cupy.asarray(a) for a in make(max(1, batch - 1) if batch > 1 else 2, rng)]
    shaped = autofuse.jit(fn, backend="cuda")
    shaped(*smaller)
    special = autofuse.jit(fn, backend="cuda", dynamic=False)
    row = {"program": name, "batch": batch}
    for label, f in (("specialized", special), ("class", shaped)):
        row[f"{label} error"] = _error(f(*device), host, fn)
    for _ in range(3):
        for label, f in (("specialized", special), ("class", shaped)):
            row.setdefault(f"{label} ms rounds", []).append(gpu_time(lambda: f(*device)))
    for label in ("specialized", "class"):
        row[f"{label} ms"] = statistics.median(row[f"{label} ms rounds"])
    row["class/specialized"] = row["class ms"] / row["specialized ms"]
    lowered = shaped.lower(*device)
    row["class"] = "# dynamic:" in lowered.as_text("fused")
    row["kernels"] = [k.strategy for k in lowered.kernels]
    row["specialized kernels"] = [k.strategy for k in special.lower(*device).kernels]
    # 50 batch sizes under the automatic policy (a fresh function): compiles and wall time
    counted = autofuse.jit(fn, backend="cuda")
    sizes = [batch] + [b for b in range(1, 50) if b != batch][:49] if batch < 64 else \
        [batch - 7 * j for j in range(50)]
    largest = [cupy.asarray(a) for a in make(max(sizes), rng)]
    shared = [a.shape[0] != max(sizes) for a in largest]      # (x @ w's w)
    start = time.perf_counter()
    for size in sizes:          # (leading slices of the largest arrays: contiguous)
        counted(*[a if keep else a[:size] for a, keep in zip(largest, shared)])
        if counted.cache_info().compiles > 4:      # (no class: stop, say so)
            row["50 sizes stopped at"] = size
            break
    cupy.cuda.Device().synchronize()
    row["50 sizes s"] = time.perf_counter() - start
    row["50 sizes compiles"] = counted.cache_info().compiles
    print(json.dumps({k: v for k, v in row.items() if not k.endswith("rounds")}), flush=True)
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", default=None)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(33)
    rows = [one(*p, rng) for p in programs() if not args.only or p[0] in args.only]
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)


if __name__ == "__main__":
    main()
