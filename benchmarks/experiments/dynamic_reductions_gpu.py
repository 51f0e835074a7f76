"""On a GPU: reductions across a batch that varies (issue 33) as class kernels, whose chunks or
grid are chosen at launch (emit/two_stage_plan.py, emit/split.py), against the kernels
specialized to each shape (jit(dynamic=False)): time per call at large sizes (interleaved rounds,
median, CuPy inputs), both kernels' strategies and grids, answers against NumPy, and the compiles
50 batch sizes take through the class.

    python benchmarks/experiments/dynamic_reductions_gpu.py [--rounds 15] [--json out.json]
        [--only NAME] [--scale K]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import cupy as cp
import numpy as np

sys.path[:0] = [os.path.join(os.path.dirname(__file__), "..", "..")]
os.environ.setdefault("AUTOFUSE_CACHE_DIR", tempfile.mkdtemp())

import autofuse  # noqa: E402
from benchmarks.rounds import time_rounds  # noqa: E402


def column_sum(x):
    return x.sum(axis=0)


def bias_gradient(g):
    return (g * np.float32(2)).sum(axis=0)


def column_mean(x):
    return x.mean(axis=0)


def mse(p, y):
    return ((p - y) ** 2).mean()


def total(x):
    return x.sum()


def batchnorm(x, g, b):
    m = x.mean(axis=0)
    v = ((x - m) ** 2).mean(axis=0)
    return (x - m) / np.sqrt(v + np.float32(1e-5)) * g + b


def column_softmax(x):
    e = np.exp(x - x.max(axis=0))
    return e / e.sum(axis=0)


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# name -> (function, arguments at batch n, the batch timed)
PROGRAMS = {
    "column sum 65536x256": (column_sum, lambda rng, n: (f32(rng, n, 256),), 65536),
    "column sum 8192x4096": (column_sum, lambda rng, n: (f32(rng, n, 4096),), 8192),
    "bias gradient 65536x256": (bias_gradient, lambda rng, n: (f32(rng, n, 256),), 65536),
    "column mean 65536x256": (column_mean, lambda rng, n: (f32(rng, n, 256),), 65536),
    "mse 2^24": (mse, lambda rng, n: (f32(rng, n), f32(rng, n)), 1 << 24),
    "sum 2^24 + 3": (total, lambda rng, n: (f32(rng, n),), (1 << 24) + 3),
    "mse 65536x256": (mse, lambda rng, n: (f32(rng, n, 256), f32(rng, n, 256)), 65536),
    # whole-column programs: column tiles (8192 rows), two-stage sums and a pass (65536 rows)
    "batchnorm 65536x256": (batchnorm, lambda rng, n: (f32(rng, n, 256), f32(rng, 256),
                                                       f32(rng, 256)), 65536),
    "batchnorm 8192x4096": (batchnorm, lambda rng, n: (f32(rng, n, 4096), f32(rng, 4096),
                                                       f32(rng, 4096)), 8192),
    "column softmax 65536x256": (column_softmax, lambda rng, n: (f32(rng, n, 256),), 65536),
    "column softmax 8192x4096": (column_softmax, lambda rng, n: (f32(rng, n, 4096),), 8192),
}


def launch_facts(jitted, args) -> list:
    return [{"strategy": k.strategy, "grid": list(k.launch.get("grid", ())),
             "block": k.launch.get("block")} for k in jitted.lower(*args).kernels]


def compiles_over_sizes(fn, make, rng, timed: int) -> dict:
    """Compiles and instances of one jitted function over 50 batch sizes (0, 1, then up to the
    timed batch), each answer against NumPy."""
    jitted = autofuse.jit(fn, backend="cuda")
    sizes = [0, 1] + sorted({max(2, int(timed * k / 48)) for k in range(48)} |
                            {2, 3, 5, 7, 11})[:48]
    wrong = []
    for n in sizes:
        host = make(rng, n)
        with np.errstate(invalid="ignore", divide="ignore"):
            # NOTE: against float64: two float32 sums of n terms in other orders differ by up
            # to about n x 2^-24 x the terms' size (1e-3 flagged correct sums of 27306 rows)
            try:
                want = fn(*[a.astype(np.float64) if a.dtype == np.float32 else a for a in host])
            except ValueError:          # (NumPy's max of no rows: autofuse raises it too)
                continue
            got = cp.asnumpy(jitted(*[cp.asarray(a) for a in host]))
        if not np.allclose(got, want, rtol=1e-4, atol=1e-4 + 1.6e-6 * n, equal_nan=True):
            wrong.append(n)
    info = jitted.cache_info()
    return {"sizes": len(sizes), "compiles": info.compiles, "instances": info.instances,
            "wrong": wrong}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", default=None)
    parser.add_argument("--only", default=None, help="programs whose name contains this")
    parser.add_argument("--scale", type=int, default=1,
                        help="batches divided by this (a quick check of the script)")
    args = parser.parse_args()
    rng = np.random.default_rng(33)
    device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    report = {"device": device, "rounds": args.rounds, "programs": {}}
    sync = lambda _: cp.cuda.Device().synchronize()      # noqa: E731
    print(f"{device}; median of {args.rounds} interleaved rounds")
    print(f"{'program':26} {'class us':>9} {'static us':>9} {'ratio':>6}  ok  compiles/50")
    failures = 0
    for name, (fn, make, n) in PROGRAMS.items():
        if args.only and args.only not in name:
            continue
        n //= args.scale
        host = make(rng, n)
        device_args = tuple(cp.asarray(a) for a in host)
        dynamic = autofuse.jit(fn, backend="cuda")
        # two other sizes build the class: smaller ones, since a float32 mean's count of more
        # than 2^23 elements is no exact size form (literals.exact_count): a class first built
        # there keeps its size static (the class built below runs every size)
        # (whole-column programs partition by the class's stand-in: built below max_row rows,
        # the class keeps a column in one kernel, as the static planner does at those sizes; so
        # they are built a row or three short of the batch timed)
        for other in (n - 1, n - 3) if name.startswith(("batchnorm", "column softmax")) else \
                (n // 8 + 1, n // 16 + 3):
            dynamic(*[cp.asarray(a) for a in make(rng, other)])
        if "# dynamic: n0" not in dynamic.lower(*device_args).as_text("fused"):
            print(f"{name}: no class kernel at this size (see the fused text)")
        static = autofuse.jit(fn, backend="cuda", dynamic=False)
        want = fn(*host)
        ok = all(np.allclose(cp.asnumpy(f(*device_args)), want, rtol=1e-3, atol=1e-3)
                 for f in (dynamic, static))
        times = time_rounds({"class": (dynamic, device_args), "static": (static, device_args)},
                            args.rounds, sync)
        counts = compiles_over_sizes(fn, make, rng, n if n <= 65536 else 1 << 20)
        failures += (not ok) + bool(counts["wrong"])
        entry = {"class_us": times["class"] * 1e3, "static_us": times["static"] * 1e3,
                 "ratio": times["class"] / times["static"], "ok": ok,
                 "class_kernels": launch_facts(dynamic, device_args),
                 "static_kernels": launch_facts(static, device_args), "fifty_sizes": counts,
                 "fused_text_head": [line for line in dynamic.lower(*device_args).as_text(
                     "fused").splitlines() if line.startswith("# ")][:4]}
        report["programs"][name] = entry
        print(f"{name:26} {entry['class_us']:9.1f} {entry['static_us']:9.1f} "
              f"{entry['ratio']:6.3f}  {'ok' if ok else 'NO':3} {counts['compiles']}"
              f"{' WRONG at ' + str(counts['wrong']) if counts['wrong'] else ''}")
        for kind in ("class", "static"):
            for kernel in entry[f"{kind}_kernels"]:
                print(f"    {kind:6} {kernel['strategy']}  grid {kernel['grid']} "
                      f"block {kernel['block']}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=1)
    return failures


if __name__ == "__main__":
    sys.exit(main())
