"""Reductions with NumPy's axis, keepdims and dtype rules; mean, var and std as NumPy composes them."""
from __future__ import annotations

import functools
import math

import numpy as np

from ..errors import DTypeError, NumPyValueError, ShapeError, UnsupportedError, describe, where
from .context import check_dtype, current
from .layout import as_tracer, broadcast_to, normalize_axes, normalize_axis, flatten
from .tracer import Tracer, fresh
from . import complexes, creation, ufuncs

_where = where      # (reduce() takes NumPy's where= argument under that name)

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


# what a masked-out element counts as (where=): the reduction's identity
_IDENTITY = {"sum": 0, "prod": 1, "any": False, "all": True}


def where_mask(x: Tracer, mask, what: str) -> Tracer | None:
    """`where=` as a boolean array of x's shape, or None for where=True (every element): the
    reductions' and np.copyto's."""
    if mask is True:
        return None
    mask = as_tracer(mask, what)
    if mask.dtype != np.dtype(bool):
        raise DTypeError(f"{what} of {describe(x)}: where= must be boolean, not {describe(mask)} "
                         f"(NumPy casts it with the 'safe' rule){where()}")
    return broadcast_to(mask, x.shape, f"{what}'s where=")


def _masked(name: str, x: Tracer, mask: Tracer, initial) -> Tracer:
    """x with its masked-out elements replaced by what the reduction `name` ignores: its
    identity, or `initial` for max and min (which have none)."""
    fill = _start(name, x, None, initial) if name in ("max", "min") else \
        x.dtype.type(_IDENTITY[name])
    return fresh(current().emit("where", [mask.node, x.node, ufuncs.to_node(fill, x.dtype,
                                                                             f"np.{name}")]))


def _start(name: str, x: Tracer, reduce_dtype, initial):
    """`initial` as NumPy's reduction of x's values (and `dtype=`) starts from: its own cast,
    by reducing nothing from it (a Python int out of range, an infinity into ints or a complex
    into floats raise as NumPy raises them)."""
    ufunc = getattr(np, _UFUNC_NAME[name])
    try:
        return ufunc.reduce(np.empty(0, x.dtype), initial=initial, dtype=reduce_dtype)
    except (OverflowError, TypeError) as error:
        raise DTypeError(f"np.{name} of {describe(x)}: initial={initial!r}: {error}"
                         f"{where()}") from None
    except ValueError as error:
        raise NumPyValueError(f"np.{name} of {describe(x)}: initial={initial!r}: {error}"
                              f"{where()}") from None


def _keep(x_shape, axes, node, keepdims: bool):
    ctx = current()
    if keepdims:
        shape = tuple(1 if d in axes else s for d, s in enumerate(x_shape))
        node = ctx.emit("reshape", [node], {"shape": shape})
    return fresh(node, scalar=node.ndim == 0)


def reduce(name: str, x, axis=None, keepdims=False, dtype=None, initial=np._NoValue,
           where=True, **kwargs) -> Tracer:
    """sum, prod, max, min, any, all over `axis` (None, int, negative, tuple); `where=` a
    boolean mask (masked-out elements count as the identity, or as `initial` for max and min,
    which NumPy then requires) and `initial=` the value the reduction starts from."""
    _reject(name, kwargs)
    what = f"np.{name}"
    x = as_tracer(x, what)
    axes = normalize_axes(axis, x.ndim, what)
    if initial is not np._NoValue and name in ("any", "all"):
        raise UnsupportedError(f"{what}: the argument initial= is not supported{_where()}")
    # (initial=None: no initial value and no identity either, as NumPy's reductions take it)
    no_identity = name in ("max", "min") or initial is None
    initial = np._NoValue if initial is None else initial
    mask = where_mask(x, where, what)
    if mask is not None and no_identity and initial is np._NoValue:
        raise NumPyValueError(f"{what} of {describe(x)}: reduction operation "
                              f"'{_UFUNC_NAME[name]}' does not have an identity, so to use a where "
                              f"mask one has to specify 'initial'{_where()}")
    if mask is not None:
        x = _masked(name, x, mask, initial)
    if initial is not np._NoValue:
        return _from_initial(name, x, axes, keepdims, dtype, initial)
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
                             f"{_UFUNC_NAME[name]} which has no identity (shape {x.shape}){_where()}")
        if node.dtype != target:
            node = ctx.emit("cast", [node], {"dtype": target})
    result = ctx.emit(name, [node], {"axes": axes})
    return _keep(x.shape, axes, result, keepdims)


