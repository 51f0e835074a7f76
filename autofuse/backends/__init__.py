"""Backends: each turns an Entry's graph into a program (a callable over input arrays)."""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentError

BACKENDS = ("numpy", "cpu", "cuda")


def choose_backend(requested: str, leaves) -> str:
    """The backend a call runs on: the requested one, or for "auto" the one its inputs live on."""
    if requested == "auto":
        return "numpy"
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
    raise ArgumentError(f"backend {name!r} is not available")
