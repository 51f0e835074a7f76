"""Which vector width suits a grid-stride elementwise kernel with k inputs: chains of k float32
arrays (8192 x 8192 each, one output) compiled with 16-byte and 8-byte vectors
(Tuning.vector_bytes) and timed beside torch.compile in the same interleaved rounds, as
benchmarks/gpu.py times them (gpu.time_rounds; CUDA events for the GPU's clock).

    python benchmarks/experiments/vector_width_probe.py [--inputs 1,2,3,4,6] [--widths 16,8]

Inductor autotunes its pointwise launch per kernel: for the benchmark's relu chain (4 inputs) it
picked 512 elements a block over 8 warps, 8 bytes a thread an input (its Triton cache on an
H200); autofuse takes one width for all, so this measures how the best width moves with k.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import gpu  # noqa: E402


def chain(relu):
    """A function of k arrays: multiply-adds and a relu, each input read once."""
    def f(*arrays):
        y = relu(arrays[0] * 1.5 + 0.5)
        for k, a in enumerate(arrays[1:]):
            y = relu(y * a + 0.25) if k % 2 == 0 else y + a
        return y
    return f


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", default="1,2,3,4,6")
    parser.add_argument("--widths", default="16,8")
    parser.add_argument("--side", type=int, default=8192)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    import cupy
    import torch
    rng = np.random.default_rng(17)
    numpy_fn = chain(lambda v: np.maximum(v, 0))
    torch_fn = torch.compile(chain(lambda v: torch.clamp_min(v, 0)))
    sync = lambda _: torch.cuda.synchronize()
    for count in [int(k) for k in args.inputs.split(",")]:
        host = [rng.standard_normal((args.side, args.side), dtype=np.float32) for _ in range(count)]
        reference = numpy_fn(*host)
        on_device = [cupy.asarray(a) for a in host]
        entries = {}
        for width in [int(w) for w in args.widths.split(",")]:
            # NOTE: vector_step_bytes 0 (no limit): this probe sets the width for every k itself.
            fn = gpu.autofuse.jit(numpy_fn,
                                  tuning=gpu.tuning(f"vector_bytes={width}+vector_step_bytes=0"))
            gpu.check(gpu.to_host(fn(*on_device)), reference, 1e-5)
            strategy = fn.lower(*on_device).kernels[0].strategy
            entries[f"{width}-byte ({strategy})"] = ((lambda fn=fn: fn(*on_device)), sync)
        tensors = [torch.from_numpy(a).cuda() for a in host]
        gpu.check(gpu.to_host(torch_fn(*tensors)), reference, 1e-5)
        entries["torch.compile"] = ((lambda: torch_fn(*tensors)), sync)
        device = {label: [] for label in entries}
        rounds = gpu.time_rounds(entries, rounds=args.rounds, short=2, device=device)
        peer = device["torch.compile"]
        print(f"== {count} input{'s' if count > 1 else ''}")
        for label, samples in rounds.items():
            ratio = np.median([a / b for a, b in zip(device[label], peer)])
            print(f"   {label:48s} {np.median(samples):8.4f} ms  GPU clock "
                  f"{np.median(device[label]):8.4f} ms  x torch.compile (GPU clock) {ratio:.4f}",
                  flush=True)


if __name__ == "__main__":
    main()
