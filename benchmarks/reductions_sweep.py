"""The reduction shape sweep (issue 31): reductions in every layout beside CuPy op by op,
torch.compile and jax.jit, against the memory floor.

    python benchmarks/reductions_sweep.py --out $OUT/reductions.json [--only rows] [--budget 240]
    python benchmarks/reductions_sweep.py --plans      # each point's kernels, no GPU timing

The points: row sums with row lengths 64..65,536 (powers of two, odd lengths and others), column
and middle-axis sums of 2-D and 3-D arrays, whole-row programs (softmax, residual + layernorm,
RMSNorm, log-sum-exp) along the last and the first axis, reductions of broadcast products
(pairwise squared distances over a short last axis, a k-means assignment by argmin and min over
them), few-row / long-row and many-short-row extremes; float32 and float16. Timing and checks are
gpu.py's (interleaved rounds, the difference of long and short batches, the median; every system
checked against NumPy first). The floor: every input read once and every output written once,
over the device-to-device copy bandwidth measured in the same run.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gpu import _commit, check, copy_bandwidth, system_call, time_rounds, to_host  # noqa: E402
from workloads import Workload  # noqa: E402

SYSTEMS = ("autofuse", "cupy", "torch.compile", "jax.jit")
ELEMENTS = 1 << 25          # elements of most points' largest input (128 MiB of float32)


def _inputs(dtype, *shapes):
    def make(rng):
        return tuple((rng.standard_normal(s, dtype=np.float32) * 0.5 + 0.1).astype(dtype)
                     for s in shapes)
    return make


def _floor(*out_shapes):
    """Every input read once, each output (of the inputs' item size) written once."""
    def floor(inputs):
        written = sum(int(np.prod(s)) for s in out_shapes) * inputs[0].itemsize
        return sum(a.nbytes for a in inputs) + written
    return floor


def _point(name, dtype, shapes, out_shapes, fn, torch_fn, tolerance=None):
    half = dtype == np.float16
    return Workload(f"{name} {'f16' if half else 'f32'}", _inputs(dtype, *shapes), fn, torch_fn,
                    _floor(*out_shapes), tolerance=tolerance or (1e-2 if half else 1e-3))


# -- the programs, once for NumPy-like modules (`xp`) and once for torch ------------------------

def softmax(axis):
    def make(xp):
        def f(x):
            e = xp.exp(x - x.max(axis=axis, keepdims=True))
            return e / e.sum(axis=axis, keepdims=True)
        return f
    return make, lambda torch: lambda x: torch.softmax(x, dim=axis)


def residual_layernorm(axis):
    def make(xp):
        def f(x, r):
            y = x + r
            m = y.mean(axis, keepdims=True)
            d = y - m
            return d / xp.sqrt((d * d).mean(axis, keepdims=True) + 1e-5)
        return f

    def make_torch(torch):
        def f(x, r):
            y = x + r
            m = y.mean(axis, keepdim=True)
            d = y - m
            return d / torch.sqrt((d * d).mean(axis, keepdim=True) + 1e-5)
        return f
    return make, make_torch


def rmsnorm(axis):
    def make(xp):
        return lambda x: x / xp.sqrt((x * x).mean(axis, keepdims=True) + 1e-6)
    return make, lambda torch: lambda x: x / torch.sqrt((x * x).mean(axis, keepdim=True) + 1e-6)


def logsumexp(axis):
    def make(xp):
        def f(x):
            m = x.max(axis=axis, keepdims=True)
            return xp.log(xp.exp(x - m).sum(axis=axis, keepdims=True)) + m
        return f

    def make_torch(torch):
        def f(x):
            m = x.amax(dim=axis, keepdim=True)
            return torch.log(torch.exp(x - m).sum(dim=axis, keepdim=True)) + m
        return f
    return make, make_torch


def total(op, axis):
    return (lambda xp: lambda x: getattr(x, op)(axis=axis),
            lambda torch: lambda x: getattr(x, {"max": "amax"}.get(op, op))(dim=axis))


def distances(xp):
    return lambda x, y: ((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=-1)


def distances_torch(torch):
    return lambda x, y: ((x[:, None, :] - y[None, :, :]) ** 2).sum(dim=-1)


def assign(xp):
    def f(x, y):
        d2 = ((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=-1)
        return d2.argmin(axis=-1), d2.min(axis=-1)
    return f


def assign_torch(torch):
    def f(x, y):
        d2 = ((x[:, None, :] - y[None, :, :]) ** 2).sum(dim=-1)
        return d2.argmin(dim=-1), d2.amin(dim=-1)
    return f


def _without(shape, axis):
    return tuple(s for d, s in enumerate(shape) if d != axis % len(shape))


def _keep(shape, axis):
    return tuple(1 if d == axis % len(shape) else s for d, s in enumerate(shape))


def points() -> list[Workload]:
    """The sweep's points, the layouts outside the suite first."""
    f32, f16 = np.float32, np.float16
    found = []
    for program, label, shapes in (
            (softmax, "softmax", (((4096, 8192), 0), ((1000, 8192), 0), ((8192, 1000), -1))),
            (rmsnorm, "rmsnorm", (((4096, 8192), 0), ((8192, 1000), -1))),
            (logsumexp, "logsumexp", (((4096, 8192), 0), ((8192, 1000), -1)))):
        for shape, axis in shapes:
            outs = [_keep(shape, axis) if label == "logsumexp" else shape]
            found.append(_point(f"{label}({axis}) {shape[0]}x{shape[1]}", f32, [shape], outs,
                                *program(axis)))
    for shape, axis in (((4096, 8192), 0), ((8192, 1024), -1)):
        found.append(_point(f"x+r layernorm({axis}) {shape[0]}x{shape[1]}", f32, [shape, shape],
                            [shape], *residual_layernorm(axis)))
    for shape, axis in (((4096, 8192), 0), ((8192, 1000), -1)):
        found.append(_point(f"softmax({axis}) {shape[0]}x{shape[1]}", f16, [shape], [shape],
                            *softmax(axis)))
    for rows, length in ((131072, 64), (65536, 128), (32768, 256)):
        found.append(_point(f"softmax(-1) {rows}x{length}", f32, [(rows, length)],
                            [(rows, length)], *softmax(-1)))
    found.append(_point("x+r layernorm(-1) 8192x1024", f16, [(8192, 1024)] * 2, [(8192, 1024)],
                        *residual_layernorm(-1)))
    found += [
        _point("distances 8192x4096 d=8", f32, [(8192, 8), (4096, 8)], [(8192, 4096)],
               distances, distances_torch),
        _point("distances 4096x4096 d=3", f32, [(4096, 3), (4096, 3)], [(4096, 4096)],
               distances, distances_torch),
        _point("kmeans argmin 2^20 k=64 d=16", f32, [(1 << 20, 16), (64, 16)],
               [(1 << 20,), (1 << 20,)], assign, assign_torch),
        _point("kmeans argmin 2^21 k=16 d=4", f32, [(1 << 21, 4), (16, 4)],
               [(1 << 21,), (1 << 21,)], assign, assign_torch),
    ]
    for length in (16, 32, 64, 100, 128, 255, 1000, 1023, 1024, 4097, 8192, 30000, 65536):
        shape = (ELEMENTS // length, length)
        found.append(_point(f"sum(-1) {shape[0]}x{length}", f32, [shape], [shape[:1]],
                            *total("sum", -1)))
    found.append(_point(f"sum(-1) {ELEMENTS // 1000}x1000", f16, [(ELEMENTS // 1000, 1000)],
                        [(ELEMENTS // 1000,)], *total("sum", -1), tolerance=2e-2))
    for shape, axis in (((8192, 4096), 0), ((1024, 32768), 0), ((32768, 1000), 0),
                        ((64, 1 << 19), 0), ((512, 256, 256), 0), ((64, 4096, 128), 1),
                        ((8192, 64, 64), 1)):
        found.append(_point(f"sum({axis}) {'x'.join(map(str, shape))}", f32, [shape],
                            [_without(shape, axis)], *total("sum", axis)))
    found.append(_point("sum(0) 8192x4096", f16, [(8192, 4096)], [(4096,)], *total("sum", 0),
                        tolerance=2e-2))
    found += [
        _point("sum(-1) 4x2^23", f32, [(4, 1 << 23)], [(4,)], *total("sum", -1)),
        _point("max(-1) 2x2^24", f32, [(2, 1 << 24)], [(2,)], *total("max", -1)),
        _point("logsumexp(-1) 16x2^21", f32, [(16, 1 << 21)], [(16, 1)], *logsumexp(-1)),
        _point("logsumexp(-1) 1x2^25", f32, [(1, 1 << 25)], [(1, 1)], *logsumexp(-1)),
        _point("sum(-1) 2^23x4", f32, [(1 << 23, 4)], [(1 << 23,)], *total("sum", -1)),
        _point("sum(-1) 2^22x7", f32, [(1 << 22, 7)], [(1 << 22,)], *total("sum", -1)),
        _point("max(-1) 2^21x16", f32, [(1 << 21, 16)], [(1 << 21,)], *total("max", -1)),
    ]
    return found + column_points()


def column_points() -> list[Workload]:
    """Whole-column programs across sizes, small enough for the L2 to far past it (names end
    "cols"): where their column tiles give way to a reduction kernel a level (tuning's
    column_program_bytes)."""
    f32 = np.float32
    found = []
    for rows, cols in ((512, 512), (1024, 1024), (256, 8192), (2048, 2048), (512, 8192),
                       (8192, 1024), (2048, 8192)):
        shape = (rows, cols)
        found.append(_point(f"softmax(0) {rows}x{cols} cols", f32, [shape], [shape],
                            *softmax(0)))
    for rows, cols in ((1024, 1024), (512, 8192), (2048, 8192)):
        shape = (rows, cols)
        found.append(_point(f"rmsnorm(0) {rows}x{cols} cols", f32, [shape], [shape],
                            *rmsnorm(0)))
        found.append(_point(f"x+r layernorm(0) {rows}x{cols} cols", f32, [shape, shape],
                            [shape], *residual_layernorm(0)))
    shape = (64, 1024, 128)
    found.append(_point("softmax(1) 64x1024x128 cols", f32, [shape], [shape], *softmax(1)))
    return found


def _host(value):
    return tuple(_host(v) for v in value) if isinstance(value, tuple) else to_host(value)


def compare(name, result, reference, tolerance) -> None:
    """`result` is NumPy's `reference` within `tolerance` (gpu.check); the k-means points' labels
    may differ from NumPy's where two distances tie to rounding, so those compare the distances
    of the labels chosen."""
    if not isinstance(reference, tuple):
        return check(result, reference, tolerance)
    labels, least = result
    check(least, reference[1], tolerance)
    mismatched = np.flatnonzero(labels != reference[0])
    if mismatched.size > labels.size // 1000:
        raise AssertionError(f"{name}: {mismatched.size} labels differ from NumPy's argmin")


def variants(text: str) -> dict:
    """{label: Tuning} from "label:FIELD=value+FIELD=value,..." (gpu.tuning's spelling)."""
    from gpu import tuning
    found = {}
    for item in filter(None, text.split(",")):
        label, fields = item.split(":", 1)
        found[label] = tuning(fields)
    return found


def run_point(workload, systems, bandwidth, rng, rounds, tunings=None, match="") -> dict:
    """gpu.run_workload's row for `workload`, its results compared by `compare`; where the name
    contains one of `match` (comma-separated), autofuse also with each of `tunings` {label:
    Tuning} (as "autofuse[label]")."""
    import cupy
    import autofuse
    host = workload.make(rng)
    reference = workload.fn(np)(*host)
    row = {"workload": workload.name, "floor_ms": workload.floor_bytes(host) / bandwidth * 1000,
           "times": {}, "notes": {}}
    entries = {}
    for system in systems:
        try:
            call, sync = system_call(system, workload, host)
            result = call()
            sync(result)
            compare(workload.name, _host(result), reference, workload.tolerance)
            entries[system] = (call, sync)
        except Exception as error:       # a peer that fails is reported, not hidden
            row["notes"][system] = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
    wanted = tunings if any(m and m in workload.name for m in match.split(",")) else {}
    for label, tuning in wanted.items():
        try:
            fn = autofuse.jit(workload.fn(np), tuning=tuning)
            inputs = [cupy.asarray(a) for a in host]
            compare(workload.name, _host(fn(*inputs)), reference, workload.tolerance)
            entries[f"autofuse[{label}]"] = (lambda fn=fn, inputs=inputs: fn(*inputs),
                                             lambda _: cupy.cuda.Device().synchronize())
        except Exception as error:
            row["notes"][label] = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
    row["rounds"] = time_rounds(entries, rounds=rounds, short=2)
    row["times"] = {name: float(np.median(samples)) for name, samples in row["rounds"].items()}
    try:
        lowered = autofuse.jit(workload.fn(np)).lower(*[cupy.asarray(a) for a in host])
        row["autofuse_kernels"] = [f"{k.kind}:{k.strategy}" for k in lowered.kernels]
    except Exception as error:
        row["notes"]["kernels"] = repr(error)[:120]
    return row


def plans(found) -> None:
    """Each point's kernels as the CUDA backend plans them (no GPU needed)."""
    import autofuse
    rng = np.random.default_rng(0)
    for workload in found:
        inputs = tuple(np.zeros(a.shape, a.dtype) for a in workload.make(rng))
        lowered = autofuse.jit(workload.fn(np)).lower(*inputs, backend="cuda")
        print(f"{workload.name:36s} " + "; ".join(f"{k.kind}:{k.strategy}" for k in lowered.kernels))


def table(report) -> str:
    lines = [f"{'point':36s} {'floor':>7s} {'autofuse':>8s} {'cupy':>8s} {'torch.c':>8s} "
             f"{'jax.jit':>8s} {'af/flr':>6s} {'af/best':>7s}  kernels"]
    for row in report["rows"]:
        t = row["times"]
        peers = [t[s] for s in ("torch.compile", "jax.jit") if s in t]
        af = t.get("autofuse", float("nan"))
        best = min(peers) if peers else float("nan")
        cells = " ".join(f"{t.get(s, float('nan')) * 1000:8.1f}" for s in SYSTEMS)
        lines.append(f"{row['workload']:36s} {row['floor_ms'] * 1000:7.1f} {cells} "
                     f"{af / row['floor_ms']:6.2f} {af / best:7.2f}  "
                     f"{';'.join(row.get('autofuse_kernels', []))} "
                     + " ".join(f"{k}={v * 1000:.1f}" for k, v in t.items() if "[" in k) + " "
                     f"{json.dumps(row['notes']) if row['notes'] else ''}")
    return "times in microseconds\n" + "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated substrings of point names")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=1e9, help="seconds; later points skipped")
    parser.add_argument("--variants", default="", help="label:FIELD=value+FIELD=value,... "
                        "autofuse also timed with these tunings ...")
    parser.add_argument("--match", default="", help="... on points whose names contain one of "
                        "these (comma-separated)")
    parser.add_argument("--plans", action="store_true", help="print each point's kernels only")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                      "reductions.json"))
    args = parser.parse_args()
    found = [w for w in points() if not args.only or any(s in w.name for s in args.only.split(","))]
    if args.plans:
        return plans(found)
    import cupy
    start = time.perf_counter()
    rng = np.random.default_rng(31)
    bandwidth = copy_bandwidth(2)
    report = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
              "date": time.strftime("%Y-%m-%d"), "commit": _commit(),
              "copy_bandwidth_TBps": bandwidth / 1e12, "rows": []}
    for workload in found:
        began = time.perf_counter()
        if began - start > args.budget:
            report.setdefault("skipped", []).append(workload.name)
            continue
        row = run_point(workload, args.systems.split(","), bandwidth, rng, args.rounds,
                        variants(args.variants), args.match)
        row["seconds"] = time.perf_counter() - began
        report["rows"].append(row)
        print(table({"rows": [row]}).splitlines()[-1], flush=True)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    print(table(report))


if __name__ == "__main__":
    main()
