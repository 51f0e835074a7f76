"""Scaled dot-product attention, softmax(q @ k^T / sqrt(d)) @ v, per head.

The scale is `math.sqrt(d)`: a Python float, so it stays a *weak* scalar (NEP 50) and the scores
stay float32. The scale rides with the first matmul, the softmax is a row reduction, and the
second matmul reads the probabilities.

    python examples/attention.py [--small] [--repeats N] [--device cuda]
"""
import math

import numpy as np

import _common
import autofuse


@autofuse.jit
def attention(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    return p @ v


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    heads, seq, d = (2, 32, 16) if args.small else (8, 512, 64)
    _common.header("attention(q, k, v), float32", dev, f"q, k, v: [{heads}, {seq}, {d}]")

    rng = np.random.default_rng(0)
    q, k, v = (dev.asarray(rng.standard_normal((heads, seq, d), dtype=np.float32)) for _ in range(3))

    _common.check(attention(q, k, v), _common.numpy_reference(attention, q, k, v), atol=1e-5, rtol=1e-4)
    _common.print_summary(attention, q, k, v)
    _common.compare_times(attention, q, k, v, repeats=args.repeats, dev=dev)


if __name__ == "__main__":
    main()
