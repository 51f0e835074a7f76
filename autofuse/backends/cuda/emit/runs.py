"""Runs of outputs: a thread of a reduction kernel computes several outputs next to each other
along one short kept axis, where part of the reduced operand is the same for all of them.

The gradient of a linear classifier, `x.T @ g` with g of 10 columns, lowered to a reduction
(ir/products.py), is a sum over the rows k of x[k, i] * g[k, j]: x's element is the same for
the ten outputs (i, 0..9). A thread an output loads it ten times, once in each of ten threads; a
thread a run of the ten outputs loads it once and keeps ten accumulators, while neighbouring
threads (along i) read x's row together.

`choose` decides (a plan, no text): the axis, the run's length, and why. The writers (columns.py,
two_stage.py) render the reduced operand once for each position of the run, the axis's index
name replaced by the position's number, so the renderer's memo (keyed by node and index) shares
every value whose index does not name the axis: the loads of x above. Each position has its own
accumulator; the reductions' results are looked up by the position their consumers' index names.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....arrays import contiguous
from ....fusion.group import Group, keepdims_shape, outer_shape
from ....ir.graph import Node
from ....ir.ops import ELEMENTWISE


class RunIndexError(Exception):
    """A consumer reached a run's reduction at an index that names no position of the run (a
    reshape's arithmetic): the kernel is written again without the run (writer.generate)."""


@dataclass(frozen=True)
class Staged:
    """A run's shared input read a row a thread (x of x @ w): a block's rows of it are copied
    into shared memory a chunk of the reduced axis at a time, each warp reading whole lines, and
    each thread reads its own row there (emit/run_tiles.py)."""
    node: int            # the input's node id
    row: int             # its axis along the threads (the reduced space's other kept axis)
    along: int           # its axis along the reduced one (stride 1)
    chunk: int           # elements of a row a chunk
    threads: int         # threads a block
    rows: int            # rows a thread (a block's tile: threads x rows rows)


@dataclass(frozen=True)
class Run:
    axis: int            # the reduced space's kept axis a thread walks
    size: int            # its length: the outputs a thread
    reason: str
    staged: Staged | None = None
    strip: bool = False  # `size` consecutive indices of a longer axis (choose_strip), named
    #                      i<axis>p<position>, where a whole axis's positions are its numbers

    def name(self, position: int) -> str:
        """The index a position of the run stands at in the kernel's text."""
        return f"i{self.axis}p{position}" if self.strip else str(position)

    def at(self, index: tuple, position: int | None) -> tuple:
        """`index` (names of the reduced space's or an output's axes) at one position of the run."""
        if position is None:
            return tuple(index)
        name = f"i{self.axis}"
        return tuple(self.name(position) if part == name else part for part in index)

    def result(self, results: list, shape, axes):
        """The renderer's special lookup of a reduction whose result at position j is
        results[j]: its index names j where the axis is (keepdims or not)."""
        outer_axes = [d for d in range(len(shape)) if d not in axes]

        def lookup(index):
            place = self.axis if len(index) == len(shape) else outer_axes.index(self.axis)
            part = index[place]
            names = [self.name(position) for position in range(self.size)]
            if part not in names:
                raise RunIndexError(f"a run's reduction read at {index}")
            return results[names.index(part)]
        return lookup


def positions(run: Run | None) -> list:
    """The positions a thread renders: the run's, or one (None) without a run."""
    return [None] if run is None else list(range(run.size))


def at(run: Run | None, index: tuple, position) -> tuple:
    return tuple(index) if run is None else run.at(index, position)


def choose(group: Group, shape: tuple, axes: tuple, longest: int, strides: dict,
           spread: int) -> Run | None:
    """The kept axis of at most `longest` (and at least 2) elements along which some input the
    reductions read stays the same, read by neighbouring threads (along the innermost other kept
    axis) at most `spread` bytes apart: the longest such axis, the last of equals; or None.

    NOTE: where the shared input's neighbouring threads read further apart (x @ w's rows, a
    thread a row), a run was slower on the H200 than a thread an output, whose warp reads a
    row's element once for all its lanes: (2^20 x 32) @ (32 x 16) float32 321 us against 213,
    (65536 x 256) @ (256 x 4) 223 against 80 (and faster only at (2^19 x 64) @ (64 x 10), 212
    against 342); the gradient x.T @ g, x read along its rows, 134 against 466 (BENCHMARKS.md)."""
    if longest < 2 or any(n.dtype.kind in "bc" or n.inputs[0].dtype.kind in "bc"
                          for n in group.reductions):
        return None                 # (accumulators a local array of numbers, tested numeric only)
    kept = [d for d in range(len(shape)) if d not in axes]
    best = None
    for axis in kept:
        others = [d for d in kept if d != axis]
        if not 2 <= shape[axis] <= longest or not others:
            continue
        shared = _shared_input(group, axis, others[-1], strides, spread)
        if shared is not None and (best is None or shape[axis] >= best[1]):
            best = (axis, shape[axis], shared)
    if best is None:
        return None
    axis, size, shared = best
    return Run(axis, size, f"a thread {size} outputs along axis {axis}, each element of "
                           f"{shared} read once for all of them")


