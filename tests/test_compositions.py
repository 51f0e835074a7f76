"""NumPy functions written as compositions of others (trace/compositions.py) and np.fmod, against
NumPy itself on the CPU backend: NaN-skipping reductions, nan_to_num, isclose/allclose,
logaddexp(2), heaviside, sinc, count_nonzero, average, ptp, meshgrid, split, rot90, diagonal,
diag, trace, kron, cross, inner."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse
from conftest import assert_same

F32, F64 = np.float32, np.float64


def _with_nan(rng, shape, dtype=F64, every=7):
    x = rng.standard_normal(shape).astype(dtype)
    x.flat[::every] = np.nan
    return x


def check(fn, *args, loose=True):
    got = autofuse.jit(fn, backend="cpu")(*args)
    with np.errstate(all="ignore"):
        want = fn(*args)
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, loose=loose)
    else:
        assert_same(got, want, loose=loose)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_nan_reductions(rng, dtype, axis, keepdims):
    x = _with_nan(rng, (4, 5, 6), dtype)
    x[1, :, 2] = np.nan                      # an all-NaN slice along axis 1
    for name in ("nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"):
        fn = getattr(np, name)
        check(lambda a, fn=fn: fn(a, axis=axis, keepdims=keepdims), x)
    check(lambda a: np.nanvar(a, axis=axis, ddof=1, keepdims=keepdims), x)
    check(lambda a: np.nanstd(a[:, :1], axis=axis, ddof=3, keepdims=keepdims), x)


def test_nan_reductions_of_integers_and_views(rng):
    i = rng.integers(-5, 5, (6, 7))
    for fn in (np.nansum, np.nanmax, np.nanmean, np.nanstd):
        check(lambda a, fn=fn: fn(a, axis=0), i)
    x = _with_nan(rng, (6, 8), F32)
    check(lambda a: np.nanmean(a[::-1, ::2], axis=1), x)
    check(lambda a: np.nansum(a, axis=0), np.zeros((0, 3)))


def test_nan_to_num(rng):
    x = _with_nan(rng, (5, 6), F32)
    x[0, 1], x[2, 3] = np.inf, -np.inf
    check(np.nan_to_num, x, loose=False)
    check(lambda a: np.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0), x, loose=False)
    check(np.nan_to_num, np.arange(5), loose=False)
    y = x.copy()
    out = autofuse.jit(lambda a: np.nan_to_num(a, copy=False), backend="cpu")(y)
    np.testing.assert_array_equal(y, np.nan_to_num(x))      # replaced in place, as NumPy does
    np.testing.assert_array_equal(out, np.nan_to_num(x))


def test_isclose_allclose(rng):
    a = rng.standard_normal((4, 5))
    b = a + rng.standard_normal((4, 5)) * 1e-6
    b[0, 0], a[0, 0] = np.inf, np.inf
    b[1, 1], a[1, 1] = np.nan, np.nan
    b[2, 2] = -np.inf
    for equal_nan in (False, True):
        check(lambda x, y: np.isclose(x, y, equal_nan=equal_nan), a, b, loose=False)
        check(lambda x, y: np.isclose(x, y, rtol=1e-9, atol=0.0, equal_nan=equal_nan), a, b,
              loose=False)
    check(lambda x: np.isclose(x, 0.5), a, loose=False)
    check(lambda x, y: np.isclose(x, y), np.arange(6), np.arange(6) + 1e-9, loose=False)
    # NumPy's allclose returns a Python bool; so does the trace
    for kwargs in ({}, {"atol": 10}, {"equal_nan": True}):
        for x, y in ((a[1:], b[1:]), (a, b)):
            got = autofuse.jit(lambda p, q: np.allclose(p, q, **kwargs), backend="cpu")(x, y)
            assert type(got) is bool and got == np.allclose(x, y, **kwargs)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.uint64, F32, F64,
                                   np.float16])
def test_fmod_every_dtype(rng, dtype):
    a = (np.arange(-30, 30) * (1.37 if np.dtype(dtype).kind == "f" else 1))
    if np.dtype(dtype).kind == "u":
        a = np.abs(a)
    b = np.resize([3, -3, 0, 7, 1] if np.dtype(dtype).kind != "u" else [3, 0, 7, 1], a.shape)
    check(np.fmod, a.astype(dtype), b.astype(dtype), loose=False)
    check(lambda x: np.fmod(x, 4), a.astype(dtype), loose=False)


def test_ufunc_compositions(rng):
    x = rng.standard_normal((5, 6)).astype(F32)
    y = rng.standard_normal((6,)).astype(F32)
    x[0, :3] = [np.inf, -np.inf, np.nan]
    y[:2] = [np.inf, -np.inf]
    for fn in (np.logaddexp, np.logaddexp2):
        check(fn, x, y)
        check(lambda a, fn=fn: fn(a, 2.0), x)
        check(fn, np.arange(4), np.arange(4)[::-1])
    check(lambda a: np.heaviside(a, 0.5), x, loose=False)
    check(np.heaviside, np.arange(-3, 3), np.arange(6), loose=False)
    check(np.sinc, x)
    check(np.sinc, np.arange(-3, 4))


def test_counting_and_statistics(rng):
    x = rng.standard_normal((6, 7))
    w = rng.random(7)
    check(lambda a: np.count_nonzero(a > 0, axis=0), x, loose=False)
    check(lambda a: np.count_nonzero(a > 0), x, loose=False)
    check(lambda a: np.average(a, axis=1, weights=w), x)
    check(lambda a: np.average(a, axis=1, weights=w, returned=True), x)
    check(lambda a: np.average(a, weights=np.abs(a)), x)
    check(lambda a: np.average(a, axis=0, keepdims=True), x)
    check(lambda a: np.average(a, axis=0, weights=np.arange(1, 7)), np.arange(42).reshape(6, 7))
    check(lambda a: np.ptp(a, axis=0), x)
    check(np.ptp, np.arange(12).reshape(3, 4))


def test_layout_compositions(rng):
    x = rng.standard_normal((4, 6))
    cube = rng.standard_normal((3, 4, 5))
    check(lambda a, b: np.meshgrid(a, b), x[0], x[1, :4], loose=False)
    check(lambda a, b: np.meshgrid(a, b, indexing="ij"), x[0], x[1, :4], loose=False)
    check(lambda a, b, c: np.meshgrid(a, b, c, sparse=True), x[0], x[1, :3], x[2, :2], loose=False)
    check(lambda a: np.split(a, 3, axis=1), x, loose=False)
    check(lambda a: np.split(a, [1, 3], axis=0), x, loose=False)
    check(lambda a: np.array_split(a, 4, axis=1), x, loose=False)
    for k in range(-1, 4):
        check(lambda a, k=k: np.rot90(a, k), x, loose=False)
        check(lambda a, k=k: np.rot90(a, k, axes=(2, 0)), cube, loose=False)
    for offset in (-3, -1, 0, 2, 5, 9):
        check(lambda a, o=offset: np.diagonal(a, o), x, loose=False)
        check(lambda a, o=offset: np.trace(a, o), x)
        check(lambda a, o=offset: np.diag(a, o), x, loose=False)
        check(lambda a, o=offset: np.diag(a[0], o), x, loose=False)
    check(lambda a: np.diagonal(a, 1, axis1=2, axis2=0), cube, loose=False)
    check(lambda a: np.trace(a, axis1=1, axis2=2), cube)
    check(lambda a: np.diag(a[0, :0]), x, loose=False)


def test_products_compositions(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    check(np.kron, a, b)
    check(np.kron, a[0], b)
    check(np.kron, np.arange(3), np.arange(1, 4))
    u, v = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    check(np.cross, u, v)
    check(np.cross, u[:, :2], v[:, :2])
    check(np.cross, u[:, :2], v)
    check(lambda p, q: np.cross(p, q, axis=0), u.T, v.T)
    check(np.inner, u, v)
    check(np.inner, u[0], v[1])
    check(lambda p: np.inner(p, 2.0), u)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, F32, F64])
def test_divmod_builtin_and_ufunc(rng, dtype):
    """divmod(a, b) on a traced array and np.divmod: (a // b, a % b) as NumPy gives them, signs,
    Python scalars on either side, zero divisors included (found by a sweep of new programs: the
    builtin raised TypeError from the tracer)."""
    if np.dtype(dtype).kind == "i":
        a, b = rng.integers(-20, 20, 60).astype(dtype), rng.integers(-4, 5, 60).astype(dtype)
    else:
        a, b = (rng.standard_normal(60) * 5).astype(dtype), rng.standard_normal(60).astype(dtype)
        b[::7] = 0
    check(lambda a: divmod(a, 3), a, loose=False)
    check(lambda a: divmod(7, a), np.where(a == 0, 1, a).astype(dtype), loose=False)
    check(lambda a, b: np.divmod(a, b), a, b, loose=False)
    check(lambda a, b: divmod(a * 2, b), a, b, loose=False)
