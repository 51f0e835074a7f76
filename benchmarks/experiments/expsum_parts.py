"""Where log-sum-exp's one pass spends its time: expsum (ir/online.py) beside a plain max, sum and
sum of exp over the same array, each one autofuse kernel over CuPy arrays, timed in turns
(gpu.time_rounds), with the kernels' registers.

    python benchmarks/experiments/expsum_parts.py [--variants "label:FIELD=value,..."]

Columns (4096 x 8192, axis 0: two-stage columns) and long rows (16 x 2^21, axis -1: two-stage
rows), float32. The floor: the array read once over the copy bandwidth of the run.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from gpu import copy_bandwidth, time_rounds, tuning  # noqa: E402


def programs(axis):
    return {
        "max": lambda x: x.max(axis),
        "sum": lambda x: x.sum(axis),
        "sum(exp)": lambda x: np.exp(x).sum(axis),
        "expsum": lambda x: np.exp(x - x.max(axis, keepdims=True)).sum(axis),
        "logsumexp": lambda x: np.log(np.exp(x - x.max(axis, keepdims=True)).sum(axis))
        + x.max(axis),
    }


def main():
    import cupy
    import autofuse
    parser = argparse.ArgumentParser()
    parser.add_argument("--variants", default="")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    tunings = {"": None}
    for item in filter(None, args.variants.split(",")):
        label, fields = item.split(":", 1)
        tunings[label] = tuning(fields)
    bandwidth = copy_bandwidth(2)
    rng = np.random.default_rng(5)
    for shape, axis in (((4096, 8192), 0), ((16, 1 << 21), -1)):
        host = rng.standard_normal(shape, dtype=np.float32)
        x = cupy.asarray(host)
        floor = host.nbytes / bandwidth * 1e6
        entries, notes = {}, {}
        for name, fn in programs(axis).items():
            want = fn(host)
            for label, tune in tunings.items():
                jitted = autofuse.jit(fn, tuning=tune) if tune else autofuse.jit(fn)
                got = cupy.asnumpy(jitted(x))
                np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-4)
                key = f"{name}{'[' + label + ']' if label else ''}"
                entries[key] = (lambda j=jitted: j(x), lambda _: cupy.cuda.Device().synchronize())
                kernels = jitted.lower(x).kernels
                notes[key] = "; ".join(f"{k.strategy} ({k.launch.get('registers')} regs)"
                                       for k in kernels)
        times = time_rounds(entries, rounds=args.rounds, short=2)
        print(f"{shape} axis {axis}: floor {floor:.1f} us")
        for key, samples in times.items():
            t = float(np.median(samples)) * 1000
            print(f"  {key:24s} {t:8.1f} us  {t / floor:5.2f}x floor  {notes[key]}")


if __name__ == "__main__":
    main()