def choose_strip(group: Group, shape: tuple, axes: tuple, size: int,
                 strides: dict) -> Run | None:
    """A strip of `size` consecutive outputs a thread along a kept axis other than the lanes'
    (the innermost kept one), where some input the reductions read does not vary along it but
    is read by neighbouring threads elements apart (a warp's load spans several sectors): y of
    the pairwise distances ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1), each thread's short
    row y[j, :] loaded once for `size` rows i instead of once for each. The axis
    must be a multiple of `size` (no position is guarded); sums, products, maxima and minima of
    numbers only; the axis nearest the lanes' of those that qualify."""
    if size < 2 or any(n.op not in ("sum", "prod", "max", "min") or n.dtype.kind not in "iuf"
                       or n.inputs[0].dtype.kind not in "iuf" for n in group.reductions):
        return None
    kept = [d for d in range(len(shape)) if d not in axes]
    if len(kept) < 2:
        return None
    fast = kept[-1]
    for axis in reversed(kept[:-1]):
        if shape[axis] % size or shape[axis] < 2 * size:
            continue
        for node, (place, near) in _reached(group, (axis, fast)):
            if place is not None or near is None or node.size <= 1:
                continue
            step = abs((strides.get(node.id) or contiguous(node.shape))[near])
            if step > 1:
                return Run(axis, size, f"a thread {size} outputs along axis {axis}, its row of "
                           f"the input of shape {node.shape} (neighbouring threads "
                           f"{step * node.dtype.itemsize} bytes apart) read once for all of them",
                           strip=True)
    return None


