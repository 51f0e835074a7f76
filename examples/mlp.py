"""A two-layer MLP, gelu(x @ w1 + b1) @ w2 + b2: each matmul with its epilogue is one kernel.

The bias add and the GELU ride along with the first matmul ("output" fusion: matmul + epilogue),
the second bias add with the second matmul, so the hidden activation is written to memory once.

    python examples/mlp.py [--small] [--repeats N] [--device cuda] [--no-peers]
"""
import math

import numpy as np

import _common
import autofuse

# float32 matmuls accumulate in another order than NumPy's BLAS: a looser absolute tolerance.
TOLERANCE = dict(atol=1e-4, rtol=1e-4)


@autofuse.jit
def mlp(x, w1, b1, w2, b2):
    h = x @ w1 + b1
    h = 0.5 * h * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
    return h @ w2 + b2


# The peers' version, timed beside it: the same computation in the peers' own ops. torch and
# jax.numpy spell every op here alike, so one function serves both (`xp` is torch or jnp).
def _mlp_peers(xp, x, w1, b1, w2, b2):
    h = x @ w1 + b1
    h = 0.5 * h * (1.0 + xp.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
    return h @ w2 + b2


PEERS = _common.Peers(mlp, torch=_mlp_peers, jax=_mlp_peers, matmul=True, **TOLERANCE)


def _make_inputs(dev, small):
    """mlp's arguments on `dev`, float32: x [batch, d_in], w1, b1, w2, b2 (tiny with `small`)."""
    batch, d_in, d_hidden, d_out = (32, 64, 128, 32) if small else (1024, 512, 2048, 512)
    rng = np.random.default_rng(0)

    def param(*shape):
        return dev.asarray(rng.standard_normal(shape, dtype=np.float32) / np.float32(math.sqrt(shape[0])))
    x = dev.asarray(rng.standard_normal((batch, d_in), dtype=np.float32))
    w1, b1 = param(d_in, d_hidden), param(d_hidden)
    w2, b2 = param(d_hidden, d_out), param(d_out)
    return x, w1, b1, w2, b2


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    inputs = _make_inputs(dev, args.small)
    x, w1, _, w2, _ = inputs
    _common.header("mlp(x, w1, b1, w2, b2), float32", dev,
                   f"x: {list(x.shape)}, hidden {w1.shape[1]}, out {w2.shape[1]}")

    _common.check(mlp(*inputs), _common.numpy_reference(mlp, *inputs), **TOLERANCE)
    _common.print_summary(mlp, *inputs)
    _common.compare_times(mlp, *inputs, repeats=args.repeats, dev=dev,
                          peers=None if args.no_peers else PEERS)


if __name__ == "__main__":
    main()
