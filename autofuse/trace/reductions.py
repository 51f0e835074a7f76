"""Reductions with NumPy's axis, keepdims and dtype rules; mean, var and std as NumPy composes them."""
from __future__ import annotations

import functools
import math

import numpy as np

from ..errors import NumPyValueError, ShapeError, UnsupportedError, where
from .context import check_dtype, current
from .layout import as_tracer, normalize_axes, normalize_axis, flatten
from .tracer import Tracer, fresh
from . import complexes, ufuncs

_UFUNC_NAME = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}


@functools.lru_cache(maxsize=256)
def _default_dtype(name: str, dtype: np.dtype) -> np.dtype:
    """The dtype NumPy's sum/prod of `dtype` gives (int32 -> int64, bool -> int64, ...)."""
    return getattr(np, name)(np.ones(1, dtype=dtype)).dtype


def _reject(what: str, kwargs: dict) -> None:
    for key, value in kwargs.items():
        if key in ("where",) and value is True:
            continue
        if key == "out" and value is None:
            continue
        if key == "initial" and value is np._NoValue:
            continue
        raise UnsupportedError(f"np.{what}: the argument {key}= is not supported{where()}")


def _keep(x_shape, axes, node, keepdims: bool):
    ctx = current()
    if keepdims:
        shape = tuple(1 if d in axes else s for d, s in enumerate(x_shape))
        node = ctx.emit("reshape", [node], {"shape": shape})
    return fresh(node, scalar=node.ndim == 0)


def reduce(name: str, x, axis=None, keepdims=False, dtype=None, **kwargs) -> Tracer:
    """sum, prod, max, min, any, all over `axis` (None, int, negative, tuple)."""
    _reject(name, kwargs)
    x = as_tracer(x, f"np.{name}")
    axes = normalize_axes(axis, x.ndim, f"np.{name}")
    ctx = current()
    node = x.node
    if name in ("max", "min"):
        ufuncs.refuse_complex(name, (x.dtype,), f"np.{name}")
    if name in ("any", "all"):
        if node.dtype != np.dtype(bool):
            node = ctx.emit("cast", [node], {"dtype": np.dtype(bool)})
    else:
        if dtype is not None:
            target = check_dtype(dtype, f"np.{name}")
        elif name in ("sum", "prod"):
            target = _default_dtype(name, x.dtype)
        else:
            target = x.dtype
        reduced = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
        if name in ("max", "min") and reduced == 0 and x.size == 0:
            raise ShapeError(f"np.{name}: zero-size array to reduction operation "
                             f"{_UFUNC_NAME[name]} which has no identity (shape {x.shape}){where()}")
        if node.dtype != target:
            node = ctx.emit("cast", [node], {"dtype": target})
    result = ctx.emit(name, [node], {"axes": axes})
    return _keep(x.shape, axes, result, keepdims)


def arg_reduce(name: str, x, axis=None, keepdims=False, **kwargs) -> Tracer:
    """argmax / argmin over one axis, or over the flattened array when axis is None."""
    _reject(name, kwargs)
    x = as_tracer(x, f"np.{name}")
    ufuncs.refuse_complex(name, (x.dtype,), f"np.{name}")
    if axis is None:
        source = flatten(x) if x.ndim != 1 else x
        axis_n = 0
    else:
        source = x
        axis_n = normalize_axis(axis, x.ndim, f"np.{name}")
    if source.shape[axis_n] == 0:
        raise ShapeError(f"np.{name}: attempt to get {name} of an empty sequence (shape {x.shape})"
                         f"{where()}")
    result = current().emit(name, [source.node], {"axes": (axis_n,)})
    if keepdims:
        shape = (1,) * x.ndim if axis is None else tuple(
            1 if d == axis_n else s for d, s in enumerate(x.shape))
        result = current().emit("reshape", [result], {"shape": shape})
    return fresh(result, scalar=result.ndim == 0)


def _count(x: Tracer, axes) -> int:
    """The number of elements reduced over `axes`, as a product of `x.shape`'s own ints: while a
    shape class is built those are sizes the builds follow (dynamic/sizes.py), so a mean's divisor
    becomes a form of the batch size rather than a constant that keeps the batch static."""
    return math.prod((x.shape[a] for a in axes), start=1)


def mean(x, axis=None, dtype=None, keepdims=False, **kwargs) -> Tracer:
    """NumPy's _mean: sum in the accumulation dtype, then divide by the count."""
    _reject("mean", kwargs)
    x = as_tracer(x, "np.mean")
    axes = normalize_axes(axis, x.ndim, "np.mean")
    float16_result = False
    if dtype is None:
        if x.dtype.kind in "iub":
            dtype = np.dtype("f8")
        elif x.dtype == np.float16:
            dtype, float16_result = np.dtype("f4"), True
    total = reduce("sum", x, axis=axes, keepdims=keepdims, dtype=dtype)
    result = ufuncs.apply("divide", total, _count(x, axes))
    if result.dtype != total.dtype:
        result = fresh(current().emit("cast", [result.node], {"dtype": total.dtype}), scalar=result.scalar)
    if float16_result:
        result = fresh(current().emit("cast", [result.node], {"dtype": np.dtype("f2")}), scalar=result.scalar)
    return result


def var(x, axis=None, dtype=None, ddof=0, keepdims=False, correction=np._NoValue,
        **kwargs) -> Tracer:
    """NumPy's _var: mean with keepdims, squared deviations, their sum over (count - ddof);
    `correction` is the Array API's name for ddof (NumPy 2), a float allowed."""
    _reject("var", kwargs)
    if correction is not np._NoValue:
        if ddof != 0:
            raise NumPyValueError(f"np.var: ddof and correction can't be provided simultaneously."
                                  f"{where()}")
        ddof = correction
    x = as_tracer(x, "np.var")
    axes = normalize_axes(axis, x.ndim, "np.var")
    if dtype is None and x.dtype.kind in "iub":
        dtype = np.dtype("f8")
    count = _count(x, axes)
    total = reduce("sum", x, axis=axes, keepdims=True, dtype=dtype)
    arrmean = ufuncs.apply("divide", total, count)
    if arrmean.dtype != total.dtype:
        arrmean = fresh(current().emit("cast", [arrmean.node], {"dtype": total.dtype}))
    deviation = ufuncs.apply("subtract", x, arrmean)
    if deviation.dtype.kind == "c":     # NumPy's |d|^2: (d * conj(d)).real
        squared = complexes.real(ufuncs.apply("multiply", deviation, ufuncs.apply("conjugate", deviation)))
    else:
        squared = ufuncs.apply("multiply", deviation, deviation)
    ret = reduce("sum", squared, axis=axes, keepdims=keepdims, dtype=dtype)
    ddof = float(ddof) if isinstance(ddof, (float, np.floating)) or \
        (isinstance(ddof, Tracer) and ddof.dtype.kind == "f") else int(ddof)
    result = ufuncs.apply("divide", ret, max(count - ddof, 0))
    if result.dtype != ret.dtype:
        result = fresh(current().emit("cast", [result.node], {"dtype": ret.dtype}), scalar=result.scalar)
    return result


def std(x, axis=None, dtype=None, ddof=0, keepdims=False, correction=np._NoValue,
        **kwargs) -> Tracer:
    return ufuncs.apply("sqrt", var(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                                    correction=correction, **kwargs))
