"""The legality rules of scatter groups: one scatter-add (np.add.at, np.bincount, np.histogram)
with the producers of its indices and values in one kernel, iterating over the values.

A scatter group walks the values (k, *rest) and adds each at its index along the base's first
axis. Producers of the indices and values that are computed where they are read (elementwise
ops, index maps, gathers, iotas) fuse into it: `np.bincount(((x - lo) * scale).astype(int))`
reads x once. The base is copied into the result whole before any value lands, so it is read
from memory, unless it is a fill (a broadcast of one constant, as np.zeros makes), which the
kernel writes itself. A table gathered at computed indices (a histogram's edges) is stored
rather than computed again for every value. Nothing reads a scatter's result inside a kernel: it is complete only once
every value is added, so its readers read it from memory. Reductions, sorts, scans and matrix
products feeding a scatter are materialized, and scatter kernels are not merged with others.
"""
from __future__ import annotations

from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE, LAYOUT, SCATTER
from ..ir.printer import is_inline_constant


def is_fill(node: Node) -> bool:
    """Whether `node` is one constant broadcast to its shape (np.zeros, np.full)."""
    return node.op == "broadcast_to" and is_inline_constant(node.inputs[0])


def value_shape(scatter: Node) -> tuple:
    """The shape a scatter kernel iterates over: its values'."""
    return scatter.inputs[2].shape


def scatter_reason(p: Node, g, readers: list, is_output: bool) -> str | None:
    """May `p` be computed inside `g` where a scatter is involved (p is one, or g holds one)?
    `readers`: the members of `g` that read p. None if so, else why not."""
    if p.kind == SCATTER:
        return ("{p} is a scatter-add: it is complete only once every value is added, so its "
                "readers read it from memory")
    scatter = g.scatter
    as_base = [r for r in readers if r.id == scatter.id and r.inputs[0].id == p.id]
    if as_base:
        if is_fill(p) and len(readers) == 1 and not is_output:
            return None
        return ("the scatter-add's base is copied into its result whole before any value is "
                "added: {p} is stored by its own kernel")
    if is_output:
        return "{p} is also a result of the function; a scatter kernel writes only its sums"
    if p.kind not in (ELEMENTWISE, LAYOUT) and p.op != "iota":
        return f"{{p}} ({p.op}) is computed by its own kernel before the scatter-add"
    if any(r.op == "gather" and r.inputs[0].id == p.id for r in readers) and not is_fill(p):
        # NOTE: a gather reads its table at a computed index, so a table computed in the kernel
        # is computed again for every read (a histogram's edges: twice a value).
        return ("{p} is a table read at computed indices: it is computed once and stored rather "
                "than again for every value")
    return None


def scatters_merge_reason(groups: list) -> str | None:
    """Scatter kernels are not merged with other kernels (horizontal fusion)."""
    if len(groups) > 1 and any(g.scatter is not None for g in groups):
        return "a scatter-add kernel is not merged with other kernels"
    return None
