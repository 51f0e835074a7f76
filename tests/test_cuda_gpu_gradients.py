"""Gradient programs on a GPU (CuPy arrays): each against the CPU backend's answer in float32 and
against the step written by hand, at sizes where the CUDA plan picks its real strategies: an Adam
step (the loss's split an element a thread, dz stored for the column kernel), a table read at
repeated and negative indices (scatter-add atomics), sorted rows and medians (argsort and
scatter), and the GELU MLP (tiled products bound to two blocks an SM)."""
import numpy as np
import pytest

import autofuse

from gpu_marks import cupy, pytestmark  # noqa: F401  (CuPy, the GPU marker and skip)
from test_autodiff_fusion import _adam_by_hand, adam_step, gelu_mlp


def _close(got, want, rtol=2e-3):
    got = cupy.asnumpy(got) if isinstance(got, cupy.ndarray) else np.asarray(got)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, np.abs(want).max()))


def test_adam_step_on_the_gpu_matches_the_step_by_hand():
    rng = np.random.default_rng(50)
    host = [rng.standard_normal(1024).astype(np.float32) * 0.1,
            rng.standard_normal(1024).astype(np.float32) * 0.01,
            np.abs(rng.standard_normal(1024)).astype(np.float32) * 0.01,
            rng.standard_normal((16384, 1024)).astype(np.float32),
            (rng.random(16384) > 0.5).astype(np.float32)]
    step = autofuse.jit(adam_step)
    got = step(*[cupy.asarray(a) for a in host])
    assert [k.strategy.split(",")[0] for k in step.lower(*[cupy.asarray(a) for a in host]).kernels] \
        == ["rows", "split", "two-stage columns"]
    for g, w in zip(got, _adam_by_hand(*[a.astype(np.float64) for a in host])):
        _close(g, w)


def embedding(table, rows, r, columns):
    return (np.tanh(table[rows]) * r).sum() + (np.take(table, columns, axis=1) ** 2).sum()


def order_statistics(x, w):
    return (np.sort(x, axis=1)[:, -3:] * w[:, None]).sum() + (np.median(x, axis=0) * 2).sum()


def spectrum(x, w):
    """A weighted power spectrum (cuFFT through CuPy) and complex arithmetic on the path."""
    return (np.abs(np.fft.rfft(x, axis=-1)) ** 2 * w).sum() + (np.exp(1j * x) * (x + 2j)).real.sum()


@pytest.mark.parametrize("case", ["embedding", "order statistics", "mlp", "spectrum"])
def test_gradients_on_the_gpu_match_the_cpu_backend(case):
    rng = np.random.default_rng(51)
    if case == "embedding":
        fn, argnums = embedding, (0,)
        args = [rng.standard_normal((5000, 64)).astype(np.float32),
                rng.integers(-5000, 5000, 20000), rng.standard_normal((20000, 64)).astype(np.float32),
                rng.integers(-64, 64, 300)]
    elif case == "order statistics":
        fn, argnums = order_statistics, (0, 1)
        args = [rng.standard_normal((3000, 257)).astype(np.float32),
                rng.standard_normal(3000).astype(np.float32)]
    elif case == "spectrum":
        fn, argnums = spectrum, (0, 1)
        args = [rng.standard_normal((256, 1000)).astype(np.float32),
                rng.standard_normal(501).astype(np.float32)]
    else:
        fn, argnums = gelu_mlp, (0, 1, 2)
        args = [(rng.standard_normal(s) * 0.05).astype(np.float32)
                for s in [(512, 1024), (1024,), (1024, 256), (700, 512), (700, 256)]]
    on_gpu = [cupy.asarray(a) for a in args]
    value, grads = autofuse.value_and_grad(fn, argnums=argnums)(*on_gpu)
    want_value, want = autofuse.value_and_grad(fn, argnums=argnums, backend="cpu")(*args)
    _close(value, want_value)
    for g, w in zip(grads, want):
        assert isinstance(g, cupy.ndarray)
        _close(g, w)
