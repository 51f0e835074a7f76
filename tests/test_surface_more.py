"""More of the NumPy surface against NumPy on fresh random inputs (CPU backend):
np.nanquantile / np.nanpercentile (NaN placement, all-NaN rows, every method, q's dtype),
np.lexsort (ties, NaN, int and float keys, axes), np.apply_along_axis (one call on the stack of
rows where that computes the rows, else one per row) and np.vectorize (elementwise calls, else
one per element), with their errors."""
from __future__ import annotations


import numpy as np
import pytest

import math

import autofuse
from autofuse.trace.along_axis import MAX_ROWS
from autofuse.trace.vectorize import MAX_ELEMENTS

from conftest import check_quietly as check, random_array


def with_nans(shape, dtype, rng, layout="C", fraction=0.3):
    """Random floats with NaN at random places, one all-NaN row (axis 0), -0.0, inf and ties;
    the first element is never NaN (NumPy's result dtype follows the first row's: module
    nanquantiles)."""
    x = random_array(shape, dtype, rng, layout)
    x[rng.random(shape) < fraction] = np.nan
    if x.size:
        x[(0,) * x.ndim] = 0.5
    if x.ndim >= 2 and x.shape[0] > 1:
        x[1] = np.nan
    flat = x.reshape(-1) if x.flags.c_contiguous else None
    if flat is not None and x.size >= 4:
        flat[rng.choice(x.size, 3, replace=False)] = np.array([-0.0, np.inf, -np.inf], dtype)
        flat[-1] = flat[0]
    return x


# -- nanquantile / nanpercentile ------------------------------------------------------------------
METHODS = ["linear", "lower", "higher", "nearest", "midpoint"]
QS = [0.3, [0.0, 0.25, 0.5, 1.0], np.float32(0.7), 1, np.array([0.1, 0.9], np.float32)]
QIDS = ["float", "list", "float32", "int", "float32-array"]


@pytest.mark.parametrize("q", QS, ids=QIDS)
@pytest.mark.parametrize("method", METHODS)
def test_nanquantile_methods(method, q, rng):
    x = with_nans((6, 11), np.float64, rng)
    check(lambda a: np.nanquantile(a, q, axis=1, method=method), x)
    check(lambda a: np.nanquantile(a, q, axis=0, method=method, keepdims=True), x)


SHAPES_AXES = [((13,), None), ((5, 7), -1), ((5, 7), None), ((4, 3, 6), (0, 2)),
               ((4, 3, 6), 1), ((0, 5), 1), ((3, 0), 1), ((), None)]


@pytest.mark.parametrize("shape,axis", SHAPES_AXES, ids=[f"{s}-{a}" for s, a in SHAPES_AXES])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_nanquantile_shapes_and_dtypes(dtype, shape, axis, rng):
    x = with_nans(shape, dtype, rng)
    check(lambda a: np.nanquantile(a, 0.4, axis=axis), x, loose=True)
    check(lambda a: np.nanpercentile(a, [10, 50, 95], axis=axis, method="midpoint"), x,
          loose=True)


@pytest.mark.parametrize("layout", ["F", "stride2", "reversed"])
def test_nanpercentile_layouts(layout, rng):
    x = with_nans((5, 8), np.float32, rng, layout)
    check(lambda a: np.nanpercentile(a, 37.5, axis=-1), x)
    check(lambda a: np.nanpercentile(a, [0, 100], axis=0, method="nearest"), x)


def test_nanquantile_of_integers_and_fused_producer(rng):
    check(lambda a: np.nanquantile(a, [0.2, 0.5], axis=1), random_array((4, 9), np.int32, rng))
    x = with_nans((6, 10), np.float32, rng)
    check(lambda a: np.nanpercentile(a * 2 - 1, 75, axis=-1) + a[:, 0], x)


def test_nanquantile_all_nan_and_no_nan(rng):
    check(lambda a: np.nanquantile(a, [0.5, 0.9], axis=1), np.full((3, 4), np.nan))
    check(lambda a: np.nanquantile(a, 0.5), np.full((3, 4), np.nan, np.float32))
    check(lambda a: np.nanquantile(a, 0.5), np.array(np.nan))
    x = random_array((4, 9), np.float64, rng)
    check(lambda a: np.nanquantile(a, 0.35, axis=1) - np.quantile(a, 0.35, axis=1), x)


