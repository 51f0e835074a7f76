"""In-place code: slice assignment, augmented assignment, out=, views, and argument mutation.

The reference is the plain Python function run on copies of the arguments: the jitted call must
return the same results *and* leave the caller's arrays exactly as NumPy leaves them.
"""
from __future__ import annotations

import numpy as np
import pytest

import autofuse

from conftest import assert_same, copy_keeping_layout, random_array


def check(fn, *args, loose=True):
    """Run NumPy on copies and autofuse on the originals; results and arguments must agree."""
    copies = [copy_keeping_layout(a) for a in args]
    expected = fn(*copies)
    result = autofuse.jit(fn)(*args)
    assert_same(result, expected, loose=loose)
    for after_numpy, after_jit in zip(copies, args):
        if isinstance(after_numpy, np.ndarray):
            assert_same(after_jit, after_numpy)
    return result


def stencil(x):
    y = np.zeros_like(x)
    y[1:-1] = (x[:-2] + x[1:-1] + x[2:]) / 3
    return y


def column_add(x):
    y = x.copy()
    y[:, 0] += 1
    return y


def scale_argument(x):
    x *= 2
    return x.sum()


def add_out_argument(a, b, c):
    np.add(a, b, out=c)
    return c


def add_out_local(a, b):
    c = np.empty_like(a)
    np.add(a, b, out=c)
    return c * 2


def view_increments_base(x):
    v = x[1:]
    v += 1
    return x


def read_view_after_base_changes(x):
    v = x[::2]
    w = x.T
    x[...] = x * 3
    return v + 0, w.sum(axis=0)


def reshape_copy_not_written(x):
    r = x.T.reshape(-1)
    r[0] = 100
    return r, x


def reshape_view_written(x):
    r = x.reshape(-1)
    r[0] = 100
    return r


def transpose_view_written(x):
    t = x.T
    t[0] = -1
    return x


def chained_views(x):
    v = x[1:, ::-1][:, 1:].T
    v *= 10
    w = x[None, ..., 0]
    return w + 1


def setitem_scalar_and_broadcast(x):
    x[0, 0] = 5
    x[1] = x[2]
    x[:, 1:3] = np.array([7, 8])
    return x[0]


def slice_assign_with_cast(x):
    y = np.zeros(x.shape, dtype=np.int32)
    y[:] = x * 2.7
    return y


def loop_updates(x):
    y = x.copy()
    for i in range(1, y.shape[0]):
        y[i] += y[i - 1]
    return y


def inplace_ops_on_argument(x):
    x += 1
    x -= 0.5
    x /= 2
    x **= 2
    return None


def mutate_and_return_same(x):
    x[0] = 0
    return x


def mutate_second_argument(a, b):
    b[:] = a + b
    return a.sum()


def mutate_through_two_views(x):
    a = x[:, :2]
    b = x[:, 1:]
    a += 1
    b *= 2
    return a, b


def ellipsis_and_newaxis_assign(x):
    x[..., 0] = x[..., -1]
    x[None, 1] = -2
    return x


def integer_inplace_floordiv(x):
    x //= 2
    x %= 3
    return x


def fortran_and_strided(x):
    x[::2] = 0.5
    return x.T @ x


FUNCTIONS = [stencil, column_add, scale_argument, view_increments_base, read_view_after_base_changes,
             reshape_view_written, transpose_view_written, chained_views, setitem_scalar_and_broadcast,
             slice_assign_with_cast, loop_updates, inplace_ops_on_argument, mutate_and_return_same,
             ellipsis_and_newaxis_assign, mutate_through_two_views, fortran_and_strided]


