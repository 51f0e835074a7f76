"""Softmax's denominator beside its maximum: `sum(exp(x - max(x)))` written `expsum(x)`.

Softmax and log-sum-exp reduce x twice, the second time through the first's result:
`m = x.max(axes)`, then `exp(x - m).sum(axes)`. A kernel that cannot hold x's rows on chip
(columns, which CUDA's kernels walk from memory; rows longer than CostModel.max_row) reads x
once for each, or runs the two as separate kernels. `expsum(x)` is the same value reduced in one
pass: a running maximum and a sum scaled to it (backends/accumulators.py), so the maximum and the
sum are two reductions over x that no longer depend on each other and share one pass, one
two-stage kernel, one split.

The value is the same function of x (the interpreter computes it as written); a kernel rounds it
in another order, as every parallel sum does: each step scales the sum by exp(old max - new max).
Where the rows stay on chip (rows kernels) nothing is read twice, and the rewrite is not made.
Like split.py and unroll.py, a choice of how to compute, made before `simplify`.
"""
from __future__ import annotations

from .graph import Graph, Node
from .passes import Rewriter


def online_sums(graph: Graph, max_row: int, extent=lambda size: size) -> Graph:
    """`graph` with each softmax denominator a kernel would read x again for (reduced axes not
    the last, or rows longer than `max_row` elements, each extent counted by `extent`: a shape
    class's stand-ins) written as expsum; the graph itself where there is none."""
    chosen = {node.id: source for node in graph.nodes
              if (source := _denominator_of(node)) is not None
              and _read_twice(node, max_row, extent)}
    if not chosen:
        return graph
    rewriter = Rewriter(graph)
    return rewriter.each(lambda node, inputs: rewriter.make(
        node, "expsum", (rewriter.mapping[chosen[node.id].id],),
        {"axes": tuple(node.attrs["axes"])}) if node.id in chosen else None)


def _denominator_of(node: Node) -> Node | None:
    """x where `node` is sum(exp(x - max(x))) over the max's axes (x a float array, the max
    broadcast back onto the rows it reduced), else None."""
    if node.op != "sum" or node.attrs.get("product") or not node.inputs:
        return None
    exp = node.inputs[0]
    if exp.op != "exp" or exp.dtype != node.dtype:
        return None
    difference = exp.inputs[0]
    if difference.op != "subtract":
        return None
    x, shifted = difference.inputs
    axes = tuple(node.attrs["axes"])
    if x.dtype.kind != "f" or x.dtype != node.dtype or difference.shape != x.shape or not axes:
        return None
    peak = shifted
    while peak.op in ("reshape", "broadcast_to"):
        peak = peak.inputs[0]
    if peak.op != "max" or peak.inputs[0].id != x.id or tuple(peak.attrs["axes"]) != axes:
        return None
    if not _aligned(shifted, peak, x.shape, axes):
        return None
    return x


def _aligned(shifted: Node, peak: Node, shape: tuple, axes: tuple) -> bool:
    """Whether `shifted` (the max `peak`, reshaped and broadcast) puts each row's maximum onto
    that row of `shape`: kept as keepdims would, or, unreshaped, where the reduced axes lead
    (NumPy aligns shapes from the right)."""
    if shifted is peak:
        return axes == tuple(range(len(axes)))
    kept = tuple(1 if d in axes else s for d, s in enumerate(shape))
    node = shifted
    while node is not peak:
        if node.op == "reshape" and node.shape != kept:
            return False
        if node.op == "broadcast_to" and node.shape != shape:
            return False
        node = node.inputs[0]
    return True


def _read_twice(node: Node, max_row: int, extent) -> bool:
    """Whether a kernel reducing `node`'s rows would read them again for the sum: reduced axes
    not the last ones, or rows longer than a kernel holds."""
    shape, axes = node.inputs[0].shape, tuple(node.attrs["axes"])
    if axes != tuple(range(len(shape) - len(axes), len(shape))):
        return True
    inner = 1
    for a in axes:
        inner *= extent(shape[a])
    return inner > max_row
