"""Vector-Jacobian rules of the ops that are not elementwise: reductions, layout ops, matmul,
scatter-adds, gathers and sorts.

Each rule takes the node, its cotangent (a Tracer of the node's shape) and returns one Tracer or
None per input. The op table names the rule (`Op.vjp`); elementwise rules are expressions in the
table itself (autodiff/reverse.py evaluates them).
"""
from __future__ import annotations

import math

import numpy as np

from ..trace.context import current
from ..trace.tracer import Tracer, fresh
from .complexes import conjugate
from .fourier import fft_rule
from .scans import scan_rule


def _emit(op: str, inputs, attrs=None) -> Tracer:
    return fresh(current().emit(op, [t.node if isinstance(t, Tracer) else t for t in inputs],
                                attrs))


def zeros(shape, dtype) -> Tracer:
    ctx = current()
    return _emit("broadcast_to", [ctx.constant(0, dtype)], {"shape": tuple(shape)})


def _kept_dims(g: Tracer, source_shape, axes) -> Tracer:
    """The reduced cotangent with its reduced axes put back as length 1, broadcast to the source."""
    kept = tuple(1 if d in axes else s for d, s in enumerate(source_shape))
    return _emit("broadcast_to", [_emit("reshape", [g], {"shape": kept})],
                 {"shape": tuple(source_shape)})


def _as_node(value) -> Tracer:
    return fresh(value) if not isinstance(value, Tracer) else value


def sum_rule(node, g):
    (x,) = node.inputs
    return [_kept_dims(g, x.shape, node.attrs["axes"])]


def prod_rule(node, g):
    """d prod / d x_i = the product of the others, exactly where x holds zeros: one zero gets
    the product of the rest, two or more leave every gradient zero."""
    (x,) = node.inputs
    axes = node.attrs["axes"]
    xt = conjugate(_as_node(x))
    zero = xt == 0
    nonzero = np.where(zero, 1, xt)
    others = _kept_dims(fresh(current().emit("prod", [nonzero.node], {"axes": axes})), x.shape, axes)
    count = _kept_dims(fresh(current().emit("sum", [zero.astype(np.int64).node], {"axes": axes})),
                       x.shape, axes)
    spread = _kept_dims(g, x.shape, axes)
    return [np.where(count == 0, spread * others / np.where(zero, 1, xt),
                     np.where((count == 1) & zero, spread * others, 0))]


def extremum_rule(node, g):
    """max / min: the cotangent split evenly among the elements equal to the extremum."""
    (x,) = node.inputs
    axes = node.attrs["axes"]
    hit = _as_node(x) == _kept_dims(fresh(node), x.shape, axes)
    count = fresh(current().emit("sum", [hit.astype(x.dtype).node], {"axes": axes}))
    return [_kept_dims(g / count, x.shape, axes) * hit]


def broadcast_to_rule(node, g):
    (x,) = node.inputs
    return [unbroadcast(g, x.shape)]


