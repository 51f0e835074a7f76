"""Run under NUMBA_ENABLE_CUDASIM=1 by test_gather.py: every gather program of gather_cases.py
through the CUDA backend's kernels, against NumPy; then an index out of bounds and a negative
integer exponent, each raised after the call."""
import os
import sys

import numpy as np

import autofuse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gather_cases import CASES, floats  # noqa: E402
from simulated import prepare_simulator  # noqa: E402

prepare_simulator()        # (simulated.py: switch interval, shared arrays)

for name, fn, make in CASES:
    args = make()
    got = np.asarray(autofuse.jit(fn, backend="cuda")(*args))
    want = fn(*args)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype, name
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=name)
    print(f"{name}: ok")
try:
    autofuse.jit(lambda x, i: x[i] + 1, backend="cuda")(floats(5), np.array([1, 5]))
    raise AssertionError("no IndexError")
except IndexError:
    print("out of bounds: ok")
try:
    autofuse.jit(lambda x, y: x ** y, backend="cuda")(np.array([1, 2]), np.array([1, -1]))
    raise AssertionError("no ValueError")
except ValueError:
    print("negative exponent: ok")
