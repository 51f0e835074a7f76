"""Histograms and scatter-adds: autofuse beside NumPy on the CPU, and beside CuPy and torch on a GPU.

    python benchmarks/histogram.py                       # CPU: autofuse (cpu backend) vs NumPy
    python benchmarks/histogram.py --device cuda         # GPU: autofuse (cuda) vs CuPy, torch
    python benchmarks/histogram.py --scale 10 --out benchmarks/results/histogram.json

Workloads: np.histogram of 10^7 float32 values into 1000 bins (range from the data, and a given
range with weights), np.bincount of 10^7 ints into 1000 bins, and np.add.at of 10^6 rows into a
base of 10^5 (a large base: no private copies on the CPU, the last block's pass on the GPU).
Peers on the GPU: cupy.histogram / cupy.bincount / cupyx.scatter_add and torch.histc /
torch.bincount / index_add_ (torch.histc has no weights and takes a range: it runs the data's
min and max itself, as np.histogram does). Every system's result is first checked against
NumPy; then the systems of a workload are timed in interleaved rounds (a round runs one
synchronized batch of calls of each, the order rotated each round) and a system's time is the
median over rounds of batch time / calls. Results go to --out as JSON, the table printed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import autofuse  # noqa: E402

BINS = 1000


def add_at(x, i, v):
    y = x * 1
    np.add.at(y, i, v)
    return y


def workloads(scale: int, rng):
    """(name, NumPy function, arguments, {peer: function on the peer's arrays})."""
    n = 10_000_000 // scale
    a = rng.standard_normal(n).astype(np.float32)
    w = rng.random(n).astype(np.float32)
    ints = rng.integers(0, BINS, n)
    rows = 1_000_000 // scale
    base = rng.standard_normal(100_000 // scale)
    at = rng.integers(0, base.size, rows)
    values = rng.standard_normal(rows)
    return [
        (f"histogram {n} f32 -> {BINS} bins", lambda a: np.histogram(a, bins=BINS)[0], [a],
         {"cupy": lambda a: __import__("cupy").histogram(a, bins=BINS)[0],
          "torch": lambda a: _torch().histc(a, bins=BINS).to(_torch().int64)}),
        (f"histogram {n} f32, range, weights", lambda a, w: np.histogram(
            a, bins=BINS, range=(-2.0, 2.0), weights=w)[0], [a, w],
         {"cupy": lambda a, w: __import__("cupy").histogram(a, bins=BINS, range=(-2.0, 2.0),
                                                            weights=w)[0]}),
        (f"bincount {n} -> {BINS}", lambda x: np.bincount(x, minlength=BINS), [ints],
         {"cupy": lambda x: __import__("cupy").bincount(x, minlength=BINS),
          "torch": lambda x: _torch().bincount(x, minlength=BINS)}),
        (f"add.at {rows} rows into {base.size}", add_at, [base, at, values],
         {"cupy": _cupy_add_at, "torch": lambda x, i, v: (x * 1).index_add_(0, i, v)}),
    ]


def _torch():
    import torch
    return torch


def _cupy_add_at(x, i, v):
    import cupyx
    y = x * 1
    cupyx.scatter_add(y, i, v)
    return y


def _to_device(system, args):
    if system == "cupy":
        import cupy
        return [cupy.asarray(a) for a in args]
    if system == "torch":
        return [_torch().as_tensor(a, device="cuda") for a in args]
    return args


def _host(value):
    if hasattr(value, "get"):
        return value.get()
    if hasattr(value, "cpu"):
        return value.cpu().numpy()
    return np.asarray(value)


def _synchronize(device):
    if device == "cuda":
        import cupy
        cupy.cuda.Device().synchronize()


def systems(device, fn, peers):
    """{system: (function, device arrays maker)} for the device."""
    if device == "cpu":
        return {"autofuse": autofuse.jit(fn, backend="cpu"), "numpy": fn}
    found = {"autofuse": autofuse.jit(fn, backend="cuda")}
    found.update(peers)
    return found


def measure(device, scale, rounds, calls):
    rng = np.random.default_rng(0)
    rows = []
    for name, fn, args, peers in workloads(scale, rng):
        expected = fn(*args)
        entries = {}
        for system, call in systems(device, fn, peers).items():
            arrays = _to_device("cupy" if device == "cuda" and system == "autofuse" else system,
                                args)
            try:
                got = _host(call(*arrays))
            except Exception as error:                 # a peer missing or refusing: say so
                print(f"  {system}: {type(error).__name__}: {error}"[:200])
                continue
            loose = 1e-3 if got.dtype.kind == "f" else 0
            if system == "torch" and "histogram" in name:
                loose = 2e-3 * max(1, expected.max())   # histc's float binning at the edges
            if got.shape != expected.shape or not np.allclose(got, expected, rtol=loose,
                                                              atol=loose):
                print(f"  {system}: differs from NumPy, not timed")
                continue
            entries[system] = (call, arrays)
        times = {system: [] for system in entries}
        order = list(entries)
        for r in range(rounds):
            for system in order[r % len(order):] + order[:r % len(order)]:
                call, arrays = entries[system]
                _synchronize(device)
                start = time.perf_counter()
                for _ in range(calls):
                    call(*arrays)
                _synchronize(device)
                times[system].append((time.perf_counter() - start) / calls * 1e3)
        medians = {system: float(np.median(values)) for system, values in times.items()}
        rows.append({"workload": name, "ms": medians})
        best = medians.get("autofuse")
        print(f"{name}:  " + "  ".join(
            f"{system} {ms:.3f} ms" + (f" ({ms / best:.2f}x)" if best and system != "autofuse"
                                       else "") for system, ms in medians.items()), flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--scale", type=int, default=1, help="arrays this many times smaller")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--out", help="write the results here as JSON")
    options = parser.parse_args()
    if options.device == "cuda":
        try:
            import cupy  # noqa: F401
        except ImportError:
            print("--device cuda needs CuPy (and a GPU); nothing measured")
            return
    rows = measure(options.device, options.scale, options.rounds, options.calls)
    if options.out:
        record = {"device": options.device, "machine": platform.platform(),
                  "cpus": os.cpu_count(), "scale": options.scale, "results": rows}
        with open(options.out, "w") as handle:
            json.dump(record, handle, indent=1)


if __name__ == "__main__":
    main()
