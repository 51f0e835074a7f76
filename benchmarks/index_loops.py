"""Loops over an index on the CPU backend: first call (a new process, empty disk cache), kernels
compiled, warm time beside NumPy's.

    python benchmarks/index_loops.py            # every program, each first call in its own process
    python benchmarks/index_loops.py ewma 200   # one program at one size (what each process runs)

Programs: an EWMA (`out[i] = a * x[i] + (1 - a) * out[i - 1]`), independent rows with the loop
counter as a constant, a running sum down rows. Each step reads and writes rows at other offsets,
so before kernels took slice starts and constants as arguments (backends/sharing.py) each step
compiled anew, and before slice assignments were written in place (fusion/in_place.py) each step
copied the whole array.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def ewma(x, alpha):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = alpha * x[i] + (1 - alpha) * out[i - 1]
    return out


def rows(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = np.abs(x[i]) * 2 + i
    return out


def running(x):
    out = x.copy()
    for i in range(1, x.shape[0]):
        out[i] += out[i - 1]
    return out


PROGRAMS = {"ewma": (ewma, lambda x: (x, 0.3)), "rows": (rows, lambda x: (x,)),
            "running": (running, lambda x: (x,))}


def median_ms(fn, args, repeats=7, calls=5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times) * 1e3


def measure(name: str, steps: int) -> dict:
    import autofuse
    fn, make = PROGRAMS[name]
    args = make(np.random.default_rng(0).random((steps, 1000)))
    jitted = autofuse.jit(fn)
    start = time.perf_counter()
    got = jitted(*args)
    first = time.perf_counter() - start
    low = jitted.lower(*args)
    return {"program": name, "steps": steps, "first_s": first,
            "kernels": len(low.kernels), "compiled": len({k.source for k in low.kernels}),
            "in_place": sum(k.strategy.startswith("in place") for k in low.kernels),
            "correct": bool(np.allclose(got, fn(*args))),
            "autofuse_ms": median_ms(jitted, args), "numpy_ms": median_ms(fn, args)}


def main(argv) -> int:
    if argv:
        print(json.dumps(measure(argv[0], int(argv[1]))))
        return 0
    print(f"{'program':8} {'steps':>5} {'first s':>8} {'kernels':>7} {'compiled':>8} "
          f"{'in place':>8} {'autofuse ms':>11} {'NumPy ms':>9}  result")
    for name in PROGRAMS:
        for steps in (40, 200, 1000):
            environment = dict(os.environ, AUTOFUSE_CACHE_DIR=tempfile.mkdtemp())
            done = subprocess.run([sys.executable, __file__, name, str(steps)], env=environment,
                                  capture_output=True, text=True)
            if done.returncode:
                print(f"{name:8} {steps:5d} failed: {done.stderr.strip().splitlines()[-1]}")
                continue
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{name:8} {steps:5d} {r['first_s']:8.2f} {r['kernels']:7d} {r['compiled']:8d} "
                  f"{r['in_place']:8d} {r['autofuse_ms']:11.3f} {r['numpy_ms']:9.3f}  "
                  f"{'ok' if r['correct'] else 'WRONG'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
