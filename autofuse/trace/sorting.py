"""Sorts and order statistics: np.sort, np.argsort, ndarray.sort (in place), np.partition,
np.argpartition, np.median, np.percentile, np.quantile, np.nanmedian.

Design. The IR has one sort op and one argsort op (ir/ops.py), both along the LAST axis: a sort
along another axis moves it last (a transpose, fused into the sort kernel's loads and stores) and
back; axis=None sorts the flattened array. The kernels always sort stably with NaN last (argsort
ties in their order, which is a valid answer for NumPy's unstable kinds too, and exactly
kind='stable'). A partition is a sort (a sorted row is a valid partition for every kth).
Order statistics are a sort followed by reads of fixed positions of each row (slices, known at
trace time from q and the row length) and NumPy's interpolation as elementwise ops, in NumPy's
exact order of operations and dtypes (_lerp, the mean of the two middle values, the NaN check on
the row's last value), so the fusion pass can put the positions and the interpolation in the sort
kernel (fusion/sorting.py). nanmedian counts each row's non-NaN values and picks the middle ones
of the sorted row by position (masked sums), so it needs no data-dependent shapes.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import DTypeError, NumPyValueError, ShapeError, UnsupportedError, where
from . import ufuncs
from .context import current
from .layout import as_tracer, concatenate, normalize_axes, normalize_axis, reshape, transpose
from .reductions import reduce
from .tracer import Tracer, fresh
from .ufuncs import refuse_complex

KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")
METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _check_kind(kind, order, what: str) -> None:
    if order is not None:
        raise UnsupportedError(f"{what}: order= (structured arrays) is not supported{where()}")
    if kind not in KINDS:
        raise NumPyValueError(f"{what}: sort kind must be one of {KINDS[1:]}, got {kind!r}{where()}")


def _along(op: str, x: Tracer, axis, what: str) -> Tracer:
    """`op` (sort or argsort) of x along `axis` (None: of the flattened array)."""
    if axis is None:
        x = reshape(x, (x.size,), what)
        axis = 0
    if x.ndim == 0:
        raise ShapeError(f"{what}: axis {axis} is out of bounds for array of dimension 0{where()}")
    axis = normalize_axis(axis, x.ndim, what)
    refuse_complex(op, (x.dtype,), what)
    last = x.ndim - 1
    perm = [d for d in range(x.ndim) if d != axis] + [axis]
    moved = transpose(x, perm, what) if axis != last else x
    node = current().emit(op, [moved.node])
    if axis == last:
        return fresh(node)
    inverse = tuple(int(i) for i in np.argsort(perm))
    return fresh(current().emit("transpose", [node], {"perm": inverse}))


def sort(a, axis=-1, kind=None, order=None, *, stable=None) -> Tracer:
    _check_kind(kind, order, "np.sort")
    return _along("sort", as_tracer(a, "np.sort"), axis, "np.sort")


def argsort(a, axis=-1, kind=None, order=None, *, stable=None) -> Tracer:
    _check_kind(kind, order, "np.argsort")
    return _along("argsort", as_tracer(a, "np.argsort"), axis, "np.argsort")


def sort_in_place(x: Tracer, axis=-1, kind=None, order=None, *, stable=None) -> None:
    """x.sort(axis): the sorted values written into x (and through x into what it views)."""
    _check_kind(kind, order, "ndarray.sort")
    x.assign(_along("sort", x, axis, "ndarray.sort").node, "ndarray.sort")


def _check_kth(x: Tracer, kth, axis, what: str) -> None:
    if isinstance(kth, Tracer):      # a Python int argument: the trace needs its value
        kth = kth.python_use("kth") if kth.sequence else kth.tolist()
    length = x.size if axis is None else x.shape[normalize_axis(axis, x.ndim, what)] \
        if x.ndim else 1
    for k in np.atleast_1d(np.asarray(kth)).ravel():
        if not np.issubdtype(np.asarray(k).dtype, np.integer):
            raise NumPyValueError(f"{what}: kth must be integers, got {kth!r}{where()}")
        if not -length <= int(k) < length:
            raise NumPyValueError(f"{what}: kth(={int(k)}) out of bounds ({length}){where()}")


def partition(a, kth, axis=-1, kind="introselect", order=None) -> Tracer:
    x = as_tracer(a, "np.partition")
    _check_kth(x, kth, axis, "np.partition")
    return sort(x, axis, order=order)


def argpartition(a, kth, axis=-1, kind="introselect", order=None) -> Tracer:
    x = as_tracer(a, "np.argpartition")
    _check_kth(x, kth, axis, "np.argpartition")
    return argsort(x, axis, order=order)


def partition_in_place(x: Tracer, kth, axis=-1, kind="introselect", order=None) -> None:
    _check_kth(x, kth, axis, "ndarray.partition")
    sort_in_place(x, axis, order=order)


# -- order statistics ----------------------------------------------------------------------------
def rows_along(x: Tracer, axis, what: str) -> tuple[Tracer, tuple, tuple]:
    """(x with the reduced axes merged into one last axis, the result's shape, its keepdims
    shape)."""
    axes = normalize_axes(axis, x.ndim, what)
    kept = [d for d in range(x.ndim) if d not in axes]
    outer = tuple(x.shape[d] for d in kept)
    keep = tuple(1 if d in axes else s for d, s in enumerate(x.shape))
    if kept + list(axes) != list(range(x.ndim)):
        x = transpose(x, kept + list(axes), what)
    return reshape(x, outer + (math.prod(x.shape[d] for d in range(len(kept), x.ndim)),), what), \
        outer, keep


def _at(s: Tracer, position: int) -> Tracer:
    """Each row's value at `position` of the last axis, the axis dropped."""
    ndim = s.ndim
    attrs = {"start": (0,) * (ndim - 1) + (position,), "step": (1,) * ndim,
             "shape": s.shape[:-1] + (1,)}
    node = current().emit("slice", [s.node], attrs)
    return fresh(current().emit("reshape", [node], {"shape": s.shape[:-1]}))


