"""A cached call's cost on the CPU backend, per call path (µs of the calling thread's CPU time,
median of interleaved rounds):
the fast path (flat positional call), the full path (a keyword argument), and, where the tree
has shape classes (autofuse/dynamic/), both paths on a size that runs its class's program.

    PYTHONPATH=<tree> python benchmarks/experiments/cpu_call_overhead.py [rounds] [calls]

Run once per tree (main, a branch) to compare them: the same function, arguments and counts.
"""
import statistics
import sys
import time

import numpy as np

import autofuse


def body(a, b):
    return np.maximum(a * b + 1.0, 0.0)


def timed(call, calls: int) -> float:
    # NOTE: the thread's CPU time, not the wall clock: on a shared machine other processes'
    # turns would otherwise count as the call's
    start = time.thread_time()
    for _ in range(calls):
        call()
    return (time.thread_time() - start) / calls * 1e6


def cases():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 64)), rng.standard_normal((16, 64))
    f = autofuse.jit(body, backend="cpu")
    f(x, y)
    found = {"fast path, static entry": lambda: f(x, y),
             "full path, static entry": lambda: f(x, b=y)}
    if "dynamic" in autofuse.jit.__doc__:
        g = autofuse.jit(body, backend="cpu")
        for n in (8, 12, 16):                       # the second size builds the class
            g(x[:n], y[:n])
        assert g.cache_info().instances >= 2, g.cache_info()
        found["fast path, class instance"] = lambda: g(x, y)
        found["full path, class instance"] = lambda: g(x, b=y)
    return found


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    found = cases()
    times = {name: [] for name in found}
    for _ in range(rounds):
        for name, call in found.items():
            times[name].append(timed(call, calls))
    for name, values in times.items():
        print(f"{name:28s} {statistics.median(values):7.2f} us  (min {min(values):.2f})")


if __name__ == "__main__":
    main()
