"""np.apply_along_axis(func1d, axis, arr, *args, **kwargs): func1d traced on the rows of arr.

The axis is moved last and func1d is traced twice: on the first row, and on the whole stack of
rows at once. Where the two traces compute the same thing row by row (batching.py: elementwise
work, reductions and sorts along the row's own axes, `axis=-1`-style code), the stack's call is
the result, one computation for all rows. Otherwise (`np.sum(v)` reduces the whole stack, `v @ w`
multiplies it differently) func1d is traced once per row, up to MAX_ROWS rows; past that the
call is refused, saying why. func1d must be traceable: NumPy functions, operators and methods
on its argument (math.* on its values needs them, which a trace does not know).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import (AutofuseError, NumPyValueError, UnsupportedError, ValueNeeded, describe,
                      where)
from .batching import recorded, row_by_row
from .layout import as_tracer, astype, moveaxis, normalize_axis, reshape, stack, transpose
from .tracer import Tracer, fresh

MAX_ROWS = 64      # rows traced one by one where one call on the stack does not compute them


def _name(func) -> str:
    return getattr(func, "__name__", type(func).__name__)


def apply_along_axis(func1d, axis, arr, *args, **kwargs) -> Tracer:
    what = "np.apply_along_axis"
    x = as_tracer(arr, what)
    axis = normalize_axis(axis, x.ndim, what)
    rows = moveaxis(x, axis, -1)
    outer = rows.shape[:-1]
    if 0 in outer:
        raise NumPyValueError(f"{what}: Cannot apply_along_axis when any iteration dimensions "
                              f"are 0 (array {x.shape}){where()}")

    def call(value: Tracer) -> Tracer:
        return as_tracer(func1d(value, *args, **kwargs), what)
    first_row = rows[(0,) * len(outer)]
    first, row_nodes = recorded(lambda: call(first_row))
    if not outer:
        return fresh(first.node)
    result, reason = _on_the_stack(call, rows, first_row, first, row_nodes)
    if result is None:
        count = math.prod(outer)
        if count > MAX_ROWS:
            raise UnsupportedError(
                f"{what}: {_name(func1d)} does not compute a stack of rows row by row ({reason}),"
                f" and the array {x.shape} has {count} rows along axis {axis}, more than the "
                f"{MAX_ROWS} autofuse traces one by one{where()}\n  write it for the last axis "
                f"of a stack (axis=-1, keepdims=True) and call it on np.moveaxis(arr, {axis}, -1)")
        result = _unrolled(call, rows, first)
    placed = list(range(len(outer)))
    perm = placed[:axis] + list(range(len(outer), result.ndim)) + placed[axis:]
    if perm != list(range(result.ndim)):
        result = transpose(result, perm, what)
    return fresh(result.node)


def _on_the_stack(call, rows: Tracer, first_row: Tracer, first: Tracer, row_nodes):
    """(func1d's result on the whole stack, None) where it computed the rows, else (None, why)."""
    try:
        stacked, stack_nodes = recorded(lambda: call(rows))
    except ValueNeeded:
        raise
    except (AutofuseError, ValueError, TypeError, IndexError) as error:
        return None, f"on the stack it raised {type(error).__name__}"
    reason = row_by_row(row_nodes, stack_nodes, first_row.node, rows.node, rows.shape[:-1],
                        first.node, stacked.node)
    return (stacked, None) if reason is None else (None, reason)


def _unrolled(call, rows: Tracer, first: Tracer) -> Tracer:
    """func1d traced on each row, results stacked in NumPy's buffer: the first one's dtype."""
    what = "np.apply_along_axis"
    outer = rows.shape[:-1]
    results = [first]
    for index in list(np.ndindex(*outer))[1:]:
        result = call(rows[index])
        if result.shape != first.shape:
            raise NumPyValueError(f"{what}: the function gave {describe(result)} for row "
                                  f"{index} and {describe(first)} for the first row (NumPy "
                                  f"needs one shape){where()}")
        results.append(astype(result, first.dtype, copy=False))
    return reshape(stack(results, 0, what), outer + first.shape, what)


FUNCTIONS = {np.apply_along_axis: apply_along_axis}
