"""`math` as generated kernels see it under numba's CUDA simulator: Python's math module, except
that where Python raises (log(0), sqrt(-1), exp(1000): ValueError / OverflowError) the result
is the IEEE value a GPU computes (-inf, nan, inf), from NumPy's ufunc of the same name.

Only the simulator uses this; on a GPU, numba compiles `math.*` to libdevice calls.
"""
from __future__ import annotations

import math as _python
import types

import numpy as np

_UFUNCS = {"acos": "arccos", "asin": "arcsin", "atan": "arctan", "acosh": "arccosh",
           "asinh": "arcsinh", "atanh": "arctanh", "atan2": "arctan2", "pow": "power"}


def _ieee(name: str):
    function = getattr(_python, name)
    ufunc = getattr(np, _UFUNCS.get(name, name))

    def call(*args):
        try:
            return function(*args)
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return ufunc(*args)
    call.__name__ = name
    return call


math = types.SimpleNamespace(**{name: getattr(_python, name) for name in dir(_python)
                                if not name.startswith("_")})
for _name in ("sqrt", "log", "log2", "log10", "log1p", "exp", "exp2", "expm1", "cosh", "sinh",
              "acos", "asin", "acosh", "atanh", "pow", "hypot"):
    if hasattr(_python, _name):
        setattr(math, _name, _ieee(_name))
