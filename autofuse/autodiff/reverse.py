"""Reverse mode on the traced graph: walk the nodes between the differentiated inputs and the
outputs backwards, and emit each node's vector-Jacobian product into the same trace.

The backward ops are ordinary traced NumPy ops, so the joint forward-and-backward program is one
graph: simplified, partitioned and compiled like any other (whether a forward value is kept or
recomputed by a backward kernel is the fusion cost model's decision). Each backward node's origin
is the forward node's line, marked as its gradient.
"""
from __future__ import annotations

import functools

import numpy as np

from ..errors import UnsupportedError, where
from ..ir.ops import CONJUGATED, ELEMENTWISE, OPS
from ..trace.context import current
from ..trace.tracer import Tracer, fresh
from .structural import RULES, unbroadcast


def differentiable(dtype) -> bool:
    """A differentiated argument's or a differentiated result's dtype: real floats."""
    return np.dtype(dtype).kind == "f"


def carries(dtype) -> bool:
    """Whether a value of `dtype` carries a gradient along a path: floats and complex values
    (whose cotangent is dL/d(real part) + i dL/d(imaginary part), ir/ops.py's vjp_complex)."""
    return np.dtype(dtype).kind in "fc"


@functools.lru_cache(maxsize=None)
def _compiled(expression: str):
    return compile(expression, f"<gradient rule {expression}>", "eval")


def _between(nodes, sources: set, sinks: set) -> list:
    """The nodes on a path from a source to a sink, in graph order. Integer and bool values stop
    a path."""
    reached = set(sources)
    for node in nodes:
        if carries(node.dtype) and any(i.id in reached for i in node.inputs):
            reached.add(node.id)
    needed = set(sinks) & reached
    for node in reversed(nodes):
        if node.id in needed:
            needed.update(i.id for i in node.inputs if i.id in reached)
    return [node for node in nodes if node.id in needed]


def _contributions(node, g: Tracer) -> list:
    op = OPS[node.op]
    rule = op.vjp
    complex_ = any(np.dtype(v.dtype).kind == "c" for v in (node, *node.inputs))
    # (an op that passes no gradient for real values needs a complex rule all the same where
    # its result is complex: a complex result of a "flat" real rule may still move with z)
    if complex_ and op.kind == ELEMENTWISE and (rule != () or np.dtype(node.dtype).kind == "c"):
        rule = op.vjp_complex
    if rule is None:
        raise UnsupportedError(f"autofuse.grad: no gradient rule for {node.op}"
                               f"{' of complex values' if complex_ else ''} ({node.dtype}"
                               f"{list(node.shape)}, made at {node.origin or 'an unknown line'}); "
                               f"its result is on the path from a differentiated argument to the "
                               f"output{where()}")
    if rule == ():
        return [None] * len(node.inputs)
    if op.kind == ELEMENTWISE:
        conjugated = rule == CONJUGATED
        expressions = op.vjp if conjugated else rule

        def seen(value: Tracer) -> Tracer:
            return np.conjugate(value) if conjugated and value.dtype.kind == "c" else value
        names = {"g": g, "y": seen(fresh(node)), "np": np}
        names.update({f"x{k}": seen(fresh(x)) for k, x in enumerate(node.inputs)})
        return [None if expression is None else eval(_compiled(expression), names)
                for expression in expressions]
    return RULES[rule](node, g)


def _fit(value, target) -> Tracer:
    """A contribution as a cotangent of `target`: its shape (summed over broadcast axes), its
    dtype (a complex contribution to a real value: its real part, autodiff/complexes.py)."""
    if not isinstance(value, Tracer):
        value = fresh(current().constant(value, target.dtype))
    value = unbroadcast(value, target.shape) if value.shape != target.shape else value
    if value.shape != target.shape:
        value = fresh(current().emit("broadcast_to", [value.node], {"shape": target.shape}))
    if value.dtype != target.dtype:
        value = value.astype(target.dtype)
    return value


def backward(nodes, seeds: dict, wrt: list) -> list:
    """Cotangents of the `wrt` nodes given `seeds` (output node id -> cotangent Tracer), or None
    for a node no output depends on. `nodes`: the forward graph's nodes in order."""
    ctx = current()
    sources = {n.id for n in wrt}
    path = _between(nodes, sources, set(seeds))
    on_path = {n.id for n in path} | sources
    cotangent = dict(seeds)
    saved = ctx.derived_from
    try:
        for node in reversed(path):
            g = cotangent.get(node.id)
            if g is None or node.id in sources and not node.inputs:
                continue
            ctx.derived_from = f"{node.origin} (gradient)" if node.origin else "(gradient)"
            for x, value in zip(node.inputs, _contributions(node, g)):
                if value is None or x.id not in on_path:
                    continue
                value = _fit(value, x)
                previous = cotangent.get(x.id)
                cotangent[x.id] = value if previous is None else previous + value
    finally:
        ctx.derived_from = saved
    return [cotangent.get(n.id) for n in wrt]
