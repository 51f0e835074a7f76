"""The arranging functions (trace/arrangement.py), the numerical helpers and composed ufuncs
(trace/numerics.py), np.partition with a Python int argument, and the error for functions whose
result's shape comes from the values: against NumPy on the reference interpreter, and a few
whole programs on the CPU backend."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse
from autofuse.errors import AutofuseError, UnsupportedError
from conftest import assert_same

rng = np.random.default_rng(2026)
X = rng.standard_normal((4, 6))
X[0, 0], X[1, 1], X[2, 2], X[3, 3] = -0.0, np.nan, -np.inf, np.inf
FINITE = rng.standard_normal((4, 6))
V = rng.standard_normal(6)
I = rng.integers(0, 24, 7)
NANS = FINITE.copy()
NANS[0, :3] = np.nan


def check(fn, *args, backend="numpy"):
    got = autofuse.jit(fn, backend=backend)(*[np.copy(a) for a in args])
    with np.errstate(all="ignore"):
        want = fn(*args)
    assert_same(got, want, loose=True)


CASES = [
    ("atleast_1d", lambda x: np.atleast_1d(x[0, 0]), (FINITE,)),
    ("atleast_2d", lambda x, v: np.atleast_2d(x, v, v[0]), (FINITE, V)),
    ("atleast_3d", lambda x: (np.atleast_3d(x), np.atleast_3d(x[0]), np.atleast_3d(x[0, 0])),
     (FINITE,)),
    ("fliplr_flipud", lambda x: (np.fliplr(x), np.flipud(x), np.flipud(x[0])), (FINITE,)),
    ("column_stack", lambda x, v: np.column_stack([v[:4], x, x[:, 0]]), (FINITE, V)),
    ("dstack", lambda x: np.dstack([x, x * 2, x[:, :, None]]), (FINITE,)),
    ("append", lambda x, v: (np.append(x, v), np.append(x, x[:1], axis=0)), (FINITE, V)),
    ("splits", lambda x: tuple(np.hsplit(x, [2]) + np.vsplit(x, 2)
                               + np.dsplit(x[:, :, None] * np.ones(4), 2)), (FINITE,)),
    ("broadcast_arrays", lambda x, v: np.broadcast_arrays(x[:, :1], v[:5], 2.0), (FINITE, V)),
    ("rollaxis", lambda x: (np.rollaxis(x[None], 2, 0), np.rollaxis(x[None], 0, 3),
                            np.rollaxis(x, -1)), (FINITE,)),
    ("polyval", lambda v: np.polyval([1.0, -2.0, 3.0], v) + np.polyval(v[:3], 2.0), (V,)),
    ("polyval_int", lambda i: np.polyval([1, -2, 3], i), (I,)),
    ("vander", lambda v, i: (np.vander(v), np.vander(v, 3, increasing=True), np.vander(i[:4]),
                             np.vander(v, 0)), (V, I)),
    ("select", lambda v: np.select([v > 0.5, v < -0.5], [v, -v * 2], 7), (V,)),
    ("select_dtypes", lambda v: (np.select([v > 0], [v.astype(np.float32)]),
                                 np.select([v > 0, v < -1], [v.astype(np.int32), 1], 2.5)), (V,)),
    ("trapezoid", lambda x, v: (np.trapezoid(x), np.trapezoid(v, dx=0.5),
                                np.trapezoid(x, x=np.cumsum(np.abs(v)), axis=1),
                                np.trapezoid(x, x=x * 2, axis=0)), (FINITE, V)),
    ("ediff1d", lambda v: (np.ediff1d(v, to_begin=[0.0, 1.0], to_end=-1), np.ediff1d(v[:1])),
     (V,)),
    ("vdot", lambda v, x: (np.vdot(v, v * 2), np.vdot(x, x), np.vdot(v + 1j, v - 2j)), (V, FINITE)),
    ("array_equal", lambda v: (np.array_equal(v, v), np.array_equal(v, v + 1),
                               np.array_equal(v, v[:2])), (V,)),
    ("array_equal_nan", lambda x: (np.array_equal(x, x), np.array_equal(x, x, equal_nan=True)),
     (X,)),
    ("nancumsum_nancumprod", lambda x: (np.nancumsum(x), np.nancumprod(x, axis=0),
                                        np.nancumsum(x.astype(np.int64))), (NANS,)),
    ("nanargmax_nanargmin", lambda x: (np.nanargmax(x, axis=1), np.nanargmin(x),
                                       np.nanargmax(x, axis=0, keepdims=True)), (NANS,)),
    ("unravel_index", lambda i: np.unravel_index(i, (4, 6)) + np.unravel_index(i, (4, 6), order="F")
     + np.unravel_index(i[0], (2, 3, 4)), (I,)),
    ("ravel_multi_index", lambda i: (np.ravel_multi_index((i % 4, i % 6), (4, 6)),
                                     np.ravel_multi_index((i, i - 30), (4, 6), mode=("clip", "wrap")),
                                     np.ravel_multi_index((i % 4, i % 6), (4, 6), order="F")), (I,)),
    ("float_ufuncs", lambda x: (np.fabs(x), np.deg2rad(x), np.rad2deg(x), np.float_power(x, 2),
                                np.ldexp(x, 3), np.ldexp(x, -1080), np.signbit(x),
                                np.isposinf(x), np.isneginf(x)), (X,)),
    ("integer_ufuncs", lambda i: (np.fabs(i), np.float_power(i, 2), np.ldexp(1.5, i),
                                  np.signbit(i - 5), np.deg2rad(i)), (I,)),
    ("float32_ufuncs", lambda x: (np.fabs(x), np.ldexp(x, 2), np.signbit(-x), np.float_power(x, 3)),
     (FINITE.astype(np.float32),)),
]


@pytest.mark.parametrize("name, fn, args", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(name, fn, args):
    check(fn, *args)


def test_programs_on_the_cpu_backend():
    check(lambda x, v: (np.polyval(v[:4], np.fliplr(x)) + np.vander(v, 6)[:4],
                        np.select([x > 0], [np.rad2deg(x)], -1.0),
                        np.trapezoid(np.atleast_2d(v), axis=1)), FINITE, V, backend="cpu")
    check(lambda x: (np.nanargmax(x, axis=1), np.nancumsum(x, axis=1), np.column_stack([x, x])),
          NANS, backend="cpu")


def test_partition_with_a_python_int_argument():
    f = autofuse.jit(lambda x, k: np.partition(x, k)[k], backend="numpy")
    for k in (0, 3, 5):
        assert f(V, k) == np.partition(V, k)[k]


def test_errors_only_the_values_show_come_after_the_call():
    with pytest.raises(ValueError, match="All-NaN slice"):
        autofuse.jit(lambda x: np.nanargmax(x, axis=1), backend="numpy")(NANS[:, :3].copy())
    with pytest.raises(ValueError, match="out of bounds"):
        autofuse.jit(lambda i: np.unravel_index(i, (2, 3)), backend="numpy")(np.array([1, 6]))
    with pytest.raises(ValueError, match="invalid entry"):
        autofuse.jit(lambda i: np.ravel_multi_index((i, i), (2, 3)), backend="numpy")(
            np.array([0, 2]))


@pytest.mark.parametrize("fn, args", [
    (lambda x: np.fliplr(x), (V,)),
    (lambda x: np.vsplit(x, 2), (V,)),
    (lambda x: np.append(x, x[0], axis=0), (FINITE,)),
    (lambda x: np.rollaxis(x, 0, 5), (FINITE,)),
    (lambda v: np.select([v > 0], []), (V,)),
    (lambda v: np.select([v], [v]), (V,)),
    (lambda v: np.vdot(v, v[:2]), (V,)),
    (lambda x: np.isposinf(x + 1j), (V,)),
    (lambda v: np.vander(v[None]), (V,)),
])
def test_errors_as_numpy(fn, args):
    with pytest.raises(Exception) as numpy_error:
        fn(*args)
    with pytest.raises((type(numpy_error.value), AutofuseError)) as ours:
        autofuse.jit(fn, backend="numpy")(*args)
    assert isinstance(ours.value, AutofuseError)
    assert "test_arrangement_and_numerics.py" in str(ours.value)


@pytest.mark.parametrize("function", ["nonzero", "argwhere", "flatnonzero", "unique"])
def test_results_shaped_by_the_values_say_what_to_write_instead(function):
    fn = getattr(np, function)
    with pytest.raises(UnsupportedError, match="depends on the values") as error:
        autofuse.jit(lambda x: fn(x > 0), backend="numpy")(V)
    assert "np.where(mask, x, 0)" in str(error.value)
    assert "test_arrangement_and_numerics.py" in str(error.value)
