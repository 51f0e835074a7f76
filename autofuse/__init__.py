"""autofuse: an operator-fusion JIT for NumPy-style Python.

>>> import numpy as np, autofuse
>>> @autofuse.jit
... def softmax(x):
...     e = np.exp(x - x.max(axis=-1, keepdims=True))
...     return e / e.sum(axis=-1, keepdims=True)
>>> softmax(np.ones((2, 4), np.float32)).dtype
dtype('float32')
"""
from .errors import (AutofuseError, ArgumentError, BackendError, DTypeError, ShapeError,
                     TraceError, UnsupportedError)
from .jit import JitFunction, jit

__version__ = "0.1.0"

__all__ = ["jit", "JitFunction", "AutofuseError", "ArgumentError", "BackendError", "DTypeError",
           "ShapeError", "TraceError", "UnsupportedError"]
