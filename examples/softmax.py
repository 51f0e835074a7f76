"""Softmax over the last axis: the max, the exp, the sum and the division fuse into ONE kernel.

NumPy makes four passes over the data and writes three temporaries the size of `x`; autofuse
traces the function once, sees a row reduction (an "input" fusion group in XLA's terms) and emits
a single numba kernel that reads each row and writes the result, nothing else.

    python examples/softmax.py                 # CPU (NumPy arrays)
    python examples/softmax.py --small         # tiny sizes, a quick check
    python examples/softmax.py --device cuda   # CuPy arrays, CUDA backend (exits 0 without a GPU)
"""
import numpy as np

import _common
import autofuse


@autofuse.jit
def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# The peers' versions, timed beside it: the same computation in torch's and jax.numpy's own ops.
def _softmax_torch(torch, x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def _softmax_jax(jnp, x):
    e = jnp.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


PEERS = _common.Peers(softmax, torch=_softmax_torch, jax=_softmax_jax)


def _make_inputs(dev, small):
    """softmax's arguments on `dev`: x, float32 [4096, 1024] ([64, 128] with `small`)."""
    rows, cols = (64, 128) if small else (4096, 1024)
    rng = np.random.default_rng(0)
    return (dev.asarray(rng.standard_normal((rows, cols), dtype=np.float32)),)


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    x, = _make_inputs(dev, args.small)
    _common.header("softmax(x), x: float32", dev, str(list(x.shape)))

    y = softmax(x)                                            # trace, fuse, compile, run
    _common.check(y, _common.numpy_reference(softmax, x))     # == NumPy, within float32 rounding

    _common.print_summary(softmax, x, full_text=True)         # the fused program, in full
    _common.compare_times(softmax, x, repeats=args.repeats, dev=dev,
                          peers=None if args.no_peers else PEERS)
    print("cache:", softmax.cache_info())


if __name__ == "__main__":
    main()
