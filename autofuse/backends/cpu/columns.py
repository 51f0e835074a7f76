"""Reductions along a strided axis on the CPU: the inner loop runs over the contiguous kept axis.

A reduction over axis a = ndim - 2 (axis 0 of a matrix, the middle axis of a 3-D array) walked
column by column reads memory with a stride of a whole row per element. Here a thread owns a tile
of COLUMN_TILE contiguous columns and keeps one accumulator per column in a small buffer; it walks
the reduced axis row by row and updates the tile's accumulators from each row's contiguous slice.
Whole-column programs (softmax or z-score along axis 0) run one such pass per reduction, each later
pass reading the earlier ones' results from their buffers, then store the rows the same way."""
from __future__ import annotations

from ...fusion.group import keepdims_shape, outer_shape
from .kernel import COLUMN_TILE


class Columns:
    def column_layout(self, shape, axes) -> bool:
        """Whether the reduction is over the axis just before a kept contiguous last axis."""
        return len(axes) == 1 and len(shape) >= 2 and axes[0] == len(shape) - 2 \
            and shape[-1] > 1 and shape[axes[0]] > 0

    def column_reduction(self, shape, axes, full, parallel, accumulator):
        r = self.renderer
        axis, last = axes[0], len(shape) - 1
        width = shape[last]
        tiles = -(-width // COLUMN_TILE)
        column = f"i{last}"
        before = list(range(axis))
        opened = self.loops([f"i{d}" for d in before] + ["t"], [shape[d] for d in before] + [tiles],
                            parallel)
        lo, hi = r.name("lo"), r.name("hi")
        r.emit(f"{lo} = t * {COLUMN_TILE}")
        r.emit(f"{hi} = min({width}, {lo} + {COLUMN_TILE})")
        for node in self.group.reductions:
            acc_type = accumulator(node)
            accs, idxs = r.name("accs"), r.name("ks")
            r.emit(f"{accs} = np.empty({COLUMN_TILE}, {r.ctor(r.held(acc_type))})")
            r.emit(f"{idxs} = np.zeros({COLUMN_TILE}, np.int64)")
            acc, idx = f"{accs}[{column} - {lo}]", f"{idxs}[{column} - {lo}]"
            self._columns(lo, hi, column)
            self.init(node, acc, idx, acc_type)
            r.pop()
            r.emit(f"for r{axis} in range({shape[axis]}):")
            r.push()
            self._columns(lo, hi, column)
            self.combine(node, acc, idx, r.value(node.inputs[0], full), acc_type, f"r{axis}")
            r.pop()
            r.pop()
            final = idx if node.op in ("argmax", "argmin") else acc
            value = f"{r.ctor(node.dtype)}({final})"
            r.special[node.id] = lambda index, value=value: value
        self._store_columns(shape, axes, full, lo, hi, column)
        self.close(opened)
        return "columns", parallel

    def _columns(self, lo, hi, column):
        self.renderer.emit(f"for {column} in range({lo}, {hi}):")
        self.renderer.push()

    def _store_columns(self, shape, axes, full, lo, hi, column):
        r = self.renderer
        axis = axes[0]
        outer_index = tuple(f"i{d}" for d in range(len(shape)) if d not in axes)
        keep_index = tuple("0" if d in axes else f"i{d}" for d in range(len(shape)))
        reduced, row = [], []
        for k, arg in enumerate(self.outputs):
            node = arg.node
            if node.shape == outer_shape(shape, axes):
                reduced.append((k, node, outer_index))
            elif node.shape == keepdims_shape(shape, axes):
                reduced.append((k, node, keep_index))
            else:
                row.append((k, node, full))
        if reduced:
            self._columns(lo, hi, column)
            for k, node, index in reduced:
                self.store(k, node, index)
            r.pop()
        if row:
            r.emit(f"for r{axis} in range({shape[axis]}):")
            r.push()
            self._columns(lo, hi, column)
            for k, node, index in row:
                self.store(k, node, index)
            r.pop()
            r.pop()
