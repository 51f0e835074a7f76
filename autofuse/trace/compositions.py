"""NumPy functions that are compositions of others: written here in NumPy, on tracers.

Each follows NumPy's own definition (numpy/lib/_nanfunctions_impl.py, _function_base_impl.py,
numeric.py, as of NumPy 2.4) so the answers and dtypes match: the NaN-ignoring reductions,
nan_to_num, isclose/allclose, logaddexp/logaddexp2, sinc, heaviside, count_nonzero, average, ptp,
meshgrid, split/array_split, rot90, diagonal/diag/trace, kron, cross and inner. What NumPy decides
from the data (an all-NaN slice's warning, average's ZeroDivisionError) follows IEEE arithmetic
instead: the result holds NaN or inf where NumPy would also have warned."""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentError, ShapeError, UnsupportedError, where
from . import creation
from .layout import as_tracer, normalize_axis
from .tracer import Tracer, fresh


def _reduced(result):
    """A reduction's result: a 0-d one is a NumPy scalar, as NumPy's reductions return."""
    if isinstance(result, tuple):
        return tuple(_reduced(r) for r in result)
    return fresh(result.node, scalar=True) if result.ndim == 0 else result


def _reduction(fn):
    def reduce(*args, **kwargs):
        return _reduced(fn(*args, **kwargs))
    reduce.__name__ = fn.__name__
    return reduce


def _float(a) -> bool:
    return np.dtype(a.dtype).kind in "fc"


def _no(kwargs, what):
    if kwargs:
        raise UnsupportedError(f"{what}: arguments {sorted(kwargs)} are not supported{where()}")


def _sample(value):
    """What NumPy's type resolution sees of `value` (a weak Python scalar stays weak)."""
    if isinstance(value, Tracer):
        return value.dtype.type(0) if value.weak is None else value.weak(0)
    if isinstance(value, (bool, int, float)):
        return type(value)(0)
    return np.zeros((), np.asarray(value).dtype)


# -- reductions that skip NaN ----------------------------------------------------------------------
def _nan_filled(name, fill):
    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        _no(kwargs, f"np.{name}")
        a = as_tracer(a, f"np.{name}")
        if out is not None:
            raise UnsupportedError(f"np.{name}: out= is not supported{where()}")
        base = getattr(np, name[3:])
        if _float(a):
            a = np.where(np.isnan(a), fill, a)
        return base(a, axis=axis, dtype=dtype, keepdims=keepdims)
    return reduce


def _nan_extreme(name):
    def reduce(a, axis=None, out=None, keepdims=False, **kwargs):
        _no(kwargs, f"np.{name}")
        a = as_tracer(a, f"np.{name}")
        if out is not None:
            raise UnsupportedError(f"np.{name}: out= is not supported{where()}")
        base = np.max if name == "nanmax" else np.min
        if not _float(a):
            return base(a, axis=axis, keepdims=keepdims)
        missing = np.isnan(a)
        found = base(np.where(missing, -np.inf if name == "nanmax" else np.inf, a), axis=axis,
                     keepdims=keepdims)
        return np.where(np.all(missing, axis=axis, keepdims=keepdims), np.nan, found)
    return reduce


def _kept(x, axis, keepdims):
    return x if keepdims else np.squeeze(x, axis=axis)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    _no(kwargs, "np.nanmean")
    a = as_tracer(a, "np.nanmean")
    if out is not None:
        raise UnsupportedError(f"np.nanmean: out= is not supported{where()}")
    if not _float(a):
        return np.mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    valid = ~np.isnan(a)
    total = np.sum(np.where(valid, a, 0), axis=axis, dtype=dtype, keepdims=keepdims)
    return total / np.sum(valid, axis=axis, dtype=total.dtype, keepdims=keepdims)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    _no(kwargs, "np.nanvar")
    a = as_tracer(a, "np.nanvar")
    if out is not None:
        raise UnsupportedError(f"np.nanvar: out= is not supported{where()}")
    if not _float(a):
        return np.var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    valid = ~np.isnan(a)
    total = np.sum(np.where(valid, a, 0), axis=axis, dtype=dtype, keepdims=True)
    count = np.sum(valid, axis=axis, dtype=total.dtype, keepdims=True)
    centered = np.where(valid, a - total / count, 0)
    dof = count - ddof
    var = np.where(dof > 0, np.sum(centered * centered, axis=axis, dtype=dtype, keepdims=True) / dof,
                   np.nan)
    return _kept(var, axis, keepdims)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    return np.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, **kwargs))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = as_tracer(x, "np.nan_to_num")
    if not _float(x):
        result = np.copy(x)
    else:
        info = np.finfo(x.dtype)
        high = info.max if posinf is None else posinf
        low = info.min if neginf is None else neginf
        result = np.where(np.isnan(x), nan, x)
        result = np.where(np.isinf(x), np.where(x > 0, high, low), result).astype(x.dtype)
    if not copy:
        x[...] = result         # NumPy replaces in place and returns x
        return x
    return result


