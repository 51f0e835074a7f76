"""The jax.jit peer of a loop program on the GPU: its `lax.fori_loop` twin (loops_jax.py) compiled
and run on the same inputs, first call (compile + run) and warm median, checked against NumPy.

Run in the measurement's own process (measure.py), after autofuse and NumPy-on-CuPy; jax must not
preallocate the GPU's memory beside CuPy's pool (run with XLA_PYTHON_CLIENT_PREALLOCATE=false).
"""
from __future__ import annotations

import time

import numpy as np

from .compare import compare


def time_jax(name: str, arguments: tuple, static: dict, want, dtype: str, median_seconds,
             device) -> dict:
    """{"jax_first_s", "jax_s", "jax_correct"} or {"jax_error": why}."""
    try:
        import jax
        from .loops_jax import TWIN_NAMES, twin
    except ImportError as error:
        return {"jax_error": f"{type(error).__name__}: {error}"}
    if name not in TWIN_NAMES:
        return {"jax_error": "no twin"}
    try:
        if np.dtype(dtype).itemsize == 8:
            jax.config.update("jax_enable_x64", True)
        function = jax.jit(twin(name), static_argnames=tuple(static))
        on_device = [jax.device_put(a) if isinstance(a, np.ndarray) else a for a in arguments]
        begin = time.perf_counter()
        got = jax.block_until_ready(function(*on_device, **static))
        first = time.perf_counter() - begin
        result = compare(jax.tree_util.tree_map(np.asarray, got), want[0], dtype)
        seconds, _ = median_seconds(
            lambda: jax.block_until_ready(function(*on_device, **static)), device)
    except Exception as error:       # a peer that fails is recorded, the row still stands
        return {"jax_error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}
    return {"jax_first_s": first, "jax_s": seconds, "jax_correct": result["correct"],
            "jax_note": result["note"]}
