"""Shapes that vary (issue 33): compiles and time of a batch-size sweep with shape classes
(jit's default, dynamic=None) against one compile a shape (dynamic=False), the speed of class
kernels (sizes as arguments) against specialized ones, and the per-call cost of the fast path.

    python benchmarks/dynamic_shapes.py                     # CPU backend, 50 sizes
    python benchmarks/dynamic_shapes.py --sizes 10 --json out.json
    python benchmarks/dynamic_shapes.py --gpu --json out.json   # CUDA (CuPy arrays), an H200

On the GPU: the benchmark suite's workloads (workloads.py) at full size, the class kernel (the
batch dimension dynamic after a call at another size) against the specialized one, median
milliseconds of synchronized batches; and the sweep of `--sizes` batch sizes of bias+GELU and
softmax rows (4096 columns) with shape classes and with dynamic=False.

Each sweep runs in a fresh process with an empty disk cache (autofuse's kernels and numba's
binaries), so it pays what a new program would. Steady-state times are medians of `--repeats`
runs after warm-up.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import autofuse  # noqa: E402

F32 = np.float32


def elementwise(x, b):
    return np.tanh(x * F32(0.5) + b) * x


def steps(x, y):
    for _ in range(8):
        x = np.tanh(x * F32(0.9) + y)
        y = y * F32(0.5) - x
    return x + y


def row_norms(x):
    return np.sqrt((x * x).sum(axis=1))


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + F32(1e-5)) * g + b


def dense(x, w, b):
    return np.maximum(x @ w + b, F32(0))


FUNCTIONS = {"elementwise": elementwise, "loop": steps, "reduction": row_norms,
             "rows (softmax)": softmax, "rows (layernorm)": layernorm, "product": dense}


def arguments(kind: str, n: int, width: int, rng):
    x = rng.standard_normal((n, width)).astype(F32)
    vector = rng.standard_normal(width).astype(F32)
    if kind == "loop":
        return x, rng.standard_normal((n, width)).astype(F32)
    if kind in ("reduction", "rows (softmax)"):
        return (x,)
    if kind == "rows (layernorm)":
        return x, vector, rng.standard_normal(width).astype(F32)
    if kind == "product":
        return x, rng.standard_normal((width, width)).astype(F32) / F32(width ** 0.5), vector
    return x, vector


def sweep(kind: str, dynamic, sizes: list, width: int) -> dict:
    """Call the function once at every size (the first call of each); compiles and seconds."""
    rng = np.random.default_rng(0)
    f = autofuse.jit(FUNCTIONS[kind], dynamic=dynamic)
    start = time.perf_counter()
    worst = 0.0
    for n in sizes:
        args = arguments(kind, n, width, rng)
        got = f(*args)
        want = FUNCTIONS[kind](*args)
        worst = max(worst, float(np.max(np.abs(got - want), initial=0.0)))
    seconds = time.perf_counter() - start
    info = f.cache_info()
    return {"compiles": info.compiles, "instances": info.instances, "seconds": seconds,
            "max_abs_error": worst}


def steady(kind: str, rows: int, width: int, repeats: int) -> dict:
    """Steady-state time of one call at `rows` rows: the class kernel against the specialized."""
    rng = np.random.default_rng(1)
    args = arguments(kind, rows, width, rng)
    result, calls = {}, {}
    for label, dynamic in (("specialized", False), ("class", None)):
        f = autofuse.jit(FUNCTIONS[kind], dynamic=dynamic)
        if dynamic is None:         # the batch dimension seen at another size: the class kernel
            f(*arguments(kind, rows - 1, width, rng))
        f(*args)
        calls[label] = functools.partial(f, *args)
    # NOTE: the two alternate call by call, so a change of the machine's state (another job,
    # the clock) falls on both
    times = interleaved(calls, repeats)
    for label, values in times.items():
        result[label] = statistics.median(values)
        result[f"{label} best"] = min(values)
    result["class/specialized"] = result["class"] / result["specialized"]
    result["best class/specialized"] = result["class best"] / result["specialized best"]
    return result


def interleaved(calls: dict, repeats: int) -> dict:
    """label -> seconds of each of `repeats` calls, the labels taking turns (after warm-up)."""
    for call in calls.values():
        for _ in range(3):
            call()
    times = {label: [] for label in calls}
    for _ in range(repeats):
        for label, call in calls.items():
            start = time.perf_counter()
            call()
            times[label].append(time.perf_counter() - start)
    return times


def text_differences(rows: int, width: int) -> dict:
    """Per kind, the lines of the class kernels' text that differ from the kernels specialized
    for `rows` rows (other than the parameter lists): what could make them slower."""
    import difflib
    rng = np.random.default_rng(4)
    found = {}
    for kind, fn in FUNCTIONS.items():
        args = arguments(kind, rows, width, rng)
        shaped, special = autofuse.jit(fn), autofuse.jit(fn, dynamic=False)
        shaped(*arguments(kind, rows - 1, width, rng))
        lines = []
        for a, b in zip(special.lower(*args).kernels, shaped.lower(*args).kernels):
            diff = difflib.unified_diff((a.source or "").splitlines(),
                                        (b.source or "").splitlines(), lineterm="", n=0)
            lines += [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")
                      and not line[1:].lstrip().startswith("def ")]
        found[kind] = lines
    return found


def per_call(repeats: int) -> dict:
    """The fast path's cost a call on a tiny input: a specialized entry, a class instance, and
    a new size each call (the class program set up at it, no compile)."""
    x, b = np.ones((8, 16), F32), np.ones(16, F32)
    out = {}
    for label, dynamic in (("specialized", False), ("class", True)):
        f = autofuse.jit(elementwise, dynamic=dynamic)
        f(x, b)
        loops = 20000
        start = time.perf_counter()
        for _ in range(loops):
            f(x, b)
        out[f"{label} call (us)"] = (time.perf_counter() - start) / loops * 1e6
    f = autofuse.jit(elementwise, dynamic=True)
    f(x, b)
    news = [np.ones((n, 16), F32) for n in range(9, 9 + 200)]
    start = time.perf_counter()
    for y in news:
        f(y, b)
    out["new size, class program (us)"] = (time.perf_counter() - start) / len(news) * 1e6
    return out


# -- the GPU ---------------------------------------------------------------------------------------
# How each suite workload's size varies: its arguments at a neighbouring size (one element fewer
# in the dimension a batch or a sequence would vary in); the rest vary their first axis.
SMALLER = {
    "(x.T+y)*2": lambda x, y: (x[:, :-1], y[:-1]),
    "sum(x*x)": lambda x: (x[:-1],),
    "relu(x@w+b)": lambda x, w, b: (x[:-1], w, b),
    "attention": lambda q, k, v: (q[:, :-1], k, v),
    "5-point stencil": lambda u: (u[:-1],),
}


def _smaller(load, host):
    """The arguments at a neighbouring size: the suite's rule, else one fewer along the first
    input's first axis in every input of two or more axes that shares it (a bias vector of that
    length is the columns'), along the last axis where the first is at most 2 long; a vector
    times a matrix: one column fewer in the matrix."""
    rule = SMALLER.get(load.name)
    if rule is not None:
        return rule(*host)
    if host[0].ndim == 1 and len(host) > 1 and host[1].ndim == 2:     # (x @ A: A's columns)
        return (host[0], host[1][:, :-1]) + tuple(host[2:])
    rows = host[0].shape[0]
    if rows <= 2:
        return (host[0][..., :-1],) + tuple(host[1:])
    return tuple(a[:-1] if a.ndim >= 2 and a.shape[0] == rows else a for a in host)


def gpu_time(call, rounds: int = 7, calls: int = 20) -> float:
    """Median milliseconds a call over `rounds` synchronized batches of `calls` calls."""
    import cupy
    for _ in range(3):
        call()
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        cupy.cuda.Device().synchronize()
        times.append((time.perf_counter() - start) / calls * 1e3)
    return statistics.median(times)


def _class_against_specialized(load, rng) -> dict:
    """One workload: its class program (built after a call at a neighbouring size) against the
    program specialized to its shape, alternating rounds."""
    import cupy
    host = load.make(rng)
    fn = load.fn(np)
    device = [cupy.asarray(a) for a in host]
    # a dimension varies: a first call one element smaller in it, then the full size
    smaller = [cupy.asarray(np.ascontiguousarray(a)) for a in _smaller(load, host)]
    shaped = autofuse.jit(fn)
    shaped(*smaller)
    cupy.cuda.Device().synchronize()
    special = autofuse.jit(fn, dynamic=False)
    want = fn(*host)
    row = {}
    for label, f in (("specialized", special), ("class", shaped)):
        got, wanted = f(*device), want
        pairs = zip(got, wanted) if isinstance(wanted, tuple) else ((got, wanted),)
        row[f"{label} max error"] = max(float(np.max(np.abs(
            cupy.asnumpy(g).astype(np.float64) - np.asarray(w, np.float64)), initial=0.0))
            for g, w in pairs)
    for turn in range(3):       # (alternating, so a drift of the device falls on both)
        for label, f in (("specialized", special), ("class", shaped)):
            row.setdefault(f"{label} ms rounds", []).append(gpu_time(lambda: f(*device)))
    for label in ("specialized", "class"):
        row[f"{label} ms"] = statistics.median(row[f"{label} ms rounds"])
    row["class/specialized"] = row["class ms"] / row["specialized ms"]
    text = shaped.lower(*device).as_text("fused").split("\n# fused")[0]
    row["class text"] = text[:600]
    row["class"] = "# dynamic:" in text
    row["kernels"] = [k.strategy for k in shaped.lower(*device).kernels]
    return row


def gpu_workloads(only=(), sweep=None) -> dict:
    """The class against the specialized program on the suite's workloads, or on another
    benchmark's points (`sweep`: "reductions", benchmarks/reductions_sweep.py's; "products",
    benchmarks/products.py's)."""
    import cupy
    from workloads import workloads
    if sweep == "reductions":
        from reductions_sweep import points
        loads = points()
    elif sweep == "products":
        from products import workloads as products
        loads = products()
    else:
        loads = workloads()
    rng = np.random.default_rng(2)
    out = {}
    for load in loads:
        if only and load.name not in only:
            continue
        try:
            row = _class_against_specialized(load, rng)
        except Exception as error:      # noqa: BLE001 - a point that fails says so and the rest run
            row = {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:300]}"}
        out[load.name] = row
        if "error" in row:
            print(f"{load.name:34} {row['error']}", flush=True)
        else:
            print(f"{load.name:34} {row['specialized ms']:8.4f} {row['class ms']:8.4f} "
                  f"{row['class/specialized']:6.3f} {'class' if row['class'] else 'static':6} "
                  f"{'; '.join(row['kernels'])[:90]}", flush=True)
    return out


