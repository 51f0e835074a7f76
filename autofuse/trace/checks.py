"""Conditions NumPy checks on values (an index out of bounds, an integer's negative exponent):
refused at trace time where the value is known, else computed by the program as a 0-d bool that
the call reads after the kernels ran, raising NumPy's error (running.run) before any result or
argument update is seen."""
from __future__ import annotations

import numpy as np

from ..errors import NumPyValueError, OutOfBoundsError, where
from .context import current
from .tracer import Tracer


def known(value) -> np.ndarray | None:
    """The value of `value` if the trace knows it (a constant or a NumPy/Python value)."""
    if isinstance(value, Tracer):
        node = value.node
        return node.attrs["value"].array if node.op == "constant" else None
    return np.asarray(value)


def raise_if(condition: Tracer, error: type, message: str) -> None:
    """Have the call raise `error(message)` where any element of bool `condition` is True."""
    flag = condition if condition.ndim == 0 else np.any(condition)
    current().checks.append((flag.node, error, message))


def bounds_message(what: str, size: int, axis: int, shapes: str, index=None) -> str:
    first = "an index" if index is None else f"index {index}"
    return (f"{what}: {first} is out of bounds for axis {axis} with size {size} ({shapes})"
            f"{where()}")


def indices_in_bounds(index, size: int, axis: int, what: str, shapes: str) -> None:
    """NumPy's IndexError for an index outside -size .. size - 1: now for a known one, after the
    call for a computed one."""
    value = known(index)
    if value is not None:
        value = value.astype(np.int64) if value.dtype.kind == "b" else value
        outside = (value < -size) | (value >= size) if value.dtype.kind == "i" else value >= size
        if np.any(outside):
            raise OutOfBoundsError(bounds_message(what, size, axis, shapes, value[outside][0]))
        return
    if index.size == 0 or _positions_below(index.node, size):
        return
    if size == 0:
        raise OutOfBoundsError(bounds_message(what, size, axis, shapes))
    if index.dtype.kind == "b":
        if size == 1:
            raise_if(index, OutOfBoundsError, bounds_message(what, size, axis, shapes))
        return
    if index.dtype == np.uint64:
        outside = index >= size
    else:
        wide = index.astype(np.int64)
        outside = (wide >= size) | (wide < -size)
    raise_if(outside, OutOfBoundsError, bounds_message(what, size, axis, shapes))


def _positions_below(node, size: int) -> bool:
    """Whether `node` holds positions along an axis of at most `size` (an argmax or argmin,
    through reshapes and broadcasts): in range by construction, nothing to check."""
    while node.op in ("reshape", "broadcast_to"):
        node = node.inputs[0]
    if node.op not in ("argmax", "argmin"):
        return False
    extent = 1
    for axis in node.attrs["axes"]:
        extent *= node.inputs[0].shape[axis]
    return extent <= size


def nonnegative_exponent(exponent: Tracer, message: str) -> None:
    """np.power of integers: a computed exponent array checked after the call."""
    raise_if(exponent < 0, NumPyValueError, message)
