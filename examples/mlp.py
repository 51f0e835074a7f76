"""A two-layer MLP, gelu(x @ w1 + b1) @ w2 + b2: each matmul with its epilogue is one kernel.

The bias add and the GELU ride along with the first matmul ("output" fusion: matmul + epilogue),
the second bias add with the second matmul, so the hidden activation is written to memory once.

    python examples/mlp.py [--small] [--repeats N] [--device cuda]
"""
import math

import numpy as np

import _common
import autofuse


@autofuse.jit
def mlp(x, w1, b1, w2, b2):
    h = x @ w1 + b1
    h = 0.5 * h * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
    return h @ w2 + b2


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    batch, d_in, d_hidden, d_out = (32, 64, 128, 32) if args.small else (1024, 512, 2048, 512)
    _common.header("mlp(x, w1, b1, w2, b2), float32", dev,
                   f"x: [{batch}, {d_in}], hidden {d_hidden}, out {d_out}")

    rng = np.random.default_rng(0)
    def param(*shape):
        return dev.asarray(rng.standard_normal(shape, dtype=np.float32) / np.float32(math.sqrt(shape[0])))
    x = dev.asarray(rng.standard_normal((batch, d_in), dtype=np.float32))
    w1, b1 = param(d_in, d_hidden), param(d_hidden)
    w2, b2 = param(d_hidden, d_out), param(d_out)
    inputs = (x, w1, b1, w2, b2)

    # float32 matmuls accumulate in another order than NumPy's BLAS: a looser absolute tolerance.
    _common.check(mlp(*inputs), _common.numpy_reference(mlp, *inputs), atol=1e-4, rtol=1e-4)
    _common.print_summary(mlp, *inputs)
    _common.compare_times(mlp, *inputs, repeats=args.repeats, dev=dev)


if __name__ == "__main__":
    main()
