"""Runs GPU workloads once each under autofuse and its peers inside an NVTX range named `probe`, so
that Nsight Compute profiles exactly those calls (compilation, autotuning and warm-up stay outside):

    ncu --nvtx --nvtx-include probe/ --clock-control none --section SpeedOfLight \
        --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
        --section WarpStateStats python benchmarks/experiments/ncu_probe.py \
        --only "layernorm rows,(x.T+y)*2" --systems autofuse,torch.compile

It prints, before each profiled call, which workload and system the following kernels belong to,
and checks each system's result against NumPy first (as benchmarks/gpu.py does).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import gpu  # noqa: E402
from workloads import workloads  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", required=True, help="comma-separated workload names")
    parser.add_argument("--systems", default="autofuse,torch.compile")
    parser.add_argument("--scale", type=int, default=1)
    args = parser.parse_args()
    import torch
    names = args.only.split(",")
    rng = np.random.default_rng(7)
    for workload in workloads(args.scale):
        if workload.name not in names:
            continue
        host = workload.make(rng)
        reference = workload.fn(np)(*host)
        for system in args.systems.split(","):
            call, sync = gpu.system_call(system, workload, host)
            result = call()
            sync(result)
            gpu.check(gpu.to_host(result), reference, workload.tolerance)
            for _ in range(3):
                sync(call())
            print(f"PROBE {workload.name} | {system}", flush=True)
            torch.cuda.nvtx.range_push("probe")
            sync(call())
            torch.cuda.nvtx.range_pop()


if __name__ == "__main__":
    main()
