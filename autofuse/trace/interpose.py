"""NumPy's creation functions (np.zeros, np.arange, np.asarray, ...) return traced arrays while a
trace runs on this thread and the call comes from user code; everywhere else they are NumPy's own.

NumPy does not dispatch these through __array_function__ (they take no array), yet traced code
fills `np.zeros(n)` by slice assignment all the time, so the module attributes are swapped for
the duration of a trace (counted, so concurrent traces in several threads nest correctly).
np.vectorize objects, made inside the traced function or before it, are called through NumPy's
class's __call__, which converts its arguments to arrays: that method is swapped the same way,
for calls with traced arguments (trace/vectorize.py).
"""
from __future__ import annotations

import contextlib
import sys
import threading

import numpy as np

from . import creation, vectorize
from .context import current
from .tracer import Tracer

_HANDLERS = {
    "zeros": creation.zeros, "ones": creation.ones, "empty": creation.empty, "full": creation.full,
    "arange": creation.arange, "linspace": creation.linspace, "eye": creation.eye,
    "identity": creation.identity,
}
_CONVERTERS = ("array", "asarray", "asanyarray", "ascontiguousarray")
_ORIGINALS = {name: getattr(np, name) for name in tuple(_HANDLERS) + _CONVERTERS}
_lock = threading.Lock()
_active = 0


def _from_user(frame) -> bool:
    module = frame.f_globals.get("__name__", "")
    return not (module.startswith("autofuse") or module.startswith("numpy"))


def _holds_tracer(value) -> bool:
    if isinstance(value, Tracer):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_tracer(v) for v in value)
    return False


def _creator(name):
    original, handler = _ORIGINALS[name], _HANDLERS[name]

    def create(*args, **kwargs):
        if current() is not None and _from_user(sys._getframe(1)):
            return handler(*args, **kwargs)
        return original(*args, **kwargs)
    create.__wrapped__ = original
    create.__name__ = name
    return create


def _converter(name):
    original = _ORIGINALS[name]

    def convert(obj, dtype=None, *args, **kwargs):
        if current() is not None and _holds_tracer(obj):
            copy = name == "array" and kwargs.get("copy", True) is not False
            return creation.array(obj, dtype, copy=copy)
        return original(obj, dtype, *args, **kwargs)
    convert.__wrapped__ = original
    convert.__name__ = name
    return convert


_VECTORIZE_CALL = np.vectorize.__call__


def _vectorized_call(self, *args, **kwargs):
    if current() is not None and self.pyfunc is not np._NoValue and (
            _holds_tracer(args) or _holds_tracer(tuple(kwargs.values()))):
        return vectorize.call(self, args, kwargs)
    return _VECTORIZE_CALL(self, *args, **kwargs)


_REPLACEMENTS = {**{name: _creator(name) for name in _HANDLERS},
                 **{name: _converter(name) for name in _CONVERTERS}}


@contextlib.contextmanager
def numpy_creation_traced():
    global _active
    with _lock:
        _active += 1
        if _active == 1:
            for name, replacement in _REPLACEMENTS.items():
                setattr(np, name, replacement)
            np.vectorize.__call__ = _vectorized_call
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                for name, original in _ORIGINALS.items():
                    setattr(np, name, original)
                np.vectorize.__call__ = _VECTORIZE_CALL
