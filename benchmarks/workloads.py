"""The GPU benchmark's workloads, each written once against an array module `xp` (NumPy, CuPy) so
that NumPy is the reference, CuPy runs it op by op, and autofuse and cupy.fuse compile it."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable


@dataclass
class Workload:
    name: str
    make: Callable            # (rng) -> tuple of NumPy inputs (float32, or float16 where named)
    fn: Callable              # (xp) -> function of the inputs
    torch_fn: Callable        # (torch) -> function of torch tensors
    floor_bytes: Callable     # inputs -> bytes that must move (each input read, each output written)
    flops: Callable | None = None
    tolerance: float = 1e-4


def _f32(rng, *shape):
    import numpy as np
    return (rng.standard_normal(shape, dtype=np.float32) * 0.5 + 0.1).astype(np.float32)


def _f16(rng, *shape):
    import numpy as np
    return _f32(rng, *shape).astype(np.float16)


def relu_chain(xp):
    return lambda x, y, z, w: xp.maximum(x * y + z, 0) * w


def bias_gelu(xp):
    def f(x, b):
        y = x + b
        return 0.5 * y * (1 + xp.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))
    return f


def transpose_add(xp):
    return lambda x, y: (x.T + y) * 2


def sum_squares(xp):
    return lambda x: (x * x).sum()


def column_sums(xp):
    return lambda x: x.sum(axis=0)


def softmax(xp):
    def f(x):
        e = xp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    return f


def layernorm(xp):
    def f(x, g, b):
        m = x.mean(-1, keepdims=True)
        d = x - m
        v = (d * d).mean(-1, keepdims=True)
        return d / xp.sqrt(v + 1e-5) * g + b
    return f


def relu_matmul(xp):
    return lambda x, w, b: xp.maximum(x @ w + b, 0)


def attention(xp):
    def f(q, k, v):
        s = q @ k.swapaxes(-1, -2) * (1.0 / math.sqrt(q.shape[-1]))
        e = xp.exp(s - s.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)) @ v
    return f


def stencil(xp):
    def f(u):
        v = u.copy()
        v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        return v
    return f


def torch_version(name):
    def make(torch):
        table = {
            "relu(x*y+z)*w": lambda x, y, z, w: torch.clamp_min(x * y + z, 0) * w,
            "bias+GELU": lambda x, b: bias_gelu(torch)(x, b),
            "(x.T+y)*2": lambda x, y: (x.T + y) * 2,
            "sum(x*x)": lambda x: (x * x).sum(),
            "x.sum(0)": lambda x: x.sum(0),
            "softmax rows": lambda x: softmax_torch(torch, x),
            "layernorm rows": lambda x, g, b: layernorm_torch(torch, x, g, b),
            "relu(x@w+b)": lambda x, w, b: torch.clamp_min(x @ w + b, 0),
            "attention": lambda q, k, v: attention_torch(torch, q, k, v),
            "5-point stencil": lambda u: stencil_torch(u),
        }
        return table[name.removesuffix(" f16")]     # the float16 workloads: same code
    return make


def softmax_torch(torch, x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def layernorm_torch(torch, x, g, b):
    m = x.mean(-1, keepdim=True)
    d = x - m
    v = (d * d).mean(-1, keepdim=True)
    return d / torch.sqrt(v + 1e-5) * g + b


def attention_torch(torch, q, k, v):
    s = q @ k.transpose(-1, -2) * (1.0 / math.sqrt(q.shape[-1]))
    return softmax_torch(torch, s) @ v


def stencil_torch(u):
    v = u.clone()
    v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return v


def _bytes(arrays, out_bytes):
    return sum(a.nbytes for a in arrays) + out_bytes


def workloads(scale: int = 1) -> list[Workload]:
    """The suite at full size (scale=1) or with each dimension divided by `scale`."""
    n = 8192 // scale
    rows, cols = 16384 // scale, 4096 // max(1, scale // 2)
    return [
        Workload("relu(x*y+z)*w", lambda r: tuple(_f32(r, n, n) for _ in range(4)), relu_chain,
                 torch_version("relu(x*y+z)*w"), lambda a: _bytes(a, a[0].nbytes), tolerance=1e-6),
        Workload("bias+GELU", lambda r: (_f32(r, n, n), _f32(r, n)), bias_gelu,
                 torch_version("bias+GELU"), lambda a: _bytes(a, a[0].nbytes), tolerance=1e-5),
        Workload("(x.T+y)*2", lambda r: (_f32(r, n, n), _f32(r, n, n)), transpose_add,
                 torch_version("(x.T+y)*2"), lambda a: _bytes(a, a[0].nbytes), tolerance=1e-6),
        Workload("sum(x*x)", lambda r: (_f32(r, (1 << 28) // scale ** 2),), sum_squares,
                 torch_version("sum(x*x)"), lambda a: _bytes(a, 4), tolerance=1e-3),
        Workload("x.sum(0)", lambda r: (_f32(r, rows, cols),), column_sums,
                 torch_version("x.sum(0)"), lambda a: _bytes(a, a[0].nbytes // a[0].shape[0]),
                 tolerance=1e-3),
        Workload("softmax rows", lambda r: (_f32(r, rows, cols),), softmax,
                 torch_version("softmax rows"), lambda a: _bytes(a, a[0].nbytes), tolerance=1e-5),
        Workload("layernorm rows", lambda r: (_f32(r, rows, cols), _f32(r, cols), _f32(r, cols)),
                 layernorm, torch_version("layernorm rows"), lambda a: _bytes(a, a[0].nbytes),
                 tolerance=1e-4),
        Workload("relu(x@w+b)", lambda r: (_f32(r, n, 4096 // scale), _f32(r, 4096 // scale, 4096 // scale),
                                           _f32(r, 4096 // scale)),
                 relu_matmul, torch_version("relu(x@w+b)"),
                 lambda a: _bytes(a, a[0].shape[0] * a[1].shape[1] * 4),
                 flops=lambda a: 2 * a[0].shape[0] * a[0].shape[1] * a[1].shape[1], tolerance=2e-3),
        Workload("attention", lambda r: tuple(_f32(r, 32, 2048 // scale, 64) for _ in range(3)),
                 attention, torch_version("attention"), lambda a: _bytes(a, a[0].nbytes),
                 flops=lambda a: 4 * a[0].shape[0] * a[0].shape[1] ** 2 * a[0].shape[2],
                 tolerance=2e-3),
        Workload("5-point stencil", lambda r: (_f32(r, n, n),), stencil, torch_version("5-point stencil"),
                 lambda a: _bytes(a, a[0].nbytes), tolerance=1e-6),
        # float16: NumPy rounds after each op; the peers compute in float32 and round at the end
        # (autofuse rounds like NumPy), so results agree to a few float16 units in the last place
        Workload("bias+GELU f16", lambda r: (_f16(r, n, n), _f16(r, n)), bias_gelu,
                 torch_version("bias+GELU f16"), lambda a: _bytes(a, a[0].nbytes), tolerance=1e-2),
        Workload("softmax rows f16", lambda r: (_f16(r, rows, cols),), softmax,
                 torch_version("softmax rows f16"), lambda a: _bytes(a, a[0].nbytes), tolerance=1e-2),
        Workload("layernorm rows f16", lambda r: (_f16(r, rows, cols), _f16(r, cols), _f16(r, cols)),
                 layernorm, torch_version("layernorm rows f16"), lambda a: _bytes(a, a[0].nbytes),
                 tolerance=1e-2),
    ]
