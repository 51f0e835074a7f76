"""The CPU benchmark's computations three ways (NumPy, autofuse.jit of the NumPy function, and a
hand-written numba `prange` loop of the same work) and the cases benchmarks/cpu.py times."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import autofuse  # noqa: E402

F32 = np.float32
C = F32(0.7978845608028654)
A = F32(0.044715)
EPS = F32(1e-5)


# -- the computations, three ways -------------------------------------------------------------
def chain_np(x, y, z, w):
    return np.maximum(x * y + z, F32(0)) * w


def gelu_np(x, b):
    h = x + b
    return F32(0.5) * h * (F32(1) + np.tanh(C * (h + A * h * h * h)))


def softmax_np(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm_np(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    d = x - m
    v = (d * d).mean(axis=-1, keepdims=True)
    return d / np.sqrt(v + EPS) * g + b


def sumsq_np(x):
    return (x * x).sum()


def mm_np(x, w, b):
    return np.maximum(x @ w + b, F32(0))


@numba.njit(parallel=True, cache=True)
def chain_nb(x, y, z, w):
    out = np.empty_like(x)
    for i in numba.prange(x.shape[0]):
        for j in range(x.shape[1]):
            t = x[i, j] * y[i, j] + z[i, j]
            out[i, j] = (t if t > 0 else F32(0)) * w[i, j]
    return out


@numba.njit(parallel=True, cache=True)
def gelu_nb(x, b):
    out = np.empty_like(x)
    for i in numba.prange(x.shape[0]):
        for j in range(x.shape[1]):
            h = x[i, j] + b[j]
            out[i, j] = F32(0.5) * h * (F32(1) + math.tanh(C * (h + A * h * h * h)))
    return out


@numba.njit(parallel=True, cache=True)
def softmax_nb(x):
    out = np.empty_like(x)
    n = x.shape[1]
    for i in numba.prange(x.shape[0]):
        m = x[i, 0]
        for j in range(n):
            m = max(m, x[i, j])
        s = 0.0
        for j in range(n):
            e = math.exp(x[i, j] - m)
            out[i, j] = e
            s += e
        inv = F32(s)
        for j in range(n):
            out[i, j] = out[i, j] / inv
    return out


@numba.njit(parallel=True, cache=True)
def layernorm_nb(x, g, b):
    out = np.empty_like(x)
    n = x.shape[1]
    for i in numba.prange(x.shape[0]):
        s = 0.0
        for j in range(n):
            s += x[i, j]
        m = F32(s / n)
        v = 0.0
        for j in range(n):
            d = x[i, j] - m
            v += d * d
        r = F32(1) / math.sqrt(F32(v / n) + EPS)
        for j in range(n):
            out[i, j] = (x[i, j] - m) * r * g[j] + b[j]
    return out


@numba.njit(parallel=True, cache=True)
def sumsq_nb(x):
    flat = x.reshape(-1)
    chunks = 64
    step = (flat.size + chunks - 1) // chunks
    partial = np.zeros(chunks)
    for c in numba.prange(chunks):
        s = 0.0
        for k in range(c * step, min(flat.size, (c + 1) * step)):
            s += flat[k] * flat[k]
        partial[c] = s
    return F32(partial.sum())


@numba.njit(parallel=True, cache=True)
def mm_nb(x, w, b):
    t = np.dot(x, w)
    for i in numba.prange(t.shape[0]):
        for j in range(t.shape[1]):
            v = t[i, j] + b[j]
            t[i, j] = v if v > 0 else F32(0)
    return t


chain_af = autofuse.jit(chain_np)
gelu_af = autofuse.jit(gelu_np)
softmax_af = autofuse.jit(softmax_np)
layernorm_af = autofuse.jit(layernorm_np)
sumsq_af = autofuse.jit(sumsq_np)
mm_af = autofuse.jit(mm_np)


def rmsnorm_np(x, g):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + EPS) * g


def colsum_np(x):
    return x.sum(axis=0)


def zscore_np(x):
    m = x.mean(axis=0)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(axis=0) + EPS)


def mlp_np(x, w1, b1, w2, b2):
    h = x @ w1 + b1
    h = F32(0.5) * h * (F32(1) + np.tanh(C * (h + A * h * h * h)))
    return h @ w2 + b2


@numba.njit(parallel=True, cache=True)
def rmsnorm_nb(x, g):
    out = np.empty_like(x)
    n = x.shape[1]
    for i in numba.prange(x.shape[0]):
        s = 0.0
        for j in range(n):
            s += x[i, j] * x[i, j]
        r = F32(1) / math.sqrt(F32(s / n) + EPS)
        for j in range(n):
            out[i, j] = x[i, j] * r * g[j]
    return out


COLUMN_TILES = 8      # the hand-written column loops: contiguous column tiles, one a thread


@numba.njit(parallel=True, cache=True)
def colsum_nb(x):
    rows, cols = x.shape
    out = np.zeros(cols, np.float32)
    width = -(-cols // COLUMN_TILES)
    for t in numba.prange(COLUMN_TILES):
        for i in range(rows):
            for j in range(t * width, min(cols, (t + 1) * width)):
                out[j] += x[i, j]
    return out


@numba.njit(parallel=True, cache=True)
def zscore_nb(x):
    rows, cols = x.shape
    out = np.empty_like(x)
    mean = np.zeros(cols, np.float32)
    var = np.zeros(cols, np.float32)
    width = -(-cols // COLUMN_TILES)
    for t in numba.prange(COLUMN_TILES):
        lo, hi = t * width, min(cols, (t + 1) * width)
        for i in range(rows):
            for j in range(lo, hi):
                mean[j] += x[i, j]
        for j in range(lo, hi):
            mean[j] /= rows
        for i in range(rows):
            for j in range(lo, hi):
                d = x[i, j] - mean[j]
                var[j] += d * d
        for j in range(lo, hi):
            var[j] = F32(1) / math.sqrt(var[j] / rows + EPS)
        for i in range(rows):
            for j in range(lo, hi):
                out[i, j] = (x[i, j] - mean[j]) * var[j]
    return out


@numba.njit(parallel=True, cache=True)
def mlp_nb(x, w1, b1, w2, b2):
    h = np.dot(x, w1)
    for i in numba.prange(h.shape[0]):
        for j in range(h.shape[1]):
            v = h[i, j] + b1[j]
            h[i, j] = F32(0.5) * v * (F32(1) + math.tanh(C * (v + A * v * v * v)))
    out = np.dot(h, w2)
    for i in numba.prange(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] += b2[j]
    return out


rmsnorm_af = autofuse.jit(rmsnorm_np)
colsum_af = autofuse.jit(colsum_np)
zscore_af = autofuse.jit(zscore_np)
mlp_af = autofuse.jit(mlp_np)


def cases(mb: float, mm_n: int, rng):
    elements = int(mb * (1 << 20) / 4)
    cols = 1024
    rows = max(1, elements // cols)
    x = lambda *s: rng.standard_normal(s, dtype=F32)  # noqa: E731
    big = (rows, cols)
    yield "relu(x*y+z)*w", (chain_af, chain_np, chain_nb), (x(*big), x(*big), x(*big), x(*big))
    yield "bias+GELU(tanh)", (gelu_af, gelu_np, gelu_nb), (x(*big), x(cols))
    yield "softmax rows", (softmax_af, softmax_np, softmax_nb), (x(*big),)
    yield "layernorm rows", (layernorm_af, layernorm_np, layernorm_nb), (x(*big), x(cols), x(cols))
    yield "sum of squares", (sumsq_af, sumsq_np, sumsq_nb), (x(*big),)
    yield f"relu(x@w+b) {mm_n}^3", (mm_af, mm_np, mm_nb), (x(mm_n, mm_n), x(mm_n, mm_n), x(mm_n))
    yield "RMSNorm rows", (rmsnorm_af, rmsnorm_np, rmsnorm_nb), (x(*big), x(cols))
    yield "column sum (axis 0)", (colsum_af, colsum_np, colsum_nb), (x(*big),)
    yield "z-score (axis 0)", (zscore_af, zscore_np, zscore_nb), (x(*big),)
    yield "relu(x*y+z)*w, 1,000 elements", (chain_af, chain_np, chain_nb), \
        tuple(x(10, 100) for _ in range(4))
    # examples/mlp.py's sizes (a quarter of each with --small)
    batch, d_in, hidden, d_out = (1024, 512, 2048, 512) if mm_n >= 1024 else (256, 128, 512, 128)
    scale = lambda a: a / F32(math.sqrt(a.shape[0]))  # noqa: E731
    yield f"MLP {batch}x{d_in}x{hidden}x{d_out} (examples/mlp.py)", (mlp_af, mlp_np, mlp_nb), \
        (x(batch, d_in), scale(x(d_in, hidden)), scale(x(hidden)), scale(x(hidden, d_out)),
         scale(x(d_out)))

