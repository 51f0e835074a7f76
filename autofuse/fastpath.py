"""The key of jit's fast path: a flat positional call looked up by each argument's type and an
array's shape, dtype and strides, without binding or flattening (jit.py's __call__).

Two forms of one key: `native_key` (autofuse/_fastkey.c, bytes) for calls of NumPy arrays of
numeric dtypes and Python scalars, and `tuple_key` (Python) for the rest (CuPy arrays, torch
tensors) and where the C extension was not built. Both tell calls apart by the same facts; a
call takes the same form every time, so one dictionary holds both."""
from __future__ import annotations

from operator import attrgetter

import numpy as np


# NOTE: attrgetters build a key part with no Python frame; each is used for its exact type only,
# so `__class__` is type(leaf).
_array_key = attrgetter("__class__", "shape", "dtype", "strides")
_numpy_key = attrgetter("__class__", "shape", "dtype", "strides", "flags.writeable")


def _torch_key(leaf):
    return (type(leaf), tuple(leaf.shape), leaf.dtype, leaf.stride(), leaf.device)


# The key part of each argument type (CuPy's array types are added when first seen).
_FAST_KEYS = {np.ndarray: _numpy_key, float: type, int: type, bool: type}
# ... for a function none of whose programs writes an argument: a NumPy array's writeable flag
# left out (its program reads the array alike either way; making NumPy's flags object was a
# fifth of a 1,000-element call's overhead)
_READ_KEYS = {**_FAST_KEYS, np.ndarray: _array_key}


_SCALARS = (int, float, bool)


def _no_native_key(args, writes):
    return None


# the layout of _fastkey.c's key this module's tuple key agrees with (its KEY_VERSION)
KEY_VERSION = 2
try:
    from . import _fastkey
except ImportError:                       # (built without a C compiler: setup.py)
    _fastkey = None
# (a library built from another version of _fastkey.c is not used: an editable install's
# build is not redone when the source changes)
native_key = _fastkey.key if getattr(_fastkey, "KEY_VERSION", None) == KEY_VERSION \
    else _no_native_key


def fast_key(args: tuple, writes: bool = True) -> bytes | tuple | None:
    """The fast path's key of a call's argument tuple: the C key where it applies, else the
    tuple key; None where only the full binding path will do."""
    key = native_key(args, writes)
    return key if key is not None else tuple_key(args, writes)


def tuple_key(args, writes: bool = True) -> tuple | None:
    """A key for a flat positional call, or None where only the full binding path will do.

    It holds what an entry depends on: each argument's type, and an array's shape, dtype and
    strides (NumPy's also its writeable flag where the function may write an argument: `writes`;
    torch's its device). Never an object's identity: a CuPy array can be reshaped in place
    (`a.shape = ...`)."""
    keys = _FAST_KEYS if writes else _READ_KEYS
    key = []
    for arg in args:
        make = keys.get(type(arg))
        if make is None:
            module = type(arg).__module__
            if module.startswith("cupy"):
                make = _FAST_KEYS[type(arg)] = _READ_KEYS[type(arg)] = _array_key
            elif module.startswith("torch") and getattr(arg, "is_cuda", False):
                make = _torch_key
            else:
                return None
        key.append(make(arg))
    return tuple(key)
