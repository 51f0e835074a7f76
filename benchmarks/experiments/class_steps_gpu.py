"""Class kernels whose loops run to a size argument, by Tuning.class_steps (issue 33).

A specialized kernel's constant trip counts are unrolled by LLVM; a class kernel's are not
(benchmarks/experiments/class_loads_ptx.py counts the loads). For each program: the specialized
kernel, then its class (the dimension benchmarks/dynamic_shapes.py varies, only that one) at
each `--steps`, alternating rounds, median ms of synchronized batches; the class's answer
checked against NumPy in float64.

    python benchmarks/experiments/class_steps_gpu.py [--steps 1 2 4] [--only NAME ...]
"""
import argparse
import json
import os
import statistics
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.dirname(os.path.dirname(HERE))]

import autofuse  # noqa: E402
import autofuse.dynamic.classes as classes  # noqa: E402
import autofuse.dynamic.policy as policy  # noqa: E402
from autofuse.backends.cuda.tuning import Tuning  # noqa: E402

from class_loads_ptx import varying_first_axis  # noqa: E402
from dynamic_shapes import gpu_time  # noqa: E402
from reductions_sweep import points  # noqa: E402
from workloads import workloads  # noqa: E402
from products import workloads as products  # noqa: E402

DEFAULT = ["softmax(0) 4096x8192 f16", "softmax(0) 4096x8192 f32", "softmax(0) 1000x8192 f32",
           "x+r layernorm(0) 4096x8192 f32", "rmsnorm(0) 4096x8192 f32",
           "logsumexp(0) 4096x8192 f32", "sum(0) 8192x4096 f16", "sum(0) 8192x4096 f32",
           "sum(0) 1024x32768 f32", "sum(0) 32768x1000 f32", "x.sum(0)", "softmax rows f16",
           "softmax(-1) 32768x256 f32"]


def gemms() -> list:
    """Tensor-core products whose rows vary: relu(x @ w + b), float64 and float16."""
    from workloads import Workload

    def make(dtype, m, k, n):
        return lambda rng: tuple((rng.standard_normal(s) * 0.5).astype(dtype)
                                 for s in ((m, k), (k, n), (n,)))

    def dense(xp):
        return lambda x, w, b: xp.maximum(x @ w + b, x.dtype.type(0))
    return [Workload(f"gemm {np.dtype(dt).name} {m}x{k}x{n}", make(dt, m, k, n), dense, None,
                     lambda a: 0) for dt, (m, k, n) in
            ((np.float64, (4096, 1024, 1024)), (np.float64, (8192, 2048, 2048)),
             (np.float16, (8192, 4096, 4096)), (np.float16, (2048, 1024, 1024)))]


def main():
    import cupy
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", nargs="*", type=int, default=[1, 2, 4])
    parser.add_argument("--only", nargs="*", default=DEFAULT)
    parser.add_argument("--out", default=None)
    parser.add_argument("--keep-bound", type=int, default=-1, metavar="BYTES",
                        help="link a kernel with its launch bound where ptxas spills at most "
                             "this many bytes a thread")
    args = parser.parse_args()
    if args.keep_bound >= 0:
        import autofuse.backends.cuda.compile as compile_module
        from autofuse.backends.cuda.runtime import driver
        relink = compile_module._unless_spilling

        def kept(cubin, ptx, arch, entry, blocks):
            spilled = driver.local_bytes(cubin, entry)
            print(f"    (linked with its bound: {spilled} local bytes)")
            if spilled <= args.keep_bound:
                return cubin, blocks
            return relink(cubin, ptx, arch, entry, blocks)
        compile_module._unless_spilling = kept
    rng = np.random.default_rng(5)
    report = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), "points": {}}
    for load in list(workloads()) + list(points()) + list(products()) + gemms():
        if load.name not in args.only:
            continue
        host = [np.ascontiguousarray(a) for a in load.make(rng)]
        fn = load.fn(np)
        classes.candidates = policy.candidates = varying_first_axis(load, host)
        device = [cupy.asarray(a) for a in host]
        want = fn(*[a.astype(np.float64) if a.dtype == np.float16 else a for a in host])
        calls = {"specialized": autofuse.jit(fn, dynamic=False)}
        for steps in args.steps:
            calls[f"class {steps}"] = autofuse.jit(fn, dynamic=True, tuning=Tuning(class_steps=steps))
        row = {}
        for label, f in calls.items():
            got = f(*device)
            pairs = zip(got, want) if isinstance(want, tuple) else ((got, want),)
            row[f"{label} error"] = max(float(np.max(np.abs(cupy.asnumpy(g).astype(np.float64)
                                                            - np.asarray(w, np.float64)),
                                                     initial=0.0)) for g, w in pairs)
            kernels = f.lower(*device).kernels
            row[f"{label} kernels"] = [k.strategy for k in kernels]
            row[f"{label} launch"] = [{k: v for k, v in kernel.launch.items()
                                       if k not in ("grid", "block")} for kernel in kernels]
        rounds = {label: [] for label in calls}
        for _ in range(3):
            for label, f in calls.items():
                rounds[label].append(gpu_time(lambda: f(*device)))
        base = statistics.median(rounds["specialized"])
        for label in calls:
            row[f"{label} ms"] = statistics.median(rounds[label])
            row[f"{label} ratio"] = row[f"{label} ms"] / base
        report["points"][load.name] = row
        print(f"{load.name:32} spec {base:8.4f} " + " ".join(
            f"{label[6:]}: {row[f'{label} ratio']:.3f}" for label in calls if label != "specialized")
            + f"  err {max(row[f'{label} error'] for label in calls):.2e}  "
            + row[f"class {args.steps[-1]} kernels"][0][:60], flush=True)
        for label in calls:
            print(f"    {label:12} {row[f'{label} launch']}", flush=True)
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(report, handle, indent=1)


if __name__ == "__main__":
    main()
