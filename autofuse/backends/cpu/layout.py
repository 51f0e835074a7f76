"""Loops that follow memory order on the CPU: which order a group's arrays are stored in, and how
its loops walk them (methods of the source writer, source.CpuSource).

- A reduction walks its reduced space in its main input's memory order (memory_order,
  memory_space): a Fortran matrix's sum over rows runs as a column reduction, `x.T.sum(0)` of a C
  matrix as rows; full-size results only the caller reads are stored in that order.
- An elementwise group whose full-size inputs share one stored order runs flat over memory, its
  results stored in that order, as NumPy's ufuncs keep their inputs' order (shared_order).
- An elementwise group that reads an array across its memory order walks the last two axes in
  tiles (reads_across; loops.tiled_loops).
Measured: BENCHMARKS.md, "Fortran-ordered and transposed inputs on the CPU"."""
from __future__ import annotations

from ...arrays import contiguous
from ...fusion.group import outer_shape
from ...ir.ops import ELEMENTWISE, REDUCE
from .kernel import CROSS_TILE


class Layouts:
    def shared_order(self, shape) -> tuple | None:
        """The axis order (slowest first) in which every full-size input of an elementwise
        group is stored contiguously, where it is not C's and the group's outputs may take it
        (`own_layout`: they are the function's results, read by no other kernel): the group then
        runs flat over memory, its outputs allocated in that order, as NumPy's ufuncs keep
        their inputs' order (a Fortran input, a Fortran result). Else None."""
        if not self.own_layout or self.dynamic or self.group.kind != "elementwise" or \
                len(shape) < 2 or any(n.shape not in (tuple(shape), ()) for n in self.group.inputs):
            return None
        found = None
        for node in self.group.inputs:
            if node.shape != tuple(shape):
                continue
            order = _stored_order(self.strides.get(node.id), tuple(shape))
            if order is None or (found is not None and order != found):
                return None
            found = order
        return found

    def reads_across(self, shape) -> bool:
        """Whether the group reads an array across its memory order while it writes along the
        last axis (a transpose that moves the last axis, a full-size input stored in another
        order) over a space big enough for tiles (CROSS_TILE in each of the last two axes)."""
        if self.dynamic or len(shape) < 2 or min(shape[-2:]) < 2 * CROSS_TILE:
            return False
        for member in self.group.nodes:
            if member.op == "transpose" and member.ndim >= 2 and \
                    tuple(member.attrs["perm"])[-1] != member.ndim - 1:
                return True
        for node in self.group.inputs:
            strides = self.strides.get(node.id)
            if node.shape == tuple(shape) and strides is not None and \
                    abs(strides[-1]) > min(abs(s) for s, size in zip(strides, shape) if size > 1):
                return True
        return False

    def memory_order(self, shape, axes, rows: bool = False) -> tuple | None:
        """The reduced space's axes in the memory order of the first input read at its full
        size (slowest first; read directly or through one transpose: x.T.sum(0)), where that is
        not their own order and the loops can follow it: no axis of length 1, the kept axes in
        their own order (the outputs are stored by them), every output of the reduced shape (or,
        with `rows`, of the space's, stored in that order); else None."""
        if self.dynamic or 1 in shape or len(shape) < 2:
            return None
        shapes = (outer_shape(shape, axes),) + ((tuple(shape),) if rows else ())
        if any(arg.node.shape not in shapes for arg in self.outputs):
            return None
        strides = self._space_strides(tuple(shape))
        if strides is None:
            return None
        order = tuple(sorted(range(len(shape)), key=lambda d: (-abs(strides[d]), d)))
        kept = [d for d in order if d not in axes]
        if order == tuple(range(len(shape))) or kept != sorted(kept):
            return None
        return order

    def _space_strides(self, shape: tuple) -> tuple | None:
        """The element strides, along the reduced space's axes, of the first input the group
        reads at the space's full size through elementwise ops, reductions and slices, or
        through one transpose whose result they read; None where there is none."""
        readers = {}
        for member in self.group.nodes:
            for source in member.inputs:
                readers.setdefault(source.id, []).append(member)

        def along(node) -> bool:
            return all(m.kind in (ELEMENTWISE, REDUCE) or m.op == "slice"
                       for m in readers.get(node.id, ()))
        for node in self.group.inputs:
            own = self.strides.get(node.id) or contiguous(node.shape)
            if any(step == 0 and size > 1 for step, size in zip(own, node.shape)):
                continue                # (a broadcast view has no memory order of its own)
            if node.shape == shape and along(node):
                return tuple(own)
            for member in readers.get(node.id, ()):
                if member.op == "transpose" and member.shape == shape and along(member):
                    return tuple(own[p] for p in member.attrs["perm"])
        return None


def _stored_order(strides, shape: tuple) -> tuple | None:
    """The axis order (slowest first) in which an array of these element strides is stored
    contiguously, where it is and that order is not C's; else None (C order, gaps, negative or
    zero strides)."""
    if strides is None or any(s <= 0 for s, n in zip(strides, shape) if n > 1):
        return None
    order = tuple(sorted(range(len(shape)), key=lambda d: (-strides[d] if shape[d] > 1 else 0, d)))
    step = 1
    for d in reversed(order):
        if shape[d] > 1 and strides[d] != step:
            return None
        step *= shape[d]
    return None if order == tuple(range(len(shape))) else order


def memory_space(shape, axes, order) -> tuple:
    """(shape, reduced axes, the values' index) of a reduced space walked in `order` (its axes,
    slowest in memory first): position k of the new space is axis order[k], named i<k> (kept) or
    r<k> (reduced); the index of the space's values names each of their axes by its place."""
    moved = tuple(shape[d] for d in order)
    reduced = tuple(k for k, d in enumerate(order) if d in axes)
    names = [f"r{k}" if k in reduced else f"i{k}" for k in range(len(order))]
    return moved, reduced, tuple(names[order.index(d)] for d in range(len(shape)))
