"""Whole-column programs over a batch that varies on the CPU (batchnorm, z-score, column
softmax, variance along axis 0): one shape class, since a class build partitions as its
stand-ins do (CostModel.varying: the costly 1/sqrt(var) read through the batch is stored at
every size, not recomputed per row at sizes 2 and 3). Against NumPy in float64, float32 sums
within a bound that grows with the rows summed; compiles counted through cache_info()."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse
from dynamic_sim_columns import batchnorm, column_softmax, variance, z_score

RNG = np.random.default_rng(3303)
SIZES = [7, 0, 1, 2, 3, 5, 13, 64, 257, 1009, 4099]


def standardize(x, g, b):
    return (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-3)


FUNCTIONS = [batchnorm, z_score, standardize, column_softmax, variance]


def _check(fn, f, n: int, dtype, columns: int = 37) -> None:
    args = [RNG.standard_normal(shape).astype(dtype) for shape in ((n, columns), (columns,),
                                                                   (columns,))]
    try:
        with np.errstate(all="ignore"):
            want = fn(*(a.astype(np.float64) for a in args))
    except ValueError:                   # (the max of no rows: NumPy's error, and the class's)
        with pytest.raises(ValueError):
            f(*args)
        return
    with np.errstate(all="ignore"):
        got = f(*args)
    assert got.shape == want.shape and got.dtype == np.dtype(dtype)
    bound = 2e-7 * max(n, 1) * 8 + 1e-5 if dtype == np.float32 else 1e-10
    # (a column of nearly equal values cancels: NumPy's own answer in the dtype is off as much)
    with np.errstate(all="ignore"):
        own = np.abs(fn(*args).astype(np.float64) - want)
    error = np.abs(got.astype(np.float64) - want)
    ok = (error <= bound * (1 + np.abs(want)) + 4 * own) | (np.isnan(got) & np.isnan(want))
    assert ok.all(), (f"size {n}", np.nanmax(error), got[~ok][:4], want[~ok][:4])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda fn: fn.__name__)
def test_whole_column_programs_are_one_class(fn, dtype):
    f = autofuse.jit(fn, backend="cpu")
    for n in SIZES:
        _check(fn, f, n, dtype)
    text = f.lower(*[np.ones(s, dtype) for s in ((9, 37), (37,), (37,))]).as_text("fused")
    assert "# dynamic: n0 = x.shape[0]" in text and "# static" not in text, text
    # the first size, the class, and sizes 0 and 1 where the text says they compile apart
    assert f.cache_info().compiles <= 2 + text.count("compiles on its own"), f.cache_info()
    assert f.cache_info().compiles <= 4


def test_far_past_the_stand_in():
    f = autofuse.jit(batchnorm, backend="cpu")
    for n in (5, 6, 70001, 3):
        _check(batchnorm, f, n, np.float32, 256)
    assert f.cache_info().compiles <= 2, f.cache_info()


def test_static_builds_decide_on_the_size_as_before():
    """A size given once (dynamic=False) still fuses the division into the pass at few rows."""
    x, g = np.ones((2, 37), np.float32), np.ones(37, np.float32)
    few = autofuse.jit(batchnorm, backend="cpu", dynamic=False).lower(x, g, g)
    many = autofuse.jit(batchnorm, backend="cpu", dynamic=False).lower(
        np.ones((1009, 37), np.float32), g, g)
    assert len(few.kernels) < len(many.kernels)