# -- comparisons -----------------------------------------------------------------------------------
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    # NumPy 2's formula: y is made inexact first (result_type(y, 1.0)), infinities equal only to
    # themselves through x == y, a finite y's tolerance scales with |y|.
    y = b if isinstance(b, Tracer) else np.asarray(b)
    y = y.astype(np.result_type(_sample(y), 1.0)) if isinstance(y, Tracer) else \
        y.astype(np.result_type(y, 1.0))
    close = (np.abs(a - y) <= atol + rtol * np.abs(y)) & np.isfinite(y) | (a == y)
    if equal_nan:
        close = close | (np.isnan(a) & np.isnan(y))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """A traced Python bool, as NumPy returns."""
    return fresh(np.all(isclose(a, b, rtol, atol, equal_nan)).node, weak=bool)


def count_nonzero(a, axis=None, *, keepdims=False):
    a = as_tracer(a, "np.count_nonzero")
    return np.sum(a != 0, axis=axis, dtype=np.intp, keepdims=keepdims)


# -- elementwise ufuncs built from others ---------------------------------------------------------
def _ufunc_dtype(ufunc, inputs, kwargs, what):
    out = kwargs.pop("out", None)
    dtype = kwargs.pop("dtype", None)
    _no({k: v for k, v in kwargs.items() if not (k == "where" and v is True)}, what)
    if out is not None:
        raise UnsupportedError(f"{what}: out= is not supported{where()}")
    resolved = ufunc(*(_sample(v) for v in inputs)).dtype if dtype is None else np.dtype(dtype)
    return [v.astype(resolved) if isinstance(v, Tracer) else resolved.type(v) for v in inputs]


def logaddexp(x1, x2, **kwargs):
    x1, x2 = _ufunc_dtype(np.logaddexp, (x1, x2), kwargs, "np.logaddexp")
    # equal operands (both infinite among them) give x + log(2), as NumPy's loop does
    spread = np.log1p(np.exp(-np.abs(x1 - x2)))
    return np.where(x1 == x2, x1 + np.log(2).astype(spread.dtype), np.maximum(x1, x2) + spread)


def logaddexp2(x1, x2, **kwargs):
    x1, x2 = _ufunc_dtype(np.logaddexp2, (x1, x2), kwargs, "np.logaddexp2")
    spread = np.log1p(np.exp2(-np.abs(x1 - x2))) / np.log(2).astype(x1.dtype)
    return np.where(x1 == x2, x1 + 1, np.maximum(x1, x2) + spread)


def heaviside(x1, x2, **kwargs):
    x1, x2 = _ufunc_dtype(np.heaviside, (x1, x2), kwargs, "np.heaviside")
    step = np.where(x1 < 0, 0, np.where(x1 > 0, 1, x2))
    return np.where(np.isnan(x1), np.nan, step).astype(np.result_type(_sample(x1), _sample(x2)))


def divmod_(x1, x2, **kwargs):
    """np.divmod: floor_divide and remainder (NumPy's divmod loop agrees with both)."""
    if kwargs.pop("out", None) is not None:
        raise UnsupportedError(f"np.divmod: out= is not supported{where()}")
    return np.floor_divide(x1, x2, **kwargs), np.remainder(x1, x2, **kwargs)


def sinc(x):
    x = as_tracer(x, "np.sinc")
    y = np.pi * np.where(x == 0, 1.0e-20, x)
    return np.sin(y) / y


