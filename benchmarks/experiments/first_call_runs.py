"""Where the first call of a run's kernel goes (emit/runs.py): x.T @ g at (2^19, 64) x (2^19, 10)
float32, with runs and without (Tuning(output_run=0)), each in a new process with an empty disk
cache after a warm-up kernel: the total and cProfile's cumulative seconds of numba's PTX
compile, the link (ptxas) and the relinks that avoid spilling.

    python benchmarks/experiments/first_call_runs.py
"""
import subprocess
import sys

CHILD = r"""
import cProfile, os, pstats, sys, tempfile, time
os.environ["AUTOFUSE_CACHE_DIR"] = tempfile.mkdtemp()
import cupy, numpy as np, autofuse
from autofuse.backends.cuda.tuning import DEFAULT
autofuse.jit(lambda x: np.exp(x) + 1)(cupy.ones(1024, cupy.float32))
x = cupy.ones((1 << 19, 64), cupy.float32); g = cupy.ones((1 << 19, 10), cupy.float32)
f = autofuse.jit(lambda x, g: x.T @ g, tuning=DEFAULT.replace(output_run=int(sys.argv[1])))
profile = cProfile.Profile()
begin = time.perf_counter()
profile.enable(); f(x, g); cupy.cuda.Device().synchronize(); profile.disable()
total = time.perf_counter() - begin
stats = pstats.Stats(profile).stats
def seconds(name):
    return sum(v[3] for k, v in stats.items() if k[2] == name)
print(sys.argv[1], "first call s", round(total, 2), {n: round(seconds(n), 2) for n in
      ("compile_ptx", "link", "_unless_spilling", "local_bytes", "trace", "generate")},
      f.lower(x, g).kernels[0].launch)
"""

for run in ("16", "0"):
    subprocess.run([sys.executable, "-c", CHILD, run], check=False)
