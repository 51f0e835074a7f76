"""Gathers, scatters and masks on the GPU: autofuse beside CuPy, torch eager, torch.compile and
jax.jit (float32 values, int64 indices).

    python benchmarks/gathers.py --out benchmarks/results/gathers.json
    python benchmarks/gathers.py --scale 16          # 16x smaller arrays (a quick run)

Workloads, each as a user writes it in NumPy and as each peer spells it:
- an embedding lookup with a scale, `table[ids] * 2` (a gather and its consumer, one kernel);
- `np.take_along_axis(x, i, axis=1).sum(1)`: eight picks a row, summed (gather into a reduction);
- `np.add.at(bins, ids, w)` into 4096 bins (a scatter-add: atomics on the GPU);
- `x[x > 0].sum()`: a masked selection consumed by a reduction (a masked reduction, no
  data-dependent shape in autofuse; torch eager builds the selection, jax.jit needs `where`).
Every system's result is checked against NumPy first; timing is sorts.py's: interleaved rounds
of synchronized batches, the median over rounds of batch time / calls.
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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import autofuse  # noqa: E402
from rounds import time_rounds  # noqa: E402
from sorts import SYSTEMS, device_copy, sync, to_host  # noqa: E402

START = time.perf_counter()
BINS = 4096


def embedding(xp, table, ids):
    return table[ids] * 2


def picks(xp, x, i):
    return xp.take_along_axis(x, i, axis=1).sum(1)


def add_at(xp, ids, w):
    bins = xp.zeros(BINS, np.float32)
    np.add.at(bins, ids, w)
    return bins


def masked_sum(xp, x):
    return x[x > 0].sum()


def workloads(scale: int, rng):
    """(name, NumPy function of (xp, *args), host arguments)."""
    rows = 65536 // scale
    table = rng.standard_normal((50000, 256)).astype(np.float32)
    x = rng.standard_normal(((16384 // scale), 1024)).astype(np.float32)
    flat = rng.standard_normal((1 << 24) // scale).astype(np.float32)
    return [
        (f"embedding table[ids] * 2, 50000x256 table, {rows} ids", embedding,
         (table, rng.integers(0, 50000, rows))),
        (f"take_along_axis(x, i, 1).sum(1), {x.shape[0]}x1024, 8 a row", picks,
         (x, rng.integers(0, 1024, (x.shape[0], 8)))),
        (f"np.add.at(bins, ids, w), {flat.size} values into {BINS} bins", add_at,
         (rng.integers(0, BINS, flat.size), flat)),
        (f"x[x > 0].sum(), {flat.size}", masked_sum, (flat,)),
    ]


def system_fn(system, fn):
    """`fn` written for `system`, as a function of one tuple of arguments."""
    if system == "autofuse":
        jitted = autofuse.jit(lambda *a: fn(np, *a))
        return lambda a: jitted(*a)
    if system == "cupy":
        import cupy
        import cupyx
        if fn is add_at:
            def scatter(a):
                bins = cupy.zeros(BINS, np.float32)
                cupyx.scatter_add(bins, a[0], a[1])
                return bins
            return scatter
        return lambda a: fn(cupy, *a)
    if system.startswith("torch"):
        import torch
        spelled = {embedding: lambda t, i: t[i] * 2,
                   picks: lambda x, i: torch.gather(x, 1, i).sum(1),
                   add_at: lambda i, w: torch.zeros(BINS, device=w.device).index_add_(0, i, w),
                   masked_sum: lambda x: x[x > 0].sum()}[fn]
        if system == "torch.compile":
            spelled = torch.compile(spelled)
        return lambda a: spelled(*a)
    import jax
    import jax.numpy as jnp
    spelled = {embedding: lambda t, i: t[i] * 2,
               picks: lambda x, i: jnp.take_along_axis(x, i, axis=1).sum(1),
               add_at: lambda i, w: jnp.zeros(BINS, jnp.float32).at[i].add(w),
               masked_sum: lambda x: jnp.where(x > 0, x, 0).sum()}[fn]
    jitted = jax.jit(spelled)
    return lambda a: jitted(*a)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="benchmarks/results/gathers.json")
    args = parser.parse_args()
    import cupy
    report = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
              "date": time.strftime("%Y-%m-%d"), "platform": platform.platform(), "rows": []}
    rng = np.random.default_rng(0)
    for name, fn, host in workloads(args.scale, rng):
        want = fn(np, *[a.copy() for a in host])
        entries, row = {}, {"workload": name, "ms": {}, "first_call_s": {}, "notes": {}}
        for system in SYSTEMS:
            try:
                call = system_fn(system, fn)
                device = tuple(device_copy(system, a) for a in host)
                began = time.perf_counter()
                got = call(device)
                sync(got)
                row["first_call_s"][system] = round(time.perf_counter() - began, 3)
                got = to_host(got)
            except Exception as error:            # a peer missing or failing: say so, go on
                row["notes"][system] = f"fails: {type(error).__name__}: {str(error)[:160]}"
                continue
            if got.shape != want.shape or not np.allclose(got, want, rtol=2e-4, atol=2e-3):
                row["notes"][system] = "wrong result"
                continue
            entries[system] = (call, (device,))
        if "autofuse" in entries:
            kernels = autofuse.jit(lambda *a: fn(np, *a)).lower(*entries["autofuse"][1][0]).kernels
            row["autofuse_kernels"] = [f"{k.kind}: {k.strategy}" for k in kernels]
        row["ms"] = time_rounds(entries, args.rounds, sync)
        report["rows"].append(row)
        print(f"{name}: " + ", ".join(f"{s} {ms:.3f}" for s, ms in row["ms"].items()) +
              f"  kernels {row.get('autofuse_kernels')}" +
              (f"  {row['notes']}" if row["notes"] else ""), flush=True)
        with open(args.out, "w") as handle:
            json.dump(report, handle, indent=1)
    print(f"total {time.perf_counter() - START:.0f} s")


if __name__ == "__main__":
    main()
