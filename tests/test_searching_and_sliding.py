"""np.searchsorted, np.digitize, np.interp (trace/searching.py) and np.convolve, np.correlate
(trace/convolution.py) against NumPy: on the reference interpreter for every case, on the CPU
backend for one case of each shape of program; NaN, ties, ends, both sides, every mode, operands
swapped, integer, bool and complex dtypes, non-contiguous inputs; NumPy's errors, including the
ones only the call's values can show (bins not monotonic)."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse
from autofuse.errors import AutofuseError
from conftest import assert_same


def check(fn, *args, backend="numpy"):
    got = autofuse.jit(fn, backend=backend)(*[np.copy(a) for a in args])
    assert_same(got, fn(*args))


def _sorted_with_ties(rng, n, nan=True):
    a = np.sort(rng.standard_normal(n))
    if n > 6:
        a[3:6] = a[3]                       # a run of ties
    if nan and n:
        a[-1] = np.nan                      # NaN sorts last
    return a


def _values(rng, a, shape):
    v = rng.standard_normal(shape) * 1.5
    flat = v.reshape(-1)
    finite = a[~np.isnan(a)]
    for k, value in enumerate([np.nan, np.inf, -np.inf, *finite[:4], *finite[-2:]]):
        if k < flat.size:
            flat[k] = value                 # exactly on the sample points, at the ends, NaN
    return v


@pytest.mark.parametrize("n", [0, 1, 2, 7, 64, 1000])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(rng, n, side):
    a = _sorted_with_ties(rng, n)
    v = _values(rng, a, (3, 11))
    check(lambda a, v: np.searchsorted(a, v, side=side), a, v)


def test_searchsorted_scalar_integers_sorter_and_strides(rng):
    a = rng.integers(-20, 20, 31)
    order = np.argsort(a, kind="stable")
    check(lambda a: np.searchsorted(np.sort(a), 3), a)
    check(lambda a, s, v: np.searchsorted(a, v, side="right", sorter=s), a, order,
          rng.integers(-25, 25, 9))
    reversed_view = np.sort(rng.standard_normal(40))[::-1]
    check(lambda a, v: np.searchsorted(a[::-2], v[:, ::2]), reversed_view,
          rng.standard_normal((3, 8)))
    check(lambda a, v: np.searchsorted(a, v), np.sort(rng.standard_normal(9)).astype(np.float32),
          rng.standard_normal(5))


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_searchsorted_and_interp_compile(rng, backend):
    """The gathers and selects of a search fuse with what uses them; the CPU backend's kernel
    gives NumPy's answer."""
    xp = np.sort(rng.uniform(-2, 2, 50))
    fp = rng.standard_normal(50)
    x = _values(rng, xp, (200,))
    check(lambda x, xp, fp: (np.searchsorted(xp, x * 2), np.interp(x, xp, fp) + 1), x, xp, fp,
          backend=backend)


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("order", ["increasing", "decreasing"])
def test_digitize(rng, right, order):
    bins = np.array([-1.0, 0.0, 0.0, 0.5, 2.0])
    bins = bins if order == "increasing" else bins[::-1].copy()
    x = np.concatenate([rng.standard_normal(20), bins, [np.nan, np.inf, -np.inf]])
    check(lambda x, b: np.digitize(x, b, right=right), x, bins)


def test_digitize_refuses_bins_that_are_not_monotonic_when_the_call_runs():
    f = autofuse.jit(lambda x, b: np.digitize(x, b), backend="numpy")
    with pytest.raises(ValueError, match="monotonically"):
        f(np.ones(3), np.array([0.0, 2.0, 1.0]))
    assert f(np.ones(3), np.array([0.0, 1.0, 2.0])).tolist() == [2, 2, 2]


@pytest.mark.parametrize("n", [1, 2, 5, 40])
def test_interp(rng, n):
    xp = np.sort(rng.uniform(-2, 2, n))
    if n > 4:
        xp[2] = xp[1]                       # a repeated sample point
    fp = rng.standard_normal(n)
    x = _values(rng, xp, (4, 13))
    check(lambda x, xp, fp: np.interp(x, xp, fp), x, xp, fp)
    check(lambda x, xp, fp: np.interp(x, xp, fp, left=-7.0, right=9), x, xp, fp)
    check(lambda xp, fp: np.interp(0.25, xp, fp), xp, fp)


