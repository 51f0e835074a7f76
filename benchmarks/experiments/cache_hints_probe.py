"""What PTX cache qualifiers on the vector reads and writes of data a kernel touches once do to
the GPU workloads (cuda_source.STREAM_LOADS / STREAM_STORES, cuda_vector.hinted_load/store):
each setting's kernels checked against NumPy, then timed in interleaved rounds beside
torch.compile, in one process.

    python benchmarks/experiments/cache_hints_probe.py [--rounds K] [--only 'a,b']
        [--settings 'LOADS/STORES[/NAME=VALUE,...];...']

A setting's third part sets other cuda_source constants for it (ROW_ITEMS=8, or a string:
ROW_HOLD_LOAD=.L1::evict_last), reset after.
"""
import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import gpu  # noqa: E402
from workloads import workloads  # noqa: E402

import autofuse  # noqa: E402
import autofuse.backends.cuda_source as source  # noqa: E402

SETTINGS = ("/", ".nc.L1::no_allocate/", ".cs.nc/", ".nc.L1::no_allocate.L2::cache_hint|evict_first/",
            "/.cs", "/.L2::cache_hint|evict_first",
            ".nc.L1::no_allocate.L2::cache_hint|evict_first/.L2::cache_hint|evict_first")


def resources(fn) -> str:
    """Each loaded kernel's registers, local bytes and launch bound, as `48r 0l 5b`."""
    return " ".join(f"{k.group.launch.get('registers')}r {k.group.launch.get('local_bytes')}l "
                    f"{k.group.launch.get('min_blocks_per_sm', 0)}b"
                    for entry in fn._cache.values() for k in entry.program.kernels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="relu(x*y+z)*w,bias+GELU,sum(x*x),softmax rows,"
                                           "layernorm rows,bias+GELU f16,layernorm rows f16")
    parser.add_argument("--settings", default=";".join(SETTINGS))
    args = parser.parse_args()
    import cupy
    import torch
    settings = args.settings.split(";")
    defaults = source.STREAM_LOADS, source.STREAM_STORES
    rng = np.random.default_rng(5)
    bandwidth = gpu.copy_bandwidth()
    sync = lambda _: cupy.cuda.Device().synchronize()
    for workload in workloads():
        if workload.name not in args.only.split(","):
            continue
        host = workload.make(rng)
        reference = workload.fn(np)(*host)
        inputs = [cupy.asarray(a) for a in host]
        floor = workload.floor_bytes(host) / bandwidth * 1000
        calls = {}
        for setting in settings:
            loads, stores, *others = setting.split("/")
            saved = {}
            for assignment in filter(None, ",".join(others).split(",")):
                name, value = assignment.split("=")
                saved[name] = getattr(source, name)
                setattr(source, name, type(saved[name])(value))
            source.STREAM_LOADS, source.STREAM_STORES = loads, stores
            fn = autofuse.jit(workload.fn(np))
            result = fn(*inputs)
            sync(result)
            gpu.check(cupy.asnumpy(result), reference, workload.tolerance)
            calls[setting] = (lambda fn=fn: fn(*inputs), sync)
            print(f"{workload.name:18s} {setting:58s} {resources(fn)}", flush=True)
            for name, value in saved.items():
                setattr(source, name, value)
        tin = [torch.from_numpy(a).cuda() for a in host]
        compiled = torch.compile(workload.torch_fn(torch))
        calls["torch.compile"] = (lambda: compiled(*tin), lambda _: torch.cuda.synchronize())
        times = {name: [] for name in calls}
        for _ in range(args.rounds):
            for name, (call, wait) in calls.items():
                times[name].append(gpu.time_calls(call, wait))
        for name, values in times.items():
            ms = statistics.median(values)
            print(f"{workload.name:18s} {name or '/':58s} {ms:8.4f} ms  floor x{ms / floor:5.3f}"
                  f"  spread {min(values):.4f}-{max(values):.4f}", flush=True)
    source.STREAM_LOADS, source.STREAM_STORES = defaults


if __name__ == "__main__":
    main()
