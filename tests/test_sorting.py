"""Sorts and order statistics against NumPy on the CPU backend: np.sort, np.argsort, ndarray.sort in
place, partition / argpartition (checked as partitions), median, quantile / percentile, nanmedian;
across dtypes (NaN and -0.0 in floats, ties in integers and bools), axes, layouts, empty and 0-d
inputs; and how they fuse."""
from __future__ import annotations


import numpy as np
import pytest

import autofuse

from conftest import check_quietly as check, random_array

DTYPES = [np.float32, np.float64, np.int32, np.int8, np.uint16, np.bool_]
IDS = [np.dtype(d).name for d in DTYPES]


def values(shape, dtype, rng, layout="C"):
    """Random values with ties, and for floats NaN, -0.0, 0.0 and infinities among them."""
    x = random_array(shape, dtype, rng, layout)
    if np.dtype(dtype).kind == "f" and x.size >= 6:
        flat = x.reshape(-1) if x.flags.c_contiguous else None
        specials = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, np.nan], dtype)
        picks = rng.choice(x.size, size=min(x.size, 6), replace=False)
        if flat is not None:
            flat[picks] = specials[:len(picks)]
        else:
            index = np.unravel_index(picks, x.shape)
            x[index] = specials[:len(picks)]
        x[tuple(s // 2 for s in x.shape)] = x[(0,) * x.ndim]     # a tie
    return x


SHAPES_AXES = [((9,), -1), ((9,), None), ((4, 7), -1), ((4, 7), 0), ((4, 7), None),
               ((3, 4, 5), 1), ((3, 4, 5), -1)]


@pytest.mark.parametrize("shape,axis", SHAPES_AXES, ids=[f"{s}-{a}" for s, a in SHAPES_AXES])
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_sort_and_stable_argsort(dtype, shape, axis, rng):
    x = values(shape, dtype, rng)
    check(lambda a: np.sort(a, axis=axis), x)
    check(lambda a: np.argsort(a, axis=axis, kind="stable"), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_default_argsort_is_a_sorting_permutation(dtype, rng):
    x = values((5, 12), dtype, rng)
    order = autofuse.jit(lambda a: np.argsort(a, axis=-1))(x)
    assert order.dtype == np.int64
    assert (np.sort(order, axis=-1) == np.arange(12)).all()
    np.testing.assert_array_equal(np.take_along_axis(x, order, -1), np.sort(x, axis=-1))


@pytest.mark.parametrize("layout", ["F", "stride2", "reversed"])
def test_sort_of_strided_arguments(layout, rng):
    x = values((6, 8), np.float64, rng, layout)
    check(lambda a: np.sort(a, axis=0), x)
    check(lambda a: np.argsort(a, axis=-1, kind="stable"), x)
    check(lambda a: np.median(a, axis=1), x)


@pytest.mark.parametrize("shape", [(0,), (0, 5), (5, 0), (2, 0, 3)])
def test_sort_of_empty_arrays(shape, rng):
    x = np.zeros(shape, np.float32)
    for axis in (-1, 0, None):
        check(lambda a: np.sort(a, axis=axis), x)
        check(lambda a: np.argsort(a, axis=axis), x)


def test_zero_d_inputs():
    x = np.array(2.5)
    check(lambda a: np.sort(a, axis=None), x)
    check(lambda a: np.median(a), x)
    check(lambda a: np.quantile(a, 0.3), x)
    with pytest.raises(ValueError):
        autofuse.jit(lambda a: np.sort(a))(x)


def test_sort_in_place_writes_the_argument(rng):
    def f(a, b):
        a.sort()
        b[1:].sort(axis=0)
        return a[:, 0] * 2

    x, y = values((4, 6), np.float32, rng), values((5, 3), np.int32, rng)
    x2, y2 = x.copy(), y.copy()
    result = autofuse.jit(f)(x, y)
    expected = f(x2, y2)
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_], ids=["float32", "int32", "bool"])
def test_partition_is_a_partition(dtype, rng):
    x = values((6, 11), dtype, rng)
    ordered = np.sort(x, axis=-1)
    for kth in (0, 5, -1, (2, 7)):
        part = autofuse.jit(lambda a: np.partition(a, kth, axis=-1))(x)
        index = autofuse.jit(lambda a: np.argpartition(a, kth))(x)
        for k in np.atleast_1d(kth):
            k = k % 11
            np.testing.assert_array_equal(part[:, k], ordered[:, k])
            np.testing.assert_array_equal(np.sort(part[:, :k], -1), ordered[:, :k])
            np.testing.assert_array_equal(np.sort(part[:, k + 1:], -1), ordered[:, k + 1:])
            np.testing.assert_array_equal(np.take_along_axis(x, index, -1)[:, k], ordered[:, k])
        assert (np.sort(index, axis=-1) == np.arange(11)).all()
    with pytest.raises(ValueError):
        autofuse.jit(lambda a: np.partition(a, 11))(x)


@pytest.mark.parametrize("shape,axis", [((9,), None), ((4, 8), -1), ((4, 7), 0), ((3, 4, 5), (0, 2)),
                                        ((3, 4, 5), None), ((6, 1), 1)],
                         ids=["1d", "rows-even", "cols-odd", "two-axes", "all", "one"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_],
                         ids=["float32", "float64", "int32", "bool"])
def test_median(dtype, shape, axis, rng):
    x = values(shape, dtype, rng)
    check(lambda a: np.median(a, axis=axis), x)
    check(lambda a: np.median(a, axis=axis, keepdims=True), x)


def test_median_of_clean_rows_and_nan_rows(rng):
    x = rng.standard_normal((5, 10)).astype(np.float32)
    check(lambda a: np.median(a, axis=-1), x)
    x[2, 4] = np.nan
    check(lambda a: np.median(a * 2 + 1, axis=-1), x)
    check(lambda a: np.median(a, axis=0), np.zeros((0, 3), np.float32))


METHODS = ["linear", "lower", "higher", "nearest", "midpoint"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16], ids=["float32", "float64", "int16"])
def test_quantile_methods(dtype, method, rng):
    x = values((5, 9), dtype, rng)
    for q in (0.0, 0.3, 0.5, 0.75, 1.0):
        check(lambda a: np.quantile(a, q, axis=-1, method=method), x)
    check(lambda a: np.quantile(a, [0.1, 0.5, 0.99], axis=0, method=method), x)
    check(lambda a: np.percentile(a, np.float64(37.5), axis=1, keepdims=True, method=method), x)
    check(lambda a: np.percentile(a, [[10.0, 90.0]][0], method=method), x)


