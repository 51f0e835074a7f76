"""Non-loop ML programs as people write them in NumPy: MLP blocks, norms, softmaxes, losses,
attention, optimizer steps, batchnorm inference and rotary embeddings."""
from __future__ import annotations

import math

import numpy as np

from .program import Program, Registry, inputs_and, nbytes, normal, uniform

ML = Registry()


def _program(name, function, make, small, large, description, bytes_moved, tags=(), **options):
    return ML.add(Program(name, function, make, {"small": small, "large": large}, description,
                          bytes_moved, tags=tags, **options))


def mlp_gelu(x, w1, b1, w2, b2):
    h = x @ w1 + b1
    h = 0.5 * h * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h ** 3)))
    return h @ w2 + b2


def _mlp_inputs(rng, dtype, batch, width, hidden):
    return (normal(rng, dtype, batch, width), normal(rng, dtype, width, hidden, scale=width ** -0.5),
            normal(rng, dtype, hidden, scale=0.1), normal(rng, dtype, hidden, width, scale=hidden ** -0.5),
            normal(rng, dtype, width, scale=0.1))


_program("mlp_gelu", mlp_gelu, _mlp_inputs, dict(batch=16, width=32, hidden=128),
         dict(batch=8192, width=1024, hidden=4096),
         "transformer MLP block with tanh-GELU (GPT-2)", inputs_and(1.0), ("matmul", "power"))


def layernorm(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    variance = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + 1e-5) * gamma + beta


_row_and_two = lambda rng, dtype, rows, cols: (normal(rng, dtype, rows, cols),
                                               normal(rng, dtype, cols, shift=1.0),
                                               normal(rng, dtype, cols, scale=0.1))
_program("layernorm", layernorm, _row_and_two, dict(rows=64, cols=96), dict(rows=16384, cols=4096),
         "layer normalization with x.var (Ba et al. 2016)", inputs_and(1.0), ("var",))


def rmsnorm(x, weight):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * weight


_program("rmsnorm", rmsnorm, lambda rng, dtype, rows, cols: _row_and_two(rng, dtype, rows, cols)[:2],
         dict(rows=64, cols=96), dict(rows=16384, cols=4096),
         "RMSNorm with np.mean (Zhang & Sennrich 2019, LLaMA)", inputs_and(1.0),
         ("mean", "keepdims"))


