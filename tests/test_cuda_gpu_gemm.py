"""The compact matrix-product kernel (emit/gemm.py) on a real GPU, against NumPy in float64:
odd sizes, transposed, non-contiguous and misaligned operands, batch broadcasting, size 0,
float32 and float64; and one compiled kernel for two shapes.

Run on the device machine: `python -m pytest -m gpu tests/test_cuda_gpu_gemm.py`.
"""
import numpy as np
import pytest

import autofuse
from autofuse.backends.cuda import compile as cuda_compile
from autofuse.backends.cuda.tuning import Tuning
from autofuse.ir.products import ProductLimits

from gpu_marks import cupy, pytestmark  # noqa: F401  (CuPy, the GPU marker and skip)

rng = np.random.default_rng(17)
COMPACT = Tuning(gemm_over_tiles=True, mma=False, products=ProductLimits(0, 0, 0))   # every product compact


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return rng.standard_normal(shape)


CASES = [
    ("relu_bias_odd", lambda x, w, b: np.maximum(x @ w + b, 0), (f32(1001, 333), f32(333, 517), f32(517))),
    ("transposed_b", lambda x, w: x @ w.T, (f32(257, 129), f32(300, 129))),
    ("transposed_a", lambda x, w: x.T @ w, (f32(129, 700), f32(129, 64))),
    ("tall", lambda x, w: np.tanh(x @ w), (f32(3000, 40), f32(40, 60))),
    ("batch_broadcast", lambda a, b: a @ b, (f32(3, 1, 99, 40), f32(2, 40, 55))),
    ("vector", lambda a, b: a @ b, (f32(999), f32(999, 1300))),
    ("empty_k", lambda a, b: a @ b + 1, (f32(50, 0), f32(0, 70))),
    ("float64", lambda a, b, c: np.tanh(a @ b) * 2 + c, (f64(333, 171), f64(171, 290), f64(333, 290))),
    ("float64_transposed", lambda a, b: a.T @ b, (f64(171, 333), f64(171, 290))),
]


@pytest.mark.parametrize("tuning", [COMPACT, Tuning()], ids=["compact", "default"])
@pytest.mark.parametrize("name, fn, args", CASES, ids=[c[0] for c in CASES])
def test_products_match_numpy(name, fn, args, tuning):
    got = cupy.asnumpy(autofuse.jit(fn, tuning=tuning)(*[cupy.asarray(a) for a in args]))
    want = fn(*[a.astype(np.float64) for a in args])
    tolerance = 1e-4 if args[0].dtype == np.float32 else 1e-11
    assert got.shape == want.shape
    assert np.allclose(got, want, rtol=tolerance, atol=tolerance * max(1.0, np.abs(want).max()))


VIEWS = {"strided": lambda a: a[::2, ::2][:, :129], "offset": lambda a: a[1:, 1:130],
         "reversed": lambda a: a[::-1, :129]}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_non_contiguous_and_misaligned_inputs(view):
    """Input views: their strides (negative too) and offsets are the kernel's arguments."""
    base, w = f32(300, 260), f32(129, 70)
    got = cupy.asnumpy(autofuse.jit(lambda a, b: a @ b - 1, tuning=COMPACT)(
        VIEWS[view](cupy.asarray(base)), cupy.asarray(w)))
    want = VIEWS[view](base).astype(np.float64) @ w - 1
    assert np.allclose(got, want, rtol=1e-4, atol=1e-3)


def test_two_shapes_compile_one_kernel(monkeypatch):
    monkeypatch.setattr(cuda_compile, "_COMPILED", {})
    jitted = autofuse.jit(lambda x, w: np.maximum(x @ w, 0) * 2, tuning=COMPACT)
    for m, n, k in ((700, 600, 500), (1300, 900, 260)):
        x, w = f32(m, k), f32(k, n)
        got = cupy.asnumpy(jitted(cupy.asarray(x), cupy.asarray(w)))
        assert np.allclose(got, np.maximum(x.astype(np.float64) @ w, 0) * 2, rtol=1e-4, atol=1e-3)
    assert len(cuda_compile._COMPILED) <= 1     # (none where the disk cache had the cubin)
