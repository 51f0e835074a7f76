"""cuda_divide: float32 division by an unchanging divisor through its reciprocal and Markstein's
correction, exact as NumPy's division. The arithmetic is checked here in NumPy (fma32 against
exact rationals; the rendered statements' model against np.divide over every significand), the
generated kernels under the simulator (sim_cases.py) and on a GPU (test_cuda_gpu.py)."""
from fractions import Fraction

import numpy as np
import pytest

import autofuse
from autofuse.backends.cuda.intrinsics import divide as cuda_divide
from autofuse.backends.cuda.tuning import Tuning
from programs import layernorm

rng = np.random.default_rng(29)


def _exact_fma32(a, b, c) -> np.float32:
    """RN(a * b + c) to float32 from exact rationals: the nearer neighbour, ties to even."""
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    guess = np.float32(float(exact))
    best = guess
    for other in (np.nextafter(guess, np.float32(-np.inf)), np.nextafter(guess, np.float32(np.inf))):
        d_best, d_other = abs(Fraction(float(best)) - exact), abs(Fraction(float(other)) - exact)
        if d_other < d_best or (d_other == d_best and other.view(np.uint32) % 2 == 0):
            best = other
    return best


def _bits(x):
    return np.asarray(x, np.float32).view(np.uint32)


def test_fma32_rounds_once():
    n = 4000
    a = (rng.standard_normal(n) * 10.0 ** rng.integers(-20, 20, n)).astype(np.float32)
    b = (rng.standard_normal(n) * 10.0 ** rng.integers(-20, 20, n)).astype(np.float32)
    # c near -a*b: the cancellations where rounding twice goes wrong
    c = (-(a.astype(np.float64) * b) * (1 + rng.standard_normal(n) * 1e-7)).astype(np.float32)
    c[::3] = rng.standard_normal(c[::3].size).astype(np.float32)
    got = cuda_divide.fma32(a, b, c)
    want = np.array([_exact_fma32(*v) for v in zip(a, b, c)], np.float32)
    assert np.array_equal(_bits(got), _bits(want))
    # a * b + c = 1 + 2^-23 + 2^-24 - 2^-70: float64 rounds it to the float32 halfway point,
    # whose tie goes to even (1 + 2^-22); the exact sum lies below it, so 1 + 2^-23
    a, b = np.float32(2.0 ** -24 * (1 + 2.0 ** -23)), np.float32(1 - 2.0 ** -23)
    c = np.float32(1 + 2.0 ** -23)
    assert np.float32(np.float64(a) * np.float64(b) + np.float64(c)) == np.float32(1 + 2.0 ** -22)
    assert cuda_divide.fma32(a, b, c) == c == _exact_fma32(a, b, c)


@pytest.mark.parametrize("divisor", [3.0, 0.1, -7.3e-3, 1234.5, 1 - 2.0 ** -24, 2.0 ** -26, 2.0 ** 26])
def test_reciprocal_and_correction_are_numpys_division_for_every_significand(divisor):
    significands = np.arange(1 << 23, dtype=np.uint32)
    a = ((np.uint32(127 + 3) << 23) | significands).view(np.float32)
    b = np.float32(divisor)
    assert np.array_equal(_bits(cuda_divide.divide(a, b)), _bits(a / b))


def test_values_outside_the_ranges_take_ieee_division():
    a = np.array([0.0, -0.0, np.inf, -np.inf, 1e-45, -1e-40, 2.0 ** -101, -(2.0 ** 101), 3e38,
                  1e-38, 2.0 ** -100, 2.0 ** 100, 1.0], np.float32)
    for b in (3.0, 2.0 ** 27, 2.0 ** -27, np.inf, 0.0, -0.0, 1e-40, -2.5):
        b = np.float32(b)
        with np.errstate(all="ignore"):
            want = a / b
        got = cuda_divide.divide(a, b)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.array_equal(_bits(got)[~np.isnan(want)], _bits(want)[~np.isnan(want)]), b


def test_rows_kernel_divides_by_the_reciprocal_in_its_vector_loop():
    x, g, b = (np.ones((16, 4096), np.float32), np.ones(4096, np.float32), np.ones(4096, np.float32))
    # (the checked bodies: Tuning.assume_aligned off writes the element-by-element one too)
    checked = Tuning(assume_aligned=False)
    (kernel,) = autofuse.jit(layernorm, backend="cuda", tuning=checked).lower(x, g, b).kernels
    source = kernel.source
    loop = source[:source.index("element by element")].rindex("for jv in range(")   # the outputs'

    # the reciprocal once a row, before the vector loop (ROW_HOIST); a correction a quotient;
    # the range tests joined into one branch a vector step, whose other side divides by IEEE
    assert 0 < source.index("rcp") < loop and source.count("cuda.fma(cuda.fma(") == 4
    assert source.count("# rare: IEEE division") == 1
    assert "fma.rn.f32" in kernel.ptx
    # the element-by-element path (base addresses not 16-byte aligned) divides as before
    element_path = source[source.index("element by element"):]
    assert "cuda.fma" not in element_path and " / t" in element_path
    plain = Tuning(invariant_divide=False)
    (kernel,) = autofuse.jit(layernorm, backend="cuda", tuning=plain).lower(x, g, b).kernels
    assert "cuda.fma" not in kernel.source
    # a quotient that varies with the element (x / x) keeps the plain division
    (kernel,) = autofuse.jit(lambda x: x / (x + 1), backend="cuda").lower(x).kernels
    assert "cuda.fma" not in kernel.source