def softmax_last(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def softmax_first(x):
    e = np.exp(x - x.max(axis=0))
    return e / e.sum(axis=0)


_matrix = lambda rng, dtype, rows, cols: (normal(rng, dtype, rows, cols),)
_program("softmax_last", softmax_last, _matrix, dict(rows=64, cols=100), dict(rows=16384, cols=4096),
         "row softmax with np.max/np.sum, axis=-1 (textbook)", inputs_and(1.0),
         ("keepdims",))
_program("softmax_first", softmax_first, _matrix, dict(rows=100, cols=64), dict(rows=4096, cols=16384),
         "column softmax along axis 0 without keepdims (scipy.special.softmax(axis=0)-like)",
         inputs_and(1.0), ("int-axis-arg",))


def log_softmax(x):
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


_program("log_softmax", log_softmax, _matrix, dict(rows=64, cols=100), dict(rows=16384, cols=4096),
         "log-softmax along axis 1 (textbook)", inputs_and(1.0),
         ("keepdims", "int-axis-arg"))


def cross_entropy(logits, labels):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probability = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -log_probability[np.arange(logits.shape[0]), labels].mean()


_program("cross_entropy", cross_entropy,
         lambda rng, dtype, rows, classes: (normal(rng, dtype, rows, classes),
                                            rng.integers(0, classes, rows)),
         dict(rows=64, classes=10), dict(rows=65536, classes=1000),
         "mean cross-entropy of integer labels by fancy indexing (cs231n)", inputs_and(0.0),
         ("fancy-index", "arange"))


def attention(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ v


def _qkv(rng, dtype, batch, heads, length, dim):
    return tuple(normal(rng, dtype, batch, heads, length, dim) for _ in range(3))


_program("attention", attention, _qkv, dict(batch=2, heads=2, length=16, dim=8),
         dict(batch=8, heads=16, length=1024, dim=64),
         "multi-head scaled dot-product attention, np.sqrt of a Python int (Vaswani et al.)",
         inputs_and(1.0), ("matmul", "swapaxes", "inplace-op"))


def causal_attention(q, k, v):
    length = q.shape[-2]
    scores = q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(q.shape[-1]))
    mask = np.triu(np.ones((length, length), dtype=bool), k=1)
    scores = np.where(mask, -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (weights / weights.sum(axis=-1, keepdims=True)) @ v


_program("causal_attention", causal_attention, _qkv, dict(batch=2, heads=2, length=16, dim=8),
         dict(batch=8, heads=16, length=1024, dim=64),
         "causal self-attention with an np.triu mask and -inf (GPT-2)", inputs_and(1.0),
         ("matmul", "triu", "creation", "where"))


def adam_step(param, grad, m, v, step):
    beta1, beta2, rate, eps = 0.9, 0.999, 1e-3, 1e-8
    m *= beta1
    m += (1.0 - beta1) * grad
    v *= beta2
    v += (1.0 - beta2) * grad * grad
    m_hat = m / (1.0 - beta1 ** step)
    v_hat = v / (1.0 - beta2 ** step)
    param -= rate * m_hat / (np.sqrt(v_hat) + eps)


def _adam_inputs(rng, dtype, n):
    return (normal(rng, dtype, n), normal(rng, dtype, n), normal(rng, dtype, n, scale=0.1),
            uniform(rng, dtype, n, high=0.1), 10)


_program("adam_step", adam_step, _adam_inputs, dict(n=1000), dict(n=1 << 26),
         "Adam update written in place on param, m and v; returns None (Kingma & Ba)",
         lambda arguments, static: 7 * arguments[0].nbytes, ("inplace-op", "returns-none"))


def batchnorm_inference(x, mean, variance, gamma, beta):
    scale = gamma / np.sqrt(variance + 1e-5)
    return (x - mean[None, :, None, None]) * scale[None, :, None, None] + beta[None, :, None, None]


def _nchw(rng, dtype, batch, channels, height, width):
    return (normal(rng, dtype, batch, channels, height, width), normal(rng, dtype, channels),
            uniform(rng, dtype, channels, low=0.5, high=2.0), normal(rng, dtype, channels),
            normal(rng, dtype, channels))


_program("batchnorm_inference", batchnorm_inference, _nchw,
         dict(batch=2, channels=8, height=6, width=6), dict(batch=64, channels=256, height=56, width=56),
         "batch normalization at inference on NCHW with None-indexing (Ioffe & Szegedy)",
         inputs_and(1.0), ("newaxis",))


def rotary_embedding(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    rotated = np.concatenate([-x2, x1], axis=-1)
    return x * cos + rotated * sin


def _rotary_inputs(rng, dtype, batch, length, dim):
    angle = np.arange(length)[:, None] * (10000.0 ** (-np.arange(0, dim, 2) / dim))[None, :]
    angle = np.concatenate([angle, angle], axis=-1)
    return normal(rng, dtype, batch, length, dim), np.cos(angle).astype(dtype), np.sin(angle).astype(dtype)


_program("rotary_embedding", rotary_embedding, _rotary_inputs, dict(batch=2, length=16, dim=8),
         dict(batch=32, length=4096, dim=128),
         "rotary position embedding, rotate-half with np.concatenate (GPT-NeoX / LLaMA)",
         inputs_and(1.0), ("concatenate", "ellipsis"))


def swiglu(x, w_gate, w_up, w_down):
    gate = x @ w_gate
    return (gate / (1.0 + np.exp(-gate)) * (x @ w_up)) @ w_down


def _swiglu_inputs(rng, dtype, batch, width, hidden):
    return (normal(rng, dtype, batch, width), normal(rng, dtype, width, hidden, scale=width ** -0.5),
            normal(rng, dtype, width, hidden, scale=width ** -0.5),
            normal(rng, dtype, hidden, width, scale=hidden ** -0.5))


_program("swiglu", swiglu, _swiglu_inputs, dict(batch=16, width=32, hidden=64),
         dict(batch=8192, width=1024, hidden=2816),
         "SwiGLU feed-forward block (Shazeer 2020, LLaMA)", inputs_and(1.0), ("matmul",))


def focal_loss(logits, targets):
    probability = 1.0 / (1.0 + np.exp(-logits))
    pt = np.where(targets > 0.5, probability, 1.0 - probability)
    return (-0.25 * (1.0 - pt) ** 2 * np.log(np.clip(pt, 1e-7, 1.0))).mean()


_program("focal_loss", focal_loss,
         lambda rng, dtype, rows, cols: (normal(rng, dtype, rows, cols),
                                         (rng.random((rows, cols)) < 0.1).astype(dtype)),
         dict(rows=64, cols=80), dict(rows=8192, cols=8192),
         "sigmoid focal loss, mean over all elements (Lin et al. 2017)", inputs_and(0.0),
         ("where", "clip", "power"))
