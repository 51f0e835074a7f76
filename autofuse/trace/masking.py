"""A boolean selection `x[mask]` (mask of x's shape) as a lazy value that only reductions consume:
`x[m].sum()` is `np.where(m, x, 0).sum()`, `.mean()` divides by the mask's count; elementwise
arithmetic with scalars stays a selection (`x[m] *= 2` then `x[m] = ...` is a np.where)."""
from __future__ import annotations

import numpy as np

from ..errors import NumPyValueError, UnsupportedError, describe, where
from . import checks, reductions, ufuncs
from .context import current
from .tracer import Tracer, fresh

_IDENTITY = {"sum": 0, "prod": 1, "any": False, "all": True}
_WHAT_INSTEAD = ("reduce it (.sum(), .mean(), .max(), .min(), .prod(), .any(), .all(), "
                 "np.count_nonzero(mask)) or write np.where(mask, x, fill)")


class MaskedSelection:
    """x[mask] before NumPy would compact it: `values` (x's shape) where `mask` holds."""

    def __init__(self, values: Tracer, mask: Tracer, key, line: str):
        self.values, self.mask, self.key, self.line = values, mask, key, line
        self.dtype = values.dtype
        self.ndim = 1

    def unsupported(self, use: str) -> UnsupportedError:
        return UnsupportedError(
            f"{use} of a boolean selection x[mask] ({describe(self.values)} selected by a mask) needs "
            f"its data-dependent length, which autofuse does not support; {_WHAT_INSTEAD}{self.line}")

    @property
    def shape(self):
        raise self.unsupported("the shape")

    @property
    def size(self) -> Tracer:
        return count(self)

    def __len__(self):
        raise self.unsupported("len()")

    def _reduced(self, name, axis, keepdims, kwargs) -> Tracer:
        if axis not in (None, 0, -1, (0,), (-1,)) or keepdims or kwargs.get("out") is not None:
            raise UnsupportedError(f"np.{name} of a boolean selection x[mask] takes only axis=None "
                                   f"or 0 and no keepdims or out{where()}")
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        if name == "mean":
            return _mean(self, kwargs.pop("dtype", None), kwargs)
        fill = _IDENTITY.get(name)
        if fill is None:
            ufuncs.refuse_complex(name, (self.dtype,), f"np.{name} of a boolean selection")
            # NOTE: `initial` joins every max/min (NumPy's meaning), so it can be the fill.
            fill = kwargs.pop("initial", np._NoValue)
            if fill is np._NoValue:
                fill = _lowest(self.dtype) if name == "max" else _highest(self.dtype)
                _refuse_empty(self, name)
        if self.values.size == 0 and name in ("max", "min"):
            return fresh(ufuncs.to_node(fill, self.dtype, f"np.{name}"), scalar=True)
        filled = _where(self.mask, self.values, fill)
        return reductions.reduce(name, filled, None, False, **kwargs)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs:
            raise self.unsupported(f"np.{ufunc.__name__}.{method}")
        for other in inputs:
            if isinstance(other, MaskedSelection) and other.mask is not self.mask:
                raise self.unsupported(f"np.{ufunc.__name__} of two selections with different masks")
            if not isinstance(other, MaskedSelection) and np.ndim(other) != 0:
                raise self.unsupported(f"np.{ufunc.__name__} with an array operand")
        plain = [other.values if isinstance(other, MaskedSelection) else other for other in inputs]
        return MaskedSelection(ufunc(*plain), self.mask, self.key, self.line)

    def __array_function__(self, func, types, args, kwargs):
        name = func.__name__
        if name in ("sum", "prod", "max", "min", "amax", "amin", "mean", "any", "all") \
                and args and args[0] is self:
            name = {"amax": "max", "amin": "min"}.get(name, name)
            axis = args[1] if len(args) > 1 else kwargs.pop("axis", None)
            keepdims = kwargs.pop("keepdims", False)
            return self._reduced(name, axis, keepdims, kwargs)
        if name == "size" and args and args[0] is self:
            return count(self)
        raise self.unsupported(f"np.{name}")


