"""Reductions along a strided axis on the CPU: the inner loop runs over the contiguous kept axis.

A reduction over axis a = ndim - 2 (axis 0 of a matrix, the middle axis of a 3-D array) walked
column by column reads memory with a stride of a whole row per element. Here the inner loop runs
over a tile of contiguous columns with one accumulator per column in a small buffer, walking the
reduced axis row by row and updating the tile's accumulators from each row's contiguous slice.
Every kept axis after the reduced one is part of a "row" (x.sum(axis=0) of an (N, H, W) stack
reads rows of H x W): tiles are cut along the first of them, whole in the others.

Tiles are wide (up to COLUMN_TILE columns): a narrow tile reads a short piece of each row and
jumps a whole row ahead, which the hardware prefetcher follows badly (4096 x 4096 float32 summed
over axis 0 on one core: 7.4 ms in tiles of 256 columns, 3.9 ms in tiles of 4096, NumPy 4.2 ms).
Where the wide tiles and the axes before the reduced one leave fewer than COLUMN_TILES pieces of
work, a plain column reduction also cuts the reduced axis into blocks of rows: each (block, tile)
accumulates into its own row of a partial buffer, and the partials are merged per column at the
end, so both threads stream whole rows. Whole-column programs (softmax or z-score along axis 0)
run one pass per reduction over a tile, each later pass reading the earlier ones' results from
their buffers, then store the rows the same way; their tiles narrow (down to COLUMN_TILE_MIN)
until there are COLUMN_TILES of them."""
from __future__ import annotations

from ...fusion.group import keepdims_shape, outer_shape
from .kernel import COLUMN_BLOCK_ROWS, COLUMN_TILE, COLUMN_TILE_MIN, COLUMN_TILES


