"""CPU backend benchmark: autofuse vs NumPy op by op vs a hand-written numba prange loop.

    python benchmarks/cpu.py                 # float32, ~64 MB arrays, 1024^3 matmul
    python benchmarks/cpu.py --small         # quick run (~4 MB arrays, 256^3 matmul)
    python benchmarks/cpu.py --mb 16 --repeats 5 --json out.json

Each case runs `--repeats` rounds after warm-up, autofuse, NumPy and numba taking turns within a
round; times are each system's median, ratios the median of the rounds' ratios (the first,
compiling call, from an empty disk cache, is timed on its own: `first call s`). A run of a call
shorter than SHORT_S is a batch of calls that takes about SHORT_S, over its calls (a single call
of a few microseconds, right after another case's 64 MB, measured its cold caches);
the computations and their hand-written numba versions are in cpu_cases.py. Then the per-call
cost of cached calls on tiny inputs (fastest of 200 rounds of 100 calls), and, in new processes
with a warm disk cache, `import autofuse` and the first call of a cached function (the CPU
backend's import, numba's included, the trace, loading numba's cached binaries, one run).
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
from cpu_cases import cases  # noqa: E402  (benchmarks/ is the script's folder)


# -- timing -----------------------------------------------------------------------------------
SHORT_S = 2e-3            # calls shorter than this are timed in batches of about this long
# NOTE: a pause before each turn: NumPy's OpenBLAS threads keep spinning for a while after its
# products return (about 0.1 s: OpenBLAS's thread timeout), and on two cores the next system's
# threads then share them (the MLP: 3.8 ms alone, 8.9 ms right after NumPy's call). After it, one
# untimed call of the turn's own system: waking numba's OpenMP threads after a pause costs
# 0.25-0.3 ms, a call of 1,000 elements 5 us. Each system is then timed as a program that calls
# it back to back sees it.
SETTLE_S = 0.25


def batch_size(fn, args, warmup: int = 2) -> int:
    """How many calls make one timed run: 1, or a batch of about SHORT_S for a short call."""
    for _ in range(warmup):
        fn(*args)
    once = math.inf
    for _ in range(3):          # (the least of three: a call that wakes sleeping threads is slow)
        start = time.perf_counter()
        fn(*args)
        once = min(once, time.perf_counter() - start)
    return 1 if once >= SHORT_S else max(1, int(SHORT_S / max(once, 1e-7)))


def interleaved_times(fns, args, rounds: int, settle: float = SETTLE_S) -> list[list[float]]:
    """Seconds a call of each of `fns`, `rounds` times, the systems taking turns within each round
    in an order rotated from round to round (a machine's slow spell then falls on all of them, and
    the per-round ratios keep it out). A turn starts `settle` seconds after the one before
    (SETTLE_S) with an untimed call of its own system (which wakes its threads: the timed calls
    then run as calls of one system back to back do)."""
    calls = [batch_size(fn, args) for fn in fns]
    times = [[] for _ in fns]
    order = list(range(len(fns)))
    for k in range(rounds):
        shift = k % len(order)
        for system in order[shift:] + order[:shift]:
            fn, count, own = fns[system], calls[system], times[system]
            time.sleep(settle)
            fn(*args)
            start = time.perf_counter()
            for _ in range(count):
                fn(*args)
            own.append((time.perf_counter() - start) / count)
    return times


def best_microseconds(fn, rounds: int = 200, calls: int = 100) -> float:
    """The fastest of `rounds` rounds of `calls` calls, per call: on a shared machine the minimum
    is the cost of the call itself, the other processes' time left out."""
    fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    return min(times) * 1e6


def adam_np(param, grad, m, v, step):
    m *= 0.9
    m += 0.1 * grad
    v *= 0.999
    v += 0.001 * grad * grad
    param -= 1e-3 * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)


@numba.njit(cache=True)
def adam_nb(param, grad, m, v, step):
    c1, c2 = 1 - 0.9 ** step, 1 - 0.999 ** step
    for i in range(param.size):
        m[i] = np.float32(0.9) * m[i] + np.float32(0.1) * grad[i]
        v[i] = np.float32(0.999) * v[i] + np.float32(0.001) * grad[i] * grad[i]
        param[i] -= np.float32(1e-3) * (m[i] / np.float32(c1)) / (
            np.sqrt(v[i] / np.float32(c2)) + np.float32(1e-8))