def _method(name):
    def reduce_method(self, axis=None, *args, keepdims=False, **kwargs):
        if args:
            raise UnsupportedError(f".{name}() of a boolean selection: pass arguments by name"
                                   f"{where()}")
        return self._reduced(name, axis, keepdims, kwargs)
    return reduce_method


for _name in ("sum", "prod", "max", "min", "mean", "any", "all"):
    setattr(MaskedSelection, _name, _method(_name))
for _dunder, _ufunc in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                        ("truediv", np.true_divide), ("floordiv", np.floor_divide),
                        ("pow", np.power), ("mod", np.remainder)]:
    setattr(MaskedSelection, f"__{_dunder}__", lambda self, other, u=_ufunc: u(self, other))
    setattr(MaskedSelection, f"__r{_dunder}__", lambda self, other, u=_ufunc: u(other, self))


def _in_place(ufunc):
    def operator(self, other):
        result = ufunc(self, other)
        if not np.can_cast(result.dtype, self.dtype, "same_kind"):
            raise UnsupportedError(f"in-place np.{ufunc.__name__} of a boolean selection: Cannot cast "
                                   f"ufunc output from {result.dtype} to {self.dtype} with casting "
                                   f"rule 'same_kind'{where()}")
        return result
    return operator


for _dunder, _ufunc in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                        ("truediv", np.true_divide), ("floordiv", np.floor_divide),
                        ("pow", np.power), ("mod", np.remainder)]:
    setattr(MaskedSelection, f"__i{_dunder}__", _in_place(_ufunc))
MaskedSelection.__neg__ = lambda self: np.negative(self)
MaskedSelection.__abs__ = lambda self: np.absolute(self)


def select(x: Tracer, mask) -> MaskedSelection:
    """x[mask] for a boolean mask of x's shape (any other mask shape is unsupported)."""
    if tuple(mask.shape) != x.shape:
        raise UnsupportedError(f"boolean selection x[mask]: the mask's shape {tuple(mask.shape)} must "
                               f"be the array's shape {x.shape} (a selection of rows has a "
                               f"data-dependent shape); write np.where(mask, x, fill){where()}")
    key = mask
    mask = fresh(ufuncs.to_node(mask, np.dtype(bool), "boolean selection x[mask]"))
    return MaskedSelection(fresh(x.node), mask, key, where())


def _refuse_empty(selection: MaskedSelection, name: str) -> None:
    """NumPy's ValueError for max/min of a selection that selects nothing (no identity): checked
    after the call (trace/checks.py), now where the mask is known."""
    ufunc = "maximum" if name == "max" else "minimum"
    message = (f"np.{name} of a boolean selection x[mask] ({describe(selection.values)}): zero-size "
               f"array to reduction operation {ufunc} which has no identity{selection.line}")
    mask = np.zeros(0, bool) if selection.values.size == 0 else checks.known(selection.mask)
    if mask is not None:
        if not np.any(mask):
            raise NumPyValueError(message)
        return
    checks.raise_if(~np.any(selection.mask), NumPyValueError, message)


def count(selection: MaskedSelection) -> Tracer:
    """How many elements the mask selects (an int64 traced scalar)."""
    return reductions.reduce("sum", selection.mask, None, False, dtype=np.int64)


def _mean(selection: MaskedSelection, dtype, kwargs) -> Tracer:
    if dtype is None:
        dtype = np.float64 if selection.dtype.kind in "biu" else selection.dtype
    total = reductions.reduce("sum", _where(selection.mask, selection.values, 0), None, False,
                              dtype=dtype, **kwargs)
    return np.true_divide(total, count(selection).astype(dtype))


def _where(mask: Tracer, values: Tracer, fill) -> Tracer:
    what = "boolean selection x[mask]"
    nodes = [mask.node, values.node, ufuncs.to_node(fill, values.dtype, what)]
    return fresh(current().emit("where", nodes))


def _lowest(dtype):
    if dtype.kind == "f":
        return -np.inf
    return False if dtype.kind == "b" else np.iinfo(dtype).min


def _highest(dtype):
    if dtype.kind == "f":
        return np.inf
    return True if dtype.kind == "b" else np.iinfo(dtype).max
