"""Transposed 2-D reads through shared-memory tiles: which inputs are read transposed, the tile
loop, and values loaded ahead of a barrier."""
from __future__ import annotations



from ..kernel import MAX_GRID, KernelSource, identifiers, in_bounds


class Transposes:
    """Methods of the kernel writer (writer.KernelWriter); see the module docstring."""

    def transposed_inputs(self, shape) -> list:
        """Group inputs read only through a 2-D transpose to the output's shape: such reads are
        strided, so they go through shared-memory tiles instead."""
        # (a shape class's kernel takes the tiles at every size: its guards cover small ones)
        if len(shape) != 2 or (min(shape) < 32 and not self.dynamic):
            return []
        found = []
        for param in self.params:
            node = param.node
            readers = [m for m in self.group.members.values() if any(s.id == node.id for s in m.inputs)]
            if param.by_value or param.strides is not None or node.shape != shape[::-1] or not readers:
                continue
            if all(m.op == "transpose" and m.shape == shape for m in readers):
                found.append(param)
        return found

    def transpose_tiles(self, shape, index, transposed) -> KernelSource:
        """TILE_T x TILE_T output tiles; each transposed input staged through shared memory with
        coalesced reads along its rows, then read across (a padding column avoids bank
        conflicts). Where every tile is full and the arrays allow (transpose_lanes), a thread
        reads and writes its row segment of a tile as one vector (16 bytes of float32), with an
        element-by-element loop for base addresses not 16-byte aligned."""
        r = self.renderer
        rows, cols = shape
        side = self.tuning.tile_t
        tiles_r, tiles_c = -(-rows // side), -(-cols // side)
        r.emit(f"t = {self.ix('cuda.threadIdx.x')}")
        for param in transposed:
            r.emit(f"tile_{param.name} = cuda.shared.array(({side}, {side + 1}), "
                   f"{self.numba_type(param.node.dtype)})")
        lanes, vectors = self.transpose_lanes(shape, transposed)
        if lanes:
            for name in ("address", f"vload{lanes}", f"vstore{lanes}"):
                r.globals[name] = ("vector", name)
            aligned = " | ".join(f"address({p.name})" for p in
                                 transposed + [self.names[n] for n in vectors] + self.outputs)
            # (a class's vectors where the call's tiles are all full: its sizes decide at run time)
            full = f" and {rows} % {side} == 0 and {cols} % {side} == 0" if self.dynamic else ""
            r.emit(f"if ({aligned}) % 16 == 0{full}:")
            r.push()
            self.tile_loop(shape, transposed, lanes, vectors, exact=True)
            r.pop()
            r.emit("else:    # a base address not 16-byte aligned" +
                   (" (or a tile not full)" if self.dynamic else "") + ": element by element")
            r.push()
        self.tile_loop(shape, transposed, 1, {})
        if lanes:
            r.pop()
        strategy = "transpose tiles" + (f", {lanes}-wide vectors" if lanes else "")
        written = self.finish(strategy, self.tuning.tile_threads,
                              (min(tiles_r * tiles_c, MAX_GRID), 1, 1))
        if self.dynamic:        # (cuda/dynamic.py: a block a tile of the call's shape)
            written.launch_rule = ("transpose", side)
        return written

    def transpose_lanes(self, shape, transposed) -> tuple[int, dict]:
        """(lanes, vector reads of the other inputs) for vector tiles, or (0, {}): every tile
        full, every output of the tile's shape, the transposed inputs contiguous (so a tile row
        is consecutive), and at least one vector a thread a tile (at most 16 bytes)."""
        rows, cols = shape
        ragged = (rows % self.tuning.tile_t or cols % self.tuning.tile_t) and not self.dynamic
        if not self.tuning.vector or ragged or any(p.node.shape != shape for p in self.outputs):
            return 0, {}
        lanes = min(self.lanes_for(self.outputs + transposed), self.tuning.tile_t * self.tuning.tile_t // self.tuning.tile_threads)
        if lanes < 2 or self.tuning.tile_threads % (self.tuning.tile_t // lanes) or self.tuning.tile_t % (self.tuning.tile_threads // (self.tuning.tile_t // lanes)):
            return 0, {}
        return lanes, self.vector_reads(shape, lanes)

    def tile_loop(self, shape, transposed, lanes: int, vectors: dict, exact: bool = False) -> None:
        """The loop over tiles, a thread taking `lanes` consecutive columns of a tile row at a
        time (1: elements; then `vectors` is empty); `exact`: every tile is known full (no
        bounds guards), as the shape shows or (a class's) as the kernel checked."""
        r = self.renderer
        rows, cols = shape
        side = self.tuning.tile_t
        across = side // lanes               # threads across a tile row, a vector each
        step = self.tuning.tile_threads // across        # tile rows a pass covers
        # a thread's (tile row, tile column) offsets: rows a pass apart, columns a row of
        # threads apart
        spots = [(step * k, across * lanes * c) for k in range(side // step)
                 for c in range(side // (across * lanes))]
        if self.dynamic:     # (a class: the tile counts as forms of its sizes)
            tiles_r, tiles_c = f"(({rows} + {side - 1}) // {side})", \
                f"(({cols} + {side - 1}) // {side})"
            tiles = f"{tiles_r} * {tiles_c}"
        else:
            tiles_r, tiles_c = -(-rows // side), -(-cols // side)
            tiles = tiles_r * tiles_c
            exact = rows % side == 0 and cols % side == 0     # every tile full: no guards
        r.emit(f"tx = {self.ix(f't % {across}')}")
        r.emit(f"ty = {self.ix(f't // {across}')}")
        r.emit(f"blk = {self.ix('cuda.blockIdx.x')}")
        r.emit(f"while blk < {tiles}:")
        r.push()
        r.emit(f"br = {self.ix(f'blk // {tiles_c}')}")
        r.emit(f"bc = {self.ix(f'blk - br * {tiles_c}')}")

        def column(offset: int) -> str:
            base = "tx" if lanes == 1 else f"tx * {lanes}"
            return f"{base} + {offset}" if offset else base

        for row, col in spots:
            r.emit(f"sr = {self.ix(f'bc * {side} + ty + {row}')}")
            r.emit(f"sc = {self.ix(f'br * {side} + {column(col)}')}")
            if not exact:
                r.emit(f"if sr < {cols} and sc < {rows}:")
                r.push()
            for param in transposed:
                if lanes == 1:
                    r.emit(f"tile_{param.name}[ty + {row}, tx] = "
                           f"{self.load(param.node, ('sr', 'sc'))}")
                    continue
                names = [f"{param.name}t{lane}" for lane in range(lanes)]
                load = self.vector_function("load", param.node, lanes, rows * cols)
                r.emit(f"{', '.join(names)} = {load}({param.name}, {self.ix(f'sr * {rows} + sc')})")
                for lane, name in enumerate(names):
                    r.emit(f"tile_{param.name}[ty + {row}, {column(col)} + {lane}] = {name}")
            if not exact:
                r.pop()
        # NOTE: every other global read of the tile's outputs is issued before the barrier, so
        # its latency overlaps the tile loads' (measured on an H200, (x.T+y)*2: 1.00x of the
        # floor with, one tile per block; 1.38x with y read after the barrier, 16 blocks per SM
        # looping over tiles).
        indices, lane_indices, first_column = [], [], {}
        for k, (row, col) in enumerate(spots):
            i0, i1 = f"i0_{k}", f"i1_{k}"
            r.emit(f"{i0} = {self.ix(f'br * {side} + ty + {row}')}")
            if col in first_column:
                r.emit(f"{i1} = {first_column[col]}")
            else:
                r.emit(f"{i1} = {self.ix(f'bc * {side} + {column(col)}')}")
                first_column[col] = i1
            indices.append((i0, i1))
            if lanes > 1:
                lane_index = self.lane_names((i0, i1), lanes)
                lane_indices.append(lane_index)
                r.emit(f"ev_{k} = {self.ix(f'{i0} * {cols} + {i1}')}")
                at = self.vector_reads(shape, lanes, base=(i0, i1))      # `vectors`, at (i0, i1)
                self.preloaded.update(self.vector_loads(
                    f"ev_{k}", shape, lanes, {n: at[n] for n in vectors}, lane_index, f"_{k}"))
        everywhere = [index for lane_index in lane_indices for index in lane_index] or indices
        self.preload(everywhere, {p.node.id for p in transposed},
                     None if exact else lambda i0, i1: f"{i0} < {rows} and {i1} < {cols}",
                     (rows, cols))
        r.emit("cuda.syncthreads()")
        for k, ((i0, i1), (row, col)) in enumerate(zip(indices, spots)):
            if exact:
                r.scopes.append({})
            else:
                r.emit(f"if {i0} < {rows} and {i1} < {cols}:")
                r.push()
            self.identity, self.identity_shape = (i0, i1), shape
            self.flat_index = self.ix(f"{i0} * {cols} + {i1}")
            if lanes == 1:
                self.tiles = {(p.node.id, (i1, i0)): f"tile_{p.name}[tx, ty + {row}]"
                              for p in transposed}
                for param in self.outputs:
                    self.store(param, (i0, i1))
            else:
                self.tiles = {(p.node.id, (index[1], i0)):
                              f"tile_{p.name}[{column(col)} + {lane}, ty + {row}]"
                              for p in transposed for lane, index in enumerate(lane_indices[k])}
                r.emit(f"ev = ev_{k}")
                self.vector_lanes_store(lane_indices[k], lanes)
            if exact:
                r.scopes.pop()
            else:
                r.pop()
        self.tiles = {}
        self.preloaded = {}
        self.identity = self.flat_index = None
        r.emit("cuda.syncthreads()")
        r.emit(f"blk = {self.ix('blk + cuda.gridDim.x')}")
        r.pop()

    def preload(self, indices: list, skip: set, guard, ranges: tuple) -> None:
        """Issue now the global reads the outputs will make at each index of `indices` (found by
        a throwaway render), except of inputs in `skip`, so they are in flight across a barrier;
        `guard(*index)`, where given, is the condition under which an index is in bounds, and
        `ranges` the extent of each of its coordinates there."""
        r = self.renderer
        conditional: set = set()
        for index, reads in zip(indices, self.probe_reads(indices, conditional=conditional)):
            known = set(index)
            for node_id, requested in reads.items():
                param = self.names[node_id]
                if node_id in skip or param.by_value:
                    continue
                for wanted in requested:
                    if not identifiers(" ".join(wanted)) <= known or \
                            (node_id, wanted) in self.preloaded:
                        continue      # an index the probe derived itself: read it later
                    if (node_id, wanted) in conditional and \
                            not in_bounds(wanted, param.node.shape, dict(zip(index, ranges))):
                        continue      # read only inside a slice assignment's region
                    name = r.name("pre")
                    value = self.load(param.node, wanted)
                    if guard is None:
                        r.emit(f"{name} = {value}")
                    else:
                        zero = r.constant(param.node.dtype.type(0))
                        r.emit(f"{name} = {value} if {guard(*index)} else {zero}")
                    self.preloaded[(node_id, wanted)] = name
