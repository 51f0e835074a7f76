"""NumPy's where= and initial= arguments of sum, prod, max, min, any, all, mean, var and std,
np.copyto (with where=) and ndarray.fill, against NumPy on the CPU backend and the interpreter: masks of the
array's shape and broadcast ones, masked-out rows (a mean of nothing is NaN, a maximum of nothing
its initial), integer arrays, keepdims, empty reductions; NumPy's errors for a mask without the
initial max and min need, a mask that is not boolean, and a cast copyto refuses. These were
refused as unsupported before (found by a sweep of new programs)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import autofuse
from autofuse.errors import DTypeError, NumPyValueError, ShapeError
from conftest import assert_same

CASES = {
    "sum": lambda x, m: np.sum(x, where=m),
    "sum rows": lambda x, m: x.sum(axis=1, where=m),
    "sum keepdims": lambda x, m: np.sum(x, axis=0, where=m, keepdims=True),
    "prod rows": lambda x, m: np.prod(x, axis=1, where=m),
    "max rows": lambda x, m: np.max(x, axis=1, where=m, initial=-1),
    "min": lambda x, m: np.min(x, where=m, initial=5),
    "max initial": lambda x, m: np.max(x, initial=3),
    "sum initial": lambda x, m: np.sum(x, initial=10),
    "sum rows initial": lambda x, m: x.sum(1, initial=2),
    "mean rows": lambda x, m: np.mean(x, axis=1, where=m),
    "mean": lambda x, m: np.mean(x, where=m),
    "mean keepdims": lambda x, m: x.mean(0, where=m, keepdims=True),
    "var rows": lambda x, m: np.var(x, axis=1, where=m),
    "std ddof": lambda x, m: np.std(x, axis=0, where=m, ddof=1),
    "any": lambda x, m: np.any(x > 1, axis=1, where=m),
    "all": lambda x, m: np.all(x > -1, where=m),
    "max of nothing": lambda x, m: np.max(x[:, :0], axis=1, initial=2),
    "initial None": lambda x, m: (np.max(x, initial=None), np.sum(x, 1, initial=None)),
    "initial cast": lambda x, m: (np.sum(x, initial=2.7), np.max(x, initial=np.float64(3.5))),
}


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dtype, mask_shape", [(np.float32, (6, 7)), (np.int64, (6, 7)),
                                               (np.float32, (7,))], ids=["f32", "i64", "row mask"])
def test_where_and_initial(rng, backend, dtype, name, mask_shape):
    x = (rng.standard_normal((6, 7)) * 3).astype(dtype)
    m = rng.random(mask_shape) > 0.4
    m.flat[:mask_shape[-1]] = False                # a row (or column) with nothing kept
    fn = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # means of nothing
        want = fn(x, m)
        got = autofuse.jit(fn, backend=backend)(x, m)
    assert_same(got, want, loose=True)


def test_where_errors_as_numpy_gives_them():
    x, m = np.ones((3, 4)), np.ones((3, 4), bool)
    with pytest.raises(NumPyValueError, match="initial"):
        autofuse.jit(lambda x, m: np.max(x, where=m), backend="cpu")(x, m)
    with pytest.raises(NumPyValueError, match="initial"):     # None: no identity either
        autofuse.jit(lambda x, m: np.sum(x, where=m, initial=None), backend="cpu")(x, m)
    # initial= cast as NumPy casts it (found by review: the cast wrapped and truncated)
    small = np.arange(3, dtype=np.int8)
    for fn in (lambda a: np.sum(a, initial=1000, dtype=np.int8), lambda a: np.max(a, initial=1000),
               lambda a: np.sum(a.astype(np.uint8), initial=-1),
               lambda a: np.sum(a.astype(np.float32), initial=1j),
               lambda a: np.max(a.astype(np.int64), where=a > 0, initial=-np.inf)):
        with pytest.raises((OverflowError, TypeError)):
            fn(small)
        with pytest.raises(DTypeError, match="initial"):
            autofuse.jit(fn, backend="cpu")(small)
    with pytest.raises(DTypeError, match="boolean"):
        autofuse.jit(lambda x, m: np.sum(x, where=m), backend="cpu")(x, m.astype(int))
    with pytest.raises(ShapeError):
        autofuse.jit(lambda x, m: np.sum(x, where=m), backend="cpu")(x, np.ones(3, bool))


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_copyto(rng, backend):
    def into_argument(a, b):
        np.copyto(a, b * 2)
        return a.sum()

    def masked(a, b, m):
        np.copyto(a, b, where=m)
        return a * 1

    def into_computed(a):
        c = np.zeros_like(a)
        np.copyto(c, a + 1)
        return c

    cases = [(into_argument, (np.zeros((4, 5)), rng.standard_normal((4, 5)))),
             (masked, (np.zeros((4, 5), np.float32), rng.standard_normal(5).astype(np.float32),
                       rng.random((4, 5)) > 0.5)),
             (into_computed, (rng.standard_normal(6),))]
    for fn, args in cases:
        mine, theirs = [a.copy() for a in args], [a.copy() for a in args]
        assert_same(autofuse.jit(fn, backend=backend)(*mine), fn(*theirs))
        for a, b in zip(mine, theirs):
            assert_same(a, b)
    with pytest.raises(DTypeError, match="same_kind"):
        autofuse.jit(lambda a: np.copyto(a, 1.5), backend=backend)(np.zeros(3, np.int64))
    # NEP 50: a Python scalar is weak (a float into float32 is 'safe'); a mask must be boolean
    # and an out-of-range Python int raises (found by review)
    f32 = np.zeros(3, np.float32)
    autofuse.jit(lambda a: np.copyto(a, 1.5, casting="safe"), backend=backend)(f32)
    assert_same(f32, np.full(3, 1.5, np.float32))
    with pytest.raises(DTypeError, match="boolean"):
        autofuse.jit(lambda a: np.copyto(a, 7, where=np.array([1, 0, 1])),
                     backend=backend)(np.zeros(3, np.int8))
    with pytest.raises(DTypeError, match="out of bounds"):
        autofuse.jit(lambda a: np.copyto(a, 1000), backend=backend)(np.zeros(3, np.int8))


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_fill(rng, backend):
    """ndarray.fill on an argument (written) and on a computed array, a float into ints cast as
    NumPy's fill casts it."""
    def fill(a, b):
        b.fill(2.7)
        c = a * 2
        c.fill(-1)
        return c + b

    a, b = rng.standard_normal((3, 4)), np.zeros((3, 4), np.int32)
    mine, theirs = b.copy(), b.copy()
    assert_same(autofuse.jit(fill, backend=backend)(a, mine), fill(a, theirs))
    assert_same(mine, theirs)