def test_nanquantile_errors(rng):
    x = random_array((4, 5), np.float64, rng)
    with pytest.raises(autofuse.NumPyValueError, match=r"np.nanpercentile.*range \[0, 100\]"):
        autofuse.jit(lambda a: np.nanpercentile(a, 120))(x)
    with pytest.raises(autofuse.UnsupportedError, match="np.nanquantile: method='weibull'"):
        autofuse.jit(lambda a: np.nanquantile(a, 0.5, method="weibull"))(x)


# -- lexsort --------------------------------------------------------------------------------------
def keys_with_ties(shape, rng, kinds):
    """One key per kind: 'i' small ints (many ties), 'f' rounded floats with NaN, 'b' bools."""
    keys = []
    for kind in kinds:
        if kind == "i":
            keys.append(rng.integers(-2, 3, shape).astype(np.int32))
        elif kind == "b":
            keys.append(rng.random(shape) < 0.5)
        else:
            key = np.round(rng.standard_normal(shape))
            key[rng.random(shape) < 0.15] = np.nan
            keys.append(key)
    return keys


KEY_KINDS = ["i", "f", "ii", "fi", "ibf", "iiii"]


@pytest.mark.parametrize("kinds", KEY_KINDS)
@pytest.mark.parametrize("shape,axis", [((17,), -1), ((4, 9), -1), ((4, 9), 0), ((3, 4, 5), 1)],
                         ids=["vec", "rows", "cols", "middle"])
def test_lexsort(kinds, shape, axis, rng):
    keys = keys_with_ties(shape, rng, kinds)
    check(lambda *k: np.lexsort(k, axis=axis), *keys)


def test_lexsort_key_array_list_and_layouts(rng):
    keys = np.stack(keys_with_ties((3, 8), rng, "iif"))
    check(lambda k: np.lexsort(k), keys)
    check(lambda k: np.lexsort(k[:, ::-1], axis=0), keys)
    a, b = rng.integers(0, 3, (2, 6, 4))
    check(lambda a, b: np.lexsort((a.T, b.T * 2)), a, b)
    check(lambda a, b: a[np.lexsort((a, b))], a[0], b[0])     # sort one key by the others
    check(lambda a, b: np.lexsort((a, b)), np.zeros(0), np.zeros(0))


def test_lexsort_errors(rng):
    a = rng.standard_normal(5)
    with pytest.raises(autofuse.ShapeError, match="all keys need to be the same shape"):
        autofuse.jit(lambda a: np.lexsort((a, a[:3])))(a)
    with pytest.raises(TypeError, match="need sequence of keys"):     # NumPy's own: () holds no tracer
        autofuse.jit(lambda a: np.lexsort(()) + a)(a)
    with pytest.raises(autofuse.UnsupportedError, match="np.lexsort"):
        autofuse.jit(lambda a: np.lexsort((a * 1j,)))(a)


# -- apply_along_axis -----------------------------------------------------------------------------
def ops(fn, *args):
    return autofuse.jit(fn).lower(*args).fused.summary()["ops"]


ROW_FUNCTIONS = {        # name: (func1d, whether one call on the stack computes the rows)
    "sort": (np.sort, True),
    "max-last": (lambda v: v.max(-1), True),
    "median-last": (lambda v: np.median(v, -1), True),
    "scaled": (lambda v: v / np.sqrt((v * v).sum(-1, keepdims=True)), True),
    "reversed": (lambda v: v[..., ::-1] * np.arange(v.shape[-1]), True),
    "sum": (np.sum, False),                              # reduces the whole stack
    "centred": (lambda v: v - v.mean(), False),
    "minus-max": (lambda v: v - v.max(-1), False),       # misaligned on a square stack
    "flipped": (lambda v: np.sort(v)[::-1], False),
    "quantiles": (lambda v: np.quantile(v, [0.2, 0.9]), False),
    "outer": (lambda v: np.outer(v, v)[:2], False),
    "weighted": (lambda v: v @ np.linspace(0, 1, v.shape[0]), False),
}


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("name", list(ROW_FUNCTIONS))
def test_apply_along_axis(name, axis, rng):
    func1d, batched = ROW_FUNCTIONS[name]
    x = random_array((5, 5, 5), np.float64, rng)       # square: misaligned broadcasts would fit
    check(lambda a: np.apply_along_axis(func1d, axis, a), x)
    if batched:     # one call: about as many ops as the function has, not 25 copies
        assert ops(lambda a: np.apply_along_axis(func1d, axis, a), x) < 20


