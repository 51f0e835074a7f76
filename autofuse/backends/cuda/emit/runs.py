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
from ....fusion.group import Group
from ....ir.graph import Node
from ....ir.ops import ELEMENTWISE


class RunIndexError(Exception):
    """A consumer reached a run's reduction at an index that names no position of the run (a
    reshape's arithmetic): the kernel is written again without the run (writer.generate)."""


@dataclass(frozen=True)
class Run:
    axis: int            # the reduced space's kept axis a thread walks
    size: int            # its length: the outputs a thread
    reason: str

    def at(self, index: tuple, position: int | None) -> tuple:
        """`index` (names of the reduced space's or an output's axes) at one position of the run."""
        if position is None:
            return tuple(index)
        name = f"i{self.axis}"
        return tuple(str(position) if part == name else part for part in index)

    def result(self, results: list, shape, axes):
        """The renderer's special lookup of a reduction whose result at position j is
        results[j]: its index names j where the axis is (keepdims or not)."""
        outer_axes = [d for d in range(len(shape)) if d not in axes]

        def lookup(index):
            place = self.axis if len(index) == len(shape) else outer_axes.index(self.axis)
            part = index[place]
            if not part.isdigit():
                raise RunIndexError(f"a run's reduction read at {index}")
            return results[int(part)]
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


def _shared_input(group: Group, axis: int, fast: int, strides: dict, spread: int) -> str | None:
    """The first input (its shape, in words) the group's reductions read at an index without
    `axis`, whose elements neighbouring threads (along `fast`) read at most `spread` bytes apart;
    the axes followed through elementwise ops, broadcasts and transposes (not reshapes)."""
    seen = set()
    pending = [(node.inputs[0], axis, fast) for node in group.reductions]
    while pending:
        node, place, near = pending.pop()
        if (node.id, place, near) in seen:
            continue
        seen.add((node.id, place, near))
        if node.id not in group.members:
            if place is None and node.size > 1:
                step = 0 if near is None else \
                    abs((strides.get(node.id) or contiguous(node.shape))[near])
                if step * node.dtype.itemsize <= spread:
                    return f"an input of shape {node.shape}"
            continue
        if node.kind == ELEMENTWISE or node.op == "broadcast_to":
            for source in node.inputs:
                pending.append((source, _broadcast_place(source, node, place),
                                _broadcast_place(source, node, near)))
        elif node.op == "transpose":
            perm = tuple(node.attrs["perm"])
            pending.append((node.inputs[0], None if place is None else perm[place],
                            None if near is None else perm[near]))
        elif node.op == "reshape":
            source = node.inputs[0]
            moved = [_reshape_place(source, node, p) for p in (place, near)]
            if LOST not in moved:
                pending.append((source, *moved))
    return None


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
