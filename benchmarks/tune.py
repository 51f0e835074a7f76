"""Sweeps a CUDA code-generation constant over GPU workloads (autofuse only), to choose it by
measurement:  python benchmarks/tune.py ROW_ITEMS 4,8,16 "softmax rows,layernorm rows"
A name `module.NAME` sets NAME in autofuse/backends/module.py (cuda_matmul.ENABLED 0,1). Values
that are not integers are set as strings (STREAM_LOADS ",.nc.L1::no_allocate": "" first).
"""
from __future__ import annotations

import sys

import numpy as np

import gpu
from workloads import workloads
import importlib

import autofuse.backends.cuda_source as source


def main():
    name, values, names = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
    module = source
    if "." in name:
        module = importlib.import_module("autofuse.backends." + name.split(".")[0])
    import cupy
    rng = np.random.default_rng(5)
    bandwidth = gpu.copy_bandwidth()
    for workload in workloads():
        if workload.name not in names:
            continue
        host = workload.make(rng)
        inputs = [cupy.asarray(a) for a in host]
        floor = workload.floor_bytes(host) / bandwidth * 1000
        for value in values:
            setattr(module, name.split(".")[-1], int(value) if value.lstrip("-").isdigit()
                    else value)
            fn = gpu.autofuse.jit(workload.fn(np))
            ms = gpu.time_calls(lambda: fn(*inputs), lambda _: cupy.cuda.Device().synchronize())
            strategy = fn.lower(*inputs).kernels[0].strategy
            extra = (f"  {workload.flops(host) / ms / 1e9:6.1f} TFLOP/s" if workload.flops else "")
            shown = value or "''"
            print(f"{workload.name:16s} {name}={shown:>10s} {ms:8.4f} ms  floor x{ms / floor:5.2f}"
                  f"{extra}  {strategy}")


if __name__ == "__main__":
    main()
