"""Which kernel a fusion group becomes, and why: decisions only, no text.

`choose(group, tuning, device, simulator)` returns a `Plan`: the strategy, the sizes it was
chosen from, and the reason in words (shown as `kernels[i].reason`). Each strategy's own finer
choices (vector widths, tiles) are made by its emitter's plan function: emit/strip.plan,
emit/two_stage_plan.plan (and plan_class), emit/tiles.plan_rows and plan_columns,
emit/matmul_tiles.refusal.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...errors import UnsupportedError
from ...fusion.group import Group, outer_shape
from ...ir.ops import ELEMENTWISE, OPS
from ...ir.products import counted_extent
from .device import Device
from .emit import attention_plan, runs, scans, sorting, staged_plan, tiles, two_stage_plan
from .tuning import Tuning


@dataclass(frozen=True)
class Plan:
    strategy: str                     # "matmul", "pointwise", "split", "two-stage", "rows",
    #                                   "row tiles", "column tiles", "columns", "sort",
    #                                   "attention", scans' own
    reason: str
    shape: tuple = ()                 # reductions: the reduced space, its reduced axes,
    axes: tuple = ()
    outer: int = 0                    # ... the outputs, and the elements each reduces
    inner: int = 0
    row_outputs: tuple = ()           # ... outputs of the reduced space's shape (node ids)
    layout: two_stage_plan.Plan | None = None   # two-stage, row and column tiles: layout
    sorting: sorting.Plan | None = None    # sort groups: how rows are sorted
    scan: scans.Plan | None = None         # scan groups: emit/scans.py's plan
    staged: staged_plan.Plan | None = None  # staged products: emit/staged_plan.py's plan
    attention: object = None          # attention: emit/attention_plan.py's plan (or MmaPlan)
    run: runs.Run | None = None       # columns and two-stage columns: a thread's run of outputs
    scalar: bool = False              # split: an element a thread a step, no vectors (its
    #                                   arithmetic, not its loads, bounds it)


def _refuse_complex_scan(group: Group) -> None:
    """A scan's warp shuffles and look-back atomics move ints and floats only: complex scans have
    no CUDA kernel (the CPU backend runs them)."""
    for node in group.nodes:
        if node.op == "scan" and node.dtype.kind == "c":
            raise UnsupportedError(f"np.{node.attrs['ufunc']}.accumulate (cumsum, cumprod) of "
                                   f"{node.dtype} values has no CUDA kernel; use backend='cpu'"
                                   f"{'' if node.origin is None else ' (at ' + node.origin + ')'}")


def choose(group: Group, tuning: Tuning, device: Device, simulator: bool = False,
           dynamic: bool = False, strides: dict | None = None, varying: tuple = ()) -> Plan:
    """`dynamic`: the kept sizes may vary (autofuse/dynamic/): no choice by their count, and no
    staged product kernel (its sizes are in its text): the matmul kernel, sizes as arguments.
    `varying`: a class build's (size, stand-in) pairs: a kept extent that varies is counted as
    its stand-in, so that every build of the class chooses alike."""
    if group.kind == "output" and attention_plan.marked(group):
        chosen = attention_plan.choose(group, tuning, device, simulator)
        return Plan("attention", chosen.reason, attention=chosen)
    if group.kind == "output" and staged_plan.marked(group) and not dynamic:
        chosen = staged_plan.choose(group, strides or {}, tuning, device, simulator)
        return Plan("staged", f"{group.matmul.attrs['product']} ({chosen.reason})", staged=chosen)
    if group.kind == "output":
        return Plan("matmul", "a matrix product with its prologue and epilogue")
    if group.kind == "sort":
        rows, reason = sorting.plan(group, tuning, device.shared_per_block, simulator)
        return Plan("sort", reason, sorting=rows)
    if group.kind == "scatter":
        return _scatter(group)
    if group.kind == "scan":
        _refuse_complex_scan(group)
        chosen = scans.plan(group, tuning, device, simulator)
        return Plan(chosen.strategy, chosen.reason, scan=chosen)
    if group.kind != "input":
        chosen = Plan("pointwise", f"one pass over its output's elements ({group.kind} group)")
    else:
        chosen = _reduction(group, tuning, device, simulator, dynamic, strides or {}, varying)
    # the product planner's words (ir/products.py) where the group computes lowered products
    products = [n.attrs["product"] for n in group.nodes if n.attrs.get("product")]
    if products:
        chosen = replace(chosen, reason=f"{'; '.join(products)} ({chosen.reason})")
    return chosen


def _scatter(group: Group) -> Plan:
    """A scatter-add: atomics over a grid-stride loop of the values (emit/scatter.py); complex
    values have none (an atomic adds one number)."""
    node = group.scatter
    if node.dtype.kind == "c":
        raise UnsupportedError(f"np.add.at (a scatter-add) of {node.dtype} values has no CUDA "
                               f"kernel (its atomics add one real number); use backend='cpu'"
                               f"{'' if node.origin is None else ' (at ' + node.origin + ')'}")
    values = node.inputs[2]
    return Plan("scatter", f"{values.size} values added at computed indices into {node.size} "
                f"elements: an atomic add each in a grid-stride loop, the last block writing "
                f"base plus sums")


def _arithmetic(group: Group, size: int) -> int:
    """The OPS costs of the group's pointwise ops computed for each of `size` elements."""
    return sum(OPS[m.op].cost for m in group.members.values()
               if m.kind == ELEMENTWISE and m.size == size)


