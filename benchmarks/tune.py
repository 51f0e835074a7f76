"""Sweeps a CUDA code-generation constant over GPU workloads, to choose it by measurement:
    python benchmarks/tune.py ROW_ITEMS 4,8,16 "softmax rows,layernorm rows"
A name `module.NAME` sets NAME in autofuse/backends/module.py (cuda_matmul.ENABLED 0,1). Values
that are not integers are set as strings (STREAM_LOADS ",.nc.L1::no_allocate": "" first). More
arguments NAME=VALUE hold other constants fixed for the sweep:
    python benchmarks/tune.py cuda_matmul.WIDE 128,256 attention cuda_matmul.NARROW=64
The name `variants` sweeps sets of constants instead, each value NAME=VALUE pairs joined by "+"
(an empty value: the defaults):
    python benchmarks/tune.py variants ",VECTOR_ILP=2+THREADS=128" "relu(x*y+z)*w"
Each value's kernels are compiled under it and checked against NumPy; then all values and
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

import autofuse.backends.cuda_source as source


def _settings(name: str, value: str) -> dict:
    """{(module, attribute): value} that one value of the sweep sets."""
    return gpu.constant_settings(value if name == "variants" else f"{name}={value}")


def main():
    name, values, names = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
    for fixed in sys.argv[4:]:
        for place, value in gpu.constant_settings(fixed).items():
            setattr(*place, value)
    import cupy
    rng = np.random.default_rng(5)
    bandwidth = gpu.copy_bandwidth(short=2)
    sync = lambda _: cupy.cuda.Device().synchronize()
    options = {"float16": os.environ["TUNE_FLOAT16"]} if os.environ.get("TUNE_FLOAT16") else {}
    cache = str(gpu.autofuse.backends.disk_cache.cache_dir())
    for workload in workloads():
        if workload.name not in names:
            continue
        host = workload.make(rng)
        reference = workload.fn(np)(*host)
        inputs = [cupy.asarray(a) for a in host]
        floor = workload.floor_bytes(host) / bandwidth * 1000
        entries, strategies = {}, {}
        for value in values:
            settings = _settings(name, value)
            # NOTE: a constant outside cuda_source (the intrinsics' cuda_vector.HALF_WORDS_PTX)
            # may change the cubin and not the generated text that keys the disk cache: each
            # value then links into a cache folder of its own.
            if any(module is not source for module, _ in settings):
                os.environ["AUTOFUSE_CACHE_DIR"] = os.path.join(cache, f"tune-{values.index(value)}")
            try:
                with gpu.constants(settings):
                    fn = gpu.autofuse.jit(workload.fn(np), **options)
                    gpu.check(gpu.to_host(fn(*inputs)), reference, workload.tolerance)
                    strategies_now = "; ".join(k.strategy for k in fn.lower(*inputs).kernels)
            finally:
                os.environ["AUTOFUSE_CACHE_DIR"] = cache
            label = (value or "defaults") if name == "variants" else f"{name}={value or repr('')}"
            entries[label] = (lambda fn=fn: fn(*inputs), sync)
            strategies[label] = strategies_now
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
