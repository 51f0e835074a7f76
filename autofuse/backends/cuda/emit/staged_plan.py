"""Decisions for the staged product kernel (emit/staged.py): the products ir/products.py marks
`staged` (stacks of small products, and K-small products), each as work items of one block's tile
of one product's result, all of K (or `depth`-deep rounds of it) staged in shared memory.

The tile covers a small product whole; a thread computes rx rows by ry consecutive columns of it,
so that its reads of the staged operands are 16-byte shared loads and its stores run along the
result's rows. Where the right operand is the same for every item (one tile across N, one round of
K, no batch of its own: the chemistry shape (B, M, K) @ (K, N)), it is staged once a block and a
block loops over items.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....arrays import contiguous
from ....ir.ops import ELEMENTWISE
from .gemm_plan import operand_axes


@dataclass(frozen=True)
class Plan:
    tm: int                 # a work item's tile: tm rows x tn columns of one product's result
    tn: int
    rx: int                 # a thread's outputs: rx consecutive rows x ry consecutive columns
    ry: int
    depth: int              # K elements staged a round (a multiple of `unroll`; 0 where K is 0)
    unroll: int             # K steps written out in the source
    a_along_k: bool         # the left operand's staging walks K fastest (its unit-stride axis)
    b_along_n: bool         # the right operand's staging walks N fastest
    keep_b: bool            # the right operand staged once a block, for every item
    items: int              # work items: batch x tiles along M x tiles along N
    together: int           # items a block takes at once (tiny products), each its own threads
    blocks: int             # the grid (blocks loop over items)
    held: bool              # a thread's share of a tile read into registers, then stored (else
    #                         a loop an element at a time: shares of more than staged_registers)
    prefetch: bool          # ... the next item's, read before this item's FMAs (one K round)
    reason: str

    @property
    def each(self) -> int:
        """Threads an item."""
        return (self.tm // self.rx) * (self.tn // self.ry)

    @property
    def threads(self) -> int:
        return self.each * self.together

    @property
    def area(self) -> int:
        """Shared elements an item's own tiles take (a multiple of 4): A's, and B's unless B is
        kept (once a block, after every item's A: `kept_at`)."""
        own = self.base_b + (0 if self.keep_b else self.depth * (self.tn + self.pad_b))
        return _round_up(max(4, own), 4)

    @property
    def kept_at(self) -> int:
        return self.area * self.together

    @property
    def shared(self) -> int:
        """Shared elements the block takes."""
        return self.kept_at + (self.depth * (self.tn + self.pad_b) if self.keep_b else 0)

    @property
    def pad_a(self) -> int:
        """Elements after each staged row of A's tile: staging that walks K writes down the
        rows' columns, and a stride of a multiple of 32 banks would put a warp in one bank."""
        return 4 if self.a_along_k else 0

    @property
    def pad_b(self) -> int:
        return 0 if self.b_along_n else 4

    @property
    def base_b(self) -> int:
        """Where B's rows begin in an item's region (after A's, 16-byte aligned)."""
        return _round_up(self.depth * (self.tm + self.pad_a), 4)


def _round_up(value: int, step: int) -> int:
    return -(-value // step) * step


def _along(group, operand, strides: dict, inner: int) -> bool:
    """Whether an operand's axis `inner` (-1 or -2) is the one of unit stride in its array, as
    far as the operand reads a kernel parameter directly (else the last axis is assumed)."""
    found = operand_axes(group, operand)
    if found is None or found[0].ndim == 0:
        return inner == -1
    source, axes = found
    element = strides.get(source.id) or contiguous(source.shape)
    last, before = axes[-1], axes[-2]
    if inner == -1:
        return last is not None and element[last] == 1 or before is None
    return before is not None and element[before] == 1 and (last is None or element[last] != 1)


def _batch_invariant(group, operand) -> bool:
    """Whether an operand's value is the same for every product of the stack: it reads its
    parameter without the batch axes, or is a broadcast of a value that has none."""
    if operand.ndim <= 2:
        return True
    if operand.op == "broadcast_to":
        source = operand.inputs[0]
        lead = operand.ndim - source.ndim
        return all(s == 1 for s in source.shape[:max(0, operand.ndim - 2 - lead)])
    found = operand_axes(group, operand)
    return found is not None and all(axis is None for axis in found[1][:-2])


def choose(group, strides: dict, tuning, device, simulator: bool = False) -> Plan:
    node = group.matmul
    a, b = node.inputs
    m, n = node.shape[-2:]
    k = a.shape[-1]
    batch = int(np.prod(node.shape[:-2], dtype=np.int64))
    least = tuning.staged_least_threads
    rx, ry = tuning.staged_rows, tuning.staged_columns
    rows = tuning.staged_tile_m_short if k <= tuning.products.small_k else tuning.staged_tile_m
    tn = _round_up(max(1, min(n, tuning.staged_tile_n)), ry)
    tm = _round_up(max(1, min(m, rows)), rx)
    # fewer rows a thread down to a warp an item; then several items a block (tiny products)
    while rx > 1 and (tm // rx) * (tn // ry) < min(32, least):
        rx //= 2
        tm = _round_up(max(1, min(m, rows)), rx)
    each = (tm // rx) * (tn // ry)
    tiles = -(-m // tm) * -(-n // tn)
    items = batch * tiles
    together = max(1, min(-(-least // each), items))
    a_along_k = _along(group, a, strides, -1)
    b_along_n = _along(group, b, strides, -1)
    unroll = tuning.staged_unroll
    invariant = -(-n // tn) == 1 and _batch_invariant(group, b) and items > 1
    row_a, row_b = tm + (4 if a_along_k else 0), tn + (0 if b_along_n else 4)

    def deepest(kept: bool) -> int:
        """K elements a round, with B staged once a block (`kept`) or for every item."""
        row = (row_a * together + row_b * (1 if kept else together)) * a.dtype.itemsize
        fits = max(unroll, (tuning.staged_shared_bytes // row) // unroll * unroll)
        return min(_round_up(k, unroll), fits)
    depth = deepest(invariant)
    keep_b = invariant and depth >= k
    if invariant and not keep_b:
        depth = deepest(False)
    steps = -(-items // together)
    cap = tuning.staged_blocks_per_sm * device.sms if keep_b else (1 << 31) - 1
    blocks = min(steps, 4 if simulator and keep_b else cap)
    rounds = -(-k // depth) if depth else 0
    share = -(-depth * tm // each) + (0 if keep_b else -(-depth * tn // each))
    held = share <= tuning.staged_registers
    prefetch = held and rounds == 1 and tuning.staged_prefetch
    how = (f"{tm}x{tn} tiles, {rx}x{ry} a thread, {together} a block, K in {rounds} round(s) of "
           f"{depth}" + ("; the right operand staged once a block" if keep_b else "") +
           ("; the next item's operands read during this one's FMAs" if prefetch else ""))
    reason = f"{items} work items of {batch} product(s): {how}"
    return Plan(tm, tn, rx, ry, depth, unroll, a_along_k, b_along_n, keep_b, items, together,
                max(1, blocks), held, prefetch, reason)


def marked(group) -> bool:
    """Whether the group's product is one ir/products.py marked `staged` that this kernel takes
    (else the tiled kernels do)."""
    node = group.matmul
    return node is not None and bool(node.attrs.get("staged")) and refusal(group) is None


def refusal(group) -> str | None:
    """Why the staged kernel does not take a product group ir/products.py marked, or None: its
    epilogue is elementwise (each output at the product's own index)."""
    node = group.matmul
    after = {node.id}
    for member in group.nodes:
        if any(x.id in after for x in member.inputs):
            after.add(member.id)
            if member.kind != ELEMENTWISE:
                return f"its epilogue's {member.op} moves the product's elements"
    for output in group.outputs.values():
        if [s for s in output.shape if s != 1] != [s for s in node.shape if s != 1]:
            return "an output is not of the product's shape"
    return None
