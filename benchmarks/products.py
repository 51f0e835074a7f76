"""Matrix products by shape (issue 30): matrix-vector family, dot, outer, K = 8, batched small
products, each beside CuPy (cuBLAS), torch.compile and jax.jit, against the memory floor.

    python benchmarks/products.py --out $OUT/products.json [--only matvec] [--budget 240]

Timing is gpu.py's (interleaved rounds, the difference of long and short batches; each system
checked against NumPy first). The floor is the bytes that must move over the measured
device-to-device copy bandwidth; for two dependent passes over a matrix ((A @ x) @ A,
A.T @ (A @ x)) it counts the matrix twice. First call: each autofuse program's first call in a
warm process (numba-cuda loaded, another kernel compiled) with an empty disk cache.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu import check, copy_bandwidth, run_workload, time_rounds, to_host  # noqa: E402
from workloads import Workload  # noqa: E402

import autofuse  # noqa: E402

SYSTEMS = ("autofuse", "cupy", "torch.compile", "jax.jit")


def _arrays(dtype, *shapes):
    return lambda rng: tuple((rng.standard_normal(s) * 0.5 + 0.1).astype(dtype) for s in shapes)


def _bytes(*shapes_of_outputs, reads=1):
    """Floor bytes: every input read `reads` times (a tuple: per input), each output written."""
    def floor(inputs):
        counts = reads if isinstance(reads, tuple) else (reads,) * len(inputs)
        item = inputs[0].itemsize
        written = sum(int(np.prod(s)) for s in shapes_of_outputs) * item
        return sum(a.nbytes * c for a, c in zip(inputs, counts)) + written
    return floor


def _workload(name, dtype, shapes, fn, torch_fn, out_shapes, reads=1):
    tolerance = 1e-3 if dtype == np.float32 else 1e-9
    return Workload(f"{name} {np.dtype(dtype).name}", _arrays(dtype, *shapes), fn, torch_fn,
                    _bytes(*out_shapes, reads=reads), tolerance=tolerance)


def workloads() -> list:
    found = []
    for dtype in (np.float32, np.float64):
        for m, k in ((4096, 4096), (8192, 8192), (16384, 1024)):
            found.append(_workload(f"matvec {m}x{k}", dtype, [(m, k), (k,)],
                                   lambda xp: lambda a, x: a @ x, lambda t: lambda a, x: a @ x,
                                   [(m,)]))
            found.append(_workload(f"vecmat {k}x{m}", dtype, [(k,), (k, m)],
                                   lambda xp: lambda x, a: x @ a, lambda t: lambda x, a: x @ a,
                                   [(m,)]))
    n = 4096
    found += [
        _workload("dot 2^24", np.float32, [(1 << 24,), (1 << 24,)], lambda xp: lambda x, y: x @ y,
                  lambda t: lambda x, y: x @ y, [()]),
        _workload("outer 4096^2", np.float32, [(n,), (n,)], lambda xp: lambda x, y: xp.outer(x, y),
                  lambda t: lambda x, y: t.outer(x, y), [(n, n)]),
        _workload("(A@x)@A 4096^2", np.float32, [(n, n), (n,)],
                  lambda xp: lambda a, x: (a @ x) @ a, lambda t: lambda a, x: (a @ x) @ a,
                  [(n,)], reads=(2, 1)),
        _workload("alpha*A@x+beta*B@x 4096^2", np.float32, [(n, n), (n, n), (n,)],
                  lambda xp: lambda a, b, x: 1.5 * a @ x + 0.5 * b @ x,
                  lambda t: lambda a, b, x: 1.5 * a @ x + 0.5 * b @ x, [(n,)]),
        _workload("A.T@(A@x) 4096^2", np.float32, [(n, n), (n,)],
                  lambda xp: lambda a, x: a.T @ (a @ x), lambda t: lambda a, x: a.T @ (a @ x),
                  [(n,)], reads=(2, 1)),
        _workload("K=8 8192x8@8x8192", np.float32, [(8192, 8), (8, 8192)],
                  lambda xp: lambda a, b: a @ b, lambda t: lambda a, b: a @ b, [(8192, 8192)]),
        _workload("batched (64,32,48)@(48,48)", np.float64, [(64, 32, 48), (48, 48)],
                  lambda xp: lambda a, b: a @ b, lambda t: lambda a, b: a @ b, [(64, 32, 48)]),
        _workload("batched (8192,32,48)@(48,48)", np.float64, [(8192, 32, 48), (48, 48)],
                  lambda xp: lambda a, b: a @ b, lambda t: lambda a, b: a @ b, [(8192, 32, 48)]),
        _workload("batched (8192,32,48)@(48,48)", np.float32, [(8192, 32, 48), (48, 48)],
                  lambda xp: lambda a, b: a @ b, lambda t: lambda a, b: a @ b, [(8192, 32, 48)]),
    ]
    # other stacks of small products people run: tiny blocks, a batch of both operands, tiny K
    for dtype in (np.float32, np.float64):
        found += [
            _workload("batched (4096,16,16)@(16,16)", dtype, [(4096, 16, 16), (16, 16)],
                      lambda xp: lambda a, b: a @ b, lambda t: lambda a, b: a @ b,
                      [(4096, 16, 16)]),
            _workload("batched (1024,64,64)@(1024,64,64)", dtype, [(1024, 64, 64)] * 2,
                      lambda xp: lambda a, b: a @ b, lambda t: lambda a, b: a @ b,
                      [(1024, 64, 64)]),
            _workload("batched (16384,8,8)@(16384,8,8)", dtype, [(16384, 8, 8)] * 2,
                      lambda xp: lambda a, b: a @ b, lambda t: lambda a, b: a @ b,
                      [(16384, 8, 8)]),
        ]
    # products with a few columns (a linear classifier's logits and its weights' gradient): a
    # thread a run of a row's outputs (emit/runs.py), timed against a thread an output too
    for dtype in (np.float32, np.float64):
        for m, k, n in ((1 << 19, 64, 10), (1 << 20, 32, 16), (1 << 16, 256, 4)):
            found.append(_workload(f"few columns x@w ({m},{k})@({k},{n})", dtype,
                                   [(m, k), (k, n)], lambda xp: lambda x, w: x @ w,
                                   lambda t: lambda x, w: x @ w, [(m, n)]))
        m, k, n = 1 << 19, 64, 10
        found.append(_workload(f"few columns x.T@g ({m},{k}).T@({m},{n})", dtype,
                               [(m, k), (m, n)], lambda xp: lambda x, g: x.T @ g,
                               lambda t: lambda x, g: x.T @ g, [(k, n)]))
    return found


def first_calls(found, rng) -> dict:
    """{workload: ms} of each autofuse program's first call in this (warm) process, cold cache."""
    import cupy
    times = {}
    with tempfile.TemporaryDirectory() as empty:
        saved = os.environ.get("AUTOFUSE_CACHE_DIR")
        os.environ["AUTOFUSE_CACHE_DIR"] = empty
        try:
            warm = autofuse.jit(lambda x: np.exp(x) + 1)
            warm(cupy.ones(1024, cupy.float32))
            for workload in found:
                inputs = [cupy.asarray(a) for a in workload.make(rng)]
                jitted = autofuse.jit(workload.fn(np))
                start = time.perf_counter()
                jitted(*inputs)
                cupy.cuda.Device().synchronize()
                times[workload.name] = (time.perf_counter() - start) * 1000
        finally:
            if saved is None:
                del os.environ["AUTOFUSE_CACHE_DIR"]
            else:
                os.environ["AUTOFUSE_CACHE_DIR"] = saved
    return times


