"""A wrong-answer probe for the two-stage class kernel (issue 33): the bias gradient over sizes
where a sweep saw wrong answers, in the order the sweep took them and each alone, repeated; for
a wrong result, which chunks' partial sums its error matches.

    python benchmarks/experiments/two_stage_class_probe.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import cupy as cp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import autofuse  # noqa: E402
from autofuse.backends.cuda.emit.two_stage_plan import chunking  # noqa: E402


def bias_gradient(g):
    return (g * np.float32(2)).sum(axis=0)


def check(f, n, rng, label):
    host = rng.standard_normal((n, 256)).astype(np.float32)
    want = bias_gradient(host.astype(np.float64))
    got = cp.asnumpy(f(cp.asarray(host)))
    error = np.abs(got - want)
    bad = np.nonzero(error > 1e-2 * (1 + np.abs(want)))[0]
    if len(bad) == 0:
        return True
    chunk, chunks = chunking(n, 132, 64, 8)
    sums = [(2 * host[c * chunk:(c + 1) * chunk].astype(np.float64)).sum(0) for c in range(chunks)]
    column = bad[0]
    missing = got[column] - want[column]
    near = [c for c in range(chunks) if abs(abs(missing) - abs(sums[c][column])) < 1e-2]
    print(f"{label} n={n}: {len(bad)} columns wrong (first {bad[:8]}), error at column {column} "
          f"{missing:.4f}; chunks {chunks} of {chunk}; chunks whose sum matches: {near[:8]}",
          flush=True)
    return False


def main():
    rng = np.random.default_rng(1)
    timed = 65536
    sizes = [0, 1] + sorted({max(2, int(timed * k / 48)) for k in range(48)} | {2, 3, 5, 7, 11})[:48]
    for attempt in range(3):
        f = autofuse.jit(bias_gradient, backend="cuda")
        wrong = [n for n in sizes if not check(f, n, rng, f"sweep {attempt}")]
        print("sweep", attempt, "wrong at", wrong, f.cache_info(), flush=True)
    for n in (27306, 34133, 51882):
        f = autofuse.jit(bias_gradient, backend="cuda")
        f(cp.zeros((n - 1, 256), np.float32))
        f(cp.zeros((n - 2, 256), np.float32))
        results = [check(f, n, rng, "alone") for _ in range(5)]
        print("alone", n, results, flush=True)
    static = autofuse.jit(bias_gradient, backend="cuda", dynamic=False)
    print("static", [check(static, n, rng, "static") for n in (27306, 34133, 51882)])


if __name__ == "__main__":
    main()
