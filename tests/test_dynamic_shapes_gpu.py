"""Shape classes on a real GPU: 50 batch sizes through the class kernels (sizes as arguments)
against NumPy with CuPy and NumPy inputs, sizes past the stand-in, and main's group kinds whose
CUDA strategies keep their sizes static (correct at every size, the reason shown).

Run on the device machine: `python -m pytest -m gpu tests/test_dynamic_shapes_gpu.py`.
"""
import numpy as np
import pytest

import autofuse
from programs import layernorm, softmax

from gpu_marks import cupy, pytestmark  # noqa: F401  (CuPy, the GPU marker and skip)

RNG = np.random.default_rng(3033)
SIZES = [9, 0, 1] + [n for n in range(2, 50) if n != 9]         # 50 batch sizes
W = (RNG.standard_normal((64, 48)) / 8).astype(np.float32)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def bias_gelu(x, b):
    y = x + b
    return 0.5 * y * (1.0 + np.tanh(np.float32(0.7978845608) * (y + np.float32(0.044715) * y ** 3)))


def steps(x, y):
    for _ in range(5):
        x = np.tanh(x * np.float32(0.9) + y)
        y = y * np.float32(0.5) - x
    return x + y


def dense(x, w):
    return np.maximum(x @ w, np.float32(0))


KINDS = {
    "elementwise": (bias_gelu, lambda n: (f32(n, 64), f32(64)), 2),
    "loop": (steps, lambda n: (f32(n, 64), f32(n, 64)), 2),
    "rows softmax": (softmax, lambda n: (f32(n, 96),), 2),
    "rows layernorm": (layernorm, lambda n: (f32(n, 96), f32(96), f32(96)), 2),
    "product": (dense, lambda n: (f32(n, 64), W), 3),
}


def _check(fn, got, args, tolerance=2e-5):
    host = [cupy.asnumpy(a) if isinstance(a, cupy.ndarray) else a for a in args]
    want = fn(*host)
    got = cupy.asnumpy(got) if isinstance(got, cupy.ndarray) else got
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("inputs", ["cupy", "numpy"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_fifty_batch_sizes_on_the_gpu(kind, inputs):
    fn, make, most = KINDS[kind]
    f = autofuse.jit(fn, backend="cuda")
    for n in SIZES:
        args = make(n)
        if inputs == "cupy":
            args = tuple(cupy.asarray(a) for a in args)
        _check(fn, f(*args), args, 1e-4 if kind == "product" else 2e-5)
    info = f.cache_info()
    assert info.compiles <= most, (kind, info)
    assert "# dynamic: n0 = x.shape[0]" in f.lower(*make(7)).as_text("fused")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_sizes_past_the_stand_in(kind):
    fn, make, _ = KINDS[kind]
    f = autofuse.jit(fn, backend="cuda")
    for n in (5, 6, 3000, 70001):               # the class traced at 1009: later sizes above it
        args = tuple(cupy.asarray(a) for a in make(n))
        _check(fn, f(*args), args, 1e-4 if kind == "product" else 2e-5)
    assert f.cache_info().instances >= 3


def cumsum_rows(x):
    return np.cumsum(x * np.float32(2), axis=1)


def sort_rows(x):
    return np.sort(x * np.float32(1.5), axis=-1)


def take_rows(table, i):
    return np.take(table, i, axis=0) * np.float32(2)


def column_sums(x):
    return (x * x).sum(axis=0)


STATIC = {
    "scan": (cumsum_rows, lambda n: (f32(n, 40),)),
    "sort": (sort_rows, lambda n: (f32(n, 40),)),
    "gather": (take_rows, lambda n: (f32(20, 40), RNG.integers(-20, 20, n))),
    "columns": (column_sums, lambda n: (f32(n, 40),)),
}


@pytest.mark.parametrize("kind", sorted(STATIC))
def test_kinds_with_static_sizes_are_right_at_every_size(kind):
    fn, make = STATIC[kind]
    f = autofuse.jit(fn, backend="cuda")
    for n in (4, 5, 1, 0, 33, 6):
        args = tuple(cupy.asarray(a) for a in make(n))
        _check(fn, f(*args), args, 1e-4)
    text = f.lower(*make(7)).as_text("fused")
    assert "# dynamic: n0" in text or "# static: " in text


def attention(q, k, v):
    s = q @ np.swapaxes(k, -1, -2) * np.float32(0.125)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


def test_attention_keeps_its_flash_kernel_under_the_automatic_policy():
    """A class would run attention as three kernels (1.8x the time on an H200): the automatic
    policy keeps the sequence length static, with the reason, and every size right."""
    f = autofuse.jit(attention, backend="cuda")
    k, v = cupy.asarray(f32(2, 128, 64)), cupy.asarray(f32(2, 128, 64))
    for n in (64, 63, 100):
        q = cupy.asarray(f32(2, n, 64))
        _check(attention, f(q, k, v), (q, k, v), 1e-4)
    lowered = f.lower(cupy.asarray(f32(2, 100, 64)), k, v)
    assert [kernel.strategy.startswith("flash attention") for kernel in lowered.kernels] == [True]
    assert "# static: q.shape[1]" in lowered.as_text("fused")


def test_the_softmax_class_narrows_its_row_bound():
    f = autofuse.jit(softmax, backend="cuda")
    for n in (5, 6):
        f(cupy.asarray(f32(n, 96)))
    source = f.lower(cupy.asarray(f32(7, 96))).kernels[0].source
    assert "while row < ix(n0):" in source


def test_a_float32_product_class_takes_the_tiled_kernel():
    """M varies: the float32 tiles kernel (16-byte loads, double-buffered) with M as an argument
    in its guards and its grid from M at each call, not the compact kernel (1.13x its time)."""
    f = autofuse.jit(dense, backend="cuda")
    for n in (300, 301, 1, 129, 4097):
        x = cupy.asarray(f32(n, 64))
        _check(dense, f(x, W), (x, W), 1e-4)
    kernel = f.lower(cupy.asarray(f32(257, 64)), W).kernels[0]
    assert kernel.strategy.startswith("tiled") and "16-byte loads" in kernel.strategy
    assert "n0" in kernel.source and kernel.launch["grid"][1] == -(-257 // 256)
