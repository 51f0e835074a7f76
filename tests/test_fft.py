"""np.fft against NumPy on fresh random inputs, on the CPU backend as planned (library steps and
short transforms traced into their neighbours), on the CPU backend with every transform traced
(radix stages, DFT matrix, Bluestein), and on the reference interpreter: the complex, real and
n-dimensional transforms at power-of-two and other lengths, axes, n= crops and pads, norms,
layouts, fftfreq and the shifts; NumPy's errors; the plan (which transform runs where, and why,
on the CPU and, without a GPU, the CUDA backend); how the traced stages fuse; one small complex64
transform under the CUDA simulator."""
from __future__ import annotations

import math

import numpy as np
import pytest

import autofuse
from autofuse.trace import transforms

from conftest import copy_keeping_layout

BACKENDS = ["cpu", "numpy"]
TRACED = autofuse.FourierLimits(library=None)
# (backend, jit options): as planned, every transform traced, the interpreter
CONFIGURATIONS = [("cpu", {}), ("cpu", {"fft_limits": TRACED}), ("numpy", {})]
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
    for backend, options in CONFIGURATIONS:
        result = autofuse.jit(fn, backend=backend, **options)(
            *[copy_keeping_layout(a) for a in args])
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
    """irfft(rfft(x) * H) and abs(rfft(x)) traced: radix-4 stages, a kernel each at most, with
    the surrounding elementwise work inside them."""
    x = random_input((16, 256), np.float64, rng)
    gain = np.exp(-np.arange(129) / 20.0)

    def smooth(a, h):
        return np.fft.irfft(np.fft.rfft(a) * h, 256) + 1.0
    check(smooth, x, gain)
    stages = round(math.log(256, 4))
    assert len(autofuse.jit(smooth, fft_limits=TRACED).lower(x, gain).kernels) <= 2 * stages + 2
    magnitude = autofuse.jit(lambda a: np.abs(np.fft.rfft(a)), fft_limits=TRACED)
    assert len(magnitude.lower(x).kernels) <= stages + 1


def _kinds(low) -> list[str]:
    return [kernel.kind for kernel in low.kernels]


def test_convolution_runs_library_steps_between_kernels(rng):
    """irfft(rfft(x) * rfft(k)) in an elementwise chain: the producers, the spectra's product and
    the consumers are kernels; each transform a library step between them, saying why."""
    x, k = random_input((32, 1000), np.float32, rng), random_input((1000,), np.float32, rng)

    def convolve(a, b):
        y = np.fft.irfft(np.fft.rfft(a * 0.5 + 1) * np.fft.rfft(b), 1000)
        return np.tanh(y) * 2
    check(convolve, x, k, n=1000)
    jitted = autofuse.jit(convolve)
    low = jitted.lower(x, k)
    assert _kinds(low).count("fft") == 3 and _kinds(low).count("fft") < len(low.kernels)
    fused = low.as_text("fused")
    assert "scipy.fft (pocketfft) as a step between kernels (length 1000 > 16" in fused or \
        "np.fft (pocketfft) as a step" in fused
    for kernel in low.kernels:
        if kernel.kind == "fft":
            assert kernel.strategy in ("library FFT: scipy.fft", "library FFT: numpy.fft")
            assert ".fft.rfft(x, n=1000" in kernel.source or ".fft.irfft(x" in kernel.source
            assert "as a step between kernels" in kernel.reason
    jitted(x, k)
    again = jitted(x, k)        # (the generated call: cpu/host.py writes the library steps in)
    expected = convolve(x, k)
    assert_close(again, expected, 1000)
    assert ".fft.irfft(x, n=1000, axis=1" in jitted.lower(x, k).host_source


