"""Functions that only arrange arrays, written with the layout ops (views, concatenate), after
NumPy's own definitions in numpy/lib/_shape_base_impl.py, _twodim_base_impl.py,
_function_base_impl.py and numpy/_core/shape_base.py: np.atleast_1d/2d/3d, np.fliplr/np.flipud,
np.column_stack, np.dstack, np.append, np.hsplit/np.vsplit/np.dsplit, np.broadcast_arrays and
np.rollaxis."""
from __future__ import annotations

import numpy as np

from ..errors import NumPyValueError, ShapeError, where
from . import layout
from .compositions import split
from .layout import as_tracer, normalize_axis, reshape


def _each(arrays, shape_of, what):
    results = tuple(reshape(a, shape_of(a), what) if a.shape != shape_of(a) else a
                    for a in (as_tracer(x, what) for x in arrays))
    return results[0] if len(results) == 1 else results


def atleast_1d(*arrays):
    return _each(arrays, lambda a: a.shape or (1,), "np.atleast_1d")


def atleast_2d(*arrays):
    return _each(arrays, lambda a: ((1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a.shape,
                 "np.atleast_2d")


def _three(a) -> tuple:
    """atleast_3d's shape: () -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    return {0: (1, 1, 1), 1: (1,) + a.shape + (1,), 2: a.shape + (1,)}.get(a.ndim, a.shape)


def atleast_3d(*arrays):
    return _each(arrays, _three, "np.atleast_3d")


def fliplr(m):
    m = as_tracer(m, "np.fliplr")
    if m.ndim < 2:
        raise NumPyValueError(f"np.fliplr: Input must be >= 2-d (got {m.shape}){where()}")
    return m[:, ::-1]


def flipud(m):
    m = as_tracer(m, "np.flipud")
    if m.ndim < 1:
        raise NumPyValueError(f"np.flipud: Input must be >= 1-d (got a 0-d array){where()}")
    return m[::-1, ...]


def column_stack(tup):
    what = "np.column_stack"
    columns = []
    for x in tup:
        a = as_tracer(x, what)
        columns.append(reshape(a, (a.size, 1), what) if a.ndim < 2 else a)
    return layout.concatenate(columns, 1, what)


def dstack(tup):
    what = "np.dstack"
    arrays = [as_tracer(x, what) for x in tup]
    return layout.concatenate([reshape(a, _three(a), what) for a in arrays], 2, what)


def append(arr, values, axis=None):
    what = "np.append"
    arr, values = as_tracer(arr, what), as_tracer(values, what)
    if axis is None:
        return layout.concatenate([layout.ravel(arr), layout.ravel(values)], 0, what)
    if arr.ndim != values.ndim:
        raise NumPyValueError(f"{what}: all the input arrays must have the same number of "
                              f"dimensions, but arr has {arr.ndim} and values {values.ndim} "
                              f"({arr.shape}, {values.shape}){where()}")
    return layout.concatenate([arr, values], axis, what)


def _split_along(ary, indices_or_sections, axis, least, what):
    ary = as_tracer(ary, what)
    if ary.ndim < least:
        raise NumPyValueError(f"{what} only works on arrays of {least} or more dimensions "
                              f"(got {ary.shape}){where()}")
    return split(ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    ary = as_tracer(ary, "np.hsplit")
    return _split_along(ary, indices_or_sections, 1 if ary.ndim > 1 else 0, 1, "np.hsplit")


def vsplit(ary, indices_or_sections):
    return _split_along(ary, indices_or_sections, 0, 2, "np.vsplit")


def dsplit(ary, indices_or_sections):
    return _split_along(ary, indices_or_sections, 2, 3, "np.dsplit")


def broadcast_arrays(*args, subok=False):
    what = "np.broadcast_arrays"
    arrays = [as_tracer(x, what) for x in args]
    try:
        shape = tuple(np.broadcast_shapes(*(a.shape for a in arrays)))
    except ValueError:
        shapes = " ".join(str(a.shape) for a in arrays)
        raise ShapeError(f"{what}: shape mismatch: objects cannot be broadcast to a single shape "
                         f"({shapes}){where()}") from None
    return tuple(a if a.shape == shape else layout.broadcast_to(a, shape, what) for a in arrays)


def rollaxis(a, axis, start=0):
    what = "np.rollaxis"
    a = as_tracer(a, what)
    n = a.ndim
    axis = normalize_axis(axis, n, what)
    start = start + n if start < 0 else start
    if not 0 <= start < n + 1:
        raise ShapeError(f"{what}: 'start' arg requires {-n} <= start < {n + 1}, but {start} was "
                        f"passed in{where()}")
    start = start - 1 if axis < start else start
    order = [d for d in range(n) if d != axis]
    order.insert(start, axis)
    return layout.transpose(a, tuple(order), what)


FUNCTIONS = {
    np.atleast_1d: atleast_1d, np.atleast_2d: atleast_2d, np.atleast_3d: atleast_3d,
    np.fliplr: fliplr, np.flipud: flipud, np.column_stack: column_stack, np.dstack: dstack,
    np.append: append, np.hsplit: hsplit, np.vsplit: vsplit, np.dsplit: dsplit,
    np.broadcast_arrays: broadcast_arrays, np.rollaxis: rollaxis,
}