def _nan_check(s: Tracer, result: Tracer) -> Tracer:
    """NumPy's: a row whose last sorted value is NaN (it held a NaN) gives that NaN."""
    if s.dtype.kind != "f" or s.shape[-1] == 0:
        return result
    last = _at(s, s.shape[-1] - 1)
    nan = ufuncs.apply("isnan", last)
    value = fresh(ufuncs.to_node(last, result.dtype, "np.median"))
    return fresh(current().emit("where", [nan.node, value.node, result.node]))


def _lerp(a: Tracer, b: Tracer, t) -> Tracer:
    """NumPy's _lerp with a known weight: a + (b - a) * t, or b - (b - a) * (1 - t) from 0.5."""
    diff = ufuncs.apply("subtract", b, a)
    result = ufuncs.apply("add", a, ufuncs.apply("multiply", diff, t))
    if t >= 0.5:
        result = ufuncs.apply("subtract", b, ufuncs.apply("multiply", diff, 1 - t),
                              dtype=result.dtype)
    return result


def _one_quantile(s: Tracer, q: np.generic, method: str, weak: bool) -> Tracer:
    """One quantile of each row, q a NumPy scalar of q's dtype: NumPy's arithmetic in that dtype
    (a float32 q gives float32 weights; an integer q takes values, as NumPy's 'linear' does)."""
    n = s.shape[-1]
    rounding = {"lower": np.floor, "higher": np.ceil, "nearest": np.around}.get(method)
    if rounding is not None:
        return _at(s, int(rounding((n - 1) * q)))
    virtual = (n - 1) * q if method == "linear" else \
        0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q))
    if virtual.dtype.kind in "iu":
        return _at(s, int(virtual))
    previous = following = np.floor(virtual)
    following = following + 1
    if virtual >= n - 1:
        previous = following = -1
    if virtual < 0:
        previous = following = 0
    gamma = np.asarray(virtual - previous, dtype=virtual.dtype)
    if method == "midpoint":
        gamma = np.asarray(0.0 if virtual % 1 == 0 else 0.5, dtype=virtual.dtype)
    t = float(gamma) if weak else gamma[()]
    return _lerp(_at(s, int(previous) % n), _at(s, int(following) % n), t)


def finish(result: Tracer, outer: tuple, keep: tuple, q_shape: tuple, keepdims: bool) -> Tracer:
    shape = q_shape + (keep if keepdims else outer)
    if result.shape != shape:
        result = reshape(result, shape, "keepdims")
    return fresh(result.node, scalar=result.ndim == 0)


def quantiles(q, method: str, what: str, scale=1) -> tuple[np.ndarray, bool]:
    """q checked as NumPy checks it (divided by `scale`: 100 for percentiles), and whether it is
    a Python scalar (NumPy then promotes the result weakly, keeping the array's dtype)."""
    if method not in METHODS:
        raise UnsupportedError(f"{what}: method={method!r} is not supported (only "
                               f"{', '.join(METHODS)}){where()}")
    if isinstance(q, Tracer):
        q._concrete(f"{what}: q")
    qs = np.asarray(q) if scale == 1 else np.true_divide(q, scale)
    if qs.dtype.kind not in "iuf":
        raise DTypeError(f"{what}: q must be numbers, got {qs.dtype}{where()}")
    if qs.ndim > 1:
        raise NumPyValueError(f"{what}: q must be a scalar or 1d{where()}")
    if not (np.all(qs >= 0) and np.all(qs <= 1)):
        bounds = "[0, 100]" if scale == 100 else "[0, 1]"
        raise NumPyValueError(f"{what}: {'Percentiles' if scale == 100 else 'Quantiles'} must be "
                              f"in the range {bounds}{where()}")
    return qs, type(q) in (int, float)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
             *, weights=None, interpolation=None, what="np.quantile", scale=1) -> Tracer:
    if out is not None or weights is not None or interpolation is not None:
        raise UnsupportedError(f"{what}: out=, weights= and interpolation= are not supported"
                               f"{where()}")
    qs, weak = quantiles(q, method, what, scale)
    x = as_tracer(a, what)
    if x.dtype.kind == "b" and method in ("linear", "midpoint") and qs.dtype.kind == "f":
        raise DTypeError(f"{what}: numpy boolean subtract (interpolating bools) is not "
                         f"supported by NumPy{where()}")
    rows, outer, keep = rows_along(x, axis, what)
    if rows.shape[-1] == 0:
        raise NumPyValueError(f"{what} of an empty axis (NumPy raises IndexError){where()}")
    s = sort(rows)
    results = [_nan_check(s, _one_quantile(s, value, method, weak)) for value in qs.ravel()]
    return per_q(results, qs, outer, keep, keepdims, what)


