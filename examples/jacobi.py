"""Jacobi iteration for Laplace's equation, written with slice assignment, a few sweeps per call.

`u[1:-1, 1:-1] = 0.25 * (...)` is traced as a functional update (NumPy evaluates the right side
in full before writing, so each sweep reads the previous iterate). `iters` is static: the Python
loop unrolls at trace time, one trace per value. Each sweep is one loop kernel: a sweep's result
is read through five index maps by the next, so autofuse stores it rather than recompute it per
neighbour (the fused program's explanations say so).

    python examples/jacobi.py [--small] [--repeats N] [--device cuda] [--no-peers]
"""
import numpy as np

import _common
import autofuse


@autofuse.jit(static_argnames=("iters",))
def jacobi(u0, iters=8):
    u = u0.copy()
    for _ in range(iters):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


# The peers' versions, timed beside it: the same computation in torch's and jax.numpy's own ops.
# torch writes the slice in place (the right side is a new tensor, computed before the write);
# jax arrays are immutable, so each sweep is a functional update, as autofuse traces it. `iters`
# is a Python int: static for jax.jit (_peers.py), a constant for torch.compile.
def _jacobi_torch(torch, u0, iters=8):
    u = u0.clone()
    for _ in range(iters):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


def _jacobi_jax(jnp, u0, iters=8):
    u = u0
    for _ in range(iters):
        u = u.at[1:-1, 1:-1].set(0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]))
    return u


PEERS = _common.Peers(jacobi, torch=_jacobi_torch, jax=_jacobi_jax)


def _make_inputs(dev, small):
    """jacobi's arguments: u0, float64 [2048, 2048] ([34, 34] with `small`) on `dev` with a hot top
    edge and a linear left edge, and iters (8; 4 with `small`)."""
    n, iters = (34, 4) if small else (2048, 8)
    u0 = np.zeros((n, n))
    u0[0, :] = 1.0
    u0[:, 0] = np.linspace(1.0, 0.0, n)
    return dev.asarray(u0), iters


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    u0, iters = _make_inputs(dev, args.small)
    _common.header(f"jacobi(u, iters={iters}), float64", dev, f"u: {list(u0.shape)}")

    result = jacobi(u0, iters)
    _common.check(result, _common.numpy_reference(jacobi, u0, iters))
    assert float(u0[1, 1]) == 0.0, "the argument must be left unchanged (the function copies it)"
    _common.print_summary(jacobi, u0, iters)
    _common.compare_times(jacobi, u0, iters, repeats=args.repeats, dev=dev,
                          peers=None if args.no_peers else PEERS)


if __name__ == "__main__":
    main()
