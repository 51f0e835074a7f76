"""Scan groups on the CPU: one sequential loop along the scanned axis inside the numba function,
prange over the other axes.

"rows" (the scanned axis is the last, or only axes of one element follow it): a thread takes
whole lines (prange over the kept axes), walks its line in order keeping the running value in a
register, and at each element computes the producers, combines, and stores the epilogue's
outputs. "columns" (kept axes follow the scanned one): the inner loop runs over a tile of
COLUMN_TILE contiguous elements of the last axis, one running value each in a small buffer, so
each step along the scanned axis reads and writes contiguous memory (as column reductions do).
"""
from __future__ import annotations

import numpy as np

from .. import scanning
from .kernel import COLUMN_TILE, PARALLEL_ELEMENTS


class Scans:
    def scan(self):
        self._zero_d_views()
        node = self.group.scan
        shape, axis = node.shape, node.attrs["axis"]
        r = self.renderer
        full = tuple(f"i{d}" for d in range(len(shape)))
        size = int(np.prod(shape, dtype=np.int64))
        rows = all(s == 1 for s in shape[axis + 1:])
        kept = [d for d in range(len(shape)) if d != axis]
        lines = size // shape[axis] if shape[axis] else 0
        if rows:
            parallel = lines > 1 and size >= PARALLEL_ELEMENTS
            opened = self.loops([f"i{d}" for d in kept], [shape[d] for d in kept], parallel)
            acc = r.name("run")
            r.emit(f"{acc} = {scanning.identity(r, node)}")
            r.emit(f"for i{axis} in range({shape[axis]}):")
            r.push()
            self._step(node, acc, full)
            r.pop()
            self.close(opened)
            return "rows", parallel
        last = len(shape) - 1
        width = shape[last]
        tiles = -(-width // COLUMN_TILE)
        outer = [d for d in kept if d != last]
        sizes = [shape[d] for d in outer] + [tiles]
        parallel = size >= PARALLEL_ELEMENTS and int(np.prod(sizes, dtype=np.int64)) > 1
        opened = self.loops([f"i{d}" for d in outer] + ["t"], sizes, parallel)
        lo, hi, accs = r.name("lo"), r.name("hi"), r.name("runs")
        r.emit(f"{lo} = t * {COLUMN_TILE}")
        r.emit(f"{hi} = min({width}, {lo} + {COLUMN_TILE})")
        r.emit(f"{accs} = np.full({COLUMN_TILE}, {scanning.identity(r, node)})")
        r.emit(f"for i{axis} in range({shape[axis]}):")
        r.push()
        r.emit(f"for i{last} in range({lo}, {hi}):")
        r.push()
        self._step(node, f"{accs}[i{last} - {lo}]", full)
        r.pop()
        r.pop()
        self.close(opened)
        return "columns", parallel

    def _step(self, node, acc: str, full: tuple) -> None:
        """One element: the scan's operand combined into `acc`, then every output stored (the
        scan's value at this element is the running value)."""
        r = self.renderer
        value = r.value(node.inputs[0], full)
        previous, current = r.name("before"), r.name("scanned")
        r.emit(f"{previous} = {acc}")
        r.emit(f"{current} = {scanning.combine(r, node, previous, value)}")
        r.emit(f"{acc} = {current}")
        r.special[node.id] = lambda index, current=current: (
            current if scanning.same_element(index, full, node.shape) else None)
        for k, arg in enumerate(self.outputs):
            self.store(k, arg.node, full)
        del r.special[node.id]
