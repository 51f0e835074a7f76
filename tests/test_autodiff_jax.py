"""Gradients against jax.grad, where jax is installed (the GPU machine's image has it; CI does
not): the benchmark's programs and the structural rules (gathers, sorts, scans, extrema,
products, broadcasts), each written once over an array module `xp` and run in float64 by
autofuse's CPU backend and by jax with 64-bit floats."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse

from conftest import rng_for

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


def _softmax_ce(xp, z, t):
    m = z.max(-1, keepdims=True)
    return -(t * (z - (xp.log(xp.exp(z - m).sum(-1, keepdims=True)) + m))).sum() / z.shape[0]


def _layernorm(xp, x, w, b):
    xc = x - x.mean(-1, keepdims=True)
    return ((xc / xp.sqrt((xc * xc).mean(-1, keepdims=True) + 1e-5) * w + b) ** 2).sum()


def _gelu_mlp(xp, w1, w2, x):
    h = x @ w1
    h = 0.5 * h * (1.0 + xp.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))
    return xp.sin(h @ w2).sum()


def _attention(xp, q, k, v):
    s = (q @ xp.swapaxes(k, -1, -2)) * 0.3
    e = xp.exp(s - s.max(-1, keepdims=True))
    return xp.cos((e / e.sum(-1, keepdims=True)) @ v).sum()


PROGRAMS = {
    "softmax-CE": (_softmax_ce, [(6, 9), "onehot"]),
    "layernorm": (_layernorm, [(5, 8), (8,), (8,)]),
    "GELU MLP": (_gelu_mlp, [(4, 6), (6, 3), (5, 4)]),
    "attention": (_attention, [(2, 5, 3), (2, 7, 3), (2, 7, 4)]),
    "gather rows": (lambda xp, x: (xp.tanh(x[np.array([0, 3, 3, -1])]) * 2).sum(), [(5, 4)]),
    "take along axis": (lambda xp, x: xp.take_along_axis(x, xp.argsort(x, axis=1)[:, :2],
                                                          axis=1).prod(), [(4, 5)]),
    "sort": (lambda xp, x: (xp.sort(x, axis=0) * xp.arange(5.0)[:, None]).sum(), [(5, 3)]),
    "median": (lambda xp, x: (xp.median(x, axis=1) ** 2).sum(), [(4, 7)]),
    "cumsum and cumprod": (lambda xp, x: (xp.cumsum(x, axis=1) * xp.cumprod(x, axis=0)).sum(),
                           [(3, 4)]),
    "maximum and max": (lambda xp, x, y: (xp.maximum(x, y) + x.max(0)).sum(), [(4, 3), (3,)]),
    "where and abs": (lambda xp, x: xp.where(x > 0, xp.abs(x) ** 1.5, xp.exp(x)).sum(), [(6,)]),
    "broadcast and transpose": (lambda xp, x, y: ((x.T + y) ** 2).mean(), [(3, 4), (4, 1)]),
    # paths through complex values (autodiff/complexes.py): real losses, so the two conventions
    # for complex cotangents meet in the same real gradient
    "power spectrum": (lambda xp, x: (xp.abs(xp.fft.rfft(x, axis=1)) ** 2).sum(), [(3, 8)]),
    "fft filter": (lambda xp, x: (xp.fft.irfft(xp.fft.rfft(x) * (1 + 2j), n=8) * x).sum(),
                   [(2, 8)]),
    "fft2 padded": (lambda xp, x: xp.abs(xp.fft.fft2(x, s=(5, 6), norm="ortho")).sum(), [(4, 5)]),
    "complex arithmetic": (lambda xp, x: (xp.exp(1j * x) * xp.log(x + 3j)
                                          / (x + 2j)).real.sum(), [(6,)]),
    "complex matmul": (lambda xp, x, y: xp.abs((x + 1j * y) @ (y.T - 1j * x.T)).sum(),
                       [(3, 4), (3, 4)]),
}


def _inputs(name, shapes):
    rng = rng_for(hash(name) % 1000)
    out = []
    for shape in shapes:
        if shape == "onehot":
            out.append(np.eye(9)[rng.integers(0, 9, 6)])
        else:
            out.append(rng.standard_normal(shape))
    return out


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradients_match_jax(name):
    fn, shapes = PROGRAMS[name]
    args = _inputs(name, shapes)
    numbers = tuple(i for i, s in enumerate(shapes) if s != "onehot")
    value, grads = autofuse.value_and_grad(lambda *a: fn(np, *a), argnums=numbers,
                                           backend="cpu")(*args)
    want_value, want = jax.value_and_grad(lambda *a: fn(jnp, *a), argnums=numbers)(
        *[jnp.asarray(a) for a in args])
    np.testing.assert_allclose(value, float(want_value), rtol=1e-12, atol=1e-12)
    for got, expected in zip(grads, want):
        np.testing.assert_allclose(got, np.asarray(expected), rtol=1e-10, atol=1e-12)
