"""Rows kernels with their grid capped at Tuning.row_blocks_per_sm blocks an SM (the rest of the
rows looping) against a block a row, in turns (gpu.time_rounds), on the suite's rows workloads
(16384 rows of 4096) and short rows of the reduction sweep, CuPy inputs.

    python benchmarks/experiments/row_grid_ab.py [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from gpu import copy_bandwidth, time_rounds, tuning  # noqa: E402
from workloads import workloads  # noqa: E402

SWEEP = {
    "sum(-1) 33554x1000": (lambda x: x.sum(-1), (33554, 1000), np.float32),
    "sum(-1) 33554x1000 f16": (lambda x: x.sum(-1), (33554, 1000), np.float16),
    "softmax(-1) 65536x1000": (lambda x: np.exp(x - x.max(-1, keepdims=True))
                               / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True),
                               (65536, 1000), np.float32),
}


def main():
    import cupy
    import autofuse
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    bandwidth = copy_bandwidth(2)
    rng = np.random.default_rng(3)
    cases = [(w.name, w.fn(np), w.make(rng)) for w in workloads()
             if w.name.startswith(("softmax rows", "layernorm rows"))]
    cases += [(name, fn, (rng.standard_normal(shape).astype(dtype),))
              for name, (fn, shape, dtype) in SWEEP.items()]
    variants = {"capped": None, "a block a row": tuning("row_blocks_per_sm=1000000")}
    for name, fn, host in cases:
        inputs = [cupy.asarray(a) for a in host]
        entries, grids = {}, {}
        for label, tune in variants.items():
            jitted = autofuse.jit(fn, tuning=tune) if tune else autofuse.jit(fn)
            jitted(*inputs)
            entries[label] = (lambda j=jitted: j(*inputs),
                              lambda _: cupy.cuda.Device().synchronize())
            grids[label] = [k.launch.get("grid") for k in jitted.lower(*inputs).kernels]
        times = time_rounds(entries, rounds=args.rounds, short=2)
        floor = sum(a.nbytes for a in host) * (2 if "softmax" in name or "layernorm" in name
                                               else 1) / bandwidth * 1e6
        cells = "  ".join(f"{label} {float(np.median(t)) * 1000:7.1f} us {grids[label]}"
                          for label, t in times.items())
        print(f"{name:28s} floor {floor:6.1f}  {cells}", flush=True)


if __name__ == "__main__":
    main()
