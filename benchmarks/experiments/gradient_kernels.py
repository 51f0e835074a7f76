"""Where the gradient programs' time goes on the GPU: each system's kernels as the GPU ran them
back to back (CUPTI through torch.profiler; kernel_trace.py's trace), for benchmarks/gradients.py's
programs.

    python benchmarks/experiments/gradient_kernels.py --only "Adam step,layernorm" [--calls 50]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, ".."))

import gradients  # noqa: E402
from kernel_trace import line, trace  # noqa: E402


def gpu_clock(call, calls: int) -> float:
    """Microseconds a call by CUDA events on the legacy default stream around `calls` calls (for
    systems that order their work there: autofuse and torch; jax's stream is its own)."""
    import cupy
    stream = cupy.cuda.Stream.null
    call()
    stream.synchronize()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record(stream)
    for _ in range(calls):
        call()
    end.record(stream)
    end.synchronize()
    return cupy.cuda.get_elapsed_time(start, end) * 1000 / calls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", required=True, help="comma-separated program names")
    parser.add_argument("--systems", default="autofuse,jax.jit,torch.compile")
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--overlap", type=int, default=1,
                        help="0: autofuse launches plainly (its kernels' traced durations then do "
                             "not include waiting for the kernel before them)")
    parser.add_argument("--tuning", default="", help="Tuning fields, e.g. tiles_min_blocks=2")
    parser.add_argument("--cost", default="",
                        help="CUDA cost model fields for this run, e.g. broadcast_across=0 "
                             "(an experiment: the backend's COST replaced in this process)")
    args = parser.parse_args()
    if args.cost:
        import dataclasses
        import autofuse.backends.cuda as backend
        fields = dict(item.split("=") for item in args.cost.split(","))
        backend.COST = dataclasses.replace(backend.COST, **{k: int(v) for k, v in fields.items()})
    import cupy
    rng = np.random.default_rng(2026)
    k = gradients.Lib(np)
    for name, fn, host, argnums, _ in gradients.programs(rng, cpu=False):
        if name not in args.only.split(","):
            continue
        from autofuse.backends.cuda.tuning import Tuning
        fields = dict(item.split("=") for item in args.tuning.split(",") if item)
        options = {"tuning": Tuning(overlap=bool(args.overlap),
                                    **{k: int(v) for k, v in fields.items()})}
        ours, _ = gradients._ours(fn, argnums, k, **options)
        inputs = [cupy.asarray(a) for a in host]
        systems = {"autofuse": (lambda: ours(*inputs), lambda _: cupy.cuda.Device().synchronize())}
        for system, got in gradients._peers(name, fn, host, argnums).items():
            if not isinstance(got, Exception):
                systems[system] = tuple(got[:2])
        systems["autofuse"][0]()
        for kernel in ours.lower(*inputs).kernels:
            print(f"  {kernel.name}: {kernel.kind}:{kernel.strategy} {kernel.launch}")
        for round_ in range(args.rounds):
            for system, (call, sync) in systems.items():
                if system not in args.systems.split(","):
                    continue
                kernels, wall = trace(call, sync, args.calls)
                clock = gpu_clock(call, args.calls)
                print(line(name, system, round_, kernels, wall, args.calls,
                           f" gpu clock {clock:7.1f}us"), flush=True)


if __name__ == "__main__":
    main()
