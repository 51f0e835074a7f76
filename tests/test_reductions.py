"""Reductions: functions and methods, axis None/int/negative/tuple, keepdims, dtype=, NaNs."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import autofuse

from conftest import copy_keeping_layout, DTYPE_IDS, DTYPES, assert_same, random_array

AXES = [None, 0, 1, -1, -3, (0, 2), (-1, 0), (), (0, 1, 2)]
AXIS_IDS = ["None", "0", "1", "-1", "-3", "(0,2)", "(-1,0)", "()", "all3"]

REDUCTIONS = ["sum", "prod", "max", "min", "any", "all", "mean", "var", "std"]
FUNCTIONS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "amax": np.amax,
             "amin": np.amin, "any": np.any, "all": np.all, "mean": np.mean, "var": np.var,
             "std": np.std}


def check(fn, *args, loose=True):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # NumPy's "Mean of empty slice"
        expected = fn(*[copy_keeping_layout(a) for a in args])
    result = autofuse.jit(fn)(*args)
    assert_same(result, expected, loose=loose)


@pytest.mark.parametrize("keepdims", [False, True], ids=["drop", "keep"])
@pytest.mark.parametrize("axis", AXES, ids=AXIS_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_reduction_function(name, dtype, axis, keepdims, rng):
    fn = FUNCTIONS[name]
    x = random_array((2, 3, 4), dtype, rng)
    check(lambda a: fn(a, axis=axis, keepdims=keepdims), x)


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)], ids=["None", "0", "-1", "(0,1)"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_method(name, dtype, axis, rng):
    x = random_array((3, 4), dtype, rng)
    check(lambda a: getattr(a, name)(axis=axis), x)
    check(lambda a: getattr(a, name)(axis, keepdims=True), x)
    check(lambda a: getattr(a, name)(), x)


@pytest.mark.parametrize("layout", ["F", "stride2", "reversed"])
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_of_strided_arguments(name, layout, rng):
    x = random_array((3, 4), np.float64, rng, layout)
    check(lambda a: getattr(a, name)(axis=0), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("keepdims", [False, True], ids=["drop", "keep"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, -2])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions(name, axis, keepdims, dtype, rng):
    x = random_array((3, 4), dtype, rng)
    fn = getattr(np, name)
    check(lambda a: fn(a, axis=axis, keepdims=keepdims), x)
    check(lambda a: getattr(a, name)(axis=axis, keepdims=keepdims), x)
    check(lambda a: fn(a), x)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reduction_ties_and_nans(name):
    x = np.array([[1.0, 3.0, 3.0, np.nan], [2.0, 2.0, 1.0, 1.0]])
    fn = getattr(np, name)
    check(lambda a: fn(a, axis=1), x)
    check(lambda a: fn(a[:, :3], axis=0), x)
    check(lambda a: fn(a), x)


@pytest.mark.parametrize("ddof", [0, 1, 2])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", ["var", "std"])
def test_ddof(name, dtype, ddof, rng):
    x = random_array((4, 5), dtype, rng)
    fn = getattr(np, name)
    check(lambda a: fn(a, axis=0, ddof=ddof), x)
    check(lambda a: getattr(a, name)(ddof=ddof, keepdims=True), x)


@pytest.mark.parametrize("target", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", ["sum", "prod", "mean"])
def test_dtype_argument(name, dtype, target, rng):
    x = random_array((3, 4), dtype, rng)
    fn = getattr(np, name)
    check(lambda a: fn(a, axis=1, dtype=target), x)
    check(lambda a: getattr(a, name)(dtype=target), x)


@pytest.mark.parametrize("target", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_dtype(name, target, rng):
    x = random_array((3, 4), np.int32, rng)
    check(lambda a: getattr(np, name)(a, axis=0, dtype=target), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(FUNCTIONS) + ["argmax", "argmin"])
def test_nan_inputs(name, dtype, rng):
    x = random_array((3, 4), dtype, rng)
    x[1, 2] = np.nan
    x[0, 0] = np.inf
    fn = getattr(np, name)
    check(lambda a: fn(a, axis=0), x)
    check(lambda a: fn(a, axis=1), x)
    check(lambda a: fn(a), x)


@pytest.mark.parametrize("name", ["sum", "prod", "any", "all", "mean"])
def test_empty_reductions(name):
    x = np.ones((0, 3))
    fn = getattr(np, name)
    with np.errstate(all="ignore"):
        check(lambda a: fn(a, axis=0), x)
        check(lambda a: fn(a, axis=1), x)
        check(lambda a: fn(a), x)


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
def test_empty_max_is_an_error(name):
    x = np.ones((0, 3))
    with pytest.raises(ValueError):
        getattr(np, name)(x, axis=0)
    with pytest.raises(autofuse.ShapeError):
        autofuse.jit(lambda a: getattr(np, name)(a, axis=0))(x)
    check(lambda a: getattr(np, name)(a, axis=1), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_zero_dimensional(dtype, rng):
    x = random_array((), dtype, rng)
    for name in REDUCTIONS + ["argmax", "argmin"]:
        check(lambda a: getattr(np, name)(a), x)
        check(lambda a: getattr(np, name)(a, keepdims=True), x)


def test_ufunc_reduce(rng):
    x = random_array((3, 4), np.float32, rng)
    check(lambda a: np.add.reduce(a), x)
    check(lambda a: np.maximum.reduce(a, axis=1), x)
    check(lambda a: np.multiply.reduce(a, axis=None, keepdims=True), x)


def test_reduction_chains(rng):
    x = random_array((4, 5), np.float32, rng)
    check(lambda a: (a - a.mean(axis=0)) / a.std(axis=0), x)
    check(lambda a: a.sum() > 0, x)
    check(lambda a: a.max(axis=1).sum() + a.min(), x)


def test_python_list_input(rng):
    check(lambda a: np.sum([1, 2, 3]) + a.sum(), random_array((2,), np.int32, rng))
