"""Bias add + GELU (tanh approximation): a chain of elementwise ops that fuses into one loop.

NumPy evaluates ~10 ufuncs, each reading and writing an array the size of `x`; autofuse emits one
"loop" kernel that reads `x` and `b` once and writes the result once.

    python examples/bias_gelu.py [--small] [--repeats N] [--device cuda] [--no-peers]
"""
import math

import numpy as np

import _common
import autofuse


@autofuse.jit
def bias_gelu(x, b):
    y = x + b
    return 0.5 * y * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (y + 0.044715 * y * y * y)))


# The peers' version, timed beside it: the same computation in the peers' own ops. torch and
# jax.numpy spell every op here alike, so one function serves both (`xp` is torch or jnp).
def _bias_gelu_peers(xp, x, b):
    y = x + b
    return 0.5 * y * (1.0 + xp.tanh(math.sqrt(2.0 / math.pi) * (y + 0.044715 * y * y * y)))


PEERS = _common.Peers(bias_gelu, torch=_bias_gelu_peers, jax=_bias_gelu_peers)


def _make_inputs(dev, small):
    """bias_gelu's arguments on `dev`: x float32 [4096, 2048] ([64, 128] with `small`), b [cols]."""
    rows, cols = (64, 128) if small else (4096, 2048)
    rng = np.random.default_rng(0)
    x = dev.asarray(rng.standard_normal((rows, cols), dtype=np.float32))
    b = dev.asarray(rng.standard_normal(cols, dtype=np.float32))
    return x, b


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    x, b = _make_inputs(dev, args.small)
    _common.header("bias_gelu(x, b), float32", dev, f"x: {list(x.shape)}, b: {list(b.shape)}")

    _common.check(bias_gelu(x, b), _common.numpy_reference(bias_gelu, x, b))
    _common.print_summary(bias_gelu, x, b)
    _common.compare_times(bias_gelu, x, b, repeats=args.repeats, dev=dev,
                          peers=None if args.no_peers else PEERS)


if __name__ == "__main__":
    main()
