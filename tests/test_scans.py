"""Scans (np.cumsum, np.cumprod, ufunc.accumulate, np.cumulative_sum / prod) against NumPy on the
CPU backend: dtypes, axes, broadcasting, non-contiguous and size-0 inputs; their fusion groups."""
import numpy as np
import pytest

import autofuse
from autofuse.ir.interpreter import evaluate

rng = np.random.default_rng(11)

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.int8, np.uint8, np.bool_]
SCANS = {
    "cumsum": lambda x, axis: np.cumsum(x, axis=axis),
    "cumprod": lambda x, axis: np.cumprod(x, axis=axis),
    "method_cumsum": lambda x, axis: x.cumsum(axis),
    "method_cumprod": lambda x, axis: x.cumprod(axis=axis),
    "add": lambda x, axis: np.add.accumulate(x, axis=axis),
    "multiply": lambda x, axis: np.multiply.accumulate(x, axis=axis),
    "maximum": lambda x, axis: np.maximum.accumulate(x, axis=axis),
    "minimum": lambda x, axis: np.minimum.accumulate(x, axis=axis),
    "logical_and": lambda x, axis: np.logical_and.accumulate(x, axis=axis),
    "logical_or": lambda x, axis: np.logical_or.accumulate(x, axis=axis),
}


def sample(shape, dtype):
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.3
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 4, shape).astype(dtype)
    return (rng.standard_normal(shape) * 0.9 + 0.3).astype(dtype)


def check(result, expected):
    assert np.shape(result) == np.shape(expected)
    assert np.asarray(result).dtype == np.asarray(expected).dtype
    if np.asarray(expected).dtype.kind == "f":
        rtol = 1e-4 if np.asarray(expected).dtype == np.float32 else 1e-12
        np.testing.assert_allclose(result, expected, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(SCANS))
def test_scans_match_numpy_on_every_axis(name, dtype):
    x = sample((5, 7, 3), dtype)
    for axis in (0, 1, 2, -1):
        fn = autofuse.jit(lambda x, axis=axis: SCANS[name](x, axis))
        check(fn(x), SCANS[name](x, axis))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_axis_none_flattens_and_zero_d_becomes_one_element(name):
    for x in (sample((4, 6), np.float64), np.float64(2.5), sample((3, 0), np.int32)):
        check(autofuse.jit(lambda x: getattr(np, name)(x))(x), getattr(np, name)(x))


@pytest.mark.parametrize("dtype", [np.int8, np.bool_, np.uint16, np.float32])
def test_dtype_rules_and_argument(dtype):
    x = sample((4, 9), dtype)
    check(autofuse.jit(lambda x: np.cumsum(x, axis=1))(x), np.cumsum(x, axis=1))
    check(autofuse.jit(lambda x: np.cumsum(x, axis=0, dtype=np.float32))(x),
          np.cumsum(x, axis=0, dtype=np.float32))
    check(autofuse.jit(lambda x: np.add.accumulate(x, dtype=np.int16))(x),
          np.add.accumulate(x, dtype=np.int16))


def test_narrow_integers_wrap_as_numpy():
    x = np.full((3, 40), 100, np.int8)
    check(autofuse.jit(lambda x: np.cumsum(x, axis=1, dtype=np.int8))(x),
          np.cumsum(x, axis=1, dtype=np.int8))


@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_functions(name, include_initial):
    for x, axis in ((sample((4, 5), np.float32), 1), (sample((4, 5), np.int32), 0),
                    (sample((6,), np.bool_), None), (sample((3, 0), np.float64), 1)):
        fn = autofuse.jit(lambda x: getattr(np, name)(x, axis=axis, include_initial=include_initial))
        check(fn(x), getattr(np, name)(x, axis=axis, include_initial=include_initial))


def test_non_contiguous_negative_strides_and_broadcasting():
    base = sample((8, 10), np.float64)
    w = sample((10,), np.float64)
    fn = autofuse.jit(lambda x, w: np.cumsum(x * w, axis=0) - w)
    for x in (base.T[:, ::-1].T, base[::-2, 1::3], np.asfortranarray(base), base[::-1]):
        check(fn(x, w[:x.shape[1]]), np.cumsum(x * w[:x.shape[1]], axis=0) - w[:x.shape[1]])
    fn = autofuse.jit(lambda x, c: np.maximum.accumulate(x + c, axis=1))
    check(fn(base, base[:, :1]), np.maximum.accumulate(base + base[:, :1], axis=1))


def test_nan_propagates_through_maximum_and_minimum():
    x = sample((3, 12), np.float32)
    x[1, 4] = np.nan
    for op in (np.maximum, np.minimum):
        result = autofuse.jit(lambda x: op.accumulate(x, axis=1))(x)
        np.testing.assert_array_equal(result, op.accumulate(x, axis=1))


