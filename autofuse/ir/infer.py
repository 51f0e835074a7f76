"""Shape and dtype inference for every op of the table (the rules `Graph.verify` checks)."""
from __future__ import annotations

import functools

import numpy as np

from ..errors import ShapeError
from . import fourier
from .ops import ELEMENTWISE, OPS, REDUCE, SCAN


def same_shape(shapes) -> tuple | None:
    """The one shape that `shapes` all are, 0-d ones aside (they broadcast to anything), or None:
    the common case, without NumPy's general broadcast (about 9 µs a call, per traced op)."""
    common = None
    for shape in shapes:
        if shape:
            if common is None:
                common = tuple(shape)
            elif tuple(shape) != common:
                return None
    return () if common is None else common


def broadcast_shapes(*shapes) -> tuple:
    """NumPy's broadcast of shapes, or ShapeError."""
    common = same_shape(shapes)
    if common is not None:
        return common
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ShapeError("shapes " + ", ".join(str(tuple(s)) for s in shapes) + " do not broadcast") from None


@functools.lru_cache(maxsize=4096)
def ufunc_loop(name: str, dtypes: tuple) -> tuple:
    """The (input dtypes..., output dtype) NumPy's `name` ufunc computes in for these operand types.

    `dtypes` holds np.dtype objects for arrays and the Python types int/float/bool for
    Python scalars, which NumPy 2 treats as weak (NEP 50).
    """
    ufunc = OPS[name].ufunc
    resolved = ufunc.resolve_dtypes(tuple(dtypes) + (None,) * ufunc.nout)
    return tuple(np.dtype(d) for d in resolved)


def infer(op: str, inputs: tuple, attrs) -> tuple[tuple, np.dtype]:
    row = OPS[op]
    if row.kind == ELEMENTWISE:
        shape = broadcast_shapes(*(n.shape for n in inputs))
        if op == "cast":
            return shape, np.dtype(attrs["dtype"])
        if op == "where":
            return shape, inputs[1].dtype
        if op in ("real", "imag"):
            return shape, np.empty(0, inputs[0].dtype).real.dtype
        return shape, ufunc_loop(op, tuple(n.dtype for n in inputs))[-1]
    if row.kind == REDUCE:
        (source,) = inputs
        axes = attrs["axes"]
        shape = tuple(s for d, s in enumerate(source.shape) if d not in axes)
        if op in ("argmax", "argmin"):
            return shape, np.dtype(np.int64)
        if op in ("any", "all"):
            return shape, np.dtype(bool)
        return shape, source.dtype
    if row.kind == SCAN:
        (source,) = inputs
        if not 0 <= attrs["axis"] < source.ndim:
            raise ShapeError(f"scan axis {attrs['axis']} is outside {source.ndim} dimensions")
        return source.shape, source.dtype
    return _LAYOUT_AND_SOURCES[op](inputs, attrs)


def _broadcast_to(inputs, attrs):
    (source,) = inputs
    shape = tuple(attrs["shape"])
    if broadcast_shapes(source.shape, shape) != shape:
        raise ShapeError(f"cannot broadcast {source.shape} to {shape}")
    return shape, source.dtype


def _transpose(inputs, attrs):
    (source,) = inputs
    perm = attrs["perm"]
    if sorted(perm) != list(range(source.ndim)):
        raise ShapeError(f"transpose axes {perm} do not match {source.ndim} dimensions")
    return tuple(source.shape[p] for p in perm), source.dtype


def _reshape(inputs, attrs):
    (source,) = inputs
    shape = tuple(attrs["shape"])
    if int(np.prod(shape, dtype=np.int64)) != source.size:
        raise ShapeError(f"cannot reshape {source.shape} to {shape}")
    return shape, source.dtype


def slice_length(size: int, start: int, step: int, count: int) -> bool:
    """Whether `count` elements from `start` by `step` stay inside an axis of `size`."""
    if count == 0:
        return True
    last = start + step * (count - 1)
    return 0 <= start < size and 0 <= last < size


