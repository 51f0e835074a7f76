"""Backends: each turns an Entry's graph into a program (a callable over input arrays)."""
from __future__ import annotations

import functools
import os
import warnings

from ..errors import ArgumentError, BackendError, where

BACKENDS = ("numpy", "cpu", "cuda")


class GpuUnavailableWarning(RuntimeWarning):
    """$AUTOFUSE_BACKEND asks for CUDA, which cannot run here; calls run on the CPU backend."""


def choose_backend(requested: str, leaves, running: bool = True) -> str:
    """The backend a call runs on: the requested one; for "auto", $AUTOFUSE_BACKEND if set, else
    the one the inputs live on (NumPy arrays: "cpu").

    When `running` (a call, not `lower()`), CUDA must be usable: an explicit backend="cuda" or a
    device array without it is a BackendError naming the cause; $AUTOFUSE_BACKEND=cuda without it
    falls back to the CPU backend with one warning saying why."""
    if requested == "auto":
        on_device = any(hasattr(leaf, "__cuda_array_interface__") for leaf in leaves)
        if on_device:
            requested = "cuda"
        else:
            requested = os.environ.get("AUTOFUSE_BACKEND") or "cpu"
            if requested == "cuda" and running and cuda_problem() is not None:
                _warn_cpu_fallback(cuda_problem())
                return "cpu"
    if requested not in BACKENDS:
        raise ArgumentError(f"unknown backend {requested!r}; choose one of {BACKENDS} or 'auto'")
    if requested == "cuda" and running and cuda_problem() is not None:
        raise BackendError(f"the CUDA backend cannot run: {cuda_problem()}; use backend='cpu' "
                           f"(NumPy arrays) or fix the CUDA installation{where()}")
    return requested


@functools.cache
def cuda_problem() -> str | None:
    """Why CUDA kernels cannot run in this process (numba-cuda missing or broken, no driver or
    GPU), or None where they can (a GPU, or numba's CUDA simulator). Probed once per process."""
    try:
        from numba import cuda
    except Exception as error:       # ImportError, or a broken install failing on import
        return f"numba-cuda cannot be imported ({type(error).__name__}: {error})"
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        return None
    try:
        from cuda.core import Device
        Device()
    except Exception as error:
        return f"no usable CUDA driver or GPU ({type(error).__name__}: {error})"
    if not cuda.is_available():
        return "numba-cuda finds no usable CUDA GPU"
    return None


@functools.cache
def _warn_cpu_fallback(reason: str) -> None:
    warnings.warn(f"autofuse: AUTOFUSE_BACKEND=cuda, but {reason}; running on the CPU backend",
                  GpuUnavailableWarning, stacklevel=5)


def get_backend(name: str):
    if name == "numpy":
        from . import reference
        return reference
    if name == "cpu":
        from . import cpu
        return cpu
    if name == "cuda":
        from . import cuda
        return cuda
    raise ArgumentError(f"backend {name!r} is not available")
