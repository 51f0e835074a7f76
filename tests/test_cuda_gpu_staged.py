"""The staged product kernel (emit/staged.py) on a real GPU, against NumPy in float64: the
simulator's cases (staged_sim_cases.py) at their small tiles and at the default ones, and the
benchmark's shapes (stacks of small products, K = 8) with an epilogue, float32 and float64.

Run on the device machine: `python -m pytest -m gpu tests/test_cuda_gpu_staged.py`.
"""
import os
import sys

import numpy as np
import pytest

import autofuse
from autofuse.backends.cuda.tuning import Tuning

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import staged_sim_cases  # noqa: E402

from gpu_marks import cupy, pytestmark  # noqa: F401  (CuPy, the GPU marker and skip)

rng = np.random.default_rng(23)


def check(fn, args, tuning, tolerance=None):
    jitted = autofuse.jit(fn, tuning=tuning)
    got = jitted(*[cupy.asarray(a) for a in args])
    want = fn(*[a.astype(np.float64) for a in args])
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    tolerance = tolerance or (1e-4 if args[0].dtype == np.float32 else 1e-11)
    for g, w in zip(got, want):
        g = cupy.asnumpy(g)
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=tolerance, atol=tolerance)
    return [k.strategy for k in jitted.lower(*args, backend="cuda").kernels]


@pytest.mark.parametrize("case", staged_sim_cases.CASES, ids=[c[0] for c in staged_sim_cases.CASES])
@pytest.mark.parametrize("default", [False, True], ids=["small tiles", "default tiles"])
def test_simulator_cases_on_the_gpu(case, default):
    name, fn, args, tuning = case
    check(fn, args, Tuning(products=staged_sim_cases.STAGED) if default else tuning)


SHAPES = [((8192, 32, 48), (48, 48)), ((4096, 16, 16), (16, 16)), ((1024, 64, 64), (1024, 64, 64)),
          ((16384, 8, 8), (16384, 8, 8)), ((8192, 8), (8, 8192)), ((999, 7), (7, 1001)),
          ((3000, 37, 45), (45, 29)), ((64, 60, 50), (64, 50, 62))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", SHAPES, ids=[str(s) for s in SHAPES])
def test_benchmark_shapes(shapes, dtype):
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    bias = rng.standard_normal(shapes[1][-1]).astype(dtype)
    found = check(lambda a, b, c: np.maximum(a @ b + c, 0), (a, b, bias), Tuning(products=staged_sim_cases.STAGED),
                  tolerance=2e-4 if dtype == np.float32 else 1e-10)
    assert any(s.startswith("staged") for s in found), found
