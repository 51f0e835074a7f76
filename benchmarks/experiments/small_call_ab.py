"""relu(x*y+z)*w on 1,000 float32 (benchmarks/cpu.py's small case) beside NumPy and the
hand-written numba `prange` loop of cpu_cases.py, timed as a per-call cost: rounds of 2,000 calls
each (the best of 3 batches, over its calls), the three taking turns for 30 rounds; prints the
minimum and median of each and the medians of the rounds' ratios. cpu.py times that case as the
median of 9 single calls after a 64 MB case, which moves with the machine by more than the
systems differ.

    python benchmarks/experiments/small_call_ab.py
"""
from __future__ import annotations

import os
import statistics
import sys
import timeit

import numpy as np

import autofuse

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cpu_cases import chain_nb  # noqa: E402


def chain(x, y, z, w):
    return np.maximum(x * y + z, 0) * w


def main():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((10, 100)).astype(np.float32) for _ in range(4)]
    fused = autofuse.jit(chain)
    assert np.array_equal(fused(*arrays), chain(*arrays))
    assert np.allclose(chain_nb(*arrays), chain(*arrays))
    calls = {"autofuse": lambda: fused(*arrays), "numpy": lambda: chain(*arrays),
             "numba prange": lambda: chain_nb(*arrays)}
    times = {label: [] for label in calls}
    for _ in range(30):
        for label, fn in calls.items():
            times[label].append(min(timeit.repeat(fn, number=2000, repeat=3)) / 2000 * 1e6)
    for label, values in times.items():
        print(f"{label:12s} min {min(values):.2f} us, median {statistics.median(values):.2f} us")
    ratios = [n / a for n, a in zip(times["numpy"], times["autofuse"])]
    print(f"NumPy / autofuse, median of the rounds: {statistics.median(ratios):.3f}")
    ratios = [a / n for a, n in zip(times["autofuse"], times["numba prange"])]
    print(f"autofuse / numba prange, median of the rounds: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
