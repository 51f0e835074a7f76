"""Layer normalization over the last axis: mean, variance, normalize, scale and shift in one kernel.

Two row reductions (mean, then the variance around it) and the elementwise epilogue all land in a
single "input" fusion group: each row of `x` is read from memory and the result written once.

    python examples/layernorm.py [--small] [--repeats N] [--device cuda] [--no-peers]
"""
import numpy as np

import _common
import autofuse


@autofuse.jit
def layernorm(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * gamma + beta


# The peers' versions, timed beside it: the same computation in torch's and jax.numpy's own ops.
def _layernorm_torch(torch, x, gamma, beta):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5) * gamma + beta


def _layernorm_jax(jnp, x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5) * gamma + beta


PEERS = _common.Peers(layernorm, torch=_layernorm_torch, jax=_layernorm_jax)


def _make_inputs(dev, small):
    """layernorm's arguments on `dev`, float32: x [4096, 1024] ([64, 128] with `small`), gamma
    and beta [cols]."""
    rows, cols = (64, 128) if small else (4096, 1024)
    rng = np.random.default_rng(0)
    x = dev.asarray(rng.standard_normal((rows, cols), dtype=np.float32) * 3 + 1)
    gamma = dev.asarray(rng.standard_normal(cols, dtype=np.float32))
    beta = dev.asarray(rng.standard_normal(cols, dtype=np.float32))
    return x, gamma, beta


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    x, gamma, beta = _make_inputs(dev, args.small)
    _common.header("layernorm(x, gamma, beta), float32", dev, f"x: {list(x.shape)}")

    _common.check(layernorm(x, gamma, beta), _common.numpy_reference(layernorm, x, gamma, beta))
    _common.print_summary(layernorm, x, gamma, beta)
    _common.compare_times(layernorm, x, gamma, beta, repeats=args.repeats, dev=dev,
                          peers=None if args.no_peers else PEERS)


if __name__ == "__main__":
    main()
