"""Decisions for the compact matrix-product kernel (emit/gemm.py): whether a product group takes
it, its tile configuration (chosen by the result's shape), how each operand's slab is staged,
and the group's structure with its sizes left out (they are the kernel's arguments)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....arrays import contiguous
from ....ir.ops import ELEMENTWISE, MATMUL
from ....ir.printer import is_inline_constant

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


@dataclass(frozen=True)
class Plan:
    tm: int                 # a block's tile: tm rows x tn columns of the result
    tn: int
    depth: int              # K elements a shared slab
    stage_a: str            # how a thread's 4 elements of an operand's slab lie: along "k" or
    stage_b: str            # along the "tile" axis (16-byte loads where the runtime strides allow)
    narrow: bool            # every array spans under 2^31 elements: 32-bit running offsets
    reason: str

    @property
    def key(self) -> tuple:
        return self.tm, self.tn, self.depth, self.stage_a, self.stage_b, self.narrow


def refusal(group) -> str | None:
    """Why the compact kernel does not apply to this product group, or None."""
    node = group.matmul
    if node.dtype not in FLOATS or any(x.dtype != node.dtype for x in node.inputs):
        return "not a float32 or float64 product of operands of its dtype"
    return layout_refusal(group)


def layout_refusal(group) -> str | None:
    """Why a kernel taking its sizes as arguments cannot compute this product group (a member
    whose index map needs the sizes, an output of another shape), or None."""
    node = group.matmul
    for member in group.nodes:
        if member.kind in (ELEMENTWISE, MATMUL) or member.op in ("transpose", "broadcast_to"):
            continue
        if member.op == "constant" and is_inline_constant(member):
            continue
        if member.op == "reshape" and _squeezes(member.inputs[0].shape, member.shape):
            continue
        return f"its {member.op} needs the sizes in its index map"
    for output in group.outputs.values():
        if not _squeezes(output.shape, node.shape):
            return "an output is not of the product's shape"
    return None


def _squeezes(a: tuple, b: tuple) -> bool:
    """Whether shapes a and b differ only by axes of extent 1."""
    return [s for s in a if s != 1] == [s for s in b if s != 1]


def pattern(shape: tuple) -> tuple:
    """What the compact kernel's text depends on of a shape: which extents are 1."""
    return tuple(1 if s == 1 else 0 for s in shape)


def choose(group, strides: dict, tuning, dynamic: bool = False) -> Plan | None:
    """The compact kernel's plan for this product group, or None where it does not apply (or
    Tuning.gemm is off): the general kernel (emit/matmul.py) takes it. `dynamic`: M varies
    (autofuse/dynamic/): the compact kernel, whose sizes are arguments, with tiles chosen as for
    many rows, where the float32 tiles kernel (whose text varies with M only in its guards and
    grid) does not apply: the compact kernel ran 1.13x its time at 8192x4096x4096 on an H200."""
    if not tuning.gemm or refusal(group) is not None:
        return None
    if not tuning.gemm_over_tiles and _tiles_apply(group, strides):
        return None
    node = group.matmul
    m, n = node.shape[-2:]
    if dynamic:
        m = max(m, tuning.tiles_narrow + 1)
    narrow, wide = tuning.tiles_narrow, tuning.tiles_wide
    if narrow and n <= narrow < m:
        tm, tn, why = wide, narrow, f"at most {narrow} columns: tall tiles"
    elif narrow and m <= narrow < n:
        tm, tn, why = narrow, wide, f"at most {narrow} rows: wide tiles"
    else:
        tm = tn = tuning.tiles_side
        why = "square tiles"
    a, b = node.inputs
    stage_a = unit_axis(group, a, strides, "k", "tile")
    stage_b = unit_axis(group, b, strides, "tile", "k")
    reason = (f"a {m}x{n} result ({why}, {tm}x{tn}x{tuning.tiles_depth}); sizes and strides are "
              f"arguments: one kernel for every shape of this structure")
    return Plan(tm, tn, tuning.tiles_depth, stage_a, stage_b, _narrow(group, strides), reason)