def per_q(results: list, qs: np.ndarray, outer: tuple, keep, keepdims: bool, what: str) -> Tracer:
    """The quantiles of each q (`results`, in qs' order) as NumPy returns them: q's axes first."""
    if qs.ndim == 0:
        return finish(results[0], outer, keep, (), keepdims)
    if not results:
        raise UnsupportedError(f"{what}: an empty q{where()}")
    stacked = concatenate([reshape(r, (1,) + r.shape, what) for r in results], 0, what)
    return finish(stacked, outer, keep, qs.shape, keepdims)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None) -> Tracer:
    return quantile(a, q, axis, out, overwrite_input, method, keepdims, weights=weights,
                    interpolation=interpolation, what="np.percentile", scale=100)


def _middle_mean(a: Tracer, b: Tracer | None, dtype: np.dtype) -> Tracer:
    """np.mean of one or two values as NumPy computes it (float16 through float32, integers and
    bools in float64)."""
    through = np.dtype(np.float32) if dtype == np.float16 else dtype
    total = fresh(ufuncs.to_node(a, through, "np.median"))
    if b is None:
        return fresh(ufuncs.to_node(total, dtype, "np.median"))
    total = ufuncs.apply("add", total, fresh(ufuncs.to_node(b, through, "np.median")))
    return fresh(ufuncs.to_node(ufuncs.apply("divide", total, 2), dtype, "np.median"))


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False) -> Tracer:
    what = "np.median"
    if out is not None:
        raise UnsupportedError(f"{what}: out= is not supported{where()}")
    x = as_tracer(a, what)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    rows, outer, keep = rows_along(x, axis, what)
    n = rows.shape[-1]
    if n == 0:     # NumPy: the mean of an empty slice (with a RuntimeWarning)
        empty = fresh(current().constant(np.full(outer, np.nan, dtype)))
        return finish(empty, outer, keep, (), keepdims)
    s = sort(rows)
    middle = n // 2
    if n % 2:
        result = _middle_mean(_at(s, middle), None, dtype)
    else:
        result = _middle_mean(_at(s, middle - 1), _at(s, middle), dtype)
    return finish(_nan_check(s, result), outer, keep, (), keepdims)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False) -> Tracer:
    """The median of each row's non-NaN values: NaN sorts last, so they are the first `count` of
    the sorted row; the middle ones are picked by position (a masked sum over the row)."""
    what = "np.nanmedian"
    if out is not None:
        raise UnsupportedError(f"{what}: out= is not supported{where()}")
    x = as_tracer(a, what)
    if x.dtype.kind != "f":
        return median(x, axis, keepdims=keepdims)
    rows, outer, keep = rows_along(x, axis, what)
    n = rows.shape[-1]
    if n == 0:
        return median(x, axis, keepdims=keepdims)
    s = sort(rows)
    count = reduce("sum", ufuncs.apply("logical_not", ufuncs.apply("isnan", rows)), -1,
                   keepdims=True)
    position = fresh(current().emit("iota", [], {"shape": s.shape, "axis": s.ndim - 1,
                                                "dtype": np.dtype(np.int64)}))

    def pick(index: Tracer) -> Tracer:
        chosen = ufuncs.apply("equal", position, index)
        zero = fresh(current().constant(np.zeros((), s.dtype)))
        picked = fresh(current().emit("where", [chosen.node, s.node, zero.node]))
        return reduce("sum", picked, -1)

    low = pick(ufuncs.apply("floor_divide", ufuncs.apply("subtract", count, 1), 2))
    high = pick(ufuncs.apply("floor_divide", count, 2))
    odd = reshape(ufuncs.apply("equal", ufuncs.apply("remainder", count, 2), 1), outer, what)
    through = np.dtype(np.float32) if s.dtype == np.float16 else s.dtype
    mean = _middle_mean(low, high, s.dtype)
    single = fresh(ufuncs.to_node(fresh(ufuncs.to_node(high, through, what)), s.dtype, what))
    result = fresh(current().emit("where", [odd.node, single.node, mean.node]))
    none = reshape(ufuncs.apply("equal", count, 0), outer, what)
    nan = fresh(current().constant(np.full((), np.nan, s.dtype)))
    result = fresh(current().emit("where", [none.node, nan.node, result.node]))
    return finish(result, outer, keep, (), keepdims)
