"""The discrete Fourier transform of a traced complex array along its last axis, unnormalized,
unrolled at trace time into elementwise complex ops on slices and joins, so its stages fuse:
a radix-2 Stockham FFT for power-of-two lengths, a DFT matrix product for short other lengths,
Bluestein's chirp-z convolution (two power-of-two FFTs) for long other lengths.

Every constant (twiddles, chirps, the DFT matrix, the chirp filter's spectrum) is computed in
float64 with NumPy while tracing and cast once to the working dtype.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .indexing import getitem
from .layout import as_tracer, concatenate, reshape
from .matmul import matmul
from .tracer import Tracer
from . import creation, ufuncs


@dataclass(frozen=True)
class Plan:
    """How a length is transformed. Measured on the CPU backend (2 cores, complex128, rows of
    4096 / n transforms): a DFT matrix product beats Bluestein up to n = 64 at first call and
    warm (Bluestein needs two power-of-two FFTs of length >= 2n - 1, 256 for n = 100), while
    for powers of two the radix-2 stages win from n = 8 on."""
    # Lengths that are not powers of two and at most this go through the DFT matrix.
    max_matrix: int = 64
    # Powers of two below this go through the DFT matrix (a stage costs a pass over the data).
    min_radix2: int = 8


DEFAULT = Plan()


def power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def dft(z: Tracer, inverse: bool, plan: Plan = DEFAULT) -> Tracer:
    """sum_j z[..., j] * exp(-+2 pi i j k / n) for each k: NumPy's unnormalized forward transform,
    or (inverse) the backward transform without its 1 / n."""
    n = z.shape[-1]
    if n == 1:
        return z
    if power_of_two(n) and n >= plan.min_radix2:
        return _radix2(z, inverse)
    if not power_of_two(n) and n > plan.max_matrix:
        return _bluestein(z, inverse)
    return _matrix(z, inverse)


def _constant(values: np.ndarray, dtype) -> Tracer:
    return as_tracer(values.astype(dtype), "np.fft")


def _sign(inverse: bool) -> float:
    return 1.0 if inverse else -1.0


def _matrix(z: Tracer, inverse: bool) -> Tracer:
    """z @ W with W[j, k] = exp(-+2 pi i jk / n); jk is reduced mod n before the exponential so
    the angles stay below 2 pi (exact in float64 for every length traced here)."""
    n = z.shape[-1]
    j = np.arange(n)
    angles = 2 * np.pi * (np.outer(j, j) % n) / n
    return matmul(z, _constant(np.exp(1j * _sign(inverse) * angles), z.dtype), "np.fft")


def _radix2(z: Tracer, inverse: bool) -> Tracer:
    """Stockham's autosort form: the data as (..., m, L), row r holding the transform of the
    subsequence z[r::m]; rows r and r + m/2 are the even and odd halves of z[r::m/2], so one
    stage joins them with the butterflies (E + tO, E - tO) into (..., m/2, 2L). log2(n) stages
    of contiguous slices, one product by a constant and a join, ending in (..., 1, n)."""
    n = z.shape[-1]
    batch = z.shape[:-1]
    data = reshape(z, batch + (n, 1), "np.fft")
    length = 1
    while length < n:
        rows = n // length
        lead = (slice(None),) * len(batch)
        even = getitem(data, lead + (slice(0, rows // 2),))
        odd = getitem(data, lead + (slice(rows // 2, rows),))
        twiddle = np.exp(1j * _sign(inverse) * np.pi * np.arange(length) / length)
        odd = ufuncs.apply("multiply", odd, _constant(twiddle, z.dtype))
        data = concatenate([ufuncs.apply("add", even, odd), ufuncs.apply("subtract", even, odd)],
                           -1, "np.fft")
        length *= 2
    return reshape(data, batch + (n,), "np.fft")


def _bluestein(z: Tracer, inverse: bool) -> Tracer:
    """jk = (j^2 + k^2 - (k - j)^2) / 2 turns the transform into a convolution with a chirp:
    X[k] = w[k] * sum_j (z[j] w[j]) conj(w)[k - j], w[j] = exp(-+i pi j^2 / n), done as a cyclic
    convolution of length M >= 2n - 1 (a power of two) through two radix-2 FFTs; the filter's
    spectrum (with the inverse's 1 / M) is a constant."""
    n = z.shape[-1]
    size = 1 << (2 * n - 2).bit_length()
    j = np.arange(n)
    chirp = np.exp(1j * _sign(inverse) * np.pi * ((j * j) % (2 * n)) / n)
    kernel = np.zeros(size, dtype=np.complex128)
    kernel[:n] = np.conj(chirp)
    kernel[size - n + 1:] = np.conj(chirp[1:])[::-1]
    spectrum = np.fft.fft(kernel) / size
    weighted = ufuncs.apply("multiply", z, _constant(chirp, z.dtype))
    padding = creation.zeros(z.shape[:-1] + (size - n,), dtype=z.dtype)
    padded = concatenate([weighted, padding], -1, "np.fft")
    product = ufuncs.apply("multiply", _radix2(padded, False), _constant(spectrum, z.dtype))
    convolved = _radix2(product, True)
    head = getitem(convolved, (Ellipsis, slice(0, n)))
    return ufuncs.apply("multiply", head, _constant(chirp, z.dtype))
