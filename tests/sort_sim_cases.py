"""Run under NUMBA_ENABLE_CUDASIM=1 by test_cuda_sort_simulator.py: the sort kernels
(emit/sorting.py) executed by numba's simulator on small inputs, against NumPy: rows sorted in
shared memory and over global scratch, NaN / -0.0 / ties, every dtype, axes, strided and empty
inputs, argsort's stable order, fused order statistics, and a sort in place."""
import sys
import warnings

import numpy as np

import autofuse
from autofuse.backends.cuda.tuning import Tuning

rng = np.random.default_rng(11)
GLOBAL = Tuning(sort_row=8)           # rows of more than 8 (padded) elements over global scratch


def special(*shape, dtype=np.float32):
    x = rng.integers(-4, 5, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x = x + rng.standard_normal(shape).astype(dtype) * (rng.random(shape) < 0.5)
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, 3, replace=False)] = [np.nan, -0.0, 0.0]
    return x


def sort_all(a):
    return np.sort(a), np.argsort(a, kind="stable")


def in_place(a):
    a.sort(axis=0)
    return a[0] + 1


CASES = [
    ("f32_rows", sort_all, (special(5, 13),)),
    ("f32_axis0", lambda a: (np.sort(a, axis=0), np.argsort(a, axis=0, kind="stable")), (special(9, 4),)),
    ("f32_flat", lambda a: (np.sort(a, axis=None), np.argsort(a, axis=None)), (special(3, 5),)),
    ("f64_3d", lambda a: (np.sort(a, axis=1), np.argsort(a, axis=-1, kind="stable")), (special(2, 6, 5, dtype=np.float64),)),
    ("f16", sort_all, (special(4, 10, dtype=np.float16),)),
    ("i32_ties", sort_all, (special(4, 33, dtype=np.int32),)),
    ("i8", sort_all, (special(3, 17, dtype=np.int8),)),
    ("u16", sort_all, (special(3, 9, dtype=np.uint16),)),
    ("bool", sort_all, (rng.random((4, 11)) < 0.5,)),
    ("strided", sort_all, (special(6, 20)[::2, ::3],)),
    ("reversed", sort_all, (special(5, 7)[::-1],)),
    ("empty_rows", sort_all, (np.zeros((3, 0), np.float32),)),
    ("no_rows", sort_all, (np.zeros((0, 4), np.float32),)),
    ("one", sort_all, (special(4, 1),)),
    ("median_fused", lambda a: np.median(a * 2 - 1, axis=-1), (special(6, 10),)),
    ("median_odd_int", lambda a: np.median(a, axis=0), (special(7, 3, dtype=np.int32),)),
    ("quantile_keepdims", lambda a: a - np.quantile(a, 0.3, axis=1, keepdims=True),
     (rng.standard_normal((5, 12)).astype(np.float32),)),
    ("percentile_q_array", lambda a: np.percentile(a, [10, 50, 95], axis=-1), (special(4, 9),)),
    ("quantile_methods", lambda a: tuple(np.quantile(a, 0.4, axis=-1, method=m) for m in
                                         ("lower", "higher", "nearest", "midpoint")), (special(3, 8),)),
    ("nanmedian", lambda a: np.nanmedian(a, axis=-1), (special(5, 8),)),
    ("sort_in_place", in_place, (special(6, 3),)),
    ("global_rows", sort_all, (special(3, 20),), GLOBAL),
    ("global_flat", lambda a: np.argsort(a, axis=None, kind="stable"), (special(37),), GLOBAL),
    ("global_bool", sort_all, (rng.random((2, 19)) < 0.5,), GLOBAL),
]


def same(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if want.dtype.kind == "f":
        tolerance = 2e-3 if want.dtype == np.float16 else 1e-6
        return np.allclose(got, want, rtol=tolerance, atol=tolerance, equal_nan=True)
    return np.array_equal(got, want)


def main(only: str = "") -> int:
    failures = 0
    for name, fn, args, *tuning in CASES:
        if only not in name:
            continue
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            want = fn(*[a.copy() for a in args])
            mine = [a.copy() for a in args]
            got = autofuse.jit(fn, backend="cuda", tuning=tuning[0] if tuning else None)(*mine)
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        ok = len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
        if name == "sort_in_place":
            reference = args[0].copy()
            reference.sort(axis=0)
            ok &= np.array_equal(mine[0], reference, equal_nan=True)
        print(f"{name}: {'ok' if ok else 'MISMATCH'}", flush=True)
        failures += not ok
    return failures


if __name__ == "__main__":
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    sys.exit(main(*sys.argv[1:2]))
