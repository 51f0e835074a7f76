"""Scans (issue 32 item 2): cumsum along rows of 1k..1M elements, along columns, and a fused
producer + scan + consumer, beside CuPy (cupy.cumsum), torch.compile (torch.cumsum), jax.jit
(jnp.cumsum) and the memory floor.

    python benchmarks/scans.py --out $OUT/scans.json [--only rows] [--budget 200]

Timing is gpu.py's (interleaved rounds, the difference of long and short batches; each system
checked against NumPy first, float32 within 1e-3 of the largest value: every system but NumPy
reassociates the sums). The floor is the input read once and the output written once over the
measured device-to-device copy bandwidth.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu import copy_bandwidth, run_workload  # noqa: E402
from workloads import Workload  # noqa: E402

import autofuse  # noqa: E402

SYSTEMS = ("autofuse", "cupy", "torch.compile", "jax.jit")


def _arrays(dtype, shape):
    return lambda rng: ((rng.standard_normal(shape) * 0.5 + 0.1).astype(dtype),)


def _floor(inputs):
    return 2 * inputs[0].nbytes


def _cumsum(name, shape, axis, dtype=np.float32):
    return Workload(f"{name} {shape[0]}x{shape[1]} {np.dtype(dtype).name}", _arrays(dtype, shape),
                    lambda xp: lambda x: xp.cumsum(x, axis=axis),
                    lambda t: lambda x: t.cumsum(x, dim=axis), _floor,
                    tolerance=1e-3 if dtype == np.float32 else 1e-9)


def workloads() -> list:
    found = [_cumsum("cumsum rows", (16384, 1024), 1), _cumsum("cumsum rows", (1024, 16384), 1),
             _cumsum("cumsum rows", (128, 131072), 1), _cumsum("cumsum rows", (16, 1 << 20), 1),
             _cumsum("cumsum rows", (1, 1 << 20), 1), _cumsum("cumsum rows", (1, 1 << 24), 1),
             _cumsum("cumsum columns", (4096, 4096), 0), _cumsum("cumsum columns", (1024, 16384), 0),
             _cumsum("cumsum rows", (4096, 4096), 1, np.float64)]
    n = 4096
    found.append(Workload(f"cumsum(x*x,1)/n {n}x{n} float32", _arrays(np.float32, (n, n)),
                          lambda xp: lambda x: xp.cumsum(x * x, axis=1) / n,
                          lambda t: lambda x: t.cumsum(x * x, dim=1) / n, _floor, tolerance=1e-3))
    found.append(Workload(f"cumprod rows {n}x{n} float32",
                          lambda rng: ((1 + rng.standard_normal((n, n)) * 1e-3).astype(np.float32),),
                          lambda xp: lambda x: xp.cumprod(x, axis=1),
                          lambda t: lambda x: t.cumprod(x, dim=1), _floor, tolerance=1e-3))
    return found


def table(report) -> str:
    lines = [f"{'workload':34s} {'floor':>8s} {'autofuse':>9s} {'cupy':>9s} {'torch.c':>9s} "
             f"{'jax.jit':>9s} {'af/floor':>8s} {'af/best':>8s}  kernel"]
    for row in report["rows"]:
        t = row["times"]
        peers = [t[s] for s in SYSTEMS[1:] if s in t]
        af = t.get("autofuse", float("nan"))
        best = min(peers) if peers else float("nan")
        cells = " ".join(f"{t.get(s, float('nan')) * 1000:9.1f}" for s in SYSTEMS)
        lines.append(f"{row['workload']:34s} {row['floor_ms'] * 1000:8.1f} {cells} "
                     f"{af / row['floor_ms']:8.2f} {af / best:8.2f}  "
                     f"{','.join(row.get('autofuse_kernels', []))} {row['notes'] or ''}")
    return "times in microseconds\n" + "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=1e9, help="seconds; later rows skipped")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                      "scans.json"))
    args = parser.parse_args()
    import cupy
    import jax
    jax.config.update("jax_enable_x64", True)       # float64 rows stay float64
    start = time.perf_counter()
    rng = np.random.default_rng(32)
    found = [w for w in workloads()
             if not args.only or any(s in w.name for s in args.only.split(","))]
    report = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
              "date": time.strftime("%Y-%m-%d"), "copy_bandwidth_TBps": 0.0, "rows": []}
    bandwidth = copy_bandwidth(2)
    report["copy_bandwidth_TBps"] = bandwidth / 1e12
    for workload in found:
        if time.perf_counter() - start > args.budget:
            report.setdefault("skipped", []).append(workload.name)
            continue
        row = run_workload(workload, SYSTEMS, bandwidth, rng, args.rounds, 2)
        report["rows"].append(row)
        print(workload.name, {k: round(v * 1000, 1) for k, v in row["times"].items()},
              row.get("autofuse_kernels"), row["notes"] or "", flush=True)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    print(table(report))
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
