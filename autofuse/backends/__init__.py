"""Backends: each turns an Entry's graph into a program (a callable over input arrays)."""
from __future__ import annotations

import os

from ..errors import ArgumentError

BACKENDS = ("numpy", "cpu", "cuda")


def choose_backend(requested: str, leaves) -> str:
    """The backend a call runs on: the requested one; for "auto", $AUTOFUSE_BACKEND if set, else
    the one the inputs live on (NumPy arrays: "cpu")."""
    if requested == "auto":
        on_device = any(hasattr(leaf, "__cuda_array_interface__") for leaf in leaves)
        requested = "cuda" if on_device else (os.environ.get("AUTOFUSE_BACKEND") or "cpu")
    if requested not in BACKENDS:
        raise ArgumentError(f"unknown backend {requested!r}; choose one of {BACKENDS} or 'auto'")
    return requested


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
