"""The plans of two-stage reductions (two_stage.py): the layout, tiles and chunks, chosen from the
sizes (`plan`) or, for a shape class (autofuse/dynamic/), without the reduced extent, which
varies (`plan_class`): then the chunks are chosen at launch by `chunking`, whose chunk the kernel
takes as an argument (`Chunk`), so that at large sizes a class kernel splits the extent exactly
as the specialized one does; its scratch is sized for the most chunks.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Plan:
    layout: str          # "rows" or "columns"
    width: int           # outputs a block
    height: int          # threads an output
    tiles: int           # blocks across the outputs
    chunks: int          # blocks across the reduced extent (a class plan's: the most)
    chunk: int           # reduced elements a chunk (a multiple of height; a class plan's: 0)
    least: int = 0       # a class plan (autofuse/dynamic/): the chunks are chosen at launch,
    #                      each of at least this many elements (`chunking`)

    @property
    def threads(self) -> int:
        return self.width * self.height


def plan(shape, axes, outer: int, inner: int, tuning, device,
         simulator: bool = False) -> Plan | None:
    """The layout for a reduction of `outer` outputs over `inner` elements each, or None where the
    one-pass kernels fill the GPU already: a rows kernel (a block a row) when the rows fill at
    least half of `target` blocks or are too short for two chunks; a columns kernel (a thread an
    output) when the outputs fill a quarter of `target` x `threads` thread slots (`tuning`'s
    split_blocks on `device`, and threads)."""
    if outer < 2 or inner < 2:
        return None
    threads, target, steps, rows, width, height, tiles = _shape(shape, axes, outer, tuning, device,
                                                                simulator)
    # NOTE: at most `target` blocks (one wave): 1152 blocks of x.sum(0) over 4096x4096 ran as a
    # wave of 1056 and a tail of 96 on an H200.
    chunks = max(1, min(target // tiles, inner // (height * steps)))
    if rows and chunks < 2:
        return None
    if not rows and (4 * outer >= target * threads or inner < height * steps):
        return None
    chunk = _chunk(inner, chunks, height)
    return Plan("rows" if rows else "columns", width, height, tiles, -(-inner // chunk), chunk)


def plan_class(shape, axes, outer: int, tuning, device, simulator: bool = False) -> Plan | None:
    """`plan`'s layout as it is at large reduced extents, chosen without the reduced extent (a
    shape class's, which varies): the most chunks a wave leaves, the chunks themselves chosen at
    launch (`chunking`); None where `plan` would be at every large extent."""
    if outer < 2:
        return None
    threads, target, steps, rows, width, height, tiles = _shape(shape, axes, outer, tuning, device,
                                                                simulator)
    most = max(1, target // tiles)
    if (rows and most < 2) or (not rows and 4 * outer >= target * threads):
        return None
    return Plan("rows" if rows else "columns", width, height, tiles, most, 0, height * steps)


def _shape(shape, axes, outer: int, tuning, device, simulator: bool) -> tuple:
    """(threads a block, the wave's blocks, elements a thread at least, whether the last axis is
    reduced, outputs a block, threads an output, tiles)."""
    threads, target = tuning.threads, tuning.split_blocks(device)
    if simulator:
        threads, target = tuning.sim_threads, tuning.sim_blocks
    steps = tuning.sim_steps if simulator else tuning.two_stage_steps
    rows = len(shape) - 1 in axes
    width = 1 if rows else min(tuning.two_stage_columns, threads, 1 << (outer - 1).bit_length())
    return threads, target, steps, rows, width, threads // width, -(-outer // width)


def chunking(inner: int, most: int, least: int, height: int) -> tuple:
    """(elements a chunk, chunks) of a class plan's reduced extent of `inner`: `plan`'s formula,
    as many chunks as give each at least `least` elements, at most `most`, a chunk a multiple of
    `height`; one chunk of `height` where the extent is empty. (The kernel takes the chunk as
    an argument, `Chunk`.)"""
    chunk = _chunk(inner, max(1, min(most, inner // least)), height)
    return chunk, max(1, -(-inner // chunk))


@dataclass(frozen=True)
class Chunk:
    """A class kernel's elements a chunk, an int64 argument beside its sizes (read as
    kernel.Size's: name, node, axis, stride, value, moved): `chunking` of the extent of `node`
    (the reduced operand) along `axes`, as the launch rule ("chunks", ...) sizes the grid.
    NOTE: an argument, not computed in the kernel: computed there (a 64-bit division a thread)
    it took registers from the loads in flight: x.T @ g float64 ran 1.20x its specialized kernel,
    1.02x with the chunk written as the number (H200, experiments/xtg_class_variants.py)."""
    name: str
    node: object
    axes: tuple
    most: int
    least: int
    height: int
    axis: int = -1                   # (a Size's fields: no single axis, never a stride)
    stride: bool = False
    dtype = np.dtype(np.int64)

    @property
    def value(self) -> int:
        inner = math.prod(int(self.node.shape[a]) for a in self.axes)
        return chunking(inner, self.most, self.least, self.height)[0]

    def argument(self) -> np.int64:
        return np.int64(self.value)

    def moved(self, node, strides: dict) -> "Chunk":
        return dataclasses.replace(self, node=node)


def _chunk(inner: int, wanted: int, height: int) -> int:
    """Elements a chunk where `inner` is cut into `wanted` chunks: a multiple of `height`, at
    least one `height` (an empty extent's)."""
    per_chunk = -(-inner // wanted)
    return max(1, -(-per_chunk // height)) * height
