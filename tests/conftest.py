"""Shared helpers for the front-end tests: random inputs, the NumPy-exact comparison, shapes."""
from __future__ import annotations

import os

import numpy as np
import pytest

# Kernels are not written as shared libraries in test processes (0.15-0.2 s a kernel, thousands of
# kernels); tests/test_disk_load.py and test_disk_cache.py turn it on in the processes they start.
os.environ.setdefault("AUTOFUSE_CPU_LIBRARIES", "0")

DTYPES = (np.dtype(bool), np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float32),
          np.dtype(np.float64))
DTYPE_IDS = [d.name for d in DTYPES]

# Unary shapes: (id, shape, layout) where layout is how the argument array is laid out in memory.
UNARY_SHAPES = [
    ("0d", (), "C"),
    ("size0", (0, 3), "C"),
    ("3x4", (3, 4), "C"),
    ("vec", (5,), "C"),
    ("noncontig", (3, 4), "stride2"),     # x[:, ::2] of a (3, 8) array
    ("negstride", (4, 3), "reversed"),    # x[::-1] of a (4, 3) array
    ("fortran", (3, 4), "F"),
]

# Binary shapes: pairs that broadcast (NumPy's rules) plus the identical-shape cases.
BINARY_SHAPES = [
    ("0d-0d", (), ()),
    ("3x4-3x4", (3, 4), (3, 4)),
    ("3x4-4", (3, 4), (4,)),
    ("3x1-1x4", (3, 1), (1, 4)),
    ("0d-3x4", (), (3, 4)),
    ("2x1x4-3x1", (2, 1, 4), (3, 1)),
    ("size0", (0, 4), (4,)),
]


def rng_for(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def random_array(shape, dtype, rng=None, layout="C", nonzero=False, positive=False,
                 low=None, high=None) -> np.ndarray:
    """Fresh random values of `dtype`, never all zeros; `nonzero` avoids 0 (for divisors).

    `layout`: "C", "F" (Fortran order), "stride2" (x[:, ::2] of a wider array: non-contiguous),
    "reversed" (x[::-1]: negative strides).
    """
    rng = rng if rng is not None else rng_for()
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if layout == "stride2":
        full = random_array(shape[:-1] + (2 * shape[-1],), dtype, rng, "C", nonzero, positive, low, high)
        return full[..., ::2]
    if layout == "reversed":
        return random_array(shape, dtype, rng, "C", nonzero, positive, low, high)[::-1]
    if dtype.kind == "b":
        values = rng.random(shape) < 0.5
        if nonzero:
            values = np.ones(shape, bool)
    elif dtype.kind in "iu":
        lo = (1 if positive else -5) if low is None else low
        hi = 6 if high is None else high
        values = rng.integers(lo, hi, size=shape).astype(dtype)
        if nonzero:
            values[values == 0] = 1
    else:
        lo = (0.1 if positive else -3.0) if low is None else low
        hi = 3.0 if high is None else high
        values = rng.uniform(lo, hi, size=shape).astype(dtype)
        if nonzero:
            values[np.abs(values) < 0.1] = 0.5
    values = np.asarray(values, dtype=dtype)
    if layout == "F":
        values = np.asfortranarray(values)
    return values


def copy_keeping_layout(array):
    """A copy with the same strides (Fortran order, negative or gapped strides) as `array`.

    NumPy's view-or-copy decisions (reshape, ravel) depend on strides, so the NumPy reference
    must run on arrays laid out like the ones autofuse gets.
    """
    if not isinstance(array, np.ndarray):
        return array
    if array.flags.c_contiguous or array.size == 0:
        return array.copy()
    if array.flags.f_contiguous:
        return array.copy(order="F")
    base = array.base
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    assert isinstance(base, np.ndarray) and base.flags.c_contiguous, "cannot reproduce this layout"
    buffer = base.copy()
    offset = array.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return np.ndarray(array.shape, array.dtype, buffer=buffer, offset=offset, strides=array.strides)


def tolerance(dtype, loose: bool = False) -> tuple[float, float]:
    """(rtol, atol) for comparing results of `dtype`: exact for ints and bools."""
    dtype = np.dtype(dtype)
    if dtype.kind in "biu":
        return 0.0, 0.0
    if dtype in (np.float32, np.complex64):
        return (1e-5, 1e-6) if loose else (1e-6, 1e-7)
    if dtype == np.float16:
        return 1e-3, 1e-3
    return 1e-12, 1e-14


def _kind_of(value) -> str:
    if isinstance(value, np.ndarray):
        return "ndarray"
    if isinstance(value, np.generic):
        return "numpy scalar"
    if isinstance(value, (bool, int, float, complex)):
        return f"python {type(value).__name__}"
    return type(value).__name__


def assert_same(result, expected, loose: bool = False, atol: float | None = None) -> None:
    """`result` is what NumPy gave as `expected`: same container type, type, shape, dtype, values.

    NaNs must sit at the same places; floats compare with a tolerance that fits their dtype
    (`loose` for ops whose float32 results differ in the last bits between implementations;
    `atol` where rounding scales with the operands, not the result, as in a matmul's cancelling
    sums).
    """
    if isinstance(expected, (tuple, list, dict)):
        assert type(result) is type(expected), f"{type(result)} != {type(expected)}"
        assert len(result) == len(expected)
        if isinstance(expected, dict):
            assert list(result) == list(expected)
            for key in expected:
                assert_same(result[key], expected[key], loose, atol)
        else:
            for r, e in zip(result, expected):
                assert_same(r, e, loose, atol)
        return
    assert _kind_of(result) == _kind_of(expected), (
        f"result is a {_kind_of(result)} ({result!r}), NumPy gives a {_kind_of(expected)} ({expected!r})")
    if expected is None or isinstance(expected, str):
        assert result == expected
        return
    if isinstance(expected, (bool, int, float, complex)):
        assert type(result) is type(expected)
        if isinstance(expected, (float, complex)) and np.isnan(expected):
            assert np.isnan(result) and np.isnan(expected.real) == np.isnan(result.real)
        else:
            assert result == pytest.approx(expected, rel=1e-12)
        return
    assert result.shape == expected.shape, f"shape {result.shape} != {expected.shape}"
    assert result.dtype == expected.dtype, f"dtype {result.dtype} != {expected.dtype}"
    rtol, default_atol = tolerance(expected.dtype, loose)
    atol = default_atol if atol is None else atol
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(result, expected)
    else:
        np.testing.assert_allclose(result, expected, rtol=rtol, atol=atol, equal_nan=True)
        np.testing.assert_array_equal(np.isnan(result), np.isnan(expected))


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A generator seeded from the test's name: fresh values per test, reproducible per run."""
    seed = sum(ord(c) * (i + 1) for i, c in enumerate(request.node.name)) % (2 ** 32)
    return np.random.default_rng(seed)


def check_quietly(fn, *args, loose=False):
    """autofuse's result of `fn` against NumPy's (on copies of the arguments), NumPy's warnings
    (NaN slices, divisions by zero) silenced on both sides."""
    import warnings

    import autofuse
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = fn(*[copy_keeping_layout(a) for a in args])
        result = autofuse.jit(fn)(*args)
    assert_same(result, expected, loose=loose)
