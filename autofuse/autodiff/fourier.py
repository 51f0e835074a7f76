"""The vector-Jacobian rule of np.fft's transforms (ir/fourier.py's fft node), by the adjoint of
each: a transform is linear, so the cotangent of its input is the adjoint transform of the
cotangent (autodiff/complexes.py's convention), cropped or zero-padded back to the input's
lengths where n= padded or cropped it.

- fft / ifft (and fftn, ifftn) with norm N: the inverse direction with the dual norm
  (backward <-> forward, ortho itself), since the unnormalized DFT's adjoint is its conjugate.
- rfft: the cotangent's half spectrum zero-padded to the full length, transformed back as an
  ifft would be (dual norm), its real part.
- irfft: the real transform of the cotangent (dual norm), each bin but the first (and the middle
  one of an even length) counted twice: irfft reads those bins as a conjugate pair, and the
  imaginary parts of the two it reads once are ignored.
"""
from __future__ import annotations

import numpy as np

from ..trace.context import current
from ..trace.tracer import Tracer, fresh

DUAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def fft_rule(node, g):
    (x,) = node.inputs
    attrs = node.attrs
    function, axes, lengths = attrs["function"], tuple(attrs["axes"]), tuple(attrs["lengths"])
    norm = DUAL[attrs["norm"]]
    if function in ("fft", "ifft"):
        back = np.fft.ifftn if function == "fft" else np.fft.fftn
        return [_lengths(back(g, s=lengths, axes=axes, norm=norm), x.shape, axes)]
    last, n = axes[-1], lengths[-1]
    if function == "rfft":
        full = _lengths(g, _with(g.shape, last, n), (last,))
        return [_lengths(np.fft.ifftn(full, s=lengths, axes=axes, norm=norm).real, x.shape, axes)]
    # irfft: its last axis's adjoint, then the complex inverse transforms' over the others
    half = np.fft.rfft(g, n=n, axis=last, norm=norm)
    twice = np.full(n // 2 + 1, 2.0)
    twice[0] = 1.0
    if n % 2 == 0:
        twice[-1] = 1.0
    shape = (1,) * last + (n // 2 + 1,) + (1,) * (g.ndim - last - 1)
    weights = fresh(current().constant(twice.reshape(shape).astype(half.dtype)))
    back = half * weights
    if len(axes) > 1:
        back = np.fft.fftn(back, s=lengths[:-1], axes=axes[:-1], norm=norm)
    return [_lengths(back, x.shape, axes)]


def _with(shape, axis: int, length: int) -> tuple:
    return tuple(length if d == axis else s for d, s in enumerate(shape))


def _lengths(value: Tracer, shape, axes) -> Tracer:
    """`value` cropped or zero-padded at the end of each of `axes` to `shape`'s lengths."""
    for axis in axes:
        have, want = value.shape[axis], shape[axis]
        if have > want:
            value = value[(slice(None),) * axis + (slice(0, want),)]
        elif have < want:
            zeros = np.zeros(_with(value.shape, axis, want - have), value.dtype)
            value = np.concatenate([value, zeros], axis=axis)
    return value