def gpu_sweep(kind: str, dynamic, sizes: list) -> dict:
    import cupy
    fn = {"bias+GELU": lambda x, b: elementwise(x, b), "softmax rows": softmax}[kind]
    rng = np.random.default_rng(3)
    f = autofuse.jit(fn, dynamic=dynamic)
    b = cupy.asarray(rng.standard_normal(4096).astype(F32))
    start = time.perf_counter()
    worst = 0.0
    for n in sizes:
        x = rng.standard_normal((n, 4096)).astype(F32)
        got = cupy.asnumpy(f(cupy.asarray(x), b) if kind == "bias+GELU" else f(cupy.asarray(x)))
        want = fn(x, cupy.asnumpy(b)) if kind == "bias+GELU" else fn(x)
        worst = max(worst, float(np.max(np.abs(got - want), initial=0.0)))
    cupy.cuda.Device().synchronize()
    info = f.cache_info()
    return {"compiles": info.compiles, "instances": info.instances,
            "seconds": time.perf_counter() - start, "max_abs_error": worst}


def gpu_report(args) -> dict:
    import cupy
    sys.path.insert(0, str(ROOT / "benchmarks"))
    report = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "commit": os.environ.get("AUTOFUSE_COMMIT", "?"), "sweeps": {}}
    try:
        report["workloads"] = gpu_workloads(tuple(args.only or ()), args.sweep)
    except Exception as error:      # noqa: BLE001
        import traceback
        traceback.print_exc()
        report["workloads"] = {"error": f"{type(error).__name__}: {error}"}
    _save(args, {"gpu": report})
    sizes = [0, 1] + list(range(2, 2 + args.sizes - 2))
    order = [sizes[len(sizes) // 2]] + [s for s in sizes if s != sizes[len(sizes) // 2]]
    for kind in () if args.no_sweeps else ("bias+GELU", "softmax rows"):
        report["sweeps"][kind] = {}
        for label, dynamic, count in (("dynamic=None", None, len(order)),
                                      ("dynamic=False", False, args.static_sizes)):
            with tempfile.TemporaryDirectory() as cache:
                os.environ["AUTOFUSE_CACHE_DIR"] = cache
                result = gpu_sweep(kind, dynamic, order[:count])
            result["sizes"] = count
            report["sweeps"][kind][label] = result
            print(kind, label, result, flush=True)
            _save(args, {"gpu": report})
    return report


def _save(args, report: dict) -> None:
    """Write what a run found so far (a run cut short by a time limit keeps it)."""
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, default=str) + "\n")


