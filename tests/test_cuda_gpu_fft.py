"""np.fft on a real GPU: the library step (cupy.fft for CuPy arrays and numba's device arrays,
torch.fft for torch tensors) between fused kernels, against NumPy: 1-D, batched, n=, axis=,
norm=, the 2-D and n-dimensional transforms, non-contiguous and size-edge inputs, an FFT
convolution inside an elementwise chain, and a short transform traced into its neighbours.

Run on the device machine: `python -m pytest -m gpu tests/test_cuda_gpu_fft.py`.
"""
import re

import numpy as np
import pytest

import autofuse

from gpu_marks import cupy, pytestmark  # noqa: F401  (CuPy, the GPU marker and skip)

rng = np.random.default_rng(32)


def rand(dtype, *shape):
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def on_device(library: str, array):
    if library == "cupy":
        return cupy.asarray(array)
    if library == "numba":
        from numba import cuda
        return cuda.to_device(np.ascontiguousarray(array))
    torch = pytest.importorskip("torch")
    return torch.from_numpy(np.ascontiguousarray(array)).cuda()


def to_host(value):
    if hasattr(value, "get"):
        return value.get()
    if hasattr(value, "copy_to_host"):
        return value.copy_to_host()
    return value.cpu().numpy()


def assert_matches(got, want, single_bound=2e-5):
    """Same shape and dtype (NumPy 2's: complex64 in, complex64 out); values within float
    rounding of the largest term."""
    got = to_host(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype,
                                                                  want.shape, want.dtype)
    if want.size:
        single = want.dtype in (np.float32, np.complex64)
        error = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
        assert error < (single_bound if single else 1e-12), error


PROGRAMS = {
    "fft": (lambda a: np.fft.fft(a), np.complex64, (64, 1000)),
    "ifft n= ortho": (lambda a: np.fft.ifft(a, n=700, norm="ortho"), np.complex128, (32, 512)),
    "fft axis 0 pad": (lambda a: np.fft.fft(a, n=96, axis=0), np.complex64, (64, 33)),
    "rfft f32": (lambda a: np.fft.rfft(a), np.float32, (128, 1024)),
    "rfft forward": (lambda a: np.fft.rfft(a, norm="forward"), np.float64, (16, 999)),
    "irfft": (lambda a: np.fft.irfft(a, n=256), np.complex64, (40, 129)),
    "irfft default n": (lambda a: np.fft.irfft(a), np.complex128, (8, 65)),
    "fft2": (lambda a: np.fft.fft2(a), np.complex64, (3, 64, 80)),
    "ifft2 s=": (lambda a: np.fft.ifft2(a, s=(50, 40)), np.complex128, (64, 64)),
    "rfftn axes": (lambda a: np.fft.rfftn(a, axes=(0, 2)), np.float32, (32, 3, 48)),
    "irfftn": (lambda a: np.fft.irfftn(a, s=(24, 30)), np.complex64, (24, 16)),
    "1-d": (lambda a: np.fft.fft(a), np.complex64, (4096,)),
}


