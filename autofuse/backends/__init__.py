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
    GPU), or None where they can (a GPU, or numba's CUDA simulator). Probed once per process.

    numba itself is not imported here (about 450 ms): a new process whose kernels are all in the
    disk cache never needs it. Where numba-cuda is installed but fails on import, the first
    compilation says so (cuda.compile_ptx raises BackendError)."""
    missing = _numba_cuda_missing()
    if missing:
        return f"numba-cuda cannot be imported ({missing})"
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        return None
    from .cuda.runtime.driver import available
    problem = available()            # no cuda.bindings, no driver, no GPU
    return None if problem is None else f"no usable CUDA driver or GPU ({problem})"


def _numba_cuda_missing() -> str | None:
    """Why numba-cuda is not importable, found without importing it; None where it looks fine."""
    import importlib.util
    import sys
    if "numba.cuda" in sys.modules:
        return None if sys.modules["numba.cuda"] is not None else "ImportError: numba.cuda is None"
    for name in ("numba", "numba_cuda"):
        try:
            if importlib.util.find_spec(name) is None:
                return f"ModuleNotFoundError: no module named {name!r}"
        except (ImportError, ValueError) as error:
            return f"{type(error).__name__}: {error}"
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


def dynamic_backend(name: str):
    """The module building shape-class programs on backend `name` (autofuse/dynamic/), or None
    where its kernels take no sizes as arguments (every shape compiles anew there)."""
    if name == "cpu":
        from .cpu import dynamic
        return dynamic
    if name == "cuda":
        from .cuda import dynamic as cuda_dynamic
        return cuda_dynamic
    return None