def _from_initial(name: str, x: Tracer, axes: tuple, keepdims: bool, dtype, initial) -> Tracer:
    """The reduction combined with `initial` (by the reduction's own ufunc); over no elements,
    `initial` itself."""
    reduced = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if reduced == 0 and name in ("max", "min"):
        kept = tuple(1 if d in axes else n for d, n in enumerate(x.shape)) if keepdims else \
            tuple(n for d, n in enumerate(x.shape) if d not in axes)
        target = x.dtype if dtype is None else check_dtype(dtype, f"np.{name}")
        value = _start(name, x, target, initial)
        return creation.full(kept, value, target, what=f"np.{name}")
    result = reduce(name, x, axis=axes, keepdims=keepdims, dtype=dtype)
    start = _start(name, x, dtype, initial)
    return ufuncs.apply(_UFUNC_NAME[name], result, result.dtype.type(start))


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


def _counted(x: Tracer, axes: tuple, keepdims: bool, mask: Tracer | None):
    """The count of elements each reduced value is over: an int, or with `where=` the mask's
    count (NumPy's _count_reduce_items: a sum of the broadcast mask as intp)."""
    if mask is None:
        return _count(x, axes)
    return reduce("sum", mask, axis=axes, keepdims=keepdims, dtype=np.intp)


def mean(x, axis=None, dtype=None, keepdims=False, where=True, **kwargs) -> Tracer:
    """NumPy's _mean: sum in the accumulation dtype, then divide by the count (of the
    elements `where=` keeps)."""
    _reject("mean", kwargs)
    x = as_tracer(x, "np.mean")
    axes = normalize_axes(axis, x.ndim, "np.mean")
    mask = where_mask(x, where, "np.mean")
    float16_result = False
    if dtype is None:
        if x.dtype.kind in "iub":
            dtype = np.dtype("f8")
        elif x.dtype == np.float16:
            dtype, float16_result = np.dtype("f4"), True
    total = reduce("sum", x, axis=axes, keepdims=keepdims, dtype=dtype,
                   where=True if mask is None else mask)
    result = ufuncs.apply("divide", total, _counted(x, axes, keepdims, mask))
    if result.dtype != total.dtype:
        result = fresh(current().emit("cast", [result.node], {"dtype": total.dtype}), scalar=result.scalar)
    if float16_result:
        result = fresh(current().emit("cast", [result.node], {"dtype": np.dtype("f2")}), scalar=result.scalar)
    return result


def var(x, axis=None, dtype=None, ddof=0, keepdims=False, correction=np._NoValue, where=True,
        **kwargs) -> Tracer:
    """NumPy's _var: mean with keepdims, squared deviations, their sum over (count - ddof);
    `correction` is the Array API's name for ddof (NumPy 2), a float allowed."""
    _reject("var", kwargs)
    if correction is not np._NoValue:
        if ddof != 0:
            raise NumPyValueError(f"np.var: ddof and correction can't be provided simultaneously."
                                  f"{_where()}")
        ddof = correction
    x = as_tracer(x, "np.var")
    axes = normalize_axes(axis, x.ndim, "np.var")
    mask = where_mask(x, where, "np.var")
    kept = True if mask is None else mask
    if dtype is None and x.dtype.kind in "iub":
        dtype = np.dtype("f8")
    total = reduce("sum", x, axis=axes, keepdims=True, dtype=dtype, where=kept)
    arrmean = ufuncs.apply("divide", total, _counted(x, axes, True, mask))
    if arrmean.dtype != total.dtype:
        arrmean = fresh(current().emit("cast", [arrmean.node], {"dtype": total.dtype}))
    deviation = ufuncs.apply("subtract", x, arrmean)
    if deviation.dtype.kind == "c":     # NumPy's |d|^2: (d * conj(d)).real
        squared = complexes.real(ufuncs.apply("multiply", deviation, ufuncs.apply("conjugate", deviation)))
    else:
        squared = ufuncs.apply("multiply", deviation, deviation)
    ret = reduce("sum", squared, axis=axes, keepdims=keepdims, dtype=dtype, where=kept)
    ddof = float(ddof) if isinstance(ddof, (float, np.floating)) or \
        (isinstance(ddof, Tracer) and ddof.dtype.kind == "f") else int(ddof)
    count = _counted(x, axes, keepdims, mask)
    divisor = max(count - ddof, 0) if mask is None else \
        ufuncs.apply("maximum", ufuncs.apply("subtract", count, ddof), 0)
    result = ufuncs.apply("divide", ret, divisor)
    if result.dtype != ret.dtype:
        result = fresh(current().emit("cast", [result.node], {"dtype": ret.dtype}), scalar=result.scalar)
    return result


def std(x, axis=None, dtype=None, ddof=0, keepdims=False, correction=np._NoValue, where=True,
        **kwargs) -> Tracer:
    return ufuncs.apply("sqrt", var(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                                    correction=correction, where=where, **kwargs))
