"""Windows and edits along an axis: np.lib.stride_tricks.sliding_window_view, np.insert and
np.delete, after NumPy's definitions (numpy/lib/_stride_tricks_impl.py, _function_base_impl.py).

A sliding window view is NumPy's strided view; here it is a gather whose index along each
windowed axis is the window's position plus the offset inside it (two iotas over the result's
axes, never a table), so it fuses into whatever reduces or multiplies the windows: a 3x3
convolution written with einsum over the windows, a median filter, a moving maximum. np.insert
and np.delete take indices known at trace time and become slices joined by one concatenate."""
from __future__ import annotations

import numpy as np

from ..errors import NumPyValueError, OutOfBoundsError, UnsupportedError, where
from . import layout
from .context import current
from .gather import emit
from .layout import as_tracer, normalize_axis
from .selection import take
from .tracer import Tracer, fresh


def _iota(shape: tuple, axis: int):
    return fresh(current().emit("iota", attrs={"shape": shape, "axis": axis,
                                               "dtype": np.dtype(np.int64)}))


def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    what = "np.lib.stride_tricks.sliding_window_view"
    x = as_tracer(x, what)
    if writeable:
        raise UnsupportedError(f"{what}: writeable=True (writing through the windows) is not "
                               f"supported{where()}")
    window = tuple(int(w) for w in np.atleast_1d(np.asarray(window_shape)))
    if any(w < 0 for w in window):
        raise NumPyValueError(f"{what}: `window_shape` cannot contain negative values{where()}")
    if axis is None:
        if len(window) != x.ndim:
            raise NumPyValueError(f"{what}: Since axis is `None`, must provide window_shape for "
                                  f"all dimensions of `x`; got {len(window)} window_shape "
                                  f"elements and `x.ndim` is {x.ndim}.{where()}")
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(normalize_axis(a, x.ndim, what) for a in np.atleast_1d(np.asarray(axis)))
        if len(window) != len(axes):
            raise NumPyValueError(f"{what}: Must provide matching length window_shape and axis; "
                                  f"got {len(window)} window_shape elements and {len(axes)} axes "
                                  f"elements.{where()}")
    trimmed = list(x.shape)
    for a, w in zip(axes, window):
        if trimmed[a] < w:
            raise NumPyValueError(f"{what}: window shape cannot be larger than input array shape "
                                  f"({x.shape}, window {window}){where()}")
        trimmed[a] -= w - 1
    shape = tuple(trimmed) + window
    indexed = tuple(sorted(set(axes)))
    indices = []
    for d in indexed:
        index = _iota(shape, d)
        for k, a in enumerate(axes):
            if a == d:
                index = index + _iota(shape, x.ndim + k)
        indices.append(index)
    kept = tuple(d for d in range(x.ndim) if d not in indexed)
    return emit(x, indexed, indices, kept, shape)


def _flat_or_axis(arr, axis, what):
    arr = as_tracer(arr, what)
    if axis is None:
        return layout.ravel(arr), 0
    return arr, normalize_axis(axis, arr.ndim, what)


def _static_indices(obj, length: int, what: str, allow_end: bool):
    if isinstance(obj, Tracer):
        obj = obj.python_use("the indices") if obj.sequence else obj.tolist()
    if isinstance(obj, slice):
        return list(range(length)[obj]), False
    array = np.asarray(obj)
    if array.dtype == np.bool_:
        if array.shape != (length,):
            raise NumPyValueError(f"{what}: boolean array argument obj to delete must be one "
                                  f"dimensional and match the axis length of {length}{where()}")
        return [int(i) for i in np.flatnonzero(array)], False
    if array.dtype.kind not in "iu" and array.size:
        raise OutOfBoundsError(f"{what}: index arrays must be integers (got {array.dtype}){where()}")
    values = [int(v) for v in array.reshape(-1)]
    top = length + 1 if allow_end else length
    for v in values:
        if not -length <= v < top:
            raise OutOfBoundsError(f"{what}: index {v} is out of bounds for axis with size "
                                   f"{length}{where()}")
    return [v + length if v < 0 else v for v in values], array.ndim == 0


def delete(arr, obj, axis=None):
    what = "np.delete"
    arr, axis = _flat_or_axis(arr, axis, what)
    length = arr.shape[axis]
    gone, _ = _static_indices(obj, length, what, allow_end=False)
    kept = [i for i in range(length) if i not in set(gone)]
    return take(arr, kept, axis, what)


def insert(arr, obj, values, axis=None):
    what = "np.insert"
    arr, axis = _flat_or_axis(arr, axis, what)
    length = arr.shape[axis]
    places, scalar = _static_indices(obj, length, what, allow_end=True)
    values = as_tracer(values, what).astype(arr.dtype)
    if values.ndim < arr.ndim:
        values = layout.reshape(values, (1,) * (arr.ndim - values.ndim) + values.shape, what)
    if scalar:      # NumPy inserts all of `values` there, its first axis moved to `axis`
        values = layout.moveaxis(values, 0, axis)
        count = values.shape[axis]
    else:
        count = len(places)
    slot = list(arr.shape)
    slot[axis] = count
    try:
        values = layout.broadcast_to(values, tuple(slot), what)
    except Exception:
        raise NumPyValueError(f"{what}: could not broadcast values {values.shape} into the "
                              f"inserted {tuple(slot)}{where()}") from None
    joined = layout.concatenate([arr, values], axis, what)
    if scalar:
        order = list(range(places[0])) + [length + k for k in range(count)] + \
            list(range(places[0], length))
        return take(joined, order, axis, what)
    # NumPy: the k-th inserted value (stable by index) lands at its index + k
    ranked = sorted(range(count), key=lambda k: places[k])
    final = {places[k] + rank: length + k for rank, k in enumerate(ranked)}
    order, old = [], iter(range(length))
    for position in range(length + count):
        order.append(final[position] if position in final else next(old))
    return take(joined, order, axis, what)


FUNCTIONS = {np.lib.stride_tricks.sliding_window_view: sliding_window_view,
             np.insert: insert, np.delete: delete}
