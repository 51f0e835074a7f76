"""Run under NUMBA_ENABLE_CUDASIM=1 by test_cuda_scans.py: the CUDA scan kernels (a thread a
line, a block a line in rounds, decoupled look-back tiles) executed by numba's simulator on small
inputs, against NumPy. Prints one line a case, ending ": ok"."""
import numpy as np

import autofuse
from autofuse.backends.cuda.tuning import Tuning

rng = np.random.default_rng(5)
ROWS = Tuning(scan_lines_per_sm=0)        # every long line a block (no look-back)
# (the simulator's look-back tiles are 64 elements: its lines here take 3 tiles, a first, a middle
# and a ragged last one; the GPU's cases below take many)


def sample(shape, dtype):
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.2
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 3, shape).astype(dtype)
    return (rng.standard_normal(shape) * 0.5 + 0.2).astype(dtype)


CASES = [
    # (name, function, arguments, expected strategy, tuning)
    ("cumsum rows f32", lambda x: np.cumsum(x * x, axis=1) / 7, [sample((3, 150), np.float32)], "scan rows", ROWS),
    ("cumsum look-back f32", lambda x: np.cumsum(x * x, axis=1) / 7, [sample((2, 150), np.float32)], "scan look-back", None),
    ("cumsum look-back 1-d f64", lambda x: np.cumsum(x), [sample((150,), np.float64)], "scan look-back", None),
    ("cumsum look-back int8 -> int64", lambda x: np.cumsum(x, axis=-1), [sample((2, 140), np.int8)], "scan look-back", None),
    ("cumsum rows int8 wrap", lambda x: np.cumsum(x, axis=1, dtype=np.int8) * 2, [sample((2, 200), np.int8) + 50], "scan rows", ROWS),
    ("cumprod rows f64", lambda x: np.cumprod(1 + x * 0.01, axis=1), [sample((2, 99), np.float64)], "scan rows", ROWS),
    ("maximum look-back f32 NaN", lambda x: np.maximum.accumulate(x, axis=1), [sample((2, 150), np.float32)], "scan look-back", None),
    ("minimum rows int32", lambda x: np.minimum.accumulate(x - 5, axis=1), [sample((3, 70), np.int32)], "scan rows", ROWS),
    ("logical_or look-back bool", lambda x: np.logical_or.accumulate(x, axis=1), [sample((2, 150), np.bool_) & False], "scan look-back", None),
    ("logical_and rows bool", lambda x: np.logical_and.accumulate(x, axis=1), [sample((2, 100), np.bool_)], "scan rows", ROWS),
    ("maximum bool -> int8", lambda x: np.maximum.accumulate(x, axis=1), [sample((2, 100), np.bool_)], "scan rows", ROWS),
    ("cumsum float16 rows", lambda x: np.cumsum(x, axis=1), [sample((2, 80), np.float16)], "scan rows", ROWS),
    ("cumsum columns axis 0", lambda x, w: np.cumsum(x * w, axis=0) - w, [sample((9, 70), np.float32), sample((70,), np.float32)], "scan columns", None),
    ("cumsum short lines", lambda x: np.cumsum(x, axis=1) + 1, [sample((40, 5), np.float64)], "scan columns", None),
    ("cumsum axis 0 few lines", lambda x: np.cumsum(x, axis=0), [sample((130, 3), np.float32)], "scan look-back", None),
    ("cumsum axis 1 of 3-d", lambda x: np.cumsum(x, axis=1), [sample((2, 40, 3), np.int64)], "scan rows", ROWS),
    ("cumsum non-contiguous", lambda x: np.cumsum(x, axis=1), [sample((4, 300), np.float32)[::-2, ::2]], "scan look-back", None),
    ("cumulative_sum include_initial", lambda x: np.cumulative_sum(x, axis=1, include_initial=True), [sample((2, 90), np.int32)], "scan rows", ROWS),
    ("cumsum size 0", lambda x: np.cumsum(x, axis=1), [sample((0, 40), np.float32)], None, None),
]


# On a GPU (run directly, without the simulator): the same cases, and lines long enough for many
# look-back tiles of the GPU's sizes.
GPU_CASES = [
    ("GPU look-back int8 exact", lambda x: np.cumsum(x, axis=1), [sample((4, 1 << 20), np.int8)], "scan look-back", None),
    ("GPU look-back f64", lambda x: np.cumsum(x * 2, axis=1), [sample((2, 3 << 20), np.float64)], "scan look-back", None),
    ("GPU look-back max NaN", lambda x: np.maximum.accumulate(x, axis=1), [sample((3, 1 << 20), np.float32)], "scan look-back", None),
    ("GPU look-back bool", lambda x: np.logical_and.accumulate(x | True, axis=0), [sample((1 << 20,), np.bool_)], "scan look-back", None),
    ("GPU rows int32 min", lambda x: np.minimum.accumulate(x - 1, axis=1), [sample((2000, 3000), np.int32)], "scan rows", None),
    ("GPU columns f32", lambda x: np.cumsum(x, axis=0) + 1, [sample((300, 8192), np.float32)], "scan columns", None),
    ("GPU strided few lines", lambda x: np.cumsum(x, axis=0), [sample((5000, 7), np.float64)], "scan look-back", None),
]


def main():
    from autofuse.backends.cuda import simulating
    for name, fn, args, strategy, tuning in CASES + ([] if simulating() else GPU_CASES):
        if not simulating() and not name.startswith("GPU"):
            strategy = None                   # the GPU's block sizes plan other strategies
        if name.endswith("NaN"):
            args[0][1, 77] = np.nan
        jitted = autofuse.jit(fn, backend="cuda", **({"tuning": tuning} if tuning else {}))
        low = jitted.lower(*args)
        scans = [k for k in low.kernels if k.kind == "scan"]
        if strategy is not None:
            assert scans and scans[0].strategy == strategy, (name, [k.strategy for k in low.kernels])
        expected = fn(*args)
        result = np.asarray(jitted(*args))
        assert result.shape == expected.shape and result.dtype == expected.dtype, (name, result.dtype)
        if expected.dtype.kind == "f":
            tolerance = {2: 2e-2, 4: 1e-4, 8: 1e-12}[expected.dtype.itemsize]
            np.testing.assert_allclose(result, expected, rtol=tolerance, atol=tolerance, err_msg=name)
        else:
            np.testing.assert_array_equal(result, expected, err_msg=name)
        print(f"{name}: ok", flush=True)


if __name__ == "__main__":
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    main()
