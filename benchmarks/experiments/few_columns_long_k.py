"""Where x @ w with a few columns should stop being a reduction (issue 30): the plan's kernel
(a thread an output, or the staged run up to K = 128) against the tiled product and cuBLAS
(CuPy), float32, M = 2^17, N of 1-16 and K of 128-1024, interleaved rounds, median us.

    python benchmarks/experiments/few_columns_long_k.py [--json out.json]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import cupy as cp
import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]
import autofuse  # noqa: E402
from autofuse.backends.cuda.tuning import Tuning  # noqa: E402
from rounds import time_rounds  # noqa: E402


def product(x, w):
    return x @ w


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(5)
    tiled = Tuning(products=dataclasses.replace(Tuning().products, small_side=0))
    found = {}
    m = 1 << 17
    for n, k in [(1, 1024), (2, 256), (2, 1024), (4, 128), (4, 256), (4, 1024), (10, 128),
                 (10, 256), (10, 1024), (16, 128), (16, 256), (16, 1024)]:
        x = cp.asarray(rng.standard_normal((m, k)).astype(np.float32))
        w = cp.asarray(rng.standard_normal((k, n)).astype(np.float32))
        plan, forced = autofuse.jit(product), autofuse.jit(product, tuning=tiled)
        want = cp.asnumpy(x).astype(np.float64) @ cp.asnumpy(w).astype(np.float64)
        for f in (plan, forced):
            assert np.allclose(cp.asnumpy(f(x, w)), want, rtol=1e-3, atol=1e-3 * np.sqrt(k))
        times = time_rounds({"plan": (plan, (x, w)), "tiled": (forced, (x, w)),
                             "cublas": (cp.matmul, (x, w))}, 9,
                            lambda _: cp.cuda.Device().synchronize())
        kernels = [kernel.strategy for kernel in plan.lower(x, w).kernels]
        row = {name: round(ms * 1e3, 1) for name, ms in times.items()}
        row["plan kernels"] = kernels
        found[f"({m},{k})@({k},{n})"] = row
        print(f"N={n:3} K={k:5}  plan {row['plan']:8.1f}  tiled {row['tiled']:8.1f}  "
              f"cuBLAS {row['cublas']:8.1f}  {kernels[0][:70]}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"device": cp.cuda.runtime.getDeviceProperties(0)[
            "name"].decode(), "us": found}, indent=1))


if __name__ == "__main__":
    main()
