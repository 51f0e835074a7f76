"""Layout functions: reshape, transpose, squeeze, broadcast, concatenate... with NumPy's view rules."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedError, where
from .context import check_dtype, current
from .tracer import Tracer, fresh
from .ufuncs import to_node


def normalize_axis(axis, ndim: int, what: str) -> int:
    try:
        axis = int(axis)
    except TypeError:
        raise ShapeError(f"{what}: axis must be an integer, got {axis!r}{where()}") from None
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{what}: axis {axis} is out of bounds for an array of dimension {ndim}"
                         f"{where()}")
    return axis % ndim


def normalize_axes(axes, ndim: int, what: str) -> tuple:
    """None -> all axes; int or tuple -> sorted non-negative tuple (duplicates are an error)."""
    if axes is None:
        return tuple(range(ndim))
    if not isinstance(axes, (tuple, list)):
        axes = (axes,)
    result = tuple(normalize_axis(a, ndim, what) for a in axes)
    if len(set(result)) != len(result):
        raise ShapeError(f"{what}: repeated axis in {tuple(axes)}{where()}")
    return tuple(sorted(result))


def reshape(x: Tracer, shape, what="reshape", order="C") -> Tracer:
    if order not in ("C", "A"):
        raise UnsupportedError(f"{what}: order={order!r} is not supported (only 'C'){where()}")
    if isinstance(shape, (int, np.integer)) or getattr(shape, "ndim", None) == 0:
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
    if len(unknown) > 1 or any(s < -1 for s in shape):
        raise ShapeError(f"{what}: invalid shape {shape}{where()}")
    if unknown:
        if known == 0 or x.size % known:
            raise ShapeError(f"{what}: cannot reshape array of size {x.size} into shape {shape}{where()}")
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        raise ShapeError(f"{what}: cannot reshape array of size {x.size} into shape {shape}{where()}")
    if shape == x.shape and not x.scalar:
        return _same(x)
    try:
        shadow = x.shadow().reshape(shape, copy=False)
    except ValueError:
        return fresh(current().emit("reshape", [x.node], {"shape": shape}))
    return x.view("reshape", {"shape": shape}, shadow)


def _same(x: Tracer) -> Tracer:
    """A new view object of the same array (NumPy's reshape to the same shape is a view)."""
    return Tracer(x._buffer, x._chain, x.node, x._shadow)


def ravel(x: Tracer) -> Tracer:
    if x.shadow().flags.c_contiguous:
        return reshape(x, (x.size,), "ravel")
    return fresh(current().emit("reshape", [x.node], {"shape": (x.size,)}))


def flatten(x: Tracer) -> Tracer:
    return fresh(current().emit("reshape", [x.node], {"shape": (x.size,)}))


def transpose(x: Tracer, axes=None, what="transpose") -> Tracer:
    if axes is None or axes == ():
        perm = tuple(reversed(range(x.ndim)))
    else:
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        if len(axes) != x.ndim:
            raise ShapeError(f"{what}: axes {tuple(axes)} don't match array of {x.ndim} dimensions"
                             f"{where()}")
        perm = tuple(normalize_axis(a, x.ndim, what) for a in axes)
        if len(set(perm)) != len(perm):
            raise ShapeError(f"{what}: repeated axis in {tuple(axes)}{where()}")
    if perm == tuple(range(x.ndim)):
        return x if x.scalar else _same(x)    # a NumPy scalar's .T is the scalar itself
    return x.view("transpose", {"perm": perm}, x.shadow().transpose(perm))


def swapaxes(x: Tracer, a, b) -> Tracer:
    a, b = normalize_axis(a, x.ndim, "swapaxes"), normalize_axis(b, x.ndim, "swapaxes")
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm, "swapaxes")


