"""Scaled dot-product attention, softmax(q @ k^T / sqrt(d)) @ v, per head.

The scale is `math.sqrt(d)`: a Python float, so it stays a *weak* scalar (NEP 50) and the scores
stay float32. The scale rides with the first matmul, the softmax is a row reduction, and the
second matmul reads the probabilities.

    python examples/attention.py [--small] [--repeats N] [--device cuda] [--no-peers]
"""
import math

import numpy as np

import _common
import autofuse

# Two float32 matmuls and a row sum, each accumulated in another order than NumPy's.
TOLERANCE = dict(atol=1e-5, rtol=1e-4)


@autofuse.jit
def attention(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    return p @ v


# The peers' versions, timed beside it: the same computation in torch's and jax.numpy's own ops.
def _attention_torch(torch, q, k, v):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    p = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    p = p / p.sum(dim=-1, keepdim=True)
    return p @ v


def _attention_jax(jnp, q, k, v):
    scores = q @ jnp.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    p = jnp.exp(scores - scores.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    return p @ v


PEERS = _common.Peers(attention, torch=_attention_torch, jax=_attention_jax, matmul=True,
                      **TOLERANCE)


def _make_inputs(dev, small):
    """attention's arguments on `dev`: q, k, v, float32 [heads, seq, d] (tiny with `small`)."""
    heads, seq, d = (2, 32, 16) if small else (8, 512, 64)
    rng = np.random.default_rng(0)
    return tuple(dev.asarray(rng.standard_normal((heads, seq, d), dtype=np.float32))
                 for _ in range(3))


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    q, k, v = _make_inputs(dev, args.small)
    _common.header("attention(q, k, v), float32", dev, f"q, k, v: {list(q.shape)}")

    _common.check(attention(q, k, v), _common.numpy_reference(attention, q, k, v), **TOLERANCE)
    _common.print_summary(attention, q, k, v)
    _common.compare_times(attention, q, k, v, repeats=args.repeats, dev=dev,
                          peers=None if args.no_peers else PEERS)


if __name__ == "__main__":
    main()