def child(args) -> None:
    """One sweep in this (fresh) process; prints its JSON."""
    dynamic = {"none": None, "false": False}[args.mode]
    sizes = [0, 1] + list(range(2, 2 + args.sizes - 2))
    order = [sizes[len(sizes) // 2]] + [s for s in sizes if s != sizes[len(sizes) // 2]]
    print(json.dumps(sweep(args.kind, dynamic, order, args.width)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, default=50)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--rows", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", default=None)
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--kind", default=None)
    parser.add_argument("--mode", default="none")
    parser.add_argument("--gpu", action="store_true")
    parser.add_argument("--only", nargs="*", default=None, help="GPU: these suite workloads only")
    parser.add_argument("--no-sweeps", action="store_true", help="GPU: the suite only")
    parser.add_argument("--sweep", default=None, choices=("reductions", "products"),
                        help="GPU: another benchmark's points instead of the suite's workloads")
    parser.add_argument("--static-sizes", type=int, default=50,
                        help="sizes the GPU sweep runs with dynamic=False (each compiles)")
    parser.add_argument("--cpu-steady", action="store_true",
                        help="only the CPU steady-state and per-call rows")
    parser.add_argument("--texts", action="store_true",
                        help="only the lines where class kernels differ from specialized ones")
    args = parser.parse_args()
    if args.texts:
        print(json.dumps(text_differences(args.rows, args.width), indent=1))
        return
    if args.child:
        child(args)
        return
    if args.gpu or args.cpu_steady:
        report = {}
        sections = [("cpu steady", lambda: {k: steady(k, args.rows, args.width, args.repeats)
                                            for k in FUNCTIONS}),
                    ("cpu per call", lambda: per_call(args.repeats))]
        if args.gpu:
            sections = [("gpu", lambda: gpu_report(args))] + sections
        for name, run in sections:
            try:
                report[name] = run()
            except Exception as error:      # noqa: BLE001 - keep what the other sections found
                import traceback
                traceback.print_exc()
                report[name] = {"error": f"{type(error).__name__}: {error}"}
            print(name, "done", flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps(report, indent=1, default=str) + "\n")
        return
    report = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
              "sizes": args.sizes, "width": args.width, "sweeps": {}, "steady": {}}
    for kind in FUNCTIONS:
        report["sweeps"][kind] = {}
        for mode in ("none", "false"):
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, AUTOFUSE_CACHE_DIR=cache, NUMBA_CACHE_DIR=cache,
                           PYTHONPATH=str(ROOT))
                done = subprocess.run([sys.executable, __file__, "--child", "--kind", kind,
                                       "--mode", mode, "--sizes", str(args.sizes),
                                       "--width", str(args.width)],
                                      env=env, capture_output=True, text=True, check=True)
            report["sweeps"][kind][f"dynamic={mode.capitalize()}"] = json.loads(
                done.stdout.strip().splitlines()[-1])
            print(kind, mode, report["sweeps"][kind][f"dynamic={mode.capitalize()}"], flush=True)
        report["steady"][kind] = steady(kind, args.rows, args.width, args.repeats)
        print(kind, "steady", report["steady"][kind], flush=True)
    report["per_call"] = per_call(args.repeats)
    print("per call", report["per_call"], flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
