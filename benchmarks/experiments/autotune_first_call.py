"""First-call timing of whole-column programs near their bound (autofuse/autotune.py) on a GPU:
for each point, the first call's seconds and the choice with each candidate's time, in a fresh
disk cache (timed), then again in a new process of the same cache (the choice remembered), and
the program taken against both kinds forced (timed in turns afterwards, gpu.time_rounds).

    python benchmarks/experiments/autotune_first_call.py [--second]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from gpu import time_rounds, tuning  # noqa: E402

POINTS = [(2048, 2048), (1000, 8192), (512, 8192), (1536, 1024), (4096, 4096)]


def softmax0(x):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def main():
    import cupy
    import autofuse
    parser = argparse.ArgumentParser()
    parser.add_argument("--second", action="store_true", help="the process after: no timing")
    args = parser.parse_args()
    rng = np.random.default_rng(9)
    for shape in POINTS:
        host = rng.standard_normal(shape).astype(np.float32)
        x = cupy.asarray(host)
        jitted = autofuse.jit(softmax0)
        start = time.perf_counter()
        got = jitted(x)
        cupy.cuda.Device().synchronize()
        first = time.perf_counter() - start
        np.testing.assert_allclose(cupy.asnumpy(got), softmax0(host), rtol=1e-4, atol=1e-6)
        kernels = jitted.lower(x).kernels
        note = kernels[0].reason.split("program: ")[-1] if "program: " in kernels[0].reason \
            else "not near a bound: untimed"
        print(f"{shape}: first call {first:.2f} s, {len(kernels)} kernels "
              f"({'; '.join(k.strategy for k in kernels)}); {note}", flush=True)
        if args.second:
            continue
        forced = {"taken": jitted,
                  "column tiles": autofuse.jit(softmax0, tuning=tuning("column_program_bytes=0")),
                  "a kernel a level": autofuse.jit(softmax0,
                                                   tuning=tuning("column_program_bytes=1"))}
        entries = {}
        for label, fn in forced.items():
            fn(x)
            entries[label] = (lambda f=fn: f(x), lambda _: cupy.cuda.Device().synchronize())
        times = time_rounds(entries, rounds=3, short=2)
        print("    " + ", ".join(f"{label} {float(np.median(t)) * 1000:.1f} us"
                                 for label, t in times.items()), flush=True)


if __name__ == "__main__":
    main()
