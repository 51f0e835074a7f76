"""Compute-bound elementwise chains on the GPU (issue 31): float64 and float32 programs whose
arithmetic, not their bytes, sets the time (option pricing, polynomials, transcendental and
rational chains), autofuse beside NumPy-on-CuPy, torch.compile and jax.jit (64-bit types on) in
one process, by gpu.py's method (checked against NumPy first; interleaved rounds; the difference
of a long and a short batch), against the memory floor of the same run.

    python benchmarks/chains.py                         # writes benchmarks/results/chains.json
    python benchmarks/chains.py --only black --sass DIR # also each kernel's SASS opcode counts

With --sass, autofuse's kernel (its PTX linked for the device) and torch.compile's (Triton's
cubins, from an Inductor cache of the run's own) are disassembled with cuobjdump; their
registers and the opcodes whose counts differ are printed, and the listings written to DIR.
"""
from __future__ import annotations

import argparse
import collections
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "examples")]

import autofuse  # noqa: E402
from gpu import _commit, copy_bandwidth, run_workload, save, versions  # noqa: E402
from workloads import Workload, _bytes  # noqa: E402
from black_scholes import _black_scholes_peers  # noqa: E402  (examples/: the program itself)

CUOBJDUMP = "/usr/local/cuda/bin/cuobjdump"
HORNER = [1.0 / math.factorial(k) * (-1) ** k for k in range(17)]    # exp(-x), degree 16


def black_scholes(xp):
    """examples/black_scholes.py's program (two outputs), its rate and volatility fixed."""
    return lambda price, strike, years: _black_scholes_peers(xp, price, strike, years, 0.02, 0.30)


def horner(xp):
    def f(x):
        p = x * 0.0 + HORNER[-1]
        for c in reversed(HORNER[:-1]):
            p = p * x + c
        return p
    return f


def transcendental(xp):
    return lambda x, y: xp.exp(-x * x) * xp.sin(3.0 * x) + xp.log1p(xp.abs(y)) * xp.cos(y)


def rational(xp):
    return lambda x, y: ((0.5 * x * x + 1.25) / (x * x + 3.0)
                         + xp.sqrt(x * x + y * y) / (1.0 + y * y))


def _uniform(rng, n, low, high, dtype):
    return rng.uniform(low, high, n).astype(dtype)


def _floor(outputs: int):
    """The floor's bytes: every input read and `outputs` arrays of the first one's size written."""
    return lambda arrays: _bytes(arrays, outputs * arrays[0].nbytes)


def chains(n: int) -> list[Workload]:
    items = []
    for dtype, tag, tolerance in ((np.float64, "f64", 1e-9), (np.float32, "f32", 2e-3)):
        items += [
            Workload(f"black-scholes {tag}",
                     lambda r, d=dtype: (_uniform(r, n, 5, 30, d), _uniform(r, n, 1, 100, d),
                                         _uniform(r, n, 0.25, 10, d)),
                     black_scholes, black_scholes, _floor(2), tolerance=tolerance),
            Workload(f"horner-16 {tag}", lambda r, d=dtype: (_uniform(r, n, -1, 1, d),),
                     horner, horner, _floor(1), tolerance=tolerance),
            Workload(f"exp*sin+log1p*cos {tag}",
                     lambda r, d=dtype: (_uniform(r, n, -2, 2, d), _uniform(r, n, -2, 2, d)),
                     transcendental, transcendental, _floor(1), tolerance=tolerance),
            Workload(f"rational+sqrt {tag}",
                     lambda r, d=dtype: (_uniform(r, n, -2, 2, d), _uniform(r, n, -2, 2, d)),
                     rational, rational, _floor(1), tolerance=tolerance),
        ]
    return items


