"""Which values may share a kernel with a sort: the legality rules of the "sort" group kind.

A sort group iterates over the rows of one sort (or argsort) along its last axis: each row is
loaded (its elementwise and layout producers computed as it is read), sorted on chip, and then
the group's other members are computed from the sorted row: values of the row's own shape at
the same index (`np.sort(x) * 2`), and per-row values (the row's shape without its last axis,
or with it as 1) read from fixed positions of the row through slices of its last axis and
elementwise ops (a median's or quantile's gather and interpolation). Anything else that reads a
sort (a transpose of it, another row's values, a reduction) reads it from memory. Rows longer
than `CostModel.max_sort_row` are sorted alone: neither producers nor consumers join them (on the
GPU a library sort reads and writes whole stored arrays).
"""
from __future__ import annotations

from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE, MATMUL, REDUCE, SORT
from .cost import CostModel


def row_shapes(sort: Node) -> tuple[tuple, tuple, tuple]:
    """(the sorted shape, a row's value shape, its keepdims shape)."""
    shape = sort.shape
    return shape, shape[:-1], shape[:-1] + (1,)


def in_row(index: tuple, row_index: tuple, shape: tuple) -> bool:
    """Whether a kernel's `index` into the sorted `shape` (an expression a coordinate) is in the
    row at `row_index`: each coordinate of the other axes the row's own, or 0 where the axis has
    one element (which index maps write as "0")."""
    return all(i == r or size == 1 for i, r, size in zip(index[:-1], row_index, shape[:-1]))


def long_rows(sort: Node, cost: CostModel) -> bool:
    return sort.shape[-1] > cost.max_sort_row


def sort_into(p: Node, g, users: dict, cost: CostModel, descendants) -> str | None:
    """May the sort `p` join its consumers' group `g` (making it a sort group)?"""
    if g.matmul is not None or g.reductions or g.sort is not None:
        what = "a matmul" if g.matmul is not None else (
            "a reduction" if g.reductions else "another sort")
        return f"{{p}} is a sort, and its consumer's kernel holds {what}; it is sorted apart"
    if long_rows(p, cost):
        return (f"its rows ({p.shape[-1]} elements) are longer than a sort holds on chip (at "
                f"most {cost.max_sort_row}), so the sorted array is stored and read back")
    shape, outer, keep = row_shapes(p)
    allowed = {shape, outer, keep}
    if g.root.shape not in allowed:
        return (f"the consumer iterates over {g.root.shape}, neither the sorted rows {shape} nor "
                f"one value a row {outer}")
    derived = {p.id}
    for node in sorted(descendants(p, g, users), key=lambda n: n.id):
        reason = _row_local(node, derived, shape, outer, keep)
        if reason is not None:
            return reason
        derived.add(node.id)
    return None


def _row_local(node: Node, derived: set, shape: tuple, outer: tuple, keep: tuple) -> str | None:
    """Whether `node`, reading values derived from the sorted row (`derived`), needs only this
    row: None if so, else why not."""
    if node.shape not in (shape, outer, keep):
        return (f"the sorted value reaches {node.op} with shape {node.shape}, which is neither the "
                f"sorted rows nor one value a row")
    sources = [s for s in node.inputs if s.id in derived]
    if node.op == "slice":
        source = node.inputs[0]
        if source.shape != shape:
            return "a value a row of the sorted rows is sliced, which would need other rows"
        if any((start, step, count) != (0, 1, size) for start, step, count, size in
               zip(node.attrs["start"][:-1], node.attrs["step"][:-1], node.shape[:-1],
                   source.shape[:-1])):
            return "the sorted value is sliced along other axes than its rows"
        return None
    if node.op in ("reshape", "broadcast_to") or node.kind == ELEMENTWISE:
        # NOTE: NumPy aligns shapes from the right: a row value of shape `outer` broadcast
        # against the sorted rows would read another row's value; `keep` (…, 1) is aligned.
        fitting = {shape: (shape, keep), outer: (outer, keep), keep: (keep, outer)}[node.shape] \
            if node.op == "reshape" else {shape: (shape, keep)}.get(node.shape, (node.shape,))
        for source in sources:
            if source.shape not in fitting + ((),):
                return (f"a value of shape {source.shape} from the sorted rows meets {node.op} of "
                        f"shape {node.shape} along other axes than its rows")
        return None
    return f"the sorted value reaches {node.op}, which would need other rows"


def into_sort_group(p: Node, g, cost: CostModel) -> str | None:
    """May `p`, not a sort, join the sort group `g` (computed as the row is loaded, or from it)?"""
    if p.kind == REDUCE:
        return "a reduction feeding a sort kernel is materialized (the sort needs whole rows)"
    if p.kind in (MATMUL, SORT):
        return f"{{p}} ({p.op}) is computed by its own kernel before the sort"
    if long_rows(g.sort, cost):
        return (f"the sort's rows ({g.sort.shape[-1]} elements) are longer than a sort holds on "
                f"chip (at most {cost.max_sort_row}): it sorts a stored array")
    return None
