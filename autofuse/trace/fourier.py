"""np.fft: the complex, real and n-dimensional transforms as 1-D transforms along axes
(trace/transforms.py unrolls each), with NumPy's lengths (n= crops or pads with zeros), norms,
result dtypes and errors; fftshift / ifftshift as np.roll. fftfreq and rfftfreq take no array,
so NumPy computes them as constants."""
from __future__ import annotations

import math

import numpy as np

from ..errors import DTypeError, NumPyValueError, ShapeError, UnsupportedError, where
from .indexing import getitem
from .layout import as_tracer, astype, concatenate, moveaxis, normalize_axis
from .shifting import roll
from .tracer import Tracer
from . import complexes, creation, transforms, ufuncs

_NORMS = (None, "backward", "ortho", "forward")


def _static(value, what: str):
    if isinstance(value, Tracer):
        value._concrete(what)
    return value


def _scale(norm, n: int, inverse: bool, what: str) -> float:
    """The factor NumPy applies after the unnormalized transform of length n."""
    if norm not in _NORMS:
        raise NumPyValueError(f'{what}: Invalid norm value {norm}; should be "backward","ortho" or '
                              f'"forward".{where()}')
    if norm == "ortho":
        return 1 / math.sqrt(n)
    divides = "forward" if not inverse else "backward"
    return 1 / n if (norm or "backward") == divides else 1.0


def _result_dtype(function, dtype: np.dtype, what: str) -> np.dtype:
    """NumPy's own answer for an input of this dtype, from a two-element probe."""
    try:
        return function(np.ones(2, dtype=dtype)).dtype
    except TypeError:
        raise DTypeError(f"{what}: not supported for arrays of type {dtype}{where()}") from None


def _fit(x: Tracer, n: int, what: str) -> Tracer:
    """x's last axis cropped or padded with zeros to n."""
    size = x.shape[-1]
    if n < 1:
        raise NumPyValueError(f"{what}: Invalid number of FFT data points ({n}) specified.{where()}")
    if n <= size:
        return getitem(x, (Ellipsis, slice(0, n))) if n < size else x
    zeros = creation.zeros(x.shape[:-1] + (n - size,), dtype=x.dtype)
    return concatenate([x, zeros], -1, what)


def _prepare(a, n, axis, what):
    a = as_tracer(a, what)
    if a.ndim == 0:
        raise ShapeError(f"{what}: a 0-d array has no axis to transform{where()}")
    axis = normalize_axis(_static(axis, f"{what}: the axis"), a.ndim, what)
    n = a.shape[axis] if n is None else int(_static(n, f"{what}: n"))
    return moveaxis(a, axis, -1), n, axis


def _complex(a, n, axis, norm, inverse, what, out):
    if out is not None:
        raise UnsupportedError(f"{what}: out= is not supported{where()}")
    x, n, axis = _prepare(a, n, axis, what)
    dtype = _result_dtype(np.fft.fft, x.dtype, what)
    z = transforms.dft(_fit(astype(x, dtype, copy=False), n, what), inverse)
    scale = _scale(norm, n, inverse, what)
    if scale != 1.0:
        z = ufuncs.apply("multiply", z, np.asarray(scale, dtype=dtype.type(0).real.dtype))
    return moveaxis(z, -1, axis)


def fft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    return _complex(a, n, axis, norm, False, "np.fft.fft", out)


def ifft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    return _complex(a, n, axis, norm, True, "np.fft.ifft", out)


def rfft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    """The transform of real input keeps its first n // 2 + 1 terms (the rest are their
    conjugates)."""
    what = "np.fft.rfft"
    x = as_tracer(a, what)
    _result_dtype(np.fft.rfft, x.dtype, what)
    z = _complex(x, n, axis, norm, False, what, out)
    axis = normalize_axis(axis, z.ndim, what)
    half = [slice(None)] * z.ndim
    half[axis] = slice(0, z.shape[axis] // 2 + 1)
    return getitem(z, tuple(half))


def irfft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    """The real inverse of a Hermitian half: the half fitted to n // 2 + 1 terms, extended by its
    conjugates in reverse, transformed back; the real part drops the imaginary parts of the
    zero and Nyquist terms, which NumPy ignores too."""
    what = "np.fft.irfft"
    if out is not None:
        raise UnsupportedError(f"{what}: out= is not supported{where()}")
    x, _, axis = _prepare(a, None, axis, what)
    n = 2 * (x.shape[-1] - 1) if n is None else int(_static(n, f"{what}: n"))
    if n < 1:
        raise NumPyValueError(f"{what}: Invalid number of FFT data points ({n}) specified.{where()}")
    real_dtype = _result_dtype(np.fft.irfft, x.dtype, what)
    dtype = _result_dtype(np.fft.ifft, x.dtype, what)
    half = _fit(astype(x, dtype, copy=False), n // 2 + 1, what)
    mirrored = getitem(half, (Ellipsis, slice(n - n // 2 - 1, 0, -1)))
    full = concatenate([half, complexes.conjugate(mirrored)], -1, what)
    z = transforms.dft(full, True)
    result = complexes.real(z)
    scale = _scale(norm, n, True, what)
    if scale != 1.0:
        result = ufuncs.apply("multiply", result, np.asarray(scale, dtype=result.dtype))
    return moveaxis(astype(result, real_dtype, copy=False), -1, axis)


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


def _many(a, s, axes, norm, out, inverse, what, default_axes=None):
    if out is not None:
        raise UnsupportedError(f"{what}: out= is not supported{where()}")
    a = as_tracer(a, what)
    axes, s = _axes_and_lengths(a, s, axes if axes is not None else default_axes, what)
    one = ifft if inverse else fft
    for ax, size in reversed(list(zip(axes, s))):
        a = one(a, size, ax, norm)
    return a


def fftn(a, s=None, axes=None, norm=None, out=None) -> Tracer:
    return _many(a, s, axes, norm, out, False, "np.fft.fftn")


def ifftn(a, s=None, axes=None, norm=None, out=None) -> Tracer:
    return _many(a, s, axes, norm, out, True, "np.fft.ifftn")


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None) -> Tracer:
    return _many(a, s, axes, norm, out, False, "np.fft.fft2")


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None) -> Tracer:
    return _many(a, s, axes, norm, out, True, "np.fft.ifft2")


def rfftn(a, s=None, axes=None, norm=None, out=None) -> Tracer:
    """rfft along the last axis, then the complex transform along the others."""
    what = "np.fft.rfftn"
    if out is not None:
        raise UnsupportedError(f"{what}: out= is not supported{where()}")
    a = as_tracer(a, what)
    axes, s = _axes_and_lengths(a, s, axes, what)
    a = rfft(a, s[-1], axes[-1], norm)
    for ax, size in reversed(list(zip(axes[:-1], s[:-1]))):
        a = fft(a, size, ax, norm)
    return a


def irfftn(a, s=None, axes=None, norm=None, out=None) -> Tracer:
    """The complex inverse along every axis but the last, then irfft along the last (whose
    default length is 2 * (m - 1), as irfft's)."""
    what = "np.fft.irfftn"
    if out is not None:
        raise UnsupportedError(f"{what}: out= is not supported{where()}")
    a = as_tracer(a, what)
    given = s
    axes, s = _axes_and_lengths(a, s, axes, what)
    if given is None or _static(given, what)[-1] in (None, -1):
        s[-1] = 2 * (a.shape[axes[-1]] - 1)
    for ax, size in reversed(list(zip(axes[:-1], s[:-1]))):
        a = ifft(a, size, ax, norm)
    return irfft(a, s[-1], axes[-1], norm)


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