def unbroadcast(g: Tracer, shape) -> Tracer:
    """Sum a cotangent of a broadcast result back to the operand's shape."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + d for d, s in enumerate(shape)
                                      if s == 1 and g.shape[lead + d] != 1)
    if axes:
        g = _emit("sum", [g], {"axes": axes})
    return _emit("reshape", [g], {"shape": shape}) if g.shape != shape else g


def transpose_rule(node, g):
    perm = node.attrs["perm"]
    inverse = tuple(int(i) for i in np.argsort(perm))
    return [_emit("transpose", [g], {"perm": inverse})]


def reshape_rule(node, g):
    (x,) = node.inputs
    return [_emit("reshape", [g], {"shape": x.shape})]


def slice_rule(node, g):
    (x,) = node.inputs
    attrs = {"start": node.attrs["start"], "step": node.attrs["step"]}
    return [_emit("setslice", [zeros(x.shape, g.dtype), g], attrs)]


def setslice_rule(node, g):
    base, update = node.inputs
    attrs = {"start": node.attrs["start"], "step": node.attrs["step"]}
    cleared = _emit("setslice", [g, zeros(update.shape, g.dtype)], attrs)
    taken = _emit("slice", [g], dict(attrs, shape=update.shape))
    return [cleared, taken]


def concatenate_rule(node, g):
    axis = node.attrs["axis"]
    parts, offset = [], 0
    for x in node.inputs:
        start = tuple(offset if d == axis else 0 for d in range(g.ndim))
        parts.append(_emit("slice", [g], {"start": start, "step": (1,) * g.ndim,
                                          "shape": x.shape}))
        offset += x.shape[axis]
    return parts


def matmul_rule(node, g):
    """g @ B^H and A^H @ g (the conjugate transposes: plain transposes for real operands)."""
    a, b = node.inputs
    batch = tuple(range(a.ndim - 2))
    swap = batch + (a.ndim - 1, a.ndim - 2)
    at = conjugate(_emit("transpose", [a], {"perm": swap}))
    bt = conjugate(_emit("transpose", [b], {"perm": swap}))
    return [_emit("matmul", [g, bt]), _emit("matmul", [at, g])]


def scatter_add_rule(node, g):
    """The base's cotangent passes through; each value's is the cotangent at its index (a gather
    along the first axis); indices get none."""
    base, indices, values = node.inputs
    index = fresh(indices)
    if values.ndim > 1:
        index = _emit("reshape", [index], {"shape": indices.shape + (1,) * (values.ndim - 1)})
        index = _emit("broadcast_to", [index], {"shape": values.shape})
    gathered = _emit("gather", [g, index], {"indexed": (0,), "kept": tuple(range(1, values.ndim))})
    return [g, None, gathered]


def _added_back(g, shape, index_along) -> Tracer:
    """An array of `shape` holding g's values added where they were read: `index_along(d)` is,
    for each element of g, the index along axis d of the position it was read from. np.add.at on
    a flat zero array (positions read more than once accumulate), reshaped."""
    flat, stride = None, 1
    for d in reversed(range(len(shape))):
        index = index_along(d)
        term = index if stride == 1 else index * stride
        flat = term if flat is None else flat + term
        stride *= shape[d]
    size = math.prod(shape)
    positions = _emit("reshape", [flat], {"shape": (g.size,)})
    values = _emit("reshape", [g], {"shape": (g.size,)})
    added = _emit("scatter_add", [zeros((size,), g.dtype), positions, values])
    return _emit("reshape", [added], {"shape": tuple(shape)})


def _coordinates(shape, axis) -> Tracer:
    return _emit("iota", [], {"shape": tuple(shape), "axis": axis, "dtype": np.dtype(np.int64)})


def gather_rule(node, g):
    """The data's cotangent is the result's added where the gather read it (indices read twice
    get both); the indices get none. A read position's index along an indexed axis is its index
    (a negative one from the end), along a kept axis its coordinate on the result axis it
    follows."""
    data, *indices = node.inputs
    if not data.size or not node.size:
        return [zeros(data.shape, g.dtype)] + [None] * len(indices)
    indexed, kept = node.attrs["indexed"], node.attrs["kept"]
    others = [d for d in range(data.ndim) if d not in indexed]

    def index_along(d):
        if d not in indexed:
            return _coordinates(node.shape, kept[others.index(d)])
        index = fresh(indices[indexed.index(d)])
        return np.where(index < 0, index + data.shape[d], index)
    return [_added_back(g, data.shape, index_along)] + [None] * len(indices)


def sort_rule(node, g):
    """A sorted row's cotangent goes back to where each value came from: the stable order of the
    row (the one the sort took: NaN last, ties in their order)."""
    x = node.inputs[0]
    if not x.size:
        return [zeros(x.shape, g.dtype)]
    order = _emit("argsort", [fresh(x)])
    last = x.ndim - 1
    return [_added_back(g, x.shape, lambda d: order if d == last else _coordinates(x.shape, d))]


RULES = {"sum": sum_rule, "prod": prod_rule, "extremum": extremum_rule,
         "broadcast_to": broadcast_to_rule, "transpose": transpose_rule, "reshape": reshape_rule,
         "slice": slice_rule, "setslice": setslice_rule, "concatenate": concatenate_rule,
         "matmul": matmul_rule, "scan": scan_rule,
         "scatter_add": scatter_add_rule, "gather": gather_rule, "sort": sort_rule,
         "fft": fft_rule}
