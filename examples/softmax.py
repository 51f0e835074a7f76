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


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    rows, cols = (64, 128) if args.small else (4096, 1024)
    _common.header("softmax(x), x: float32", dev, f"[{rows}, {cols}]")

    rng = np.random.default_rng(0)
    x = dev.asarray(rng.standard_normal((rows, cols), dtype=np.float32))

    y = softmax(x)                                            # trace, fuse, compile, run
    _common.check(y, _common.numpy_reference(softmax, x))     # == NumPy, within float32 rounding

    _common.print_summary(softmax, x, full_text=True)         # the fused program, in full
    _common.compare_times(softmax, x, repeats=args.repeats, dev=dev)
    print("cache:", softmax.cache_info())


if __name__ == "__main__":
    main()
