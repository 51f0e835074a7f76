"""np.tril and np.triu: the array where NumPy's np.tri mask (built from iota) keeps it, else 0."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, where
from .context import current
from .layout import as_tracer
from .tracer import Tracer, fresh


def tri_mask(rows: int, cols: int, k: int):
    """The node of np.tri(rows, cols, k, dtype=bool): j <= i + k."""
    ctx = current()
    shape = (rows, cols)
    i = ctx.emit("iota", attrs={"shape": shape, "axis": 0, "dtype": np.dtype(np.int64)})
    j = ctx.emit("iota", attrs={"shape": shape, "axis": 1, "dtype": np.dtype(np.int64)})
    if k:
        i = ctx.emit("add", [i, ctx.constant(k, np.int64)])
    return ctx.emit("greater_equal", [i, j])


def _triangle(m, k, lower: bool, what: str) -> Tracer:
    m = as_tracer(m, what)
    if isinstance(k, Tracer):
        k._concrete(f"{what}: the diagonal offset k")
    if m.ndim == 0:
        raise ShapeError(f"{what}: the input must be at least 1-d (got a 0-d array){where()}")
    rows, cols = m.shape[-2:] if m.ndim >= 2 else (m.shape[0], m.shape[0])
    ctx = current()
    mask = tri_mask(rows, cols, int(k) if lower else int(k) - 1)
    zero = ctx.constant(np.zeros((), m.dtype))
    shape = np.broadcast_shapes(m.shape, (rows, cols))
    node = m.node
    if node.shape != shape:
        node = ctx.emit("broadcast_to", [node], {"shape": shape})
    mask = ctx.emit("broadcast_to", [mask], {"shape": shape})
    inputs = [mask, node, zero] if lower else [mask, zero, node]
    return fresh(ctx.emit("where", inputs))


def tril(m, k=0) -> Tracer:
    return _triangle(m, k, True, "np.tril")


def triu(m, k=0) -> Tracer:
    return _triangle(m, k, False, "np.triu")
