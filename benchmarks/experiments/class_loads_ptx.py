"""Loads in flight in class kernels against specialized ones, read from their PTX (no GPU).

A specialized kernel's loops have constant trip counts, which LLVM unrolls: more global loads
are issued before the first is used. A class kernel's loops run to a size argument. This prints,
per program, the `ld.global` count of each kernel's PTX, specialized and as a class whose
first axis varies (the dimension `benchmarks/dynamic_shapes.py` varies), and the strategies.

    python benchmarks/experiments/class_loads_ptx.py [--only NAME ...] [--tuning FIELD=VALUE ...]
"""
import argparse
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.dirname(os.path.dirname(HERE))]

import autofuse  # noqa: E402
import autofuse.dynamic.classes as classes  # noqa: E402
import autofuse.dynamic.policy as policy  # noqa: E402
from autofuse.backends.cuda.tuning import Tuning  # noqa: E402

from dynamic_shapes import _smaller  # noqa: E402
from reductions_sweep import points  # noqa: E402
from workloads import workloads  # noqa: E402


def varying_first_axis(load, host):
    """Only the dimensions `_smaller` changes are candidates (as after a call one smaller)."""
    smaller = _smaller(load, host)
    moved = {(i, d) for i, (a, b) in enumerate(zip(host, smaller))
             for d in range(np.ndim(a)) if np.shape(a)[d] != np.shape(b)[d]}
    return lambda leaves, statics: [p for p in moved if p[0] not in statics]


def loads(kernel) -> int:
    return len(re.findall(r"ld\.global", kernel.ptx))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", default=["softmax rows f16", "softmax(0) 4096x8192 f16",
                        "x+r layernorm(0) 4096x8192 f32", "sum(0) 8192x4096 f16",
                        "softmax(-1) 32768x256 f32", "x.sum(0)"])
    parser.add_argument("--tuning", nargs="*", default=[])
    args = parser.parse_args()
    tuning = Tuning(**{k: int(v) for k, v in (t.split("=") for t in args.tuning)})
    rng = np.random.default_rng(0)
    for load in list(workloads()) + list(points()):
        if load.name not in args.only:
            continue
        host = [np.ascontiguousarray(a) for a in load.make(rng)]
        fn = load.fn(np)
        classes.candidates = policy.candidates = varying_first_axis(load, host)
        static = autofuse.jit(fn, backend="cuda", dynamic=False, tuning=tuning).lower(*host)
        made = autofuse.jit(fn, backend="cuda", dynamic=True, tuning=tuning).lower(*host)
        dynamic = [line for line in made.as_text().splitlines() if line.startswith("# dynamic")]
        print(f"{load.name}: {'; '.join(dynamic) or 'static'}")
        for label, lowered in (("specialized", static), ("class", made)):
            for k in lowered.kernels:
                print(f"  {label:11} ld.global {loads(k):3}  {k.strategy}")


if __name__ == "__main__":
    main()
