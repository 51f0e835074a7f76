"""CPU backend benchmark: autofuse vs NumPy op by op vs a hand-written numba prange loop.

    python benchmarks/cpu.py                 # float32, ~64 MB arrays, 1024^3 matmul
    python benchmarks/cpu.py --small         # quick run (~4 MB arrays, 256^3 matmul)
    python benchmarks/cpu.py --mb 16 --repeats 5 --json out.json

Times are medians of `--repeats` runs after warm-up (the first, compiling call is excluded).
The last row times, in a fresh process with a warm disk cache, the first call of a cached
function beyond import (trace + loading numba's cached binaries + one run), and for reference
the same function's steady-state call.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import autofuse  # noqa: E402

F32 = np.float32
C = F32(0.7978845608028654)
A = F32(0.044715)
EPS = F32(1e-5)


# -- the computations, three ways -------------------------------------------------------------
def chain_np(x, y, z, w):
    return np.maximum(x * y + z, F32(0)) * w


def gelu_np(x, b):
    h = x + b
    return F32(0.5) * h * (F32(1) + np.tanh(C * (h + A * h * h * h)))


def softmax_np(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm_np(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    d = x - m
    v = (d * d).mean(axis=-1, keepdims=True)
    return d / np.sqrt(v + EPS) * g + b


def sumsq_np(x):
    return (x * x).sum()


def mm_np(x, w, b):
    return np.maximum(x @ w + b, F32(0))


@numba.njit(parallel=True, cache=True)
def chain_nb(x, y, z, w):
    out = np.empty_like(x)
    for i in numba.prange(x.shape[0]):
        for j in range(x.shape[1]):
            t = x[i, j] * y[i, j] + z[i, j]
            out[i, j] = (t if t > 0 else F32(0)) * w[i, j]
    return out


@numba.njit(parallel=True, cache=True)
def gelu_nb(x, b):
    out = np.empty_like(x)
    for i in numba.prange(x.shape[0]):
        for j in range(x.shape[1]):
            h = x[i, j] + b[j]
            out[i, j] = F32(0.5) * h * (F32(1) + math.tanh(C * (h + A * h * h * h)))
    return out


@numba.njit(parallel=True, cache=True)
def softmax_nb(x):
    out = np.empty_like(x)
    n = x.shape[1]
    for i in numba.prange(x.shape[0]):
        m = x[i, 0]
        for j in range(n):
            m = max(m, x[i, j])
        s = 0.0
        for j in range(n):
            e = math.exp(x[i, j] - m)
            out[i, j] = e
            s += e
        inv = F32(s)
        for j in range(n):
            out[i, j] = out[i, j] / inv
    return out


@numba.njit(parallel=True, cache=True)
def layernorm_nb(x, g, b):
    out = np.empty_like(x)
    n = x.shape[1]
    for i in numba.prange(x.shape[0]):
        s = 0.0
        for j in range(n):
            s += x[i, j]
        m = F32(s / n)
        v = 0.0
        for j in range(n):
            d = x[i, j] - m
            v += d * d
        r = F32(1) / math.sqrt(F32(v / n) + EPS)
        for j in range(n):
            out[i, j] = (x[i, j] - m) * r * g[j] + b[j]
    return out


@numba.njit(parallel=True, cache=True)
def sumsq_nb(x):
    flat = x.reshape(-1)
    chunks = 64
    step = (flat.size + chunks - 1) // chunks
    partial = np.zeros(chunks)
    for c in numba.prange(chunks):
        s = 0.0
        for k in range(c * step, min(flat.size, (c + 1) * step)):
            s += flat[k] * flat[k]
        partial[c] = s
    return F32(partial.sum())


@numba.njit(parallel=True, cache=True)
def mm_nb(x, w, b):
    t = np.dot(x, w)
    for i in numba.prange(t.shape[0]):
        for j in range(t.shape[1]):
            v = t[i, j] + b[j]
            t[i, j] = v if v > 0 else F32(0)
    return t


chain_af = autofuse.jit(chain_np)
gelu_af = autofuse.jit(gelu_np)
softmax_af = autofuse.jit(softmax_np)
layernorm_af = autofuse.jit(layernorm_np)
sumsq_af = autofuse.jit(sumsq_np)
mm_af = autofuse.jit(mm_np)


# -- timing -----------------------------------------------------------------------------------
def median_time(fn, args, repeats: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn(*args)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cases(mb: float, mm_n: int, rng):
    elements = int(mb * (1 << 20) / 4)
    cols = 1024
    rows = max(1, elements // cols)
    x = lambda *s: rng.standard_normal(s, dtype=F32)  # noqa: E731
    big = (rows, cols)
    yield "relu(x*y+z)*w", (chain_af, chain_np, chain_nb), (x(*big), x(*big), x(*big), x(*big))
    yield "bias+GELU(tanh)", (gelu_af, gelu_np, gelu_nb), (x(*big), x(cols))
    yield "softmax rows", (softmax_af, softmax_np, softmax_nb), (x(*big),)
    yield "layernorm rows", (layernorm_af, layernorm_np, layernorm_nb), (x(*big), x(cols), x(cols))
    yield "sum of squares", (sumsq_af, sumsq_np, sumsq_nb), (x(*big),)
    yield f"relu(x@w+b) {mm_n}^3", (mm_af, mm_np, mm_nb), (x(mm_n, mm_n), x(mm_n, mm_n), x(mm_n))


COLD_SCRIPT = textwrap.dedent("""
    import sys, time, json
    t0 = time.perf_counter()
    import numpy as np
    sys.path.insert(0, {root!r})
    import autofuse
    import autofuse.backends.cpu   # the CPU backend: starts numba's CPU target
    t1 = time.perf_counter()

    @autofuse.jit
    def layernorm(x, g, b):
        m = x.mean(axis=-1, keepdims=True)
        d = x - m
        v = (d * d).mean(axis=-1, keepdims=True)
        return d / np.sqrt(v + np.float32(1e-5)) * g + b

    x = np.ones((256, 1024), np.float32); g = np.ones(1024, np.float32)
    t2 = time.perf_counter()
    layernorm(x, g, g)
    t3 = time.perf_counter()
    steady = []
    for _ in range(20):
        s = time.perf_counter(); layernorm(x, g, g); steady.append(time.perf_counter() - s)
    steady.sort()
    print(json.dumps(dict(import_s=t1 - t0, first_call_s=t3 - t2, steady_s=steady[10])))
