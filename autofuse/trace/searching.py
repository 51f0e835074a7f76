"""Searching a sorted axis: np.searchsorted, np.digitize, np.interp, and np.isin (a search of the
sorted test elements).

A search is written as a fixed number of gathers, not as a loop the kernel runs: with the
length n known at trace time, Shar's form of binary search takes at most floor(log2(n)) + 2
gathers and selects per value, which fuse into one elementwise kernel over the values
(O(m log n) work, as NumPy's binary search).

Order is NumPy's sort order: NaN after every number, so the comparisons are NaN-aware.
"""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentError, DTypeError, NumPyValueError, ShapeError, UnsupportedError, where
from . import checks
from .gather import emit
from .layout import as_tracer
from .tracer import Tracer, fresh


def _before(a, b):
    """a sorts strictly before b (NaN last, as np.sort puts it)."""
    if np.dtype(a.dtype).kind in "fc" or np.dtype(b.dtype).kind in "fc":
        return (a < b) | (np.isnan(b) & (a == a))
    return a < b


def _count(sorted_: Tracer, values: Tracer, precedes) -> Tracer:
    """How many leading elements of the 1-d `sorted_` satisfy `precedes(element, value)`, for
    each value (a predicate true on a prefix of the sorted axis).

    Shar's search: p, the largest power of two at most n, splits the axis into a first test
    (is the answer at least p? then it lies in [n - p, n]) and a window of p positions halved
    log2(p) times; every index it reads is in bounds, so no clamp is needed."""
    n = sorted_.shape[0]
    base = np.zeros_like(values, dtype=np.int64)
    if n == 0:
        return base

    def test(index):
        return precedes(emit(sorted_, (0,), [index], (), values.shape), values)
    p = 1 << (n.bit_length() - 1)
    if p < n:
        base = np.where(test(base + (p - 1)), n - p, base)
    step = p // 2
    while step:
        base = np.where(test(base + (step - 1)), base + step, base)
        step //= 2
    return base + test(base).astype(np.int64)


def _common(a: Tracer, v, what: str) -> tuple[Tracer, Tracer]:
    """a and v in the dtype NumPy compares them in."""
    v = as_tracer(v, what)
    try:
        dtype = np.result_type(a.dtype, v.dtype)
    except TypeError:
        raise DTypeError(f"{what}: cannot compare {a.dtype} with {v.dtype}{where()}") from None
    return a.astype(dtype, copy=False), v.astype(dtype, copy=False)


def searchsorted(a, v, side="left", sorter=None):
    """np.searchsorted: where each of v would go into the sorted 1-d `a` to keep it sorted."""
    what = "np.searchsorted"
    a = as_tracer(a, what)
    if a.ndim != 1:
        raise ShapeError(f"{what}: object too deep for desired array: a is {a.shape}, it must be "
                         f"1-d{where()}")
    if side not in ("left", "right"):
        raise NumPyValueError(f"{what}: side must be 'left' or 'right' (got {side!r}){where()}")
    if sorter is not None:
        sorter = as_tracer(sorter, what)
        if sorter.shape != a.shape or np.dtype(sorter.dtype).kind not in "iu":
            raise ArgumentError(f"{what}: sorter must be integers of a's shape {a.shape}, got "
                                f"{sorter.dtype} {sorter.shape}{where()}")
        checks.indices_in_bounds(sorter, a.shape[0], 0, what, f"a {a.shape}, sorter {sorter.shape}")
        a = emit(a, (0,), [sorter], (), a.shape)
    scalar = not isinstance(v, Tracer) and np.ndim(v) == 0 or isinstance(v, Tracer) and v.ndim == 0
    a, v = _common(a, v, what)
    if side == "left":
        found = _count(a, v, _before)
    else:
        found = _count(a, v, lambda element, value: ~_before(value, element))
    return fresh(found.node, scalar=True) if scalar else found


def digitize(x, bins, right=False):
    """np.digitize: the index of the bin each x falls in, bins increasing or decreasing (checked
    when the call runs where bins are computed)."""
    what = "np.digitize"
    x, bins = as_tracer(x, what), as_tracer(bins, what)
    if np.dtype(x.dtype).kind == "c":
        raise DTypeError(f"{what}: x may not be complex{where()}")
    if bins.ndim != 1:
        raise NumPyValueError(f"{what}: object of too small depth for desired array: bins is "
                              f"{bins.shape}, it must be 1-d{where()}")
    rising = searchsorted(bins, x, side="left" if right else "right")
    if bins.shape[0] < 2:
        return rising
    steps = bins[1:] - bins[:-1] if bins.dtype != np.bool_ else \
        bins[1:].astype(np.int8) - bins[:-1].astype(np.int8)
    increasing, decreasing = np.all(steps >= 0), np.all(steps <= 0)
    checks.raise_if(~(increasing | decreasing), NumPyValueError,
                    f"{what}: bins must be monotonically increasing or decreasing{where()}")
    falling = bins.shape[0] - searchsorted(bins[::-1], x, side="left" if right else "right")
    return np.where(increasing, rising, falling)