def _tiles_apply(group, strides: dict) -> bool:
    """Whether emit/matmul_tiles.py's float32 kernel takes this product (its refusal, read off
    the group): float32 operands that are C-contiguous parameters (or their transposes, or their
    batch broadcasts) with contiguous axes of multiples of 4, and K > 0. NOTE: measured on an
    H200, it is 12-25% faster there than the compact kernel (BENCHMARKS.md; the cause is open)."""
    node = group.matmul
    if node.dtype != np.float32 or node.inputs[0].shape[-1] == 0:
        return False
    inputs = {n.id for n in group.inputs if not (n.op == "input" and n.ndim == 0)}
    for x in node.inputs:
        array = x
        if x.id not in inputs and x.inputs and x.inputs[0].id in inputs:
            inner = x.inputs[0]
            swap = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
            if x.op == "broadcast_to" and inner.shape[-2:] == x.shape[-2:] or \
                    x.op == "transpose" and x.ndim >= 2 and tuple(x.attrs["perm"]) == swap:
                array = inner
        if array.id not in inputs or strides.get(array.id) is not None or array.shape[-1] % 4:
            return False
    return True


def _narrow(group, strides: dict) -> bool:
    """Whether every array the group reads or writes spans under 2^31 elements."""
    for node in [*group.inputs, *group.outputs.values(), group.matmul]:
        element = strides.get(node.id) or contiguous(node.shape)
        span = 1 + sum((size - 1) * abs(stride) for size, stride in zip(node.shape, element))
        if 0 not in node.shape and span >= 1 << 31:
            return False
    return True


def structure(group, strides: dict, tuning) -> tuple | None:
    """The group's structure as the compact kernel's text depends on it (its plan, and of each
    shape only which extents are 1), or None where the kernel does not apply."""
    plan = choose(group, strides, tuning)
    if plan is None:
        return None
    return ("gemm", plan.key, group.structure({}, sizes=pattern))


def operand_axes(group, operand, ones: bool = True):
    """(the kernel parameter an operand reads directly, the parameter's axis each operand axis
    reads, None where broadcast or of extent 1), or None where the operand is computed. `ones`
    False (a class kernel: dynamic/): an axis of extent 1 that is not broadcast keeps its axis,
    so that the kernel's text is the same at size 1 as at any other size."""
    inputs = {n.id for n in group.inputs}
    if operand.id in inputs:
        return operand, [d if s != 1 or not ones else None for d, s in enumerate(operand.shape)]
    if not operand.inputs or operand.inputs[0].id not in inputs:
        return None
    source = operand.inputs[0]
    if operand.op == "transpose":
        return source, [d if source.shape[d] != 1 or not ones else None
                        for d in operand.attrs["perm"]]
    if operand.op == "broadcast_to":
        lead = operand.ndim - source.ndim
        return source, [None if d < lead or source.shape[d - lead] == 1 and (
            ones or operand.shape[d] != 1) else d - lead for d in range(operand.ndim)]
    if operand.op == "reshape":
        kept = iter(d for d, s in enumerate(source.shape) if s != 1)
        return source, [None if s == 1 else next(kept) for s in operand.shape]
    return None


def unit_axis(group, operand, strides: dict, last: str, before: str) -> str:
    """Along which axis an operand's staged elements run: the one of stride 1 in its array (the
    last, `last`, by default; `before` where the one before it is)."""
    found = operand_axes(group, operand)
    if found is None or found[0].ndim == 0:
        return last
    source, axes = found
    element = strides.get(source.id) or contiguous(source.shape)
    if axes[-2] is not None and axes[-1] is not None and element[axes[-2]] == 1 \
            and element[axes[-1]] != 1:
        return before
    if axes[-1] is None and axes[-2] is not None and element[axes[-2]] == 1:
        return before
    return last