""")


def cold_start() -> dict:
    """Run the script twice in fresh processes sharing one cache dir; report the second run."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, AUTOFUSE_CACHE_DIR=cache)
        script = COLD_SCRIPT.format(root=str(Path(__file__).resolve().parent.parent))
        runs = []
        for _ in range(3):
            out = subprocess.run([sys.executable, "-c", script], env=env, check=True,
                                 capture_output=True, text=True).stdout
            runs.append(json.loads(out.strip().splitlines()[-1]))
    return {"cold": runs[0], "warm": min(runs[1:], key=lambda r: r["first_call_s"])}


def machine() -> dict:
    model = "unknown"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=Path(__file__).parent).stdout.strip()
    except OSError:
        commit = "unknown"
    return dict(cpu=model, cores=os.cpu_count(), python=platform.python_version(),
                numpy=np.__version__, numba=numba.__version__, autofuse=autofuse.__version__,
                commit=commit, date=time.strftime("%Y-%m-%d"), numba_threads=numba.get_num_threads(),
                load_average=os.getloadavg())


def markdown(result: dict) -> str:
    """The results as a Markdown table (for BENCHMARKS.md)."""
    lines = ["| case | autofuse ms | NumPy ms | numba prange ms | NumPy / autofuse | "
             "autofuse / numba |", "|---|---:|---:|---:|---:|---:|"]
    for row in result["rows"]:
        lines.append(f"| {row['case']} | {row['autofuse_ms']:.1f} | {row['numpy_ms']:.1f} | "
                     f"{row['numba_ms']:.1f} | {row['speedup_vs_numpy']:.2f}x | "
                     f"{row['ratio_vs_numba']:.2f}x |")
    cold = result.get("second_process")
    if cold:
        w = cold["warm"]
        lines.append(f"\nSecond process, warm disk cache: `import autofuse` + CPU backend "
                     f"{w['import_s'] * 1e3:.0f} ms; first call {w['first_call_s'] * 1e3:.1f} ms, "
                     f"steady call {w['steady_s'] * 1e3:.1f} ms, so the first call costs "
                     f"{(w['first_call_s'] - w['steady_s']) * 1e3:.1f} ms beyond a steady one "
                     f"(cold cache first call: {cold['cold']['first_call_s'] * 1e3:.0f} ms).")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=64.0, help="size of each big array in MB")
    parser.add_argument("--matmul", type=int, default=1024, help="matmul size n (n x n x n)")
    parser.add_argument("--small", action="store_true", help="4 MB arrays, 256^3 matmul, 5 repeats")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--only", default="", help="comma-separated substrings of case names")
    parser.add_argument("--no-cold", action="store_true", help="skip the second-process row")
    parser.add_argument("--json", default="benchmarks/cpu.json", help="where to write results")
    args = parser.parse_args(argv)
    if args.small:
        args.mb, args.matmul, args.repeats = 4.0, 256, 5
    rng = np.random.default_rng(0)
    rows = []
    print(f"{'case':<22} {'autofuse ms':>12} {'numpy ms':>10} {'numba ms':>10} "
          f"{'numpy/af':>9} {'af/numba':>9}")
    for name, (af, ref, nb), inputs in cases(args.mb, args.matmul, rng):
        if args.only and not any(s in name for s in args.only.split(",")):
            continue
        expected = ref(*inputs)
        for fn in (af, nb):
            np.testing.assert_allclose(fn(*inputs), expected, rtol=2e-3, atol=1e-4)
        t_af, t_np, t_nb = (median_time(fn, inputs, args.repeats) for fn in (af, ref, nb))
        row = dict(case=name, autofuse_ms=t_af * 1e3, numpy_ms=t_np * 1e3, numba_ms=t_nb * 1e3,
                   speedup_vs_numpy=t_np / t_af, ratio_vs_numba=t_af / t_nb,
                   bytes_per_array=int(inputs[0].nbytes))
        rows.append(row)
        print(f"{name:<22} {row['autofuse_ms']:>12.2f} {row['numpy_ms']:>10.2f} "
              f"{row['numba_ms']:>10.2f} {row['speedup_vs_numpy']:>9.2f} {row['ratio_vs_numba']:>9.2f}")
    cold = None if args.no_cold else cold_start()
    if cold:
        w = cold["warm"]
        print(f"second process, warm disk cache: import {w['import_s'] * 1e3:.1f} ms, first call "
              f"{w['first_call_s'] * 1e3:.1f} ms (steady call {w['steady_s'] * 1e3:.2f} ms); "
              f"first process (cold cache) first call {cold['cold']['first_call_s'] * 1e3:.0f} ms")
    result = dict(machine=machine(), mb=args.mb, matmul=args.matmul, repeats=args.repeats,
                  rows=rows, second_process=cold)
    print()
    print(markdown(result))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