# -- statistics -------------------------------------------------------------------------------------
def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    a = as_tracer(a, "np.average")
    if weights is None:
        avg = np.mean(a, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        return avg, creation.full(avg.shape, a.size // max(avg.size, 1), avg.dtype)
    w = weights if isinstance(weights, Tracer) else np.asarray(weights)
    dtype = np.result_type(_sample(a), _sample(w), *(["f8"] if a.dtype.kind in "iub" else []))
    if tuple(w.shape) != a.shape:
        if axis is None:
            raise TypeError(f"np.average: Axis must be specified when shapes of a and weights "
                            f"differ{where()}")
        if w.ndim != 1 or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"np.average: 1D weights expected when shapes of a and weights "
                            f"differ{where()}")
        axis = normalize_axis(axis, a.ndim, "np.average")
        if w.shape[0] != a.shape[axis]:
            raise ShapeError(f"np.average: Length of weights not compatible with specified axis"
                             f"{where()}")
        w = np.reshape(w, (1,) * axis + (-1,) + (1,) * (a.ndim - axis - 1))
        w = np.broadcast_to(w, a.shape)
    scale = np.sum(w, axis=axis, dtype=dtype, keepdims=keepdims)
    avg = np.sum(np.multiply(a, w, dtype=dtype), axis=axis, keepdims=keepdims) / scale
    return (avg, np.broadcast_to(scale, avg.shape)) if returned else avg


def ptp(a, axis=None, out=None, keepdims=False):
    a = as_tracer(a, "np.ptp")
    if out is not None:
        raise UnsupportedError(f"np.ptp: out= is not supported{where()}")
    return np.max(a, axis=axis, keepdims=keepdims) - np.min(a, axis=axis, keepdims=keepdims)


# -- layout -------------------------------------------------------------------------------------------
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ArgumentError(f"np.meshgrid: Valid values for `indexing` are 'xy' and 'ij'{where()}")
    grids = [as_tracer(x, "np.meshgrid").reshape(-1) for x in xi]
    ndim = len(grids)
    shaped = []
    for i, x in enumerate(grids):
        shape = [1] * ndim
        shape[i] = -1
        if indexing == "xy" and ndim > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        shaped.append(x.reshape(shape))
    if not sparse:
        full = np.broadcast_shapes(*(g.shape for g in shaped))
        shaped = [np.copy(np.broadcast_to(g, full)) for g in shaped]
    return tuple(shaped)


def array_split(ary, indices_or_sections, axis=0, *, _even=False):
    what = "np.split" if _even else "np.array_split"
    ary = as_tracer(ary, what)
    axis = normalize_axis(axis, ary.ndim, what)
    length = ary.shape[axis]
    if np.ndim(indices_or_sections) == 0:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"{what}: number sections must be larger than 0.{where()}")
        if _even and length % sections:
            raise ValueError(f"{what}: array split does not result in an equal division{where()}")
        size, extra = divmod(length, sections)
        bounds = np.cumsum([0] + [size + 1] * extra + [size] * (sections - extra)).tolist()
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [length]
    head = (slice(None),) * axis
    return [ary[head + (slice(start, stop),)] for start, stop in zip(bounds[:-1], bounds[1:])]


def split(ary, indices_or_sections, axis=0):
    return array_split(ary, indices_or_sections, axis, _even=True)


def rot90(m, k=1, axes=(0, 1)):
    m = as_tracer(m, "np.rot90")
    if len(axes) != 2 or normalize_axis(axes[0], m.ndim, "np.rot90") == \
            normalize_axis(axes[1], m.ndim, "np.rot90"):
        raise ArgumentError(f"np.rot90: len(axes) must be 2 and the axes different{where()}")
    k %= 4
    if k == 0:
        return np.copy(m)
    if k == 2:
        return np.flip(np.flip(m, axes[0]), axes[1])
    order = list(range(m.ndim))
    first, second = (normalize_axis(a, m.ndim, "np.rot90") for a in axes)
    order[first], order[second] = order[second], order[first]
    if k == 1:
        return np.transpose(np.flip(m, axes[1]), order)
    return np.flip(np.transpose(m, order), axes[1])


