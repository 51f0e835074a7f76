"""np.fft: the complex, real and n-dimensional transforms as fft nodes (ir/fourier.py; planned by
ir/fourier_plan.py: a library step between kernels, or traced kernels of fourier_kernels.py), with
NumPy's lengths (n= crops or pads with zeros), norms, result dtypes and errors; fftshift /
ifftshift as np.roll. fftfreq and rfftfreq take no array, so NumPy computes them as constants."""
from __future__ import annotations

import numpy as np

from ..errors import DTypeError, NumPyValueError, ShapeError, UnsupportedError, where
from .context import current
from .layout import as_tracer, astype, normalize_axis
from .shifting import roll
from .tracer import Tracer, fresh
from . import complexes

_NORMS = (None, "backward", "ortho", "forward")


def _static(value, what: str):
    if isinstance(value, Tracer):
        value._concrete(what)
    return value


def _result_dtype(function, dtype: np.dtype, what: str) -> np.dtype:
    """NumPy's own answer for an input of this dtype, from a two-element probe."""
    try:
        return function(np.ones(2, dtype=dtype)).dtype
    except TypeError:
        raise DTypeError(f"{what}: not supported for arrays of type {dtype}{where()}") from None


def _check_length(n: int, what: str) -> int:
    if n < 1:
        raise NumPyValueError(f"{what}: Invalid number of FFT data points ({n}) specified.{where()}")
    return n


def _norm(norm, what: str) -> str:
    if norm not in _NORMS:
        raise NumPyValueError(f'{what}: Invalid norm value {norm}; should be "backward","ortho" or '
                              f'"forward".{where()}')
    return norm or "backward"


def _transform(x: Tracer, function: str, axes, lengths, norm, what: str) -> Tracer:
    """One fft node (ir/fourier.py) over `axes`; x already of the dtype the node takes."""
    attrs = {"function": function, "axes": tuple(axes), "lengths": tuple(lengths),
             "norm": _norm(norm, what)}
    return fresh(current().emit("fft", [x.node], attrs))


def _working(x: Tracer, function, what: str) -> Tracer:
    """x as the fft node reads it: float32 or float64 (rfft; fft and ifft of real input),
    complex64 or complex128 (complex input; irfft), NumPy's precision for the input's dtype."""
    dtype = _result_dtype(function, x.dtype, what)
    precision = np.dtype(np.float32 if dtype in (np.complex64, np.float32, np.float16)
                         else np.float64)
    if x.dtype.kind == "c" or function is np.fft.irfft:
        precision = np.result_type(precision, np.complex64)
    return astype(x, precision, copy=False)


def _prepare(a, n, axis, what):
    a = as_tracer(a, what)
    if a.ndim == 0:
        raise ShapeError(f"{what}: a 0-d array has no axis to transform{where()}")
    axis = normalize_axis(_static(axis, f"{what}: the axis"), a.ndim, what)
    n = a.shape[axis] if n is None else int(_static(n, f"{what}: n"))
    return a, _check_length(n, what), axis


def _complex(a, n, axis, norm, inverse, what, out):
    if out is not None:
        raise UnsupportedError(f"{what}: out= is not supported{where()}")
    x, n, axis = _prepare(a, n, axis, what)
    function = np.fft.ifft if inverse else np.fft.fft
    return _transform(_working(x, function, what), "ifft" if inverse else "fft", (axis,), (n,),
                      norm, what)


def fft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    return _complex(a, n, axis, norm, False, "np.fft.fft", out)


def ifft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    return _complex(a, n, axis, norm, True, "np.fft.ifft", out)


def rfft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    """The transform of real input keeps its first n // 2 + 1 terms (the rest are their
    conjugates)."""
    what = "np.fft.rfft"
    if out is not None:
        raise UnsupportedError(f"{what}: out= is not supported{where()}")
    x, n, axis = _prepare(a, n, axis, what)
    return _transform(_working(x, np.fft.rfft, what), "rfft", (axis,), (n,), norm, what)


def irfft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    """The real inverse of a Hermitian half (default n = 2 (m - 1)); NumPy ignores the imaginary
    parts of the zero and Nyquist terms."""
    what = "np.fft.irfft"
    if out is not None:
        raise UnsupportedError(f"{what}: out= is not supported{where()}")
    x, _, axis = _prepare(a, None, axis, what)
    n = 2 * (x.shape[axis] - 1) if n is None else int(_static(n, f"{what}: n"))
    real_dtype = _result_dtype(np.fft.irfft, x.dtype, what)
    result = _transform(_working(x, np.fft.irfft, what), "irfft", (axis,),
                        (_check_length(n, what),), norm, what)
    return astype(result, real_dtype, copy=False)


def _swap(norm):
    return {None: "forward", "backward": "forward", "forward": "backward"}.get(norm, norm)


