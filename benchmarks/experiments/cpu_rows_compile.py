"""Where a CPU rows kernel's first call goes (issues 34, 36): the generated layernorm kernel over
1024x1024 float32 compiled by numba in a fresh process as generated, and with its row-block
loops bounded by the array's shape instead of the row length as a constant (LLVM then cannot
unroll them in full), each timed for compile + first call and for a warm call.

Measured on the 2-core development machine (2026-11-28, two runs): as generated 13.8-15.7 s to
compile, 0.64-0.83 ms a call; with the bound from the shape 3.6-4.0 s, 1.24-1.88 ms (the 64
lanes' accumulators, an NRT array, no longer promoted to registers, presumably). A version with
64 scalar accumulators and the shape's bound took 12.7 s and 2.0 ms; one whose runtime loop takes
4 row blocks a step (each unrolled) 4.3 s and 1.19 ms (as generated, that run: 13.2 s, 0.52 ms).

Since 54c7a4a the generated kernel keeps its lanes on the stack (cpu/lanes.py) and runs a
sum's blocks to an opaque bound: as generated, 2.4-2.5 s and 0.28-0.45 ms (BENCHMARKS.md, "Row
reductions' lanes on the stack"); the second variant then only changes that bound's spelling.

    python benchmarks/experiments/cpu_rows_compile.py
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))

RUN = """
import sys, time, importlib, numpy as np
sys.path.insert(0, {folder!r})
start = time.perf_counter()
module = importlib.import_module({name!r})
x = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
g = np.ones(1024, np.float32); out = np.empty_like(x)
module.input_0(x, g, g, out)
first = time.perf_counter() - start
times = []
for _ in range(31):
    start = time.perf_counter(); module.input_0(x, g, g, out); times.append(time.perf_counter() - start)
want = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) + 1
print(f"compile + first call {{first:.2f}} s, a call {{sorted(times)[15] * 1e3:.3f}} ms, "
      f"max error {{float(np.abs(out - want).max()):.1e}}")
"""


def layernorm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def main():
    import autofuse
    x = np.zeros((1024, 1024), np.float32)
    g = np.ones(1024, np.float32)
    (kernel,) = autofuse.jit(layernorm, backend="cpu").lower(x, g, g).kernels
    text = kernel.source.replace("cache=True", "cache=False")
    variants = {
        "as generated": text,
        "row blocks bounded by the shape": re.sub(r"range\(0, 1024, (\d+)\)",
                                                  r"range(0, a0.shape[1], \1)", text),
    }
    folder = tempfile.mkdtemp(prefix="cpu-rows-compile-")
    for k, (label, source) in enumerate(variants.items()):
        name = f"variant_{k}"
        with open(os.path.join(folder, name + ".py"), "w") as file:
            file.write(source)
        done = subprocess.run([sys.executable, "-c", RUN.format(folder=folder, name=name)],
                              capture_output=True, text=True)
        print(f"{label:34s} {done.stdout.strip() or done.stderr.strip()[-300:]}", flush=True)


if __name__ == "__main__":
    main()
