"""Decisions for the tensor-core flash attention kernel (emit/attention_mma.py): whether an
attention group takes it (float16 q, k and v, the scores' product in the kernel, Tuning's
attention_mma on) and its tiles.

A block is `warps` warps, each owning 16 query rows (one mma.sync m16n8k16 row tile), and loops
over tiles of `keys` keys. The head dimension D is padded to a multiple of 16 (one K step of the
instruction) and v's width Dv to a multiple of 8 (one N tile), with zeros in shared memory. Shared
memory holds 32-bit words of two packed float16 values: the query rows (once, then the same
buffer holds each tile's keys), [row][D word]; the values transposed, [Dv column][key word]; rows
padded by 4 words so that a warp's fragment reads (8 rows x 4 words) fall in distinct banks.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..intrinsics.mma_shapes import SHAPES

SHAPE = SHAPES["mma_f16_m16n8k16"]
PAD = 4                      # words past a shared row (bank spread; rows are multiples of 8 words)


@dataclass(frozen=True)
class MmaPlan:
    warps: int               # warps a block, 16 query rows each
    keys: int                # keys a tile (a multiple of 16)
    head: int                # D, the product's inner extent
    width: int               # Dv, v's columns
    causal: int | None       # as attention_plan.Plan.causal
    reason: str

    @property
    def rows(self) -> int:
        return self.warps * SHAPE.m

    @property
    def threads(self) -> int:
        return self.warps * 32

    @property
    def steps(self) -> int:
        """K steps of q @ k^T (D padded to 16)."""
        return -(-self.head // SHAPE.k)

    @property
    def tiles(self) -> int:
        """N tiles of the output (Dv padded to 8)."""
        return -(-self.width // SHAPE.n)

    @property
    def stride_q(self) -> int:
        """Words between staged rows of q and of k."""
        return self.steps * SHAPE.words + PAD

    @property
    def stride_v(self) -> int:
        """Words between staged (transposed) columns of v."""
        return self.keys // SHAPE.pack + PAD

    @property
    def shared_bytes(self) -> int:
        return 4 * (max(self.rows, self.keys) * self.stride_q + self.tiles * SHAPE.n * self.stride_v)


def applies(found, tuning) -> bool:
    """Whether the tensor-core kernel computes this attention (attention_plan.Roles)."""
    product = found.product
    if not tuning.attention_mma or product is None:
        return False
    dtypes = {product.dtype, *(x.dtype for x in product.inputs), found.values.dtype,
              found.output.dtype}
    return dtypes == {np.dtype(np.float16)}


def choose(found, tuning, causal, shared: int, simulator: bool = False) -> MmaPlan | None:
    """The plan, or None where the kernel does not apply or its tiles do not fit in `shared`
    bytes (Device.shared_per_block: what a block may declare statically)."""
    if not applies(found, tuning):
        return None
    warps, keys = tuning.attention_mma_sim if simulator else tuning.attention_mma_tile
    head = found.product.inputs[0].shape[-1]
    width = found.values.shape[-1]
    sq = found.scores.shape[-2]
    while warps > 1 and (warps // 2) * SHAPE.m >= sq:     # fewer warps where Sq is short
        warps //= 2
    plan = MmaPlan(warps, keys, head, width, causal, "")
    while plan.shared_bytes > shared and plan.keys > SHAPE.k:
        plan = MmaPlan(warps, plan.keys // 2, head, width, causal, "")
    if plan.shared_bytes > shared:
        return None
    how = (f"tensor cores: mma.sync m16n8k16, float16 operands and float32 sums for q @ k^T and "
           f"for P @ V (P rounded to float16, as flash attention kernels do; the scores and the "
           f"online softmax in float32, q @ k^T not rounded to float16 before the scores' ops); "
           f"{plan.rows} query rows a block ({warps} warps of 16), tiles of {plan.keys} keys")
    if causal is not None:
        how += f"; a causal mask (key <= row{causal:+d}): tiles past a block's last row skipped"
    return MmaPlan(warps, plan.keys, head, width, causal, how)
