"""autofuse: an operator-fusion JIT for NumPy-style Python.

>>> import numpy as np, autofuse
>>> @autofuse.jit
... def softmax(x):
...     e = np.exp(x - x.max(axis=-1, keepdims=True))
...     return e / e.sum(axis=-1, keepdims=True)
>>> softmax(np.ones((2, 4), np.float32)).dtype
dtype('float32')

Compiled kernels are cached on disk, content-addressed, in $AUTOFUSE_CACHE_DIR (default
~/.cache/autofuse): `autofuse.cache_dir()` says where, `autofuse.clear_disk_cache()` empties it.
"""
from .errors import (AutofuseError, ArgumentError, BackendError, DTypeError, ShapeError,
                     TraceError, UnsupportedError)
from .backends.disk_cache import cache_dir, clear_disk_cache
from .jit import JitFunction, jit

__version__ = "0.1.0"

__all__ = ["jit", "JitFunction", "AutofuseError", "ArgumentError", "BackendError", "DTypeError",
           "ShapeError", "TraceError", "UnsupportedError", "cache_dir", "clear_disk_cache"]
