"""Reductions across a batch axis that varies, as class kernels under numba's CUDA simulator (run
by test_dynamic_shapes_cuda.py with NUMBA_ENABLE_CUDASIM=1): column reductions (two-stage kernels
whose chunks are chosen at launch; columns kernels, a thread an output) and total reductions
(split kernels whose grid is chosen at launch) at sizes 0, 1, 2, 3, small primes, sizes that are
no multiple of a chunk and one past the class's stand-in (1009), against NumPy, with the compiles
each sweep took. Prints one line a case, ending ": ok"."""
from __future__ import annotations

import sys
import warnings

import numpy as np

import autofuse
from autofuse.backends.cuda.tuning import Tuning

RNG = np.random.default_rng(3301)
# the simulator's two-stage plans: 32 threads a block, a wave of 4 blocks, chunks of at least 8
# elements (Tuning.sim_*): 13 rows is one chunk, 31 three chunks of 12, 300 four of 76
SIZES = [10, 0, 1, 2, 3, 5, 7, 13, 31, 64, 97, 300, 1031]
FIRST = SIZES[0]     # the first call's size (specialized; the class starts at a second)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return RNG.standard_normal(shape)


B8 = f32(8)


def column_sum(x):
    return x.sum(axis=0)


def bias_gradient(g):
    return (g * 2).sum(axis=0)


def column_max_argmax(x):
    return x.max(axis=0), x.argmax(axis=0)


def column_mean_keepdims(x):
    return x.mean(axis=0, keepdims=True)


def kept_axes_after(x):
    return x.sum(axis=0)


def epilogue(x):
    return x.sum(axis=0) * np.float32(2) + B8


def mse(p, y):
    return ((p - y) ** 2).mean()


def total_argmax(x):
    return x.argmax(), (x * x).sum()


def rows_layout(x):
    return (x * x).sum(axis=(0, 2))


def column_softmax(x):
    e = np.exp(x - x.max(axis=0))
    return e / e.sum(axis=0)


def row_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def wide(n):
    """Arguments of a case whose kept axis varies: (4, n)."""
    return (f32(4, n),)



CASES = [
    # (name, function, arguments at size n, tolerance, compiles at most: the first size and the
    # class, and sizes the class text says compile apart)
    ("column sum float32", column_sum, lambda n: (f32(n, 8),), 1e-5, 2),
    ("bias gradient float64", bias_gradient, lambda n: (f64(n, 5),), 1e-12, 2),
    ("column max argmax float32", column_max_argmax, lambda n: (f32(n, 6),), 0, 3),
    ("column mean keepdims float64", column_mean_keepdims, lambda n: (f64(n, 7),), 1e-12, 3),
    ("kept axes after float32", kept_axes_after, lambda n: (f32(n, 3, 5),), 1e-5, 2),
    ("epilogue float32", epilogue, lambda n: (f32(n, 8),), 1e-5, 2),
    ("long columns float64", column_sum, lambda n: (f64(n, 40),), 1e-12, 2),
    ("mse float32 1-D", mse, lambda n: (f32(n), f32(n)), 1e-5, 2),
    ("mse float64 2-D", mse, lambda n: (f64(n, 6), f64(n, 6)), 1e-12, 2),
    ("total argmax float32", total_argmax, lambda n: (f32(n),), 1e-5, 2),
    # the last axis reduced too: the two-stage "rows" layout, where a wave of 16 blocks leaves
    # two chunks or more for each of the 3 outputs
    ("rows layout float32", rows_layout, lambda n: (f32(n, 3, 4),), 1e-4, 2),
    # the kept axis varies: a thread an output (columns, as on a GPU; the simulator's sizes would
    # take column tiles), its grid from the outputs at launch (sizes 0 and 1 compile apart: the
    # text's offsets `r0 * n0` fold there)
    ("columns of a varying count float32", column_softmax, wide, 1e-6, 4),
    # rows that vary in number: short ones a thread a row (columns), longer ones row tiles
    ("short rows float32", lambda x: (x * x).sum(axis=-1), lambda n: (f32(n, 4),), 1e-5, 2),
    ("row tiles softmax float32", row_softmax, lambda n: (f32(n, 48),), 1e-5, 2),
]
OPTIONS = {"rows layout float32": dict(tuning=Tuning(sim_blocks=16)),
           "columns of a varying count float32": dict(tuning=Tuning(column_tiles=False))}


def _compare(name, n, got, want, tolerance) -> None:
    for g, w in zip(got if isinstance(want, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (name, n, g.shape, w.shape, g.dtype)
        np.testing.assert_allclose(g, w, rtol=tolerance, atol=tolerance,
                                   err_msg=f"{name} at size {n}")


def main(names) -> None:
    for name, fn, make, tolerance, most in CASES:
        if names and name not in names:
            continue
        f = autofuse.jit(fn, backend="cuda", **OPTIONS.get(name, {}))
        for n in SIZES:
            args = make(n)
            try:
                want = fn(*args)
            except ValueError:           # (NumPy's max or argmax of no elements)
                continue
            with np.errstate(invalid="ignore", divide="ignore"):
                _compare(name, n, f(*args), want, tolerance)
        info = f.cache_info()
        text = f.lower(*make(7)).as_text("fused")
        assert "# dynamic: n0" in text, text
        assert info.compiles <= most, (name, info, text)
        print(f"{name}: {info.compiles} compiles, {info.instances} instances: ok")


if __name__ == "__main__":
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    warnings.simplefilter("ignore", RuntimeWarning)     # (means of no rows, in NumPy and kernels)
    main(sys.argv[1:])
