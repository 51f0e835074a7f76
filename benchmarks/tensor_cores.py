"""Tensor-core products (issue 35): autofuse's mma.sync kernel (emit/mma_gemm.py) beside cuBLAS
through cupy.matmul, torch, torch.compile and jax.jit: float64 GEMM 4096^3, float16
relu(x @ w + b) 8192x4096x4096, float32 4096^3 as TF32 and 3xTF32 (with each system's error
against a float64 reference), and any autofuse Tuning variants named on the command line.

    python benchmarks/tensor_cores.py                    # table on stdout, JSON to $OUT
    python benchmarks/tensor_cores.py --only f64 --variants "k8:MMA_F64_SHAPE=mma_f64_m16n8k8"
    python benchmarks/tensor_cores.py --warm 8       # compile autofuse's kernels in 8 processes

Method: inputs on the device (CuPy arrays; torch and jax take them through DLPack); each system
is checked first (relative error to the largest magnitude of the float64 result), then timed by
the host clock around synchronized batches of calls (~30 ms each) after a warm-up, the median of --rounds batches.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WORKLOADS = {              # name: (dtype, M, N, K, epilogue, matmul_precision)
    "f64 gemm 4096^3": ("float64", 4096, 4096, 4096, False, "float32"),
    "f16 relu(x@w+b) 8192x4096x4096": ("float16", 8192, 4096, 4096, True, "float32"),
    "f32 tf32 gemm 4096^3": ("float32", 4096, 4096, 4096, False, "tf32"),
    "f32 3xtf32 gemm 4096^3": ("float32", 4096, 4096, 4096, False, "3xtf32"),
}


def program(epilogue: bool, xp):
    if epilogue:
        return lambda x, w, b: xp.maximum(x @ w + b, 0)
    return lambda x, w, b: x @ w


def parse_variants(text: str) -> dict:
    """"name:FIELD=value+FIELD=value;name2:..." -> {name: {field: value}}."""
    variants = {}
    for item in filter(None, text.split(";")):
        name, _, fields = item.partition(":")
        changes = {}
        for field in fields.split("+"):
            key, _, value = field.partition("=")
            try:
                changes[key.lower()] = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                changes[key.lower()] = value
        variants[name] = changes
    return variants


def systems_for(dtype, epilogue, precision, variants, torch, jax):
    import cupy
    import autofuse
    from autofuse.backends.cuda.tuning import Tuning
    fn = program(epilogue, np)
    made = {"autofuse": lambda: autofuse.jit(fn, matmul_precision=precision, tuning=Tuning(mma=True))}
    for name, changes in variants.items():
        float64_only = any(field.startswith("mma_f64") for field in changes)
        if float64_only and dtype != "float64" or "mma_tile" in changes and dtype == "float64":
            continue           # (float64's fields change float64 kernels only, mma_tile others)
        made[f"autofuse-{name}"] = (lambda c: lambda: autofuse.jit(
            fn, matmul_precision=precision, tuning=Tuning(mma=True).replace(**c)))(changes)
    if precision != "tf32":      # the CUDA-core kernel the default runs, for the choice
        made["autofuse cuda cores"] = lambda: autofuse.jit(fn)
    made["cupy"] = lambda: program(epilogue, cupy)
    made["cupy.matmul"] = lambda: (lambda x, w, b: cupy.matmul(x, w))
    if torch is not None:
        tf = program(epilogue, torch)
        if epilogue:
            tf = lambda x, w, b: torch.clamp_min(x @ w + b, 0)     # noqa: E731
        made["torch"] = lambda: tf
        if epilogue:        # (a lone product: torch.compile calls cuBLAS as torch does)
            made["torch.compile"] = lambda: torch.compile(tf, dynamic=False)
    if jax is not None:
        import jax.numpy as jnp
        made["jax.jit"] = lambda: jax.jit(program(epilogue, jnp))
        if dtype == "float32":
            made["jax.jit highest"] = lambda: jax.jit(lambda x, w, b: jnp.matmul(
                x, w, precision=jax.lax.Precision.HIGHEST))
    return made


def timed(call, args, rounds: int, sync) -> float:
    """Median milliseconds a call: host clock around synchronized batches, after a warm-up."""
    call(*args)
    sync()
    began = time.perf_counter()
    call(*args)
    sync()
    once = max((time.perf_counter() - began) * 1e3, 1e-3)
    calls = max(1, min(100, int(30.0 / once)))
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        for _ in range(calls):
            call(*args)
        sync()
        times.append((time.perf_counter() - began) * 1e3 / calls)
    return float(np.median(times))


SKIP: list = []        # --skip


def run(name, dtype, m, n, k, epilogue, precision, variants, torch, jax, rounds) -> list:
    import cupy
    rng = np.random.default_rng(0)
    x = cupy.asarray(rng.standard_normal((m, k)).astype(dtype))
    w = cupy.asarray((rng.standard_normal((k, n)) / np.sqrt(k)).astype(dtype))
    b = cupy.asarray(rng.standard_normal(n).astype(dtype))
    x64, w64, b64 = (a.astype(np.float64) for a in (x, w, b))
    want = program(epilogue, cupy)(x64, w64, b64)
    scale = float(cupy.abs(want).max())
    flops = 2.0 * m * n * k
    rows = []
    for system, make in systems_for(dtype, epilogue, precision, variants, torch, jax).items():
        if any(word in system for word in SKIP):
            continue
        inputs, sync = (x, w, b), cupy.cuda.Device().synchronize
        if system.startswith("torch"):
            inputs = tuple(torch.from_dlpack(a) for a in inputs)
        if system.startswith("jax"):
            import jax.numpy as jnp
            inputs = tuple(jnp.from_dlpack(a) for a in inputs)
        try:
            began = time.perf_counter()
            call = make()
            got = call(*inputs)
            sync()
            if system.startswith("jax"):
                got.block_until_ready()
            first = time.perf_counter() - began
            error = float(cupy.abs(cupy.asarray(got).astype(np.float64) - want).max()) / scale
            timing = (lambda *a: call(*a).block_until_ready()) if system.startswith("jax") \
                else call
            ms = timed(timing, inputs, rounds, sync)
            row = {"workload": name, "system": system, "ms": ms, "tflops": flops / ms / 1e9,
                   "error": error, "first_call_s": first}
        except Exception as problem:       # a peer missing a dtype, a variant that fails
            row = {"workload": name, "system": system, "failed": f"{type(problem).__name__}: "
                   f"{str(problem)[:300]}"}
        rows.append(row)
        _print_row(row)
    return rows


def _print_row(row) -> None:
    if "failed" in row:
        print(f"{row['workload']:32} {row['system']:22} FAILED {row['failed']}", flush=True)
        return
    print(f"{row['workload']:32} {row['system']:22} {row['ms']:9.3f} ms {row['tflops']:8.1f} "
          f"TFLOP/s  error {row['error']:.2e}  first {row['first_call_s']:.1f} s", flush=True)


def warm(job) -> str:
    """Compile one autofuse system's kernel of one workload (at a small size: the kernel takes
    its sizes as arguments), so that the timed process finds it in the disk cache."""
    name, system, variants = job
    import cupy
    dtype, _, _, _, epilogue, precision = WORKLOADS[name]
    make = systems_for(dtype, epilogue, precision, variants, None, None)[system]
    x, w, b = (cupy.ones(shape, dtype) for shape in ((256, 256), (256, 256), (256,)))
    began = time.perf_counter()
    make()(x, w, b)
    cupy.cuda.Device().synchronize()
    return f"warm {name} {system}: {time.perf_counter() - began:.1f} s"


def warm_all(names, variants, workers: int) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    jobs = []
    for name in names:
        dtype, _, _, _, epilogue, precision = WORKLOADS[name]
        systems = systems_for(dtype, epilogue, precision, variants, None, None)
        jobs += [(name, system, variants) for system in systems
                 if system.startswith("autofuse") and not any(word in system for word in SKIP)]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        for line in pool.map(warm, jobs):
            print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="workload names containing this")
    parser.add_argument("--variants", default="", help="name:FIELD=value+...;name2:...")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--peers", default="torch,jax")
    parser.add_argument("--skip", default="", help="systems whose names contain any of these "
                        "(comma-separated) are left out")
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    parser.add_argument("--commit", default="", help="the commit measured (where git cannot say)")
    parser.add_argument("--warm", type=int, default=0, help="first compile autofuse's kernels "
                        "in this many processes (they land in the disk cache)")
    args = parser.parse_args()
    variants = parse_variants(args.variants)
    SKIP.extend(filter(None, args.skip.split(",")))
    if args.warm:
        warm_all([name for name in WORKLOADS if args.only in name], variants, args.warm)
    import cupy
    torch = jax = None
    if "torch" in args.peers:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
    if "jax" in args.peers:
        import jax
        jax.config.update("jax_enable_x64", True)
    commit = args.commit or subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                           capture_output=True, text=True).stdout.strip()
    result = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
              "date": time.strftime("%Y-%m-%d"), "commit": commit, "rows": []}
    os.makedirs(args.out, exist_ok=True)
    for name, (dtype, m, n, k, epilogue, precision) in WORKLOADS.items():
        if args.only in name:
            result["rows"] += run(name, dtype, m, n, k, epilogue, precision, variants, torch,
                                  jax, args.rounds)
            with open(os.path.join(args.out, "tensor_cores.json"), "w") as handle:
                json.dump(result, handle, indent=1)     # (after each workload)


if __name__ == "__main__":
    main()