def variants(workload, row, rng, rounds, tunings: dict) -> None:
    """A row's product also timed under other tunings ({name: Tuning}): the planner's earlier
    choices (a reduction, the tiled kernel) and the staged kernel's other settings."""
    import cupy
    host = workload.make(rng)
    inputs = [cupy.asarray(a) for a in host]
    entries = {}
    sync = lambda _: cupy.cuda.Device().synchronize()       # noqa: E731
    for name, tuning in tunings.items():
        fn = autofuse.jit(workload.fn(np), tuning=tuning)
        try:
            check(to_host(fn(*inputs)), workload.fn(np)(*host), workload.tolerance)
        except Exception as error:
            row["notes"][name] = f"{type(error).__name__}: {str(error)[:120]}"
            continue
        entries[name] = (lambda fn=fn: fn(*inputs), sync)
    if not entries:
        return
    times = time_rounds(entries, rounds=rounds, short=2)
    row["variants"] = {f"autofuse {name}": float(np.median(t)) for name, t in times.items()}


def tunings_for(workload) -> dict:
    """The variants a staged row is timed under (the earlier choices with $PRODUCTS_EARLIER)."""
    from autofuse.backends.cuda.tuning import Tuning
    from autofuse.ir.products import ProductLimits
    found = {}
    if os.environ.get("PRODUCTS_EARLIER"):      # the planner's choices before the staged kernel
        found = {"reduction": Tuning(products=ProductLimits()),
                 "tiled": Tuning(products=ProductLimits(batch_side=0))}
    if workload.name.startswith("few columns"):
        found["a thread an output"] = Tuning(output_run=0)
        if "x@w" in workload.name:         # the planner's other choices for x @ w
            import dataclasses
            found["tiled"] = Tuning(products=dataclasses.replace(Tuning().products, small_side=0))
            found.update({"staged 128 B": Tuning(run_stage_bytes=128),
                          "staged a row a thread": Tuning(run_stage_outputs=16),
                          "staged 48 accumulators": Tuning(run_stage_outputs=48),
                          "staged unbounded registers": Tuning(run_stage_registers=0),
                          "staged at K=256": Tuning(run_stage_chunks=16)})
        if "x.T@g" in workload.name:       # the run's launch bounds and elements a step
            found.update({"run registers unbounded": Tuning(output_run_registers=0),
                          "run 4 steps": Tuning(output_run_steps=4)})
    if workload.name.startswith("K="):
        found.update({"tile 16x128": Tuning(staged_tile_m_short=16),
                      "tile 32x64": Tuning(staged_tile_n=64),
                      "tile 64x128": Tuning(staged_tile_m_short=64),
                      "rows 8": Tuning(staged_rows=8)})
    elif "(8192,32,48)" in workload.name or "(1024,64,64)" in workload.name:
        found.update({"rows 8": Tuning(staged_rows=8),
                      "rows 8 registers 32": Tuning(staged_rows=8, staged_registers=32),
                      "registers 32": Tuning(staged_registers=32),
                      "blocks/SM 32": Tuning(staged_blocks_per_sm=32),
                      "rows 8 blocks/SM 32": Tuning(staged_rows=8, staged_blocks_per_sm=32),
                      "an item a block": Tuning(staged_blocks_per_sm=1 << 20)})
    return found


