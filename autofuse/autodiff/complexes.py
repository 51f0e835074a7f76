"""The convention for complex values on a gradient's path: a complex value's cotangent is
dL/d(real part) + i dL/d(imaginary part) of the real loss L (torch's, the conjugate of jax's).
An op analytic in its operand then passes g times its conjugated derivative back: multiply's
operands get g conj(b) and g conj(a), matmul's g B^H and A^H g, exp's g conj(exp(z)) (ir/ops.py's
vjp_complex spells the elementwise ops'); a real operand keeps the real part of what it is given
(reverse._fit's cast), which is its own cotangent."""
from __future__ import annotations

import numpy as np

from ..trace.tracer import Tracer


def conjugate(value: Tracer) -> Tracer:
    """A complex value's conjugate, a real one itself."""
    return np.conjugate(value) if value.dtype.kind == "c" else value
