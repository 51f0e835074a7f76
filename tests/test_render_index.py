"""Index maps composed in generated kernels: a slice's affine map over a reshape's divided index
keeps its precedence (found by the fuzzer through a median of a reversed slice: `-1 * f1 // 2`
read (-f1) // 2, a wrong element on the CPU and a negative index on the GPU)."""
import numpy as np
import pytest

import autofuse

PROGRAMS = [lambda a: a[::-1].reshape(-1) * 2,
            lambda a: np.ravel(a[1:][::-1]) + 1,
            lambda a: a[::-2].reshape(-1, 3) - a[:2].reshape(-1, 3),
            lambda a: np.median(a[1:][::-1], axis=None),
            lambda a: np.sort(a[::-1], axis=None)]


@pytest.mark.parametrize("k", range(len(PROGRAMS)))
def test_slice_of_a_reshape_index(k):
    fn = PROGRAMS[k]
    x = np.arange(24, dtype=np.int64).reshape(4, 6) * 7 % 11
    np.testing.assert_array_equal(autofuse.jit(fn)(x), fn(x))


def test_affine_keeps_an_expression_together():
    from autofuse.backends.index_text import affine
    assert affine(2, -1, "f1 // 2") == "(2 + -1 * (f1 // 2))"
    assert affine(0, 3, "i0") == "(3 * i0)"
    assert affine(4, 1, "f1 % 2") == "(4 + f1 % 2)"
