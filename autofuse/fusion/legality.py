"""The legality table: may producer `p` join consumer group `g`? None if so, else the reason why not.

Reasons are user-facing sentences; "{p}" and "{c}" stand for the producer's and the consumer's
value names, filled in when the fused program is printed.
"""
from __future__ import annotations

import math

from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE, LAYOUT, MATMUL, REDUCE
from .cost import CostModel
from .group import Group, keepdims_shape, outer_shape

OPERAND_LAYOUT = ("transpose", "broadcast_to", "reshape", "slice")


def axes_text(axes: tuple) -> str:
    return f"axis {axes[0]}" if len(axes) == 1 else f"axes {axes}"


def descendants(p: Node, g: Group, users: dict) -> list[Node]:
    """Members of `g` that read `p`, directly or through other members."""
    found, stack, seen = [], [p], {p.id}
    while stack:
        node = stack.pop()
        for user in users.get(node.id, ()):
            if user.id in g.members and user.id not in seen:
                seen.add(user.id)
                found.append(user)
                stack.append(user)
    return found


def read_maps(p: Node, g: Group, users: dict) -> set:
    """The distinct index maps through which members of `g` read `p` (elementwise readers read
    it at their own index; layout readers through their attributes)."""
    maps = set()
    for user in users.get(p.id, ()):
        if user.id not in g.members:
            continue
        if user.kind in (ELEMENTWISE, REDUCE, MATMUL) or (user.op == "setslice"
                                                          and user.inputs[0].id == p.id):
            maps.add(("identity",))
        else:
            maps.add((user.op, user.attrs))
    return maps


def operand_chain(g: Group) -> set:
    """Ids of members that feed the group's matmul operands (layout ops read by index map)."""
    matmul = g.matmul
    chain, stack = set(), [n for n in matmul.inputs if n.id in g.members]
    while stack:
        node = stack.pop()
        if node.id not in chain:
            chain.add(node.id)
            stack.extend(n for n in node.inputs if n.id in g.members)
    return chain


def _stores(g: Group, shape: tuple) -> bool:
    """Whether `g`'s iterations write a result of `shape`: one of its own shapes, or a 0-d value
    written by every iteration, of which an empty iteration space has none."""
    spaces = g.space_shapes()
    if shape in spaces:
        return True
    return shape == () and all(math.prod(space) > 0 for space in spaces)


def can_fuse(p: Node, g: Group, users: dict, is_output: bool, cost: CostModel) -> str | None:
    if len(g.members) >= cost.max_ops:
        return (f"the consumer's kernel already holds {len(g.members)} ops, the most one kernel "
                f"may hold ({cost.max_ops})")
    if is_output and not _stores(g, p.shape):
        return (f"{{p}} is also a result of the function, and its shape {p.shape} is outside the "
                f"consumer's iteration space")
    if p.kind in (ELEMENTWISE, LAYOUT):
        maps = read_maps(p, g, users)
        if len(maps) > 1:
            return (f"{{p}} is read through {len(maps)} different index maps (shifted slices, a "
                    f"transpose); computing it once and storing it beats recomputing it for each, "
                    f"which compounds across chained stencils")
    if p.kind == MATMUL:
        return _matmul_into(p, g, users)
    if g.matmul is not None:
        return _into_output_group(p, g, users)
    if p.kind == REDUCE:
        return _reduction_into(p, g, users, cost)
    return None


def _matmul_into(p: Node, g: Group, users: dict) -> str | None:
    if g.matmul is not None:
        return "two matmuls cannot share one kernel"
    if g.reductions:
        return "a matmul result feeding a reduction is materialized (the reduction needs whole rows)"
    if g.root.shape != p.shape:
        return (f"the consumer iterates over {g.root.shape}, not over the matmul's output "
                f"{p.shape}")
    for node in descendants(p, g, users):
        if node.kind != ELEMENTWISE or node.shape != p.shape:
            return (f"the matmul result reaches {node.op} with shape {node.shape}; an epilogue must "
                    f"use each product element where it is computed")
    return None


def _into_output_group(p: Node, g: Group, users: dict) -> str | None:
    chain = operand_chain(g) | {g.matmul.id}
    feeds_operand = any(u.id in chain for u in users.get(p.id, ()) if u.id in g.members)
    if feeds_operand:
        if p.op in OPERAND_LAYOUT:
            return None
        return ("elementwise work on a matmul operand would be redone for every output tile; "
                "it is materialized")
    if p.kind == REDUCE:
        return "a reduction feeding a matmul epilogue is materialized"
    return None


def _reduction_into(p: Node, g: Group, users: dict, cost: CostModel) -> str | None:
    shape, axes = p.inputs[0].shape, p.attrs["axes"]
    space = g.reduce_space
    if space is not None and space != (shape, axes):
        other_shape, other_axes = space
        return (f"a reduction over {axes_text(axes)} of {shape} feeds a reduction over "
                f"{axes_text(other_axes)} of {other_shape}")
    allowed = {shape, outer_shape(shape, axes), keepdims_shape(shape, axes)}
    if space is None and g.root.shape not in allowed:
        return (f"the consumer iterates over {g.root.shape}, which is neither the reduced shape "
                f"{shape} nor its result {outer_shape(shape, axes)}")
    row_phase = False
    readers = descendants(p, g, users)
    for node in readers:
        if node.kind == REDUCE:
            row_phase = True
            continue
        if node.shape not in allowed:
            return (f"the reduced value reaches {node.op} with shape {node.shape}, outside the rows "
                    f"being reduced")
        if _misaligned(node, {p.id} | {n.id for n in readers}, shape, axes):
            return (f"the reduced value (shape {outer_shape(shape, axes)}) is broadcast against "
                    f"{node.shape} along other axes than its rows, so it would need other rows")
        row_local = node.kind == ELEMENTWISE or node.op in ("reshape", "broadcast_to")
        if not row_local:
            return f"the reduced value reaches {node.op}, which would need other rows"
        if node.shape == shape and shape != outer_shape(shape, axes):
            row_phase = True
    inner = 1
    for a in axes:
        inner *= shape[a]
    if row_phase and inner > cost.max_row:
        return (f"its rows ({inner} elements) do not fit on chip (at most {cost.max_row}), so the "
                f"reduced value is materialized before it is used across the row")
    return None


def _misaligned(node: Node, derived: set, shape: tuple, axes: tuple) -> bool:
    """Whether `node` broadcasts a value of the reduction's result shape against the reduced
    shape, which NumPy aligns from the right: onto the rows only where the reduced axes lead
    (`x - x.sum(0)`), not otherwise (`x - x.max(1)` with x square reads the max of another row)."""
    outer = outer_shape(shape, axes)
    broadcasts = node.kind == ELEMENTWISE or node.op == "broadcast_to"
    if not broadcasts or node.shape == outer or tuple(axes) == tuple(range(len(axes))):
        return False
    return any(s.id in derived and s.shape == outer for s in node.inputs)


def merged_reason(g: Group, users: dict, cost: CostModel) -> str | None:
    """Whether a group formed by merging others still satisfies the reduction rules."""
    for reduction in g.reductions:
        reason = _reduction_into(reduction, g, users, cost)
        if reason is not None:
            return reason
    return None


__all__ = ["can_fuse", "merged_reason", "descendants", "axes_text", "LAYOUT"]
