"""Array creation inside traced functions: zeros, ones, full, empty, arange, linspace, eye, *_like.

Shapes and values are static; zeros/ones/full become a broadcast scalar and arange/eye are built
from `iota`, so fused kernels compute them in place instead of reading them from memory.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError, where
from .context import check_dtype, current
from .layout import as_tracer, astype, stack
from .tracer import Tracer, fresh


def _static(value, what: str):
    if isinstance(value, Tracer):
        value._concrete(f"{what}: a size or bound")
    return value


def _shape(shape, what: str) -> tuple:
    _static(shape, what)
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    shape = tuple(int(_static(s, what)) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"{what}: negative dimensions are not allowed{where()}")
    return shape


def full(shape, fill_value, dtype=None, order="C", what="np.full", **kwargs) -> Tracer:
    _no_extra(what, kwargs)
    shape = _shape(shape, what)
    ctx = current()
    if isinstance(fill_value, Tracer):
        node = fill_value.node
        dtype = check_dtype(dtype, what) if dtype is not None else node.dtype
        if node.dtype != dtype:
            node = ctx.emit("cast", [node], {"dtype": dtype})
    else:
        value = np.asarray(fill_value)
        dtype = check_dtype(dtype if dtype is not None else value.dtype, what)
        node = ctx.constant(value.astype(dtype))
    return fresh(ctx.emit("broadcast_to", [node], {"shape": shape}))


def _no_extra(what, kwargs):
    for key, value in kwargs.items():
        if key in ("like", "device") and value is None:
            continue
        raise UnsupportedError(f"{what}: the argument {key}= is not supported{where()}")


def zeros(shape, dtype=float, order="C", **kwargs) -> Tracer:
    return full(shape, 0, dtype, what="np.zeros", **kwargs)


def ones(shape, dtype=float, order="C", **kwargs) -> Tracer:
    return full(shape, 1, dtype, what="np.ones", **kwargs)


def empty(shape, dtype=float, order="C", **kwargs) -> Tracer:
    return full(shape, 0, dtype, what="np.empty", **kwargs)


def _like(prototype, dtype, shape, what):
    prototype = as_tracer(prototype, what)
    return (prototype.shape if shape is None else shape), (prototype.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, **kwargs) -> Tracer:
    shape, dtype = _like(a, dtype, shape, "np.zeros_like")
    return full(shape, 0, dtype, what="np.zeros_like", **kwargs)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, **kwargs) -> Tracer:
    shape, dtype = _like(a, dtype, shape, "np.ones_like")
    return full(shape, 1, dtype, what="np.ones_like", **kwargs)


def empty_like(a, dtype=None, order="K", subok=True, shape=None, **kwargs) -> Tracer:
    shape, dtype = _like(a, dtype, shape, "np.empty_like")
    return full(shape, 0, dtype, what="np.empty_like", **kwargs)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs) -> Tracer:
    shape, dtype = _like(a, dtype, shape, "np.full_like")
    if not isinstance(fill_value, Tracer):
        fill_value = np.asarray(fill_value).astype(dtype)
    return full(shape, fill_value, dtype, what="np.full_like", **kwargs)


def _iota(length: int, dtype) -> object:
    return current().emit("iota", attrs={"shape": (length,), "axis": 0, "dtype": np.dtype(dtype)})


def arange(*args, dtype=None, **kwargs) -> Tracer:
    """Integer ranges are computed in place (start + step * iota); float ranges are constants."""
    _no_extra("np.arange", kwargs)
    for value in args:
        _static(value, "np.arange")
    reference = np.arange(*args, dtype=dtype)
    check_dtype(reference.dtype, "np.arange")
    if reference.dtype.kind not in "iu" or reference.size == 0:
        return fresh(current().constant(reference))
    start = int(reference[0])
    step = int(reference[1] - reference[0]) if reference.size > 1 else 1
    ctx = current()
    node = _iota(reference.size, reference.dtype)
    if step != 1:
        node = ctx.emit("multiply", [node, ctx.constant(step, reference.dtype)])
    if start != 0:
        node = ctx.emit("add", [node, ctx.constant(start, reference.dtype)])
    return fresh(node)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, **kwargs):
    _no_extra("np.linspace", kwargs)
    for value in (start, stop, num):
        _static(value, "np.linspace")
    result = np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    if retstep:
        values, step = result
        return fresh(current().constant(values)), step
    return fresh(current().constant(result))


def eye(N, M=None, k=0, dtype=float, order="C", **kwargs) -> Tracer:
    _no_extra("np.eye", kwargs)
    for value in (N, M, k):
        _static(value, "np.eye")
    M = N if M is None else M
    dtype = check_dtype(dtype, "np.eye")
    ctx = current()
    rows = ctx.emit("iota", attrs={"shape": (int(N), int(M)), "axis": 0, "dtype": np.dtype(np.int64)})
    cols = ctx.emit("iota", attrs={"shape": (int(N), int(M)), "axis": 1, "dtype": np.dtype(np.int64)})
    if k:
        rows = ctx.emit("add", [rows, ctx.constant(int(k), np.int64)])
    node = ctx.emit("equal", [rows, cols])
    if dtype != np.dtype(bool):
        node = ctx.emit("cast", [node], {"dtype": dtype})
    return fresh(node)


def identity(n, dtype=None, **kwargs) -> Tracer:
    return eye(n, dtype=float if dtype is None else dtype, **kwargs)


def array(obj, dtype=None, copy=True, **kwargs):
    """np.array / np.asarray of traced values (nested lists of them are stacked)."""
    if isinstance(obj, Tracer):
        if dtype is not None and np.dtype(dtype) != obj.dtype:
            return astype(obj, dtype)
        return fresh(obj.node) if copy else obj
    if isinstance(obj, (list, tuple)) and _holds_tracer(obj):
        items = [array(item, dtype, copy=False) if isinstance(item, (list, tuple)) else item
                 for item in obj]
        result = stack(items, 0, "np.array")
        return astype(result, dtype) if dtype is not None else result
    return fresh(current().constant(np.array(obj, dtype=dtype)))


def _holds_tracer(obj) -> bool:
    return any(isinstance(item, Tracer) or isinstance(item, (list, tuple)) and _holds_tracer(item)
               for item in obj)
