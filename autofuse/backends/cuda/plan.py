"""Which kernel a fusion group becomes, and why: decisions only, no text.

`choose(group, tuning, device, simulator)` returns a `Plan`: the strategy, the sizes it was
chosen from, and the reason in words (shown as `kernels[i].reason`). Each strategy's own finer
choices (vector widths, tiles) are made by its emitter's plan function: emit/strip.plan,
emit/two_stage.plan, emit/matmul_tiles.refusal.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...fusion.group import Group, outer_shape
from .device import Device
from .emit import two_stage
from .tuning import Tuning


@dataclass(frozen=True)
class Plan:
    strategy: str                     # "matmul", "pointwise", "split", "two-stage", "rows", "columns"
    reason: str
    shape: tuple = ()                 # reductions: the reduced space, its reduced axes,
    axes: tuple = ()
    outer: int = 0                    # ... the outputs, and the elements each reduces
    inner: int = 0
    row_outputs: tuple = ()           # ... outputs of the reduced space's shape (node ids)
    layout: two_stage.Plan | None = None   # two-stage: its layout


def choose(group: Group, tuning: Tuning, device: Device, simulator: bool = False,
           dynamic: bool = False) -> Plan:
    """`dynamic`: the kept sizes may vary (autofuse/dynamic/): no choice by their count."""
    if group.kind == "output":
        return Plan("matmul", "a matrix product with its prologue and epilogue")
    if group.kind != "input":
        chosen = Plan("pointwise", f"one pass over its output's elements ({group.kind} group)")
    else:
        chosen = _reduction(group, tuning, device, simulator, dynamic)
    # the product planner's words (ir/products.py) where the group computes lowered products
    products = [n.attrs["product"] for n in group.nodes if n.attrs.get("product")]
    if products:
        chosen = replace(chosen, reason=f"{'; '.join(products)} ({chosen.reason})")
    return chosen


def _reduction(group: Group, tuning: Tuning, device: Device, simulator: bool,
               dynamic: bool = False) -> Plan:
    shape, axes = group.reduce_space
    axes = tuple(axes)
    outer_axes = [d for d in range(len(shape)) if d not in axes]
    outer = int(np.prod([shape[d] for d in outer_axes], dtype=np.int64))
    inner = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    trailing = axes == tuple(range(len(shape) - len(axes), len(shape)))
    dependent = any(group.depends_on_reduction(n.inputs[0]) for n in group.reductions)
    row_outputs = tuple(n.id for n in group.outputs.values()
                        if n.shape == shape and shape != outer_shape(shape, axes))
    threshold = 256 if simulator else tuning.split_elements
    # NOTE: outputs the size of the reduced space (y of `y, y.sum()`) are written as the split
    # loop goes, unless they need a reduction's result (x / x.sum()): that needs all the grid's
    # partials first, so such a group stays one block (the fusion pass keeps rows that long
    # apart).
    independent = not dependent and \
        not any(group.depends_on_reduction(group.outputs[i]) for i in row_outputs)
    sizes = dict(shape=tuple(shape), axes=axes, outer=outer, inner=inner, row_outputs=row_outputs)
    if dynamic and trailing:
        return Plan("rows", f"the reduced axes are the last ({inner} elements a row) and the "
                    f"rows vary in number: a block a row, the row held on chip", **sizes)
    if outer == 1 and inner >= threshold and independent:
        return Plan("split", f"one output over {inner} elements (at least {threshold}): every "
                    f"block takes a share, the last combines", **sizes)
    layout = two_stage.plan(shape, axes, outer, inner, tuning, device, simulator) if independent else None
    if layout:
        return Plan("two-stage", f"{outer} outputs too few to fill the GPU over {inner} elements "
                    f"each: the reduced extent cut into {layout.chunks} chunks across blocks",
                    layout=layout, **sizes)
    if trailing and (inner >= 32 or outer < tuning.rows_per_sm * device.sms):
        return Plan("rows", f"the reduced axes are the last ({inner} elements a row): a block "
                    f"a row, the row held on chip", **sizes)
    why = "the kept axes are the last" if not trailing else \
        f"{outer} rows of {inner} elements, too short for a block each"
    return Plan("columns", f"{why}: a thread an output, the reduced axes looped", **sizes)
