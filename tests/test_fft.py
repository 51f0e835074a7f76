"""np.fft against NumPy on fresh random inputs, on the CPU backend and the reference interpreter:
the complex, real and n-dimensional transforms at power-of-two and other lengths (radix stages,
DFT matrix, Bluestein), axes, n= crops and pads, norms, layouts, fftfreq and the shifts; NumPy's
errors; how the stages fuse; one small complex64 transform under the CUDA simulator."""
from __future__ import annotations

import math

import numpy as np
import pytest

import autofuse
from autofuse.trace import transforms

from conftest import copy_keeping_layout

BACKENDS = ["cpu", "numpy"]
LENGTHS = [1, 2, 3, 5, 8, 12, 64, 100, 1024, 1000]


def random_input(shape, dtype, rng):
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def assert_close(result, expected, n):
    """Same shape and dtype; values within a tolerance by dtype relative to the largest term:
    float32 parts 1e-5 * log2(n), float64 parts 1e-12."""
    result, expected = np.asarray(result), np.asarray(expected)
    assert result.shape == expected.shape and result.dtype == expected.dtype, (
        result.shape, result.dtype, expected.shape, expected.dtype)
    if expected.size == 0:
        return
    single = expected.dtype in (np.float32, np.complex64, np.float16)
    rtol = 1e-5 * max(1.0, math.log2(max(n, 1))) if single else 1e-12
    scale = max(np.abs(expected).max(), 1e-30)
    assert np.abs(result - expected).max() <= rtol * scale, np.abs(result - expected).max() / scale


def check(fn, *args, n=None):
    expected = fn(*[copy_keeping_layout(a) for a in args])
    n = n if n is not None else max(np.shape(args[0]) or (1,))
    for backend in BACKENDS:
        result = autofuse.jit(fn, backend=backend)(*[copy_keeping_layout(a) for a in args])
        if isinstance(expected, tuple):
            for r, e in zip(result, expected):
                assert_close(r, e, n)
        else:
            assert_close(result, expected, n)


def _both(a):
    return np.fft.fft(a), np.fft.ifft(a)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [np.float32, np.complex128], ids=["f32", "c128"])
def test_fft_and_ifft_lengths(n, dtype, rng):
    check(_both, random_input((3, n), dtype, rng))


@pytest.mark.parametrize("n", [5, 64, 100])
@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.int32], ids=["f64", "c64", "i32"])
def test_other_dtypes(n, dtype, rng):
    x = random_input((2, n), np.float64, rng) * 10 if dtype == np.int32 else None
    check(_both, x.astype(dtype) if x is not None else random_input((2, n), dtype, rng))


@pytest.mark.parametrize("axis, n", [(0, None), (1, 3), (1, 8), (-3, 16), (2, 5), (0, 7)])
def test_axes_and_lengths(axis, n, rng):
    """n= crops or pads with zeros along any axis."""
    x = random_input((4, 6, 10), np.complex64, rng)
    check(lambda a: (np.fft.fft(a, n=n, axis=axis), np.fft.ifft(a, n, axis)), x, n=n or 4)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_norms(norm, rng):
    x = random_input((3, 12), np.float64, rng)

    def transforms_(a):
        spectrum = np.fft.rfft(a, norm=norm)
        return (np.fft.fft(a, norm=norm), np.fft.ifft(a, norm=norm), spectrum,
                np.fft.irfft(spectrum, 12, norm=norm))
    check(transforms_, x)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 12, 100, 1024])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_rfft_and_irfft(n, dtype, rng):
    """rfft keeps n // 2 + 1 terms; irfft of them with n given, and with its default 2 (m - 1)."""
    x = random_input((2, n), dtype, rng)

    def roundtrip(a):
        spectrum = np.fft.rfft(a)
        return spectrum, np.fft.irfft(spectrum, n), np.fft.irfft(spectrum)
    if n == 1:
        check(lambda a: (np.fft.rfft(a), np.fft.irfft(np.fft.rfft(a), 1)), x)
    else:
        check(roundtrip, x)


@pytest.mark.parametrize("n", [4, 7, 10])
def test_irfft_of_any_half(n, rng):
    """A half that is not Hermitian-consistent (complex zero and Nyquist terms), cropped or
    padded to n // 2 + 1: NumPy drops those imaginary parts."""
    check(lambda z: np.fft.irfft(z, n), random_input((3, 5), np.complex128, rng), n=n)


def test_hfft_and_ihfft(rng):
    x = random_input((2, 9), np.complex128, rng)
    check(lambda z: (np.fft.hfft(z), np.fft.hfft(z, 7, norm="ortho"),
                     np.fft.ihfft(z.real), np.fft.ihfft(z.real, norm="forward")), x)


def test_two_and_n_dimensional(rng):
    x = random_input((3, 8, 6), np.float64, rng)
    check(lambda a: (np.fft.fft2(a), np.fft.ifft2(a, s=(4, 5)), np.fft.fftn(a),
                     np.fft.fftn(a, s=(6, 4), axes=(0, 2)), np.fft.ifftn(a, axes=(1,))), x)


