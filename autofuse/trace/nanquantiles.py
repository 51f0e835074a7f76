"""np.nanquantile and np.nanpercentile: order statistics of each row's non-NaN values.

NumPy drops a row's NaNs and takes the quantile of the c values left, so the positions it reads
depend on c, a per-row count known only when the program runs. NaN sorts last, so those c values
are the first c of the sorted row; the positions and weights are computed from c with NumPy's
formulas (in q's dtype, as NumPy's Python-int count times q is) and each value is picked from the
sorted row by position (a masked max over the row, exact for -0.0 and inf, fused with the sort
like nanmedian's picks). A row of NaNs only gives NaN (NumPy warns).

One difference: NumPy fills an all-NaN row's result with NaN of the array's dtype and sizes its
result by the first row it computes, so for an array q (not a Python scalar) of a wider dtype
than the values (float64 q, float32 values) its result dtype is the values' when the first row
is all NaN, q's promoted with them otherwise; here it is always the latter.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError, where
from .context import current
from .layout import as_tracer, reshape
from .sorting import per_q, quantile, quantiles, rows_along, sort
from .tracer import Tracer, fresh


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None, what="np.nanquantile",
                scale=1) -> Tracer:
    if out is not None or weights is not None or interpolation is not None:
        raise UnsupportedError(f"{what}: out=, weights= and interpolation= are not supported"
                               f"{where()}")
    qs, weak = quantiles(q, method, what, scale)
    x = as_tracer(a, what)
    if x.dtype.kind != "f":      # nothing to skip (complex is refused by the sort)
        return quantile(x, q, axis, method=method, keepdims=keepdims, what=what, scale=scale)
    if x.size == 0:              # NumPy: np.nanmean of the array (no q axes), NaN with a warning
        return np.nanmean(x, axis=axis, keepdims=keepdims)
    rows, outer, keep = rows_along(x, axis, what)
    s = sort(rows)
    count = np.sum(~np.isnan(rows), axis=-1, keepdims=True)
    position = fresh(current().emit("iota", [], {"shape": s.shape, "axis": s.ndim - 1,
                                                "dtype": np.dtype(np.int64)}))
    results = []
    for value in qs.ravel():
        result = _one(s, count, position, value, method, weak)
        result = np.where(count == 0, np.array(np.nan, result.dtype), result)
        results.append(reshape(result, outer, what))
    return per_q(results, qs, outer, keep, keepdims, what)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None) -> Tracer:
    return nanquantile(a, q, axis, out, overwrite_input, method, keepdims, weights=weights,
                       interpolation=interpolation, what="np.nanpercentile", scale=100)


def _pick(s: Tracer, position: Tracer, index: Tracer) -> Tracer:
    """Each row's value at `index` (shape (..., 1), in 0 .. c - 1): the row's max where the
    position matches, -inf elsewhere (a NaN past c never matches)."""
    lowest = np.array(-np.inf, s.dtype)
    return np.max(np.where(position == index, s, lowest), axis=-1, keepdims=True)


def _one(s: Tracer, count: Tracer, position: Tracer, q: np.generic, method: str,
         weak: bool) -> Tracer:
    """One quantile of each row's first `count` values, NumPy's _quantile for a row of that
    length: the virtual index, its neighbours (both the last value at or past the end, as
    NumPy's -1), the weight, then _lerp; an integer virtual index reads one value."""
    last = np.maximum(count - 1, 0)
    scaled = (count - 1).astype(q.dtype) * q
    rounding = {"lower": np.floor, "higher": np.ceil, "nearest": np.rint}.get(method)
    if rounding is not None:
        scaled = rounding(scaled).astype(np.int64)
    elif method == "midpoint":
        scaled = 0.5 * (np.floor(scaled) + np.ceil(scaled))
    if scaled.dtype.kind in "iu":
        return _pick(s, position, np.clip(scaled.astype(np.int64), 0, last))
    virtual = scaled
    above = virtual >= (count - 1)
    below = virtual < 0
    previous = np.where(above, -1, np.where(below, 0, np.floor(virtual)))
    following = np.where(above, -1, np.where(below, 0, np.floor(virtual) + 1))
    if method == "midpoint":
        gamma = np.where(virtual % 1 == 0, np.array(0.0, virtual.dtype),
                         np.array(0.5, virtual.dtype))
    else:
        gamma = (virtual - previous).astype(virtual.dtype)

    def at(index: Tracer) -> Tracer:
        spot = np.where(index < 0, last, np.clip(index.astype(np.int64), 0, last))
        return _pick(s, position, spot)
    a, b = at(previous), at(following)
    return _lerp(a, b, gamma, weak)


def _lerp(a: Tracer, b: Tracer, t: Tracer, weak: bool) -> Tracer:
    """NumPy's _lerp with a weight per row: a + (b - a) * t, or b - (b - a) * (1 - t) where
    t >= 0.5. A Python-scalar q makes NumPy pass t as a Python float (weak: the arithmetic
    stays in the values' dtype), an array q as an array of q's dtype (it promotes)."""
    diff = b - a
    if weak:
        low = a + diff * t.astype(a.dtype)
        high = b - diff * (1 - t).astype(a.dtype)
    else:
        low = a + diff * t
        high = b - diff * (1 - t)
    return np.where(t >= 0.5, high, low).astype(low.dtype)
