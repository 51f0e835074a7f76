"""np.lexsort: a stable sort by several keys, the last key primary, built from stable argsorts.

The kernels' argsort is stable (ties keep their order), so sorting by the least significant key
first and then, key by key, stably re-sorting the current order by the next key leaves every
tie of the later keys ordered by the earlier ones: the least-significant-digit order of a radix
sort. Each step gathers the next key in the current order, argsorts it, and gathers the order by
that argsort: k keys cost k argsorts (NaN sorts last, as NumPy's lexsort puts it).
"""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentError, ShapeError, where
from .context import current
from .gather import emit as gather
from .layout import as_tracer, normalize_axis, transpose
from .sorting import argsort
from .tracer import Tracer, fresh


def _keys(keys, what: str) -> list[Tracer]:
    """The keys as tracers: a sequence's items, or an array's rows (NumPy iterates its axis 0)."""
    if isinstance(keys, (list, tuple)):
        items = list(keys)
    else:
        array = keys if isinstance(keys, Tracer) else np.asarray(keys)
        if array.ndim == 0:
            raise ArgumentError(f"{what}: keys must be a sequence of arrays or an array of at "
                                f"least 1 dimension (got a 0-d value){where()}")
        items = [array[i] for i in range(array.shape[0])]
    if not items:
        raise ArgumentError(f"{what}: need sequence of keys with len > 0 in lexsort{where()}")
    tracers = [as_tracer(item, what) for item in items]
    shapes = {t.shape for t in tracers}
    if len(shapes) > 1:
        raise ShapeError(f"{what}: all keys need to be the same shape (got "
                         f"{', '.join(str(t.shape) for t in tracers)}){where()}")
    return tracers


def _along_last(data: Tracer, order: Tracer) -> Tracer:
    """data[..., order] row by row (take_along_axis on the last axis)."""
    kept = tuple(range(data.ndim - 1))
    # NOTE: `order` is a permutation of each row's positions (argsorts and gathers of them), so
    # in range by construction: no bounds check.
    return gather(data, (data.ndim - 1,), [order], kept, data.shape)


def lexsort(keys, axis=-1) -> Tracer:
    what = "np.lexsort"
    tracers = _keys(keys, what)
    if axis is None:
        raise ArgumentError(f"{what}: axis must be an integer (NumPy refuses None){where()}")
    ndim = tracers[0].ndim
    if ndim == 0:       # NumPy sorts keys of one element each: the position 0
        return fresh(current().constant(np.zeros((), np.intp)), scalar=True)
    axis = normalize_axis(axis, ndim, what)
    perm = [d for d in range(ndim) if d != axis] + [axis]
    if axis != ndim - 1:
        tracers = [transpose(t, perm, what) for t in tracers]
    order = argsort(tracers[0])
    for key in tracers[1:]:
        order = _along_last(order, argsort(_along_last(key, order)))
    if axis != ndim - 1:
        order = transpose(order, [int(i) for i in np.argsort(perm)], what)
    return order


FUNCTIONS = {np.lexsort: lexsort}
