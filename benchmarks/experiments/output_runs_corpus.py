"""The corpus programs whose kernels take a run of outputs a thread (emit/runs.py), timed with
runs (the default) and without (Tuning(output_run=0): a thread an output), interleaved in one
process, beside NumPy on CuPy; each checked against the other first.

    python benchmarks/experiments/output_runs_corpus.py [--rounds 5] [--off FIELD] [NAME ...]

`--off run_stage_bytes` compares the default with that Tuning field set to 0 instead (the staged
x @ w of emit/run_tiles.py).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from benchmarks.corpus import find  # noqa: E402
from benchmarks.corpus.measure import Device, copies, median_seconds  # noqa: E402

import autofuse  # noqa: E402
from autofuse.backends.cuda.tuning import DEFAULT  # noqa: E402

NAMES = ("softmax_regression", "kmeans_onehot", "rgb_to_yuv")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=NAMES)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--off", default="output_run")
    options = parser.parse_args()
    device = Device("cuda")
    import cupy                        # numba-cuda loaded and a kernel compiled before any timing
    autofuse.jit(lambda x: np.exp(x) + 1)(cupy.ones(1024, cupy.float32))
    for name in options.names:
        program = find(name)
        arguments, static = program.arguments("large", program.dtypes[0])
        calls, row = {}, {"program": name}
        off = DEFAULT.replace(**{options.off: 0})
        for label, tuning in (("default", DEFAULT), (f"{options.off}=0", off)):
            function = autofuse.jit(program.function, static_argnames=program.static,
                                    tuning=tuning)
            begin = time.perf_counter()
            result = device.get(function(*copies(arguments, device), **static))
            device.synchronize()
            row[f"{label} first call s"] = round(time.perf_counter() - begin, 2)
            row[f"{label} kernels"] = sorted({str(k.strategy) for k in
                                              function.lower(*copies(arguments, device),
                                                             **static).kernels})
            calls[label] = (function, result)
        (a, first), (b, second) = calls.values()
        flat = lambda v: [np.asarray(x, np.float64) for x in (v if isinstance(v, tuple) else (v,))]  # noqa: E731
        row["max difference"] = max(float(np.max(np.abs(x - y), initial=0))
                                    for x, y in zip(flat(first), flat(second)))
        samples = {label: [] for label in (*calls, "numpy on cupy")}
        for _ in range(options.rounds):
            for label, (function, _) in calls.items():
                args = copies(arguments, device)
                samples[label].append(median_seconds(lambda: function(*args, **static), device)[0])
            args = copies(arguments, device)
            try:
                samples["numpy on cupy"].append(
                    median_seconds(lambda: program.function(*args, **static), device)[0])
            except Exception as error:           # a program CuPy cannot run as written
                row["numpy on cupy"] = f"{type(error).__name__}: {str(error)[:80]}"
        for label, values in samples.items():
            if values:
                row[f"{label} ms"] = round(statistics.median(values) * 1e3, 3)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
