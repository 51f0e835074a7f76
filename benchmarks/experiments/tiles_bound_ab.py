"""Tuning.tiles_min_blocks on products nobody tuned it for: each program's warm GPU time under two
tunings (the default, two blocks an SM where the kernel does not fit them unbounded:
compile._least_bound; against no bound), each tuning compiled into its own empty disk cache so a
link's launch bound is never reused across them. Each kernel's launch record (registers, local
bytes, the bound it was linked with) is printed.

    python benchmarks/experiments/tiles_bound_ab.py [--calls 20] [--rounds 3]

Programs: the suite's relu(x @ w + b) at 8192x4096x4096 float32 and the corpus's product programs
at their large size in float32. Times are CUDA events around `calls` calls, median of rounds
(alternating A and B each round).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))

CORPUS = ("mlp_gelu", "syrk", "swiglu", "pairwise_distances_gram", "covariance")


def relu_linear(x, w, b):
    return np.maximum(x @ w + b, 0)


def cases():
    from benchmarks.corpus import find
    rng = np.random.default_rng(0)
    f32 = np.float32
    yield ("relu(x@w+b) 8192x4096x4096", relu_linear,
           ((rng.standard_normal((8192, 4096)) * 0.1).astype(f32),
            (rng.standard_normal((4096, 4096)) * 0.1).astype(f32),
            rng.standard_normal(4096).astype(f32)), {})
    for name in CORPUS:
        program = find(name)
        arguments, static = program.arguments("large", np.float32)
        yield f"{name} (corpus large)", program.function, arguments, static


def gpu_clock(call, calls: int) -> float:
    import cupy
    call()
    cupy.cuda.Device().synchronize()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    for _ in range(calls):
        call()
    end.record()
    end.synchronize()
    return cupy.cuda.get_elapsed_time(start, end) * 1000 / calls


def alternating(calls: dict, rounds: int, count: int) -> dict:
    """label -> median us a call (gpu_clock over `count` calls), the labels taking turns each of
    `rounds` rounds so that a drift of the device falls on all of them."""
    times = {label: [] for label in calls}
    for _ in range(rounds):
        for label, call in calls.items():
            times[label].append(gpu_clock(call, count))
    return {label: float(np.median(t)) for label, t in times.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import cupy
    import autofuse
    from autofuse.backends.cuda.tuning import Tuning
    tunings = {"default": Tuning(), "no bound": Tuning(tiles_min_blocks=0)}
    for label, fn, host, static in cases():
        inputs = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in host]
        calls, texts = {}, {}
        for name, tuning in tunings.items():
            os.environ["AUTOFUSE_CACHE_DIR"] = tempfile.mkdtemp(prefix="tiles-ab-")
            jitted = autofuse.jit(fn, backend="cuda", tuning=tuning,
                                  static_argnames=tuple(static))
            calls[name] = (lambda j=jitted: j(*inputs, **static))
            calls[name]()
            kernels = jitted.lower(*inputs, **static).kernels
            texts[name] = [f"{k.kind}:{k.strategy}" for k in kernels if k.kind == "output"]
            for k in kernels:
                if k.kind == "output":
                    print(f"    {name}: {k.name} {k.launch}", flush=True)
        medians = alternating(calls, args.rounds, args.calls)
        a, b = (medians[name] for name in tunings)
        print(f"{label:42s} default {a:9.1f} us  none {b:9.1f} us  ratio {a / b:.3f}  "
              f"{texts['default']}", flush=True)


if __name__ == "__main__":
    main()
