"""Host time of a cached call of the gradient programs (CUDA backend, CuPy arguments): microseconds
a call over many calls without synchronizing (the GPU keeps up or the host waits on it), and a
cProfile of them.

    python benchmarks/experiments/gradient_call_cost.py --only "Adam step" [--calls 2000]
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))

import gradients  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", required=True)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--scale", type=int, default=16, help="divide the rows by this (a small "
                        "GPU load, so the host's time shows)")
    args = parser.parse_args()
    import cupy
    rng = np.random.default_rng(2026)
    k = gradients.Lib(np)
    for name, fn, host, argnums, _ in gradients.programs(rng, cpu=False):
        if name not in args.only.split(","):
            continue
        # (the batch's rows cut: the arrays whose first axis is the last argument's, which is
        # the batch's in the row programs and the Adam step)
        rows = host[-1].shape[0]
        host = [a[: max(1, rows // args.scale)] if a.shape[0] == rows else a for a in host]
        ours, _ = gradients._ours(fn, argnums, k)
        inputs = [cupy.asarray(a) for a in host]
        ours(*inputs)
        cupy.cuda.Device().synchronize()
        start = time.perf_counter()
        for _ in range(args.calls):
            ours(*inputs)
        host_us = (time.perf_counter() - start) * 1e6 / args.calls
        cupy.cuda.Device().synchronize()
        whole_us = (time.perf_counter() - start) * 1e6 / args.calls
        print(f"{name}: {host_us:.1f} us a call on the host, {whole_us:.1f} with the GPU's "
              f"({[a.shape for a in host]})", flush=True)
        for entry in ours._cache.values():
            print(getattr(entry.program, "host_source", None))
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(args.calls):
            ours(*inputs)
        profile.disable()
        cupy.cuda.Device().synchronize()
        pstats.Stats(profile).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
