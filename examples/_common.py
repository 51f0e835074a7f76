"""Shared helpers for the examples: command line, array module, checking, timing and printing.

Every example takes the same flags:

    --small         tiny sizes (what the test suite runs: seconds, mostly compile time)
    --repeats N     timed repeats after the warm-up call (the median is printed)
    --device cpu    NumPy arrays, autofuse's CPU backend (the default)
    --device cuda   CuPy arrays, autofuse's CUDA backend; prints why and exits 0 where CuPy, a GPU
                    or the CUDA backend is missing
    --no-peers      time autofuse beside NumPy (CuPy) only, not beside torch and jax (_peers.py)

Each example defines its autofuse function and `main`, and beside them the peers' versions of the
function (`_NAME_torch`, `_NAME_jax`; see Peers), `PEERS` and `_make_inputs(dev, small)`; those
are _private so that `python -m autofuse examples/NAME.py` lists only the example's functions.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

# Run from a source checkout without installing: `python examples/softmax.py` finds ../autofuse.
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO not in sys.path:
    sys.path.insert(1, _REPO)

import autofuse  # noqa: E402


class Device:
    """The array module `xp` an example builds its inputs with, and how to synchronize it."""

    def __init__(self, name: str, xp):
        self.name = name
        self.xp = xp

    def asarray(self, a):
        """Move a NumPy array onto the device (a no-op on the CPU)."""
        return a if self.xp is np else self.xp.asarray(a)

    def synchronize(self):
        if self.xp is not np:
            self.xp.cuda.Device().synchronize()

    def wait(self, result):
        """Block until `result` is computed (median_time's `wait`): the device's work is done."""
        self.synchronize()


def to_numpy(value):
    """A NumPy copy of a NumPy, CuPy or jax array or a torch tensor (or a tuple of them)."""
    if isinstance(value, tuple):
        return tuple(to_numpy(v) for v in value)
    if callable(getattr(value, "detach", None)):          # a torch tensor, on the CPU or a GPU
        return value.detach().cpu().numpy()
    get = getattr(value, "get", None)
    return np.asarray(get() if callable(get) and not isinstance(value, np.ndarray) else value)


def parse_args(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--small", action="store_true", help="tiny sizes, for a quick check")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats (default 7; 2 with --small)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--no-peers", action="store_true",
                        help="do not time torch, torch.compile and jax.jit beside autofuse")
    args = parser.parse_args()
    if args.repeats is None:
        args.repeats = 2 if args.small else 7
    return args


def device(args: argparse.Namespace) -> Device:
    """The array module for --device; for cuda, exits 0 with a message where it cannot run."""
    if args.device == "cpu":
        return Device("cpu", np)
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device")
    except Exception as exc:   # ImportError, or CuPy without a driver/GPU
        print(f"--device cuda: CuPy or a GPU is unavailable ({type(exc).__name__}: {exc}); skipping")
        raise SystemExit(0)
    try:
        from autofuse.backends import get_backend
        get_backend("cuda")
    except Exception as exc:
        print(f"--device cuda: the autofuse CUDA backend is unavailable ({exc}); skipping")
        raise SystemExit(0)
    # backend="auto" (the default of @autofuse.jit) reads $AUTOFUSE_BACKEND on every call.
    os.environ["AUTOFUSE_BACKEND"] = "cuda"
    return Device("cuda", cupy)


def tolerance(dtype) -> tuple[float, float]:
    """(rtol, atol) that fit a dtype: exact for integers and bools, a few hundred ulps for floats
    (fused code may sum and round in another order than NumPy's pairwise loops)."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        return 0.0, 0.0
    eps = float(np.finfo(dtype).eps)
    return 500 * eps, 500 * eps


def mismatch(got, want, name: str = "result", rtol=None, atol=None) -> str | None:
    """Why `got` is not NumPy's `want` (shape, dtype, or values beyond the tolerance: by default
    `tolerance(dtype)`), or None where it matches. Tuples are compared element by element."""
    got, want = to_numpy(got), to_numpy(want)
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            return f"{name}: {type(got).__name__} where NumPy returns a tuple of {len(want)}"
        problems = (mismatch(g, w, f"{name}[{i}]", rtol, atol)
                    for i, (g, w) in enumerate(zip(got, want)))
        return next((problem for problem in problems if problem), None)
    if got.shape != want.shape:
        return f"{name}: shape {got.shape} != NumPy's {want.shape}"
    if got.dtype != want.dtype:
        return f"{name}: dtype {got.dtype} != NumPy's {want.dtype}"
    default_rtol, default_atol = tolerance(want.dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        error = np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))
        return f"{name}: max abs error {error:.2e} beyond rtol {rtol:.0e}, atol {atol:.0e}"
    return None


def check(got, want, name: str = "result", rtol=None, atol=None) -> None:
    """Assert autofuse's result matches NumPy's (`mismatch` finds nothing) and print how closely."""
    got, want = to_numpy(got), to_numpy(want)
    problem = mismatch(got, want, name, rtol, atol)
    assert problem is None, problem
    if isinstance(want, tuple):
        for i, (g, w) in enumerate(zip(got, want)):
            check(g, w, f"{name}[{i}]", rtol, atol)
        return
    default_rtol, default_atol = tolerance(want.dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    error = np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))) if got.size else 0.0
    print(f"check {name}: {got.dtype}{list(got.shape)} matches NumPy "
          f"(max abs error {error:.2e}, rtol {rtol:.0e}, atol {atol:.0e})")