@pytest.mark.parametrize("n", [4, 8, 12, 16])
def test_short_transforms_fuse_into_their_neighbours(n, rng):
    """A short transform of few rows with elementwise neighbours is traced into their kernel
    (the DFT matrix as a sum: one kernel in all), the fused text saying so; many rows of it go
    to the library, whose cost an element is then below the traced one's."""
    x = random_input((100, n), np.float32, rng)
    fn = lambda a: np.abs(np.fft.rfft(a * 2)) + 1       # noqa: E731
    check(fn, x)
    low = autofuse.jit(fn).lower(x)
    assert _kinds(low) == ["input"], low.as_text("fused")
    assert f"rfft(n={n}, axis=1): traced into the kernel of its neighbours" in low.as_text("fused")
    many = random_input((20000, n), np.float32, rng)
    fused = autofuse.jit(fn).lower(many).as_text("fused")
    traced = n // 2 + 1 < 3.0 + 10_000 / many.size
    assert ("traced into the kernel" in fused) == traced, fused
    if not traced:
        assert f"(traced, {n // 2 + 1} multiply-adds an element; the library step costs" in fused


def test_the_plan_and_its_tuning(rng):
    """Alone, a short transform is a library step (nothing to fuse into); max_traced_length moves
    the line; library=None traces every transform."""
    x = random_input((64, 8), np.complex64, rng)
    assert _kinds(autofuse.jit(np.fft.fft).lower(x)) == ["fft"]
    assert "no elementwise neighbour" in autofuse.jit(np.fft.fft).lower(x).as_text("fused")
    fn = lambda a: np.fft.ifft(a + 1, norm="ortho") * 2        # noqa: E731
    assert "fft" not in _kinds(autofuse.jit(fn).lower(x))
    short = autofuse.FourierLimits(max_traced_length=4)
    assert "fft" in _kinds(autofuse.jit(fn, fft_limits=short).lower(x))
    traced = autofuse.jit(np.fft.fft, fft_limits=TRACED).lower(x)
    assert "fft" not in _kinds(traced) and "fft_limits(library=None)" in traced.as_text("fused")
    with pytest.raises(autofuse.ArgumentError):
        autofuse.jit(np.fft.fft, fft_limits=16)


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_cuda_plan_without_a_gpu(library, monkeypatch, rng):
    """The CUDA backend's plan, lowered without a GPU or simulator: with a library for the call's
    arrays, a long transform is that library's step between kernels (its call in the record);
    without one (numba device arrays, no CuPy) it stays traced kernels, saying why."""
    pytest.importorskip("numba_cuda")
    import autofuse.backends.cuda as cuda_backend
    x = random_input((16, 256), np.float32, rng)
    fn = lambda a: np.abs(np.fft.rfft(a * 2, norm="forward")) + 1        # noqa: E731
    monkeypatch.setattr(cuda_backend, "library_for_fft", lambda leaves: (library, ""))
    low = autofuse.jit(fn).lower(x, backend="cuda")
    assert _kinds(low) == ["elementwise", "fft", "elementwise"], _kinds(low)
    step = low.kernels[1]
    assert step.strategy == f"library FFT: {library}.fft"
    if library == "torch":
        assert "torch.fft.rfft(x, n=256, dim=1, norm='forward')" in step.source
    else:
        assert "cupy.fft.rfft(x, n=256, axis=1, norm='forward')" in step.source
    assert f"{library}.fft (cuFFT) as a step between kernels" in step.reason
    monkeypatch.setattr(cuda_backend, "library_for_fft", lambda leaves: (None, "no CuPy here"))
    low = autofuse.jit(fn).lower(x, backend="cuda")
    assert "fft" not in _kinds(low) and "traced kernels (no CuPy here)" in low.as_text("fused")


def test_cuda_library_choice():
    """Which library runs a call's FFTs: torch for torch tensors, CuPy for its arrays (and, where
    installed, numba's device arrays and NumPy arrays)."""
    from autofuse.backends.cuda.runtime import library_fft

    class Tensor:
        __module__ = "torch"
        __cuda_array_interface__ = {}

    class Device:
        __cuda_array_interface__ = {}
    assert library_fft.library_for_fft([1.0, Tensor()]) == ("torch", "")
    cupy_installed = library_fft._installed("cupy")
    assert library_fft.library_for_fft([Device()])[0] == ("cupy" if cupy_installed else None)


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
    if plan.max_matrix >= n:       # (the short route: the DFT matrix as a sum)
        as_sum = transforms.Plan(max_matrix=plan.max_matrix, min_radix2=plan.min_radix2,
                                 matrix_as_sum=True)
        result = autofuse.jit(lambda a: transforms.dft(a, inverse, as_sum))(x)
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
