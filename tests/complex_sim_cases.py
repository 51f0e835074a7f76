"""Run under NUMBA_ENABLE_CUDASIM=1 by test_complex.py: every program of complex_cases.py through
the CUDA backend's kernels, against NumPy."""
import os
import sys

import numpy as np

import autofuse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from complex_cases import CASES, tolerance  # noqa: E402
from simulated import prepare_simulator  # noqa: E402

prepare_simulator()        # (simulated.py: switch interval, shared arrays)

for name, fn, make in CASES:
    args = make()
    got = np.asarray(autofuse.jit(fn, backend="cuda")(*args))
    want = fn(*args)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype, name
    np.testing.assert_allclose(got, want, err_msg=name, **tolerance(want))
    print(f"{name}: ok")
