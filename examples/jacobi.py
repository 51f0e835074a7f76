"""Jacobi iteration for Laplace's equation, written with slice assignment, a few sweeps per call.

`u[1:-1, 1:-1] = 0.25 * (...)` is traced as a functional update (NumPy evaluates the right side
in full before writing, so each sweep reads the previous iterate). `iters` is static: the Python
loop unrolls at trace time, one trace per value. Each sweep is one loop kernel: a sweep's result
is read through five index maps by the next, so autofuse stores it rather than recompute it per
neighbour (the fused program's explanations say so).

    python examples/jacobi.py [--small] [--repeats N] [--device cuda]
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


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    n, iters = (34, 4) if args.small else (2048, 8)
    _common.header(f"jacobi(u, iters={iters}), float64", dev, f"u: [{n}, {n}]")

    u0 = np.zeros((n, n))
    u0[0, :] = 1.0                  # boundary: a hot top edge
    u0[:, 0] = np.linspace(1.0, 0.0, n)
    u0 = dev.asarray(u0)

    result = jacobi(u0, iters=iters)
    _common.check(result, _common.numpy_reference(jacobi, u0, iters))
    assert float(u0[1, 1]) == 0.0, "the argument must be left unchanged (the function copies it)"
    _common.print_summary(jacobi, u0, iters=iters)
    _common.compare_times(lambda u: jacobi(u, iters=iters), u0, repeats=args.repeats, dev=dev,
                          plain=lambda u: jacobi.fn(u, iters=iters))


if __name__ == "__main__":
    main()
