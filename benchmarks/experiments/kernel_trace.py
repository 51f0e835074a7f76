"""Where a system's time per call goes in a timing loop like benchmarks/gpu.py's: each call's
kernels as the GPU ran them (CUPTI, through torch.profiler, which sees every kernel of the process,
autofuse's and CuPy's too), their durations and the idle gaps between them.

    python benchmarks/experiments/kernel_trace.py --only "(x.T+y)*2,layernorm rows" \
        [--systems autofuse,torch.compile] [--calls 50] [--rounds 3]

Nsight Compute times one kernel alone, after flushing the caches; this times kernels back to back
as the benchmark runs them, so a difference that ncu does not show (a slower kernel in the loop,
or gaps between kernels) shows here. Rounds alternate the systems.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import gpu  # noqa: E402
from workloads import workloads  # noqa: E402


def trace(call, sync, calls: int):
    """(kernel events as (name, start us, duration us), wall ms a call) over `calls` calls."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    sync(call())
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        start = time.perf_counter()
        result = None
        for _ in range(calls):
            result = call()
        sync(result)
        wall = (time.perf_counter() - start) * 1000 / calls
    torch.cuda.synchronize()
    kernels = [(e.name, e.time_range.start, e.time_range.end - e.time_range.start)
               for e in prof.events() if e.device_type.name == "CUDA"
               and not e.name.startswith(("Memcpy", "Memset"))]
    return sorted(kernels, key=lambda k: k[1]), wall


def summary(kernels, calls: int) -> dict:
    """Per kernel name: median duration; and the median gap between consecutive kernels."""
    durations = {}
    for name, _, length in kernels:
        durations.setdefault(name[:60], []).append(length)
    gaps = [b[1] - (a[1] + a[2]) for a, b in zip(kernels, kernels[1:])]
    busy = sum(k[2] for k in kernels) / calls
    span = (kernels[-1][1] + kernels[-1][2] - kernels[0][1]) / calls if kernels else 0.0
    return {"kernels": {n: (len(v) // calls, statistics.median(v)) for n, v in durations.items()},
            "gap_us": statistics.median(gaps) if gaps else 0.0, "busy_us": busy, "span_us": span}


def line(name: str, system: str, round_: int, kernels, wall: float, calls: int,
         extra: str = "") -> str:
    """One round's line: wall time a call, then `extra`, the span, busy time and median gap of
    the kernels, and each kernel's count a call and median duration."""
    s = summary(kernels, calls)
    listed = "; ".join(f"{n} x{k} {d:.1f}us" for n, (k, d) in s["kernels"].items())
    return (f"{name:16s} {system:14s} round {round_}: wall {wall * 1000:7.1f}us{extra}"
            f" span {s['span_us']:7.1f}us busy {s['busy_us']:7.1f}us"
            f" gap {s['gap_us']:5.2f}us | {listed}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", required=True, help="comma-separated workload names")
    parser.add_argument("--systems", default="autofuse,torch.compile")
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    names = args.only.split(",")
    rng = np.random.default_rng(11)
    for workload in workloads():
        if workload.name not in names:
            continue
        systems = gpu.checked_calls(workload, workload.make(rng), args.systems.split(","))
        for round_ in range(args.rounds):
            for system, (call, sync) in systems.items():
                kernels, wall = trace(call, sync, args.calls)
                print(line(workload.name, system, round_, kernels, wall, args.calls), flush=True)


if __name__ == "__main__":
    main()
