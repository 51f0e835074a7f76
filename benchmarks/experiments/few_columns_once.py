"""Runs x @ w with w of a few columns (float32) once warm under a tuning given by name, for a
profiler to attach to its kernel (issue 30: the staged run of emit/run_tiles.py against a thread
an output):

    ncu --kernel-name regex:input --launch-skip 1 --launch-count 1 --section SpeedOfLight \\
        python benchmarks/experiments/few_columns_once.py staged 1048576 32 16
"""
import sys

import cupy
import numpy as np

import autofuse
from autofuse.backends.cuda.tuning import DEFAULT

TUNINGS = {"staged": DEFAULT, "output": DEFAULT.replace(output_run=0)}
name, m, k, n = sys.argv[1], *(int(v) for v in sys.argv[2:5])
rng = np.random.default_rng(0)
x = cupy.asarray(rng.standard_normal((m, k), dtype=np.float32))
w = cupy.asarray(rng.standard_normal((k, n), dtype=np.float32))
f = autofuse.jit(lambda x, w: x @ w, tuning=TUNINGS[name])
f(x, w)
f(x, w)
cupy.cuda.Device().synchronize()
print(name, [kernel.strategy for kernel in f.lower(x, w).kernels])
