"""The peers the examples time beside autofuse: torch eager, torch.compile and jax.jit.

Each example writes its function again in torch's ops and in jax.numpy's (a `_common.Peers`).
Here they run on the example's input values, on the CPU or, with --device cuda, on the GPU; this
module, torch and jax are imported only when timing. Each peer's result is checked against
NumPy's before it is timed, and a peer that is not installed, fails or mismatches says so in its
line instead of a time.
"""
from __future__ import annotations

import os
from typing import Callable, NamedTuple

import numpy as np

import _common


class System(NamedTuple):
    """One peer ready to call: fn(*args), `wait(result)` blocks until it is computed (None:
    nothing to wait for), `note` says how it runs where that matters to the comparison."""
    name: str
    fn: Callable
    args: tuple
    wait: Callable | None
    note: str


def timings(peers: _common.Peers, args, want, dev: _common.Device, repeats: int,
            only=None) -> list:
    """(name, seconds or why not timed, note) for each peer, run on `args` (the example's arrays
    on `dev`, and scalars) and checked against NumPy's `want` first. `only`: the names of the
    peers to run (by default all: torch, torch.compile, jax.jit)."""
    rows = []
    for names, setup in ((("torch", "torch.compile"), _torch_systems),
                         (("jax.jit",), _jax_systems)):
        names = [name for name in names if only is None or name in only]
        if not names:
            continue
        try:
            systems = setup(peers, args, want, dev)
        except ImportError as exc:
            rows.append((names[0], f"not installed ({_reason(exc)}); "
                         f"{' and '.join(names)} skipped", ""))
            continue
        except Exception as exc:          # a broken install, a jax without a GPU backend...
            rows.append((names[0], f"fails to start ({_reason(exc)}); "
                         f"{' and '.join(names)} skipped", ""))
            continue
        rows += [(s.name, measure(peers, s, args, want, repeats), s.note)
                 for s in systems if s.name in names]
    return rows


def measure(peers: _common.Peers, system: System, args, want, repeats: int):
    """Seconds per call (median), or why not: the first call's result is checked against NumPy's
    `want` first (for torch.compile and jax.jit it is also the call that compiles)."""
    wait = system.wait if system.wait is not None else (lambda result: None)
    try:
        got = system.fn(*system.args)
        wait(got)
        numpy_args = tuple(_common.to_numpy(a) if _is_array(a) else a for a in args)
        problem = peers.mismatch(_common.to_numpy(got), want, numpy_args)
        if problem:
            return f"mismatch ({problem}); not timed"
        return _common.median_time(system.fn, *system.args, repeats=repeats, wait=system.wait)
    except Exception as exc:
        return f"fails ({_reason(exc)})"


def _torch_systems(peers: _common.Peers, args, want, dev) -> list[System]:
    """torch eager and torch.compile (default mode) on torch tensors of the example's arrays: CPU
    tensors sharing the NumPy arrays' memory, or CUDA tensors sharing the CuPy arrays'."""
    import torch
    where = "cuda" if dev.name == "cuda" else "cpu"
    tensors = tuple(torch.as_tensor(a, device=where) if _is_array(a) else a for a in args)

    def eager(*tensor_args):
        return peers.torch(torch, *tensor_args)

    # torch launches CUDA work asynchronously on its own stream; on the CPU it is done on return.
    wait = (lambda result: torch.cuda.synchronize()) if where == "cuda" else None
    return [System("torch", eager, tensors, wait, ""),
            System("torch.compile", torch.compile(eager), tensors, wait, "")]


def _jax_systems(peers: _common.Peers, args, want, dev) -> list[System]:
    """jax.jit on jax arrays holding the example's values, committed to jax's CPU device or its
    GPU, with 64-bit types enabled where NumPy's inputs or results are 64-bit and matmul precision
    "highest" where the example multiplies matrices. Python ints are static (loop counts)."""
    # NOTE: by default jax takes 75% of the GPU's memory when it starts; the CuPy pool and torch's
    # allocator are holding memory in the same process, so allocate on demand instead.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp
    notes = []
    leaves = list(args) + list(want if isinstance(want, tuple) else (want,))
    if any(_is_array(a) and np.dtype(a.dtype) in (np.dtype(np.float64), np.dtype(np.int64))
           for a in leaves):
        jax.config.update("jax_enable_x64", True)      # process-wide; jax is float32-only without
        notes.append("x64 enabled (64-bit like NumPy)")
    if peers.matmul:
        jax.config.update("jax_default_matmul_precision", "highest")
        notes.append("matmul precision highest (float32, not TF32)")
    device = jax.devices("gpu" if dev.name == "cuda" else "cpu")[0]
    arrays = tuple(jax.device_put(_common.to_numpy(a), device) if _is_array(a) else a for a in args)
    static = tuple(i for i, a in enumerate(args) if isinstance(a, int))

    def body(*jax_args):
        return peers.jax(jnp, *jax_args)

    return [System("jax.jit", jax.jit(body, static_argnums=static), arrays,
                   jax.block_until_ready, "; ".join(notes))]


def _is_array(value) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def _reason(exc: BaseException) -> str:
    """An exception as one short line: its type and the first line of its message (the first two
    where the first only introduces the next, as torch.compile's "backend='inductor' raised:")."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    message = " ".join(lines[:2]) if lines and lines[0].endswith(":") else "".join(lines[:1])
    if len(message) > 160:
        message = message[:157] + "..."
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
