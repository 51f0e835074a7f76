"""Array interop: the array libraries a call can come from (NumPy, CuPy, torch, numba, anything with
__cuda_array_interface__), how to read their pointers, allocate like them and find their stream;
and C-contiguous strides. The front end and the backends both import it; it imports neither.

The array libraries a CUDA call can come from (CuPy, torch, numba, anything with
__cuda_array_interface__), and how to read their pointers, allocate like them and find their stream.

Outputs are allocated from the caller's library (its memory pool) and returned as its arrays;
work is ordered on the caller's current stream.

Each library also names two functions the generated host call (runtime/host.py) calls directly
(CuPy's run no Python frame at all): `allocate(shape, dtype)`, what `empty` does, and
`current_stream()`, the library's own current-stream object (CuPy's Stream; for the others, the
raw handle that `stream()` returns).
"""
from __future__ import annotations

import functools
import sys

import numpy as np


def contiguous(shape, empty_as_one: bool = False) -> tuple:
    """The element strides of a C-contiguous array of `shape`. An array with a size-0 axis has
    no elements, so any strides serve; by default the axes before it get stride 0 (kernels leave
    such terms out of their index math), with `empty_as_one` the size-0 axis counts as 1 (the
    tracer's shadow arrays, whose views NumPy decides)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(int(size), 1) if empty_as_one else size
    return tuple(reversed(strides))

def is_device_array(value) -> bool:
    return hasattr(value, "__cuda_array_interface__") and not isinstance(value, np.ndarray)


def interface(value) -> tuple[tuple, np.dtype, tuple | None, int]:
    """(shape, dtype, element strides or None when C-contiguous, data pointer) of a device array."""
    cai = value.__cuda_array_interface__
    shape = tuple(cai["shape"])
    dtype = np.dtype(cai["typestr"])
    strides = cai.get("strides")
    if strides is not None:
        strides = tuple(s // dtype.itemsize for s in strides)
        if strides == contiguous(shape) or 0 in shape:
            strides = None
    return shape, dtype, strides, cai["data"][0]


class CupyLibrary:
    name = "cupy"

    def __init__(self):
        import cupy
        self.cupy = cupy
        # NOTE: cupy.empty(shape, dtype) is a Python function that returns cupy.ndarray(shape,
        # dtype); get_current_stream() returns a Stream whose `ptr` is the handle.
        self.allocate = cupy.ndarray
        self.current_stream = cupy.cuda.get_current_stream

    def empty(self, shape, dtype):
        return self.cupy.empty(shape, dtype)

    def zeros(self, shape, dtype):
        return self.cupy.zeros(shape, dtype)

    def pointer(self, array) -> int:
        return array.data.ptr

    def stream(self) -> int:
        return self.current_stream().ptr

    def from_host(self, array):
        return self.cupy.asarray(array)

    def to_host(self, array):
        return self.cupy.asnumpy(array)

    def copy_into(self, target, source) -> None:
        target[...] = source

    def wrap(self, array):
        return array


class TorchLibrary:
    name = "torch"

    def __init__(self):
        import torch
        self.torch = torch
        self.device = torch.cuda.current_device()
        self.current_stream = functools.partial(torch._C._cuda_getCurrentRawStream, self.device)

    def empty(self, shape, dtype):
        return self.torch.empty(tuple(shape), dtype=_torch_dtype(self.torch, dtype), device="cuda")

    allocate = empty

    def zeros(self, shape, dtype):
        return self.torch.zeros(tuple(shape), dtype=_torch_dtype(self.torch, dtype), device="cuda")

    def pointer(self, array) -> int:
        return array.data_ptr()

    def stream(self) -> int:
        return self.current_stream()

    def from_host(self, array):
        return self.torch.from_numpy(np.ascontiguousarray(array)).to("cuda")

    def to_host(self, array):
        return array.cpu().numpy()

    def copy_into(self, target, source) -> None:
        target.copy_(source)

    def wrap(self, array):
        return array


class NumbaLibrary:
    name = "numba"

    def __init__(self):
        from numba import cuda
        self.cuda = cuda

    def empty(self, shape, dtype):
        return self.cuda.device_array(shape, dtype)

    allocate = empty

    def zeros(self, shape, dtype):
        array = self.cuda.device_array(shape, dtype)
        if array.size:
            array.copy_to_device(np.zeros(shape, dtype))
        return array

    def pointer(self, array) -> int:
        return array.__cuda_array_interface__["data"][0]

    def stream(self) -> int:
        return 0

    current_stream = stream

    def from_host(self, array):
        return self.cuda.to_device(np.ascontiguousarray(array))

    def to_host(self, array):
        return array.copy_to_host()

    def copy_into(self, target, source) -> None:
        target.copy_to_device(source)

    def wrap(self, array):
        return self.cuda.as_cuda_array(array) if not hasattr(array, "copy_to_host") else array


def _torch_dtype(torch, dtype):
    return {np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64,
            np.dtype(np.float16): torch.float16, np.dtype(np.int32): torch.int32,
            np.dtype(np.int64): torch.int64, np.dtype(np.bool_): torch.bool,
            np.dtype(np.uint8): torch.uint8, np.dtype(np.int8): torch.int8,
            np.dtype(np.int16): torch.int16, np.dtype(np.complex64): torch.complex64,
            np.dtype(np.complex128): torch.complex128}[np.dtype(dtype)]


def library_for(leaves):
    """The library of the first device array among `leaves`; for host-only calls, CuPy if it is
    installed, else numba's device arrays (inputs are copied in, results copied back)."""
    for leaf in leaves:
        module = type(leaf).__module__.split(".")[0]
        if module == "cupy":
            return CupyLibrary()
        if module == "torch" and is_device_array(leaf):
            return TorchLibrary()
        if is_device_array(leaf):
            return NumbaLibrary()
    if "cupy" in sys.modules or _importable("cupy"):
        return CupyLibrary()
    return NumbaLibrary()


def _importable(name: str) -> bool:
    try:
        __import__(name)
        return True
    except Exception:
        return False
