"""The two forms of the row strips' edge path (Tuning.strip_edge_lanes: a row's lanes unrolled,
or one element at a time) on the GPU: each 2-D stencil loop program's first call (lower,
compile, load, run; a fresh disk cache, its own process), its warm median and its answer
against NumPy, at the corpus's large size, one line each:

    python -m benchmarks.corpus.strip_edges [NAME ...]          # heat_2d jacobi_2d wave_2d
    python -m benchmarks.corpus.strip_edges --lanes 0 [NAME ...]  # one form only
    python -m benchmarks.corpus.strip_edges --one NAME LANES    # one, in this process
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

PROGRAMS = ("heat_2d", "jacobi_2d", "wave_2d")


def one(name: str, lanes: bool) -> None:
    import autofuse
    from autofuse.backends.cuda.tuning import DEFAULT
    from . import find
    from .compare import compare
    from .measure import Device, copies, median_seconds
    program = find(name)
    device = Device("cuda")
    arguments, static = program.arguments("large", "float32")
    want = program.function(*copies(arguments, Device("cpu")), **static)
    tuning = DEFAULT.replace(strip_edge_lanes=lanes)
    function = autofuse.jit(program.function, static_argnames=program.static, backend="cuda",
                            tuning=tuning)
    inputs = copies(arguments, device)
    begin = time.perf_counter()
    got = function(*inputs, **static)
    device.synchronize()
    first = time.perf_counter() - begin
    verdict = compare(device.get(got), want, "float32")
    inputs = copies(arguments, device)
    warm, repeats = median_seconds(lambda: function(*inputs, **static), device)
    strategies = sorted({k.strategy for k in function.lower(*inputs, **static).kernels})
    print(f"{name:10s} lanes={int(lanes)} first {first:6.2f} s  warm {warm * 1e3:7.3f} ms "
          f"({repeats} runs)  correct {verdict['correct']} max error {verdict['max_error']}  "
          f"{strategies[:3]}", flush=True)


def main(names, forms=(True, False)) -> int:
    for name in names or PROGRAMS:
        for lanes in forms:
            environment = dict(os.environ, AUTOFUSE_CACHE_DIR=tempfile.mkdtemp(prefix="edges-"))
            done = subprocess.run([sys.executable, "-m", "benchmarks.corpus.strip_edges", "--one",
                                   name, str(int(lanes))], capture_output=True, text=True,
                                  timeout=120, env=environment)
            lines = (done.stdout + done.stderr).strip().splitlines()
            print(lines[-1] if done.returncode == 0 else f"{name} lanes={int(lanes)} rc "
                  f"{done.returncode}: {' / '.join(lines[-3:])[:400]}", flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        one(sys.argv[2], sys.argv[3] == "1")
        sys.exit(0)
    if sys.argv[1:2] == ["--lanes"]:
        sys.exit(main(sys.argv[3:], (sys.argv[2] == "1",)))
    sys.exit(main(sys.argv[1:]))
