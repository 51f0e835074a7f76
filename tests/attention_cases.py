"""Attention programs written as NumPy users write them, shared by the attention tests (the
simulator cases, the recognition and fall-back tests, the CPU backend's, the GPU's): each is
(name, function, argument maker) with arguments made at small odd sizes."""
import math

import numpy as np


def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def plain(q, k, v):
    return softmax(q @ k.transpose(0, 2, 1) * 0.25) @ v


def swapaxes_sqrt_float(q, k, v):
    return softmax(q @ np.swapaxes(k, -1, -2) * (1.0 / math.sqrt(q.shape[-1]))) @ v


def numpy_sqrt_scale(q, k, v):
    # 1 / np.sqrt(d) is a float64 NumPy scalar: the scores and the result become float64
    return softmax(q @ k.transpose(0, 2, 1) * (1 / np.sqrt(q.shape[-1]))) @ v


def divided(q, k, v):
    return softmax((q @ k.transpose(0, 2, 1)) / 4.0) @ v


def causal_tril(q, k, v):
    mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), dtype=bool))
    return softmax(np.where(mask, q @ k.transpose(0, 2, 1) * 0.3, -np.inf)) @ v


def causal_offset(q, k, v):
    # keys up to row + (Sk - Sq): the last query sees every key (decoding with a cache)
    mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), dtype=bool), k.shape[-2] - q.shape[-2])
    return softmax(np.where(mask, q @ k.transpose(0, 2, 1) * 0.3, -np.inf)) @ v


def causal_triu_added(q, k, v):
    s = q @ k.transpose(0, 2, 1) * 0.3
    bias = np.triu(np.full((q.shape[-2], k.shape[-2]), -np.inf, dtype=np.float32), 1)
    return softmax(s + bias) @ v


def mask_argument(q, k, v, mask):
    return softmax(np.where(mask, q @ k.transpose(0, 2, 1) * 0.3, -np.inf)) @ v


def bias_argument(q, k, v, bias):
    return softmax(q @ k.transpose(0, 2, 1) * 0.3 + bias) @ v


def heads(q, k, v):
    return softmax(q @ k.transpose(0, 1, 3, 2) * 0.2) @ v


def heads_causal_residual(q, k, v):
    mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), dtype=bool))
    s = np.where(mask, q @ np.swapaxes(k, -1, -2) * 0.2, -np.inf)
    return softmax(s) @ v + q


def epilogue_cast(q, k, v):
    return (softmax(q @ k.transpose(0, 2, 1) * 0.25) @ v * 2.0).astype(np.float64)


def prologue_scaled_q(q, k, v):
    return softmax((q * 0.25) @ k.transpose(0, 2, 1)) @ v


def pretransposed(q, kt, v):
    return softmax(q @ kt * 0.25) @ v


def two_dimensional(q, k, v):
    return softmax(q @ k.T * 0.25) @ v


def two_causal_offsets(q, k, v):
    """Two attentions, each of its own (equal) product: causal at offsets 0 and 5."""
    outs = []
    for offset in (0, 5):
        mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), dtype=bool), offset)
        outs.append(softmax(np.where(mask, q @ k.transpose(0, 2, 1) * 0.3, -np.inf)) @ v)
    return outs[0] + 2 * outs[1]


def mask_returned_too(q, k, v):
    """The mask is also a result and summed: stored by another kernel, read by attention's."""
    mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), dtype=bool))
    out = softmax(np.where(mask, q @ k.transpose(0, 2, 1) * 0.3, -np.inf)) @ v
    return out, mask.sum(), mask


def bias_read_elsewhere(q, k, v, b):
    bias = np.tanh(b) * 2
    return softmax(q @ k.transpose(0, 2, 1) * 0.3 + bias) @ v, bias.mean(-1)


def output_reduced(q, k, v):
    o = softmax(q @ k.transpose(0, 2, 1) * 0.3) @ v
    return o.sum(-1), o * 2


def rng_for(seed):
    return np.random.default_rng(seed)


def arrays(*shapes, dtype=np.float32, seed=0):
    rng = rng_for(seed)
    return tuple(rng.standard_normal(shape).astype(dtype) for shape in shapes)


def qkv(batch, sq, sk, d, dv=None, dtype=np.float32, seed=0):
    return arrays(batch + (sq, d), batch + (sk, d), batch + (sk, dv or d), dtype=dtype, seed=seed)


def with_mask(q, k, v):
    rng = rng_for(5)
    mask = rng.random((q.shape[-2], k.shape[-2])) < 0.7
    mask[3] = False                 # a row with no key: NaN, as NumPy
    return q, k, v, mask


def with_bias(q, k, v):
    return q, k, v, arrays((1, q.shape[-2], k.shape[-2]), seed=6)[0]


