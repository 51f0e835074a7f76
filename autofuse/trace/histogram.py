"""np.bincount and np.histogram as one scatter-add each (trace/scatter.py): a bin index computed
per value, fused with the addition into one scatter kernel.

Both results have shapes known at trace time or not at all: np.bincount's length is
max(x) + 1, so it is traced with `minlength=` as the length and the call checks that no value
reaches it; np.histogram's is its bin count. Histogram bins follow NumPy's rule exactly: the
edges are NumPy's (np.linspace's arithmetic, from the data's min and max at run time where no
range is given), a value's bin is guessed from its offset and moved by one where the edges say
so (as NumPy does), the last bin is closed, and values outside the range (or NaN) add nothing.
"""
from __future__ import annotations

import numpy as np

from ..errors import DTypeError, NumPyValueError, ShapeError, UnsupportedError, where
from . import checks
from .gather import emit
from .layout import as_tracer, ravel
from .scatter import scatter_add
from .tracer import Tracer, fresh
from .context import current


def _static_int(value, what: str) -> int:
    """A Python int the trace needs by value (a scalar argument is specialized on it)."""
    if isinstance(value, Tracer):
        value._concrete(what)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {type(value).__name__}{where()}")
    return int(value)


def _zeros(length: int, dtype) -> Tracer:
    """A fill of zeros (the scatter kernel writes it: fusion/scatter.py)."""
    ctx = current()
    return fresh(ctx.emit("broadcast_to", [ctx.constant(np.zeros((), dtype))],
                          {"shape": (length,)}))


def _indices(x: Tracer, what: str) -> Tracer:
    """x as bin indices: NumPy casts them to intp by the 'safe' rule."""
    if x.ndim != 1:
        depth = "too small" if x.ndim == 0 else "too deep"
        raise ShapeError(f"{what}: object {depth} for desired array (x is {x.dtype}{list(x.shape)},"
                         f" it must be 1-d){where()}")
    if x.dtype.kind not in "biu" or x.dtype == np.uint64:
        raise DTypeError(f"{what}: Cannot cast array data from dtype('{x.dtype}') to "
                         f"dtype('int64') according to the rule 'safe'{where()}")
    return x.astype(np.int64)


def _weights(weights, shape: tuple, what: str) -> Tracer:
    """Weights as the float64 values NumPy adds (it converts them to double)."""
    weights = as_tracer(weights, what)
    if weights.shape != shape:
        raise ShapeError(f"{what}: the weights {list(weights.shape)} and the values "
                         f"{list(shape)} do not have the same shape{where()}")
    if weights.dtype.kind == "c":
        raise UnsupportedError(f"{what}: complex weights are not supported{where()}")
    return weights.astype(np.float64)


def bincount(x, weights=None, minlength=0):
    """np.bincount(x, weights, minlength) with the length minlength (or x's values, where they
    are known at trace time)."""
    what = "np.bincount"
    x = _indices(as_tracer(x, what), what)
    minlength = 0 if minlength is None else _static_int(minlength, f"{what}: minlength")
    if minlength < 0:
        raise NumPyValueError(f"{what}: 'minlength' must not be negative{where()}")
    known = checks.known(x)
    if known is not None:
        if np.any(known < 0):
            raise NumPyValueError(f"{what}: 'list' argument must have no negative elements"
                                  f"{where()}")
        length = max(minlength, int(known.max()) + 1 if known.size else 0)
    elif x.size == 0:
        length = minlength
    elif minlength == 0:
        raise UnsupportedError(f"{what}: the result's length is max(x) + 1, which depends on the "
                               f"values; pass minlength= (at least max(x) + 1) to trace it with "
                               f"that length{where()}")
    else:
        length = minlength
        checks.raise_if(x < 0, NumPyValueError,
                        f"{what}: 'list' argument must have no negative elements{where()}")
        checks.raise_if(x >= length, UnsupportedError,
                        f"{what}: a value is at least minlength={length}, so the result would be "
                        f"longer than the {length} elements it was traced with; pass a larger "
                        f"minlength{where()}")
    if weights is None:
        values, dtype = np.ones_like(x), np.dtype(np.int64)
    else:
        values, dtype = _weights(weights, x.shape, what), np.dtype(np.float64)
    base = _zeros(length, dtype)
    if length == 0 or x.size == 0:
        return base
    return scatter_add(base, x, values)


def _outer_edges(a: Tracer, range_, what: str):
    """(first, last) edges, as NumPy's _get_outer_edges: Python floats from `range_`, the data's
    min and max (0-d traced values, checked finite when the call runs) otherwise."""
    if range_ is not None:
        first, last = (_known_number(v, what) + 0.0 for v in range_)
        if first > last:
            raise NumPyValueError(f"{what}: max must be larger than min in range parameter."
                                  f"{where()}")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise NumPyValueError(f"{what}: supplied range of [{first}, {last}] is not finite"
                                  f"{where()}")
        if first == last:
            first, last = first - 0.5, last + 0.5
        return first, last
    first, last = a.min(), a.max()
    if a.dtype.kind == "f":
        checks.raise_if(~(np.isfinite(first) & np.isfinite(last)), NumPyValueError,
                        f"{what}: autodetected range of the values is not finite (they hold NaN "
                        f"or infinity){where()}")
    same = first == last
    return np.where(same, first - 0.5, first), np.where(same, last + 0.5, last)


def _known_number(value, what: str):
    if isinstance(value, Tracer):
        value._concrete(f"{what}: range")
    return value