class Peers:
    """The peers' versions of an example's `function` (the autofuse one), which _peers.py times
    beside it: `torch(torch, *args)` on torch tensors and `jax(jnp, *args)` on jax arrays compute
    what `function(*args)` computes, in the peer's own ops (one function may serve both where torch
    and jax.numpy spell every op alike).

    rtol, atol: the tolerance the example checks autofuse with. matmul: the function multiplies
    matrices, so jax runs them at precision "highest": float32, as torch and CuPy do by default,
    where jax's GPU default is TF32. compare(got, want, args): why a result (NumPy arrays) is not
    NumPy's `want` on the NumPy `args`, or None; by default `mismatch` with rtol, atol.
    """

    def __init__(self, function, *, torch, jax, rtol=None, atol=None, matmul: bool = False,
                 compare=None):
        self.function = function
        self.torch = torch
        self.jax = jax
        self.rtol, self.atol = rtol, atol
        self.matmul = matmul
        self.compare = compare

    def mismatch(self, got, want, numpy_args) -> str | None:
        """Why a peer's result `got` (NumPy arrays) is not NumPy's `want`, or None."""
        if self.compare is not None:
            return self.compare(got, want, numpy_args)
        return mismatch(got, want, rtol=self.rtol, atol=self.atol)


def numpy_reference(jitted, *args):
    """What NumPy computes: the undecorated function (`jitted.fn`) on NumPy copies of the inputs."""
    return jitted.fn(*(to_numpy(a) if hasattr(a, "shape") else a for a in args))


def median_time(fn, *args, repeats: int = 7, wait=None) -> float:
    """Median wall time of fn(*args) in seconds, after one warm-up call. `wait(result)` blocks
    until a call's result is computed (a device synchronize; jax's block_until_ready); None for
    libraries that compute before they return."""
    wait = wait if wait is not None else (lambda result: None)
    wait(fn(*args))
    times = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        wait(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _format_seconds(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.3f} s "


def print_summary(jitted, *args, full_text: bool = False, **kwargs) -> None:
    """The fused program for these arguments: its summary, and with full_text its whole text."""
    lowered = jitted.lower(*args, **kwargs)
    if full_text:
        print(lowered.as_text("fused"))
        print()
    s = lowered.fused.summary()
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(s["kinds"].items()))
    print(f"fused program ({lowered.backend} backend): {s['ops']} ops in {s['groups']} kernel(s) "
          f"({kinds}); bytes moved {s['bytes_fused'] / 2**20:.2f} MiB fused vs "
          f"{s['bytes_unfused'] / 2**20:.2f} MiB unfused ({s['ratio']:.2f}x less)")


def compare_times(jitted, *args, repeats: int, dev: Device, peers=None) -> None:
    """Time the jitted function beside the plain one (`jitted.fn`: NumPy on the CPU, CuPy on the
    GPU) and beside the peers' versions (`peers`, a Peers; None with --no-peers), all on the same
    input values: the median of `repeats` calls after warm-up, one line per system."""
    fused = median_time(jitted, *args, repeats=repeats, wait=dev.wait)
    plain = median_time(jitted.fn, *args, repeats=repeats, wait=dev.wait)
    rows = [("autofuse", fused, ""), ("numpy" if dev.xp is np else "cupy", plain, "")]
    if peers is None:
        rows.append(("peers", "torch, torch.compile and jax.jit not timed (--no-peers)", ""))
    else:
        import _peers                          # imports torch and jax in its turn
        rows += _peers.timings(peers, args, numpy_reference(jitted, *args), dev, repeats)
    print(f"time (median of {repeats} calls after warm-up; ratio = the system's time / autofuse's, "
          f"above 1 means autofuse is faster):")
    for name, result, note in rows:
        if isinstance(result, str):            # why the system was not timed
            print(f"  {name:14s} {result}")
            continue
        ratio = "" if name == "autofuse" else f"{result / fused:7.2f}x"
        print(f"  {name:14s} {_format_seconds(result)} {ratio:8s}  {note}".rstrip())


def header(title: str, dev: Device, sizes: str) -> None:
    print(f"== {title} [{dev.name}] {sizes}")
