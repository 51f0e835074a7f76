"""The jax.jit peer of a corpus program on the GPU, first call (compile + run) and warm median,
checked against NumPy: a loop program's `lax.fori_loop` twin (loops_jax.py), and any other program
as written with `np` bound to jax.numpy.

Run in the measurement's own process (measure.py), after autofuse and NumPy-on-CuPy; jax must not
preallocate the GPU's memory beside CuPy's pool (run with XLA_PYTHON_CLIENT_PREALLOCATE=false).
"""
from __future__ import annotations

import time
import types

import numpy as np



def time_jax(name: str, arguments: tuple, static: dict, judge, dtype: str, median_seconds,
             device) -> dict:
    """A loop program's `lax.fori_loop` twin: {"jax_first_s", "jax_s", "jax_correct", ...} or
    {"jax_error": why}."""
    try:
        from .loops_jax import TWIN_NAMES, twin
    except ImportError as error:
        return {"jax_error": f"{type(error).__name__}: {error}"}
    if name not in TWIN_NAMES:
        return {"jax_error": "no twin"}
    return _time_jitted(lambda jnp: twin(name), arguments, static, judge, dtype, median_seconds,
                        device)


def jax_numpy_twin(function, jnp):
    """The program itself with `np` bound to jax.numpy: jax.jit's reading of the same NumPy text
    (no hand-written twin). Programs that write into arrays fail under it, and the record says
    so."""
    names = dict(function.__globals__)
    names.update(np=jnp, numpy=jnp)
    twin = types.FunctionType(function.__code__, names, function.__name__, function.__defaults__,
                              function.__closure__)
    twin.__kwdefaults__ = function.__kwdefaults__
    return twin


def time_jax_numpy(function, arguments: tuple, static: dict, judge, dtype: str, median_seconds,
                   device) -> dict:
    """A program that is not a loop, run through jax.jit as written (jax_numpy_twin); the record
    says "jax_twin": "jax.numpy"."""
    return {**_time_jitted(lambda jnp: jax_numpy_twin(function, jnp), arguments, static, judge,
                           dtype, median_seconds, device), "jax_twin": "jax.numpy"}


def _time_jitted(make, arguments: tuple, static: dict, judge, dtype: str, median_seconds,
                 device) -> dict:
    """jax.jit of `make(jax.numpy)` on the arguments: first call, warm median, judge's verdict."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as error:
        return {"jax_error": f"{type(error).__name__}: {error}"}
    try:
        if np.dtype(dtype).itemsize == 8:
            jax.config.update("jax_enable_x64", True)
        compiled = jax.jit(make(jnp), static_argnames=tuple(static))
        on_device = [jax.device_put(a) if isinstance(a, np.ndarray) else a for a in arguments]
        begin = time.perf_counter()
        got = jax.block_until_ready(compiled(*on_device, **static))
        first = time.perf_counter() - begin
        result = judge(jax.tree_util.tree_map(np.asarray, got))
        seconds, _ = median_seconds(
            lambda: jax.block_until_ready(compiled(*on_device, **static)), device)
    except Exception as error:       # a peer that fails is recorded, the row still stands
        return {"jax_error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}
    return {"jax_first_s": first, "jax_s": seconds, "jax_correct": result["correct"],
            "jax_note": result["note"]}
