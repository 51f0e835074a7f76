"""Sweeps a field of the CUDA generator's Tuning over GPU workloads, to choose it by measurement:
    python benchmarks/tune.py row_items 4,8,16 "softmax rows,layernorm rows"
Names are autofuse.backends.cuda.tuning.Tuning's fields (either case: ROW_ITEMS is row_items).
Values that read as integers are ints, others text (reduce_loads ",.L1::evict_first": "" first).
More arguments NAME=VALUE hold other fields fixed for the sweep:
    python benchmarks/tune.py tiles_wide 128,256 attention tiles_narrow=64
The name `variants` sweeps sets of fields instead, each value NAME=VALUE pairs joined by "+"
(an empty value: the defaults):
    python benchmarks/tune.py variants ",vector_ilp=2+threads=128" "relu(x*y+z)*w"
Each value compiles its own function, `autofuse.jit(f, tuning=...)` (a Tuning is part of the
disk-cache key, so values never share cubins), checked against NumPy; then all values and
torch.compile (where torch is installed) are timed in the same interleaved rounds, as
benchmarks/gpu.py times them (gpu.time_rounds: the difference of a long and a lead batch;
TUNE_ROUNDS rounds, default 7), and on the GPU's clock by CUDA events in the same batches (all of
them order their work on the default stream). TUNE_FLOAT16=float32 compiles with
jit(float16="float32"). Each value's time is shown with its ratio to torch.compile taken round
by round (median), by the host's clock and by the GPU's.
"""
from __future__ import annotations

import os
import sys

import numpy as np

import gpu
from workloads import workloads


def _tuning(name: str, value: str, fixed: str):
    """The Tuning one value of the sweep compiles with (the fixed fields first)."""
    text = value if name == "variants" else f"{name}={value}"
    return gpu.tuning("+".join(filter(None, (fixed, text))))


def main():
    name, values, names = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
    fixed = "+".join(sys.argv[4:])
    gpu.tuning(fixed)                       # an unknown field fails here, before any GPU work
    import cupy
    rng = np.random.default_rng(5)
    bandwidth = gpu.copy_bandwidth(short=2)
    sync = lambda _: cupy.cuda.Device().synchronize()
    options = {"float16": os.environ["TUNE_FLOAT16"]} if os.environ.get("TUNE_FLOAT16") else {}
    for workload in workloads():
        if workload.name not in names:
            continue
        host = workload.make(rng)
        reference = workload.fn(np)(*host)
        inputs = [cupy.asarray(a) for a in host]
        floor = workload.floor_bytes(host) / bandwidth * 1000
        entries, strategies = {}, {}
        for value in values:
            fn = gpu.autofuse.jit(workload.fn(np), tuning=_tuning(name, value, fixed), **options)
            gpu.check(gpu.to_host(fn(*inputs)), reference, workload.tolerance)
            label = (value or "defaults") if name == "variants" else f"{name}={value or repr('')}"
            entries[label] = (lambda fn=fn: fn(*inputs), sync)
            strategies[label] = "; ".join(k.strategy for k in fn.lower(*inputs).kernels)
        try:
            entries["torch.compile"] = gpu.system_call("torch.compile", workload, host)
        except ImportError:
            pass
        device = {label: [] for label in entries}
        rounds = gpu.time_rounds(entries, rounds=int(os.environ.get("TUNE_ROUNDS", 7)), short=2,
                                 device=device)
        peer, peer_gpu = rounds.get("torch.compile"), device.get("torch.compile")
        for label, samples in rounds.items():
            ms, on_gpu = float(np.median(samples)), float(np.median(device[label]))
            extra = (f"  {workload.flops(host) / ms / 1e9:6.1f} TFLOP/s" if workload.flops else "")
            ratio = (f"  x torch.compile {np.median([a / b for a, b in zip(samples, peer)]):.3f}"
                     f" (GPU clock {on_gpu:.4f} ms,"
                     f" {np.median([a / b for a, b in zip(device[label], peer_gpu)]):.3f})"
                     if peer and label != "torch.compile" else f" (GPU clock {on_gpu:.4f} ms)")
            print(f"{workload.name:16s} {label:>24s} {ms:8.4f} ms  floor x{ms / floor:5.2f}"
                  f"{ratio}{extra}  {strategies.get(label, '')}", flush=True)


if __name__ == "__main__":
    main()
