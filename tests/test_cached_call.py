"""The generated call of a cached signature (autofuse/cached_call.py): from the second call on, a
signature whose results need assembling (arguments written in place, several results, scalars,
Python-int checks, error flags) runs one written-out function; it must return and write exactly
what the first call (running.run) does, and raise the same errors with nothing written."""
import numpy as np
import pytest

import autofuse
from autofuse.errors import DTypeError, NumPyValueError, OutOfBoundsError, UnsupportedError

RNG = np.random.default_rng()


def generated(f):
    """The fast path's call of f's one cached signature, checked to be a generated one."""
    (call,) = f._fast.values()
    assert hasattr(call, "source"), "expected the generated call, got run()"
    return call


def adam(param, grad, m, v, step):
    m *= 0.9
    m += 0.1 * grad
    v *= 0.999
    v += 0.001 * grad * grad
    param -= 1e-3 * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5)])
def test_arguments_written_in_place_match_numpy_on_every_call(dtype, shape):
    f = autofuse.jit(adam)
    for step in (1, 2, 3, 4):
        arrays = [RNG.standard_normal(shape).astype(dtype) for _ in range(4)]
        arrays[3] = np.asarray(np.abs(arrays[3]))
        expected = [a.copy() for a in arrays]
        assert adam(*expected, step) is None
        assert f(*arrays, step) is None
        for got, want in zip(arrays, expected):
            np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == np.float32 else 1e-12)
    generated(f)


def test_strided_and_reversed_arguments_written_in_place():
    def scale(x, y):
        x *= 2
        return y + x, x.sum()

    f = autofuse.jit(scale)
    for _ in range(3):
        base = RNG.standard_normal((6, 8))
        x, y = base[::2, ::-1], RNG.standard_normal((3, 8))[:, ::2].repeat(2, axis=1)
        want_x = x.copy()
        want = scale(want_x, y)
        got = f(x, y)
        np.testing.assert_allclose(x, want_x)
        np.testing.assert_allclose(base[::2, ::-1], want_x)
        np.testing.assert_allclose(got[0], want[0])
        assert isinstance(got[1], np.float64) and np.isclose(got[1], want[1])
    generated(f)


def test_result_structures_scalars_constants_and_arguments():
    def many(x, n, s):
        return {"sum": x.sum(), "pair": (x * n, [x, n * 2]), "k": 3, "s": s + 1.5, "ok": True}

    f = autofuse.jit(many)
    for n in (2, 3, 4):
        x = RNG.standard_normal(5)
        got, want = f(x, n, 0.25), many(x, n, 0.25)
        assert set(got) == set(want)
        assert type(got["sum"]) is np.float64 and np.isclose(got["sum"], want["sum"])
        np.testing.assert_allclose(got["pair"][0], want["pair"][0])
        assert got["pair"][1][0] is x
        assert type(got["pair"][1][1]) is int and got["pair"][1][1] == 2 * n
        assert got["k"] == 3 and type(got["s"]) is float and got["s"] == 1.75 and got["ok"] is True
        assert type(got["pair"]) is tuple and type(got["pair"][1]) is list
    generated(f)


def test_a_returned_copy_is_never_the_argument():
    f = autofuse.jit(lambda x: (x.astype(x.dtype), x + 0))
    x = np.arange(4.0)
    for _ in range(3):
        first, second = f(x)
        assert first is not x and second is not x
        assert not np.shares_memory(first, x) and not np.shares_memory(second, x)
    generated(f)


def test_python_int_out_of_range_raises_on_the_cached_path():
    def add(x, n):
        x += n
        return x * 2

    f = autofuse.jit(add)
    x = np.zeros(4, np.int8)
    f(x, 1)
    f(x, 2)
    generated(f)
    before = x.copy()
    with pytest.raises(DTypeError, match="out of bounds"):
        f(x, 1000)
    np.testing.assert_array_equal(x, before)


def test_negative_integer_power_raises_on_the_cached_path():
    f = autofuse.jit(lambda x, n: x ** n + 1)
    x = np.arange(1, 5)
    f(x, 2)
    np.testing.assert_array_equal(f(x, 3), x ** 3 + 1)
    with pytest.raises(NumPyValueError, match="negative integer powers"):
        f(x, -1)


def test_aliased_written_arguments_are_refused_on_the_cached_path():
    def update(x, y):
        x += y
        return None

    f = autofuse.jit(update)
    x, y = np.zeros(6), np.ones(6)
    f(x, y)
    f(x, y)
    generated(f)
    np.testing.assert_array_equal(x, 2.0)
    with pytest.raises(UnsupportedError, match="shares memory"):
        f(x, x[:])
    with pytest.raises(UnsupportedError, match="shares memory"):
        f(x, x)
    np.testing.assert_array_equal(x, 2.0)


def test_error_flags_raise_on_the_cached_path_before_any_write():
    def pick(x, idx):
        x *= 2
        return x[idx]

    f = autofuse.jit(pick)
    x = np.arange(5.0)
    idx = np.array([0, 4, 1])
    f(x, idx)
    np.testing.assert_array_equal(f(x, idx), np.arange(5.0)[idx] * 4)
    generated(f)
    before = x.copy()
    with pytest.raises(OutOfBoundsError):
        f(x, np.array([0, 5, 1]))
    np.testing.assert_array_equal(x, before)


def test_read_only_argument_written_in_place_is_refused():
    def double(x):
        x *= 2

    f = autofuse.jit(double)
    x = np.ones(3)
    f(x)
    f(x)
    x.flags.writeable = False
    with pytest.raises(autofuse.TraceError, match="read-only"):
        f(x)
