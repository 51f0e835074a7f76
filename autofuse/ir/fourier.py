"""The fft op: a discrete Fourier transform over some axes of one array, as NumPy's np.fft computes
it (attrs: `function` fft, ifft, rfft or irfft; `axes`; `lengths`, NumPy's n or s; `norm`), with
its shape rule and its reference value (NumPy's own pocketfft). The plan of each fft node (a
library step or traced kernels) is fourier_plan.py's.

    >>> import numpy as np
    >>> evaluate(np.ones(4), {"function": "rfft", "axes": (0,), "lengths": (4,), "norm": "backward"})
    array([4.+0.j, 0.+0.j, 0.+0.j])
"""
from __future__ import annotations


import numpy as np

from ..errors import ShapeError

FUNCTIONS = ("fft", "ifft", "rfft", "irfft")
# The NumPy function of each node, by the number of axes it transforms (one, or several)
NUMPY_CALLS = {"fft": ("fft", "fftn"), "ifft": ("ifft", "ifftn"), "rfft": ("rfft", "rfftn"),
               "irfft": ("irfft", "irfftn")}
# The input dtypes a node takes (the tracer casts to them): complex for the complex and the real
# inverse transforms, real for rfft; fft and ifft take real input too (the library converts it
# as it reads it, where a cast of ours would be a pass over memory).
INPUTS = {"fft": "fc", "ifft": "fc", "rfft": "f", "irfft": "c"}


def result_shape(shape: tuple, attrs) -> tuple:
    """The transform's shape: each axis at its length; rfft's last axis keeps n // 2 + 1 terms."""
    shape = list(shape)
    for axis, length in zip(attrs["axes"], attrs["lengths"]):
        shape[axis] = length
    if attrs["function"] == "rfft":
        shape[attrs["axes"][-1]] = attrs["lengths"][-1] // 2 + 1
    return tuple(shape)


def result_dtype(dtype: np.dtype, function: str) -> np.dtype:
    """complex of the input's precision (complex64 from float32 or complex64); irfft real."""
    single = np.dtype(dtype) in (np.float32, np.complex64)
    if function == "irfft":
        return np.dtype(np.float32 if single else np.float64)
    return np.dtype(np.complex64 if single else np.complex128)


def infer(inputs: tuple, attrs) -> tuple[tuple, np.dtype]:
    (source,) = inputs
    function, axes, lengths = attrs["function"], attrs["axes"], attrs["lengths"]
    if function not in FUNCTIONS or source.dtype.kind not in INPUTS[function] or \
            source.dtype.itemsize not in (4, 8, 16):
        raise ShapeError(f"fft {function} of {source.dtype} (the tracer casts to float32, "
                         f"float64, complex64 or complex128)")
    if not axes or len(axes) != len(lengths) or any(not 0 <= a < source.ndim for a in axes) \
            or any(n < 1 for n in lengths):
        raise ShapeError(f"fft over axes {axes} with lengths {lengths} of {source.shape}")
    return result_shape(source.shape, attrs), result_dtype(source.dtype, function)


def numpy_call(attrs) -> tuple[str, dict]:
    """(np.fft's function name, its keyword arguments) that computes the node."""
    one, many = NUMPY_CALLS[attrs["function"]]
    axes, lengths = tuple(attrs["axes"]), tuple(attrs["lengths"])
    if len(axes) == 1:
        return one, {"n": lengths[0], "axis": axes[0], "norm": attrs["norm"]}
    return many, {"s": lengths, "axes": axes, "norm": attrs["norm"]}


def evaluate(x: np.ndarray, attrs) -> np.ndarray:
    """The node's value: NumPy's own transform."""
    name, keywords = numpy_call(attrs)
    return getattr(np.fft, name)(x, **keywords)