def _staged(group, shape, axes, tuning: Tuning, device: Device, simulator: bool, strides,
            classed: bool = False):
    """runs.choose_staged's run (x of x @ w read a row a thread through shared memory)."""
    return runs.choose_staged(group, tuple(shape), axes, tuning.output_run, strides or {},
                              tuning.run_stage_bytes, tuning.run_stage_threads,
                              tuning.run_stage_outputs,
                              tuning.run_stage_blocks * (1 if simulator else device.sms),
                              tuning.run_stage_chunks, device.shared_per_block, classed)


def _reduction(group: Group, tuning: Tuning, device: Device, simulator: bool,
               dynamic: bool = False, strides: dict | None = None, varying: tuple = ()) -> Plan:
    shape, axes = group.reduce_space
    axes = tuple(axes)
    outer_axes = [d for d in range(len(shape)) if d not in axes]
    outer = int(np.prod([shape[d] for d in outer_axes], dtype=np.int64))
    # (a class's lowered products count their kept extents as their stand-ins: a stack of
    # products of a varying count is many outputs at every build; other reductions keep their
    # own, as a static extent equal to a moved size would count as a stand-in)
    products = any(n.attrs.get("product") for n in group.reductions)
    counted = int(np.prod([counted_extent(shape[d], varying) if products else shape[d]
                           for d in outer_axes], dtype=np.int64))
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
    if dynamic and independent and shape and len(axes) == len(shape):
        return Plan("split", f"one output over {inner} elements, a count that varies: every "
                    f"block takes a share, the last combines (the grid chosen at launch)", **sizes)
    # (a class's lowered products count by their stand-ins here too: x of x @ w is near the
    # reduced space's size only at a few rows)
    count = (lambda node: int(np.prod([counted_extent(e, varying) for e in node.shape],
                                      dtype=np.int64))) if products else (lambda node: node.size)
    streamed = max((count(n) for n in group.inputs), default=0) * 2 >= counted * inner
    if dynamic and trailing:
        # NOTE: the rows vary in number: chosen as for many rows (a block a row of 4 elements
        # ran 20x the time of a thread a row on an H200, rows of 64-255 1.5-2.2x row tiles')
        many = max(outer, tuning.rows_per_sm * device.sms)
        staged = None if streamed or row_outputs or not independent or \
            not tuning.run_stage_bytes else _staged(group, shape, axes, tuning, device, simulator,
                                                    strides, True)
        if staged is not None:
            return Plan("columns", f"{outer} outputs over {inner} elements of a broadcast "
                        f"product (no input near its size), rows that vary in number: "
                        f"{staged.reason}, the reduced axis looped, the grid chosen at launch",
                        run=staged, **sizes)
        rows = tiles.plan_rows(group, shape, axes, many, inner, tuning, device, simulator)
        if rows:
            return Plan("row tiles", f"rows of {inner} elements that vary in number: "
                        f"{rows.width} rows a block, {rows.height} lanes of a warp a row, the "
                        f"grid chosen at launch", layout=rows, **sizes)
        if inner < 32 and independent and not row_outputs:
            return Plan("columns", f"rows of {inner} elements, too short for a block each, "
                        f"that vary in number: a thread an output, the reduced axes looped",
                        **sizes)
        return Plan("rows", f"the reduced axes are the last ({inner} elements a row) and the "
                    f"rows vary in number: a block a row, the row held on chip", **sizes)
    if outer == 1 and independent and inner >= threshold:
        return Plan("split", f"one output over {inner} elements (at least {threshold}): every "
                    f"block takes a share, the last combines", **sizes)
    work = inner * _arithmetic(group, inner) if outer == 1 and independent else 0
    if work >= (256 * 16 if simulator else tuning.split_work):
        return Plan("split", f"one output over {inner} elements whose arithmetic (about "
                    f"{work // inner} units an element) is too much for one block: every block "
                    f"takes an element a thread, the last combines", scalar=True, **sizes)
    # a thread's run of outputs along a short kept axis (emit/runs.py): not where outputs of the
    # reduced space's shape are stored as the loop goes; in a shape class only in a two-stage
    # kernel (its chunks chosen at launch)
    run = None if row_outputs else \
        runs.choose(group, tuple(shape), axes, tuning.output_run, strides or {},
                    tuning.output_run_spread)
    layout = None
    if independent and run is not None:
        layout = two_stage_plan.plan_class(shape, axes, counted // run.size, tuning, device,
                                           simulator) if dynamic else \
            two_stage_plan.plan(shape, axes, outer // run.size, inner, tuning, device, simulator)
        if layout is not None and layout.layout != "columns":
            layout = None
    if layout is not None and dynamic:
        return Plan("two-stage", f"{outer} outputs too few to fill the GPU over a reduced extent "
                    f"that varies: it is cut into at most {layout.chunks} chunks across blocks, "
                    f"as many as the extent at launch gives; {run.reason}", layout=layout,
                    run=run, **sizes)
    if layout is not None:
        return Plan("two-stage", f"{outer} outputs too few to fill the GPU over {inner} elements "
                    f"each: the reduced extent cut into {layout.chunks} chunks across blocks; "
                    f"{run.reason}", layout=layout, run=run, **sizes)
    if dynamic:
        run = None
    layout = None if not independent else \
        two_stage_plan.plan_class(shape, axes, counted, tuning, device, simulator) if dynamic else \
        two_stage_plan.plan(shape, axes, outer, inner, tuning, device, simulator)
    if layout and dynamic:
        return Plan("two-stage", f"{outer} outputs too few to fill the GPU over a reduced extent "
                    f"that varies: it is cut into at most {layout.chunks} chunks across blocks, "
                    f"as many as the extent at launch gives", layout=layout, **sizes)
    if layout:
        return Plan("two-stage", f"{outer} outputs too few to fill the GPU over {inner} elements "
                    f"each: the reduced extent cut into {layout.chunks} chunks across blocks",
                    layout=layout, **sizes)
    slots = tuning.sim_threads * tuning.sim_blocks if simulator else tuning.threads * device.sms
    fills = run is not None and outer // run.size >= slots
    columns = None if independent else \
        tiles.plan_columns(group, shape, axes, outer, inner, tuning, simulator, dynamic)
    if columns:
        return Plan("column tiles", f"reductions the rest of the column needs, over {inner} "
                    f"elements of each of {outer} columns: a block a tile of {columns.width} "
                    f"columns, {columns.height} threads a column", layout=columns, **sizes)
    # NOTE: where no input is near the reduced space's size, the operand is a broadcast product
    # (k-means' distances to a few centroids): a thread an output reads the small inputs' values
    # common to a warp's outputs once for all of them (loads of one address), where a block or
    # warp a row would spread those reads across lanes, one sector each. (Not where outputs of
    # the reduced space's shape are written: a thread a row would store them a row apart.)
    if trailing and not streamed and not row_outputs and counted >= tuning.threads * device.sms:
        staged = None if run is not None or dynamic or not independent or \
            not tuning.run_stage_bytes else \
            _staged(group, shape, axes, tuning, device, simulator, strides)
        if staged is not None:
            return Plan("columns", f"{outer} outputs over {inner} elements of a broadcast "
                        f"product (no input near its size): {staged.reason}, the reduced axis "
                        f"looped", run=staged, **sizes)
        if fills:
            return Plan("columns", f"{outer} outputs over {inner} elements of a broadcast product "
                        f"(no input near its size): {run.reason}, the reduced axes looped",
                        run=run, **sizes)
        strip = None if run is not None or dynamic or not independent else \
            runs.choose_strip(group, tuple(shape), axes, tuning.output_strip, strides or {})
        if strip is not None and outer // strip.size >= slots:
            return Plan("columns", f"{outer} outputs over {inner} elements of a broadcast product "
                        f"(no input near its size): {strip.reason}, the reduced axes looped",
                        run=strip, **sizes)
        return Plan("columns", f"{outer} outputs over {inner} elements of a broadcast product "
                    f"(no input near its size): a thread an output, the reduced axes looped",
                    **sizes)
    rows = tiles.plan_rows(group, shape, axes, outer, inner, tuning, device, simulator) \
        if trailing else None
    if rows:
        return Plan("row tiles", f"{outer} rows of {inner} elements: {rows.width} rows a block, "
                    f"{rows.height} lanes of a warp a row", layout=rows, **sizes)
    if trailing and (inner >= 32 or outer < tuning.rows_per_sm * device.sms):
        return Plan("rows", f"the reduced axes are the last ({inner} elements a row): a block "
                    f"a row, the row held on chip", **sizes)
    why = "the kept axes are the last" if not trailing else \
        f"{outer} rows of {inner} elements, too short for a block each"
    if fills:
        return Plan("columns", f"{why}: {run.reason}, the reduced axes looped", run=run, **sizes)
    return Plan("columns", f"{why}: a thread an output, the reduced axes looped", **sizes)