def choose_staged(group: Group, shape: tuple, axes: tuple, longest: int, strides: dict,
                  chunk_bytes: int, threads: int, outputs: int, blocks: int,
                  chunks: int, shared: int, classed: bool = False) -> Run | None:
    """A run along the short kept axis where the input it shares is read a row a thread (the
    other kept axis), contiguous along the single, last reduced axis: x of x @ w with w of at
    most `longest` columns. Neighbouring threads would read that input a row apart (choose's
    NOTE: slower than a thread an output); staged (Staged), a warp reads its rows' lines whole.

    A chunk is a power of two that divides `threads` (so a thread copies one column of the
    chunk), and a row at most `chunks` of them; a thread takes as many rows as keep its
    accumulators within `outputs` 32-bit registers, fit the `shared` bytes a block may declare,
    and leave at least `blocks` blocks. Only float32 and float64 inputs (shared memory holds them
    as they are) and sum reductions of numbers.

    `classed`: the rows vary in number (a shape class): a thread's rows as for many rows (a
    row a thread ran x @ w (2^19, 64) @ (64, 10) at 1.76x the time of 3 rows a thread on an
    H200; at a few thousand rows the grid leaves SMs idle, a few microseconds' work).

    NOTE: on the H100, a row of 16 chunks (K = 256, two barriers a chunk) was 4-7% slower staged
    than a thread an output; rows of 2-4 chunks 1.0-3.4x faster (BENCHMARKS.md)."""
    kept = [d for d in range(len(shape)) if d not in axes]
    if len(axes) != 1 or axes[0] != len(shape) - 1 or len(kept) != 2 or \
            any(n.op != "sum" or n.dtype.kind not in "iuf" for n in group.reductions):
        return None
    # (every output one a row's position, as the results are gathered: run_tiles.py)
    if any(out.shape not in (outer_shape(shape, axes), keepdims_shape(shape, axes))
           for out in group.outputs.values()):
        return None
    for axis in sorted(kept, key=lambda d: -shape[d]):
        row = kept[0] if axis == kept[1] else kept[1]
        if not 2 <= shape[axis] <= longest or shape[row] < 2 or row > axis:
            continue
        for node, (place, at_row, along) in _reached(group, (axis, row, axes[0])):
            if place is not None or at_row is None or along is None or \
                    node.dtype not in (np.float32, np.float64) or \
                    any(size != 1 for d, size in enumerate(node.shape) if d not in (at_row, along)):
                continue
            node_strides = strides.get(node.id) or contiguous(node.shape)
            if node_strides[along] != 1 or abs(node_strides[at_row]) * node.dtype.itemsize <= 16:
                continue
            # the chunk as asked (whole sectors of a row), then as many rows a thread as the
            # accumulators and the shared memory allow
            item = node.dtype.itemsize
            chunk = min(max(1, chunk_bytes // item), threads, shared // (threads * item) - 1)
            chunk = 1 << (chunk.bit_length() - 1) if chunk >= 1 else 0
            if chunk < 1 or threads % chunk:
                continue
            # (the results are gathered in shared memory too, and stored a block's rows at once)
            results = shape[axis] * sum(out.dtype.itemsize for out in group.outputs.values())
            same = all(out.dtype == node.dtype for out in group.outputs.values())
            fit = shared // (threads * (max((chunk + 1) * item, results) if same else
                                        (chunk + 1) * item + results))
            if fit < 1:
                continue
            if -(-shape[axes[0]] // chunk) > chunks:
                continue
            registers = shape[axis] * max(1, node.dtype.itemsize // 4)   # a row's accumulators
            many = MOST_ROWS * threads * blocks if classed else shape[row]
            rows = max(1, min(MOST_ROWS, outputs // registers, many // (threads * blocks), fit))
            staged = Staged(node.id, at_row, along, chunk, threads, rows)
            return Run(axis, shape[axis], f"a thread {shape[axis]} outputs along axis {axis} for "
                       f"each of {rows} rows, its rows of the input of shape {node.shape} read "
                       f"once for all of them from shared memory, {threads * rows} rows a block "
                       f"copied {chunk} elements a row at a time", staged)
    return None


def _shared_input(group: Group, axis: int, fast: int, strides: dict, spread: int) -> str | None:
    """The first input (its shape, in words) the group's reductions read at an index without
    `axis`, whose elements neighbouring threads (along `fast`) read at most `spread` bytes apart."""
    for node, (place, near) in _reached(group, (axis, fast)):
        if place is None and node.size > 1:
            step = 0 if near is None else \
                abs((strides.get(node.id) or contiguous(node.shape))[near])
            if step * node.dtype.itemsize <= spread:
                return f"an input of shape {node.shape}"
    return None


def _reached(group: Group, places: tuple):
    """(input node, where each of `places` (axes of the reduced space) falls in it: an axis or
    None) for every input the group's reductions read, the axes followed through elementwise
    ops, broadcasts and transposes, and reshapes that neither split nor merge them."""
    seen = set()
    pending = [(node.inputs[0], tuple(places)) for node in group.reductions]
    while pending:
        node, where = pending.pop()
        if (node.id, where) in seen:
            continue
        seen.add((node.id, where))
        if node.id not in group.members:
            yield node, where
            continue
        if node.kind == ELEMENTWISE or node.op == "broadcast_to":
            for source in node.inputs:
                pending.append((source, tuple(_broadcast_place(source, node, p) for p in where)))
        elif node.op == "transpose":
            perm = tuple(node.attrs["perm"])
            pending.append((node.inputs[0], tuple(None if p is None else perm[p] for p in where)))
        elif node.op == "reshape":
            source = node.inputs[0]
            moved = tuple(_reshape_place(source, node, p) for p in where)
            if LOST not in moved:
                pending.append((source, moved))


MOST_ROWS = 8                 # rows a thread of a staged run, at most
LOST = -1      # an axis a reshape splits or merges: not followed


def _reshape_place(source: Node, node: Node, place: int | None) -> int | None:
    """Where axis `place` of `node` (a reshape of `source`) is in `source`: the axis of the same
    length after the same number of elements (size-1 axes come and go: None, unchanging);
    LOST where the reshape splits or merges it."""
    if place is None or node.shape[place] == 1:
        return None
    before = int(np.prod(node.shape[:place], dtype=np.int64))
    for at, size in enumerate(source.shape):
        if size == node.shape[place] and int(np.prod(source.shape[:at], dtype=np.int64)) == before:
            return at
    return LOST


def _broadcast_place(source: Node, node: Node, place: int | None) -> int | None:
    """Where `place` of `node` falls in `source` broadcast to it, or None where the source has
    no such axis or one of length 1 (the same value all along it)."""
    if place is None:
        return None
    at = place - (node.ndim - source.ndim)
    if at < 0 or (source.shape[at] == 1 and node.shape[place] != 1):
        return None
    return at