@numba.njit(cache=True)
def add_one_nb(x):
    return x + np.float32(1)


def overhead() -> list[dict]:
    """Per-call cost of cached calls on tiny inputs, beside NumPy and numba's own dispatch."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(10, dtype=np.float32)
    add_one = autofuse.jit(lambda x: x + np.float32(1))
    arrays = [rng.standard_normal(1000, dtype=np.float32) for _ in range(4)]
    arrays[3] = np.abs(arrays[3])
    adam_af = autofuse.jit(adam_np)
    rows = [dict(case="x + 1, 10 float32", autofuse_us=best_microseconds(lambda: add_one(x)),
                 numpy_us=best_microseconds(lambda: x + np.float32(1)),
                 numba_us=best_microseconds(lambda: add_one_nb(x))),
            dict(case="Adam step in place, 1,000 float32",
                 autofuse_us=best_microseconds(lambda: adam_af(*arrays, 10)),
                 numpy_us=best_microseconds(lambda: adam_np(*arrays, 10)),
                 numba_us=best_microseconds(lambda: adam_nb(*arrays, 10)))]
    return rows


COLD_SCRIPT = textwrap.dedent("""
    import sys, time, json
    clocks = (time.perf_counter, time.process_time)
    t0 = [c() for c in clocks]
    import numpy as np
    t1 = [c() for c in clocks]
    sys.path.insert(0, {root!r})
    import autofuse
    t2 = [c() for c in clocks]

    @autofuse.jit
    def layernorm(x, g, b):
        m = x.mean(axis=-1, keepdims=True)
        d = x - m
        v = (d * d).mean(axis=-1, keepdims=True)
        return d / np.sqrt(v + np.float32(1e-5)) * g + b

    x = np.ones((256, 1024), np.float32); g = np.ones(1024, np.float32)
    t3 = [c() for c in clocks]
    layernorm(x, g, g)          # the CPU backend's import (numba) included
    t4 = [c() for c in clocks]
    steady = []
    for _ in range(20):
        s = time.perf_counter(); layernorm(x, g, g); steady.append(time.perf_counter() - s)
    steady.sort()
    print(json.dumps(dict(numpy_import_s=t1[0] - t0[0], import_s=t2[0] - t1[0],
                          first_call_s=t4[0] - t3[0], first_call_cpu_s=t4[1] - t3[1],
                          numpy_import_cpu_s=t1[1] - t0[1], steady_s=steady[10])))
