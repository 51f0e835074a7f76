"""Shared helpers for the examples: command line, array module, checking, timing and printing.

Every example takes the same flags:

    --small         tiny sizes (what the test suite runs: seconds, mostly compile time)
    --repeats N     timed repeats after the warm-up call (the median is printed)
    --device cpu    NumPy arrays, autofuse's CPU backend (the default)
    --device cuda   CuPy arrays, autofuse's CUDA backend; prints why and exits 0 where CuPy, a GPU
                    or the CUDA backend is missing
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


def to_numpy(value):
    """A NumPy copy of a NumPy or CuPy array (or a tuple of them)."""
    if isinstance(value, tuple):
        return tuple(to_numpy(v) for v in value)
    get = getattr(value, "get", None)
    return np.asarray(get() if callable(get) and not isinstance(value, np.ndarray) else value)


def parse_args(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--small", action="store_true", help="tiny sizes, for a quick check")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats (default 7; 2 with --small)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
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


def check(got, want, name: str = "result", rtol=None, atol=None) -> None:
    """Assert autofuse's result matches NumPy's: same shape and dtype, values within tolerance."""
    got, want = to_numpy(got), to_numpy(want)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), (name, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            check(g, w, f"{name}[{i}]", rtol, atol)
        return
    assert got.shape == want.shape, f"{name}: shape {got.shape} != NumPy's {want.shape}"
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype} != NumPy's {want.dtype}"
    default_rtol, default_atol = tolerance(want.dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
    error = np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))) if got.size else 0.0
    print(f"check {name}: {got.dtype}{list(got.shape)} matches NumPy "
          f"(max abs error {error:.2e}, rtol {rtol:.0e}, atol {atol:.0e})")


def numpy_reference(jitted, *args):
    """What NumPy computes: the undecorated function (`jitted.fn`) on NumPy copies of the inputs."""
    return jitted.fn(*(to_numpy(a) if hasattr(a, "shape") else a for a in args))


def median_time(fn, *args, repeats: int = 7, dev: Device | None = None) -> float:
    """Median wall time of fn(*args) in seconds, after one warm-up call."""
    sync = dev.synchronize if dev is not None else (lambda: None)
    fn(*args)
    sync()
    times = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        fn(*args)
        sync()
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


def compare_times(jitted, *args, repeats: int, dev: Device, plain=None) -> None:
    """Time the jitted function beside the plain function (`jitted.fn`, or `plain`) on the same
    arrays (NumPy on the CPU, CuPy on the GPU): median of `repeats` calls after a warm-up call."""
    plain = plain if plain is not None else jitted.fn
    fused = median_time(jitted, *args, repeats=repeats, dev=dev)
    baseline = median_time(plain, *args, repeats=repeats, dev=dev)
    label = "numpy" if dev.xp is np else "cupy"
    print(f"time (median of {repeats}): autofuse {_format_seconds(fused)} | {label:5s} "
          f"{_format_seconds(baseline)} | speedup {baseline / fused:5.2f}x")


def header(title: str, dev: Device, sizes: str) -> None:
    print(f"== {title} [{dev.name}] {sizes}")
