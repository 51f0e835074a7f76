"""Complex numbers' parts: np.real, np.imag, np.angle and an array's .real, .imag, .conj(), traced
as the op table's real, imag and conjugate rows."""
from __future__ import annotations

import numpy as np

from . import creation, ufuncs
from .context import current
from .layout import as_tracer
from .tracer import Tracer, fresh


def _part(op: str, x, what: str) -> Tracer:
    x = as_tracer(x, what)
    node = current().emit(op, [x.node])
    # NOTE: the real part of a Python complex is a Python float (weak, as NEP 50 treats it).
    return fresh(node, weak=float if x.weak is complex else None, scalar=x.scalar)


def real(x) -> Tracer:
    """np.real / .real: the real part; a real array's is the array itself (NumPy's view)."""
    x = as_tracer(x, "np.real")
    return _part("real", x, "np.real") if x.dtype.kind == "c" else x


def imag(x) -> Tracer:
    """np.imag / .imag: the imaginary part; zeros of a real array's dtype."""
    x = as_tracer(x, "np.imag")
    if x.dtype.kind == "c":
        return _part("imag", x, "np.imag")
    return creation.zeros_like(x)


def angle(z, deg=False) -> Tracer:
    """np.angle as NumPy writes it: arctan2(imag, real), in degrees with deg=True."""
    z = as_tracer(z, "np.angle")
    if z.dtype.kind == "c":
        result = ufuncs.apply("arctan2", imag(z), real(z))
    else:
        result = ufuncs.apply("arctan2", 0, z)
    return ufuncs.apply("multiply", result, 180 / np.pi) if deg else result


def conjugate(x) -> Tracer:
    return ufuncs.apply("conjugate", x)


def install() -> None:
    """The ndarray attributes and methods of complex parts on traced arrays."""
    Tracer.real = property(real)
    Tracer.imag = property(imag)
    Tracer.conj = conjugate
    Tracer.conjugate = conjugate


FUNCTIONS = {np.real: real, np.imag: imag, np.angle: angle}