def _slice(inputs, attrs):
    (source,) = inputs
    for size, start, step, count in zip(source.shape, attrs["start"], attrs["step"], attrs["shape"]):
        if step == 0 or not slice_length(size, start, step, count):
            raise ShapeError(f"slice start={start} step={step} count={count} is outside an axis of {size}")
    return tuple(attrs["shape"]), source.dtype


def _setslice(inputs, attrs):
    base, update = inputs
    _slice((base,), {"start": attrs["start"], "step": attrs["step"], "shape": update.shape})
    if update.dtype != base.dtype:
        raise ShapeError(f"setslice of {update.dtype} into {base.dtype}")
    return base.shape, base.dtype


def _concatenate(inputs, attrs):
    axis = attrs["axis"]
    first = inputs[0]
    for other in inputs[1:]:
        if other.ndim != first.ndim or any(
                a != b for d, (a, b) in enumerate(zip(first.shape, other.shape)) if d != axis):
            raise ShapeError("concatenate of " + ", ".join(str(n.shape) for n in inputs))
    shape = list(first.shape)
    shape[axis] = sum(n.shape[axis] for n in inputs)
    dtypes = {n.dtype for n in inputs}
    if len(dtypes) != 1:
        raise ShapeError("concatenate operands must share a dtype (the tracer casts them)")
    return tuple(shape), first.dtype


def _sort(inputs, attrs):
    (source,) = inputs
    if source.ndim == 0:
        raise ShapeError("a sort needs at least one axis (the tracer gives 0-d values one)")
    return source.shape, source.dtype


def _argsort(inputs, attrs):
    return _sort(inputs, attrs)[0], np.dtype(np.int64)


def _gather(inputs, attrs):
    data, *indices = inputs
    indexed, kept = attrs["indexed"], attrs["kept"]
    if not indices or len(indices) != len(indexed) or len(indexed) + len(kept) != data.ndim:
        raise ShapeError(f"gather of {data.shape} with {len(indices)} indices along {indexed}")
    shape = indices[0].shape
    if any(index.shape != shape or index.dtype != np.int64 for index in indices):
        raise ShapeError("gather indices must be int64 arrays of one shape")
    others = [d for d in range(data.ndim) if d not in indexed]
    if any(data.shape[d] != shape[axis] for d, axis in zip(others, kept)):
        raise ShapeError(f"gather keeps axes {kept} of {shape} that differ from {data.shape}")
    return shape, data.dtype


def _scatter_add(inputs, attrs):
    base, indices, values = inputs
    if base.ndim == 0 or indices.ndim != 1 or indices.dtype != np.int64:
        raise ShapeError(f"scatter_add into {base.shape} needs a base of at least one axis and "
                         f"1-d int64 indices, got {indices.dtype} {indices.shape}")
    if values.shape != indices.shape + base.shape[1:] or values.dtype != base.dtype:
        raise ShapeError(f"scatter_add of {values.dtype} {values.shape} into {base.dtype} "
                         f"{base.shape} at {indices.shape} indices")
    return base.shape, base.dtype


def _matmul(inputs, attrs):
    a, b = inputs
    if a.ndim < 2 or b.ndim < 2 or a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"matmul of {a.shape} and {b.shape}")
    dtype = np.result_type(a.dtype, b.dtype)
    return a.shape[:-1] + (b.shape[-1],), dtype


def _constant(inputs, attrs):
    array = attrs["value"].array
    return array.shape, array.dtype


def _iota(inputs, attrs):
    return tuple(attrs["shape"]), np.dtype(attrs["dtype"])


_LAYOUT_AND_SOURCES = {
    "broadcast_to": _broadcast_to,
    "transpose": _transpose,
    "reshape": _reshape,
    "slice": _slice,
    "setslice": _setslice,
    "concatenate": _concatenate,
    "gather": _gather,
    "scatter_add": _scatter_add,
    "matmul": _matmul,
    "softmax_matmul": _matmul,
    "sort": _sort,
    "argsort": _argsort,
    "fft": fourier.infer,
    "constant": _constant,
    "iota": _iota,
}
