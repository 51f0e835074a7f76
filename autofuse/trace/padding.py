"""np.pad: constant, edge, wrap, reflect and symmetric modes, an axis at a time as NumPy pads
(later axes pad the corners), from slices, broadcasts and concatenate."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedError, where
from .context import current
from .creation import full
from .layout import as_tracer, concatenate
from .selection import take
from .tracer import Tracer, fresh
from .ufuncs import to_node

MODES = ("constant", "edge", "wrap", "reflect", "symmetric", "empty")


def pairs(value, ndim: int, what: str, as_index: bool) -> list:
    """NumPy's per-axis (before, after) pairs from a scalar, (n,), ((b, a),) or per-axis form."""
    if isinstance(value, Tracer):
        value._concrete(f"{what}: a pad width or constant")
    array = np.asarray(value)
    if as_index:
        if array.dtype.kind not in "iub" and not np.all(array == np.round(array)):
            raise TypeError(f"{what}: `pad_width` must be of integral type{where()}")
        array = np.round(array).astype(np.intp)
    if array.ndim < 3 and array.size == 1:
        array = array.ravel()
    elif array.ndim < 3 and array.size == 2 and array.shape != (2, 1):
        array = array.ravel()
    if as_index and np.any(array < 0):
        raise ValueError(f"{what}: index can't contain negative values{where()}")
    try:
        array = np.broadcast_to(array, (ndim, 2))
    except ValueError:
        raise ShapeError(f"{what}: could not broadcast {np.shape(value)} to the ({ndim}, 2) pairs "
                         f"of an array of dimension {ndim}{where()}") from None
    return array.tolist()


def pad(array, pad_width, mode="constant", **kwargs) -> Tracer:
    what = "np.pad"
    x = as_tracer(array, what)
    if callable(mode) or mode not in MODES:
        raise UnsupportedError(f"{what}: mode={mode!r} is not supported; supported modes: "
                               f"{', '.join(MODES)}{where()}")
    allowed = {"constant": {"constant_values"}, "reflect": {"reflect_type"},
               "symmetric": {"reflect_type"}}.get(mode, set())
    unknown = set(kwargs) - allowed
    if unknown:
        raise ValueError(f"{what}: unsupported keyword arguments for mode '{mode}': "
                         f"{sorted(unknown)}{where()}")
    if kwargs.get("reflect_type", "even") != "even":
        raise UnsupportedError(f"{what}: reflect_type={kwargs['reflect_type']!r} is not supported "
                               f"(only 'even'){where()}")
    widths = pairs(pad_width, x.ndim, what, as_index=True)
    if mode in ("constant", "empty"):
        values = kwargs.get("constant_values", 0)
        fills = pairs(values, x.ndim, what, False) if not isinstance(values, Tracer) else None
        for axis, (before, after) in enumerate(widths):
            fill = (values, values) if fills is None else fills[axis]
            x = _constant(x, axis, before, after, fill, what)
        return fresh(x.node) if x is array else x
    for axis, (before, after) in enumerate(widths):
        if before == after == 0:
            continue
        size = x.shape[axis]
        if size == 0:
            raise ValueError(f"{what}: can't extend empty axis {axis} using modes other than "
                             f"'constant' or 'empty' (shape {x.shape}){where()}")
        x = take(x, [_source(j - before, size, mode) for j in range(before + size + after)],
                 axis, what)
    return fresh(x.node) if x is array else x


def _constant(x: Tracer, axis: int, before: int, after: int, fill, what: str) -> Tracer:
    pieces = []
    for count, value in ((before, fill[0]), (None, None), (after, fill[1])):
        if count is None:
            pieces.append(x)
        elif count:
            shape = x.shape[:axis] + (count,) + x.shape[axis + 1:]
            node = to_node(value, x.dtype, what) if isinstance(value, Tracer) else \
                current().constant(np.asarray(value).astype(x.dtype))
            pieces.append(full(shape, fresh(node), x.dtype, what=what))
    if len(pieces) == 1:
        return x
    return concatenate(pieces, axis, what)


def _source(position: int, size: int, mode: str) -> int:
    """The index of the original element at `position` (relative to the first original one)."""
    if mode == "edge" or (mode == "reflect" and size == 1):
        return min(max(position, 0), size - 1)
    if mode == "wrap":
        return position % size
    if mode == "reflect":
        m = position % (2 * size - 2)
        return m if m < size else 2 * size - 2 - m
    m = position % (2 * size)      # symmetric
    return m if m < size else 2 * size - 1 - m
