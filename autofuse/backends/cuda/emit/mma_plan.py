"""Decisions for the tensor-core matrix-product kernel (emit/mma_gemm.py): whether a product group
takes it (float64 and float16 products by default; float32 ones where jit's matmul_precision asks
for "tf32" or "3xtf32"), which `mma.sync` shape, and the block's tile of warps and instructions.

The kernel is general over sizes as the compact kernel (emit/gemm.py) is, and applies where that
one's rules allow (sizes nowhere in an index map); gemm_plan.py supplies those rules. float16
products take the pipelined kernel (emit/mma_pipeline.py: cp.async stages, ldmatrix fragments)
where Tuning.mma_stages asks for it: its block tile, halved where the grid would not fill a wave of
the device's SMs, and as many stages as 48 KiB of shared memory holds, up to the tuning's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..device import HOPPER
from ..intrinsics.mma_shapes import SHAPES, Shape
from . import gemm_plan

PRECISIONS = ("float32", "tf32", "3xtf32")     # jit(matmul_precision=...) for float32 products
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
    stages: int        # shared stages of the cp.async pipeline (emit/mma_pipeline.py); 0: the
    #                    register-staged kernel (emit/mma_gemm.py)
    blocks: int        # launch bounds: blocks an SM the registers must allow (0: none)
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

    def rows(self, side: str) -> tuple:
        """The pipelined kernel's stage of operand `side`: (rows, 16-byte chunks a row), rows
        along its tile where its unit-stride axis is K, else along K (elements)."""
        width, along = (self.tm, self.stage_a) if side == "a" else (self.tn, self.stage_b)
        if along == "k":
            return width, self.slab // 4
        return self.slab * self.instruction.pack, width * 2 // 16

    def swizzle(self, side: str) -> tuple:
        """(d, m): chunk c of row r lies at chunk c ^ ((r % 8) // d % m) of its row, so the 8 rows
        an ldmatrix phase reads (and a row's chunks) fall in distinct 16-byte bank groups."""
        chunks = self.rows(side)[1]
        m = min(chunks, 8)
        return 8 // m, m

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
        """Both operands' two shared halves (the pipelined kernel's: every stage)."""
        if self.stages:
            return self.stages * 16 * sum(rows * chunks for rows, chunks in map(self.rows, "ab"))
        word = 8 if self.kind == "f64" else 4
        return sum(2 * word * stride * rows for stride, rows in map(self.layout, "ab"))

    @property
    def key(self) -> tuple:
        return (self.kind, self.shape, self.warps_m, self.warps_n, self.tiles_m, self.tiles_n,
                self.slab, self.stage_a, self.stage_b, self.stages, self.blocks)


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


def choose(group, strides: dict, tuning, shared: int, simulator: bool = False,
           dynamic: bool = False) -> Plan | None:
    """The tensor-core kernel's plan for this product group, or None (Tuning.mma off, or it does
    not apply); `dynamic`: M varies (a shape class), the tile chosen as for many rows."""
    precision = tuning.matmul_precision
    if not tuning.mma or refusal(group, precision) is not None:
        return None
    node = group.matmul
    kind = kind_of(node, precision)
    shape = SHAPES[tuning.mma_f64_shape if kind == "f64" else
                   "mma_f16_m16n8k16" if kind == "f16" else "mma_tf32_m16n8k8"]
    a, b = node.inputs
    stage_a = gemm_plan.unit_axis(group, a, strides, "k", "tile")
    stage_b = gemm_plan.unit_axis(group, b, strides, "tile", "k")
    if kind == "f16" and tuning.mma_stages:
        plan = _pipelined(node, shape, stage_a, stage_b, tuning, shared, simulator, dynamic)
    else:
        if simulator:        # a warp a block, two tiles: the simulator runs threads as Python
            tile = (1, 1, 1, 2, 2)
        else:
            tile = tuning.mma_f64_tile if kind == "f64" else tuning.mma_tile
        plan = Plan(kind, shape.name, *tile[:4], tile[4] * shape.words, stage_a, stage_b, 0, 0,
                    "")
    if plan is None or plan.shared_bytes > shared:    # (a tuning asking for too large
        return None                                          # a tile)
    m, n = node.shape[-2:]
    arithmetic = {"f64": "float64", "f16": "float16 operands, float32 sums",
                  "tf32": "TF32 operands, float32 sums",
                  "3xtf32": "each operand a TF32 high and low part, three products, float32 sums"}
    staging = (f", {plan.stages} cp.async stages, ldmatrix fragments" if plan.stages else "")
    reason = (f"a {m}x{n} result on tensor cores ({arithmetic[kind]}; mma.sync "
              f"{shape.ptx.split('.')[3]}; {plan.tm}x{plan.tn} a block of {plan.threads} threads, "
              f"{plan.slab * shape.pack}-deep slabs{staging}); sizes and strides are arguments")
    return Plan(*plan.key, reason)


def _pipelined(node, shape: Shape, stage_a: str, stage_b: str, tuning, shared: int,
               simulator: bool, dynamic: bool = False):
    """The pipelined float16 kernel's plan: the tuning's tile (the simulator's: one warp of two
    instruction tiles), halved along M, then N, while the grid would not fill a wave (not where
    M varies: as for many rows); the most stages up to the tuning's that fit the static shared
    memory; None where none fits."""
    tile = (1, 1, 1, 2, 2) if simulator else tuning.mma_f16_tile
    warps_m, warps_n, tiles_m, tiles_n, steps = tile
    m, n = node.shape[-2:]
    batch = 1
    for extent in node.shape[:-2]:
        batch *= extent

    def grid(tiles_m, tiles_n) -> int:
        return -(-m // (warps_m * tiles_m * 16)) * -(-n // (warps_n * tiles_n * 8)) * batch
    while not simulator and not dynamic and grid(tiles_m, tiles_n) < HOPPER.sms and \
            (tiles_m > 1 or tiles_n > 2):
        if tiles_m > 1:
            tiles_m //= 2
        else:
            tiles_n //= 2
    if tiles_n % 2:                 # (an ldmatrix.x4 fetches two tiles' B fragments)
        return None
    for stages in range(max(tuning.mma_stages, 2), 1, -1):
        plan = Plan("f16", shape.name, warps_m, warps_n, tiles_m, tiles_n, steps * shape.words,
                    stage_a, stage_b, stages, 0 if simulator else tuning.mma_blocks, "")
        if plan.shared_bytes <= shared and all(
                plan.rows(side)[1] >= 2 and (plan.rows(side)[0] * plan.rows(side)[1])
                % min(plan.threads, plan.rows(side)[0] * plan.rows(side)[1]) == 0
                for side in "ab"):
            return plan
    return None


def structure(group, strides: dict, tuning, shared: int) -> tuple | None:
    """The product group's structure as its kernel's text depends on it (the tensor-core kernel's
    or else the compact kernel's plan, and of each shape only which extents are 1), or None where
    neither applies."""
    plan = choose(group, strides, tuning, shared)
    if plan is None:
        return gemm_plan.structure(group, strides, tuning)
    return ("mma", plan.key, group.structure({}, sizes=gemm_plan.pattern))