def _linspace(first: Tracer, last: Tracer, count: int, dtype) -> Tracer:
    """np.linspace(first, last, count, dtype=dtype) of traced 0-d edges, with NumPy's arithmetic:
    positions times the step (or divided, then times the width, where the step is 0), plus the
    start, the last position the stop itself."""
    compute = np.result_type(first.dtype, last.dtype, np.float16)
    start, stop = first.astype(compute), last.astype(compute)
    delta = stop - start
    div = count - 1
    step = delta / div
    positions = fresh(current().emit("iota", attrs={"shape": (count,), "axis": 0,
                                                    "dtype": np.dtype(compute)}))
    y = np.where(step == 0, positions / div * delta, positions * step) + start
    last_one = fresh(current().emit("iota", attrs={"shape": (count,), "axis": 0,
                                                   "dtype": np.dtype(np.int64)})) == div
    return np.where(last_one, stop, y).astype(dtype)


def _uniform_bins(a: Tracer, count: int, range_, what: str):
    """(bin index per value, or `count` where it falls outside; the edges) for `count` equal
    bins."""
    if a.size == 0 and range_ is None:
        range_ = (0, 1)
    first, last = _outer_edges(a, range_, what)
    static = not isinstance(first, Tracer)
    bin_dtype = np.result_type(first, last, a.dtype) if static else \
        np.result_type(a.dtype, first.dtype)
    if bin_dtype.kind in "iub":
        bin_dtype = np.result_type(bin_dtype, float)
    if static:
        edges = as_tracer(np.histogram_bin_edges(np.empty(0, a.dtype), bins=count, range=range_),
                          what)
        first_b, last_b = bin_dtype.type(first), bin_dtype.type(last)
    else:
        edges = _linspace(first, last, count + 1, bin_dtype)
        first_b, last_b = first.astype(bin_dtype), last.astype(bin_dtype)
    keep = (a >= first) & (a <= last)
    values = a.astype(bin_dtype)
    guess = (values - first_b) / (last_b - first_b) * count
    index = np.minimum(np.where(keep, guess, 0).astype(np.int64), count - 1)
    index = index - (values < _at(edges, index)).astype(np.int64)
    above = (values >= _at(edges, index + 1)) & (index != count - 1)
    index = index + above.astype(np.int64)
    return np.where(keep, index, count), edges


def _at(edges: Tracer, index: Tracer) -> Tracer:
    return emit(edges, (0,), [index], (), index.shape)


def _array_bins(a: Tracer, bins, what: str):
    """(bin index per value, or the bin count where it falls outside; the edges) for edges given
    as an increasing 1-d array: the count of edges at or under a value, less one, the last edge
    closing the last bin."""
    from .searching import searchsorted
    edges = as_tracer(bins, what)
    if edges.ndim != 1:
        raise NumPyValueError(f"{what}: `bins` must be 1d, when an array{where()}")
    known = checks.known(edges)
    if known is not None:
        if np.any(known[:-1] > known[1:]):
            raise NumPyValueError(f"{what}: `bins` must increase monotonically, when an array"
                                  f"{where()}")
    elif edges.shape[0] > 1:
        checks.raise_if(edges[:-1] > edges[1:], NumPyValueError,
                        f"{what}: `bins` must increase monotonically, when an array{where()}")
    count = edges.shape[0] - 1
    index = searchsorted(edges, a, side="right") - 1
    keep = (a >= edges[0]) & (a <= edges[-1])
    return np.where(keep, np.minimum(index, count - 1), count), edges


def histogram(a, bins=10, range=None, density=None, weights=None):
    """np.histogram(a, bins, range, density, weights): (counts, edges), the counts int64 (the
    weights' dtype where weights are given)."""
    what = "np.histogram"
    a = as_tracer(a, what)
    if weights is not None and np.shape(weights) != a.shape:
        raise NumPyValueError(f"{what}: weights should have the same shape as a (weights "
                              f"{list(np.shape(weights))}, a {list(a.shape)}){where()}")
    a = ravel(a)
    if a.dtype.kind not in "iuf":
        raise UnsupportedError(f"{what} of {a.dtype} values is not supported{where()}")
    if isinstance(bins, str):
        raise UnsupportedError(f"{what}: bins={bins!r} chooses the bin count from the values; "
                               f"pass an int or an array of edges{where()}")
    if np.ndim(bins) == 0:
        count = _static_int(bins, f"{what}: bins")
        if count < 1:
            raise NumPyValueError(f"{what}: `bins` must be positive, when an integer{where()}")
        index, edges = _uniform_bins(a, count, range, what)
    else:
        if range is not None:
            range = None            # NumPy ignores range where the edges are given
        index, edges = _array_bins(a, bins, what)
        count = edges.shape[0] - 1
    if weights is None:
        values, dtype = np.ones_like(index), np.dtype(np.int64)
    else:
        weights = ravel(as_tracer(weights, what))
        dtype = weights.dtype
        values = _weights(weights, a.shape, what)
    if count <= 0 or a.size == 0:
        counts = _zeros(max(count, 0), dtype)
    else:
        total = scatter_add(_zeros(count, values.dtype), index, values)
        counts = total if total.dtype == dtype else total.astype(dtype)
    if density:
        widths = np.diff(edges).astype(np.float64)
        counts = counts / widths / counts.sum()
    return counts, edges


FUNCTIONS = {np.bincount: bincount, np.histogram: histogram}
