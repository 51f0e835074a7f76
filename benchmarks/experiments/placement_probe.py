"""Whether the memory a kernel reads, rather than the kernel, makes the last percent between
autofuse and torch.compile: each runs on CuPy's copies of the inputs and on torch's, and on a
second set of torch copies placed elsewhere, all timed in the same interleaved rounds as
benchmarks/gpu.py times them (gpu.time_rounds), on the host's clock and by CUDA events.

    python benchmarks/experiments/placement_probe.py --only "relu(x*y+z)*w,sum(x*x)" [--rounds 9]

gpu.py gives each system its own copies (CuPy's pool for autofuse, torch's caching allocator
for torch.compile), so a difference in where the buffers lie is part of its comparison. Here
autofuse reads torch's tensors directly (and allocates its outputs from torch's allocator, as it
does for torch arguments) and torch.compile reads CuPy's arrays through
`__cuda_array_interface__`, with no copy. Each figure is the median over rounds of a call's time
divided by torch.compile's on its own buffers in the same round. The buffers' addresses are
printed, since DRAM channels are chosen from address bits.
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
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--gap-mb", type=int, default=37,
                        help="MiB allocated between the two sets of torch copies")
    args = parser.parse_args()
    import cupy
    import torch
    names = args.only.split(",")
    rng = np.random.default_rng(11)
    sync = lambda _: torch.cuda.synchronize()
    for workload in workloads():
        if workload.name not in names:
            continue
        host = workload.make(rng)
        reference = workload.fn(np)(*host)
        buffers = {"cupy": [cupy.asarray(a) for a in host]}
        buffers["torch"] = [torch.from_numpy(a).cuda() for a in host]
        gap = torch.empty(args.gap_mb << 20, dtype=torch.uint8, device="cuda")
        buffers["torch 2"] = [torch.from_numpy(a).cuda() for a in host]
        as_torch = {key: [torch.as_tensor(a, device="cuda") for a in arrays]
                    for key, arrays in buffers.items()}
        fused = gpu.autofuse.jit(workload.fn(np))
        compiled = torch.compile(workload.torch_fn(torch))
        entries = {}
        for key in buffers:
            for system, fn, inputs in (("autofuse", fused, buffers[key] if key == "cupy"
                                        else as_torch[key]),
                                       ("torch.compile", compiled, as_torch[key])):
                label = f"{system} on {key} buffers"
                result = fn(*inputs)
                gpu.check(gpu.to_host(result), reference, workload.tolerance)
                entries[label] = ((lambda fn=fn, inputs=inputs: fn(*inputs)), sync)
        addresses = {key: " ".join(hex(t.data_ptr()) for t in tensors)
                     for key, tensors in as_torch.items()}
        device = {label: [] for label in entries}
        rounds = gpu.time_rounds(entries, rounds=args.rounds, short=2, device=device)
        base = "torch.compile on torch buffers"
        print(f"== {workload.name}")
        for key, text in addresses.items():
            print(f"   {key:8s} inputs at {text}")
        for label, samples in rounds.items():
            host_ratio = np.median([a / b for a, b in zip(samples, rounds[base])])
            gpu_ratio = np.median([a / b for a, b in zip(device[label], device[base])])
            print(f"   {label:34s} {np.median(samples):8.4f} ms  GPU clock "
                  f"{np.median(device[label]):8.4f} ms   x {base}: {host_ratio:.4f} "
                  f"(GPU clock {gpu_ratio:.4f})", flush=True)
        del gap


if __name__ == "__main__":
    main()
