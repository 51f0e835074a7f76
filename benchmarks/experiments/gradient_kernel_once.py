"""Runs softmax_regression's gradient product x.T @ (p - y) (2^19 x 64 float32, 10 classes) once
warm, for a profiler to attach to its kernel:

    ncu --kernel-name regex:input --launch-skip 1 --launch-count 1 --set full \\
        python benchmarks/experiments/gradient_kernel_once.py
"""
import cupy
import numpy as np

import autofuse
from softmax_regression_parts import gradient

rng = np.random.default_rng(0)
m, n, c = 1 << 19, 64, 10
x = cupy.asarray(rng.standard_normal((m, n), dtype=np.float32))
p = cupy.asarray(rng.random((m, c), dtype=np.float32))
y = cupy.asarray(np.eye(c, dtype=np.float32)[rng.integers(0, c, m)])
f = autofuse.jit(gradient)
f(x, p, y)
f(x, p, y)
cupy.cuda.Device().synchronize()
