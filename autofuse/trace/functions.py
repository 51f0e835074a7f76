"""The NumPy surface: which NumPy function or ufunc call traces to which handler."""
from __future__ import annotations

import difflib

import numpy as np

from ..errors import ArgumentError, UnsupportedError, where
from ..ir.ops import ELEMENTWISE_UFUNCS
from . import (along_axis, arrangement, complexes, compositions, contractions, convolution, creation, einsum,
               fourier, gather, layout, lexsort, linalg, matmul, nanquantiles, numerics, padding, reductions,
               repetition, scans, histogram, scatter, searching, shifting, solving, sorting, statistics,
               triangles, ufuncs, windows)
from .context import current
from .gradient import gradient
from .layout import as_tracer
from .tracer import Tracer, fresh


def _copyto(dst, src, casting="same_kind", where=True):
    from .indexing import copyto
    return copyto(dst, src, casting, where)


def where_(condition, x=None, y=None):
    if x is None or y is None:
        raise UnsupportedError("np.where with one argument returns data-dependent indices, which "
                               f"autofuse does not support; use np.where(cond, x, y){where()}")
    what = "np.where"
    samples = [_dtype_sample(v, what) for v in (x, y)]
    dtype = np.result_type(*samples)
    ufuncs.result_shape(what, *(np.shape(v) if not isinstance(v, Tracer) else v.shape
                                for v in (condition, x, y)))
    nodes = [ufuncs.to_node(condition, np.dtype(bool), what)] + [
        ufuncs.to_node(v, dtype, what) for v in (x, y)]
    return fresh(current().emit("where", nodes))     # np.where always returns an array


def _dtype_sample(value, what):
    """Something np.result_type treats as NumPy treats `value` (weak Python scalars stay weak)."""
    kind = ufuncs.operand_type(value, what)
    if kind is int:
        return 0
    if kind is float:
        return 0.0
    return kind


def clip(a, a_min=None, a_max=None, out=None, min=None, max=None, **kwargs):
    low = a_min if a_min is not None else min
    high = a_max if a_max is not None else max
    if kwargs:
        raise UnsupportedError(f"np.clip: arguments {sorted(kwargs)} are not supported{where()}")
    if low is None and high is None:
        raise ArgumentError(f"np.clip: one of max or min must be given{where()}")
    result = a
    if low is not None:
        result = ufuncs.apply("maximum", result, low)
    if high is not None:
        result = ufuncs.apply("minimum", result, high)
    if out is not None:
        return ufuncs.write_out(result.node, out, "np.clip")
    return result


def round_(a, decimals=0, out=None):
    a = as_tracer(a, "np.round")
    if out is not None:
        raise UnsupportedError(f"np.round: out= is not supported{where()}")
    if a.dtype.kind in "iub":
        if decimals >= 0:
            return layout.copy(a)
        raise UnsupportedError(f"np.round of integers with decimals={decimals}{where()}")
    if decimals == 0:
        return ufuncs.apply("rint", a)
    factor = 10.0 ** abs(decimals)
    if decimals > 0:
        return ufuncs.apply("divide", ufuncs.apply("rint", ufuncs.apply("multiply", a, factor)), factor)
    return ufuncs.apply("multiply", ufuncs.apply("rint", ufuncs.apply("divide", a, factor)), factor)


def reshape(a, *args, **kwargs):
    shape = kwargs.pop("shape", None)
    if shape is None:
        shape = kwargs.pop("newshape", None)
    if shape is None and args:
        shape, args = args[0], args[1:]
    order = kwargs.pop("order", args[0] if args else "C")
    if kwargs.pop("copy", None) is not None or kwargs:
        raise UnsupportedError(f"np.reshape: arguments {sorted(kwargs) or ['copy']} are not supported"
                               f"{where()}")
    return layout.reshape(as_tracer(a, "np.reshape"), shape, "np.reshape", order)


def flip(m, axis=None):
    m = as_tracer(m, "np.flip")
    axes = layout.normalize_axes(axis, m.ndim, "np.flip")
    key = tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(m.ndim))
    from .indexing import getitem
    return getitem(m, key)