def hfft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    """NumPy's hfft: irfft of the conjugate with the norm's direction swapped."""
    if out is not None:
        raise UnsupportedError(f"np.fft.hfft: out= is not supported{where()}")
    a = as_tracer(a, "np.fft.hfft")
    return irfft(complexes.conjugate(a), n, axis, _swap(norm))


def ihfft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    """NumPy's ihfft: the conjugate of rfft with the norm's direction swapped."""
    return complexes.conjugate(rfft(a, n, axis, _swap(norm), out))


def _axes_and_lengths(a: Tracer, s, axes, what):
    """NumPy's _cook_nd_args: every axis by default; s the lengths along them."""
    s = _static(s, f"{what}: s")
    axes = _static(axes, f"{what}: axes")
    if axes is None:
        axes = tuple(range(-(len(s) if s is not None else a.ndim), 0))
    axes = [normalize_axis(ax, a.ndim, what) for ax in axes]
    if s is None:
        s = [a.shape[ax] for ax in axes]
    elif len(s) != len(axes):
        raise ShapeError(f"{what}: Shape and axes have different lengths.{where()}")
    s = [a.shape[ax] if size in (None, -1) else int(size) for size, ax in zip(s, axes)]
    return axes, s


def _many(a, s, axes, norm, out, function: str, what: str, default_axes=None):
    """One fft node over the axes (NumPy's fftn, ifftn, rfftn, irfftn and the 2-D ones)."""
    if out is not None:
        raise UnsupportedError(f"{what}: out= is not supported{where()}")
    a = as_tracer(a, what)
    given = s
    axes, s = _axes_and_lengths(a, s, axes if axes is not None else default_axes, what)
    if function == "irfft" and (given is None or _static(given, what)[-1] in (None, -1)):
        s[-1] = 2 * (a.shape[axes[-1]] - 1)
    if not axes:
        return a
    for size in s:
        _check_length(size, what)
    calls = {"fft": np.fft.fft, "ifft": np.fft.ifft, "rfft": np.fft.rfft, "irfft": np.fft.irfft}
    x = _working(a, calls[function], what)
    result = _transform(x, function, axes, s, norm, what)
    if function == "irfft":
        return astype(result, _result_dtype(np.fft.irfft, a.dtype, what), copy=False)
    return result


def fftn(a, s=None, axes=None, norm=None, out=None) -> Tracer:
    return _many(a, s, axes, norm, out, "fft", "np.fft.fftn")


def ifftn(a, s=None, axes=None, norm=None, out=None) -> Tracer:
    return _many(a, s, axes, norm, out, "ifft", "np.fft.ifftn")


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None) -> Tracer:
    return _many(a, s, axes, norm, out, "fft", "np.fft.fft2")


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None) -> Tracer:
    return _many(a, s, axes, norm, out, "ifft", "np.fft.ifft2")


def rfftn(a, s=None, axes=None, norm=None, out=None) -> Tracer:
    """rfft along the last axis, then the complex transform along the others."""
    return _many(a, s, axes, norm, out, "rfft", "np.fft.rfftn")


def irfftn(a, s=None, axes=None, norm=None, out=None) -> Tracer:
    """The complex inverse along every axis but the last, then irfft along the last (whose
    default length is 2 * (m - 1), as irfft's)."""
    return _many(a, s, axes, norm, out, "irfft", "np.fft.irfftn")


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None) -> Tracer:
    return rfftn(a, s, axes, norm, out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None) -> Tracer:
    return irfftn(a, s, axes, norm, out)


def _shift(x, axes, sign: int, what: str) -> Tracer:
    x = as_tracer(x, what)
    axes = _static(axes, f"{what}: axes")
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = (int(axes),)
    shifts = [sign * (x.shape[normalize_axis(ax, x.ndim, what)] // 2) for ax in axes]
    return roll(x, shifts, tuple(axes)) if axes else x


def fftshift(x, axes=None) -> Tracer:
    """The zero frequency moved to the middle: a roll by n // 2 along each axis."""
    return _shift(x, axes, 1, "np.fft.fftshift")


def ifftshift(x, axes=None) -> Tracer:
    return _shift(x, axes, -1, "np.fft.ifftshift")


FUNCTIONS = {
    np.fft.fft: fft, np.fft.ifft: ifft, np.fft.rfft: rfft, np.fft.irfft: irfft,
    np.fft.hfft: hfft, np.fft.ihfft: ihfft,
    np.fft.fft2: fft2, np.fft.ifft2: ifft2, np.fft.fftn: fftn, np.fft.ifftn: ifftn,
    np.fft.rfft2: rfft2, np.fft.irfft2: irfft2, np.fft.rfftn: rfftn, np.fft.irfftn: irfftn,
    np.fft.fftshift: fftshift, np.fft.ifftshift: ifftshift,
}
