"""np.tile and np.repeat: copies of an array as broadcasts folded into one axis by reshape."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedError, where
from .layout import as_tracer, broadcast_to, normalize_axis, ravel, reshape
from .selection import take
from .tracer import Tracer, fresh


def _counts(value, what: str):
    if isinstance(value, Tracer):
        value._concrete(what)
    return value


def tile(A, reps) -> Tracer:
    what = "np.tile"
    A = as_tracer(A, what)
    reps = _counts(reps, f"{what}: reps")
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    reps = tuple(int(_counts(r, f"{what}: reps")) for r in reps)
    if any(r < 0 for r in reps):
        raise ValueError(f"{what}: negative dimensions are not allowed (reps {reps}){where()}")
    ndim = max(len(reps), A.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - A.ndim) + A.shape
    spread, wide = [], []
    for count, size in zip(reps, shape):
        spread += [1, size]
        wide += [count, size]
    x = reshape(A, tuple(spread), what)
    x = broadcast_to(x, tuple(wide), what)
    return fresh(reshape(x, tuple(c * s for c, s in zip(reps, shape)), what).node)


def repeat(a, repeats, axis=None) -> Tracer:
    what = "np.repeat"
    a = as_tracer(a, what)
    if isinstance(repeats, Tracer) and repeats.ndim > 0:
        raise UnsupportedError(f"{what} with traced repeat counts ({repeats.dtype}"
                               f"{list(repeats.shape)}) gives a data-dependent shape; pass the counts "
                               f"as a Python int or a NumPy array of ints{where()}")
    repeats = _counts(repeats, f"{what}: repeats")
    counts = np.asarray(repeats)
    if counts.dtype.kind not in "iub":
        raise TypeError(f"{what}: Cannot cast array data from {counts.dtype} to int64 according to "
                        f"the rule 'safe'{where()}")
    if np.any(counts < 0):
        raise ValueError(f"{what}: repeats may not contain negative values{where()}")
    if axis is None:
        a, axis = ravel(a), 0
    else:
        axis = normalize_axis(_counts(axis, f"{what}: the axis"), a.ndim, what)
    size = a.shape[axis]
    if counts.ndim > 1 or counts.size not in (1, size):
        raise ShapeError(f"{what}: operands could not be broadcast together with shape ({size},) "
                         f"({counts.size},){where()}")
    if counts.size == 1:
        count = int(counts.reshape(()))
        spread = a.shape[:axis + 1] + (1,) + a.shape[axis + 1:]
        wide = a.shape[:axis + 1] + (count,) + a.shape[axis + 1:]
        x = broadcast_to(reshape(a, spread, what), wide, what)
        return fresh(reshape(x, a.shape[:axis] + (size * count,) + a.shape[axis + 1:], what).node)
    indices = [i for i, count in enumerate(counts.tolist()) for _ in range(count)]
    return take(a, indices, axis, what)