def outer(a, b, out=None):
    a = layout.ravel(as_tracer(a, "np.outer"))
    b = layout.ravel(as_tracer(b, "np.outer"))
    return ufuncs.apply("multiply", layout.reshape(a, (a.size, 1)), layout.reshape(b, (1, b.size)),
                        out=out)


def hstack(tup, dtype=None, casting="same_kind"):
    arrays = [layout.as_tracer(a, "np.hstack") for a in tup]
    axis = 0 if arrays and arrays[0].ndim == 1 else 1
    return layout.concatenate(arrays, axis, "np.hstack", dtype)


def vstack(tup, dtype=None, casting="same_kind"):
    arrays = [layout.as_tracer(a, "np.vstack") for a in tup]
    arrays = [layout.reshape(a, (1, a.size)) if a.ndim < 2 else a for a in arrays]
    return layout.concatenate(arrays, 0, "np.vstack", dtype)


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if out is not None:
        raise UnsupportedError(f"np.concatenate: out= is not supported{where()}")
    return layout.concatenate(arrays, axis, "np.concatenate", dtype)


def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if out is not None:
        raise UnsupportedError(f"np.stack: out= is not supported{where()}")
    return layout.stack(arrays, axis, "np.stack", dtype)


def _reduction(name):
    return lambda a, *args, **kwargs: reductions.reduce(name, a, *args, **kwargs)


def _arg(name):
    return lambda a, axis=None, out=None, keepdims=False: reductions.arg_reduce(
        name, a, axis, keepdims, out=out)


FUNCTIONS = {
    np.sum: _reduction("sum"), np.prod: _reduction("prod"),
    np.max: _reduction("max"), np.amax: _reduction("max"),
    np.min: _reduction("min"), np.amin: _reduction("min"),
    np.any: _reduction("any"), np.all: _reduction("all"),
    np.argmax: _arg("argmax"), np.argmin: _arg("argmin"),
    np.mean: reductions.mean, np.var: reductions.var, np.std: reductions.std,
    np.dot: matmul.dot, np.outer: outer,
    np.tensordot: contractions.tensordot, np.matrix_transpose: contractions.matrix_transpose,
    np.where: where_, np.clip: clip, np.round: round_, np.around: round_,
    np.transpose: lambda a, axes=None: layout.transpose(as_tracer(a, "np.transpose"), axes),
    np.swapaxes: lambda a, axis1, axis2: layout.swapaxes(as_tracer(a, "np.swapaxes"), axis1, axis2),
    np.moveaxis: lambda a, source, destination: layout.moveaxis(
        as_tracer(a, "np.moveaxis"), source, destination),
    np.reshape: reshape,
    np.ravel: lambda a, order="C": layout.ravel(as_tracer(a, "np.ravel")),
    np.expand_dims: lambda a, axis: layout.expand_dims(as_tracer(a, "np.expand_dims"), axis),
    np.squeeze: lambda a, axis=None: layout.squeeze(as_tracer(a, "np.squeeze"), axis),
    np.broadcast_to: lambda array, shape, subok=False: layout.broadcast_to(array, shape),
    np.concatenate: _concatenate, np.stack: _stack, np.hstack: hstack, np.vstack: vstack,
    np.flip: flip,
    np.copy: lambda a, order="K", subok=False: layout.copy(as_tracer(a, "np.copy")),
    np.astype: lambda x, dtype, copy=True, **kw: layout.astype(as_tracer(x, "np.astype"), dtype, copy),
    np.zeros_like: creation.zeros_like, np.ones_like: creation.ones_like,
    np.empty_like: creation.empty_like, np.full_like: creation.full_like,
    np.shape: lambda a: a.shape, np.ndim: lambda a: a.ndim, np.size: lambda a, axis=None: (
        a.size if axis is None else a.shape[axis]),
    np.diff: shifting.diff, np.roll: shifting.roll, np.pad: padding.pad, np.gradient: gradient,
    np.tril: triangles.tril, np.triu: triangles.triu,
    np.tile: repetition.tile, np.repeat: repetition.repeat,
    np.linalg.norm: linalg.norm, np.cov: statistics.cov, np.corrcoef: statistics.corrcoef,
    np.einsum: einsum.einsum,
    np.sort: sorting.sort, np.argsort: sorting.argsort, np.partition: sorting.partition,
    np.argpartition: sorting.argpartition, np.median: sorting.median,
    np.nanmedian: sorting.nanmedian, np.quantile: sorting.quantile,
    np.percentile: sorting.percentile,
    np.nanquantile: nanquantiles.nanquantile, np.nanpercentile: nanquantiles.nanpercentile,
    np.cumsum: scans.cumsum, np.cumprod: scans.cumprod,
    np.cumulative_sum: scans.cumulative_sum, np.cumulative_prod: scans.cumulative_prod,
    np.take: gather.take, np.take_along_axis: gather.take_along_axis,
    np.put_along_axis: scatter.put_along_axis, np.copyto: _copyto,
    np.result_type: lambda *args: np.result_type(*(_dtype_sample(a, "np.result_type") for a in args)),
}

