"""Run under NUMBA_ENABLE_CUDASIM=1 by test_linalg_small.py: a batched 3x3 solve (float32, with
its producers and consumer), an inverse and a det with row swaps, executed by numba's CUDA
simulator, against NumPy."""
import os
import sys

import numpy as np

import autofuse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simulated import in_shard, prepare_simulator  # noqa: E402

prepare_simulator()        # (simulated.py: switch interval, shared arrays)

rng = np.random.default_rng(5)
a = (rng.standard_normal((40, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
a[:, 0, 0] = 0.0                      # every matrix needs a row swap at the first step
b = rng.standard_normal((40, 3)).astype(np.float32)

CASES = [
    ("solve_f32", lambda a, b: np.linalg.solve(a * 1, b[..., None])[..., 0] + b, (a, b), 1e-4),
    ("inv_det_f64", lambda a: (np.linalg.inv(a), np.linalg.det(a)), (a[:8].astype(np.float64),),
     1e-10),
]

for index, (name, fn, args, rtol) in enumerate(CASES):
    if not in_shard(index, sys.argv[2] if len(sys.argv) > 2 else ""):
        continue
    expected = fn(*args)
    result = autofuse.jit(fn, backend="cuda")(*args)
    pairs = zip(result, expected) if isinstance(expected, tuple) else [(result, expected)]
    for r, e in pairs:
        assert r.dtype == e.dtype and r.shape == e.shape, (name, r.dtype, r.shape)
        np.testing.assert_allclose(r, e, rtol=rtol, atol=rtol * np.abs(e).max())
    print(f"{name}: ok", flush=True)
