"""Layer normalization over the last axis: mean, variance, normalize, scale and shift in one kernel.

Two row reductions (mean, then the variance around it) and the elementwise epilogue all land in a
single "input" fusion group: each row of `x` is read from memory and the result written once.

    python examples/layernorm.py [--small] [--repeats N] [--device cuda]
"""
import numpy as np

import _common
import autofuse


@autofuse.jit
def layernorm(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * gamma + beta


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    rows, cols = (64, 128) if args.small else (4096, 1024)
    _common.header("layernorm(x, gamma, beta), float32", dev, f"x: [{rows}, {cols}]")

    rng = np.random.default_rng(0)
    x = dev.asarray(rng.standard_normal((rows, cols), dtype=np.float32) * 3 + 1)
    gamma = dev.asarray(rng.standard_normal(cols, dtype=np.float32))
    beta = dev.asarray(rng.standard_normal(cols, dtype=np.float32))

    _common.check(layernorm(x, gamma, beta), _common.numpy_reference(layernorm, x, gamma, beta))
    _common.print_summary(layernorm, x, gamma, beta)
    _common.compare_times(layernorm, x, gamma, beta, repeats=args.repeats, dev=dev)


if __name__ == "__main__":
    main()
