"""Run under NUMBA_ENABLE_CUDASIM=1 by test_histogram.py: the CUDA scatter-add kernel (atomics in a
grid-stride loop, the last block writing base plus sums) executed by numba's simulator on small
inputs, against NumPy, for every accumulator dtype. Run directly on a GPU, it also runs the
GPU_CASES (sizes past one block's share). Prints one line a case, ending ": ok"."""
import sys

import numpy as np

import autofuse

rng = np.random.default_rng(7)


def add_at(x, i, v):
    y = x.copy()
    np.add.at(y, i, v)
    return y


def add_at_rows(x, i, v):
    y = x * 2
    np.add.at(y, i, v * 3)
    return y


def histogram(a):
    return np.histogram(a, bins=9)


def histogram_range_weights(a, w):
    return np.histogram(a, bins=6, range=(-1.0, 1.0), weights=w)


def bincount(x):
    return np.bincount(x, minlength=12)


def bincount_weights(x, w):
    return np.bincount(x, weights=w, minlength=12)


def ints(high, shape, dtype=np.int64):
    return rng.integers(-high, high, shape).astype(dtype)


def values(shape, dtype):
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) < 0.3
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def hist_input(n):
    a = rng.standard_normal(n).astype(np.float32)
    a[:3] = [-1.0, 1.0, 0.0]                       # values on edges
    return a


CASES = [(f"add.at {np.dtype(d).name}", add_at, [values((7,), d), ints(7, (40,)), values((40,), d)])
         for d in (np.float32, np.float64, np.int32, np.int64, np.uint32, np.uint64, np.int8,
                   np.uint16, np.bool_, np.float16)] + [
    ("add.at rows f32", add_at_rows, [values((5, 3), np.float32), ints(5, (30,)), values((30, 3), np.float32)]),
    ("add.at int8 wraps", add_at, [np.full(3, 120, np.int8), np.zeros(20, np.int64), np.full(20, 9, np.int8)]),
    ("histogram f32", histogram, [hist_input(200)]),
    ("histogram range weights", histogram_range_weights, [hist_input(150), values((150,), np.float32)]),
    ("bincount", bincount, [rng.integers(0, 12, 300)]),
    ("bincount weights", bincount_weights, [rng.integers(0, 12, 300), values((300,), np.float64)]),
]

GPU_CASES = [
    ("GPU histogram 10^7 into 1000", lambda a: np.histogram(a, bins=1000), [rng.standard_normal(10 ** 7).astype(np.float32)]),
    ("GPU bincount 10^6", lambda x: np.bincount(x, minlength=4096), [rng.integers(0, 4096, 10 ** 6)]),
    ("GPU add.at large base", add_at, [values((1 << 20,), np.float64), rng.integers(0, 1 << 20, 1 << 21), values((1 << 21,), np.float64)]),
]


def main():
    from autofuse.backends.cuda import simulating
    shard = sys.argv[2] if len(sys.argv) > 2 else ""
    cases = CASES + ([] if simulating() else GPU_CASES)
    for k, (name, fn, args) in enumerate(cases):
        if shard and k % int(shard.split("/")[1]) != int(shard.split("/")[0]):
            continue
        jitted = autofuse.jit(fn, backend="cuda")
        low = jitted.lower(*args)
        assert any(k.kind == "scatter" and k.strategy.startswith("atomic scatter")
                   for k in low.kernels), (name, [(k.kind, k.strategy) for k in low.kernels])
        expected = fn(*[a.copy() for a in args])
        result = jitted(*args)
        for got, want in zip(result if isinstance(result, tuple) else (result,),
                             expected if isinstance(expected, tuple) else (expected,)):
            got = np.asarray(got)
            assert got.shape == want.shape and got.dtype == want.dtype, (name, got.dtype, want.dtype)
            if want.dtype.kind == "f":
                tolerance = {2: 2e-2, 4: 1e-4, 8: 1e-12}[want.dtype.itemsize]
                np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance, err_msg=name)
            else:
                np.testing.assert_array_equal(got, want, err_msg=name)
        again = jitted(*args)                      # the sums were left zeroed for the next call
        np.testing.assert_allclose(np.asarray(again if not isinstance(again, tuple) else again[0]),
                                   np.asarray(result if not isinstance(result, tuple) else result[0]),
                                   rtol=1e-4, err_msg=name)
        print(f"{name}: ok", flush=True)


if __name__ == "__main__":
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    main()
