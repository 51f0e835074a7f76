"""Decisions for the tensor-core matrix-product kernel (emit/mma_gemm.py): whether a product group
takes it (float64 and float16 products by default; float32 ones where jit's matmul_precision asks
for "tf32" or "3xtf32"), which `mma.sync` shape, and the block's tile of warps and instructions.

The kernel is general over sizes as the compact kernel (emit/gemm.py) is, and applies where that
one's rules allow (sizes nowhere in an index map); gemm_plan.py supplies those rules.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..intrinsics.mma_shapes import SHAPES, Shape
from . import gemm_plan

PRECISIONS = ("float32", "tf32", "3xtf32")     # jit(matmul_precision=...) for float32 products
STATIC_SHARED = 48 * 1024      # bytes of shared memory a kernel may declare statically
PAD = 4                        # words past a shared row of K words (bank spread)


@dataclass(frozen=True)
class Plan:
    kind: str          # "f64", "f16" (float32 sums), "tf32", "3xtf32" (three TF32 products)
    shape: str         # the instruction: a key of mma_shapes.SHAPES
    warps_m: int       # a block's warps along M and N ...
    warps_n: int
    tiles_m: int       # ... each computing tiles_m x tiles_n instruction tiles
    tiles_n: int
    slab: int          # K words a shared slab (a multiple of the instruction's)
    stage_a: str       # which axis of an operand's slab consecutive threads read: "k" or "tile"
    stage_b: str       # (the one of unit stride in memory, where the strides tell)
    reason: str

    @property
    def instruction(self) -> Shape:
        return SHAPES[self.shape]

    @property
    def tm(self) -> int:
        return self.warps_m * self.tiles_m * self.instruction.m

    @property
    def tn(self) -> int:
        return self.warps_n * self.tiles_n * self.instruction.n

    @property
    def threads(self) -> int:
        return 32 * self.warps_m * self.warps_n

    def layout(self, side: str) -> tuple:
        """(words between consecutive rows, rows) of operand `side`'s shared half: rows of K
        words where its unit-stride axis is K, else rows of tile elements (a warp's fragment
        reads, rows g x K words t, then fall in distinct banks either way)."""
        width, along = (self.tm, self.stage_a) if side == "a" else (self.tn, self.stage_b)
        if along == "k":
            return self.slab + PAD, width
        return width + (PAD if self.kind == "f64" else 2 * PAD), self.slab

    @property
    def shared_bytes(self) -> int:
        """Both operands' two shared halves."""
        word = 8 if self.kind == "f64" else 4
        return sum(2 * word * stride * rows for stride, rows in map(self.layout, "ab"))

    @property
    def key(self) -> tuple:
        return (self.kind, self.shape, self.warps_m, self.warps_n, self.tiles_m, self.tiles_n,
                self.slab, self.stage_a, self.stage_b)


def kind_of(node, precision: str) -> str | None:
    """The tensor-core arithmetic of a product node, or None where it stays on the CUDA cores."""
    dtypes = {node.dtype, *(x.dtype for x in node.inputs)}
    if len(dtypes) != 1:
        return None
    dtype = node.dtype
    if dtype == np.float64:
        return "f64"
    if dtype == np.float16:
        return "f16"
    if dtype == np.float32 and precision in ("tf32", "3xtf32"):
        return precision
    return None


def refusal(group, precision: str) -> str | None:
    """Why the tensor-core kernel does not apply to this product group, or None."""
    node = group.matmul
    if kind_of(node, precision) is None:
        return (f"a {node.dtype} product (tensor cores take float64, float16, and float32 with "
                f"matmul_precision 'tf32' or '3xtf32'; this one's is {precision!r})")
    return gemm_plan.layout_refusal(group)


def choose(group, strides: dict, tuning, simulator: bool = False) -> Plan | None:
    """The tensor-core kernel's plan for this product group, or None (Tuning.mma off, or it does
    not apply)."""
    precision = tuning.matmul_precision
    if not tuning.mma or refusal(group, precision) is not None:
        return None
    node = group.matmul
    kind = kind_of(node, precision)
    shape = SHAPES[tuning.mma_f64_shape if kind == "f64" else
                   "mma_f16_m16n8k16" if kind == "f16" else "mma_tf32_m16n8k8"]
    if simulator:        # a warp a block, two tiles: the simulator runs threads as Python
        warps_m, warps_n, tiles_m, tiles_n, steps = 1, 1, 1, 2, 2
    else:
        warps_m, warps_n, tiles_m, tiles_n, steps = \
            tuning.mma_f64_tile if kind == "f64" else tuning.mma_tile
    a, b = node.inputs
    stage_a = gemm_plan.unit_axis(group, a, strides, "k", "tile")
    stage_b = gemm_plan.unit_axis(group, b, strides, "tile", "k")
    plan = Plan(kind, shape.name, warps_m, warps_n, tiles_m, tiles_n, steps * shape.words,
                stage_a, stage_b, "")
    if plan.shared_bytes > STATIC_SHARED:       # (a tuning asking for too large a tile)
        return None
    m, n = node.shape[-2:]
    arithmetic = {"f64": "float64", "f16": "float16 operands, float32 sums",
                  "tf32": "TF32 operands, float32 sums",
                  "3xtf32": "each operand a TF32 high and low part, three products, float32 sums"}
    reason = (f"a {m}x{n} result on tensor cores ({arithmetic[kind]}; mma.sync "
              f"{shape.ptx.split('.')[3]}; {plan.tm}x{plan.tn} a block of {plan.threads} threads, "
              f"{steps * shape.k}-deep slabs); sizes and strides are arguments")
    return Plan(*plan.key, reason)


def structure(group, strides: dict, tuning) -> tuple | None:
    """The product group's structure as its kernel's text depends on it (the tensor-core kernel's
    or else the compact kernel's plan, and of each shape only which extents are 1), or None where
    neither applies."""
    plan = choose(group, strides, tuning)
    if plan is None:
        return gemm_plan.structure(group, strides, tuning)
    return ("mma", plan.key, group.structure({}, sizes=gemm_plan.pattern))
