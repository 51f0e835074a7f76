"""NumPy's own errors, raised where NumPy raises them: integers to negative integer powers."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse

NUMPY_MESSAGE = "Integers to negative integer powers are not allowed."


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("fn", [lambda a: a ** -1, lambda a: np.power(a, -2),
                                lambda a: a ** np.array([1, -1]), lambda a: np.power(a, [2, -3]),
                                lambda a: np.int64(2) ** (a - 3)[0] ** -1],
                         ids=["operator", "np.power", "array", "list", "scalar"])
def test_negative_integer_power_known_at_trace_time(fn, backend):
    x = np.array([1, 2], dtype=np.int32)
    with pytest.raises(ValueError, match=NUMPY_MESSAGE):
        fn(x)
    with pytest.raises(autofuse.NumPyValueError, match=NUMPY_MESSAGE) as info:
        autofuse.jit(fn, backend=backend)(x)
    assert "test_numpy_errors.py" in str(info.value)


def test_python_int_exponent_argument_is_checked_each_call():
    f = autofuse.jit(lambda a, n: a ** n, backend="cpu")
    x = np.array([1, 2, 3])
    np.testing.assert_array_equal(f(x, 2), x ** 2)
    np.testing.assert_array_equal(f(x, 3), x ** 3)
    with pytest.raises(ValueError, match=NUMPY_MESSAGE):
        x ** -1
    with pytest.raises(autofuse.NumPyValueError, match=NUMPY_MESSAGE):
        f(x, -1)
    np.testing.assert_array_equal(f(x, 0), x ** 0)
    assert f.cache_info().traces == 1


def test_float_and_unsigned_powers_are_not_refused():
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(autofuse.jit(lambda a: a ** -1, backend="cpu")(x), x ** -1)
    u = np.array([1, 2], dtype=np.uint8)
    np.testing.assert_array_equal(autofuse.jit(lambda a, b: a ** b, backend="cpu")(u, u), u ** u)
