"""Boolean masks of x's shape: `x[mask] = scalar` and `x[mask] *= v` trace to np.where, and a
selection consumed by a reduction (`x[x > 0].sum()`, `.mean()`, `.max()`, `.size`) to a masked
reduction (no data-dependent shape): agrees with NumPy on the CPU backend and the reference
interpreter across dtypes, masks computed or passed in, views, non-contiguous and size-0 inputs."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse

from conftest import assert_same, copy_keeping_layout, random_array

BACKENDS = ["cpu", "numpy"]


def check(fn, *args):
    expected = fn(*[copy_keeping_layout(a) for a in args])
    for backend in BACKENDS:
        result = autofuse.jit(fn, backend=backend)(*[copy_keeping_layout(a) for a in args])
        assert_same(result, expected)


def zero_positive(a):
    a = a.copy()
    a[a > 0] = 0
    return a


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7,), (4, 5), (2, 3, 4), (0, 3)])
def test_mask_from_the_array(dtype, shape, rng):
    check(zero_positive, random_array(shape, dtype, rng))


def test_mask_argument_and_casting_value(rng):
    def f(a, m):
        b = a * 2
        b[m] = 2.75                     # cast into int32 as NumPy's unsafe casting does
        return b + 1
    check(f, random_array((5, 6), np.int32, rng), rng.random((5, 6)) > 0.5)


def test_traced_scalar_value_and_argument_written_in_place(rng):
    def f(a, v):
        a[a < 0] = v.sum()
        return a
    check(f, random_array((3, 4), np.float64, rng), random_array((2,), np.float64, rng))


def test_through_a_view_and_non_contiguous(rng):
    def f(a):
        b = a.copy()
        b[:, 1:][b[:, 1:] < 0] = 7
        return b
    x = random_array((5, 8), np.float32, rng)
    check(f, x)
    check(f, x[::-1, ::2])
    check(zero_positive, x.T)


REDUCTIONS = {
    "sum": lambda a: a[a > 0].sum(),
    "np.sum": lambda a: np.sum(a[a > 0]),
    "mean": lambda a: a[a > 0].mean(),
    "np.mean": lambda a: np.mean(a[a < 1]),
    "max": lambda a: a[a < 1].max(),
    "np.max": lambda a: np.max(a[a > -1]),
    "min": lambda a: a[a > -1].min(),
    "prod": lambda a: a[a > 0].prod(),
    "any": lambda a: a[a > 0].any(),
    "all": lambda a: np.all(a[a > 0]),
    "size": lambda a: a[a > 0].size + a[:0].sum(dtype=np.int64),   # an int64 scalar both ways
    "arithmetic then sum": lambda a: (2 * a[a > 0] + 1).sum(dtype=np.float64),
    "empty sum": lambda a: a[a > 1e9].sum(),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_selection_reduced(name, dtype, rng):
    check(REDUCTIONS[name], random_array((4, 5), dtype, rng))


@pytest.mark.parametrize("name", ["sum", "mean", "max", "size"])
def test_selection_non_contiguous_and_3d(name, rng):
    x = random_array((4, 6, 3), np.float32, rng)
    check(REDUCTIONS[name], x[::-1, ::2])
    check(REDUCTIONS[name], x.transpose(2, 0, 1))


def test_selection_by_mask_argument(rng):
    def f(a, m):
        return a[m].sum(), a[m].mean()
    check(f, random_array((6, 7), np.float64, rng), rng.random((6, 7)) > 0.3)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_in_place_operator_through_a_mask(dtype, rng):
    def f(a):
        b = a.copy()
        b[b > 0] *= 3
        keep = b < 0
        b[keep] += 5
        return b
    check(f, random_array((5, 6), dtype, rng))


def test_unsupported_selection_uses(rng):
    x = random_array((3, 4), np.float32, rng)
    for use in (lambda a: a[a > 0], lambda a: len(a[a > 0]), lambda a: a[a > 0].shape,
                lambda a: np.sort(a[a > 0]), lambda a: a[a > 0] * a[:1].sum(axis=0)):
        with pytest.raises(autofuse.UnsupportedError, match="boolean selection"):
            autofuse.jit(use, backend="cpu")(x)

    def float_into_int(a):
        b = a.copy()
        b[b > 0] *= 2.5
        return b
    with pytest.raises(autofuse.UnsupportedError, match="same_kind"):
        autofuse.jit(float_into_int, backend="cpu")(random_array((3, 4), np.int32, rng))


def test_unsupported_forms_say_what_to_write(rng):
    x = random_array((3, 4), np.float32, rng)

    def row_mask(a):
        b = a.copy()
        b[a[:, 0] > 0] = 0
        return b

    def array_value(a):
        b = a.copy()
        b[a > 0] = a[a > 0]
        return b
    with pytest.raises(autofuse.UnsupportedError, match="np.where"):
        autofuse.jit(row_mask, backend="cpu")(x)
    with pytest.raises(autofuse.UnsupportedError):
        autofuse.jit(array_value, backend="cpu")(x)


EMPTY_EXTREMA = {
    "max": lambda a: a[a > 1e9].max(),
    "np.max": lambda a: np.max(a[a > 1e9]),
    "min": lambda a: a[a < -1e9].min(),
    "np.amin": lambda a: np.amin(a[a < -1e9]),
    "fused consumer": lambda a: a[a > 1e9].max() * 2 + a.sum(),
}


@pytest.mark.parametrize("name", list(EMPTY_EXTREMA))
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_empty_selection_max_min_raise_as_numpy(name, dtype, rng):
    """max/min of a selection that selects nothing have no identity: NumPy's ValueError, with
    its message and the user's line, from every backend (checked after the call)."""
    fn = EMPTY_EXTREMA[name]
    x = random_array((4, 5), dtype, rng)
    with pytest.raises(ValueError, match="zero-size array") as expected:
        fn(x)
    for backend in BACKENDS:
        with pytest.raises(autofuse.NumPyValueError, match="zero-size array to reduction") as raised:
            autofuse.jit(fn, backend=backend)(x)
        assert "test_masks.py" in str(raised.value)
        assert str(expected.value) in str(raised.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_selection_max_min_raise_only_when_empty(backend, rng):
    """The same compiled function raises for a call that selects nothing and agrees with NumPy on
    one that selects something; `initial=` gives the empty selection its value, as in NumPy."""
    def f(a, m):
        return a[m].max(), a[m].min(), np.max(a[m], initial=-7.0)
    jitted = autofuse.jit(f, backend=backend)
    x = random_array((3, 4), np.float64, rng)
    some = rng.random((3, 4)) > 0.5
    some[0, 0] = True
    assert_same(jitted(x, some), f(x, some))
    with pytest.raises(autofuse.NumPyValueError, match="maximum which has no identity"):
        jitted(x, np.zeros((3, 4), bool))
    with pytest.raises(autofuse.NumPyValueError, match="no identity"):
        jitted(x[:0], some[:0])
    assert_same(autofuse.jit(lambda a, m: np.max(a[m], initial=-7.0), backend=backend)(
        x, np.zeros((3, 4), bool)), np.float64(-7.0))
