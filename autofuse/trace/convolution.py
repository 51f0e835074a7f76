"""One-dimensional discrete convolution and correlation: np.convolve and np.correlate.

Both are one sliding product: out[k] = sum_j x[k + j] * y[j] over x zero-padded on each side by
what the mode asks (NumPy's `full`, `same`, `valid`). The windows are a gather of x at
`k + j` (computed indices, never a constant table), multiplied by y and summed along j: one
row-reduction kernel that reads x once per window element, the O(n m) work of NumPy's direct
method. NumPy's conventions: np.convolve swaps its operands when v is the longer and
reverses v; np.correlate conjugates v and, when v is the longer, swaps them and reverses the
result.
"""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentError, NumPyValueError, where
from . import creation
from .gather import emit
from .layout import as_tracer, concatenate, reshape

_MODES = ("valid", "same", "full")


def _mode(mode, what: str) -> str:
    names = {0: "valid", 1: "same", 2: "full"}
    mode = names.get(mode, mode) if isinstance(mode, int) else mode
    if mode not in _MODES:
        raise ArgumentError(f"{what}: mode must be one of 'valid', 'same' or 'full' (got {mode!r})"
                            f"{where()}")
    return mode


def _operands(a, v, what: str):
    a, v = as_tracer(a, what), as_tracer(v, what)
    a = reshape(a, (a.size,), what) if a.ndim == 0 else a
    v = reshape(v, (v.size,), what) if v.ndim == 0 else v
    if a.ndim != 1 or v.ndim != 1:
        raise NumPyValueError(f"{what}: object too deep for desired array: a is {a.shape}, v is "
                              f"{v.shape}; both must be 1-d{where()}")
    if a.size == 0 or v.size == 0:
        raise NumPyValueError(f"{what}: {'a' if a.size == 0 else 'v'} cannot be empty{where()}")
    dtype = np.result_type(a.dtype, v.dtype)
    if dtype == np.bool_:
        dtype = np.dtype(np.bool_)
    return a.astype(dtype, copy=False), v.astype(dtype, copy=False)


def sliding(x, y, mode: str):
    """out[k] = sum_j xpad[k + j] * y[j], len(x) >= len(y), x padded by NumPy's rule for
    `mode`."""
    n, m = x.shape[0], y.shape[0]
    left = {"valid": 0, "same": m // 2, "full": m - 1}[mode]
    right = {"valid": 0, "same": m - 1 - m // 2, "full": m - 1}[mode]
    parts = [creation.zeros((left,), x.dtype)] if left else []
    parts += [x] + ([creation.zeros((right,), x.dtype)] if right else [])
    padded = concatenate(parts, 0, "padding") if len(parts) > 1 else x
    length = n + left + right - m + 1
    starts = reshape(creation.arange(length, dtype=np.int64), (length, 1), "windows")
    offsets = reshape(creation.arange(m, dtype=np.int64), (1, m), "windows")
    windows = emit(padded, (0,), [starts + offsets], (), (length, m))
    if x.dtype == np.bool_:     # NumPy's bool correlation: any window with a pair both True
        return np.any(windows & y, axis=1)
    return np.sum(windows * y, axis=1, dtype=x.dtype)


def convolve(a, v, mode="full"):
    """np.convolve(a, v, mode)."""
    what = "np.convolve"
    mode = _mode(mode, what)
    a, v = _operands(a, v, what)
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    return sliding(a, v[::-1], mode)


def correlate(a, v, mode="valid"):
    """np.correlate(a, v, mode): the cross-correlation with v conjugated."""
    what = "np.correlate"
    mode = _mode(mode, what)
    a, v = _operands(a, v, what)
    if np.dtype(v.dtype).kind == "c":
        v = np.conjugate(v)
    if v.shape[0] > a.shape[0]:
        return sliding(v, a, mode)[::-1]
    return sliding(a, v, mode)


FUNCTIONS = {np.convolve: convolve, np.correlate: correlate}
