"""cuda_half's claim, checked without a GPU: NumPy's float16 add, subtract and multiply (float32
op, then rounded to float16) give the float16 nearest the exact result, which is what PTX's
add.rn.f16, sub.rn.f16 and mul.rn.f16 compute; so kernels computing them natively answer as
NumPy does. The exact result: the op in float64, exact for two halves (a sum spans at most 51
bits, a product 22), rounded once to float16 by NumPy's correctly rounded double -> half.

The GPU's side (add.rn.f16 against NumPy, bit for bit) is test_cuda_gpu.py's
test_float16_native_ops_are_numpys_bit_for_bit; the simulator's, cuda_half's NumPy functions
below and in the simulator suite."""
import numpy as np
import pytest

from autofuse.backends.cuda.intrinsics import half as cuda_half

EVERY = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
OPS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply}


def _rounded_once(op, a, b):
    with np.errstate(all="ignore"):
        return OPS[op](a.astype(np.float64), b.astype(np.float64)).astype(np.float16)


def _same(got, want):
    got, want = np.asarray(got, np.float16), np.asarray(want, np.float16)
    return (got.view(np.uint16) == want.view(np.uint16)) | (np.isnan(got) & np.isnan(want))


@pytest.mark.parametrize("op", sorted(OPS))
def test_numpy_float16_ops_round_once(op):
    """Every float16 value against 64 random others (4.2 million pairs), and every value against
    the awkward ones (zeros, the smallest subnormal, the largest half, its neighbours, infinities,
    NaN, values whose sum or product lands on a rounding midpoint)."""
    rng = np.random.default_rng(50)
    a = np.tile(EVERY, 64)
    b = rng.permutation(a)
    awkward = np.array([0.0, -0.0, 6e-8, -6e-8, 65504, -65504, 65472, 32768, 1.0, 1.0009765625,
                        2.0 ** -14, 2.0 ** -24, 3 * 2.0 ** -25, np.inf, -np.inf, np.nan, 0.5,
                        1.5, 2049 / 2048], np.float16)
    a = np.concatenate([a, np.repeat(EVERY, awkward.size)])
    b = np.concatenate([b, np.tile(awkward, EVERY.size)])
    with np.errstate(all="ignore"):
        numpy = OPS[op](a, b)
    assert numpy.dtype == np.float16
    ok = _same(numpy, _rounded_once(op, a, b))
    assert ok.all(), (a[~ok][:5], b[~ok][:5])


def test_double_rounding_of_arbitrary_reals_is_not_innocuous():
    """Why the claim is about ops and not any float32: a float32 rounded to float16 is not always
    the nearest half of the value it stood for (here 1 + 2^-11 + 2^-30, which float32 rounds to
    the midpoint 1 + 2^-11 and float16 then rounds down to even). So casts from float64 narrow
    in one step (cuda_half.narrow), never through float32."""
    value = 1 + 2.0 ** -11 + 2.0 ** -30
    assert np.float16(np.float32(value)) == np.float16(1.0)
    assert np.float16(value) == np.float16(1 + 2.0 ** -10)


@pytest.mark.parametrize("op", sorted(cuda_half.NATIVE))
def test_simulator_functions_are_numpys_float16_ops(op):
    """The simulator's half_add and the like, over 4096 random pairs held as float32 (as kernels
    hold halves): NumPy's float16 result, widened to float32."""
    functions = cuda_half._simulator_functions()
    rng = np.random.default_rng(51)
    a, b = (rng.choice(EVERY, 4096).astype(np.float32) for _ in range(2))
    with np.errstate(all="ignore"):
        got = np.array([functions[f"half_{op}"](p, q) for p, q in zip(a, b)])
        want = OPS[op](a.astype(np.float16), b.astype(np.float16)).astype(np.float32)
    assert got.dtype == np.float32 and _same(got, want).all()
    assert functions["narrow"](np.float64(1 + 2.0 ** -11 + 2.0 ** -30)) == np.float16(1 + 2.0 ** -10)