# -- SASS ---------------------------------------------------------------------------------------
def _opcodes(sass: str) -> collections.Counter:
    return collections.Counter(m.group(1) for m in re.finditer(
        r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\d\s+)?([A-Z][A-Z0-9_.]*)", sass))


def _registers(cubin: str) -> list[str]:
    usage = subprocess.run([CUOBJDUMP, "-res-usage", cubin], capture_output=True, text=True).stdout
    return re.findall(r"REG:\d+", usage)


def sass_report(workload, host, out: str) -> dict:
    """Opcode counts and registers of autofuse's kernel and of torch.compile's (Triton) kernels."""
    import cupy
    import torch
    from autofuse.backends.cuda.compile import link
    name = re.sub(r"\W+", "_", workload.name)
    report = {}
    lowered = autofuse.jit(workload.fn(np)).lower(*[cupy.asarray(a) for a in host])
    for k, kernel in enumerate(lowered.kernels):
        cubin = os.path.join(out, f"{name}_autofuse{k}.cubin")
        with open(cubin, "wb") as handle:
            handle.write(link(kernel.ptx, "sm_90"))
        sass = subprocess.run([CUOBJDUMP, "-sass", cubin], capture_output=True, text=True).stdout
        with open(cubin.replace(".cubin", ".sass"), "w") as handle:
            handle.write(sass)
        report[f"autofuse{k}"] = {"registers": _registers(cubin), "launch": str(kernel.launch),
                                  "opcodes": _opcodes(sass)}
    # NOTE: Inductor compiled this program already (timed above) and may find it in its caches:
    # compiled again with them off, its new cubins are those written from now on
    import torch._inductor.config as inductor
    inductor.force_disable_caches = True
    torch._dynamo.reset()
    start = time.time()
    compiled = torch.compile(workload.torch_fn(torch))
    compiled(*[torch.from_numpy(a).cuda() for a in host])
    torch.cuda.synchronize()
    roots = [os.environ.get("TORCHINDUCTOR_CACHE_DIR", ""), tempfile.gettempdir()]
    found = {path for root in roots if root
             for path in glob.glob(os.path.join(root, "**", "*.cubin"), recursive=True)
             if os.path.getmtime(path) >= start}
    for k, cubin in enumerate(sorted(found)):
        sass = subprocess.run([CUOBJDUMP, "-sass", cubin], capture_output=True, text=True).stdout
        with open(os.path.join(out, f"{name}_triton{k}.sass"), "w") as handle:
            handle.write(sass)
        report[f"triton{k}"] = {"registers": _registers(cubin), "opcodes": _opcodes(sass)}
    for label, item in report.items():
        total = sum(item["opcodes"].values())
        print(f"  {label}: {total} instructions, {item['registers']}, {item.get('launch', '')}")
    labels = list(report)
    ops = sorted(set().union(*(item["opcodes"] for item in report.values())))
    print("  " + " ".join(f"{label:>10}" for label in ["opcode"] + labels))
    for op in ops:
        counts = [report[label]["opcodes"][op] for label in labels]
        if len(set(counts)) > 1:
            print("  " + f"{op:>10} " + " ".join(f"{c:>10}" for c in counts))
    return {label: {"registers": item["registers"], "launch": item.get("launch"),
                    "opcodes": dict(item["opcodes"])} for label, item in report.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 24, help="elements an input")
    parser.add_argument("--only", default="")
    parser.add_argument("--systems", default="autofuse,cupy,torch.compile,jax.jit")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--variants", default="",
                        help='autofuse with other generator values too: '
                             '"LABEL:FIELD=V+FIELD=V,..."')
    parser.add_argument("--sass", default="", help="folder for SASS listings (and print counts)")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "chains.json"))
    args = parser.parse_args()
    try:
        import jax
        jax.config.update("jax_enable_x64", True)     # (float64 programs stay float64)
    except ImportError:
        pass
    import cupy
    systems = [s for s in args.systems.split(",") if s]
    rng = np.random.default_rng(2026)
    bandwidth = copy_bandwidth(2)
    props = cupy.cuda.runtime.getDeviceProperties(0)
    report = {"device": props["name"].decode(), "date": time.strftime("%Y-%m-%d"),
              "commit": _commit(), "versions": versions(), "copy_bandwidth_TBps": bandwidth / 1e12,
              "n": args.n, "rows": []}
    for workload in chains(args.n):
        if args.only and not any(s in workload.name for s in args.only.split(",")):
            continue
        tunings = dict(item.split(":", 1) for item in args.variants.split(",") if item)
        row = run_workload(workload, systems, bandwidth, rng, args.rounds, 2, tunings)
        times = row["times"]
        peers = [times[s] for s in ("torch.compile", "jax.jit") if s in times]
        line = " ".join(f"{s} {t * 1e3:.1f}" for s, t in times.items())
        print(f"{workload.name:26} floor {row['floor_ms'] * 1e3:.1f} us | {line} | "
              f"x best compiler {times.get('autofuse', math.nan) / min(peers or [math.nan]):.3f} "
              f"{row.get('autofuse_kernels')} {row['notes'] or ''}", flush=True)
        for label, t in row.get("variants", {}).items():
            print(f"{'':26} autofuse[{label}] {t * 1e3:.1f} us "
                  f"({t / times.get('autofuse', math.nan):.3f} of the default)", flush=True)
        if args.sass:
            os.makedirs(args.sass, exist_ok=True)
            row["sass"] = sass_report(workload, workload.make(np.random.default_rng(0)), args.sass)
        report["rows"].append(row)
        save(report, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
