"""Where the first call of a function goes in a new process whose kernels are in the disk cache.

    python benchmarks/profile_first_call.py                 # CPU backend, NumPy arguments
    python benchmarks/profile_first_call.py --repeats 5     # median of 5 new processes a phase
    python benchmarks/profile_first_call.py --show          # and one cProfile of the first call
    python benchmarks/profile_first_call.py --backend cuda  # CuPy arguments (needs a GPU)

Each run fills a fresh cache (one process), then times new processes with that cache. CPU: a
softmax-like row kernel and a column sum over 512 x 256 float32 (both parallel kernels), and the
phases from process start to the first result: the interpreter's own start (`python -c pass`),
importing NumPy, importing autofuse, importing the CPU backend (autofuse imports it at the first
call), tracing + simplifying + fusing, loading the kernels (`prepare`), running the program
(its first call), and the modules the process ended up importing (numba, llvmlite, scipy...).
Where no .pyc files exist and PYTHONDONTWRITEBYTECODE=1 keeps them from being written, every
autofuse module is compiled from source in every process (the first call's backend import took
~26 ms more so): the script says whether bytecode is written.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

CPU_CHILD = r"""
import time
start = time.perf_counter()
import cProfile, pstats, sys
import numpy as np
numpy_done = time.perf_counter()
import autofuse
autofuse_done = time.perf_counter()
import autofuse.backends.cpu as cpu
backend_done = time.perf_counter()
spent = {"prepare": 0.0, "run": 0.0}
def timed(name, function):
    def wrapper(*args, **kwargs):
        begin = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - begin
    return wrapper
cpu.prepare = timed("prepare", cpu.prepare)
cpu.Program.__call__ = timed("run", cpu.Program.__call__)
x = np.linspace(-2, 2, 512 * 256, dtype=np.float32).reshape(512, 256)
f = autofuse.jit(lambda x: (np.exp(x - x.max(-1, keepdims=True)) * 2 + np.tanh(x), x.sum(0)))
profile = cProfile.Profile() if sys.argv[1] == "show" else None
if profile: profile.enable()
call_start = time.perf_counter()
y = f(x)
call_done = time.perf_counter()
if profile: profile.disable()
assert np.allclose(y[0], np.exp(x - x.max(-1, keepdims=True)) * 2 + np.tanh(x), rtol=1e-5, atol=1e-6)
assert np.allclose(y[1], x.sum(0), rtol=1e-4, atol=1e-4)
heavy = [m for m in ("numba", "llvmlite", "scipy", "threadpoolctl", "numba_cuda", "cupy")
         if m in sys.modules]
call = call_done - call_start
fusion = call - spent["prepare"] - spent["run"]
print("PHASES", numpy_done - start, autofuse_done - numpy_done, backend_done - autofuse_done,
      fusion, spent["prepare"], spent["run"], call_done - start, ",".join(heavy) or "-")
if profile:
    pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
"""

CUDA_CHILD = r"""
import cProfile, pstats, sys, time
import numpy as np, cupy
x = cupy.ones(4096, dtype=cupy.float32)
cupy.cuda.Device().synchronize()
start = time.perf_counter()
import autofuse
imported = time.perf_counter()
f = autofuse.jit(lambda x: np.tanh(x) * 2 + 1)
profile = cProfile.Profile()
profile.enable()
f(x); cupy.cuda.Device().synchronize()
profile.disable()
done = time.perf_counter()
print(f"import {(imported - start) * 1e3:.1f} ms, first call {(done - imported) * 1e3:.1f} ms")
if sys.argv[1] == "show":
    pstats.Stats(profile).sort_stats("cumulative").print_stats(35)
"""

NAMES = ("numpy import", "autofuse import", "cpu backend import", "trace + fusion",
         "kernel load (prepare)", "program run (first)", "start of script to result")


def child(code: str, mode: str, env: dict) -> tuple[float, str]:
    begin = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, mode], env=env, capture_output=True,
                         text=True)
    wall = time.perf_counter() - begin
    if out.returncode != 0:
        raise SystemExit(f"child failed:\n{out.stdout}\n{out.stderr[-3000:]}")
    return wall, out.stdout


def cpu(repeats: int, show: bool) -> None:
    print(f"load average {open('/proc/loadavg').read().split()[:3]}, {os.cpu_count()} cores; "
          f"bytecode writing {'off (PYTHONDONTWRITEBYTECODE)' if sys.dont_write_bytecode else 'on'}")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, AUTOFUSE_CACHE_DIR=cache)
        fill, _ = child(CPU_CHILD, "fill", env)
        print(f"fill (compiles): {fill * 1e3:.0f} ms")
        rows, walls, starts, heavy = [], [], [], set()
        for _ in range(repeats):
            starts.append(child("pass", "", env)[0])
            wall, text = child(CPU_CHILD, "time", env)
            fields = text.split("PHASES")[1].split()
            rows.append([float(v) for v in fields[:7]])
            heavy.add(fields[7])
            walls.append(wall)
        print(f"median of {repeats} new processes (ms):")
        print(f"  {'interpreter start (python -c pass)':38s} {statistics.median(starts) * 1e3:7.1f}")
        for index, name in enumerate(NAMES):
            values = sorted(row[index] * 1e3 for row in rows)
            print(f"  {name:38s} {statistics.median(values):7.1f}   "
                  f"(min {values[0]:.1f}, max {values[-1]:.1f})")
        print(f"  {'whole process, wall':38s} {statistics.median(walls) * 1e3:7.1f}")
        print(f"  heavy modules imported: {' / '.join(sorted(heavy))}")
        if show:
            print(child(CPU_CHILD, "show", env)[1].split("\n", 1)[1][:8000])


def cuda() -> None:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, AUTOFUSE_CACHE_DIR=cache)
        for mode in ("fill", "show", "show"):
            out = subprocess.run([sys.executable, "-c", CUDA_CHILD, mode], env=env,
                                 capture_output=True, text=True)
            print(mode, out.stdout[:6000] if mode == "show" else out.stdout, out.stderr[-2000:])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--show", action="store_true")
    options = parser.parse_args()
    if options.backend == "cuda":
        cuda()
    else:
        cpu(options.repeats, options.show)
