"""np.linalg.norm: vector norms of every order and the matrix norms that need no SVD, composed as
NumPy's linalg.norm composes them (abs, powers, sums, max/min, dot)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedError, where
from .layout import as_tracer, astype, normalize_axis, ravel, reshape
from .creation import full
from .matmul import matmul
from .reductions import reduce
from .tracer import Tracer
from . import ufuncs


def norm(x, ord=None, axis=None, keepdims=False) -> Tracer:
    what = "np.linalg.norm"
    x = as_tracer(x, what)
    for value in (ord, axis, keepdims):
        if isinstance(value, Tracer):
            value._concrete(f"{what}: ord, axis and keepdims")
    if x.dtype.kind == "c":         # every norm here is one of the magnitudes (NumPy's abs)
        x = ufuncs.apply("absolute", x)
    elif x.dtype.kind not in "f":
        x = astype(x, np.float64)
    if axis is None:
        if ord is None or (ord in ("f", "fro") and x.ndim == 2) or (ord == 2 and x.ndim == 1):
            flat = ravel(x)
            result = ufuncs.apply("sqrt", matmul(flat, flat, what))
            if keepdims:
                result = reshape(result, (1,) * x.ndim, what)
            return result
        axis = tuple(range(x.ndim))
    elif not isinstance(axis, tuple):
        try:
            axis = (int(axis),)
        except TypeError:
            raise TypeError(f"{what}: 'axis' must be None, an integer or a tuple of integers"
                            f"{where()}") from None
    if len(axis) == 1:
        return _vector(x, ord, axis, keepdims, what)
    if len(axis) == 2:
        return _matrix(x, ord, axis, keepdims, what)
    raise ValueError(f"{what}: improper number of dimensions to norm (axis {axis}){where()}")


def _vector(x, ord, axis, keepdims, what):
    sum_ = lambda v: reduce("sum", v, axis=axis, keepdims=keepdims, dtype=v.dtype)
    if ord == math.inf:
        return reduce("max", ufuncs.apply("absolute", x), axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return reduce("min", ufuncs.apply("absolute", x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return sum_(astype(ufuncs.apply("not_equal", x, 0), x.dtype))
    if ord == 1:
        return sum_(ufuncs.apply("absolute", x))
    if ord is None or ord == 2:
        return ufuncs.apply("sqrt", sum_(ufuncs.apply("multiply", x, x)))
    if isinstance(ord, str):
        raise ValueError(f"{what}: invalid norm order '{ord}' for vectors{where()}")
    powered = ufuncs.apply("power", ufuncs.apply("absolute", x), ord, out=None)
    powered = astype(powered, x.dtype, copy=False)
    total = sum_(powered)
    exponent = np.reciprocal(np.asarray(ord, dtype=total.dtype))
    return astype(ufuncs.apply("power", total, exponent), total.dtype, copy=False)


def _matrix(x, ord, axis, keepdims, what):
    rows, cols = (normalize_axis(a, x.ndim, what) for a in axis)
    if rows == cols:
        raise ValueError(f"{what}: duplicate axes given ({axis}){where()}")
    absx = lambda: ufuncs.apply("absolute", x)
    if ord in (2, -2, "nuc"):
        raise UnsupportedError(f"{what}: the matrix norm ord={ord!r} needs singular values (an SVD), "
                               f"which autofuse does not compute; supported matrix orders: None, "
                               f"'fro', 1, -1, inf, -inf{where()}")
    if ord in (1, -1, math.inf, -math.inf):
        inner, outer = (rows, cols) if ord in (1, -1) else (cols, rows)
        summed = reduce("sum", absx(), axis=inner, dtype=x.dtype)
        outer = outer - 1 if outer > inner else outer
        if ord > 0 and summed.shape[outer] == 0:      # NumPy's max(..., initial=0)
            shape = summed.shape[:outer] + summed.shape[outer + 1:]
            result = full(shape, 0, x.dtype, what=what)
        else:
            result = reduce("max" if ord > 0 else "min", summed, axis=outer)
    elif ord in (None, "fro", "f"):
        result = ufuncs.apply("sqrt", reduce("sum", ufuncs.apply("multiply", x, x),
                                             axis=(rows, cols), dtype=x.dtype))
    else:
        raise ValueError(f"{what}: invalid norm order {ord!r} for matrices{where()}")
    if keepdims:
        shape = list(x.shape)
        shape[rows] = shape[cols] = 1
        result = reshape(result, tuple(shape), what)
    return result
