"""Short reductions of broadcast products that feed other reductions, written out as elementwise
sums of slices.

`((x[:, None, :] - c[None, :, :]) ** 2).sum(-1).argmin(-1)` reduces over the short last axis
first (the point's dimensions), then over the centroids. Two reductions over different axes
cannot share a kernel (fusion/legality.py), so the distances would be written to memory and
read back. Over an axis of at most UNROLL_LIMIT elements, the first reduction becomes
`t0 + t1 + ...` (maximum, minimum, multiply for max, min, prod), where t_j is its operand's
elementwise chain recomputed on the j-th slices of its inputs: an elementwise value the second
reduction's kernel computes where it reads it, and the distances never exist in memory.

The sum runs in element order, the order every kernel's loop over such an axis takes; like
product lowering (products.py) it is a choice of how to compute, made before `simplify`.
"""
from __future__ import annotations

from .graph import Graph, Node
from .ops import ELEMENTWISE, REDUCE
from .passes import Rewriter, dead_code

UNROLL_LIMIT = 16       # reduced extents written out, at most (each a copy of the chain)
CHAIN_LIMIT = 8         # elementwise ops of the operand's chain, at most
COMBINE = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}


def unroll_short_reductions(graph: Graph) -> Graph:
    """`graph` with each short reduction that feeds another reduction written out (see the
    module docstring); the graph itself where there is none."""
    users: dict[int, list[Node]] = {}
    for node in graph.nodes:
        for source in node.inputs:
            users.setdefault(source.id, []).append(node)
    found = [n for n in graph.nodes if _unrollable(n, users)]
    if not found:
        return graph
    rewriter = Rewriter(graph)
    chosen = {n.id for n in found}
    return dead_code(rewriter.each(lambda node, inputs: _written_out(rewriter, node, inputs[0])
                                   if node.id in chosen else None))


def _unrollable(node: Node, users: dict) -> bool:
    # NOTE: products lowered to reductions (products.py) are that planner's: left as they are.
    if node.op not in COMBINE or len(node.attrs["axes"]) != 1 or node.attrs.get("product"):
        return False
    source = node.inputs[0]
    (axis,) = node.attrs["axes"]
    if source.dtype.kind != "f" or node.dtype != source.dtype or \
            not 2 <= source.shape[axis] <= UNROLL_LIMIT or _chain_size(source) > CHAIN_LIMIT:
        return False
    # NOTE: only a broadcast product (an operand larger than any array it is computed from):
    # an operand read from memory as it is ((x - x.sum(0)).sum(1)) would be read again for
    # every output of the second reduction.
    product = source.size > 2 * max((n.size for n in _leaves(source)), default=0)
    return product and _feeds_reduction(node, users)


def _feeds_reduction(node: Node, users: dict) -> bool:
    """Whether a reduction reads `node`, directly or through elementwise ops."""
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        for user in users.get(n.id, ()):
            if user.kind == REDUCE:
                return True
            if user.kind == ELEMENTWISE and user.id not in seen:
                seen.add(user.id)
                stack.append(user)
    return False


def _chain_size(node: Node) -> int:
    """Elementwise ops in the chain `_sliced` copies (reshapes it passes through are free)."""
    if node.kind == ELEMENTWISE:
        return 1 + sum(_chain_size(s) for s in node.inputs)
    if node.op == "reshape":
        return _chain_size(node.inputs[0])
    return 0


def _leaves(node: Node) -> list[Node]:
    """The arrays `_sliced` slices: where the elementwise chain (through reshapes) begins."""
    if node.kind == ELEMENTWISE:
        return [leaf for s in node.inputs for leaf in _leaves(s)]
    if node.op == "reshape":
        return _leaves(node.inputs[0])
    return [node]


def _written_out(rewriter: Rewriter, node: Node, source: Node) -> Node:
    (axis,) = node.attrs["axes"]
    keep = tuple(1 if d == axis else s for d, s in enumerate(source.shape))
    total = None
    for j in range(source.shape[axis]):
        term = _sliced(rewriter, node, source, axis, j)
        total = term if total is None else rewriter.make(node, COMBINE[node.op], (total, term))
    if total.shape != keep:
        total = rewriter.make(node, "broadcast_to", (total,), {"shape": keep})
    return rewriter.make(node, "reshape", (total,), {"shape": node.shape})


def _sliced(rewriter: Rewriter, reduction: Node, node: Node, axis: int, j: int) -> Node:
    """Element j of `node` along `axis` (its own axis; size 1 there: kept as it is); slices
    and reshapes made carry `reduction`'s place in the user's source."""
    if axis < 0 or node.shape[axis] == 1:
        return node
    if node.kind == ELEMENTWISE:
        inputs = tuple(_sliced(rewriter, reduction, s, axis - (node.ndim - s.ndim), j)
                       for s in node.inputs)
        return rewriter.make(node, node.op, inputs, node.attrs.as_dict())
    inner = _reshaped_axis(node, axis)
    if inner is not None:
        source = _sliced(rewriter, reduction, node.inputs[0], inner, j)
        shape = tuple(1 if d == axis else s for d, s in enumerate(node.shape))
        return rewriter.make(reduction, "reshape", (source,), {"shape": shape})
    shape = tuple(1 if d == axis else s for d, s in enumerate(node.shape))
    start = tuple(j if d == axis else 0 for d in range(node.ndim))
    return rewriter.make(reduction, "slice", (node,), {"shape": shape, "start": start,
                                                       "step": (1,) * node.ndim})


def _reshaped_axis(node: Node, axis: int) -> int | None:
    """The axis of a reshape's input that `axis` of its output is, where the reshape only adds or
    drops axes of size 1; else None."""
    if node.op != "reshape":
        return None
    source = node.inputs[0]
    sizes = [s for s in node.shape if s != 1]
    if sizes != [s for s in source.shape if s != 1]:
        return None
    rank = sum(1 for s in node.shape[:axis] if s != 1)      # the axis's place among sizes > 1
    places = [d for d, s in enumerate(source.shape) if s != 1]
    return places[rank]
