"""Whole-column programs over a batch that varies (batchnorm, z-score, column softmax, variance
along axis 0) as class kernels under numba's CUDA simulator (run by test_dynamic_shapes_cuda.py
with NUMBA_ENABLE_CUDASIM=1): column tiles whose loops and tile walk take the sizes, their grid
from the columns at launch, at sizes 0, 1, 2, 3, small primes and past the stand-in (1009),
against NumPy in float64. Prints one line a case, ending ": ok"."""
from __future__ import annotations

import sys
import warnings

import numpy as np

import autofuse

RNG = np.random.default_rng(3302)
SIZES = [10, 0, 1, 2, 3, 5, 7, 13, 31, 64, 97, 1031]
FIRST = SIZES[0]     # the first call's size (specialized; the class starts at a second)
COLUMNS = 20         # (the simulator's tile: 16 columns, so a ragged second tile)


def batchnorm(x, g, b):
    m = x.mean(axis=0)
    v = ((x - m) ** 2).mean(axis=0)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def z_score(x, g, b):
    return (x - x.mean(axis=0)) / x.std(axis=0)


def column_softmax(x, g, b):
    e = np.exp(x - x.max(axis=0))
    return e / e.sum(axis=0)


def variance(x, g, b):
    return x.var(axis=0)


FUNCTIONS = {"batchnorm": batchnorm, "z-score": z_score, "column softmax": column_softmax,
             "variance": variance}


def _arguments(n: int, dtype, columns: int = COLUMNS) -> tuple:
    return tuple(RNG.standard_normal(shape).astype(dtype)
                 for shape in ((n, columns), (columns,), (columns,)))


def tolerance(dtype, rows: int) -> float:
    """float32 sums against float64 NumPy: a bound that grows with the rows summed."""
    return 2e-7 * max(rows, 1) * 8 + 1e-5 if dtype == np.float32 else 1e-10


def check(name: str, fn, f, n: int, dtype) -> None:
    args = _arguments(n, dtype)
    try:
        with np.errstate(all="ignore"):
            want = fn(*(a.astype(np.float64) for a in args))
    except ValueError:                   # (NumPy's max of no rows: the class raises it too)
        try:
            f(*args)
        except ValueError:
            return
        raise AssertionError(f"{name} at size {n}: no error")
    with np.errstate(all="ignore"):
        got = f(*args)
    assert got.shape == want.shape and got.dtype == np.dtype(dtype), (name, n, got.dtype)
    bound = tolerance(dtype, n)
    # (a column of nearly equal values cancels: NumPy's own answer in the dtype is off as much)
    with np.errstate(all="ignore"):
        own = np.abs(fn(*args).astype(np.float64) - want)
    error = np.abs(got.astype(np.float64) - want)
    ok = (error <= bound * (1 + np.abs(want)) + 4 * own) | (np.isnan(got) & np.isnan(want))
    assert ok.all(), (f"{name} at size {n}", np.nanmax(error), got[~ok][:4], want[~ok][:4])


def main(cases) -> None:
    for case in cases:
        name, dtype = case.rsplit(" ", 1)
        fn = FUNCTIONS[name]
        f = autofuse.jit(fn, backend="cuda")        # (the automatic policy)
        for n in SIZES:
            check(name, fn, f, n, np.dtype(dtype))
        lowered = f.lower(*_arguments(7, dtype))
        text = lowered.as_text("fused")
        assert "# dynamic: n0" in text, text
        assert any(k.strategy.startswith("column tiles") for k in lowered.kernels), text
        info = f.cache_info()
        # the first size, the class, and sizes 0 and 1 where the text says they compile apart
        assert info.compiles <= 2 + text.count("compiles on its own"), (case, info, text)
        print(f"{case}: {info.compiles} compiles, {info.instances} instances: ok")


if __name__ == "__main__":
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    warnings.simplefilter("ignore", RuntimeWarning)     # (means of no rows, in NumPy and kernels)
    main(sys.argv[1:])