""")


def cold_start(runs: int = 5) -> dict:
    """Run the script in fresh processes sharing one new cache dir: the first compiles, the
    others load from the disk cache; the median of those by first-call time is reported."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, AUTOFUSE_CACHE_DIR=cache)
        # NOTE: as a user's Python runs: modules' bytecode cached in __pycache__. Where the
        # environment says not to write it (PYTHONDONTWRITEBYTECODE, set on the development
        # machines), every process compiles autofuse's modules from source: about 150 ms more
        # for `import autofuse` and 27 ms more for the first call, measured 2026-11-27.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        script = COLD_SCRIPT.format(root=str(Path(__file__).resolve().parent.parent))
        results = []
        for _ in range(runs + 1):
            out = subprocess.run([sys.executable, "-c", script], env=env, check=True,
                                 capture_output=True, text=True).stdout
            results.append(json.loads(out.strip().splitlines()[-1]))
    warm = sorted(results[1:], key=lambda r: r["first_call_s"])
    return {"cold": results[0], "warm": warm[len(warm) // 2], "warm_runs": warm}


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
             "autofuse / numba | first call s |", "|---|---:|---:|---:|---:|---:|---:|"]
    for row in result["rows"]:
        lines.append(f"| {row['case']} | {row['autofuse_ms']:.1f} | {row['numpy_ms']:.1f} | "
                     f"{row['numba_ms']:.1f} | {row['speedup_vs_numpy']:.2f}x | "
                     f"{row['ratio_vs_numba']:.2f}x | {row.get('first_call_s', float('nan')):.2f} |")
    if result.get("overhead"):
        lines += ["", "| per-call cost (cached call, tiny inputs) | autofuse µs | NumPy µs | "
                  "numba µs |", "|---|---:|---:|---:|"]
        for row in result["overhead"]:
            lines.append(f"| {row['case']} | {row['autofuse_us']:.1f} | {row['numpy_us']:.1f} | "
                         f"{row['numba_us']:.1f} |")
    cold = result.get("second_process")
    if cold:
        w = cold["warm"]
        lines.append(f"\nNew process, warm disk cache (median of {len(cold['warm_runs'])}): "
                     f"`import numpy` {w['numpy_import_s'] * 1e3:.0f} ms, `import autofuse` "
                     f"{w['import_s'] * 1e3:.0f} ms; first call {w['first_call_s'] * 1e3:.0f} ms "
                     f"({w['first_call_cpu_s'] * 1e3:.0f} ms of CPU time; it imports the CPU backend "
                     f"and numba), steady call {w['steady_s'] * 1e3:.2f} ms (cold cache first call: "
                     f"{cold['cold']['first_call_s'] * 1e3:.0f} ms).")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=64.0, help="size of each big array in MB")
    parser.add_argument("--matmul", type=int, default=1024, help="matmul size n (n x n x n)")
    parser.add_argument("--small", action="store_true", help="4 MB arrays, 256^3 matmul, 5 repeats")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--only", default="", help="comma-separated substrings of case names")
    parser.add_argument("--no-cold", action="store_true", help="skip the second-process row")
    parser.add_argument("--settle", type=float, default=SETTLE_S,
                        help="seconds of pause before each system's turn (0: back to back)")
    parser.add_argument("--json", default="benchmarks/cpu.json", help="where to write results")
    args = parser.parse_args(argv)
    if args.small:
        args.mb, args.matmul, args.repeats = 4.0, 256, 5
    rng = np.random.default_rng(0)
    rows = []
    # (each case's first call compiles: an empty disk cache of the run's own)
    os.environ["AUTOFUSE_CACHE_DIR"] = tempfile.mkdtemp(prefix="autofuse-cpu-bench-")
    print(f"{'case':<22} {'autofuse ms':>12} {'numpy ms':>10} {'numba ms':>10} "
          f"{'numpy/af':>9} {'af/numba':>9} {'first s':>8}")
    for name, (af, ref, nb), inputs in cases(args.mb, args.matmul, rng):
        if args.only and not any(s in name for s in args.only.split(",")):
            continue
        expected = ref(*inputs)
        start = time.perf_counter()
        got = af(*inputs)                   # the first call: trace and compile (an empty cache)
        first = time.perf_counter() - start
        for result in (got, nb(*inputs)):
            np.testing.assert_allclose(result, expected, rtol=2e-3, atol=1e-4)
        runs = interleaved_times((af, ref, nb), inputs, args.repeats, args.settle)
        t_af, t_np, t_nb = (statistics.median(own) for own in runs)
        row = dict(case=name, autofuse_ms=t_af * 1e3, numpy_ms=t_np * 1e3, numba_ms=t_nb * 1e3,
                   speedup_vs_numpy=statistics.median(n / a for a, n in zip(*runs[:2])),
                   ratio_vs_numba=statistics.median(a / b for a, b in zip(runs[0], runs[2])),
                   bytes_per_array=int(inputs[0].nbytes), first_call_s=first)
        rows.append(row)
        print(f"{name:<22} {row['autofuse_ms']:>12.2f} {row['numpy_ms']:>10.2f} "
              f"{row['numba_ms']:>10.2f} {row['speedup_vs_numpy']:>9.2f} {row['ratio_vs_numba']:>9.2f}"
              f" {first:>8.2f}")
    calls = [] if args.only else overhead()
    for row in calls:
        print(f"{row['case']:<34} autofuse {row['autofuse_us']:.1f} µs, NumPy "
              f"{row['numpy_us']:.1f} µs, numba {row['numba_us']:.1f} µs")
    cold = None if args.no_cold else cold_start()
    if cold:
        w = cold["warm"]
        print(f"new process, warm disk cache: import autofuse {w['import_s'] * 1e3:.0f} ms, first "
              f"call {w['first_call_s'] * 1e3:.0f} ms (CPU {w['first_call_cpu_s'] * 1e3:.0f} ms; "
              f"steady {w['steady_s'] * 1e3:.2f} ms); cold cache first call "
              f"{cold['cold']['first_call_s'] * 1e3:.0f} ms")
    result = dict(machine=machine(), mb=args.mb, matmul=args.matmul, repeats=args.repeats,
                  rows=rows, overhead=calls, second_process=cold)
    print()
    print(markdown(result))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
