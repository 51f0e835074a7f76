"""Matrix products with an epilogue, relu(x @ w + b), float32 and float64, at several shapes:
autofuse as planned (autofuse), its compact kernel for every product (autofuse-compact), and
the per-shape kernels (autofuse-old, Tuning(gemm=False)), beside CuPy
(cupy.matmul is cuBLAS; the epilogue op by op), torch (float32 exact: no TF32) and torch.compile;
and each system's first call of each shape in a warm process (a fresh disk cache: autofuse
compiles a kernel for the first shape of a structure only).

    python benchmarks/gemm.py                        # table on stdout, JSON to $OUT/gemm.json
    python benchmarks/gemm.py --only square --dtypes float32 --systems autofuse,cupy

Method: each system's result is checked against cupy.matmul first (float64 reference); then
every system is warmed up and timed by CUDA events around batches of calls, the median of
`--rounds` batches. TFLOP/s counts 2*M*N*K per product.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SHAPES = {                               # name: (batch, M, N, K)
    "square 1024": ((), 1024, 1024, 1024),
    "square 2048": ((), 2048, 2048, 2048),
    "square 4096": ((), 4096, 4096, 4096),
    "square 8192": ((), 8192, 8192, 8192),
    "mlp 8192x4096x4096": ((), 8192, 4096, 4096),
    "tall-skinny 65536x64x1024": ((), 65536, 64, 1024),
    "small M 64x4096x4096": ((), 64, 4096, 4096),
    "long K 512x512x65536": ((), 512, 512, 65536),
    "batched 32x2048x64x2048": ((32,), 2048, 64, 2048),
}
SYSTEMS = ("autofuse", "autofuse-compact", "autofuse-old", "cupy", "cupy.matmul", "torch", "torch.compile")


def relu_matmul(xp):
    return lambda x, w, b: xp.maximum(x @ w + b, 0)


def make_systems(names, torch):
    import cupy
    import autofuse
    from autofuse.backends.cuda.tuning import Tuning
    systems = {}
    if "autofuse" in names:
        systems["autofuse"] = lambda: autofuse.jit(relu_matmul(np))
    if "autofuse-compact" in names:        # the compact kernel also where the tiles one applies
        systems["autofuse-compact"] = lambda: autofuse.jit(relu_matmul(np),
                                                           tuning=Tuning(gemm_over_tiles=True))
    if "autofuse-old" in names:
        systems["autofuse-old"] = lambda: autofuse.jit(relu_matmul(np), tuning=Tuning(gemm=False))
    if "cupy" in names:
        systems["cupy"] = lambda: relu_matmul(cupy)
    if "cupy.matmul" in names:
        systems["cupy.matmul"] = lambda: (lambda x, w, b: cupy.matmul(x, w))
    if torch is not None and "torch" in names:
        systems["torch"] = lambda: (lambda x, w, b: torch.clamp_min(x @ w + b, 0))
    if torch is not None and "torch.compile" in names:
        systems["torch.compile"] = lambda: torch.compile(
            lambda x, w, b: torch.clamp_min(x @ w + b, 0), dynamic=False)
    return systems


def timed(call, args, rounds: int) -> float:
    """Median milliseconds a call (CUDA events around batches of calls, after warm-up)."""
    import cupy
    call(*args)
    cupy.cuda.Device().synchronize()
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    call(*args)
    stop.record()
    stop.synchronize()
    once = max(cupy.cuda.get_elapsed_time(start, stop), 1e-3)
    calls = max(1, min(200, int(20.0 / once)))
    times = []
    for _ in range(rounds):
        start.record()
        for _ in range(calls):
            call(*args)
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) / calls)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="shape names containing this")
    parser.add_argument("--dtypes", default="float32,float64")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    args = parser.parse_args()
    os.environ.setdefault("AUTOFUSE_CACHE_DIR", tempfile.mkdtemp(prefix="autofuse-gemm-"))
    import cupy
    try:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    except ImportError:
        torch = None
    names = args.systems.split(",")
    _warm(torch)
    rows = []
    for dtype in args.dtypes.split(","):
        for shape_name, (batch, m, n, k) in SHAPES.items():
            if args.only not in shape_name:
                continue
            rows += _shape(shape_name, dtype, batch, m, n, k, names, torch, args.rounds)
    _print(rows)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "gemm.json"), "w") as out:
        json.dump({"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                   "rows": rows}, out, indent=1)


_MADE: dict = {}          # (system, dtype) -> one callable for every shape (a jit's cache)


def _shape(shape_name, dtype, batch, m, n, k, names, torch, rounds) -> list:
    import cupy
    rng = np.random.default_rng(0)
    x = cupy.asarray(rng.standard_normal(batch + (m, k)).astype(dtype))
    w = cupy.asarray((rng.standard_normal((k, n)) / np.sqrt(k)).astype(dtype))
    b = cupy.asarray(rng.standard_normal(n).astype(dtype))
    want = cupy.maximum(cupy.matmul(x.astype(np.float64), w.astype(np.float64)) + b, 0)
    flops = 2.0 * m * n * k * int(np.prod(batch, dtype=np.int64))
    rows = []
    for system, make in make_systems(names, torch).items():
        inputs = (x, w, b)
        if system.startswith("torch"):
            inputs = tuple(torch.as_tensor(a, device="cuda") for a in inputs)
        call = _MADE.setdefault((system, dtype), make())
        cupy.cuda.Device().synchronize()
        began = time.perf_counter()
        got = call(*inputs)
        cupy.cuda.Device().synchronize()
        first = time.perf_counter() - began
        got = cupy.asarray(got)
        if system != "cupy.matmul":
            tolerance = 1e-3 if dtype == "float32" else 1e-9
            error = float(cupy.abs(got - want).max() / (cupy.abs(want).max() + 1e-30))
            ok = error <= tolerance
        else:
            ok, error = True, 0.0
        ms = timed(call, inputs, rounds) if ok else float("nan")
        rows.append({"shape": shape_name, "dtype": dtype, "system": system, "ms": ms,
                     "tflops": flops / ms / 1e9 if ok else 0.0, "first_call_s": first,
                     "ok": ok, "error": error})
    return rows


def _warm(torch) -> None:
    """A warm process: numba, CuPy, torch and autofuse imported and run once on other shapes."""
    import cupy
    import autofuse
    x = cupy.ones((64, 64), np.float32)
    autofuse.jit(lambda a: a * 2 + 1)(x)
    cupy.matmul(x, x)
    if torch is not None:
        t = torch.ones((64, 64), device="cuda")
        torch.compile(lambda a: a * 2 + 1)(t)
        torch.cuda.synchronize()


def _print(rows) -> None:
    print(f"{'shape':28} {'dtype':8} {'system':14} {'ms':>9} {'TFLOP/s':>8} {'first s':>8}  ok")
    for row in rows:
        print(f"{row['shape']:28} {row['dtype']:8} {row['system']:14} {row['ms']:9.3f} "
              f"{row['tflops']:8.2f} {row['first_call_s']:8.2f}  {row['ok']}")


if __name__ == "__main__":
    main()
