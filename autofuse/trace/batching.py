"""Whether a user's function, called once on a stack of rows, computed each row as a call on one
row does: the check behind np.apply_along_axis's single call (and np.vectorize's elementwise one).

Both calls are traced and their ops compared in order: the same op on the same inputs, where a
value made from the row has the stack's extra leading axes (its shape prefixed by them, its axis
attributes shifted past them) and every other value is the same in both. Only ops whose meaning
along the other axes is exactly that qualify: elementwise ops whose row operands have the
result's rank (a row's value broadcast against the row itself would meet the stack's axes
misaligned), reductions, sorts and scans over listed axes, and layout ops with shapes and axes
given in full. Anything else (a reduction over all axes, a matrix product, a gather) is a
difference, and the caller unrolls instead.
"""
from __future__ import annotations

from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE, OPS, REDUCE, SCAN, SORT
from .context import current

_LAYOUT = ("broadcast_to", "transpose", "reshape", "slice", "concatenate", "iota")
_SHIFTED = {
    "axes": lambda value, outer: tuple(a + len(outer) for a in value),
    "axis": lambda value, outer: value + len(outer),
    "perm": lambda value, outer: tuple(range(len(outer))) + tuple(p + len(outer) for p in value),
    "shape": lambda value, outer: tuple(outer) + tuple(value),
    "start": lambda value, outer: (0,) * len(outer) + tuple(value),
    "step": lambda value, outer: (1,) * len(outer) + tuple(value),
}


def recorded(call):
    """(call(), the nodes the trace recorded while it ran)."""
    nodes = current().builder.nodes
    start = len(nodes)
    result = call()
    return result, list(nodes[start:])


def row_by_row(row_nodes: list[Node], stack_nodes: list[Node], row: Node, stack: Node,
               outer: tuple, row_result: Node, stack_result: Node) -> str | None:
    """None where `stack_nodes` (traced from `stack`, shape outer + row's) compute, row by row,
    what `row_nodes` compute from `row`, ending in the results; else the first difference."""
    if len(row_nodes) != len(stack_nodes):
        return f"{len(row_nodes)} ops on a row, {len(stack_nodes)} on the stack"
    batched = {row.id: stack.id}
    same = {}
    for r, s in zip(row_nodes, stack_nodes):
        if r.op != s.op or r.dtype != s.dtype or len(r.inputs) != len(s.inputs):
            return f"{r.op} on a row, {s.op} on the stack"
        kinds = []
        for a, b in zip(r.inputs, s.inputs):
            if batched.get(a.id) == b.id:
                kinds.append("row")
            elif same.get(a.id) == b.id or a is b:
                kinds.append("same")
            else:
                return f"{r.op} reads other values on the stack"
        if "row" not in kinds and r.shape == s.shape and r.attrs == s.attrs:
            same[r.id] = s.id
            continue
        reason = _batched_op(r, s, kinds, outer)
        if reason is not None:
            return reason
        batched[r.id] = s.id
    if batched.get(row_result.id) != stack_result.id:
        return "the stack's result is not the rows' results"
    return None


def _batched_op(r: Node, s: Node, kinds: list, outer: tuple) -> str | None:
    kind = OPS[r.op].kind
    if kind not in (ELEMENTWISE, REDUCE, SORT, SCAN) and r.op not in _LAYOUT:
        return f"{r.op} is not computed row by row"
    if s.shape != tuple(outer) + tuple(r.shape):
        return f"{r.op} gives {s.shape} on the stack, {r.shape} on a row"
    expected = {key: _SHIFTED[key](value, outer) if key in _SHIFTED else value
                for key, value in r.attrs.as_dict().items()}
    if expected != s.attrs.as_dict():
        return f"{r.op} works over other axes on the stack ({s.attrs.as_dict()})"
    if kind == ELEMENTWISE or r.op in ("broadcast_to", "concatenate"):
        for which, value in zip(kinds, r.inputs):
            if which == "row" and len(value.shape) != len(r.shape):
                return f"{r.op} broadcasts a value of the row against the row"
    return None