def interp(x, xp, fp, left=None, right=None, period=None):
    """np.interp: the piecewise-linear interpolant through (xp, fp) at x, xp increasing, with
    NumPy's rules at the ends, at the points themselves and where a slope overflows."""
    what = "np.interp"
    x, xp, fp = (as_tracer(value, what) for value in (x, xp, fp))
    if period is not None:
        raise UnsupportedError(f"{what}: period= is not supported{where()}")
    if xp.ndim != 1 or fp.ndim != 1:
        raise NumPyValueError(f"{what}: xp and fp must be 1-d, got {xp.shape} and {fp.shape}"
                              f"{where()}")
    if xp.shape != fp.shape:
        raise NumPyValueError(f"{what}: fp and xp are not of the same length ({fp.shape[0]} and "
                              f"{xp.shape[0]}){where()}")
    if xp.shape[0] == 0:
        raise NumPyValueError(f"{what}: array of sample points is empty{where()}")
    if np.dtype(fp.dtype).kind == "c":
        raise UnsupportedError(f"{what}: complex fp is not supported{where()}")
    for value, name in ((x, "x"), (xp, "xp")):
        if np.dtype(value.dtype).kind == "c":
            raise DTypeError(f"{what}: {name} may not be complex{where()}")
    scalar = x.ndim == 0
    x, xp, fp = (value.astype(np.float64, copy=False) for value in (x, xp, fp))
    n = xp.shape[0]
    low = fp[0] if left is None else left
    high = fp[n - 1] if right is None else right
    if n == 1:      # NumPy's own case: NaN, neither below nor above the point, takes fp[0]
        result = np.where(x < xp[0], low, np.where(x > xp[0], high, fp[0]))
        return fresh(result.node, scalar=True) if scalar else result
    # j: the last sample point at or before x (x < xp[0]: -1, x > xp[-1]: n); NumPy's search
    # compares plainly (a NaN x gives NaN below)
    j = _count(xp, x, lambda element, value: element <= value) - 1
    j = np.where(x > xp[n - 1], n, j)
    inner = np.clip(j, 0, n - 2)
    x0, y0 = emit(xp, (0,), [inner], (), x.shape), emit(fp, (0,), [inner], (), x.shape)
    x1, y1 = emit(xp, (0,), [inner + 1], (), x.shape), emit(fp, (0,), [inner + 1], (), x.shape)
    slope = (y1 - y0) / (x1 - x0)
    line = slope * (x - x0) + y0
    # NumPy's fallbacks for a NaN result (an infinite slope): from the right end, then the
    # common value of a flat segment
    line = np.where(np.isnan(line), slope * (x - x1) + y1, line)
    line = np.where(np.isnan(line) & (y0 == y1), y0, line)
    line = np.where(x == x0, y0, line)
    result = np.where(j < 0, low, np.where(j >= n, high, np.where(j == n - 1, fp[n - 1], line)))
    result = np.where(np.isnan(x), np.nan, result)
    return fresh(result.node, scalar=True) if scalar else result


# np.isin compares each element with every test element up to this many of them (one fused
# comparison each); more are sorted once and searched (log2 of their count gathers an element).
ISIN_COMPARED = 16


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """np.isin: whether each element equals one of `test_elements` (compared in the dtype NumPy
    compares them in; NaN equals nothing). `assume_unique` and `kind` only choose NumPy's
    algorithm: the answer is the same."""
    what = "np.isin"
    if kind not in (None, "sort", "table"):
        raise NumPyValueError(f"{what}: Invalid kind: '{kind}'. Please use None, 'sort' or "
                              f"'table'.{where()}")
    element, tests = _common(as_tracer(element, what), test_elements, what)
    tests = tests.reshape(-1)
    count = tests.shape[0]
    if count == 0:
        found = np.zeros(element.shape, dtype=bool)
    elif count <= ISIN_COMPARED:
        found = element == tests[0]
        for k in range(1, count):
            found = found | (element == tests[k])
    else:
        ordered = np.sort(tests)
        position = np.minimum(_count(ordered, element, _before), count - 1)
        found = emit(ordered, (0,), [position], (), element.shape) == element
    found = as_tracer(found, what)
    found = ~found if invert else found
    return fresh(found.node)           # (an array, 0-d for a scalar element, as NumPy's)


FUNCTIONS = {np.searchsorted: searchsorted, np.digitize: digitize, np.interp: interp,
             np.isin: isin}