# (name, function, arguments)
CASES = [
    ("plain_odd", plain, qkv((2,), 19, 13, 16)),
    ("head_24_sq_lt_sk", swapaxes_sqrt_float, qkv((2,), 9, 21, 24)),
    ("numpy_sqrt_float64", numpy_sqrt_scale, qkv((2,), 11, 10, 16)),
    ("divided", divided, qkv((1,), 17, 17, 16)),
    ("causal_tril", causal_tril, qkv((2,), 23, 23, 16)),
    ("causal_offset", causal_offset, qkv((1,), 7, 26, 16)),
    ("causal_triu_added", causal_triu_added, qkv((2,), 18, 18, 24)),
    ("mask_argument", mask_argument, with_mask(*qkv((2,), 13, 15, 16))),
    ("bias_argument", bias_argument, with_bias(*qkv((3,), 10, 12, 16))),
    ("heads", heads, qkv((2, 3), 9, 11, 16)),
    ("heads_causal_residual", heads_causal_residual, qkv((1, 2), 20, 20, 16)),
    ("value_width_differs", plain, qkv((2,), 12, 9, 16, 24)),
    ("epilogue_cast", epilogue_cast, qkv((2,), 10, 14, 16)),
    ("prologue_scaled_q", prologue_scaled_q, qkv((2,), 10, 14, 16)),
    ("pretransposed", pretransposed, arrays((2, 12, 16), (2, 16, 11), (2, 11, 16), seed=3)),
    ("two_dimensional", two_dimensional, qkv((), 21, 18, 24)),
    ("one_key", plain, qkv((2,), 5, 1, 16)),
    ("float64", plain, qkv((2,), 13, 11, 16, dtype=np.float64)),
    ("float16", plain, qkv((2,), 13, 11, 16, dtype=np.float16)),
]


def broadcast_batch():
    """k and v shared by every head of q: (2, 3, S, D) against (2, 1, S, D)."""
    q, = arrays((2, 3, 10, 16), seed=8)
    k, v = arrays((2, 1, 12, 16), (2, 1, 12, 16), seed=9)
    return q, k, v


CASES.append(("broadcast_heads", heads, broadcast_batch()))


def half(args):
    """`args` with their floating-point arrays as float16."""
    return tuple(a.astype(np.float16) if a.dtype.kind == "f" else a for a in args)


# float16 attention: the tensor-core kernel (emit/attention_mma.py); D padded to 16, Dv to 8
HALF_CASES = [
    ("half_plain_odd", plain, qkv((2,), 19, 13, 16, dtype=np.float16)),
    ("half_head_24_sq_lt_sk", swapaxes_sqrt_float, qkv((2,), 9, 21, 24, dtype=np.float16)),
    ("half_head_64_causal", causal_tril, qkv((1,), 23, 23, 64, dtype=np.float16)),
    ("half_head_128", plain, qkv((1,), 9, 20, 128, dtype=np.float16)),
    ("half_causal_offset", causal_offset, qkv((1,), 7, 26, 16, dtype=np.float16)),
    ("half_sliced_views", lambda q, k, v: plain(q[:, :, 1:], k[:, :, 1:], v[:, :, 1:]),
     qkv((2,), 9, 20, 17, dtype=np.float16)),
    ("half_mask_argument", mask_argument, half(with_mask(*qkv((2,), 13, 15, 16)))),
    ("half_bias_argument", bias_argument, half(with_bias(*qkv((3,), 10, 12, 16)))),
    ("half_broadcast_heads", heads, half(broadcast_batch())),
    ("half_heads_causal_residual", heads_causal_residual,
     qkv((1, 2), 20, 20, 16, dtype=np.float16)),
    ("half_value_width_12", plain, qkv((2,), 12, 9, 16, 12, dtype=np.float16)),
    ("half_head_20_width_24", plain, qkv((1,), 11, 33, 20, 24, dtype=np.float16)),
    ("half_pretransposed", pretransposed,
     arrays((2, 12, 16), (2, 16, 11), (2, 11, 16), dtype=np.float16, seed=3)),
    ("half_two_dimensional", two_dimensional, qkv((), 21, 18, 32, dtype=np.float16)),
    ("half_epilogue_cast", epilogue_cast, qkv((2,), 10, 14, 16, dtype=np.float16)),
]


def reference(fn, args):
    """`fn` in float64 (float16 arguments too), as NumPy computes it."""
    wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in args]
    with np.errstate(all="ignore"):
        return fn(*wide)


def tolerance(args) -> float:
    dtype = args[0].dtype
    return {np.dtype(np.float16): 2e-2, np.dtype(np.float32): 2e-4}.get(dtype, 1e-10)


def close(got, want, args) -> bool:
    got = np.asarray(got, dtype=np.float64)
    tol = tolerance(args)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=tol, atol=tol,
                                                        equal_nan=True))
