"""Masked assignment `x[mask] = scalar` with a boolean mask of x's shape traces to np.where (no
data-dependent shape): agrees with NumPy on the CPU backend and the reference interpreter across
dtypes, masks computed from the array or passed in, views, non-contiguous and size-0 inputs."""
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
