"""Selecting along one axis by indices known at trace time (np.pad's modes, np.repeat with per-
element counts): runs of consecutive indices become slices, joined by one concatenate."""
from __future__ import annotations

from .indexing import getitem
from .layout import broadcast_to, concatenate
from .tracer import Tracer, fresh


def runs(indices) -> list[tuple[int, int, int]]:
    """(start, step, count) runs covering `indices` in order; a run steps by +1, -1 or 0."""
    found = []
    for index in indices:
        if found:
            start, step, count = found[-1]
            last = start + step * (count - 1)
            if count == 1 and index - last in (-1, 0, 1):
                found[-1] = (start, index - last, 2)
                continue
            if count > 1 and index - last == step:
                found[-1] = (start, step, count + 1)
                continue
        found.append((index, 1, 1))
    return found


def take(x: Tracer, indices, axis: int, what: str) -> Tracer:
    """x[..., indices, ...] along `axis` for Python ints `indices` (0 <= i < x.shape[axis])."""
    if len(indices) == 0:
        key = (slice(None),) * axis + (slice(0, 0),)
        return fresh(getitem(x, key).node)
    pieces = []
    for start, step, count in runs(indices):
        key = [slice(None)] * x.ndim
        if step == 0:
            key[axis] = slice(start, start + 1)
            piece = getitem(x, tuple(key))
            shape = list(piece.shape)
            shape[axis] = count
            piece = broadcast_to(piece, tuple(shape), what)
        else:
            stop = start + step * count
            key[axis] = slice(start, stop if stop >= 0 else None, step)
            piece = getitem(x, tuple(key))
        pieces.append(piece)
    if len(pieces) == 1:
        return fresh(pieces[0].node)
    return concatenate(pieces, axis, what)
