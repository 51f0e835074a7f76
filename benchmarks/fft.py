"""np.fft in autofuse beside the libraries: on the CPU against NumPy, with --gpu against CuPy and
torch (autofuse given CuPy arrays and torch tensors).

    python benchmarks/fft.py                      # CPU -> benchmarks/results/fft_cpu.json
    python benchmarks/fft.py --gpu                # GPU -> benchmarks/results/fft_gpu.json
    python benchmarks/fft.py --scale 8            # 8x smaller batches (a quick run)

Workloads: batches of 1-D transforms (rfft of float32 rows, fft of complex64 and complex128 rows,
ifft of a length that is no power of two), a 2-D transform, an FFT convolution
irfft(rfft(x * w + b) * rfft(k)) inside an elementwise chain, and a short transform (8 terms)
between elementwise ops, on many rows (the cost rule picks the library) and on few (it traces the
transform into one kernel with its neighbours). On the CPU autofuse also runs
with every transform traced (`FourierLimits(library=None)`, what np.fft in autofuse was before
the library step) where its compile takes seconds, not minutes. Every system's result is first
checked against NumPy; then each workload's systems are timed in interleaved rounds (a round
times a batch of calls of each system, in an order rotated from round to round; a system's time
is the median over rounds of batch time / calls). The machine's load average is recorded at the
start and the end: on a shared machine the medians move with it.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rounds import time_rounds  # noqa: E402

TRACED = autofuse.FourierLimits(library=None)


def convolve(x, w, b, k):
    """An FFT convolution of each row with k, inside an elementwise chain."""
    y = np.fft.irfft(np.fft.rfft(x * w + b) * np.fft.rfft(k), x.shape[-1])
    return np.tanh(y) * 0.5


def short_spectrum(x):
    return np.abs(np.fft.rfft(x * 2.0)) + 1.0


def workloads(scale: int) -> list[dict]:
    """name, fn, argument shapes and dtypes, and whether the fully traced run is timed."""
    rows = max(1, 4096 // scale)
    return [
        {"name": f"rfft rows {rows}x1024 f32", "fn": np.fft.rfft,
         "args": [((rows, 1024), np.float32)], "traced": True},
        {"name": f"fft rows {rows // 2}x1024 c64", "fn": np.fft.fft,
         "args": [((rows // 2, 1024), np.complex64)], "traced": True},
        {"name": f"fft rows {rows // 8}x4096 c128", "fn": np.fft.fft,
         "args": [((rows // 8, 4096), np.complex128)], "traced": False},
        {"name": f"ifft rows {rows // 2}x1000 c64 (no power of two)", "fn": np.fft.ifft,
         "args": [((rows // 2, 1000), np.complex64)], "traced": False},
        {"name": f"fft2 {1024 // scale}x1024 c64", "fn": np.fft.fft2,
         "args": [((max(2, 1024 // scale), 1024), np.complex64)], "traced": False},
        {"name": f"convolution rows {rows}x1024 f32 (irfft(rfft(x*w+b)*rfft(k)), tanh, scale)",
         "fn": convolve, "traced": True,
         "args": [((rows, 1024), np.float32), ((1024,), np.float32), ((1024,), np.float32),
                  ((1024,), np.float32)]},
        {"name": f"short spectrum abs(rfft(x*2))+1, {rows * 32}x8 f32 (planned: library)",
         "fn": short_spectrum, "args": [((rows * 32, 8), np.float32)], "traced": True,
         "library": True},
        {"name": "short spectrum abs(rfft(x*2))+1, 256x8 f32 (planned: traced, one kernel)",
         "fn": short_spectrum, "args": [((256, 8), np.float32)], "traced": True,
         "library": True},
    ]


def arguments(workload: dict, rng) -> list:
    made = []
    for shape, dtype in workload["args"]:
        values = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            values = values + 1j * rng.standard_normal(shape)
        made.append(values.astype(dtype))
    return made


def close(got, want) -> bool:
    got = np.asarray(got)
    scale = max(np.abs(want).max(), 1e-30)
    tolerance = 1e-4 if want.dtype in (np.float32, np.complex64) else 1e-10
    return got.shape == want.shape and got.dtype == want.dtype and \
        np.abs(got - want).max() <= tolerance * scale


def cpu(args) -> dict:
    rng = np.random.default_rng(0)
    report = {"backend": "cpu", "platform": platform.platform(), "cores": os.cpu_count(),
              "load_start": os.getloadavg(), "rows": []}
    for workload in workloads(args.scale):
        host = arguments(workload, rng)
        fn = workload["fn"]
        want = fn(*host)
        systems = {"numpy": fn, "autofuse": autofuse.jit(fn)}
        if workload["traced"] and not args.no_traced:
            systems["autofuse traced"] = autofuse.jit(fn, fft_limits=TRACED)
        if workload.get("library"):
            systems["autofuse library"] = autofuse.jit(
                fn, fft_limits=autofuse.FourierLimits(max_traced_length=0))
        row = {"workload": workload["name"], "ms": {}, "first_call_s": {}, "checks": {}}
        entries = {}
        for name, system in systems.items():
            start = time.perf_counter()
            got = system(*host)
            row["first_call_s"][name] = round(time.perf_counter() - start, 3)
            row["checks"][name] = "ok" if close(got, want) else "MISMATCH"
            entries[name] = (system, host)
        if hasattr(systems["autofuse"], "lower"):
            row["kernels"] = [f"{k.kind}: {k.strategy}" for k in
                              systems["autofuse"].lower(*host).kernels]
        row["ms"] = time_rounds(entries, args.rounds, budget_ms=200.0)
        row["numpy/autofuse"] = row["ms"]["numpy"] / row["ms"]["autofuse"]
        report["rows"].append(row)
        print(_line(row), flush=True)
    report["load_end"] = os.getloadavg()
    return report


def gpu(args) -> dict:
    """autofuse on CuPy arrays and on torch tensors against cupy.fft and torch.fft."""
    import cupy
    import torch
    rng = np.random.default_rng(0)
    report = {"backend": "cuda", "platform": platform.platform(), "rows": [],
              "device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()}

    def sync(value):
        cupy.cuda.Device().synchronize()
        torch.cuda.synchronize()
    for workload in workloads(args.scale):
        host = arguments(workload, rng)
        fn = workload["fn"]
        want = fn(*host)
        on_cupy = [cupy.asarray(a) for a in host]
        on_torch = [torch.from_numpy(a).cuda() for a in host]
        systems = {"cupy": (_library_fn(workload, cupy), on_cupy),
                   "torch": (_library_fn(workload, torch), on_torch),
                   "autofuse (cupy)": (autofuse.jit(fn), on_cupy),
                   "autofuse (torch)": (autofuse.jit(fn), on_torch)}
        row = {"workload": workload["name"], "ms": {}, "first_call_s": {}, "checks": {}}
        for name, (system, device_args) in systems.items():
            start = time.perf_counter()
            got = system(*device_args)
            sync(got)
            row["first_call_s"][name] = round(time.perf_counter() - start, 3)
            got = got.get() if hasattr(got, "get") else got.cpu().numpy()
            row["checks"][name] = "ok" if close(got, want) else "MISMATCH"
        row["kernels"] = [f"{k.kind}: {k.strategy}" for k in
                          systems["autofuse (cupy)"][0].lower(*on_cupy).kernels]
        row["host_call"] = {name: _host_call(system.lower(*device_args).host_source)
                            for name, (system, device_args) in systems.items()
                            if name.startswith("autofuse")}
        row["ms"] = time_rounds(systems, args.rounds, sync, budget_ms=200.0)
        row["cupy/autofuse (cupy)"] = row["ms"]["cupy"] / row["ms"]["autofuse (cupy)"]
        row["torch/autofuse (torch)"] = row["ms"]["torch"] / row["ms"]["autofuse (torch)"]
        report["rows"].append(row)
        print(_line(row), flush=True)
    return report


def _host_call(text: str | None) -> str:
    """Which call path a signature takes (cuda/runtime/host.py, graph.py), from its host_source."""
    if text is None:
        return "general path"
    if "launch_graph(" in text:
        return "generated: CUDA graph"
    inline = "not as a CUDA graph: the call runs" in text
    return "generated: launches" + (" and library calls inline" if inline else "")


def _library_fn(workload: dict, module):
    """The workload written for CuPy or torch, eager."""
    name = workload["name"]
    fft = module.fft
    if name.startswith("convolution"):
        def conv(x, w, b, k):
            n = x.shape[-1]
            y = fft.irfft(fft.rfft(x * w + b) * fft.rfft(k), n)
            return module.tanh(y) * 0.5
        return conv
    if name.startswith("short"):
        return lambda x: module.abs(fft.rfft(x * 2.0)) + 1.0
    if name.startswith("fft2"):
        return fft.fft2
    return getattr(fft, name.split()[0])


def _line(row: dict) -> str:
    times = ", ".join(f"{name} {ms:.2f} ms" for name, ms in row["ms"].items())
    bad = [name for name, check in row["checks"].items() if check != "ok"]
    paths = "; ".join(f"{name}: {path}" for name, path in row.get("host_call", {}).items())
    return f"{row['workload']}: {times}" + (f"  MISMATCH: {bad}" if bad else "") + \
        (f"  ({paths})" if paths else "")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", action="store_true", help="CuPy and torch arrays on the GPU")
    parser.add_argument("--scale", type=int, default=1, help="batches this many times smaller")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-traced", action="store_true", help="skip the fully traced runs")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    report = gpu(args) if args.gpu else cpu(args)
    report["scale"], report["rounds"] = args.scale, args.rounds
    out = args.out or f"benchmarks/results/fft_{'gpu' if args.gpu else 'cpu'}.json"
    with open(out, "w") as handle:
        json.dump(report, handle, indent=1)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