def moveaxis(x: Tracer, source, destination) -> Tracer:
    source = normalize_axes_ordered(source, x.ndim, "moveaxis")
    destination = normalize_axes_ordered(destination, x.ndim, "moveaxis")
    if len(source) != len(destination):
        raise ShapeError(f"moveaxis: source and destination must have the same length{where()}")
    order = [n for n in range(x.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return transpose(x, order, "moveaxis")


def normalize_axes_ordered(axes, ndim, what) -> tuple:
    if not isinstance(axes, (tuple, list)):
        axes = (axes,)
    return tuple(normalize_axis(a, ndim, what) for a in axes)


def expand_dims(x: Tracer, axis) -> Tracer:
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = x.ndim + len(axes)
    axes = normalize_axes(axes, ndim, "expand_dims")
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return reshape(x, shape, "expand_dims")


def squeeze(x: Tracer, axis=None) -> Tracer:
    if axis is None:
        axes = tuple(d for d, s in enumerate(x.shape) if s == 1)
    else:
        axes = normalize_axes(axis, x.ndim, "squeeze")
        for a in axes:
            if x.shape[a] != 1:
                raise ShapeError(f"squeeze: cannot select an axis to squeeze out which has size not "
                                 f"equal to one (axis {a} of shape {x.shape}){where()}")
    shape = tuple(s for d, s in enumerate(x.shape) if d not in axes)
    return reshape(x, shape, "squeeze")


def broadcast_to(x, shape, what="broadcast_to") -> Tracer:
    if not isinstance(x, Tracer):
        x = fresh(to_node(x, np.asarray(x).dtype, what))
    if isinstance(shape, (int, np.integer)) or getattr(shape, "ndim", None) == 0:
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    try:
        result = np.broadcast_shapes(x.shape, shape)
    except ValueError:
        result = None
    if result != shape or len(shape) < x.ndim:
        raise ShapeError(f"{what}: cannot broadcast an array of shape {x.shape} to {shape}{where()}")
    if shape == x.shape:
        return x.view("broadcast_to", {"shape": shape}, x.shadow())
    shadow = np.broadcast_to(x.shadow(), shape)
    return x.view("broadcast_to", {"shape": shape}, shadow)


def as_tracer(x, what: str) -> Tracer:
    """A traced array for `x` (constants for NumPy arrays and Python values)."""
    if isinstance(x, Tracer):
        return x
    array = np.asarray(x)
    check_dtype(array.dtype, what)
    return fresh(current().constant(array))


def concatenate(arrays, axis=0, what="concatenate", dtype=None) -> Tracer:
    arrays = [as_tracer(a, what) for a in arrays]
    if not arrays:
        raise ShapeError(f"{what}: need at least one array to concatenate{where()}")
    if axis is None:
        arrays = [flatten(a) for a in arrays]
        axis = 0
    ndim = arrays[0].ndim
    if ndim == 0:
        raise ShapeError(f"{what}: zero-dimensional arrays cannot be concatenated{where()}")
    axis = normalize_axis(axis, ndim, what)
    for a in arrays[1:]:
        if a.ndim != ndim or any(s != t for d, (s, t) in enumerate(zip(a.shape, arrays[0].shape))
                                 if d != axis):
            shapes = ", ".join(str(b.shape) for b in arrays)
            raise ShapeError(f"{what}: all the input array dimensions except for the concatenation "
                             f"axis must match exactly; got shapes {shapes}{where()}")
    result_dtype = np.dtype(dtype) if dtype is not None else np.result_type(*(a.dtype for a in arrays))
    nodes = [to_node(a, result_dtype, what) for a in arrays]
    nodes = [n for n in nodes if n.shape[axis] > 0] or nodes[:1]
    if len(nodes) == 1:
        return fresh(nodes[0])
    return fresh(current().emit("concatenate", nodes, {"axis": axis}))


def stack(arrays, axis=0, what="stack", dtype=None) -> Tracer:
    arrays = [as_tracer(a, what) for a in arrays]
    if not arrays:
        raise ShapeError(f"{what}: need at least one array to stack{where()}")
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ShapeError(f"{what}: all input arrays must have the same shape; got "
                         f"{', '.join(str(a.shape) for a in arrays)}{where()}")
    axis = normalize_axis(axis, arrays[0].ndim + 1, what)
    return concatenate([expand_dims(a, axis) for a in arrays], axis, what, dtype)


def astype(x: Tracer, dtype, copy=True) -> Tracer:
    dtype = check_dtype(dtype, "astype")
    if dtype == x.dtype and not copy:
        return x
    node = x.node
    if dtype != x.dtype:
        node = current().emit("cast", [node], {"dtype": dtype})
    return fresh(node, scalar=x.scalar)


def copy(x: Tracer) -> Tracer:
    return fresh(x.node)
