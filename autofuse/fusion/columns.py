"""Whether a whole-column program is one kernel: reductions over leading or middle axes whose
results the rest of the column reads (softmax or layernorm along axis 0).

A whole-column kernel (CUDA's column tiles) walks its columns once a level of reductions: from
the L2 while they fit, from DRAM past it, and with few columns a block walks long ones alone.
Past the CostModel's bounds the reduced values are stored instead: each level a reduction kernel
of its own that cuts the columns across blocks, the rest one pointwise pass.
"""
from __future__ import annotations

from ..ir.graph import Node
from .cost import CostModel
from .group import axes_text


def column_sizes(node: Node, extent=lambda size: size) -> tuple:
    """(columns, elements a column, bytes of all) of reduction `node`'s operand, each extent
    counted by `extent` (a shape class's stand-ins)."""
    shape, axes = node.inputs[0].shape, tuple(node.attrs["axes"])
    columns, inner = 1, 1
    for d, size in enumerate(shape):
        if d in axes:
            inner *= extent(size)
        else:
            columns *= extent(size)
    return columns, inner, columns * inner * node.inputs[0].dtype.itemsize


def column_reason(p: Node, cost: CostModel) -> str | None:
    """Why a whole-column program (`p` reduces the columns of its operand over leading or middle
    axes, and the rest of the column reads it) is not one kernel (CostModel.max_column_bytes),
    or None."""
    shape, axes = p.inputs[0].shape, tuple(p.attrs["axes"])
    columns, inner, read = column_sizes(p, cost.extent)
    done = ("the reduced value is materialized, each level of reductions a kernel of its own "
            "that cuts the columns across blocks")
    if cost.max_column_bytes and read > cost.max_column_bytes:
        return (f"its columns ({axes_text(axes)} of {shape}, {read} bytes) would be read again "
                f"for each level of reductions, past what a whole-column kernel keeps in cache "
                f"(at most {cost.max_column_bytes} bytes): {done}")
    if columns < cost.column_fill and inner > cost.column_walk:
        return (f"{columns} columns of {inner} elements ({axes_text(axes)} of {shape}) are too "
                f"few to fill the GPU with whole columns a block (under {cost.column_fill}) and "
                f"too long to walk alone (over {cost.column_walk}): {done}")
    return None