def test_apply_along_axis_arguments_layouts_and_dtypes(rng):
    x = random_array((4, 6), np.float32, rng, "reversed")
    check(lambda a: np.apply_along_axis(lambda v, s, p=1: (v * s) ** p, 1, a, 2.0, p=2), x)
    check(lambda a: np.apply_along_axis(np.cumsum, 0, a), random_array((3, 7), np.int32, rng))
    check(lambda a: np.apply_along_axis(lambda v: v.argmax(), 0, a),
          random_array((6, 4), np.float32, rng, "F"))
    check(lambda a: np.apply_along_axis(np.sum, 0, a), random_array((9,), np.float64, rng))


def test_apply_along_axis_refuses_many_rows_it_cannot_batch(rng):
    x = random_array((MAX_ROWS + 1, 3), np.float64, rng)
    with pytest.raises(autofuse.UnsupportedError, match=r"np.apply_along_axis: sum does not "
                       r"compute a stack of rows row by row .*65 rows.* more than the 64"):
        autofuse.jit(lambda a: np.apply_along_axis(np.sum, 1, a))(x)
    check(lambda a: np.apply_along_axis(lambda v: v.sum(-1), 1, a), x)      # batches
    with pytest.raises(autofuse.NumPyValueError, match="iteration dimensions are 0"):
        autofuse.jit(lambda a: np.apply_along_axis(np.sum, 1, a))(np.zeros((0, 3)))
    with pytest.raises(autofuse.TraceError):
        autofuse.jit(lambda a: np.apply_along_axis(lambda v: math.fsum(v), 1, a))(x)


# -- vectorize ------------------------------------------------------------------------------------
def _piecewise(a, b):
    return np.where(a > b, a - b, np.exp(-a) * b)


VECTORIZED = {
    "two-broadcast": lambda a, b: np.vectorize(_piecewise)(a, b),
    "python-scalar": lambda a, b: np.vectorize(lambda u, s: u * s)(a, 2.0),
    "keyword": lambda a, b: np.vectorize(lambda u, scale=1: u * scale)(a, scale=b),
    "otypes": lambda a, b: np.vectorize(lambda u: u * 3, otypes="d")(a),
    "outputs": lambda a, b: np.vectorize(lambda u, v: (u + v, u > v))(a, b),
    "excluded": lambda a, b: np.vectorize(lambda u, p: u ** p, excluded={1})(a, 3),
    "constant": lambda a, b: np.vectorize(lambda u: 1.5)(a),
    "not-elementwise": lambda a, b: np.vectorize(lambda u: np.sum(u) + u)(a[:2]),
}


@pytest.mark.parametrize("name", list(VECTORIZED))
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_vectorize(name, dtype, rng):
    a = random_array((3, 4), dtype, rng, low=1, high=5)
    b = random_array((4,), np.float64, rng)
    check(VECTORIZED[name], a, b)


def test_vectorize_made_outside_and_zero_d(rng):
    clipped = np.vectorize(lambda u: np.minimum(np.maximum(u, -1), 1))
    check(lambda a: clipped(a * 3), random_array((2, 5), np.float32, rng, "stride2"))
    check(lambda a: clipped(a), np.float64(0.5))
    assert ops(lambda a: clipped(a * 3) + 1, np.ones((4, 4))) < 10


def test_vectorize_errors(rng):
    x = random_array((10, 10), np.float64, rng)
    with pytest.raises(autofuse.UnsupportedError, match=r"not elementwise \(it computes sum\)"):
        autofuse.jit(lambda a: np.vectorize(lambda u: np.sum(u) + u)(a))(x)
    with pytest.raises(autofuse.TraceError, match="np.vectorize: .* np.exp for math.exp"):
        autofuse.jit(lambda a: np.vectorize(lambda u: math.exp(u))(a))(x)
    with pytest.raises(autofuse.TraceError, match="np.where for an `if`"):
        autofuse.jit(lambda a: np.vectorize(lambda u: u if u > 0 else 0.0)(a))(x)
    with pytest.raises(autofuse.UnsupportedError, match=r"signature='\(n\)->\(\)'"):
        autofuse.jit(lambda a: np.vectorize(np.sum, signature="(n)->()")(a))(x)
    with pytest.raises(autofuse.NumPyValueError, match="size 0 inputs unless `otypes`"):
        autofuse.jit(lambda a: np.vectorize(lambda u: u + 1)(a))(np.zeros((0, 2)))
    assert MAX_ELEMENTS == 64
