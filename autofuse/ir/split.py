"""Total reductions of arrays whose rows another reduction reduces, split into rows then the rest.

A loss such as `-(t * (z - lse)).sum()` sums over every axis of an array whose rows the softmax
already reduces (`z.max(-1)`, `e.sum(-1)`). A reduction over all axes and one over the last axes
cannot share a kernel (fusion/legality.py): the loss would be a third pass over the rows. Written
as `sum(sum(x, rows), rest)`, its first part reduces over the same rows and joins the softmax's
rows kernel; only the per-row partial results (one value a row) are left for a small kernel.

Sums, maxima and minima of floats only: their order of evaluation is a kernel's choice anyway
(every backend reduces in its own order), while integer sums would change their result dtype.
Like products.py and unroll.py, a choice of how to compute, made before `simplify`.
"""
from __future__ import annotations

from .graph import Graph, Node
from .ops import REDUCE
from .passes import Rewriter

SPLIT = ("sum", "max", "min")


def split_total_reductions(graph: Graph) -> Graph:
    """`graph` with each splittable reduction written as rows first, then the rest (see the
    module docstring); the graph itself where there is none."""
    rows = _row_reductions(graph)
    chosen = {node.id: axes for node in graph.nodes
              if (axes := _rows_of(node, rows)) is not None}
    if not chosen:
        return graph
    rewriter = Rewriter(graph)
    return rewriter.each(lambda node, inputs: _split(rewriter, node, inputs[0], chosen[node.id])
                         if node.id in chosen else None)


def _row_reductions(graph: Graph) -> dict:
    """Input shape -> the trailing axes some reduction of that shape reduces over (the rows)."""
    found: dict = {}
    for node in graph.nodes:
        if node.kind != REDUCE or not node.inputs:
            continue
        shape, axes = node.inputs[0].shape, tuple(node.attrs["axes"])
        ndim = len(shape)
        if axes and 0 < axes[0] and axes == tuple(range(axes[0], ndim)):
            found.setdefault(shape, axes)
    return found


def _rows_of(node: Node, rows: dict):
    """The rows to reduce first where `node` reduces over them and more leading axes, else None."""
    if node.op not in SPLIT or node.attrs.get("product") or not node.inputs:
        return None
    source = node.inputs[0]
    if source.dtype.kind != "f" or node.dtype != source.dtype or source.size == 0:
        return None
    inner = rows.get(source.shape)
    axes = tuple(node.attrs["axes"])
    if inner is None or axes == inner or not set(inner) < set(axes):
        return None
    return inner


def _split(rewriter: Rewriter, node: Node, source: Node, inner: tuple) -> Node:
    partial = rewriter.make(node, node.op, (source,), {"axes": inner})
    leading = [a for a in node.attrs["axes"] if a not in inner]
    attrs = node.attrs.as_dict()
    attrs["axes"] = tuple(leading)
    return rewriter.make(node, node.op, (partial,), attrs)
