"""First calls of x.T @ g (2^19 x 64 and 2^19 x 10; a two-stage kernel with a run of 10 outputs
a thread) with the run's epilogue written out or looped (emit/run_two_stage.py), each in a new
process with an empty disk cache after a warm-up kernel, `repeats` times:

    PYTHONPATH=<autofuse to time> python benchmarks/experiments/first_call_run_loops.py 3
"""
import subprocess
import sys

CHILD = r"""
import os, sys, tempfile, time
os.environ["AUTOFUSE_CACHE_DIR"] = tempfile.mkdtemp()
import cupy, numpy as np, autofuse
autofuse.jit(lambda x: np.exp(x) + 1)(cupy.ones(1024, cupy.float32))
dtype = np.dtype(sys.argv[1])
x = cupy.ones((1 << 19, 64), dtype); g = cupy.ones((1 << 19, 10), dtype)
f = autofuse.jit(lambda x, g: x.T @ g)
begin = time.perf_counter()
f(x, g); cupy.cuda.Device().synchronize()
print(dtype.name, round(time.perf_counter() - begin, 3), "s", autofuse.__file__,
      len(f.lower(x, g).kernels[0].source.splitlines()), "lines")
"""

for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
    for dtype in ("float32", "float64"):
        subprocess.run([sys.executable, "-c", CHILD, dtype], check=False)