FUNCTIONS.update(compositions.FUNCTIONS)
FUNCTIONS.update(complexes.FUNCTIONS)
FUNCTIONS.update(searching.FUNCTIONS)
FUNCTIONS.update(histogram.FUNCTIONS)
FUNCTIONS.update(convolution.FUNCTIONS)
FUNCTIONS.update(arrangement.FUNCTIONS)
FUNCTIONS.update(numerics.FUNCTIONS)
FUNCTIONS.update(windows.FUNCTIONS)
FUNCTIONS.update(lexsort.FUNCTIONS)
FUNCTIONS.update(along_axis.FUNCTIONS)
FUNCTIONS.update(solving.FUNCTIONS)
FUNCTIONS.update(fourier.FUNCTIONS)
COMPOSED_UFUNCS = {**compositions.UFUNCS, **numerics.UFUNCS}

UFUNC_ALIASES = {"abs": "absolute", "true_divide": "divide", "mod": "remainder", "deg2rad": "radians",
                 "rad2deg": "degrees"}


def supported_names() -> list[str]:
    names = {_public_name(fn) for fn in FUNCTIONS} | {f"np.{name}" for name in ELEMENTWISE_UFUNCS}
    names |= {f"np.{alias}" for alias in UFUNC_ALIASES} | {"np.vecdot"}
    names |= {f"np.{name}" for name in COMPOSED_UFUNCS}
    return sorted(names | {"np.matmul", "np.zeros", "np.ones", "np.full", "np.empty", "np.arange",
                           "np.linspace", "np.eye", "np.identity", "np.array", "np.asarray"})


# functions whose result's shape NumPy takes from the values: what to write instead
_SHAPE_FROM_VALUES = ("np.nonzero", "np.argwhere", "np.flatnonzero", "np.unique", "np.extract",
                      "np.compress", "np.trim_zeros", "np.setdiff1d", "np.intersect1d",
                      "np.union1d", "np.unique_values", "np.unique_counts", "np.unique_inverse",
                      "np.unique_all")


def unsupported(name: str) -> UnsupportedError:
    """The error for a NumPy call autofuse does not trace: the call and the user's line first,
    then the few supported names spelled most like it."""
    if name in _SHAPE_FROM_VALUES:
        return UnsupportedError(
            f"{name}: the shape of its result depends on the values, which autofuse does not know "
            f"while it traces{where()}\n  keep the shape instead: np.where(mask, x, 0), "
            f"x[mask].sum(), np.count_nonzero(mask); or call {name} "
            f"outside the jitted function")
    names = supported_names()
    close = difflib.get_close_matches(name, names, n=4, cutoff=0.6)
    if close:
        hint = f"\n  nearest supported: {', '.join(close)}"
    else:
        hint = f"\n  ({len(names)} NumPy functions and ufuncs are supported: " \
               f"autofuse.trace.functions.supported_names() lists them)"
    return UnsupportedError(f"{name} is not supported by autofuse{where()}{hint}")


