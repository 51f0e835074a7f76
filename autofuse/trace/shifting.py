"""np.roll and np.diff: slices of an array joined or subtracted along an axis, as NumPy composes them."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, where
from .indexing import getitem
from .layout import as_tracer, broadcast_to, concatenate, normalize_axis, ravel, reshape
from .tracer import Tracer, fresh
from . import ufuncs


def _python_ints(value, what: str):
    """Shifts, axes and counts as Python ints (a traced Python int is specialized by value)."""
    if isinstance(value, Tracer):
        value._concrete(what)
    return value


def roll(a, shift, axis=None) -> Tracer:
    what = "np.roll"
    a = as_tracer(a, what)
    shift = _python_ints(shift, f"{what}: the shift")
    if isinstance(shift, (tuple, list)):
        shift = [int(_python_ints(s, f"{what}: the shift")) for s in shift]
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape, what)
    axis = _python_ints(axis, f"{what}: the axis")
    try:
        pairs = np.broadcast(np.asarray(shift), np.asarray(axis))
    except ValueError:
        raise ShapeError(f"{what}: 'shift' and 'axis' should be scalars or 1D sequences (got "
                         f"{shift!r} and {axis!r}){where()}") from None
    if pairs.ndim > 1:
        raise ShapeError(f"{what}: 'shift' and 'axis' should be scalars or 1D sequences{where()}")
    shifts = {}
    for step, ax in pairs:
        ax = normalize_axis(int(ax), a.ndim, what)
        shifts[ax] = shifts.get(ax, 0) + int(step)
    result = a
    for ax, step in shifts.items():
        size = a.shape[ax]
        offset = step % size if size else 0
        if offset == 0:
            continue
        head = [slice(None)] * a.ndim
        tail = [slice(None)] * a.ndim
        head[ax], tail[ax] = slice(size - offset, None), slice(None, size - offset)
        result = concatenate([getitem(result, tuple(head)), getitem(result, tuple(tail))], ax, what)
    return fresh(result.node) if result is a else result


def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue) -> Tracer:
    what = "np.diff"
    n = int(_python_ints(n, f"{what}: the order n"))
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"{what}: order must be non-negative but got {n}{where()}")
    a = as_tracer(a, what)
    if a.ndim == 0:
        raise ValueError(f"{what} requires input that is at least one dimensional{where()}")
    axis = normalize_axis(_python_ints(axis, f"{what}: the axis"), a.ndim, what)
    combined = []
    for value, at_end in ((prepend, False), (append, True)):
        if value is np._NoValue:
            continue
        value = as_tracer(value, what)
        if value.ndim == 0:
            shape = a.shape[:axis] + (1,) + a.shape[axis + 1:]
            value = broadcast_to(value, shape, what)
        combined.append((at_end, value))
    if combined:
        parts = [v for end, v in combined if not end] + [a] + [v for end, v in combined if end]
        a = concatenate(parts, axis, what)
    op = "not_equal" if a.dtype == np.dtype(bool) else "subtract"
    later = [slice(None)] * a.ndim
    earlier = [slice(None)] * a.ndim
    later[axis], earlier[axis] = slice(1, None), slice(None, -1)
    for _ in range(n):
        a = ufuncs.apply(op, getitem(a, tuple(later)), getitem(a, tuple(earlier)))
    return a