@pytest.mark.parametrize("library", ["cupy", "torch"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_library_transforms_match_numpy(name, library):
    fn, dtype, shape = PROGRAMS[name]
    host = rand(dtype, *shape)
    jitted = autofuse.jit(fn)
    assert_matches(jitted(on_device(library, host)), fn(host))
    kinds = [k.kind for k in jitted.lower(on_device(library, host)).kernels]
    assert "fft" in kinds, kinds


@pytest.mark.parametrize("library", ["cupy", "torch", "numba"])
def test_convolution_between_fused_kernels(library):
    """irfft(rfft(x * w + b) * rfft(k)), tanh after: producers, the product and the consumers
    are kernels, the transforms library steps between them; numba's device arrays through CuPy."""
    x, w, k = rand(np.float32, 48, 1000), rand(np.float32, 1000), rand(np.float32, 1000)

    def convolve(a, weight, kernel):
        y = np.fft.irfft(np.fft.rfft(a * weight + 1) * np.fft.rfft(kernel), 1000)
        return np.tanh(y) * 0.5
    jitted = autofuse.jit(convolve)
    args = [on_device(library, a) for a in (x, w, k)]
    # (tanh's input sums 1000 terms of magnitude ~1: float32 rounds it ~30 x 1e-6 apart
    # between two FFT libraries, ~3e-5 of the largest output, 0.5)
    assert_matches(jitted(*args), convolve(x, w, k), 1e-4)
    assert_matches(jitted(*args), convolve(x, w, k), 1e-4)   # a second call, same program
    low = jitted.lower(*args)
    steps = [kernel for kernel in low.kernels if kernel.kind == "fft"]
    assert len(steps) == 3 and len(low.kernels) > 3
    expected = "torch" if library == "torch" else "cupy"
    assert all(step.strategy == f"library FFT: {expected}.fft" for step in steps)


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_non_contiguous_and_empty_inputs(library):
    base = rand(np.complex64, 64, 512)
    strided = on_device(library, base)[::2, 1::3]
    assert_matches(autofuse.jit(np.fft.fft)(strided), np.fft.fft(base[::2, 1::3]))
    column = on_device(library, base)[:, 3:300]
    assert_matches(autofuse.jit(lambda a: np.fft.fft(a, axis=0) * 2)(column),
                   np.fft.fft(base[:, 3:300], axis=0) * 2)
    empty = rand(np.float32, 0, 64)
    assert_matches(autofuse.jit(np.fft.rfft)(on_device(library, empty)), np.fft.rfft(empty))


def test_short_transform_is_traced_into_its_neighbours():
    """A transform of 8 terms between elementwise ops is one kernel with them on the GPU."""
    host = rand(np.float32, 4096, 8)
    fn = lambda a: np.abs(np.fft.rfft(a * 2)) + 1          # noqa: E731
    jitted = autofuse.jit(fn)
    assert_matches(jitted(cupy.asarray(host)), fn(host))
    low = jitted.lower(cupy.asarray(host))
    assert [k.kind for k in low.kernels] == ["input"], low.as_text("fused")
    assert "traced into the kernel of its neighbours" in low.as_text("fused")


def test_plan_with_numpy_arguments_lowers_for_cuda():
    """lower(*NumPy arguments, backend="cuda") plans the CUDA backend's steps (CuPy installed:
    cupy.fft)."""
    host = rand(np.float32, 16, 256)
    low = autofuse.jit(lambda a: np.fft.rfft(a * 2)).lower(host, backend="cuda")
    assert [k.strategy for k in low.kernels if k.kind == "fft"] == ["library FFT: cupy.fft"]


# -- the generated host call: library steps written in between the launches (runtime/host.py) --

def _inline(text, *calls):
    """Whether the generated call writes each library call in (`rfft_1(`), launches kernels
    one by one and says why it is no CUDA graph."""
    return text is not None and text.startswith("# kernels launched one by one, not as a CUDA "
                                                "graph") and \
        all(re.search(re.escape(c) + r"\d*\(", text) for c in calls)


@pytest.mark.parametrize("mode", [None, True, False])
@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_generated_call_runs_the_library_inline(library, mode):
    """The fast path is taken (host_source) for every cuda_graph mode, each call's result is new,
    and a second and third call on new arguments match NumPy."""
    jitted = autofuse.jit(np.fft.rfft, cuda_graph=mode)
    results = []
    for _ in range(3):
        host = rand(np.float32, 256, 1024)
        results.append((jitted(on_device(library, host)), np.fft.rfft(host)))
    for got, want in results:
        assert_matches(got, want)
    text = jitted.lower(on_device(library, host)).host_source
    assert "rfft_0(x0, n=1024, " in text and "launch_kernel" not in text, text
    assert mode is False or _inline(text, "rfft_0"), text
    pointer = (lambda a: a.data.ptr) if library == "cupy" else (lambda a: a.data_ptr())
    assert pointer(results[0][0]) != pointer(results[1][0])


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_generated_convolution_between_kernels(library):
    """irfft(rfft(x * w + b) * rfft(k)): three kernels and three library steps in one generated
    call, on a stream of the library's own (not the default one)."""
    x, w, k = rand(np.float32, 64, 1000), rand(np.float32, 1000), rand(np.float32, 1000)

    def convolve(a, weight, kernel):
        y = np.fft.irfft(np.fft.rfft(a * weight + 1) * np.fft.rfft(kernel), 1000)
        return np.tanh(y) * 0.5
    jitted = autofuse.jit(convolve)
    if library == "cupy":
        stream = cupy.cuda.Stream(non_blocking=True)
    else:
        torch = pytest.importorskip("torch")
        stream = torch.cuda.Stream()
    with (stream if library == "cupy" else torch.cuda.stream(stream)):
        for _ in range(3):
            x = rand(np.float32, 64, 1000)
            got = jitted(*[on_device(library, a) for a in (x, w, k)])
        stream.synchronize()
    assert_matches(got, convolve(x, w, k), 1e-4)
    text = jitted.lower(*[on_device(library, a) for a in (x, w, k)]).host_source
    assert _inline(text, "rfft_1", "rfft_2", "irfft_4"), text
    assert text.count("launch_") == 3, text


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_generated_call_with_library_results_among_several(library):
    """Results that are library arrays beside kernels' results, along the first axis (the
    library's result made C-contiguous), and an empty input (zeros, no library call)."""
    def spectra(a):
        spectrum = np.fft.fft(a, axis=0)
        return spectrum, np.abs(spectrum).sum(), np.fft.ifft(spectrum * 2, axis=0)
    host = rand(np.complex64, 512, 96)
    jitted = autofuse.jit(spectra)
    for _ in range(2):
        got = jitted(on_device(library, host))
    for g, w in zip(got, spectra(host)):
        assert_matches(g, np.asarray(w), 1e-4)
    assert _inline(jitted.lower(on_device(library, host)).host_source, "fft_0"), \
        jitted.lower(on_device(library, host)).host_source
    empty = rand(np.float32, 0, 64)
    zeros = autofuse.jit(lambda a: np.fft.rfft(a) * 2)
    for _ in range(2):
        assert_matches(zeros(on_device(library, empty)), np.fft.rfft(empty) * 2)


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_generated_call_writes_an_argument(library):
    """A function that writes its argument with a library result: the generated call returns
    it, the jit copies it in; a chain of calls matches NumPy's chain."""
    def smooth(a):
        a[...] = np.fft.irfft(np.fft.rfft(a) * 0.5, 512)
        return a.sum()
    host = rand(np.float32, 32, 512)
    device = on_device(library, host)
    jitted = autofuse.jit(smooth)
    for _ in range(3):
        want = smooth(host)
        got = jitted(device)
    assert_matches(device, host, 1e-4)
    np.testing.assert_allclose(float(got), want, rtol=1e-3, atol=1e-3)
    assert _inline(jitted.lower(device).host_source, "rfft_0", "irfft_"), \
        jitted.lower(device).host_source


def test_numba_arrays_keep_the_general_path():
    from numba import cuda
    host = rand(np.float32, 64, 1000)
    jitted = autofuse.jit(np.fft.rfft)
    for _ in range(2):
        assert_matches(jitted(cuda.to_device(host)), np.fft.rfft(host))
    assert "rfft_0(" not in (jitted.lower(cuda.to_device(host)).host_source or "")
