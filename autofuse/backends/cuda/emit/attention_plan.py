"""Decisions for the flash attention kernel (emit/attention.py): the roles of an attention group's
members (fusion/attention.py), its tiles, and which tiles of keys a causal mask lets it skip.

A block takes `rows` query rows of one batch entry; each thread `rx` consecutive rows, with
`lanes` threads (of one warp) a row group. A tile of `keys` keys and their values is staged in
shared memory; a thread computes the scores of its rows against `keys / lanes` of them (key
c * lanes + lane: a warp's reads of the staged keys fall in distinct banks) and accumulates
`dy` columns of the output (in chunks of `vchunk` consecutive columns, chunk c at
(c * lanes + lane) * vchunk). Shared memory (static, at most Device.shared_per_block) holds the
query tile, the key tile, the value tile and the tile's probabilities transposed; where they do
not fit, the key tile (down to 16 keys) and then the query tile shrink.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ....ir.attention import scores_product
from ....ir.interpreter import run_nodes
from ....ir.printer import is_inline_constant
from . import attention_mma_plan

MASK_ELEMENTS = 1 << 24      # constant masks up to this many elements are read for causal skips


@dataclass(frozen=True)
class Roles:
    """The group's nodes by what the kernel does with them."""
    output: object           # softmax_matmul(s, v)
    scores: object           # s, what the softmax reads
    values: object           # v, (..., Sk, Dv)
    product: object          # q @ k^T, marked `attention="scores"`; None where s is read from
    #                          memory (the product stored for another reader)


@dataclass(frozen=True)
class Plan:
    rows: int                # query rows a block
    keys: int                # keys a staged tile
    rx: int                  # rows a thread
    lanes: int               # threads a row group (a power of two, at most 32)
    head: int                # D, the product's inner extent (0 where s is read from memory)
    width: int               # Dv, v's columns
    dy: int                  # output columns a thread
    vchunk: int              # ... in chunks of this many consecutive columns (4: 16-byte loads)
    qchunk: int              # D read in chunks of this many from shared memory (4 or 1)
    causal: int | None       # scores past key i + causal of row i are -inf (a constant mask):
    #                          tiles of keys past a block's last row are skipped; None: none skipped
    reason: str

    @property
    def threads(self) -> int:
        return self.rows // self.rx * self.lanes

    @property
    def cy(self) -> int:
        """Keys a thread scores in a tile."""
        return self.keys // self.lanes

    @property
    def stride_q(self) -> int:
        """Elements between staged rows of q and of k (padded: a warp's reads of one element of
        several rows fall in distinct banks)."""
        return self.head + (4 if self.qchunk == 4 else 1)

    @property
    def stride_v(self) -> int:
        return self.dy * self.lanes

    @property
    def stride_p(self) -> int:
        return self.rows + 4


def roles(group) -> Roles:
    output = group.matmul
    scores, values = output.inputs
    product = next((n for n in group.nodes if scores_product(n)), None)
    return Roles(output, scores, values, product)


def marked(group) -> bool:
    """Whether the group is attention's (ir/attention.py made its softmax_matmul)."""
    return group.matmul is not None and group.matmul.op == "softmax_matmul"


def _bytes(rows: int, keys: int, head: int, dy: int, lanes: int, qk: int, held: int) -> int:
    """Shared bytes of a block: q and k tiles (`qk` bytes an element), v and p (`held`)."""
    stride = head + 4 if head else 0
    return (rows + keys) * stride * qk + keys * (dy * lanes + rows + 4) * held


