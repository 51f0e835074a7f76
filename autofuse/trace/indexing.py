"""Basic indexing (ints, slices, None, ...) as views, and assignment through them."""
from __future__ import annotations

import numpy as np

from ..errors import DTypeError, ShapeError, TraceError, UnsupportedError, describe, where
from . import gather, masking, scatter
from .context import current
from .tracer import Tracer, fresh, specializable_arguments
from .ufuncs import operand_type, to_node


def _parse(key, shape) -> tuple[list, tuple, bool]:
    """(per-axis (start, step, count, keep), final shape, every axis taken by an int)."""
    if not isinstance(key, tuple):
        key = (key,)
    for entry in key:
        if isinstance(entry, Tracer) and entry.ndim == 0 and specializable_arguments(entry.node):
            entry._concrete("indexing with a scalar")
        if isinstance(entry, Tracer):
            raise UnsupportedError(
                f"indexing with a traced array ({describe(entry)}) is a data-dependent gather, which "
                f"autofuse does not support; use np.where or slicing{where()}")
        if isinstance(entry, (list, np.ndarray, bool, np.bool_)):
            raise UnsupportedError(f"advanced indexing (index {entry!r}) is not supported; use basic "
                                   f"slicing, integers, None and ...{where()}")
        if not (entry is None or entry is Ellipsis or isinstance(entry, (slice, int, np.integer))):
            raise UnsupportedError(f"index {entry!r} of type {type(entry).__name__} is not supported"
                                   f"{where()}")
    ellipses = sum(1 for entry in key if entry is Ellipsis)
    if ellipses > 1:
        raise ShapeError(f"an index can only have a single ellipsis ('...'){where()}")
    consumed = sum(1 for entry in key if entry is not None and entry is not Ellipsis)
    if consumed > len(shape):
        raise ShapeError(f"too many indices for array: array is {len(shape)}-dimensional, but "
                         f"{consumed} were indexed{where()}")
    fill = [slice(None)] * (len(shape) - consumed)
    if ellipses:
        position = key.index(Ellipsis)
        key = key[:position] + tuple(fill) + key[position + 1:]
    else:
        key = key + tuple(fill)
    axes, final, axis, all_ints = [], [], 0, True
    for entry in key:
        if entry is None:
            final.append(1)
            all_ints = False
            continue
        size = shape[axis]
        if isinstance(entry, slice):
            start, stop, step = entry.indices(size)
            count = len(range(start, stop, step))
            if count == 0:
                start, step = 0, 1
            axes.append((start, step, count, True))
            final.append(count)
            all_ints = False
        else:
            index = int(entry)
            if not -size <= index < size:
                raise ShapeError(f"index {index} is out of bounds for axis {axis} with size {size}"
                                 f"{where()}")
            axes.append((index % size, 1, 1, False))
        axis += 1
    return axes, tuple(final), all_ints


def getitem(x: Tracer, key, for_write: bool = False) -> Tracer:
    """x[key] with NumPy's basic indexing: a view (a scalar copy when every axis takes an int);
    a boolean mask of x's shape gives a selection that only reductions consume."""
    if _is_mask(key) and not for_write and (isinstance(key, Tracer) or key.shape == x.shape):
        return masking.select(x, key)
    if not for_write and gather.is_advanced(key):
        return gather.getitem(x, key, getitem)
    axes, final, all_ints = _parse(key, x.shape)
    view = x
    if any((start, step, count) != (0, 1, size) for (start, step, count, _), size in zip(axes, x.shape)):
        attrs = {"start": tuple(a[0] for a in axes), "step": tuple(a[1] for a in axes),
                 "shape": tuple(a[2] for a in axes)}
        shadow_key = tuple(slice(s, s + st * c if s + st * c >= 0 else None, st) if c else slice(0, 0)
                           for s, st, c, _ in axes)
        view = view.view("slice", attrs, x.shadow()[shadow_key])
    if final != view.shape:
        view = view.view("reshape", {"shape": final}, view.shadow().reshape(final))
    elif view is x:
        view = Tracer(x._buffer, x._chain, x.node, x._shadow)
    if all_ints and x.ndim > 0 and not for_write:
        return fresh(view.node, scalar=True)
    if x.ndim == 0 and key == () and not for_write:
        return fresh(view.node, scalar=True)
    return view


