"""CPU reductions in every layout beside NumPy: a shape sweep (the reductions issue's CPU targets),
C-ordered inputs and Fortran-ordered ones.

    python benchmarks/cpu_reductions.py                  # all points, about 64 MB float32 each
    python benchmarks/cpu_reductions.py --threads 1      # one core each (NUMBA_NUM_THREADS=1)
    python benchmarks/cpu_reductions.py --mb 8 --only column

Each point: the program through `autofuse.jit` (CPU backend) and as NumPy, checked equal within
a float32 tolerance, then timed in interleaved rounds (a round times each side once, after the
warm-up call): the figure is the median over rounds. `speed` is NumPy's time over autofuse's
(above 1.00 autofuse is faster). The same machine runs both in one process, so a loaded machine
slows both; on a loaded two-core machine run `--threads 1` for the per-core comparison.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path


def _threads_from_argv():
    # numba reads NUMBA_NUM_THREADS at import: set it before autofuse imports numba
    if "--threads" in sys.argv:
        os.environ["NUMBA_NUM_THREADS"] = sys.argv[sys.argv.index("--threads") + 1]


_threads_from_argv()
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import autofuse  # noqa: E402

F32 = np.float32


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _layernorm(x, axis):
    mean = x.mean(axis=axis, keepdims=True)
    centered = x - mean
    return centered / np.sqrt((centered * centered).mean(axis=axis, keepdims=True) + F32(1e-5))


def _logsumexp(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return np.log(np.exp(x - m).sum(axis=axis)) + m.squeeze(axis)


def _zscore(x, axis):
    return (x - x.mean(axis=axis, keepdims=True)) / x.std(axis=axis, keepdims=True)


PROGRAMS = {
    "sum": lambda x, axis: x.sum(axis=axis),
    "max": lambda x, axis: x.max(axis=axis),
    "argmax": lambda x, axis: x.argmax(axis=axis),
    "sum of squares": lambda x, axis: (x * x).sum(axis=axis),
    "softmax": _softmax,
    "layernorm": _layernorm,
    "logsumexp": _logsumexp,
    "z-score": _zscore,
}


def points(elements):
    """(layout, shape, axis, program names): rows of many lengths, columns, middle and leading
    axes of 3-D stacks, few-row and long-row extremes."""
    out = []
    for length in (64, 1000, 1024, 4097, 65536):
        out.append(("row", (max(1, elements // length), length), -1,
                    ("sum", "max", "sum of squares", "softmax", "logsumexp", "layernorm")))
    for width in (256, 1024, 4096, 16384):
        out.append(("column", (max(1, elements // width), width), 0,
                    ("sum", "max", "argmax", "sum of squares", "softmax", "z-score")))
    out.append(("middle", (64, elements // (64 * 256), 256), 1, ("sum", "max", "z-score")))
    out.append(("leading", (64, elements // (64 * 256), 256), 0, ("sum", "max", "z-score")))
    out.append(("few rows", (4, elements // 4), -1, ("sum", "max", "softmax")))
    out.append(("few columns", (elements // 4, 4), 0, ("sum", "max")))
    # Fortran-ordered matrices (np.asfortranarray): the loops follow the memory order
    out.append(("fortran row", (elements // 1024, 1024), -1,
                ("sum", "max", "argmax", "sum of squares", "logsumexp", "softmax")))
    out.append(("fortran column", (elements // 1024, 1024), 0, ("sum", "max", "sum of squares")))
    return out


def timed(fn, x, rounds):
    """Median seconds of `fn(x)` per side over interleaved rounds; fn is a pair (autofuse, NumPy)."""
    jitted, plain = fn
    jitted(x)
    plain(x)
    times = ([], [])
    for _ in range(rounds):
        for side, call in enumerate((jitted, plain)):
            start = time.perf_counter()
            call(x)
            times[side].append(time.perf_counter() - start)
    return [float(np.median(t)) for t in times]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=64.0, help="size of each input")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--threads", default=None)
    parser.add_argument("--only", default="")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                      "cpu_reductions.json"))
    args = parser.parse_args()
    elements = int(args.mb * 2**20 // 4)
    rng = np.random.default_rng(31)
    commit = os.environ.get("AUTOFUSE_COMMIT") or subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
        cwd=os.path.dirname(__file__)).stdout.strip()
    import numba
    report = {"date": time.strftime("%Y-%m-%d"), "commit": commit,
              "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
              "threads": numba.config.NUMBA_NUM_THREADS, "mb": args.mb,
              "load_average": os.getloadavg()[0], "rows": []}
    for layout, shape, axis, names in points(elements):
        if args.only and args.only not in layout:
            continue
        x = rng.standard_normal(shape, dtype=F32)
        if layout.startswith("fortran"):
            x = np.asfortranarray(x)
        for name in names:
            program = PROGRAMS[name]

            def plain(v, program=program, axis=axis):
                return program(v, axis)
            jitted = autofuse.jit(plain)
            got, want = jitted(x), plain(x)
            np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4 * np.sqrt(shape[axis]))
            ours, numpy_s = timed((jitted, plain), x, args.rounds)
            strategy = ", ".join(k.strategy for k in jitted.lower(x).kernels)
            row = {"layout": layout, "shape": list(shape), "axis": axis, "program": name,
                   "autofuse_ms": ours * 1e3, "numpy_ms": numpy_s * 1e3,
                   "speed": numpy_s / ours, "strategy": strategy}
            report["rows"].append(row)
            print(f"{layout:12s} {str(shape):18s} axis {axis:2d} {name:15s} autofuse "
                  f"{ours * 1e3:8.2f} ms  NumPy {numpy_s * 1e3:8.2f} ms  speed "
                  f"{numpy_s / ours:5.2f}x  [{strategy}]", flush=True)
    speeds = [row["speed"] for row in report["rows"]]
    if speeds:
        report["geomean_speed"] = float(np.exp(np.mean(np.log(speeds))))
        print(f"geometric mean speed {report['geomean_speed']:.2f}x; "
              f"{sum(s >= 1 for s in speeds)} of {len(speeds)} points at or above NumPy")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as file:
        json.dump(report, file, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
