"""Arguments as people pass them: a list or tuple of numbers where NumPy takes an array is
np.asarray of it at the call boundary (keyed by shape and dtype); used as Python uses a list
(indexing, iteration, `+`, `*`, as a shape) it is passed as itself, specialized by value."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse

from conftest import assert_same


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("value", [[1.0, 2.5, -3.0], (1, 2, 3), [[1, 2], [3, 4]], [True, False],
                                   [1, 2.5], [np.float32(1), np.float32(2)]], ids=str)
def test_sequences_are_arrays_for_numpy(value, backend):
    def f(x):
        return np.exp(np.asarray(x) * 0.5) + np.sum(x)
    assert_same(autofuse.jit(f, backend=backend)(value), f(value))


def test_keyed_by_shape_and_dtype_not_by_value():
    f = autofuse.jit(lambda x, w: np.dot(w, x), backend="cpu")
    x = np.arange(3.0)
    for w in ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0], (0.5, 0.25, 1.0)):
        np.testing.assert_array_equal(f(x, w), np.dot(w, x))
    assert f.cache_info().entries == 2              # a list and a tuple: one trace each
    np.testing.assert_array_equal(f(x, [1, 2, 3]), np.dot([1, 2, 3], x))
    assert f.cache_info().entries == 3              # int64 elements: another signature


def test_operators_with_an_array_are_numpys():
    f = autofuse.jit(lambda x, y: x * 2 + y, backend="cpu")
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(f(a, [1, 2, 3]), a * 2 + [1, 2, 3])
    np.testing.assert_array_equal(f(a, [4, 5, 6]), a * 2 + [4, 5, 6])
    assert f.cache_info().entries == 1


def test_python_uses_are_pythons():
    """`[..] * 2` repeats the list, p[0] is a Python float (NEP 50 weak), a tuple is a shape."""
    def repeat(x, y):
        return x * 2 + y
    y = np.ones(3)
    assert_same(autofuse.jit(repeat, backend="cpu")([[1.0, 2.0, 3.0]], y), repeat([[1.0, 2.0, 3.0]], y))

    def affine(x, p):
        w, b = p
        return x * w + b + p[0]
    x = np.ones(2, np.float32)
    jitted = autofuse.jit(affine, backend="cpu")
    assert_same(jitted(x, (2.0, 3.0)), affine(x, (2.0, 3.0)))     # float32, as in NumPy
    assert jitted.lower(x, (2.0, 3.0)).specialized == {"p": (2.0, 3.0)}

    reshape = autofuse.jit(lambda x, shape: x.reshape(shape), backend="cpu")
    assert reshape(np.arange(6.0), (2, 3)).shape == (2, 3)
    assert reshape(np.arange(6.0), [3, 2]).shape == (3, 2)

    both = autofuse.jit(lambda x, s: x + len(s) + np.sum(s), backend="cpu")
    np.testing.assert_array_equal(both(x, [1, 2]), x + 2 + 3)


def test_returned_list_is_the_list():
    f = autofuse.jit(lambda x, s: (x + 1, s), backend="cpu")
    result = f(np.zeros(2), [1, 2])
    assert result[1] == [1, 2] and type(result[1]) is list


def test_lists_of_arrays_stay_containers():
    f = autofuse.jit(lambda xs: xs[0] + xs[1], backend="cpu")
    a, b = np.ones(3), np.arange(3.0)
    np.testing.assert_array_equal(f([a, b]), a + b)
    np.testing.assert_array_equal(f((a, 2.0)), a + 2.0)


def test_static_argnames_with_a_list():
    f = autofuse.jit(lambda x, axes: x.sum(axis=tuple(axes)), static_argnames="axes", backend="cpu")
    x = np.ones((2, 3, 4))
    np.testing.assert_array_equal(f(x, [0, 2]), x.sum(axis=(0, 2)))
    np.testing.assert_array_equal(f(x, [1]), x.sum(axis=1))


def test_ragged_and_unsupported_lists():
    f = autofuse.jit(lambda x, y: x[0] + y, backend="cpu")
    np.testing.assert_array_equal(f([[1.0], [2.0, 3.0]], np.ones(1)), [2.0])   # ragged: a container
    with pytest.raises(autofuse.ArgumentError):
        autofuse.jit(lambda x: x, backend="cpu")(["a", "b"])


def test_functions_passed_as_arguments_are_static_keyed_by_identity():
    """`activation=np.tanh` or a lambda can only be called, never traced: it is taken by value."""
    @autofuse.jit
    def f(x, act=np.tanh):
        return act(x) * 2.0
    x = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(f(x), np.tanh(x) * 2.0)
    np.testing.assert_allclose(f(x, np.exp), np.exp(x) * 2.0)
    np.testing.assert_allclose(f(x, act=lambda v: v + 1.0), (x + 1.0) * 2.0)
    np.testing.assert_allclose(f(x), np.tanh(x) * 2.0)
    assert f.cache_info().entries == 3


@pytest.mark.parametrize("fn, args, kwargs", [
    (np.floor_divide, (np.arange(-5, 5), 3), {}),
    (np.add, (np.arange(4.0), 1.5), {}),
    (np.sum, (np.arange(12.0).reshape(3, 4),), {"axis": 1}),
    (np.mean, (np.ones((3, 4), np.float32),), {}),
    (np.maximum, (np.arange(4.0), 2.0), {}),
])
def test_numpy_functions_and_ufuncs_jit_as_they_are(fn, args, kwargs):
    """Their defaults (a ufunc's casting='same_kind', NumPy's _NoValue) are not arguments."""
    got = autofuse.jit(fn, backend="cpu")(*args, **kwargs)
    np.testing.assert_array_equal(got, fn(*args, **kwargs))


def test_parameters_left_out_keep_their_defaults():
    def f(x, alpha=0.5, *, beta=2):
        return x * alpha + beta
    j = autofuse.jit(f, backend="cpu")
    x = np.ones(3)
    for args, kwargs in [((x,), {}), ((x, 1.5), {}), ((x,), {"beta": 3}), ((x, 0.5), {})]:
        np.testing.assert_array_equal(j(*args, **kwargs), f(*args, **kwargs))