def call_function(func, args, kwargs):
    handler = FUNCTIONS.get(func)
    if handler is None:
        raise unsupported(_public_name(func))
    return handler(*args, **kwargs)


def _public_name(func) -> str:
    """np.sort, np.linalg.norm, scipy.special.erf: the name a user wrote."""
    module = getattr(func, "__module__", None) or "numpy"
    if module.startswith("numpy"):
        parts = [p for p in module.split(".")[1:] if not p.startswith("_")]
        return ".".join(["np"] + parts + [func.__name__])
    return f"{module}.{func.__name__}"


def call_ufunc(ufunc, method: str, inputs, kwargs):
    name = UFUNC_ALIASES.get(ufunc.__name__, ufunc.__name__)
    if method != "__call__":
        return _ufunc_method(name, method, inputs, kwargs)
    if name == "matmul":
        out = kwargs.pop("out", None)
        if kwargs or out is not None:
            raise UnsupportedError(f"np.matmul: arguments {sorted(kwargs) or ['out']} are not "
                                   f"supported{where()}")
        return matmul.matmul(*inputs)
    if name == "vecdot":       # a generalized ufunc (NumPy 2): axis= is its only option here
        unknown = sorted(set(kwargs) - {"axis"})
        if unknown:
            raise UnsupportedError(f"np.vecdot: arguments {unknown} are not supported{where()}")
        return contractions.vecdot(*inputs, **kwargs)
    if name in COMPOSED_UFUNCS:
        return COMPOSED_UFUNCS[name](*inputs, **kwargs)
    if name not in ELEMENTWISE_UFUNCS:
        raise unsupported(f"np.{name}")
    out = kwargs.pop("out", None)
    dtype = kwargs.pop("dtype", None)
    casting = kwargs.pop("casting", "same_kind")
    for key, value in kwargs.items():
        if not (key == "where" and value is True) and not (key in ("order", "subok") and value in
                                                              ("K", True)):
            raise UnsupportedError(f"np.{name}: the argument {key}= is not supported{where()}")
    return ufuncs.apply(name, *inputs, out=out, dtype=dtype, casting=casting)


_REDUCE_METHODS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
                   "logical_or": "any", "logical_and": "all"}


def _ufunc_method(name, method, inputs, kwargs):
    if method == "reduce" and name in _REDUCE_METHODS:
        axis = kwargs.pop("axis", 0)
        return reductions.reduce(_REDUCE_METHODS[name], inputs[0], axis=axis, **kwargs)
    if method == "at" and name == "add" and not kwargs:
        return scatter.add_at(*inputs)
    if method == "outer" and name in ELEMENTWISE_UFUNCS and ELEMENTWISE_UFUNCS[name].arity == 2:
        return _outer(name, *inputs, **kwargs)
    if method == "accumulate":
        return scans.accumulate(name, inputs, kwargs)
    raise unsupported(f"np.{name}.{method}")


def _outer(name, a, b, **kwargs):
    """ufunc.outer(a, b): ufunc(a[..., None, ...], b), both operands converted as np.asarray
    would (a Python scalar is an int64/float64 array here, not a weak scalar)."""
    what = f"np.{name}.outer"
    a, b = (_strong(as_tracer(v, what)) for v in (a, b))
    a = layout.reshape(a, a.shape + (1,) * b.ndim, what)
    out, dtype = kwargs.pop("out", None), kwargs.pop("dtype", None)
    casting = kwargs.pop("casting", "same_kind")
    if kwargs:
        raise UnsupportedError(f"{what}: arguments {sorted(kwargs)} are not supported{where()}")
    return ufuncs.apply(name, a, b, out=out, dtype=dtype, casting=casting)


def _strong(x: Tracer) -> Tracer:
    return fresh(x.node, scalar=x.scalar) if x.weak is not None else x