def test_real_two_and_n_dimensional(rng):
    x = random_input((4, 8, 6), np.float32, rng)

    def real(a):
        spectrum = np.fft.rfft2(a)
        return (spectrum, np.fft.irfft2(spectrum), np.fft.irfft2(spectrum, s=(8, 6)),
                np.fft.rfftn(a, s=(5, 7), axes=(0, 1)), np.fft.irfftn(np.fft.rfftn(a)))
    check(real, x, n=8)


def test_frequencies_and_shifts(rng):
    x = random_input((5, 8), np.float64, rng)
    check(lambda a: (np.fft.fftfreq(8, 0.1) * a, np.fft.rfftfreq(7)[:, None] * a[0, :4],
                     np.fft.fftshift(a), np.fft.ifftshift(a), np.fft.fftshift(a, axes=1),
                     np.fft.ifftshift(a, axes=(0,)), np.fft.fftshift(np.fft.fftfreq(5))), x)


@pytest.mark.parametrize("layout", ["stride2", "reversed", "F"])
def test_layouts(layout, rng):
    base = random_input((6, 32), np.complex128, rng)
    x = {"stride2": base[::2], "reversed": base[::-1, ::-1], "F": np.asfortranarray(base)}[layout]
    check(lambda a: (np.fft.fft(a), np.fft.fft(a, axis=0), np.fft.rfft(a.real)), x)


def test_size_zero_batch(rng):
    x = np.zeros((0, 8))
    check(lambda a: (np.fft.fft(a), np.fft.irfft(np.fft.rfft(a), 8)), x)


@pytest.mark.parametrize("call, error", [
    (lambda a: np.fft.fft(a[:0]), ValueError), (lambda a: np.fft.fft(a, n=0), ValueError),
    (lambda a: np.fft.irfft(a[:1]), ValueError), (lambda a: np.fft.ifft(a, norm="bad"), ValueError),
    (lambda a: np.fft.rfft(a + 1j), TypeError)])
def test_errors_as_numpy(call, error):
    """The same exception class as NumPy, raised as an autofuse error."""
    x = np.ones(8)
    with pytest.raises(error):
        call(x)
    with pytest.raises(error) as raised:
        autofuse.jit(call, backend="cpu")(x)
    assert isinstance(raised.value, autofuse.AutofuseError) and "np.fft" in str(raised.value)


def test_spectral_filter_fuses(rng):
    """irfft(rfft(x) * H) and abs(rfft(x)): radix-4 stages, a kernel each at most, with the
    surrounding elementwise work inside them."""
    x = random_input((16, 256), np.float64, rng)
    gain = np.exp(-np.arange(129) / 20.0)

    def smooth(a, h):
        return np.fft.irfft(np.fft.rfft(a) * h, 256) + 1.0
    check(smooth, x, gain)
    stages = round(math.log(256, 4))
    assert len(autofuse.jit(smooth).lower(x, gain).kernels) <= 2 * stages + 2
    magnitude = autofuse.jit(lambda a: np.abs(np.fft.rfft(a)))
    assert len(magnitude.lower(x).kernels) <= stages + 1


@pytest.mark.parametrize("n, plan", [
    (64, transforms.Plan(max_matrix=10**6, min_radix2=10**6)), (64, transforms.Plan(radix=2)),
    (64, transforms.Plan(radix=8)), (128, transforms.Plan(radix=8)), (32, transforms.Plan()),
    (100, transforms.Plan(max_matrix=0)), (100, transforms.Plan(max_matrix=200))],
    ids=["matrix", "radix2", "radix8", "radix8-mixed", "radix4-mixed", "bluestein", "matrix100"])
@pytest.mark.parametrize("inverse", [False, True], ids=["forward", "backward"])
def test_every_route(n, plan, inverse, rng):
    """Each route (DFT matrix, radix 2, 4 and 8 with a smaller first radix, Bluestein) on a
    traced complex array, against NumPy's unnormalized transform."""
    x = random_input((2, n), np.complex128, rng)
    expected = np.fft.ifft(x) * n if inverse else np.fft.fft(x)
    for backend in BACKENDS:
        result = autofuse.jit(lambda a: transforms.dft(a, inverse, plan), backend=backend)(x)
        assert_close(result, expected, n)


@pytest.mark.sim
def test_complex64_fft_under_the_cuda_simulator(tmp_path):
    """A small complex64 fft through the CUDA backend's kernels, run by numba's simulator."""
    import os
    import subprocess
    import sys
    pytest.importorskip("numba_cuda")
    program = ("import numpy as np, autofuse\n"
               "x = (np.arange(32).reshape(2, 16) * (1 + 0.5j)).astype(np.complex64)\n"
               "got = autofuse.jit(lambda a: np.abs(np.fft.fft(a)), backend='cuda')(x)\n"
               "np.testing.assert_allclose(got, np.abs(np.fft.fft(x)), rtol=1e-4, atol=1e-3)\n"
               "print('ok')\n")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", AUTOFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0 and "ok" in done.stdout, done.stdout + done.stderr[-3000:]
