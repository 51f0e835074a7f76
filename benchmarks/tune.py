"""Sweeps a CUDA code-generation constant over GPU workloads (autofuse only), to choose it by
measurement:  python benchmarks/tune.py ROW_ITEMS 4,8,16 "softmax rows,layernorm rows"
"""
from __future__ import annotations

import sys

import numpy as np

import gpu
from workloads import workloads
import autofuse.backends.cuda_source as source


def main():
    name, values, names = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
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
            setattr(source, name, int(value))
            fn = gpu.autofuse.jit(workload.fn(np))
            ms = gpu.time_calls(lambda: fn(*inputs), lambda _: cupy.cuda.Device().synchronize())
            strategy = fn.lower(*inputs).kernels[0].strategy
            print(f"{workload.name:16s} {name}={value:>10s} {ms:8.4f} ms  floor x{ms / floor:5.2f}  {strategy}")


if __name__ == "__main__":
    main()
