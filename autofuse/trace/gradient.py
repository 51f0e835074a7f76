"""np.gradient: second-order central differences inside, one- or two-sided differences at the edges,
as NumPy writes them: each axis's result is three slices' arithmetic joined along that axis.

Spacings are scalars (uniform: NumPy's own formulas) or 1-D coordinate arrays (non-uniform: the
weights from the coordinate differences, traced like any array; NumPy switches to the uniform
formulas when the coordinates happen to be evenly spaced, a check on values that a trace cannot
make, so its results may differ from these in the last bits there).
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, where
from .indexing import getitem
from .layout import as_tracer, astype, concatenate, normalize_axis, reshape
from .tracer import Tracer

WHAT = "np.gradient"


def gradient(f, *varargs, axis=None, edge_order=1):
    f = as_tracer(f, WHAT)
    axes = _axes(axis, f.ndim)
    if edge_order not in (1, 2):
        raise ValueError(f"{WHAT}: 'edge_order' greater than 2 not supported{where()}")
    spacings = _spacings(varargs, axes, f)
    if f.dtype.kind in "biu":
        f = astype(f, np.float64)
    results = []
    for ax, spacing in zip(axes, spacings):
        if f.shape[ax] < edge_order + 1:
            raise ValueError(f"{WHAT}: Shape of array too small to calculate a numerical gradient, "
                             f"at least (edge_order + 1) elements are required (axis {ax} of "
                             f"shape {f.shape}){where()}")
        parts = (_uniform if not isinstance(spacing, Tracer) else _coordinates)(
            f, ax, spacing, edge_order)
        results.append(astype(concatenate(parts, ax, WHAT), f.dtype))
    return results[0] if len(results) == 1 else tuple(results)


def _axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    chosen = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    found = tuple(normalize_axis(int(a), ndim, WHAT) for a in chosen)
    if len(set(found)) != len(found):
        raise ValueError(f"{WHAT}: repeated axis in 'axis' argument{where()}")
    return found


def _spacings(varargs: tuple, axes: tuple, f: Tracer) -> list:
    """One spacing an axis: a Python float (uniform) or a 1-D coordinate tracer."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        varargs = varargs * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(f"{WHAT}: invalid number of arguments ({len(varargs)} spacings for "
                        f"{len(axes)} axes){where()}")
    found = []
    for ax, spacing in zip(axes, varargs):
        if not isinstance(spacing, Tracer) and np.ndim(spacing) == 0:
            found.append(float(spacing))
            continue
        coordinates = as_tracer(spacing, WHAT)
        if coordinates.ndim != 1:
            raise ShapeError(f"{WHAT}: distances must be either scalars or 1d (got shape "
                             f"{coordinates.shape}){where()}")
        if coordinates.shape[0] != f.shape[ax]:
            raise ShapeError(f"{WHAT}: when 1d, distances must match the length of the "
                             f"corresponding dimension ({coordinates.shape[0]} against axis {ax} "
                             f"of shape {f.shape}){where()}")
        if coordinates.dtype.kind in "biu":
            coordinates = astype(coordinates, np.float64)
        found.append(coordinates)
    return found


def _span(f: Tracer, ax: int, start, stop) -> Tracer:
    """f[start:stop] along `ax`."""
    index = [slice(None)] * f.ndim
    index[ax] = slice(start, stop)
    return getitem(f, tuple(index))


def _at(f: Tracer, ax: int, i: int) -> Tracer:
    """The one element at `i` along `ax`, kept as an axis of length 1."""
    return _span(f, ax, i, i + 1 if i != -1 else None)


def _uniform(f: Tracer, ax: int, dx: float, edge_order: int) -> list:
    inside = ((_span(f, ax, 2, None) - _span(f, ax, 0, -2)) / (2.0 * dx)
              if f.shape[ax] > 2 else None)
    if edge_order == 1:
        first = (_at(f, ax, 1) - _at(f, ax, 0)) / dx
        last = (_at(f, ax, -1) - _at(f, ax, -2)) / dx
    else:
        first = (-1.5 / dx) * _at(f, ax, 0) + (2.0 / dx) * _at(f, ax, 1) + (-0.5 / dx) * _at(f, ax, 2)
        last = (0.5 / dx) * _at(f, ax, -3) + (-2.0 / dx) * _at(f, ax, -2) + (1.5 / dx) * _at(f, ax, -1)
    return [first] + ([inside] if inside is not None else []) + [last]


def _coordinates(f: Tracer, ax: int, x: Tracer, edge_order: int) -> list:
    """Non-uniform spacing: NumPy's weights from the coordinate differences dx."""
    shape = [1] * f.ndim
    dx = x[1:] - x[:-1]

    def along(values: Tracer) -> Tracer:      # 1-D weights broadcast along `ax`
        shape[ax] = values.shape[0]
        return reshape(values, tuple(shape), WHAT)

    parts = []
    if edge_order == 1:
        parts.append((_at(f, ax, 1) - _at(f, ax, 0)) / along(dx[:1]))
    else:
        d1, d2 = dx[:1], dx[1:2]
        a = -(2.0 * d1 + d2) / (d1 * (d1 + d2))
        b = (d1 + d2) / (d1 * d2)
        c = -d1 / (d2 * (d1 + d2))
        parts.append(along(a) * _at(f, ax, 0) + along(b) * _at(f, ax, 1) + along(c) * _at(f, ax, 2))
    if f.shape[ax] > 2:
        d1, d2 = dx[:-1], dx[1:]
        a = -d2 / (d1 * (d1 + d2))
        b = (d2 - d1) / (d1 * d2)
        c = d1 / (d2 * (d1 + d2))
        parts.append(along(a) * _span(f, ax, 0, -2) + along(b) * _span(f, ax, 1, -1)
                     + along(c) * _span(f, ax, 2, None))
    if edge_order == 1:
        parts.append((_at(f, ax, -1) - _at(f, ax, -2)) / along(dx[-1:]))
    else:
        d1, d2 = dx[-2:-1], dx[-1:]
        a = d2 / (d1 * (d1 + d2))
        b = -(d2 + d1) / (d1 * d2)
        c = (2.0 * d2 + d1) / (d2 * (d1 + d2))
        parts.append(along(a) * _at(f, ax, -3) + along(b) * _at(f, ax, -2) + along(c) * _at(f, ax, -1))
    return parts
