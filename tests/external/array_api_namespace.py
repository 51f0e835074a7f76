"""NumPy's Array API namespace with every function that takes arrays run through autofuse.jit:
the module the external Array API test suite (data-apis/array-api-tests) is pointed at.

Each wrapped name `f` becomes `autofuse.jit(lambda *args, **kwargs: numpy.f(*args, **kwargs))`,
one jit function per name (so repeated signatures hit its cache); Python ints and bools the
trace needs by value (axes, keepdims, shifts) are specialized automatically, dtypes and functions
are static. Everything else (creation functions with no array argument, constants, dtypes,
finfo/iinfo, the array object itself and its operators) is NumPy's own. `tests/external/README.md`
says how to run the suite against this module and against plain NumPy, and which tests fail.
"""
from __future__ import annotations

import numpy as np

import autofuse

__array_api_version__ = "2021.12"

# The functions of the 2021.12 standard that take arrays, by the standard's categories.
WRAPPED = {
    "elementwise": ["abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh",
                    "bitwise_and", "bitwise_left_shift", "bitwise_invert", "bitwise_or",
                    "bitwise_right_shift", "bitwise_xor", "ceil", "cos", "cosh", "divide", "equal",
                    "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal", "isfinite",
                    "isinf", "isnan", "less", "less_equal", "log", "log1p", "log2", "log10",
                    "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor",
                    "multiply", "negative", "not_equal", "positive", "pow", "remainder", "round",
                    "sign", "sin", "sinh", "square", "sqrt", "subtract", "tan", "tanh", "trunc"],
    "statistical": ["max", "mean", "min", "prod", "std", "sum", "var"],
    "manipulation": ["concat", "expand_dims", "flip", "permute_dims", "reshape", "roll", "squeeze",
                     "stack", "broadcast_to", "astype"],
    "searching": ["argmax", "argmin", "where"],
    "linear algebra": ["matmul", "matrix_transpose", "tensordot", "vecdot"],
    "utility": ["all", "any"],
    "creation from arrays": ["tril", "triu", "zeros_like", "ones_like", "full_like", "empty_like"],
}

_jitted: dict = {}


def _wrapped(name: str):
    function = getattr(np, name)

    def call(*args, **kwargs):
        return function(*args, **kwargs)
    call.__name__ = name
    compiled = autofuse.jit(call)

    def run(*args, **kwargs):
        return compiled(*args, **kwargs)
    run.__name__ = name
    run.__doc__ = function.__doc__
    return run


def __getattr__(name: str):
    if name in _jitted:
        return _jitted[name]
    if any(name in names for names in WRAPPED.values()):
        _jitted[name] = _wrapped(name)
        return _jitted[name]
    return getattr(np, name)
