"""The vector-Jacobian rule of scans: cumsum's is the cotangent summed from the end (a reversed
cumsum); cumprod's, y_j / x_i summed over j >= i (so a zero in x gives a non-finite gradient, as
the division does); maximum / minimum / logical scans have none written (an error naming them)."""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError, where
from ..trace.tracer import Tracer, fresh
from .complexes import conjugate


def _from_end(g: Tracer, axis: int) -> Tracer:
    """sum_{j >= i} g_j along `axis`."""
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


def scan_rule(node, g):
    (x,) = node.inputs
    axis, ufunc = node.attrs["axis"], node.attrs["ufunc"]
    if ufunc == "add":
        return [_from_end(g, axis)]
    if ufunc == "multiply":
        return [_from_end(g * conjugate(fresh(node)), axis) / conjugate(fresh(x))]
    raise UnsupportedError(f"autofuse.grad: no gradient rule for np.{ufunc}.accumulate (made at "
                           f"{node.origin or 'an unknown line'}){where()}")