def choose(group, tuning, device, simulator: bool = False):
    """The tensor-core kernel's plan (attention_mma_plan.MmaPlan) where it applies, else this
    kernel's (Plan)."""
    found = roles(group)
    pattern = found.output.attrs.get('attention', 'softmax(s) @ v')
    sq, sk = found.scores.shape[-2:]
    tensor = attention_mma_plan.choose(found, tuning, _causal(found, sq, sk),
                                       device.shared_per_block, simulator)
    if tensor is not None:
        return dataclasses.replace(tensor, reason=f"{pattern} ({tensor.reason})")
    rows, keys, rx, lanes = tuning.attention_sim if simulator else \
        (tuning.attention_rows, tuning.attention_keys, tuning.attention_rx, tuning.attention_lanes)
    # (whole warps: a row group's lanes shuffle within one; a thread at least one key)
    rows, keys = max(rows, rx * 32 // lanes), max(keys, lanes)
    product = found.product
    head = product.inputs[0].shape[-1] if product is not None else 0
    width = found.values.shape[-1]
    sq, sk = found.scores.shape[-2:]
    dy = -(-width // lanes)
    vchunk = 4 if dy % 4 == 0 else 1
    held = np.dtype(found.output.dtype).itemsize if found.output.dtype != np.float16 else 4
    qk = max(4, np.dtype(product.dtype).itemsize) if product is not None else 0
    # fewer query rows where the scores are few (a short Sq), then fit shared memory
    while rows > rx * 32 // lanes and rows // 2 >= sq:
        rows //= 2
    # (keys down to 16 first, then rows, then keys again: a thread keeps 2 keys or more)
    while _bytes(rows, keys, head, dy, lanes, qk, held) > device.shared_per_block:
        if keys > max(lanes, 16) or (keys > lanes and rows <= rx * 32 // lanes):
            keys //= 2
        elif rows > rx * 32 // lanes:
            rows //= 2
        else:
            break
    causal = _causal(found, sq, sk)
    qchunk = 4 if head % 4 == 0 else 1
    how = (f"{rows} query rows a block, tiles of {keys} keys in shared memory, {rx} rows x "
           f"{keys // lanes} keys and {dy} output columns a thread")
    if product is None:
        how += "; the scores are read from memory (stored for another reader)"
    if causal is not None:
        how += f"; a causal mask (key <= row{causal:+d}): tiles past a block's last row skipped"
    reason = f"{found.output.attrs.get('attention', 'softmax(s) @ v')} ({how})"
    return Plan(rows, keys, rx, lanes, head, width, dy, vchunk, qchunk, causal, reason)


def _causal(found: Roles, sq: int, sk: int) -> int | None:
    """The offset o where the scores are where(mask, x, -inf) with a constant mask that holds
    exactly where key <= row + o, else None."""
    s = found.scores
    if s.op != "where" or not is_inline_constant(s.inputs[2]):
        return None
    fill = s.inputs[2].attrs["value"].array
    if not (np.isneginf(fill) and s.inputs[1].dtype.kind == "f"):
        return None
    mask = _constant_value(s.inputs[0])
    if mask is None or mask.shape[-2:] != (sq, sk):
        return None
    planes = mask.reshape(-1, sq, sk)
    if not all(np.array_equal(planes[0], plane) for plane in planes[1:]):
        return None
    counts = planes[0].sum(axis=1)
    inside = [i for i in range(sq) if 0 < counts[i] < sk]
    if not inside:
        return None
    offset = int(counts[inside[0]]) - 1 - inside[0]
    expected = np.tril(np.ones((sq, sk), dtype=bool), offset)
    return offset if np.array_equal(planes[0], expected) else None


def _constant_value(node) -> np.ndarray | None:
    """The value of a node computed from constants and iotas alone (small enough), else None."""
    if math.prod(node.shape) > MASK_ELEMENTS:
        return None
    nodes, seen, stack = [], set(), [node]
    while stack:
        current = stack.pop()
        if current.id in seen:
            continue
        if current.op == "input":
            return None
        seen.add(current.id)
        nodes.append(current)
        stack.extend(current.inputs)
    nodes.sort(key=lambda n: n.id)
    env = {}
    run_nodes(nodes, env)
    return np.broadcast_to(env[node.id], node.shape).astype(bool)
