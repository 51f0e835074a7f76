"""relu(x*y+z)*w on 1,000 float32 (benchmarks/cpu.py's small case) beside NumPy, timed as a
per-call cost: rounds of 2,000 calls each (the round's time over its calls), autofuse and NumPy
taking turns for 30 rounds; prints the minimum and median of each and the median of the rounds'
ratios. cpu.py times that case as the median of 9 single calls after a 64 MB case, which moves
with the machine by more than the two differ.

    python benchmarks/experiments/small_call_ab.py
"""
from __future__ import annotations

import statistics
import timeit

import numpy as np

import autofuse


def chain(x, y, z, w):
    return np.maximum(x * y + z, 0) * w


def main():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((10, 100)).astype(np.float32) for _ in range(4)]
    fused = autofuse.jit(chain)
    assert np.array_equal(fused(*arrays), chain(*arrays))
    times = {"autofuse": [], "numpy": []}
    for _ in range(30):
        for label, fn in (("autofuse", lambda: fused(*arrays)), ("numpy", lambda: chain(*arrays))):
            times[label].append(min(timeit.repeat(fn, number=2000, repeat=3)) / 2000 * 1e6)
    for label, values in times.items():
        print(f"{label:9s} min {min(values):.2f} us, median {statistics.median(values):.2f} us")
    ratios = [n / a for n, a in zip(times["numpy"], times["autofuse"])]
    print(f"NumPy / autofuse, median of the rounds: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
