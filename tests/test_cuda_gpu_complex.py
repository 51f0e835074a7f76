"""Complex kernels on a real GPU: every program of complex_cases.py against NumPy, with NumPy and
CuPy inputs, and cmath's functions that numba-cuda compiles only with a driver.

Run on the device machine: `python -m pytest -m gpu tests/test_cuda_gpu_complex.py`.
"""
import numpy as np
import pytest

import autofuse
from complex_cases import CASES, complex_array, tolerance

from gpu_marks import cupy, pytestmark  # noqa: F401  (CuPy, the GPU marker and skip)


@pytest.mark.parametrize("name, fn, make", CASES, ids=[c[0] for c in CASES])
def test_complex_programs(name, fn, make):
    args = make()
    want = fn(*args)
    got = autofuse.jit(fn, backend="cuda")(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **tolerance(want))
    on_device = autofuse.jit(fn, backend="cuda")(*[cupy.asarray(a) for a in args])
    np.testing.assert_allclose(cupy.asnumpy(on_device), want, **tolerance(want))


@pytest.mark.parametrize("name", ["sin", "cos", "tan", "sinh", "cosh", "tanh", "log10",
                                  "arccosh", "arcsinh", "arctanh", "exp", "sqrt"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_cmath_functions(name, dtype):
    z = complex_array((1000,), dtype)
    want = getattr(np, name)(z)
    got = autofuse.jit(lambda a: getattr(np, name)(a), backend="cuda")(z)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, **tolerance(want))