def test_quantile_of_clean_float32_rows(rng):
    x = rng.standard_normal((7, 33)).astype(np.float32)
    check(lambda a: np.quantile(a, 0.9, axis=-1), x)
    check(lambda a: a - np.percentile(a, 25, axis=-1, keepdims=True), x)
    check(lambda a: np.quantile(a, np.array([0.25, 0.5]), axis=(0, 1), keepdims=True), x)


def test_quantile_errors(rng):
    x = values((3, 4), np.float32, rng)
    with pytest.raises(ValueError):
        autofuse.jit(lambda a: np.quantile(a, 1.5))(x)
    with pytest.raises(ValueError):
        autofuse.jit(lambda a: np.percentile(a, -1))(x)
    with pytest.raises(autofuse.UnsupportedError):
        autofuse.jit(lambda a: np.quantile(a, 0.5, method="hazen"))(x)
    with pytest.raises(autofuse.UnsupportedError):
        autofuse.jit(lambda a: np.sort(a, order="f"))(x)


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_nanmedian(axis, rng):
    x = values((6, 9), np.float64, rng)
    x[3] = np.nan                                        # an all-NaN row
    x[:, 5] = np.nan
    check(lambda a: np.nanmedian(a, axis=axis), x)
    check(lambda a: np.nanmedian(a, axis=axis, keepdims=True), x.astype(np.float32))
    check(lambda a: np.nanmedian(a, axis=axis), values((6, 9), np.int32, rng))


# -- fusion ---------------------------------------------------------------------------------------
def kinds(fn, *args):
    return [k.kind for k in autofuse.jit(fn).lower(*args).kernels]


def test_median_is_one_sort_kernel_with_its_producer_and_interpolation():
    x = np.ones((8, 16), np.float32)
    assert kinds(lambda a: np.median(a * 2 - 1, axis=-1), x) == ["sort"]
    assert kinds(lambda a: a - np.quantile(a, 0.25, axis=-1, keepdims=True), x) == ["sort"]
    assert kinds(lambda a: np.sort(np.exp(a)) * 3, x) == ["sort"]


def test_what_does_not_join_a_sort():
    x = np.ones((8, 16), np.float32)
    # the sorted array read transposed is stored first; a reduction of it is its own kernel
    assert kinds(lambda a: np.sort(a, axis=0) + 1, x) == ["sort", "loop"]
    assert sorted(kinds(lambda a: np.sort(a).sum(axis=-1), x)) == ["input", "sort"]
    assert sorted(kinds(lambda a: np.sort(a - a.mean(axis=-1, keepdims=True)), x)) == \
        ["input", "sort"]
    check(lambda a: np.sort(a - a.mean(axis=-1, keepdims=True)).sum(axis=-1), x)


def test_long_rows_are_sorted_alone_on_the_gpu_cost_model():
    from autofuse.backends.cuda import COST
    from autofuse.fusion import partition
    x = np.ones((2, COST.max_sort_row + 1), np.float32)
    low = autofuse.jit(lambda a: np.median(a * 2, axis=-1), backend="numpy").lower(x)
    fused = partition(low.graph, COST)
    assert sorted(g.kind for g in fused.groups) == ["elementwise", "loop", "sort"]
    assert [len(g.nodes) for g in fused.groups if g.kind == "sort"] == [1]


def test_cpu_sorts_short_rows_fused_and_long_rows_by_numpy():
    from autofuse.backends.cpu import COST
    short = np.ones((8, COST.max_sort_row), np.float32)
    (kernel,) = autofuse.jit(lambda a: np.median(a * 2, axis=-1)).lower(short).kernels
    assert kernel.strategy == "sorted rows"
    long = np.ones((8, COST.max_sort_row + 1), np.float32)
    kernels = autofuse.jit(lambda a: np.median(a * 2, axis=-1)).lower(long).kernels
    assert [k.strategy.split(" (")[0] for k in kernels if k.kind == "sort"] == ["numpy sort"]
    assert len(kernels) == 3


def test_quantile_follows_the_dtype_of_q(rng):
    x = values((4, 9), np.float32, rng)
    i = values((4, 9), np.int32, rng)
    check(lambda a: np.quantile(a, np.float32(0.3), axis=-1), x)
    check(lambda a: np.quantile(a, np.array([0.25, 0.8], np.float32), axis=-1), x)
    check(lambda a: np.quantile(a, np.array([0.25, 0.8], np.float32), axis=-1), i)
    check(lambda a: np.quantile(a, 1, axis=-1), i)
    check(lambda a: np.quantile(a, [0, 1], axis=0), i)
    check(lambda a: np.quantile(a, np.float32(0.5), method="midpoint"), x)
    with pytest.raises(TypeError):
        autofuse.jit(lambda a: np.quantile(a, 0.5))(rng.random((3, 4)) < 0.5)
