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
from . import creation, reductions, ufuncs


@dataclass(frozen=True)
class Plan:
    """How a length is transformed. Measured on the CPU backend (complex128, 65536 / n rows of n,
    2 shared cores): the DFT matrix product beats Bluestein warm up to n = 30 (0.6 ms against
    10.8 ms at n = 12, 1.1 against 2.5 at 30) and loses from n = 48 on (7.5 against 5.9 ms; 11.3
    against 3.5 at 60); for powers of two the radix stages win warm from n = 4 on (0.14 against
    0.24 ms) and by 14x at n = 64, though they compile slower (1 to 4.5 s against 0.3 to 1.4 s).
    Radix 4 beat radix 2 and 8 (256 x 1024: 12.5 ms, 23.4 ms, 15.8 ms; 6, 11 and 8 kernels)."""
    # Lengths that are not powers of two and at most this go through the DFT matrix.
    max_matrix: int = 32
    # Powers of two below this go through the DFT matrix (a stage costs a pass over the data).
    min_radix2: int = 2
    # The most parts one radix stage joins (2, 4 or 8): fewer passes over the data, more
    # arithmetic and reads per element.
    radix: int = 4
    # The DFT matrix as a sum of broadcast products (a reduction, which its elementwise
    # neighbours join) rather than a matrix product (complex products stay BLAS calls, whose
    # operands are stored): for lengths short enough to join their neighbours (ir/fourier_plan.py).
    matrix_as_sum: bool = False


DEFAULT = Plan()


def power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def dft(z: Tracer, inverse: bool, plan: Plan = DEFAULT, terms: int | None = None) -> Tracer:
    """sum_j z[..., j] * exp(-+2 pi i j k / n) for each k: NumPy's unnormalized forward transform,
    or (inverse) the backward transform without its 1 / n; `terms`: only the first so many k
    (rfft's half: the DFT matrix computes no others, the other routes slice them)."""
    n = z.shape[-1]
    terms = n if terms is None else terms
    if n == 1:
        return z
    if power_of_two(n) and n >= plan.min_radix2:
        full = _radix2(z, inverse, plan)
    elif not power_of_two(n) and n > plan.max_matrix:
        full = _bluestein(z, inverse, plan)
    else:
        return _matrix(z, inverse, plan.matrix_as_sum, terms)
    return full if terms == n else getitem(full, (Ellipsis, slice(0, terms)))


def _constant(values: np.ndarray, dtype) -> Tracer:
    return as_tracer(values.astype(dtype), "np.fft")


def _sign(inverse: bool) -> float:
    return 1.0 if inverse else -1.0


def _matrix(z: Tracer, inverse: bool, as_sum: bool = False, terms: int | None = None) -> Tracer:
    """z @ W with W[j, k] = exp(-+2 pi i jk / n) for the first `terms` k; jk is reduced mod n
    before the exponential so the angles stay below 2 pi (exact in float64 for every length
    traced here). As a sum: sum_j z[..., None, j] * W.T[k, j]."""
    n = z.shape[-1]
    j = np.arange(n)
    angles = 2 * np.pi * (np.outer(j, j[:terms]) % n) / n
    matrix = np.exp(1j * _sign(inverse) * angles)
    if not as_sum:
        return matmul(z, _constant(matrix, z.dtype), "np.fft")
    matrix = _constant(np.ascontiguousarray(matrix.T), z.dtype)
    rows = reshape(z, z.shape[:-1] + (1, n), "np.fft")
    return reductions.reduce("sum", ufuncs.apply("multiply", rows, matrix), axis=-1)


def _radix2(z: Tracer, inverse: bool, plan: Plan = DEFAULT) -> Tracer:
    """Stockham's autosort form: the data as (..., m, L), row s holding the transform Y_s of the
    subsequence z[s::m]. With radix r, rows s + q m/r (q < r) are the interleaved parts of
    z[s::m/r], so one stage joins them into (..., m/r, rL): piece j (of r, each of length L) is
    sum_q w_r^(qj) (w_rL^(qk) Y_q[k]). Radix 2 first while log2(n) is not a multiple of the
    plan's radix; every stage is contiguous slices, products by constants and one join."""
    n = z.shape[-1]
    batch = z.shape[:-1]
    data = reshape(z, batch + (n, 1), "np.fft")
    length = 1
    while length < n:
        radix = plan.radix
        while (n // length) % radix:
            radix //= 2
        data = _stage(data, length, radix, inverse, z.dtype)
        length *= radix
    return reshape(data, batch + (n,), "np.fft")


def _stage(data: Tracer, length: int, radix: int, inverse: bool, dtype) -> Tracer:
    rows = data.shape[-2] // radix
    lead = (slice(None),) * (data.ndim - 2)
    k = np.arange(length)
    parts = []
    for q in range(radix):
        part = getitem(data, lead + (slice(q * rows, (q + 1) * rows),))
        if q:
            twiddle = np.exp(1j * _sign(inverse) * 2 * np.pi * q * k / (radix * length))
            part = ufuncs.apply("multiply", part, _constant(twiddle, dtype))
        parts.append(part)
    pieces = []
    for j in range(radix):
        piece = parts[0]
        for q in range(1, radix):
            root = _root(q * j % radix, radix, inverse)
            term = parts[q] if root is None else ufuncs.apply("multiply", parts[q], root)
            piece = ufuncs.apply("add", piece, term)
        pieces.append(piece)
    return concatenate(pieces, -1, "np.fft")


def _root(power: int, radix: int, inverse: bool):
    """w_radix^power as a Python complex (exact for the quarter turns); None for 1."""
    if power == 0:
        return None
    quarter = {0: 1, 1: 1j, 2: -1, 3: -1j}
    turns = power * 4 / radix
    if turns == int(turns):
        return complex(quarter[int(turns) * (1 if inverse else -1) % 4])
    return complex(np.exp(1j * _sign(inverse) * 2 * np.pi * power / radix))


def _bluestein(z: Tracer, inverse: bool, plan: Plan) -> Tracer:
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
    product = ufuncs.apply("multiply", _radix2(padded, False, plan), _constant(spectrum, z.dtype))
    convolved = _radix2(product, True, plan)
    head = getitem(convolved, (Ellipsis, slice(0, n)))
    return ufuncs.apply("multiply", head, _constant(chirp, z.dtype))
