"""Short rows written out (Tuning.short_rows, emit/columns.py) against looped (short_rows=0),
and staged in shared memory (Tuning.short_tiles, emit/short_tiles.py) against not: programs
whose columns kernels reduce 3-16 elements a thread, CUDA events, median of 7 interleaved rounds
of 20 calls, beside the memory floor (the bytes over a measured copy's bandwidth).

    python benchmarks/experiments/short_rows_ab.py
"""
import json

import cupy
import numpy as np

import autofuse
from autofuse.backends.cuda.tuning import DEFAULT


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def logsumexp(x):
    top = x.max(-1, keepdims=True)
    return np.log(np.exp(x - top).sum(-1)) + top[..., 0]


CASES = [("softmax rows of 10 float32", softmax, [(1 << 19, 10)], np.float32),
         ("softmax rows of 10 float64", softmax, [(1 << 19, 10)], np.float64),
         ("logsumexp rows of 16 float64", logsumexp, [(1 << 20, 16)], np.float64),
         ("norm of 3-vectors float32", lambda v: np.sqrt((v * v).sum(-1)), [(1 << 22, 3)], np.float32),
         ("column sums (8, 2^20) float32", lambda x: x.sum(0), [(8, 1 << 20)], np.float32),
         ("mean and var over (2^20, 12)", lambda x: (x.mean(-1), x.var(-1)), [(1 << 20, 12)], np.float32)]


def timed(fn, args) -> float:
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    for _ in range(20):
        fn(*args)
    stop.record()
    stop.synchronize()
    return cupy.cuda.get_elapsed_time(start, stop) / 20


def copy_bandwidth() -> float:
    """Bytes a second a device-to-device copy of 1 GiB moves (read and write)."""
    a = cupy.empty(1 << 28, cupy.float32)
    b = cupy.empty_like(a)
    seconds = timed(lambda: b.__setitem__(Ellipsis, a), []) / 1e3
    return 2 * a.nbytes / seconds


def main() -> None:
    rng = np.random.default_rng(0)
    bandwidth = copy_bandwidth()
    for name, fn, shapes, dtype in CASES:
        args = [cupy.asarray(rng.standard_normal(s).astype(dtype)) for s in shapes]
        variants = {"staged": autofuse.jit(fn),
                    "written out": autofuse.jit(fn, tuning=DEFAULT.replace(short_tiles=False)),
                    "looped": autofuse.jit(fn, tuning=DEFAULT.replace(short_rows=0))}
        row = {"case": name}
        results = {}
        for label, f in variants.items():
            results[label] = f(*args)
            row[f"{label} kernels"] = [k.strategy for k in f.lower(*args).kernels]
        tuples = [r if isinstance(r, tuple) else (r,) for r in results.values()]
        row["max difference"] = max(float(cupy.abs(x - y).max()) for other in tuples[1:]
                                    for x, y in zip(tuples[0], other))
        outputs = sum(int(x.nbytes) for x in tuples[0])
        row["floor ms"] = round((sum(int(a.nbytes) for a in args) + outputs) / bandwidth * 1e3, 4)

        samples = {label: [] for label in variants}
        for _ in range(7):
            for label, f in variants.items():
                samples[label].append(timed(f, args))
        for label, values in samples.items():
            row[f"{label} ms"] = round(float(np.median(values)), 4)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
