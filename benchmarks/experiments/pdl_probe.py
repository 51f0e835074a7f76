"""GPU time per call of benchmark workloads by launch mode, beside torch.compile, in one process.
Modes (jit options, Tuning fields):
- "graph": kernels that do not wait for their prerequisite (overlap=0), one CUDA graph a call
  (the default before c43e8fd);
- "kernels": the same kernels launched one by one (cuda_graph=False);
- "overlap": the defaults: kernels begin with launch_dependents() and wait_for_prerequisite(),
  launched one by one with programmatic stream serialization where a call moves at least
  Tuning.direct_bytes a kernel (else as a graph);
- "graph+wait": the waiting kernels, as a CUDA graph (direct_bytes huge).
This covers the modes of the earlier launch_modes_probe.py too (kernels one by one against a
graph, beside torch.compile).
Results checked against NumPy; rounds as gpu.time_rounds times them; ratios over torch.compile
round by round (host clock; GPU clock).

    python benchmarks/experiments/pdl_probe.py ["workload,workload"]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gpu  # noqa: E402
from workloads import workloads  # noqa: E402

import autofuse  # noqa: E402

MODES = {"graph": ({}, "overlap=0"),
         "kernels": ({"cuda_graph": False}, "overlap=0"),
         "overlap": ({}, ""),
         "graph+wait": ({}, f"direct_bytes={1 << 60}")}


def main():
    import cupy
    only = sys.argv[1].split(",") if len(sys.argv) > 1 else None
    rng = np.random.default_rng(5)
    bandwidth = gpu.copy_bandwidth(short=2)
    sync = lambda _: cupy.cuda.Device().synchronize()
    for workload in workloads():
        if only and workload.name not in only:
            continue
        host = workload.make(rng)
        reference = workload.fn(np)(*host)
        inputs = [cupy.asarray(a) for a in host]
        entries = {}
        for label, (options, fields) in MODES.items():
            fn = autofuse.jit(workload.fn(np), tuning=gpu.tuning(fields), **options)
            gpu.check(gpu.to_host(fn(*inputs)), reference, workload.tolerance)
            lowered = fn.lower(*inputs)
            print(f"{workload.name:16s} {label:>20s}: " + "; ".join(
                k.strategy + (" (waits)" if "wait_for_prerequisite()" in k.source else "")
                for k in lowered.kernels) + " | " + (lowered.host_source or "").split("\n")[0]
                [:110], flush=True)
            entries[label] = (lambda fn=fn: fn(*inputs), sync)
        entries["torch.compile"] = gpu.system_call("torch.compile", workload, host)
        device = {label: [] for label in entries}
        rounds = gpu.time_rounds(entries, rounds=7, short=2, device=device)
        floor = workload.floor_bytes(host) / bandwidth * 1000
        peer, peer_gpu = rounds["torch.compile"], device["torch.compile"]
        for label, samples in rounds.items():
            ms, on_gpu = float(np.median(samples)), float(np.median(device[label]))
            ratios = (f"x torch.compile {np.median([a / b for a, b in zip(samples, peer)]):.4f}"
                      f" (GPU clock {np.median([a / b for a, b in zip(device[label], peer_gpu)]):.4f})")
            print(f"{workload.name:16s} {label:>20s} {ms:8.4f} ms (GPU {on_gpu:.4f})  "
                  f"floor x{ms / floor:5.3f}  {ratios}", flush=True)


if __name__ == "__main__":
    main()
