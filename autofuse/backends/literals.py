"""Python source literals that rebuild NumPy scalars and types exactly (bit for bit)."""
from __future__ import annotations

import numpy as np


def literal(value) -> str:
    if isinstance(value, type) and issubclass(value, np.generic):
        return f"np.{value.__name__}"
    if isinstance(value, (np.complexfloating, complex)):
        dtype = np.dtype(type(value)) if isinstance(value, np.generic) else np.dtype(np.complex128)
        return (f"np.{dtype.name}(complex(float.fromhex({float(value.real).hex()!r}), "
                f"float.fromhex({float(value.imag).hex()!r})))")
    if isinstance(value, (np.floating, float)):
        dtype = np.dtype(type(value)) if isinstance(value, np.generic) else np.dtype(np.float64)
        return f"np.{dtype.name}(float.fromhex({float(value).hex()!r}))"
    if isinstance(value, (np.bool_, bool)):
        return f"np.bool_({bool(value)})"
    if isinstance(value, (np.integer, int)):
        dtype = np.dtype(type(value)) if isinstance(value, np.generic) else np.dtype(np.int64)
        return f"np.{dtype.name}({int(value)})"
    raise TypeError(f"no literal for {value!r}")