def test_size_zero():
    for shape, axis in (((0, 5), 0), ((0, 5), 1), ((4, 0), 1), ((4, 0), 0)):
        x = sample(shape, np.float32)
        check(autofuse.jit(lambda x: np.cumsum(x * 2, axis=axis) + 1)(x), np.cumsum(x * 2, axis=axis) + 1)


def test_producer_scan_and_epilogue_are_one_kernel():
    x = sample((64, 48), np.float32)
    fn = autofuse.jit(lambda x: np.cumsum(x * x, axis=1) / 48)
    low = fn.lower(x)
    assert [k.kind for k in low.kernels] == ["scan"]
    assert low.kernels[0].strategy == "rows"
    check(fn(x), np.cumsum(x * x, axis=1) / 48)
    low = autofuse.jit(lambda x: np.exp(np.cumsum(x, axis=0)) - x).lower(x)
    assert [k.kind for k in low.kernels] == ["scan"] and low.kernels[0].strategy == "columns"


@pytest.mark.parametrize("fn, kinds", [
    (lambda x: np.cumsum(np.cumsum(x, axis=1), axis=1), ["scan", "scan"]),
    (lambda x: np.cumsum(x, axis=1).sum(1), ["scan", "input"]),
    (lambda x: np.cumsum(x - x.mean(1, keepdims=True), axis=1), ["input", "scan"]),
    (lambda x: np.cumsum(x, axis=1).T + 1, ["scan", "loop"]),
    (lambda x: (np.cumsum(x, axis=1), x.cumprod(0) * 2), ["scan", "scan"]),
])
def test_what_does_not_fuse_into_a_scan(fn, kinds):
    x = sample((6, 6), np.float64)
    low = autofuse.jit(fn).lower(x)
    assert sorted(k.kind for k in low.kernels) == sorted(kinds)
    expected = fn(x)
    result = autofuse.jit(fn)(x)
    for a, b in zip(result if isinstance(result, tuple) else [result],
                    expected if isinstance(expected, tuple) else [expected]):
        check(a, b)


def test_interpreter_is_the_reference():
    x = sample((5, 4), np.int32)
    low = autofuse.jit(lambda x: np.cumprod(x + 1, axis=0)).lower(x)
    (result,) = evaluate(low.graph, [x])
    check(result, np.cumprod(x + 1, axis=0))


def test_errors_name_the_call():
    x = np.ones((3, 4))
    with pytest.raises(autofuse.NumPyValueError, match="cumulative_sum"):
        autofuse.jit(lambda x: np.cumulative_sum(x))(x)
    with pytest.raises(autofuse.NumPyValueError, match="multiple axes"):
        autofuse.jit(lambda x: np.add.accumulate(x, axis=None))(x)
    with pytest.raises(autofuse.ShapeError, match="out of bounds"):
        autofuse.jit(lambda x: np.cumsum(x, axis=2))(x)
    with pytest.raises(autofuse.UnsupportedError, match="subtract.accumulate"):
        autofuse.jit(lambda x: np.subtract.accumulate(x))(x)
    with pytest.raises(autofuse.ShapeError, match="scalar"):
        autofuse.jit(lambda x: np.add.accumulate(x))(np.float64(1.0))


def test_axes_of_one_element_around_the_scan():
    """An epilogue reads the scan at "0" on its axes of one element (found by the fuzzer)."""
    for shape, axis in (((5, 1, 1), 0), ((1, 6, 1), 1), ((1, 1, 7), 2), ((4, 1), 0)):
        x = sample(shape, np.float64)
        fn = lambda x: np.cumsum(x, axis=axis) * 2 + x
        check(autofuse.jit(fn)(x), fn(x))


def test_gradients_of_cumsum_and_cumprod():
    x = sample((4, 6), np.float64) + 2.0
    w = sample((4, 6), np.float64)
    grad = autofuse.grad(lambda x: (np.cumsum(x, axis=1) * w).sum())(x)
    np.testing.assert_allclose(grad, np.flip(np.cumsum(np.flip(w, 1), axis=1), 1), rtol=1e-12)
    grad = autofuse.grad(lambda x: (np.cumprod(x, axis=0) * w).sum())(x)
    y = np.cumprod(x, axis=0)
    expected = np.flip(np.cumsum(np.flip(w * y, 0), axis=0), 0) / x
    np.testing.assert_allclose(grad, expected, rtol=1e-10)
    with pytest.raises(autofuse.UnsupportedError, match="maximum.accumulate"):
        autofuse.grad(lambda x: np.maximum.accumulate(x, axis=1).sum())(x)
