"""Numerical helpers NumPy writes in Python, traced as compositions of supported ops, each after
NumPy's definition (numpy/lib/_polynomial_impl.py, _twodim_base_impl.py, _function_base_impl.py,
_nanfunctions_impl.py, _index_tricks_impl.py, numpy/_core/numeric.py and the ufuncs' docs):
np.polyval, np.vander, np.select, np.trapezoid, np.ediff1d, np.vdot, np.array_equal,
np.nancumsum/np.nancumprod, np.nanargmax/np.nanargmin, np.unravel_index,
np.ravel_multi_index; and the ufuncs np.fabs, np.float_power, np.ldexp, np.signbit,
np.isposinf/np.isneginf. Conditions NumPy checks on values (an all-NaN slice, an index out of
range) are checked when the call runs (trace/checks.py)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import DTypeError, NumPyValueError, ShapeError, UnsupportedError, where
from . import checks, creation, layout
from .compositions import _reduced, _sample, _ufunc_dtype
from .layout import as_tracer, normalize_axis
from .tracer import Tracer, fresh


def polyval(p, x):
    """Horner's rule from a zero of x's dtype, as NumPy computes it."""
    x = as_tracer(x, "np.polyval")
    coefficients = p if isinstance(p, Tracer) else np.asarray(p)
    if coefficients.ndim == 0:
        coefficients = layout.reshape(as_tracer(coefficients, "np.polyval"), (1,))
    y = creation.zeros_like(x)
    for i in range(coefficients.shape[0]):
        y = y * x + coefficients[i]
    return y


def vander(x, N=None, increasing=False):
    what = "np.vander"
    x = as_tracer(x, what)
    if x.ndim != 1:
        raise NumPyValueError(f"{what}: x must be a one-dimensional array or sequence (got "
                              f"{x.shape}){where()}")
    n = x.shape[0]
    N = n if N is None else int(N)
    dtype = np.promote_types(x.dtype, int)
    columns = [creation.ones((n, 1), dtype)] if N > 0 else []
    if N > 1:
        repeated = layout.broadcast_to(layout.reshape(x.astype(dtype), (n, 1)), (n, N - 1))
        columns.append(np.cumprod(repeated, axis=1))
    if not columns:
        return creation.zeros((n, 0), dtype)
    result = layout.concatenate(columns, 1, what) if len(columns) > 1 else columns[0]
    return result if increasing else result[:, ::-1]


def select(condlist, choicelist, default=0):
    what = "np.select"
    if len(condlist) != len(choicelist):
        raise NumPyValueError(f"{what}: list of cases must be same length as list of conditions"
                              f"{where()}")
    if len(choicelist) == 0:
        raise NumPyValueError(f"{what}: select with an empty condition list is not possible"
                              f"{where()}")
    choices = [as_tracer(c, what) for c in choicelist]
    # the choices' common dtype, then the default as NumPy weighs it (a Python scalar is weak)
    dtype = np.result_type(np.result_type(*(c.dtype for c in choices)), _sample(default))
    choices.append(as_tracer(default, what))
    conditions = [as_tracer(c, what) for c in condlist]
    for i, condition in enumerate(conditions):
        if condition.dtype != np.bool_:
            raise DTypeError(f"{what}: invalid entry {i} in condlist: should be boolean ndarray "
                             f"(got {condition.dtype}){where()}")
    result = choices[-1].astype(dtype)
    for condition, choice in zip(conditions[::-1], choices[-2::-1]):
        result = np.where(condition, choice.astype(dtype), result)
    shape = np.broadcast_shapes(*(c.shape for c in conditions + choices))
    return result if result.shape == shape else layout.broadcast_to(result, shape, what)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    what = "np.trapezoid"
    y = as_tracer(y, what)
    axis = normalize_axis(axis, y.ndim, what)
    if x is None:
        d = dx
    else:
        x = as_tracer(x, what)
        if x.ndim == 1:
            d = np.diff(x)
            d = layout.reshape(d, tuple(d.shape[0] if k == axis else 1 for k in range(y.ndim)))
        else:
            d = np.diff(x, axis=axis)
    head = tuple(slice(1, None) if k == axis else slice(None) for k in range(y.ndim))
    tail = tuple(slice(None, -1) if k == axis else slice(None) for k in range(y.ndim))
    return _reduced(np.add.reduce(d * (y[head] + y[tail]) / 2.0, axis))


def ediff1d(ary, to_end=None, to_begin=None):
    what = "np.ediff1d"
    flat = layout.ravel(as_tracer(ary, what))
    parts = [flat[1:] - flat[:-1]]
    for extra, name, front in ((to_begin, "to_begin", True), (to_end, "to_end", False)):
        if extra is None:
            continue
        extra = layout.ravel(as_tracer(extra, what))
        if not np.can_cast(extra.dtype, flat.dtype, casting="same_kind"):
            raise DTypeError(f"{what}: dtype of `{name}` must be compatible with input `ary` "
                             f"under the `same_kind` rule.{where()}")
        parts.insert(0 if front else len(parts), extra.astype(flat.dtype))
    return layout.concatenate(parts, 0, what) if len(parts) > 1 else parts[0]


def vdot(a, b):
    what = "np.vdot"
    a, b = layout.ravel(as_tracer(a, what)), layout.ravel(as_tracer(b, what))
    if a.shape != b.shape:
        raise ShapeError(f"np.vdot: vectors have different lengths ({a.shape[0]} and "
                         f"{b.shape[0]}){where()}")
    return _reduced(np.dot(np.conjugate(a) if np.dtype(a.dtype).kind == "c" else a, b))


def array_equal(a1, a2, equal_nan=False):
    """A Python bool as NumPy returns: False for shapes that differ, else a traced Python bool
    (usable in arithmetic as Python's bool; an `if` on it needs the values, which the trace
    refuses)."""
    a1, a2 = as_tracer(a1, "np.array_equal"), as_tracer(a2, "np.array_equal")
    if a1.shape != a2.shape:
        return False
    same = a1 == a2
    if equal_nan and np.dtype(np.result_type(a1.dtype, a2.dtype)).kind in "fc":
        same = same | (np.isnan(a1) & np.isnan(a2))
    return fresh(np.all(same).node, weak=bool)


def _nan_scan(name, fill):
    def scan(a, axis=None, dtype=None, out=None):
        what = f"np.{name}"
        a = as_tracer(a, what)
        if out is not None:
            raise UnsupportedError(f"{what}: out= is not supported{where()}")
        if np.dtype(a.dtype).kind in "fc":
            a = np.where(np.isnan(a), a.dtype.type(fill), a)
        return (np.cumsum if fill == 0 else np.cumprod)(a, axis=axis, dtype=dtype)
    return scan


def _nan_arg(name):
    def arg(a, axis=None, out=None, *, keepdims=False):
        what = f"np.{name}"
        a = as_tracer(a, what)
        if out is not None:
            raise UnsupportedError(f"{what}: out= is not supported{where()}")
        plain = np.argmax if name == "nanargmax" else np.argmin
        if np.dtype(a.dtype).kind not in "fc":
            return plain(a, axis=axis, keepdims=keepdims)
        missing = np.isnan(a)
        checks.raise_if(np.all(missing, axis=axis), NumPyValueError,
                        f"{what}: All-NaN slice encountered{where()}")
        fill = -np.inf if name == "nanargmax" else np.inf
        return plain(np.where(missing, a.dtype.type(fill), a), axis=axis, keepdims=keepdims)
    return arg


def unravel_index(indices, shape, order="C"):
    what = "np.unravel_index"
    shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    if order not in ("C", "F"):
        raise NumPyValueError(f"{what}: only 'C' or 'F' order is permitted{where()}")
    indices = as_tracer(indices, what)
    if np.dtype(indices.dtype).kind not in "iu":
        raise DTypeError(f"{what}: only int indices permitted (got {indices.dtype}){where()}")
    size = math.prod(shape)
    flat = indices.astype(np.int64)
    checks.raise_if((flat < 0) | (flat >= size), NumPyValueError,
                    f"{what}: an index is out of bounds for array with size {size}{where()}")
    axes = range(len(shape)) if order == "F" else range(len(shape) - 1, -1, -1)
    coordinates = [None] * len(shape)
    for axis in axes:
        coordinates[axis] = flat % shape[axis] if shape[axis] else flat
        flat = flat // shape[axis] if shape[axis] else flat
    scalar = indices.ndim == 0
    return tuple(_reduced(c) if scalar else c for c in coordinates)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    what = "np.ravel_multi_index"
    dims = tuple(int(d) for d in dims)
    if len(multi_index) != len(dims):
        raise NumPyValueError(f"{what}: parameter multi_index must be a sequence of length "
                              f"{len(dims)}{where()}")
    modes = [mode] * len(dims) if isinstance(mode, str) else list(mode)
    coordinates = [as_tracer(i, what).astype(np.int64) for i in multi_index]
    flat, stride = None, 1
    axes = range(len(dims)) if order == "F" else range(len(dims) - 1, -1, -1)
    for axis in axes:
        i, size = coordinates[axis], dims[axis]
        if modes[axis] == "raise":
            checks.raise_if((i < 0) | (i >= size), NumPyValueError,
                            f"{what}: invalid entry in coordinates array{where()}")
        elif modes[axis] == "wrap":
            i = i % size
        elif modes[axis] == "clip":
            i = np.clip(i, 0, size - 1)
        else:
            raise NumPyValueError(f"{what}: clipmode must be one of 'clip', 'raise', or 'wrap' "
                                  f"(got {modes[axis]!r}){where()}")
        term = i * stride
        flat = term if flat is None else flat + term
        stride *= size
    return _reduced(flat) if flat.ndim == 0 else flat


# -- ufuncs NumPy has that are compositions here ---------------------------------------------------
def _plain(kwargs, what: str) -> None:
    extra = sorted(k for k, v in kwargs.items() if not (k == "where" and v is True))
    if extra:
        raise UnsupportedError(f"{what}: arguments {extra} are not supported{where()}")


def fabs(x, **kwargs):
    (x,) = _ufunc_dtype(np.fabs, (x,), kwargs, "np.fabs")
    return np.absolute(x)


def float_power(x1, x2, **kwargs):
    x1, x2 = _ufunc_dtype(np.float_power, (x1, x2), kwargs, "np.float_power")
    return np.power(x1, x2)


def ldexp(x1, x2, **kwargs):
    """x1 * 2**x2, the power split in two halves so that neither overflows where the result
    does not."""
    _plain(kwargs, "np.ldexp")
    dtype = np.ldexp(_sample(x1), _sample(x2)).dtype
    x1 = as_tracer(x1, "np.ldexp").astype(dtype)
    exponent = as_tracer(x2, "np.ldexp").astype(np.int64)
    half = exponent // 2
    return x1 * np.exp2(half.astype(dtype)) * np.exp2((exponent - half).astype(dtype))


def signbit(x, **kwargs):
    _plain(kwargs, "np.signbit")
    x = as_tracer(x, "np.signbit")
    if np.dtype(x.dtype).kind == "f":      # -0.0 and NaNs with the sign set count, as in C
        return np.copysign(x.dtype.type(1), x) < 0
    return x < 0


def _infinity(positive: bool):
    def test(x, out=None):
        what = "np.isposinf" if positive else "np.isneginf"
        x = as_tracer(x, what)
        if np.dtype(x.dtype).kind == "c":
            raise DTypeError(f"{what}: This operation is not supported for complex values because "
                             f"it would be ambiguous.{where()}")
        if out is not None:
            raise UnsupportedError(f"{what}: out= is not supported{where()}")
        negative = signbit(x)
        return np.isinf(x) & (~negative if positive else negative)
    return test


FUNCTIONS = {
    np.polyval: polyval, np.vander: vander, np.select: select, np.trapezoid: trapezoid,
    np.ediff1d: ediff1d, np.vdot: vdot, np.array_equal: array_equal,
    np.nancumsum: _nan_scan("nancumsum", 0), np.nancumprod: _nan_scan("nancumprod", 1),
    np.nanargmax: _nan_arg("nanargmax"), np.nanargmin: _nan_arg("nanargmin"),
    np.unravel_index: unravel_index, np.ravel_multi_index: ravel_multi_index,
    np.isposinf: _infinity(True), np.isneginf: _infinity(False),
}

UFUNCS = {"fabs": fabs, "float_power": float_power, "ldexp": ldexp, "signbit": signbit}
