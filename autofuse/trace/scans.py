"""Scans: np.cumsum, np.cumprod, ndarray.cumsum / cumprod, ufunc.accumulate and NumPy 2's
np.cumulative_sum / np.cumulative_prod, traced as one `scan` op along one axis.

Design. A scan is one IR op, `scan(x, axis=a, ufunc=name)` (ir/ops.py: one row; the combining
ufunc is an attribute, its identity SCAN_IDENTITY), computed in its own dtype: the tracer first
casts the operand to the dtype NumPy accumulates in (asked of NumPy itself, so int8 and bool
cumsum become the platform int, maximum.accumulate of bool int8, logical_and of floats bool, and
`dtype=` wins), so a kernel never widens inside the loop. axis=None flattens first (cumsum of a
0-d array is a 1-element array); `include_initial=True` concatenates the identity in front. In
fusion a scan is a kind of input fusion (fusion/legality.py: scan rules): producers computed at the
scanned element's own index fuse into it, elementwise consumers of the scanned value fuse as an
epilogue; backends/cpu/scans.py and backends/cuda/emit/scans.py lower the group.
"""
from __future__ import annotations

import functools

import numpy as np

from ..errors import NumPyValueError, ShapeError, UnsupportedError, where
from .context import check_dtype, current
from .layout import as_tracer, concatenate, flatten, normalize_axis
from .tracer import Tracer, fresh
from .ufuncs import refuse_complex

SCAN_UFUNCS = ("add", "multiply", "maximum", "minimum", "logical_and", "logical_or")


@functools.lru_cache(maxsize=256)
def accumulation_dtype(ufunc: str, dtype: np.dtype, requested) -> np.dtype:
    """The dtype NumPy's `ufunc.accumulate` gives for `dtype` (`requested`: its dtype= or None),
    asked of NumPy on a one-element array."""
    return getattr(np, ufunc).accumulate(np.ones(1, dtype), dtype=requested).dtype


def _reject(what: str, kwargs: dict) -> None:
    for key, value in kwargs.items():
        if key == "out" and value is None:
            continue
        raise UnsupportedError(f"{what}: the argument {key}= is not supported{where()}")


def scan(ufunc: str, x, axis, dtype, what: str, include_initial: bool = False) -> Tracer:
    """`ufunc`.accumulate of `x` along `axis` (None: the flattened array) in NumPy's dtype."""
    x = as_tracer(x, what)
    if axis is None:
        x = flatten(x) if x.ndim != 1 else x
        axis = 0
    if x.ndim == 0:
        raise ShapeError(f"{what}: cannot accumulate on a scalar{where()}")
    axis = normalize_axis(axis, x.ndim, what)
    requested = check_dtype(dtype, what) if dtype is not None else None
    target = accumulation_dtype(ufunc, x.dtype, requested)
    check_dtype(target, what)
    refuse_complex(ufunc, (target,), what)
    ctx = current()
    node = x.node
    if node.dtype != target:
        node = ctx.emit("cast", [node], {"dtype": target})
    result = fresh(ctx.emit("scan", [node], {"axis": axis, "ufunc": ufunc}))
    if not include_initial:
        return result
    shape = tuple(1 if d == axis else s for d, s in enumerate(x.shape))
    identity = {"add": 0, "multiply": 1}[ufunc]
    first = fresh(ctx.emit("broadcast_to", [ctx.constant(np.array(identity, target))],
                           {"shape": shape}))
    return concatenate([first, result], axis, what)


def cumsum(a, axis=None, dtype=None, out=None) -> Tracer:
    _reject("np.cumsum", {"out": out})
    return scan("add", a, axis, dtype, "np.cumsum")


def cumprod(a, axis=None, dtype=None, out=None) -> Tracer:
    _reject("np.cumprod", {"out": out})
    return scan("multiply", a, axis, dtype, "np.cumprod")


def _cumulative(ufunc: str, what: str):
    def cumulative(x, /, *, axis=None, dtype=None, out=None, include_initial=False) -> Tracer:
        _reject(what, {"out": out})
        x = as_tracer(x, what)
        if axis is None and x.ndim > 1:
            raise NumPyValueError(f"{what}: for arrays which have more than one dimension "
                                  f"``axis`` argument is required (shape {x.shape}){where()}")
        if x.ndim == 0:
            x = flatten(x)
        return scan(ufunc, x, axis, dtype, what, include_initial)
    return cumulative


cumulative_sum = _cumulative("add", "np.cumulative_sum")
cumulative_prod = _cumulative("multiply", "np.cumulative_prod")


def accumulate(ufunc: str, inputs, kwargs) -> Tracer:
    """ufunc.accumulate(array, axis=0, dtype=None, out=None) for the ufuncs of SCAN_UFUNCS."""
    what = f"np.{ufunc}.accumulate"
    if ufunc not in SCAN_UFUNCS:
        raise UnsupportedError(f"{what} is not supported by autofuse{where()}\n  supported "
                               f"accumulations: " + ", ".join(f"np.{u}.accumulate" for u in SCAN_UFUNCS))
    if len(inputs) != 1:
        raise UnsupportedError(f"{what}: takes one array ({len(inputs)} given){where()}")
    kwargs = dict(kwargs)
    axis, dtype = kwargs.pop("axis", 0), kwargs.pop("dtype", None)
    _reject(what, kwargs)
    x = as_tracer(inputs[0], what)
    if x.ndim == 0:
        raise ShapeError(f"{what}: cannot accumulate on a scalar{where()}")
    if axis is None and x.ndim != 1:
        raise NumPyValueError(f"{what}: accumulate does not allow multiple axes (shape "
                              f"{x.shape}){where()}")
    return scan(ufunc, x, axis if axis is not None else 0, dtype, what)
