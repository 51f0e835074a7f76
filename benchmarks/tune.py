"""Sweeps a CUDA code-generation constant over GPU workloads (autofuse only), to choose it by
measurement:  python benchmarks/tune.py ROW_ITEMS 4,8,16 "softmax rows,layernorm rows"
A name `module.NAME` sets NAME in autofuse/backends/module.py (cuda_matmul.ENABLED 0,1). Values
that are not integers are set as strings (STREAM_LOADS ",.nc.L1::no_allocate": "" first). More
arguments NAME=VALUE hold other constants fixed for the sweep:
    python benchmarks/tune.py cuda_matmul.WIDE 128,256 attention cuda_matmul.NARROW=64
"""
from __future__ import annotations

import sys

import numpy as np

import gpu
from workloads import workloads
import importlib

import autofuse.backends.cuda_source as source


def _place(name: str):
    """(module, attribute) of a constant: NAME in cuda_source, module.NAME elsewhere."""
    if "." not in name:
        return source, name
    return importlib.import_module("autofuse.backends." + name.split(".")[0]), name.split(".")[1]


def _value(text: str):
    return int(text) if text.lstrip("-").isdigit() else text


def main():
    name, values, names = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
    for fixed in sys.argv[4:]:
        key, value = fixed.split("=", 1)
        setattr(*_place(key), _value(value))
    module, attribute = _place(name)
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
            setattr(module, attribute, _value(value))
            fn = gpu.autofuse.jit(workload.fn(np))
            ms = gpu.time_calls(lambda: fn(*inputs), lambda _: cupy.cuda.Device().synchronize())
            strategy = "; ".join(k.strategy for k in fn.lower(*inputs).kernels)
            extra = (f"  {workload.flops(host) / ms / 1e9:6.1f} TFLOP/s" if workload.flops else "")
            shown = value or "''"
            print(f"{workload.name:16s} {name}={shown:>10s} {ms:8.4f} ms  floor x{ms / floor:5.2f}"
                  f"{extra}  {strategy}")


if __name__ == "__main__":
    main()
