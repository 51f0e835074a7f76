"""Sorts on the GPU: autofuse beside CuPy, torch eager, torch.compile and jax.jit (float32).

    python benchmarks/sorts.py --out benchmarks/results/sorts.json
    python benchmarks/sorts.py --scale 16          # 16x smaller arrays (a quick run)

Workloads: row sorts of 256 .. 4096 elements over 2^24 elements in all (sorted in shared memory
by autofuse's bitonic kernel), a stable argsort of rows, the median of each row of x * 2 (one
fused kernel in autofuse: the producer, the sort and the interpolation), and one long sort of 10M
(autofuse hands CuPy arrays to cupy.sort: runtime/library_sort.py). First every system's result
is checked against NumPy (and autofuse's kernels on NaN, -0.0, ties, other dtypes and axes);
then each workload's systems are timed in interleaved rounds: a round runs one synchronized batch
of calls of each system, in an order rotated from round to round; a system's time is the median
over rounds of batch time / calls. Results go to --out as JSON, with the table printed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")   # jax shares the GPU

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import autofuse  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rounds import time_rounds  # noqa: E402

SYSTEMS = ("autofuse", "cupy", "torch", "torch.compile", "jax.jit")
START = time.perf_counter()


def workloads(scale: int):
    """(name, kind, shape): kind sort, argsort (stable), median (of x * 2 along the last axis)."""
    total = (1 << 24) // scale
    found = [(f"sort rows {total // n}x{n}", "sort", (total // n, n)) for n in (256, 1024, 4096)]
    found.append((f"argsort rows {total // 1024}x1024 (stable)", "argsort", (total // 1024, 1024)))
    found.append((f"median rows of x*2, {total // 1024}x1024", "median", (total // 1024, 1024)))
    found.append((f"sort 1-D, {10_000_000 // scale}", "sort", (10_000_000 // scale,)))
    return found


def numpy_fn(kind):
    if kind == "sort":
        return lambda x: np.sort(x, axis=-1)
    if kind == "argsort":
        return lambda x: np.argsort(x, axis=-1, kind="stable")
    return lambda x: np.median(x * 2, axis=-1)


def system_fn(system, kind):
    """The workload written for `system` (raises ImportError where it is missing)."""
    if system == "autofuse":
        return autofuse.jit(numpy_fn(kind))
    if system == "cupy":
        import cupy
        return {"sort": lambda x: cupy.sort(x, axis=-1),
                "argsort": lambda x: cupy.argsort(x, axis=-1),
                "median": lambda x: cupy.median(x * 2, axis=-1)}[kind]
    if system.startswith("torch"):
        import torch

        def median(x):
            s = torch.sort(x * 2, dim=-1).values
            n = s.shape[-1]
            return (s[..., (n - 1) // 2] + s[..., n // 2]) / 2
        fn = {"sort": lambda x: torch.sort(x, dim=-1).values,
              "argsort": lambda x: torch.sort(x, dim=-1, stable=True).indices,
              "median": median}[kind]
        return torch.compile(fn) if system == "torch.compile" else fn
    import jax
    import jax.numpy as jnp
    return jax.jit({"sort": lambda x: jnp.sort(x, axis=-1),
                    "argsort": lambda x: jnp.argsort(x, axis=-1, stable=True),
                    "median": lambda x: jnp.median(x * 2, axis=-1)}[kind])


def device_copy(system, x):
    if system in ("autofuse", "cupy"):
        import cupy
        return cupy.asarray(x)
    if system.startswith("torch"):
        import torch
        return torch.from_numpy(x).cuda()
    import jax
    return jax.device_put(x)


def to_host(value):
    if hasattr(value, "get"):
        return value.get()
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def sync(value):
    if hasattr(value, "block_until_ready"):
        value.block_until_ready()
    else:
        import cupy
        cupy.cuda.Device().synchronize()


def agrees(kind, got, want) -> bool:
    if kind == "median":
        return got.shape == want.shape and np.allclose(got, want, rtol=1e-6, atol=1e-6,
                                                       equal_nan=True)
    return got.shape == want.shape and np.array_equal(got.astype(want.dtype), want)


def kernel_checks() -> list[str]:
    """autofuse's sort kernels on the GPU against NumPy: NaN, -0.0, ties, dtypes, axes, the
    library sort of torch tensors and the global-scratch kernel of numba device arrays."""
    import cupy
    rng = np.random.default_rng(7)
    x = rng.integers(-3, 4, (300, 777)).astype(np.float32)
    x[rng.random(x.shape) < 0.01] = np.nan
    x[rng.random(x.shape) < 0.01] = -0.0
    cases = [
        ("f32 rows NaN/-0/ties", lambda a: (np.sort(a), np.argsort(a, kind="stable")), x),
        ("f32 axis 0", lambda a: np.argsort(a, axis=0, kind="stable"), x),
        ("f32 median, quantiles", lambda a: (np.median(a, axis=1), np.quantile(a, [0.1, 0.9], axis=1)), x),
        ("f64 rows 4096", lambda a: np.argsort(a, kind="stable"), rng.standard_normal((64, 4096))),
        ("i32 rows", lambda a: np.argsort(a, kind="stable"), rng.integers(0, 9, (100, 1000)).astype(np.int32)),
        ("bool rows", lambda a: np.argsort(a, kind="stable"), rng.random((50, 300)) < 0.5),
        ("u8 long rows (library)", lambda a: np.argsort(a, kind="stable"), rng.integers(0, 9, (3, 9000)).astype(np.uint8)),
        ("f32 long rows NaN (library)", lambda a: (np.sort(a), np.argsort(a, kind="stable")), x.reshape(-1)[:5 * 9000].reshape(5, 9000)),
    ]
    lines = []
    for name, fn, host in cases:
        want = fn(host)
        want = want if isinstance(want, tuple) else (want,)
        for kind in ("cupy", "torch"):
            if kind == "torch" and "library" not in name:
                continue
            try:
                device = device_copy("cupy" if kind == "cupy" else "torch", host)
                got = autofuse.jit(fn)(device)
                got = got if isinstance(got, tuple) else (got,)
                ok = all(np.allclose(to_host(g), w, equal_nan=True, rtol=1e-6, atol=0) and
                         to_host(g).dtype == w.dtype for g, w in zip(got, want))
                lines.append(f"{name} [{kind}]: {'ok' if ok else 'MISMATCH'}")
            except Exception as error:        # reported, and the run goes on to the timings
                lines.append(f"{name} [{kind}]: ERROR {type(error).__name__}: {str(error)[:300]}")
    try:
        from numba import cuda
        host = x.reshape(-1)[:50_000]
        start = time.perf_counter()
        got = autofuse.jit(lambda a: np.argsort(a, kind="stable"))(cuda.to_device(host))
        ok = np.array_equal(got.copy_to_host(), np.argsort(host, kind="stable"))
        lines.append(f"f32 50000 global-scratch kernel [numba arrays]: {'ok' if ok else 'MISMATCH'}"
                     f" ({(time.perf_counter() - start) * 1e3:.0f} ms first call)")
    except Exception as error:
        lines.append(f"global-scratch kernel: ERROR {type(error).__name__}: {str(error)[:300]}")
    del cupy
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="benchmarks/results/sorts.json")
    parser.add_argument("--deadline", type=float, default=240.0, help="seconds; later workloads skip torch.compile")
    args = parser.parse_args()
    report = {"checks": kernel_checks(), "rows": [], "platform": platform.platform()}
    print("\n".join(report["checks"]), flush=True)
    import cupy
    report["device"] = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    rng = np.random.default_rng(0)
    for name, kind, shape in workloads(args.scale):
        host = rng.standard_normal(shape).astype(np.float32)
        want = numpy_fn(kind)(host)
        entries, row = {}, {"workload": name, "ms": {}, "notes": {}}
        for system in SYSTEMS:
            if system == "torch.compile" and time.perf_counter() - START > args.deadline:
                row["notes"][system] = "skipped (time budget)"
                continue
            try:
                fn = system_fn(system, kind)
                x = device_copy(system, host)
                got = to_host(fn(x))
            except Exception as error:            # a peer missing or failing: say so, go on
                row["notes"][system] = f"fails: {type(error).__name__}: {str(error)[:120]}"
                continue
            if not agrees(kind, got, want):
                row["notes"][system] = "wrong result"
                continue
            entries[system] = (fn, (x,))
        if "autofuse" in entries:
            kernels = autofuse.jit(numpy_fn(kind)).lower(*entries["autofuse"][1]).kernels
            row["autofuse_kernels"] = [f"{k.kind}: {k.strategy}" for k in kernels]
        try:
            row["ms"] = time_rounds(entries, args.rounds, sync)
        except Exception as error:
            row["notes"]["timing"] = f"fails: {type(error).__name__}: {str(error)[:200]}"
        report["rows"].append(row)
        print(f"{name}: " + ", ".join(f"{s} {ms:.3f}" for s, ms in row["ms"].items()) +
              (f"  {row['notes']}" if row["notes"] else ""), flush=True)
        with open(args.out, "w") as handle:
            json.dump(report, handle, indent=1)
    print(f"total {time.perf_counter() - START:.0f} s")


if __name__ == "__main__":
    main()