class Columns:
    def column_layout(self, shape, axes) -> bool:
        """Whether the reduction is over the axis just before a kept contiguous last axis."""
        return len(axes) == 1 and len(shape) >= 2 and axes[0] < len(shape) - 1 \
            and shape[-1] > 1 and all(size > 0 for d, size in enumerate(shape) if d != axes[0])
        # (a kept size 0: the rows loops; a reduced axis of 0 rows runs empty loops here, as a
        # shape class's kernel does at that size)

    def column_reduction(self, shape, axes, full, parallel, accumulator):
        axis = axes[0]
        first, inner = shape[axis + 1], self._count(shape, range(axis + 2, len(shape)))
        outside = self._count(shape, range(axis))
        plain = not any(self.group.depends_on_reduction(n.inputs[0]) for n in self.group.reductions) \
            and all(arg.node.shape != tuple(shape) and arg.node.id not in self.space_rows
                    for arg in self.outputs)
        # a tile: `tile` indices of the first axis after the reduced one, each `inner` elements
        tile = min(first, max(1, COLUMN_TILE // inner))
        pieces = outside * -(-first // tile)
        blocks = min(COLUMN_TILES // pieces, shape[axis] // COLUMN_BLOCK_ROWS) if plain else 0
        if self.dynamic:
            # NOTE: sizes may be kernel arguments (a shape class, dynamic/): blocks of rows at
            # every number of rows (their length computed in the kernel; an empty block merges
            # its identity), never a choice on the axes before the reduced one
            blocks = COLUMN_TILES // pieces if plain and axis == 0 else 0
        if parallel and blocks >= 2:
            return self._row_blocks(shape, axis, full, tile, blocks, accumulator)
        passes = min(COLUMN_TILES // pieces, shape[axis] // COLUMN_BLOCK_ROWS)
        if self.dynamic:
            passes = COLUMN_TILES // pieces if axis == 0 else 0     # (as blocks, above)
        if parallel and not plain and passes >= 2:
            return self._row_block_passes(shape, axis, full, tile, passes, accumulator)
        if parallel and not plain and not self.dynamic:
            narrow = max(1, COLUMN_TILE_MIN // inner)
            tile = max(min(tile, narrow), min(tile, -(-first * outside // COLUMN_TILES)))
        return self._tiles(shape, axis, full, parallel, tile, accumulator)

    def _tiles(self, shape, axis, full, parallel, tile, accumulator):
        """Each (outer index, tile of rows' pieces) on one thread, every pass over the axis."""
        r = self.renderer
        first = shape[axis + 1]
        before = list(range(axis))
        opened = self.loops([f"i{d}" for d in before] + ["t"],
                            [shape[d] for d in before] + [-(-first // tile)], parallel)
        lo, hi = self._tile_bounds(tile, first)
        local = self._local(shape, axis, lo)
        for node in self.group.reductions:
            acc_type = accumulator(node)
            acc, idx = self._buffers(node, acc_type, (tile,) + tuple(shape[axis + 2:]), local)
            self.close(self._row(shape, axis, lo, hi, lambda: self.init(node, acc, idx, acc_type)))
            r.emit(f"for r{axis} in range({shape[axis]}):")
            r.push()
            self.close(self._row(shape, axis, lo, hi, lambda: self.combine(
                node, acc, idx, r.value(node.inputs[0], full), acc_type, f"r{axis}")))
            r.pop()
            self._result(node, acc, idx)
        self._store_columns(shape, axis, full, lo, hi)
        self.close(opened)
        return "columns", parallel

    def _row_blocks(self, shape, axis, full, tile, blocks, accumulator):
        """A plain column reduction cut into blocks of rows as well as tiles of columns: partial
        results per block, merged per column after the parallel loop."""
        r = self.renderer
        first, rows = shape[axis + 1], shape[axis]
        before = list(range(axis))
        tiles = -(-first // tile)
        step = -(-rows // blocks)
        if self.dynamic:
            step = r.name("step")
            r.emit(f"{step} = -(-{rows} // {blocks})")
        outer = [f"i{d}" for d in before]
        row = [f"i{d}" for d in range(axis + 1, len(shape))]
        partials = []
        for node in self.group.reductions:
            acc_type = accumulator(node)
            values, where = r.name("partial"), r.name("where")
            dims = ", ".join(str(n) for n in [shape[d] for d in before] + [blocks] +
                             list(shape[axis + 1:]))
            r.emit(f"{values} = np.empty(({dims}), {r.ctor(r.held(acc_type))})")
            if node.op in ("argmax", "argmin"):
                r.emit(f"{where} = np.zeros(({dims}), np.int64)")
            partials.append((node, acc_type, values, where))
        r.emit(f"for w in numba.prange({blocks * tiles * self._count(shape, before)}):")
        r.push()
        self._unravel("w", outer + ["b", "t"], [shape[d] for d in before] + [blocks, tiles])
        lo, hi = self._tile_bounds(tile, first)
        at = ", ".join(outer + ["b"] + row)
        for node, acc_type, values, where in partials:
            self._block_partial(shape, axis, full, tile, lo, hi, (rows, step), node, acc_type,
                                (f"{values}[{at}]", f"{where}[{at}]"))
        r.pop()
        opened = self.loops(outer + ["t"], [shape[d] for d in before] + [tiles],
                            tiles * self._count(shape, before) > 1)
        lo, hi = self._tile_bounds(tile, first)

        def merge_and_store():
            for node, acc_type, values, where in partials:
                acc, idx = r.name("acc"), r.name("k")
                self.init(node, acc, idx, acc_type)
                r.emit(f"for b in range({blocks}):")
                r.push()
                self.accumulators.merge(node, acc, idx, f"{values}[{at}]",
                                        f"{where}[{at}]" if node.op in ("argmax", "argmin") else "0")
                r.pop()
                self._result(node, acc, idx)
            for k, arg in enumerate(self.outputs):
                index = tuple("0" if d == axis else f"i{d}" for d in range(len(shape)))
                self.store(k, arg.node, index if arg.node.ndim == len(shape) else
                           tuple(i for d, i in enumerate(index) if d != axis))
        self.close(self._row(shape, axis, lo, hi, merge_and_store))
        self.close(opened)
        return "columns in blocks of rows", True

    def _row_block_passes(self, shape, axis, full, tile, blocks, accumulator):
        """A whole-column program (softmax, z-score along axis 0) as parallel passes that each
        stream whole rows: per reduction, blocks of rows into partials, merged per column into a
        buffer the later passes read; then the stores, again by blocks of rows. (Narrow tiles,
        which gave both threads work, read 1 KB of a row and jumped a row ahead: 4096 x 4096
        float32 softmax down columns ran at 0.6x NumPy.)"""
        r = self.renderer
        first, rows = shape[axis + 1], shape[axis]
        before = list(range(axis))
        tiles = -(-first // tile)
        step = -(-rows // blocks)
        outer = [f"i{d}" for d in before]
        row = [f"i{d}" for d in range(axis + 1, len(shape))]
        kept = ", ".join(outer + row)
        sizes = [shape[d] for d in before]
        work = blocks * tiles * self._count(shape, before)
        if self.dynamic:
            step = r.name("step")
            r.emit(f"{step} = -(-{rows} // {blocks})")

        def by_blocks(body):
            r.emit(f"for w in numba.prange({work}):")
            r.push()
            self._unravel("w", outer + ["b", "t"], sizes + [blocks, tiles])
            lo, hi = self._tile_bounds(tile, first)
            body(lo, hi)
            r.pop()

        for node in self.group.reductions:
            acc_type = accumulator(node)
            arg = node.op in ("argmax", "argmin")
            values, where, merged = r.name("partial"), r.name("where"), r.name("column")
            dims = ", ".join(str(n) for n in sizes + [blocks] + list(shape[axis + 1:]))
            r.emit(f"{values} = np.empty(({dims}), {r.ctor(r.held(acc_type))})")
            if arg:
                r.emit(f"{where} = np.zeros(({dims}), np.int64)")
            kept_dims = ", ".join(str(n) for n in sizes + list(shape[axis + 1:]))
            r.emit(f"{merged} = np.empty(({kept_dims},), {r.ctor(node.dtype)})")
            at = ", ".join(outer + ["b"] + row)

            def accumulate(lo, hi, node=node, acc_type=acc_type, places=(
                    f"{values}[{at}]", f"{where}[{at}]")):
                self._block_partial(shape, axis, full, tile, lo, hi, (rows, step), node,
                                    acc_type, places)
            by_blocks(accumulate)
            opened = self.loops(outer + ["t"], sizes + [tiles], tiles * self._count(shape, before) > 1)
            lo, hi = self._tile_bounds(tile, first)

            def merge(node=node, values=values, where=where, merged=merged, at=at,
                      acc_type=acc_type, arg=arg):
                total, total_idx = r.name("acc"), r.name("k")
                self.init(node, total, total_idx, acc_type)
                r.emit(f"for b in range({blocks}):")
                r.push()
                self.accumulators.merge(node, total, total_idx, f"{values}[{at}]",
                                        f"{where}[{at}]" if arg else "0")
                r.pop()
                final = total_idx if arg else total
                r.emit(f"{merged}[{kept}] = {r.ctor(node.dtype)}({final})")
            self.close(self._row(shape, axis, lo, hi, merge))
            self.close(opened)
            value = f"{merged}[{kept}]"
            r.special[node.id] = lambda index, value=value: value

        reduced, row_outputs = [], []
        for k, arg in enumerate(self.outputs):
            node = arg.node
            if node.shape == outer_shape(shape, (axis,)):
                reduced.append((k, node, tuple(f"i{d}" for d in range(len(shape)) if d != axis)))
            elif node.shape == keepdims_shape(shape, (axis,)):
                reduced.append((k, node, tuple("0" if d == axis else f"i{d}"
                                               for d in range(len(shape)))))
            else:
                row_outputs.append((k, node, full))
        if reduced:
            opened = self.loops(outer + ["t"], sizes + [tiles], tiles * self._count(shape, before) > 1)
            lo, hi = self._tile_bounds(tile, first)
            self.close(self._row(shape, axis, lo, hi, lambda: [
                self.store(k, node, index) for k, node, index in reduced]))
            self.close(opened)
        if row_outputs:
            def stores(lo, hi):
                r.emit(f"for r{axis} in range(b * {step}, min({rows}, (b + 1) * {step})):")
                r.push()
                self.close(self._row(shape, axis, lo, hi, lambda: [
                    self.store(k, node, index) for k, node, index in row_outputs]))
                r.pop()
            by_blocks(stores)
        return "columns in blocks of rows, a pass per reduction", True

    def _block_partial(self, shape, axis, full, tile, lo, hi, rows, node, acc_type, places):
        """One block of rows of a tile reduced into the tile's own buffer, then copied to the
        block's row of the partials (`places`: the value's and the position's). Accumulating
        straight into the partials, a 2-D array the loop also reads through, kept LLVM from
        vectorizing the row loop: 16384 x 1024 float32 summed over axis 0 took 3.8 ms on two
        threads against 1.5 ms through a local buffer (NumPy 3.0)."""
        r = self.renderer
        count, step = rows
        arg = node.op in ("argmax", "argmin")
        acc, idx = self._buffers(node, acc_type, (tile,) + tuple(shape[axis + 2:]),
                                 self._local(shape, axis, lo))
        self.close(self._row(shape, axis, lo, hi, lambda: self.init(node, acc, idx, acc_type)))
        r.emit(f"for r{axis} in range(b * {step}, min({count}, (b + 1) * {step})):")
        r.push()
        self.close(self._row(shape, axis, lo, hi, lambda: self.combine(
            node, acc, idx, r.value(node.inputs[0], full), acc_type, f"r{axis}")))
        r.pop()

        def copy():
            r.emit(f"{places[0]} = {acc}")
            if arg:
                r.emit(f"{places[1]} = {idx}")
        self.close(self._row(shape, axis, lo, hi, copy))

    def _tile_bounds(self, tile, extent):
        r = self.renderer
        lo, hi = r.name("lo"), r.name("hi")
        r.emit(f"{lo} = t * {tile}")
        r.emit(f"{hi} = min({extent}, {lo} + {tile})")
        return lo, hi

    @staticmethod
    def _local(shape, axis, lo):
        """A row element's place in its tile's accumulator buffer."""
        return (f"i{axis + 1} - {lo}",) + tuple(f"i{d}" for d in range(axis + 2, len(shape)))

    def _buffers(self, node, acc_type, dims, local):
        r = self.renderer
        accs, idxs = r.name("accs"), r.name("ks")
        size = ", ".join(str(n) for n in dims)
        r.emit(f"{accs} = np.empty(({size},), {r.ctor(r.held(acc_type))})")
        if node.op not in ("argmax", "argmin"):
            return f"{accs}[{', '.join(local)}]", idxs      # a position nobody reads
        r.emit(f"{idxs} = np.zeros(({size},), np.int64)")
        return f"{accs}[{', '.join(local)}]", f"{idxs}[{', '.join(local)}]"

    def _result(self, node, acc, idx):
        r = self.renderer
        final = idx if node.op in ("argmax", "argmin") else acc
        value = f"{r.ctor(node.dtype)}({final})"
        r.special[node.id] = lambda index, value=value: value

    @staticmethod
    def _count(shape, dims):
        count = 1
        for d in dims:
            count *= shape[d]
        return count

    def _unravel(self, flat, names, sizes):
        """Names for the digits of `flat` over `sizes`, the last one varying fastest."""
        r = self.renderer
        rest = flat
        for name, size in reversed(list(zip(names, sizes))):
            r.emit(f"{name} = {rest} % {size}")
            quotient = r.name("q")
            r.emit(f"{quotient} = {rest} // {size}")
            rest = quotient

    def _row(self, shape, axis, lo, hi, body) -> int:
        """Loops over a tile's part of a row (the first kept axis after the reduced one from lo
        to hi, the later ones whole) around `body`; returns how many to close."""
        r = self.renderer
        r.emit(f"for i{axis + 1} in range({lo}, {hi}):")
        r.push()
        opened = 1 + self.loops([f"i{d}" for d in range(axis + 2, len(shape))],
                                list(shape[axis + 2:]), False)
        body()
        return opened

    def _store_columns(self, shape, axis, full, lo, hi):
        outer_index = tuple(f"i{d}" for d in range(len(shape)) if d != axis)
        keep_index = tuple("0" if d == axis else f"i{d}" for d in range(len(shape)))
        reduced, row = [], []
        for k, arg in enumerate(self.outputs):
            node = arg.node
            if node.shape == outer_shape(shape, (axis,)):
                reduced.append((k, node, outer_index))
            elif node.shape == keepdims_shape(shape, (axis,)):
                reduced.append((k, node, keep_index))
            else:
                row.append((k, node, full))

        def stores(items):
            return lambda: [self.store(k, node, index) for k, node, index in items]
        if reduced:
            self.close(self._row(shape, axis, lo, hi, stores(reduced)))
        if row:
            self.renderer.emit(f"for r{axis} in range({shape[axis]}):")
            self.renderer.push()
            self.close(self._row(shape, axis, lo, hi, stores(row)))
            self.renderer.pop()
