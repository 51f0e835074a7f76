"""The legality rules of scan groups (a kind of XLA's input fusion: one scan, a sequential
dependency along its axis, with its producers and an elementwise epilogue in one kernel).

A scan group holds exactly one scan and iterates over the scan's shape. Producers computed at the
scanned element's index (elementwise ops and index maps) fuse into it, as into a reduction; its
consumers fuse as an epilogue when every member that reads the scanned value, directly or through
other members, is elementwise over the scan's own shape: then each element of the epilogue needs
only the running value at that element, which the kernel holds when it gets there. Everything
else is materialized with the reason: a second scan (its operand would be needed scanned whole),
reductions and matrix products on either side, and layouts of the scanned value (a transpose
or a reversal would read running values not yet or no longer held).
"""
from __future__ import annotations

from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE, MATMUL, REDUCE, SCAN


def _descendants(p: Node, g, users: dict) -> list[Node]:
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


def scan_reason(p: Node, g, users: dict) -> str | None:
    """Whether `p` may be computed inside `g` where a scan is involved (p is one, or g holds
    one): None if so, else why not."""
    if p.kind == SCAN:
        if g.scan is not None and g.scan.id != p.id:
            return ("two scans do not share a kernel: {p} is stored whole before the scan that "
                    "reads it")
        if g.reductions:
            return "a scanned value feeding a reduction is materialized (the reduction needs it whole)"
        if g.matmul is not None:
            return "a scanned value feeding a matrix product is materialized"
        if g.root.shape != p.shape:
            return (f"the consumer iterates over {g.root.shape}, not over the scanned shape "
                    f"{p.shape}")
        for node in _descendants(p, g, users):
            if node.kind != ELEMENTWISE or node.shape != p.shape:
                return (f"the scanned value reaches {node.op} with shape {node.shape}; an epilogue "
                        f"must use each running value at its own element")
        return None
    if p.kind == REDUCE:
        return "a reduction feeding a scan is materialized (the scan reads its result whole)"
    if p.kind == MATMUL:
        return "a matrix product feeding a scan is materialized"
    return None


def scans_merge_reason(groups: list) -> str | None:
    """Scan kernels are not merged with other kernels (horizontal fusion)."""
    if len(groups) > 1 and any(g.scan is not None for g in groups):
        return "a scan kernel is not merged with other kernels"
    return None
