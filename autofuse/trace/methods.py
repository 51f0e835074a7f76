"""The ndarray interface of Tracer: operators, methods and NumPy's dispatch protocols.

Operators come from one table (dunder -> ufunc), as torch.fx builds its proxy's magic methods.
"""
from __future__ import annotations

import numpy as np

from . import complexes, functions, gather, indexing, layout, matmul, reductions, repetition, scans, sorting, ufuncs
from .tracer import Tracer

BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "and": "bitwise_and",
    "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift", "rshift": "right_shift",
}
COMPARISONS = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
               "eq": "equal", "ne": "not_equal"}
UNARY = {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}


def _power(self, other):
    _python_operands(self, other)
    # NOTE: ndarray.__pow__ turns x**2 into np.square(x) (NumPy's fast_scalar_power); so do we.
    if isinstance(other, (int, float)) and not isinstance(other, bool) and other == 2 \
            and self.weak is None:
        return ufuncs.apply("square", self)
    return ufuncs.apply_operator("power", self, other)


def _python_operands(*operands) -> None:
    """A list or tuple argument meets a Python operator: with an array beside it NumPy's operator
    decides (elementwise); otherwise Python's (`+` joins, `*` repeats, `==` compares lists)."""
    sequences = [x for x in operands if isinstance(x, Tracer) and x.sequence]
    arrays = [x for x in operands if isinstance(x, np.ndarray) or isinstance(x, Tracer) and not
              x.sequence and x.weak is None]
    if sequences and not arrays:
        sequences[0].python_use("a Python operator on a list or tuple argument")


def _binary(name):
    if name == "power":
        return _power

    def method(self, other):
        _python_operands(self, other)
        return ufuncs.apply_operator(name, self, other)
    return method


def _reflected(name):
    def method(self, other):
        _python_operands(self, other)
        return ufuncs.apply_operator(name, other, self)
    return method


def _getitem(self, key):
    if self.sequence:
        self.python_use("indexing a list or tuple argument")
    return indexing.getitem(self, key)


def _unary(name):
    def method(self):
        _python_operands(self)
        return ufuncs.apply_operator(name, self)
    return method


def _inplace(name):
    def method(self, other):
        if self.sequence:
            self.python_use("an in-place operator on a list or tuple argument")
        if self.weak is not None or self.scalar:
            return ufuncs.apply_operator(name, self, other)
        return ufuncs.apply(name, self, other, out=self)
    return method


def _install():
    for dunder, name in BINARY.items():
        setattr(Tracer, f"__{dunder}__", _binary(name))
        setattr(Tracer, f"__r{dunder}__", _reflected(name))
        setattr(Tracer, f"__i{dunder}__", _inplace(name))
    for dunder, name in COMPARISONS.items():
        setattr(Tracer, f"__{dunder}__", _binary(name))
    for dunder, name in UNARY.items():
        setattr(Tracer, f"__{dunder}__", _unary(name))
    # divmod(a, b): (a // b, a % b), as ndarray's (NumPy's divmod loop agrees with both)
    quotient, rest = _binary("floor_divide"), _binary("remainder")
    Tracer.__divmod__ = lambda self, other: (quotient(self, other), rest(self, other))
    quotient_of, rest_of = _reflected("floor_divide"), _reflected("remainder")
    Tracer.__rdivmod__ = lambda self, other: (quotient_of(self, other), rest_of(self, other))
    Tracer.__matmul__ = lambda self, other: matmul.matmul(self, other, "@")
    Tracer.fill = indexing.fill
    Tracer.__rmatmul__ = lambda self, other: matmul.matmul(other, self, "@")

    def imatmul(self, other):
        result = matmul.matmul(self, other, "@=")
        return ufuncs.write_out(result.node, self, "@=")
    Tracer.__imatmul__ = imatmul
    Tracer.__getitem__ = _getitem
    Tracer.__setitem__ = lambda self, key, value: indexing.setitem(self, key, value)
    Tracer.__array_ufunc__ = lambda self, ufunc, method, *inputs, **kwargs: functions.call_ufunc(
        ufunc, method, inputs, kwargs)
    Tracer.__array_function__ = lambda self, func, types, args, kwargs: functions.call_function(
        func, args, kwargs)

    for name in ("sum", "prod", "max", "min", "any", "all"):
        setattr(Tracer, name, lambda self, axis=None, *args, _n=name, **kwargs:
                reductions.reduce(_n, self, axis, *args, **kwargs))
    Tracer.cumsum = lambda self, axis=None, dtype=None, out=None: scans.cumsum(self, axis, dtype, out)
    Tracer.cumprod = lambda self, axis=None, dtype=None, out=None: scans.cumprod(self, axis, dtype, out)
    Tracer.argmax = lambda self, axis=None, out=None, keepdims=False: reductions.arg_reduce(
        "argmax", self, axis, keepdims, out=out)
    Tracer.argmin = lambda self, axis=None, out=None, keepdims=False: reductions.arg_reduce(
        "argmin", self, axis, keepdims, out=out)
    Tracer.mean = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: \
        reductions.mean(self, axis, dtype, keepdims, out=out, **kw)
    Tracer.var = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw: \
        reductions.var(self, axis, dtype, ddof, keepdims, out=out, **kw)
    Tracer.std = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw: \
        reductions.std(self, axis, dtype, ddof, keepdims, out=out, **kw)

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        return layout.reshape(self, shape, "reshape", order)
    Tracer.reshape = reshape
    Tracer.transpose = lambda self, *axes: layout.transpose(self, axes or None)
    Tracer.T = property(lambda self: layout.transpose(self, None, ".T"))
    Tracer.mT = property(lambda self: layout.swapaxes(self, -1, -2))
    Tracer.ravel = lambda self, order="C": layout.ravel(self)
    Tracer.flatten = lambda self, order="C": layout.flatten(self)
    Tracer.squeeze = lambda self, axis=None: layout.squeeze(self, axis)
    Tracer.swapaxes = lambda self, a, b: layout.swapaxes(self, a, b)
    Tracer.astype = lambda self, dtype, order="K", casting="unsafe", subok=True, copy=True: \
        layout.astype(self, dtype, copy)
    Tracer.copy = lambda self, order="C": layout.copy(self)
    Tracer.dot = lambda self, other: matmul.dot(self, other)
    Tracer.clip = lambda self, min=None, max=None, out=None, **kw: functions.clip(
        self, min, max, out=out, **kw)
    Tracer.round = lambda self, decimals=0, out=None: functions.round_(self, decimals, out)
    Tracer.sort = sorting.sort_in_place
    Tracer.partition = sorting.partition_in_place
    Tracer.argsort = lambda self, axis=-1, kind=None, order=None, **kw: sorting.argsort(
        self, axis, kind, order, **kw)
    Tracer.argpartition = lambda self, kth, axis=-1, kind="introselect", order=None: \
        sorting.argpartition(self, kth, axis, kind, order)
    Tracer.take = lambda self, indices, axis=None, out=None, mode="raise": gather.take(
        self, indices, axis, out, mode)
    complexes.install()
    Tracer.repeat = lambda self, repeats, axis=None: repetition.repeat(self, repeats, axis)


_install()
