"""The CPU rows kernels' lanes on the stack and their row-block loops to an opaque bound
(autofuse/backends/cpu/lanes.py): the intrinsics themselves, and generated kernels that use them
against NumPy, rows with and without a tail past the last block of lanes."""
import numba
import numpy as np
import pytest

import autofuse
from autofuse.backends.cpu.lanes import opaque, stack_array


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64])
def test_a_stack_array_holds_what_is_stored(dtype):
    @numba.njit
    def squares(n):
        buffer = stack_array(16, dtype)
        for k in range(16):
            buffer[k] = k * k
        total = 0
        for k in range(min(n, 16)):
            total += buffer[k]
        return total, buffer.shape[0], buffer.itemsize

    assert squares(16) == (sum(k * k for k in range(16)), 16, np.dtype(dtype).itemsize)
    assert squares(3)[0] == 5


def test_opaque_is_its_value():
    @numba.njit
    def count(step):
        total = 0
        for _ in range(0, opaque(1024), step):
            total += 1
        return total, opaque(np.int32(-7))

    assert count(64) == (16, -7)


def layernorm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


@pytest.mark.parametrize("columns", [128, 200, 1024])
def test_rows_kernels_keep_their_lanes_on_the_stack(columns):
    rng = np.random.default_rng(columns)
    x = rng.standard_normal((37, columns)).astype(np.float32)
    g, b = rng.standard_normal(columns).astype(np.float32), np.ones(columns, np.float32)
    f = autofuse.jit(layernorm, backend="cpu")
    (kernel,) = f.lower(x, g, b).kernels
    assert "stack_array(" in kernel.source and "opaque(" in kernel.source
    np.testing.assert_allclose(f(x, g, b), layernorm(x, g, b), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("op", ["argmax", "argmin", "max", "sum"])
def test_laned_reductions_with_ties_and_nans(op):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, size=(9, 300)).astype(np.float32)    # ties in every row
    x[2, 150] = np.nan
    f = autofuse.jit(lambda a: getattr(np, op)(a, axis=1), backend="cpu")
    np.testing.assert_array_equal(f(x), getattr(np, op)(x, axis=1))
