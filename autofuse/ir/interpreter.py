"""The reference interpreter: evaluates any graph (or any run of its nodes) with NumPy.

It is the oracle for every later stage: fused groups and generated kernels must agree with it.
"""
from __future__ import annotations

import numpy as np

from . import fourier
from .graph import Graph, Node
from .ops import ELEMENTWISE, OPS, REDUCE, SCAN


def evaluate(graph: Graph, args) -> list[np.ndarray]:
    """Run `graph` on arrays `args` (one per graph input); returns one array per output."""
    env = {node.id: np.asarray(arg) for node, arg in zip(graph.inputs, args)}
    run_nodes(graph.nodes, env)
    return [env[node.id] for node in graph.outputs]


def run_nodes(nodes, env: dict) -> dict:
    """Evaluate `nodes` in order into `env` (node id -> array); inputs must already be in env."""
    with np.errstate(all="ignore"):
        for node in nodes:
            if node.op == "input":
                continue
            env[node.id] = evaluate_node(node, [env[n.id] for n in node.inputs])
    return env


def evaluate_node(node: Node, args: list) -> np.ndarray:
    """One node's value from its inputs' values, exactly as NumPy computes it."""
    row = OPS[node.op]
    attrs = node.attrs
    if row.kind == ELEMENTWISE:
        if node.op == "cast":
            result = _cast(args[0], node.dtype)
        elif node.op == "where":
            result = np.where(*args)
        elif row.ufunc is None:              # np.real, np.imag
            result = getattr(np, node.op)(*args)
        else:
            result = row.ufunc(*args)
    elif row.kind == REDUCE:
        result = _reduce(node, args[0])
    elif row.kind == SCAN:
        ufunc = getattr(np, attrs["ufunc"])
        result = ufunc.accumulate(args[0], axis=attrs["axis"], dtype=node.dtype)
    else:
        result = _EVALUATORS[node.op](node, args, attrs)
    result = np.asarray(result)
    if result.dtype != node.dtype:
        result = result.astype(node.dtype)
    return np.broadcast_to(result, node.shape) if result.shape != node.shape else result


def _cast(x: np.ndarray, dtype) -> np.ndarray:
    """astype, keeping the real part of complex values for a number dtype (as NumPy does) without
    its warning; to bool, a complex value is True where either part is nonzero."""
    if x.dtype.kind == "c" and np.dtype(dtype).kind in "iuf":
        x = x.real
    return x.astype(dtype)


def _reduce(node: Node, x: np.ndarray):
    axes = node.attrs["axes"]
    if node.op in ("argmax", "argmin"):
        (axis,) = axes
        return getattr(np, node.op)(x, axis=axis)
    if x.size == 0 and node.op in ("max", "min", "expsum") and node.size:
        raise ValueError(f"zero-size {node.op} reduction")
    if node.op == "expsum":
        return np.exp(x - np.max(x, axis=axes, keepdims=True)).sum(axis=axes, dtype=node.dtype)
    return OPS[node.op].ufunc.reduce(x, axis=axes, dtype=node.dtype if node.op in ("sum", "prod") else None)


def _slice_index(attrs, shape):
    index = []
    for start, step, count in zip(attrs["start"], attrs["step"], shape):
        stop = start + step * count
        index.append(slice(start, stop if stop >= 0 else None, step))
    return tuple(index)


def _setslice(node, args, attrs):
    base, update = args
    result = np.array(base, copy=True)
    result[_slice_index(attrs, update.shape)] = update
    return result


def _iota(node, args, attrs):
    shape = attrs["shape"]
    axis = attrs["axis"]
    line = np.arange(shape[axis], dtype=node.dtype)
    view = [1] * len(shape)
    view[axis] = shape[axis]
    return np.broadcast_to(line.reshape(view), shape)


def _gather(node, args, attrs):
    data, *indices = args
    indexed, kept = attrs["indexed"], attrs["kept"]
    others = [d for d in range(data.ndim) if d not in indexed]
    key = []
    for d, size in enumerate(data.shape):
        if d in indexed:
            index = np.asarray(indices[indexed.index(d)], dtype=np.int64)
            key.append(np.clip(np.where(index < 0, index + size, index), 0, max(size - 1, 0)))
        else:
            axis = kept[others.index(d)]
            line = [1] * node.ndim
            line[axis] = size
            key.append(np.arange(size).reshape(line))
    return data[tuple(key)] if node.size else np.zeros(node.shape, data.dtype)


def _scatter_add(node, args, attrs):
    """np.add.at on a copy of the base, in the values' order; an index outside the base (after
    wrapping a negative one) adds nothing (the call reports it: trace/checks.py)."""
    base, indices, values = args
    result = np.array(base, dtype=node.dtype, copy=True)
    size = result.shape[0]
    wrapped = np.where(indices < 0, indices + size, indices)
    inside = (wrapped >= 0) & (wrapped < size)
    np.add.at(result, wrapped[inside], np.asarray(values)[inside])
    return result


def _softmax(s: np.ndarray) -> np.ndarray:
    """Softmax along the last axis, written as attention's programs write it."""
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


_EVALUATORS = {
    "broadcast_to": lambda node, args, attrs: np.broadcast_to(args[0], attrs["shape"]),
    "transpose": lambda node, args, attrs: np.transpose(args[0], attrs["perm"]),
    "reshape": lambda node, args, attrs: np.reshape(args[0], attrs["shape"]),
    "slice": lambda node, args, attrs: args[0][_slice_index(attrs, attrs["shape"])],
    "setslice": _setslice,
    "concatenate": lambda node, args, attrs: np.concatenate(args, axis=attrs["axis"]),
    "gather": _gather,
    "scatter_add": _scatter_add,
    "matmul": lambda node, args, attrs: np.matmul(*args),
    "softmax_matmul": lambda node, args, attrs: np.matmul(_softmax(args[0]), args[1]),
    # NOTE: argsort is stable: ties keep their order (any order is a valid unstable argsort, and
    # the kernels give this one). Values sort by NumPy's default kind (its fastest; equal values
    # are interchangeable). NaN sorts last, as NumPy's every kind does.
    "sort": lambda node, args, attrs: np.sort(args[0], axis=-1),
    "argsort": lambda node, args, attrs: np.argsort(args[0], axis=-1, kind="stable"),
    "fft": lambda node, args, attrs: fourier.evaluate(args[0], attrs),
    "constant": lambda node, args, attrs: attrs["value"].array,
    "iota": _iota,
}