def setitem(x: Tracer, key, value) -> None:
    """x[key] = value: NumPy's broadcasting and (unsafe) casting into the selected region."""
    if not isinstance(x, Tracer) or x.weak is not None or x.scalar:
        raise TraceError(f"item assignment into a scalar{where()}")
    if _is_mask(key):
        _assign_masked(x, key, value)
        return
    if gather.is_advanced(key):
        scatter.setitem(x, key, value)
        return
    target = getitem(x, key, for_write=True)
    what = "assignment x[...] = value"
    operand_type(value, what)
    node = to_node(value, x.dtype, what)
    shape = node.shape
    while len(shape) > target.ndim and shape[0] == 1:
        shape = shape[1:]
    ctx = current()
    if shape != node.shape:
        node = ctx.emit("reshape", [node], {"shape": shape})
    try:
        ok = np.broadcast_shapes(shape, target.shape) == target.shape
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(f"{what}: could not broadcast input array from shape {node.shape} into "
                         f"shape {target.shape}{where()}")
    if node.shape != target.shape:
        node = ctx.emit("broadcast_to", [node], {"shape": target.shape})
    target.assign(node, what)


def _is_mask(key) -> bool:
    return isinstance(key, (Tracer, np.ndarray)) and key.dtype == np.bool_ and key.ndim > 0


def _assign_masked(x: Tracer, mask, value) -> None:
    """x[mask] = scalar with a mask of x's shape: np.where(mask, value, x), no data-dependent shape."""
    what = "masked assignment x[mask] = value"
    if tuple(mask.shape) != x.shape:
        raise UnsupportedError(f"{what}: the boolean mask's shape {tuple(mask.shape)} must be the "
                               f"array's shape {x.shape}; write x = np.where(mask, value, x){where()}")
    if isinstance(value, masking.MaskedSelection):
        if value.key is not mask:
            raise value.unsupported("assigning through another mask")
        value = value.values
    elif np.ndim(value) != 0 and not (isinstance(value, Tracer) and value.ndim == 0):
        raise UnsupportedError(f"{what}: the value must be a scalar (an array value fills as many "
                               f"elements as the mask selects, a data-dependent count); write "
                               f"x = np.where(mask, values, x){where()}")
    operand_type(value, what)
    ctx = current()
    nodes = [to_node(mask, np.dtype(bool), what), to_node(value, x.dtype, what), x.node]
    x.assign(ctx.emit("where", nodes), what)


# -- whole-array assignment: np.copyto, ndarray.fill -------------------------------------------
_where = where      # (copyto takes NumPy's where= argument under that name)


def copyto(dst, src, casting="same_kind", where=True):
    """np.copyto: `dst[...] = src` (where the mask says), after NumPy's casting check; `dst`
    an array of the trace (an argument, which the call then writes, or a computed one)."""
    if not isinstance(dst, Tracer) or dst.sequence:
        raise UnsupportedError(f"np.copyto: the destination must be an array argument or an "
                               f"array computed in the function{_where()}")
    # NumPy's own check, on nothing of the two dtypes (a Python scalar as itself: NEP 50's weak
    # scalars, and a Python int out of the destination's range, raise as NumPy raises them)
    weak = isinstance(src, (bool, int, float, complex)) and not isinstance(src, np.generic)
    sample = src if weak else np.empty(0, src.dtype if isinstance(src, Tracer) else
                                       np.asarray(src).dtype)
    try:
        np.copyto(np.empty(0, dst.dtype), sample, casting=casting)
    except (TypeError, OverflowError) as error:
        raise DTypeError(f"np.copyto into {describe(dst)} from {describe(src)}: {error}"
                         f"{_where()}") from None
    from .reductions import where_mask
    mask = where_mask(dst, where, "np.copyto")
    dst[...] = src if mask is None else np.where(mask, src, dst)


def fill(x: Tracer, value) -> None:
    """ndarray.fill: every element set to `value` (cast as item assignment casts it)."""
    x[...] = value
