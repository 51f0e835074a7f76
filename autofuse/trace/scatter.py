"""Assignment through an integer array along the first axis: `x[idx] = v`, `x[idx] += v` (NumPy's
meaning: the last write to a repeated index wins, nothing accumulates), traced as a comparison of
every position with every index (len(x) times len(idx) work); and `np.add.at(x, idx, v)` (which
accumulates), one scatter_add op: len(idx) additions, in a scatter kernel with the producers of
the indices and values (fusion/scatter.py)."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedError, describe, where
from . import checks
from .layout import as_tracer, broadcast_to, reshape
from .context import current
from .tracer import Tracer, fresh


def _single_index(key, what: str):
    entries = key if isinstance(key, tuple) else (key,)
    if len(entries) != 1 or isinstance(entries[0], slice) or entries[0] is None:
        raise UnsupportedError(f"{what}: advanced indexing assignment is supported with one integer "
                               f"array along the first axis (x[idx] = v); got the index {key!r}"
                               f"{where()}")
    index = entries[0]
    if not isinstance(index, Tracer):
        index = np.asarray(index)
        index = index.astype(np.int64) if index.size == 0 else index
    if index.dtype.kind not in "iu":
        raise UnsupportedError(f"{what}: advanced indexing assignment needs integer indices, got "
                               f"{index.dtype}{where()}")
    return index


def _match(x: Tracer, index, what: str):
    """(positions x indices bool match of shape (n, K), the flat indices, K)."""
    size = x.shape[0]
    checks.indices_in_bounds(index, size, 0, what, f"array {x.shape}, indices {np.shape(index)}")
    flat = reshape(as_tracer(index, what).astype(np.int64), (-1,), what)
    wrapped = np.where(flat < 0, flat + size, flat)
    positions = fresh(current().emit("iota", attrs={"shape": (size, 1), "axis": 0,
                                                    "dtype": np.dtype(np.int64)}))
    return positions == reshape(wrapped, (1, flat.size), what), flat.size


def _values(x: Tracer, index, value, count: int, what: str) -> Tracer:
    """`value` broadcast to the indexed rows (index shape + x's other axes), one row an index."""
    value = as_tracer(value, what)
    target = tuple(np.shape(index)) + x.shape[1:]
    try:
        value = broadcast_to(value, target, what)
    except ShapeError:
        raise ShapeError(f"{what}: shape mismatch: value array of shape {value.shape} could not be "
                         f"broadcast to indexing result of shape {target}{where()}") from None
    return reshape(value.astype(x.dtype), (count,) + x.shape[1:], what)


def setitem(x: Tracer, key, value) -> None:
    what = f"assignment through an integer array into {describe(x)}"
    if x.ndim == 0:
        raise UnsupportedError(f"{what}: indexing a 0-d array with an array{where()}")
    index = _single_index(key, what)
    match, count = _match(x, index, what)
    if count == 0:
        return
    values = _values(x, index, value, count, what)
    last = (count - 1) - np.argmax(match[:, ::-1], axis=1)
    hit = reshape(np.any(match, axis=1), (x.shape[0],) + (1,) * (x.ndim - 1), what)
    x.assign(np.where(hit, np.take(values, last, axis=0), x).node, what)


def add_at(x, key, value) -> None:
    """np.add.at(x, idx, v): every v added at its index, repeated indices accumulating."""
    what = "np.add.at"
    if not isinstance(x, Tracer) or x.weak is not None or x.scalar or x.ndim == 0:
        raise UnsupportedError(f"{what}: the first operand must be an array of the traced function"
                               f"{where()}")
    index = _single_index(key, what)
    checks.indices_in_bounds(index, x.shape[0], 0, what, f"array {x.shape}, indices "
                                                         f"{np.shape(index)}")
    flat = reshape(as_tracer(index, what).astype(np.int64), (-1,), what)
    if flat.size == 0:
        return
    values = _values(x, index, value, flat.size, what)
    x.assign(scatter_add(x, flat, values).node, what)


def scatter_add(base: Tracer, indices: Tracer, values: Tracer) -> Tracer:
    """`base` with each row of `values` (len(indices), *base.shape[1:]) added at its int64 index
    along the first axis: the scatter_add op. An index outside the base after wrapping a
    negative one adds nothing; the caller checks indices where NumPy would refuse them."""
    return fresh(current().emit("scatter_add", [base.node, indices.node, values.node]))


def put_along_axis(arr, indices, values, axis) -> None:
    """np.put_along_axis: `values` written into `arr` at `indices` along `axis` (the last write
    to a repeated index wins), each line along the axis compared with its indices."""
    from .gather import take_along_axis
    from .layout import moveaxis, normalize_axis
    what = "np.put_along_axis"
    if not isinstance(arr, Tracer) or arr.weak is not None or arr.scalar:
        raise UnsupportedError(f"{what}: the array must be an array of the traced function{where()}")
    if axis is None:
        raise UnsupportedError(f"{what}: axis=None is not supported (pass the flattened array)"
                               f"{where()}")
    if np.ndim(indices) != arr.ndim:
        raise ShapeError(f"{what}: `indices` and `arr` must have the same number of dimensions"
                         f"{where()}")
    axis = normalize_axis(axis, arr.ndim, what)
    size = arr.shape[axis]
    checks.indices_in_bounds(indices, size, axis, what, f"array {arr.shape}, indices "
                             f"{np.shape(indices)}")
    index = moveaxis(as_tracer(indices, what).astype(np.int64), axis, -1)
    count = index.shape[-1]
    lines = moveaxis(arr, axis, -1)
    try:
        outer = np.broadcast_shapes(lines.shape[:-1], index.shape[:-1])
    except ValueError:
        outer = None
    if outer != lines.shape[:-1]:
        raise ShapeError(f"{what}: indices {np.shape(indices)} do not broadcast against the array "
                         f"{arr.shape}{where()}")
    if count == 0 or arr.size == 0:
        return
    index = broadcast_to(index, outer + (count,), what)
    value = moveaxis(broadcast_to(as_tracer(values, what), np.shape(indices), what), axis, -1)
    value = broadcast_to(value, outer + (count,), what).astype(arr.dtype)
    wrapped = np.where(index < 0, index + size, index)
    positions = fresh(current().emit("iota", attrs={"shape": (size, 1), "axis": 0,
                                                    "dtype": np.dtype(np.int64)}))
    match = positions == wrapped[..., None, :]
    last = (count - 1) - np.argmax(match[..., ::-1], axis=-1)
    new = take_along_axis(value, last, axis=-1)
    result = np.where(np.any(match, axis=-1), new, lines)
    arr.assign(moveaxis(result, -1, axis).node, what)