def table(report) -> str:
    lines = [f"{'workload':36s} {'floor':>8s} {'autofuse':>9s} {'cupy':>9s} {'torch.c':>9s} "
             f"{'jax.jit':>9s} {'af/floor':>8s} {'af/best':>8s} {'1st ms':>7s}  kernels"]
    for row in report["rows"]:
        t = row["times"]
        peers = [t[s] for s in SYSTEMS[1:] if s in t]
        af = t.get("autofuse", float("nan"))
        best = min(peers) if peers else float("nan")
        cells = " ".join(f"{t.get(s, float('nan')) * 1000:9.1f}" for s in SYSTEMS)
        lines.append(f"{row['workload']:36s} {row['floor_ms'] * 1000:8.1f} {cells} "
                     f"{af / row['floor_ms']:8.2f} {af / best:8.2f} "
                     f"{report['first_call_ms'].get(row['workload'], float('nan')):7.0f}  "
                     f"{','.join(row.get('autofuse_kernels', []))} {row['notes'] or ''}"
                     f"{row.get('variants') or ''}")
    return "times in microseconds\n" + "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-variants", action="store_true")
    parser.add_argument("--budget", type=float, default=1e9, help="seconds; later rows skipped")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                      "products.json"))
    args = parser.parse_args()
    import cupy
    import jax
    jax.config.update("jax_enable_x64", True)       # float64 rows stay float64
    start = time.perf_counter()
    rng = np.random.default_rng(30)
    found = [w for w in workloads()
             if not args.only or any(s in w.name for s in args.only.split(","))]
    report = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
              "date": time.strftime("%Y-%m-%d"), "first_call_ms": first_calls(found, rng),
              "copy_bandwidth_TBps": 0.0, "rows": []}
    bandwidth = copy_bandwidth(2)
    report["copy_bandwidth_TBps"] = bandwidth / 1e12
    print(json.dumps(report["first_call_ms"]), flush=True)
    for workload in found:
        if time.perf_counter() - start > args.budget:
            report.setdefault("skipped", []).append(workload.name)
            continue
        row = run_workload(workload, SYSTEMS, bandwidth, rng, args.rounds, 2)
        if workload.name.startswith(("batched", "K=", "few columns")) and not args.no_variants:
            try:
                variants(workload, row, rng, args.rounds, tunings_for(workload))
            except Exception as error:
                row["notes"]["variants"] = f"{type(error).__name__}: {str(error)[:120]}"
        report["rows"].append(row)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    print(table(report))
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