def diagonal(a, offset=0, axis1=0, axis2=1):
    """A strided slice of the two axes flattened: the diagonal of (n, m) starts at offset
    (or -offset * m) and steps m + 1."""
    a = as_tracer(a, "np.diagonal")
    first, second = (normalize_axis(x, a.ndim, "np.diagonal") for x in (axis1, axis2))
    if first == second:
        raise ArgumentError(f"np.diagonal: axis1 and axis2 cannot be the same{where()}")
    b = np.moveaxis(a, (first, second), (-2, -1))
    n, m = b.shape[-2:]
    length = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    start = offset if offset >= 0 else -offset * m
    flat = b.reshape(b.shape[:-2] + (n * m,))
    return flat[..., start:start + (length - 1) * (m + 1) + 1:m + 1] if length else \
        flat[..., 0:0]


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if out is not None:
        raise UnsupportedError(f"np.trace: out= is not supported{where()}")
    return np.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def diag(v, k=0):
    v = as_tracer(v, "np.diag")
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ShapeError(f"np.diag: Input must be 1- or 2-d (shape {v.shape}){where()}")
    n = v.shape[0]
    size = n + abs(k)
    flat = creation.zeros(size * size, v.dtype)
    start = k if k >= 0 else -k * size
    if n:
        flat[start:start + (n - 1) * (size + 1) + 1:size + 1] = v
    return flat.reshape(size, size)


def kron(a, b):
    a, b = as_tracer(a, "np.kron"), as_tracer(b, "np.kron")
    ndim = max(a.ndim, b.ndim)
    a = a.reshape((1,) * (ndim - a.ndim) + a.shape)
    b = b.reshape((1,) * (ndim - b.ndim) + b.shape)
    spread_a = sum(((size, 1) for size in a.shape), ())
    spread_b = sum(((1, size) for size in b.shape), ())
    product = a.reshape(spread_a) * b.reshape(spread_b)
    return product.reshape(tuple(x * y for x, y in zip(a.shape, b.shape)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a = np.moveaxis(as_tracer(a, "np.cross"), axisa, -1)
    b = np.moveaxis(as_tracer(b, "np.cross"), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ShapeError(f"np.cross: incompatible dimensions for cross product (dimension must "
                         f"be 2 or 3), shapes {a.shape} and {b.shape}{where()}")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else None
    b2 = b[..., 2] if b.shape[-1] == 3 else None
    x = (a1 * b2 if b2 is not None else 0) - (a2 * b1 if a2 is not None else 0)
    y = (a2 * b0 if a2 is not None else 0) - (a0 * b2 if b2 is not None else 0)
    z = a0 * b1 - a1 * b0
    dtype = z.dtype
    parts = [np.broadcast_to(np.asarray(p, dtype) if not isinstance(p, Tracer) else p.astype(dtype),
                             z.shape) for p in (x, y, z)]
    return np.moveaxis(np.stack(parts, axis=-1), -1, axisc)


def inner(a, b):
    a, b = as_tracer(a, "np.inner"), as_tracer(b, "np.inner")
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"np.inner: shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} "
                         f"(dim {a.ndim - 1}) != {b.shape[-1]} (dim {b.ndim - 1}){where()}")
    return np.tensordot(a, b, axes=([-1], [-1]))


FUNCTIONS = {
    np.nansum: _reduction(_nan_filled("nansum", 0)), np.nanprod: _reduction(_nan_filled("nanprod", 1)),
    np.nanmax: _reduction(_nan_extreme("nanmax")), np.nanmin: _reduction(_nan_extreme("nanmin")),
    np.nanmean: _reduction(nanmean), np.nanvar: _reduction(nanvar), np.nanstd: _reduction(nanstd),
    np.nan_to_num: nan_to_num, np.isclose: isclose, np.allclose: allclose,
    np.count_nonzero: _reduction(count_nonzero), np.sinc: sinc, np.average: _reduction(average),
    np.ptp: _reduction(ptp), np.meshgrid: meshgrid, np.split: split, np.array_split: array_split,
    np.rot90: rot90, np.diagonal: diagonal, np.trace: _reduction(trace), np.diag: diag,
    np.kron: kron, np.cross: cross, np.inner: _reduction(inner),
}

UFUNCS = {"logaddexp": logaddexp, "logaddexp2": logaddexp2, "heaviside": heaviside,
          "divmod": divmod_}
