"""np.tensordot, np.vecdot and np.matrix_transpose as NumPy computes them, built from the
matmul, reduction and layout ops the tracer already has."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, where
from .layout import as_tracer, normalize_axis, reshape, swapaxes, transpose
from .matmul import matmul
from .reductions import reduce
from .ufuncs import apply


def matrix_transpose(x):
    x = as_tracer(x, "np.matrix_transpose")
    if x.ndim < 2:
        raise ShapeError(f"np.matrix_transpose: input must be at least 2-dimensional, got shape "
                         f"{x.shape}{where()}")
    return swapaxes(x, -1, -2)


def tensordot(a, b, axes=2):
    """Sum over the last `axes` axes of a and the first of b (or the two lists given): the kept
    axes of a, then of b, by one matmul of the two operands laid out as matrices."""
    what = "np.tensordot"
    a, b = as_tracer(a, what), as_tracer(b, what)
    if not isinstance(axes, (tuple, list)):
        count = int(axes)          # (a traced Python int is specialized: its value decides shapes)
        if count < 0 or count > min(a.ndim, b.ndim):
            raise ShapeError(f"{what}: axes={count} does not fit shapes {a.shape} and {b.shape}"
                             f"{where()}")
        axes_a, axes_b = list(range(a.ndim - count, a.ndim)), list(range(count))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
        if len(axes_a) != len(axes_b):
            raise ShapeError(f"{what}: shape-mismatch for sum (axes {axes_a} and {axes_b}){where()}")
        axes_a = [normalize_axis(x, a.ndim, what) for x in axes_a]
        axes_b = [normalize_axis(x, b.ndim, what) for x in axes_b]
    for x, y in zip(axes_a, axes_b):
        if a.shape[x] != b.shape[y]:
            raise ShapeError(f"{what}: shape-mismatch for sum: axis {x} of {a.shape} against axis "
                             f"{y} of {b.shape}{where()}")
    kept_a = [d for d in range(a.ndim) if d not in axes_a]
    kept_b = [d for d in range(b.ndim) if d not in axes_b]
    inner = int(np.prod([a.shape[d] for d in axes_a], dtype=np.int64))
    rows = int(np.prod([a.shape[d] for d in kept_a], dtype=np.int64))
    cols = int(np.prod([b.shape[d] for d in kept_b], dtype=np.int64))
    left = reshape(transpose(a, kept_a + axes_a, what), (rows, inner), what)
    right = reshape(transpose(b, axes_b + kept_b, what), (inner, cols), what)
    shape = tuple(a.shape[d] for d in kept_a) + tuple(b.shape[d] for d in kept_b)
    return reshape(matmul(left, right, what), shape, what)


def vecdot(x1, x2, /, *, axis=-1):
    """The dot product of vectors along `axis` of the broadcast operands, in their promoted
    dtype (NumPy's vecdot: int8 stays int8, bool is any of the ands)."""
    what = "np.vecdot"
    x1, x2 = as_tracer(x1, what), as_tracer(x2, what)
    if x1.dtype.kind == "c":            # NumPy conjugates the first operand
        x1 = apply("conjugate", x1)
    product = apply("multiply", x1, x2)
    axis = normalize_axis(axis, product.ndim, what)
    for x in (x1, x2):
        if x.ndim and x.shape[axis - product.ndim] != product.shape[axis]:
            raise ShapeError(f"{what}: the vector axis of {x1.shape} and {x2.shape} differ"
                             f"{where()}")
    if product.dtype == np.dtype(bool):
        return reduce("any", product, axis=axis)
    return reduce("sum", product, axis=axis, dtype=product.dtype)