def test_interp_integer_and_float32_samples(rng):
    check(lambda x, xp, fp: np.interp(x, xp, fp), rng.uniform(0, 10, 17).astype(np.float32),
          np.arange(0, 11, 2), rng.integers(-5, 5, 6))


CONVOLUTION_SIZES = [(20, 5), (5, 20), (7, 7), (1, 4), (6, 1), (9, 4)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.complex128, np.bool_])
@pytest.mark.parametrize("function", [np.convolve, np.correlate])
def test_convolve_and_correlate(rng, dtype, function):
    for n, m in CONVOLUTION_SIZES:
        if dtype == np.bool_:
            a, v = rng.random(n) > 0.5, rng.random(m) > 0.5
        elif dtype == np.complex128:
            a = rng.standard_normal(n) + 1j * rng.standard_normal(n)
            v = rng.standard_normal(m) + 1j * rng.standard_normal(m)
        else:
            a = (rng.standard_normal(n) * 4).astype(dtype)
            v = (rng.standard_normal(m) * 4).astype(dtype)
        for mode in ("full", "same", "valid"):
            check(lambda a, v: function(a, v, mode=mode), a, v)


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_moving_average_by_convolution_compiles(rng, backend):
    x = rng.standard_normal(500)
    check(lambda x: np.convolve(x[::-1] * 2, np.ones(9) / 9, mode="same") - x, x,
          backend=backend)


@pytest.mark.parametrize("count", [0, 1, 5, 16, 17, 200])
@pytest.mark.parametrize("invert", [False, True])
def test_isin(rng, count, invert):
    """Compared one by one up to ISIN_COMPARED test elements, searched in their sorted order past
    it: ints against ints, floats with NaN and signed zeros against floats, ints against floats."""
    ints, tests = rng.integers(-20, 20, (4, 9)), rng.integers(-20, 20, count)
    check(lambda a, t: np.isin(a, t, invert=invert), ints, tests)
    floats = rng.standard_normal((3, 7)).round(1)
    floats[0, :3] = [np.nan, -0.0, np.inf]
    table = np.concatenate([floats.reshape(-1)[::3], [np.nan, 0.0]])[:count]
    check(lambda a, t: np.isin(a, t, invert=invert), floats, table)
    check(lambda a, t: np.isin(a, t, invert=invert), ints, tests.astype(np.float32) / 2)


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_isin_of_constants_and_scalars(rng, backend):
    i = rng.integers(0, 10, 30)
    check(lambda i: np.isin(i, [1, 2, 3]), i, backend=backend)
    check(lambda i: np.isin(3, i), i, backend=backend)
    check(lambda i: np.isin(i, np.arange(40) * 2, kind="sort"), i, backend=backend)


@pytest.mark.parametrize("fn, args", [
    (lambda a, t: np.isin(a, t, kind="hash"), (np.ones(2), np.ones(3))),
    (lambda a, v: np.convolve(a, v), (np.ones(0), np.ones(3))),
    (lambda a, v: np.correlate(a, v), (np.ones((2, 2)), np.ones(3))),
    (lambda a, v: np.convolve(a, v, mode="middle"), (np.ones(4), np.ones(3))),
    (lambda a, v: np.searchsorted(a, v), (np.ones((2, 2)), np.ones(3))),
    (lambda a, v: np.searchsorted(a, v, side="up"), (np.ones(2), np.ones(3))),
    (lambda x, xp, fp: np.interp(x, xp, fp), (np.ones(2), np.ones(3), np.ones(4))),
    (lambda x, xp, fp: np.interp(x, xp, fp), (np.ones(2), np.ones(0), np.ones(0))),
    (lambda x, b: np.digitize(x, b), (np.ones(2), np.ones((2, 2)))),
])
def test_errors_as_numpy(fn, args):
    with pytest.raises(Exception) as numpy_error:
        fn(*args)
    with pytest.raises((type(numpy_error.value), AutofuseError)) as ours:
        autofuse.jit(fn, backend="numpy")(*args)
    assert isinstance(ours.value, AutofuseError)
    assert "test_searching_and_sliding.py" in str(ours.value)