@pytest.mark.parametrize("layout", ["C", "F", "stride2", "reversed"])
@pytest.mark.parametrize("fn", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_mutation(fn, layout, rng):
    check(fn, random_array((5, 4), np.float64, rng, layout))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_inplace(dtype, rng):
    check(integer_inplace_floordiv, random_array((3, 4), dtype, rng))


def test_out_argument(rng):
    a, b = random_array((3, 4), np.float32, rng), random_array((4,), np.float32, rng)
    c = random_array((3, 4), np.float64, rng)
    result = autofuse.jit(add_out_argument)(a, b, c)
    assert result is c
    np.testing.assert_array_equal(c, np.add(a, b).astype(np.float64))   # computed in float32
    check(add_out_local, a, b)


def test_out_argument_matches_numpy(rng):
    a, b = random_array((3, 4), np.int32, rng), random_array((3, 4), np.int32, rng)
    check(add_out_argument, a, b, random_array((3, 4), np.int64, rng))


def test_mutate_second_argument(rng):
    check(mutate_second_argument, random_array((3,), np.float32, rng),
          random_array((3,), np.float32, rng))


def test_reshape_copy_is_not_written_through(rng):
    x = random_array((3, 4), np.float64, rng)
    before = x.copy()
    r, same = autofuse.jit(reshape_copy_not_written)(x)
    assert same is x
    np.testing.assert_array_equal(x, before)
    assert r[0] == 100
    check(reshape_copy_not_written, x)


def test_view_of_argument_mutates_argument(rng):
    x = random_array((4,), np.float64, rng)
    expected = x.copy()
    expected[1:] += 1
    result = autofuse.jit(view_increments_base)(x)
    assert result is x
    np.testing.assert_array_equal(x, expected)


def test_returning_an_argument_returns_the_same_object(rng):
    x = random_array((3,), np.float64, rng)
    y = random_array((3,), np.float64, rng)
    f = autofuse.jit(lambda a, b: (b, a, a))
    out = f(x, y)
    assert out[0] is y and out[1] is x and out[2] is x
    assert autofuse.jit(mutate_and_return_same)(x) is x


def test_returning_a_view_of_an_argument_is_a_new_array(rng):
    """autofuse returns computed arrays, never views into the arguments (documented difference)."""
    x = random_array((3, 4), np.float64, rng)
    v = autofuse.jit(lambda a: a[1:])(x)
    np.testing.assert_array_equal(v, x[1:])
    assert not np.shares_memory(v, x)


@pytest.mark.parametrize("fn", [scale_argument, view_increments_base, mutate_and_return_same,
                                lambda x: np.add(x, 1, out=x), transpose_view_written],
                         ids=["imul", "view", "setitem", "out", "transpose"])
def test_read_only_argument_raises_and_stays(fn, rng):
    x = random_array((3, 4), np.float64, rng)
    x.setflags(write=False)
    before = x.copy()
    with pytest.raises(ValueError):
        fn(x)
    with pytest.raises(autofuse.AutofuseError, match="read-only"):
        autofuse.jit(fn)(x)
    np.testing.assert_array_equal(x, before)


def test_broadcast_view_is_read_only(rng):
    def f(x):
        b = np.broadcast_to(x, (3, 4))
        b += 1
        return b
    x = random_array((4,), np.float64, rng)
    with pytest.raises(ValueError):
        f(x.copy())
    with pytest.raises(autofuse.AutofuseError, match="read-only"):
        autofuse.jit(f)(x)


def test_written_argument_aliasing_another_is_refused(rng):
    """Aliased arguments: NumPy sees one memory; autofuse refuses rather than compute wrongly."""
    def f(a, b):
        a += 1
        return b * 1
    x = random_array((4,), np.float64, rng)
    before = x.copy()
    jitted = autofuse.jit(f)
    for a, b in ((x, x), (x[1:], x[:-1]), (x, x[::2])):
        with pytest.raises(autofuse.UnsupportedError, match="shares memory"):
            jitted(a, b)
        np.testing.assert_array_equal(x, before)
    check(f, x, x.copy())
    check(lambda a, b: a + b, x, x)      # reading aliased arguments is fine


def test_inplace_on_scalar_argument_is_rebinding(rng):
    def f(x, s):
        s += 1
        s *= 2
        x += s
        return s
    check(f, random_array((3,), np.float64, rng), 3)
    check(f, random_array((3,), np.float64, rng), np.float64(2.5))


def test_assign_from_overlapping_view(rng):
    def f(x):
        x[1:] = x[:-1]
        return x
    check(f, random_array((6,), np.float64, rng))
    check(f, random_array((6, 2), np.float64, rng, "F"))


def test_mutation_leaves_cache_consistent(rng):
    f = autofuse.jit(scale_argument)
    x = random_array((3,), np.float64, rng)
    for _ in range(3):
        expected_x = x * 2
        expected = expected_x.sum()
        assert_same(f(x), expected)
        np.testing.assert_array_equal(x, expected_x)
    assert f.cache_info().traces == 1
