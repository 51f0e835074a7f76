"""Arguments that speak only DLPack (autofuse/dlpack.py), on the CPU: read without a copy,
results handed back in the caller's kind through its array-API namespace, in-place updates
written to the caller's memory, errors naming the call and the user's line. The CUDA case runs in
tests/test_cuda_gpu.py."""
import numpy as np
import pytest

import autofuse
from autofuse import dlpack


class Foreign:
    """An array that autofuse can read only through DLPack (no NumPy protocols, no CUDA array
    interface), over NumPy memory."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class Namespace:
    """A stand-in array-API namespace: from_dlpack makes the library's own arrays."""

    @staticmethod
    def from_dlpack(value):
        return Library(np.from_dlpack(value))


class Library(Foreign):
    """A foreign array whose library has an array-API namespace."""

    def __array_namespace__(self, api_version=None):
        return Namespace


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def test_results_come_back_in_the_callers_kind_without_copies():
    fn = lambda x, y: (np.tanh(x) * y + 1, (x * y).sum(axis=0))
    x, y = rand(6, 5), rand(5, seed=1)
    f = autofuse.jit(fn)
    first, second = f(Library(x), Library(y))
    expected = fn(x, y)
    assert type(first) is Library and type(second) is Library
    np.testing.assert_allclose(first.array, expected[0], rtol=1e-12)
    np.testing.assert_allclose(second.array, expected[1], rtol=1e-12)
    again = f(Library(rand(6, 5, seed=2)), Library(y))          # a cache hit: same signature
    np.testing.assert_allclose(again[0].array, fn(rand(6, 5, seed=2), y)[0], rtol=1e-12)
    assert f.cache_info().traces == 1 and f.cache_info().hits == 1


def test_without_a_namespace_results_are_numpy_arrays():
    x = rand(4, 3)
    result = autofuse.jit(lambda a: a.T @ a)(Foreign(x))
    assert type(result) is np.ndarray
    np.testing.assert_allclose(result, x.T @ x, rtol=1e-12)


def test_an_argument_returned_unchanged_is_the_callers_object():
    a, b = Library(rand(3)), Foreign(rand(3, seed=1))
    same, other, total = autofuse.jit(lambda x, y: (x, y, (x + y).sum()))(a, b)
    assert same is a and other is b
    assert total == pytest.approx((a.array + b.array).sum(), rel=1e-12)


def test_an_in_place_update_writes_the_callers_memory():
    def step(u, k):
        u[1:-1] = 0.5 * (u[2:] + u[:-2]) * k
        return u.sum()
    host = rand(50)
    expected = host.copy()
    total = step(expected, 0.9)
    argument = Library(host.copy())
    got = autofuse.jit(step)(argument, 0.9)
    np.testing.assert_allclose(argument.array, expected, rtol=1e-12)
    assert float(got) == pytest.approx(total, rel=1e-12)


def test_nested_and_keyword_arguments_and_mixed_kinds():
    def fn(pair, scale=1.0, *, extra):
        return pair[0] * scale + pair[1] - extra["bias"]
    x, y, bias = rand(4, 4), rand(4, 4, seed=1), rand(4, seed=2)
    got = autofuse.jit(fn)((Library(x), y), 2.0, extra={"bias": Foreign(bias)})
    assert type(got) is Library
    np.testing.assert_allclose(got.array, fn((x, y), 2.0, extra={"bias": bias}), rtol=1e-12)


def test_lower_reads_foreign_arguments_too():
    lowered = autofuse.jit(lambda x: np.exp(x) + 1).lower(Foreign(rand(8)))
    assert "exp" in lowered.as_text("traced")


class Device(Foreign):
    def __init__(self, array, device):
        super().__init__(array)
        self.device = device

    def __dlpack_device__(self):
        return self.device


def test_an_unknown_device_is_an_argument_error_naming_the_call_and_line():
    f = autofuse.jit(lambda x: x + 1)
    with pytest.raises(autofuse.ArgumentError,
                       match=r"(?s)<lambda>\(\) argument 0: a Device on DLPack device type 14 "
                             r".*test_dlpack\.py:\d+"):
        f(Device(rand(3), (14, 0)))


def test_cuda_memory_without_cupy_or_torch_is_an_argument_error(monkeypatch):
    monkeypatch.setattr(dlpack, "_cuda_importer", lambda: None)
    with pytest.raises(autofuse.ArgumentError,
                       match=r"(?s)a Device in CUDA memory .* neither is installed.*test_dlpack"):
        autofuse.jit(lambda x: x + 1)(Device(rand(3), (dlpack.CUDA, 0)))


def test_a_failing_producer_is_an_argument_error():
    class Broken(Foreign):
        def __dlpack__(self, **kwargs):
            raise BufferError("cannot export")
    with pytest.raises(autofuse.ArgumentError,
                       match=r"(?s)reading a Broken through DLPack failed \(BufferError: cannot "
                             r"export\).*test_dlpack"):
        autofuse.jit(lambda x: x + 1)(Broken(rand(3)))


def test_arrays_numpy_reads_itself_are_not_foreign():
    assert not dlpack.foreign(np.ones(3)) and not dlpack.foreign(1.0)
    assert dlpack.foreign(Foreign(np.ones(3)))


def test_torch_cpu_tensors_come_back_as_tensors():
    torch = pytest.importorskip("torch")
    x = rand(5, 3)
    result = autofuse.jit(lambda a: np.maximum(a, 0).sum(axis=1))(torch.from_numpy(x))
    assert isinstance(result, torch.Tensor)
    np.testing.assert_allclose(result.numpy(), np.maximum(x, 0).sum(axis=1), rtol=1e-12)
