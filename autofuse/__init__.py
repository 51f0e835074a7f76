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

Debug output (stderr) at fixed levels: $AUTOFUSE_DEBUG or `with autofuse.debug(level):` —
1 compiles (and the first cache hit per signature), 2 kernel launches with times, 3 traced and
fused IR, 4 kernel source, 5 PTX. See autofuse/debug.py for the full table.
"""
from .errors import (AutofuseError, ArgumentError, BackendError, DTypeError, NumPyValueError,
                     ShapeError, TraceError, UnsupportedError)
from .backends.disk_cache import cache_dir, clear_disk_cache
from .debug import debug, debug_level
from .jit import JitFunction, jit

__version__ = "0.1.0"

__all__ = ["jit", "JitFunction", "AutofuseError", "ArgumentError", "BackendError", "DTypeError",
           "NumPyValueError", "ShapeError", "TraceError", "UnsupportedError", "cache_dir", "clear_disk_cache", "debug", "debug_level"]
