"""The "rows" reduction kernel: one block per row, the row held in registers, a block reduction
per reduction, row outputs written once."""
from __future__ import annotations


import numpy as np

from ....fusion.group import keepdims_shape, outer_shape
from ....ir.ops import ELEMENTWISE
from ....ir.printer import is_inline_constant
from ...accumulators import ARG
from ..intrinsics import divide as cuda_divide
from ....arrays import contiguous
from ..kernel import KernelSource, storage_dtype


class Rows:
    """Methods of the kernel writer (writer.KernelWriter); see the module docstring."""

    def block_size(self, shape, inner: int) -> int:
        """Threads a row: enough that each holds about ROW_ITEMS elements of it (more of narrow
        ones: ROW_BYTES), from a warp up to 512."""
        # NOTE: at most 512 threads: a row kept in registers (and a kept intermediate) needs up to
        # ~100 registers a thread, and 1024 such threads exceed an SM's 64K registers.
        items = min(self.tuning.max_row_items, max(self.tuning.row_items, self.tuning.row_bytes // (self.row_itemsize(shape) or 4)))
        block = 32
        while block < 512 and block * items < inner:
            block *= 2
        return block

    def rows(self, shape, axes, outer_axes, outer, inner) -> KernelSource:
        """One block per row: the row's inputs read once into registers, a block reduction per
        reduction, then the row-shaped outputs written once. Where the row allows, a thread's
        items are 16-byte vectors (row_vectors): read, and written, a vector at a time."""
        r = self.renderer
        block = self.block_size(shape, inner)
        items = -(-inner // block)
        hold = 0 < items <= self.tuning.max_row_items           # (an empty row holds nothing)
        full = tuple(f"i{d}" if d not in axes else f"r{d}" for d in range(len(shape)))
        # NOTE: a thread holding more than ROW_ITEMS (float16 rows: 32) is near its launch
        # bounds' register budget; held as float32, float16 layernorm with the reciprocal
        # division spilled there (6 blocks an SM instead of 8 on the H200). Held as halves
        # (ROW_HOLD_HALVES) it fits 8 blocks of 128 in 64 registers without spilling.
        if items > self.tuning.row_items and not self.tuning.row_wide_divide:
            r.invariant_divide = None
        r.emit(f"t = {self.ix('cuda.threadIdx.x')}")
        r.emit(f"row = {self.ix('cuda.blockIdx.x')}")
        for node in self.group.reductions:
            self.declare_shared(node)
        plan = self.row_vectors(shape, axes, inner, block, full) if hold else None
        if plan:
            # NOTE: a row that is not a multiple of block x lanes (1000) takes the vector path
            # too (row_vector_tail): a thread's items rounded up to whole vectors, the vectors
            # past the row's end skipped (the row's start stays 16-byte aligned: its length is a
            # multiple of lanes).
            items = -(-items // plan[0]) * plan[0]
            lanes, vectors, aligned = plan
            assumed = self.assume_aligned(aligned)
            for name in (f"vload{lanes}", f"vstore{lanes}") + (() if assumed else ("address",)):
                r.globals[name] = ("vector", name)
            if not assumed:
                names = " | ".join(f"address({p.name})" for p in aligned)
                r.emit(f"if ({names}) % 16 == 0:")
                r.push()
            self.row_body(shape, axes, outer_axes, outer, inner, block, items, full, lanes, vectors)
            if not assumed:
                r.pop()
                r.emit("else:    # a base address not 16-byte aligned: element by element")
                r.push()
        if not plan or not assumed:
            self.row_body(shape, axes, outer_axes, outer, inner, block, items, full, 0, {})
        if plan and not assumed:
            r.pop()
        blocks = max(1, min(outer, self.row_grid(outer)))
        strategy = "rows" + ("" if hold else " (re-read)") + \
            (f", {plan[0]}-wide vectors" if plan else "")
        # NOTE: a row held in registers makes register count decide how many blocks an SM runs,
        # and ptxas, told nothing, chose 56 registers for layernorm over 4096-long float32 rows
        # (4 blocks of 256 an SM). Asked for ROW_THREADS_PER_SM threads (launch bounds: 48
        # registers, 5 blocks, no spills) it ran 0.1365 -> 0.1332 ms on an H200; softmax was
        # already at 48. Where the bound makes ptxas spill, compile.py links without it.
        min_blocks = min(32, max(1, self.tuning.row_threads_per_sm // block)) if hold else 0
        source = self.finish(strategy, block, (blocks, 1, 1), min_blocks)
        source.launch_rule = ("rows", self.row_grid(outer))
        return source

    def row_grid(self, outer: int) -> int:
        """The most blocks of a rows kernel over `outer` rows: a block a row up to the grid's
        limit, or, where a row moves fewer than row_launch_bytes (the blocks' launch, not the
        memory, would bound the kernel), up to row_blocks_per_sm an SM; more rows loop."""
        moved = sum(n.nbytes for n in self.group.inputs) + \
            sum(n.nbytes for n in self.group.outputs.values())
        if moved >= self.tuning.row_launch_bytes * max(1, outer):
            return self.tuning.row_grid
        return min(self.tuning.row_grid, self.tuning.row_blocks_per_sm * self.device.sms)

    def row_vectors(self, shape, axes, inner, block, full):
        """(lanes, vector reads of the row outputs' other inputs, arrays whose base addresses must
        be 16-byte aligned) where a thread's row items can be vectors, else None: one trailing
        reduced axis, a multiple of block x lanes long; every held input and row output readable
        a vector at a time (a last stride of 1, other strides multiples of the lanes)."""
        if not self.tuning.vector or len(axes) != 1 or axes[0] != len(shape) - 1:
            return None
        held = self.held_params(shape)
        outs = [p for p in self.outputs if p.node.shape == shape]
        reduced = (outer_shape(shape, axes), keepdims_shape(shape, axes))
        if any(p.node.shape != shape and p.node.shape not in reduced for p in self.outputs) or \
                not held and not outs:
            return None
        lanes = self.lanes_for(held + outs)
        # NOTE: a row shorter than block x lanes stays element by element: as vectors, most of
        # its threads would idle.
        tail = self.tuning.row_vector_tail and inner >= block * lanes
        if lanes < 2 or inner % (lanes if tail else block * lanes):
            return None
        for param in held:
            strides = param.strides or contiguous(shape)
            if strides[-1] != 1 or any(stride % lanes for size, stride in
                                       zip(shape[:-1], strides[:-1]) if size > 1):
                return None
        held_ids = {p.node.id for p in held}
        vectors = {n: first for n, first in self.vector_reads(
            shape, lanes, [p.node for p in outs], full).items() if n not in held_ids} \
            if outs and max(storage_dtype(p.node.dtype).itemsize for p in held + outs) \
            <= self.tuning.row_read_vector_bytes else {}
        return lanes, vectors, held + [self.names[n] for n in vectors] + outs

    def row_body(self, shape, axes, outer_axes, outer, inner, block, items, full, lanes,
                 vectors) -> None:
        """The loop over this block's rows (`lanes` > 0: items in vectors of that many)."""
        r = self.renderer
        inner_names = [f"r{a}" for a in axes]
        hold = 0 < items <= self.tuning.max_row_items
        self.row_index, self.row_lanes = full, lanes
        r.fixed = {f"i{d}" for d in range(len(shape)) if d not in axes}   # the row's index
        # NOTE: in a class kernel the bound is a 64-bit size argument; compared as one it made
        # the float16 softmax's loop 16% slower on an H200 (benchmarks/experiments/
        # class_softmax_f16.py), so it is narrowed as the row is (sizes stay below INDEX_LIMIT)
        r.emit(f"while row < {self.ix(str(outer), literal=True) if self.dynamic else outer}:")
        r.push()
        self._outer_index(outer_axes, shape, "row")
        if hold:
            self.hold_row(full, shape, axes, inner_names, items, block, inner)
        for node in self.group.reductions:
            acc, idx, result = r.name("acc"), r.name("k"), r.name("red")
            self.acc.init(node, acc, idx, node.dtype)
            source = node.inputs[0]
            keep = hold and self._read_later(source, node) and (
                self.tuning.keep_reduced_halves and self.holds_halves(source.dtype))
            if keep:
                r.emit(f"kept{source.id} = cuda.local.array({items}, "
                       f"{self.register_type(source.id, source.dtype)})")
            self.row_loop(items, block, inner, inner_names, shape, axes,
                          across=node.op not in ARG)
            value = r.value(source, full)
            self.acc.combine(node, acc, idx, value, node.dtype, "col")
            if keep:
                # NOTE: the value this pass reduces is read again later in the row (softmax's
                # exp): keep it in registers instead of computing it twice.
                r.emit(f"kept{source.id}[j] = {self.holding(source.id, value)}")
            self.end_row_loop()
            if keep:
                self.kept[source.id] = f"kept{source.id}"
                r.special[source.id] = lambda index, node_id=source.id: (
                    self.held_item(node_id, "j") if index == self.row_index else None)
            self.block_reduce(node, acc, idx, block)
            final = self.acc.final(node, acc, idx)
            r.emit(f"{result} = {r.convert(node.dtype, final, op_result=True)}")
            r.special[node.id] = lambda index, result=result: result
        rows = self.store_reduced(shape, axes, "t == 0")
        if rows and lanes:
            self.store_row_vectors(rows, full, items, block, lanes, vectors, shape)
        elif rows:
            self.row_loop(items, block, inner, inner_names, shape, axes)
            for param in rows:
                self.store(param, full)
            self.end_row_loop()
        # NOTE: a block's next row writes the shared arrays again. With two or more block
        # reductions a row, the barrier of each comes after every thread's reads of the one
        # before, so the next row's writes wait already; a block that has only one row (the
        # grid is one block a row up to row_grid(outer) rows) needs no barrier either. A
        # class's grid is a block a row up to row_grid(outer) rows too, as a specialized
        # kernel's: its barrier only where the block has another row (rows are the block's
        # alike: every thread branches alike).
        barrier = (outer > self.row_grid(outer) or self.dynamic) and \
            len(self.group.reductions) < 2
        if barrier and not self.dynamic:
            r.emit("cuda.syncthreads()")
        r.emit(f"row = {self.ix('row + cuda.gridDim.x')}")
        if barrier and self.dynamic:
            r.emit(f"if row < {self.ix(str(outer), literal=True)}:")
            r.emit("    cuda.syncthreads()")
        r.pop()
        self.cached.clear()
        self.kept.clear()
        self.held_halves.clear()
        r.special = {k: v for k, v in r.special.items() if k not in self.group.members}
        self.row_lanes = 0
        r.fixed = set()

    def store_row_vectors(self, rows, full, items, block, lanes, vectors, shape) -> None:
        """The row outputs a vector at a time: held inputs from registers (or read again:
        ROW_RELOAD), other inputs read consecutively as vectors (`vectors`), one vector store
        per output."""
        r = self.renderer
        axis = len(shape) - 1
        flat = self.offset(shape, contiguous(shape), full)
        if self.tuning.row_hoist and (items <= self.tuning.row_items or self.tuning.row_wide_divide):    # (see the NOTE in rows)
            self.hoist_row_values(shape, (axis,), full)
        r.emit(f"for jv in range({items // lanes}):")
        r.push()
        r.emit(f"r{axis} = {self.ix(f'(t + jv * {block}) * {lanes}')}")
        self.open_vector_guard(f"r{axis}", items, block, shape[axis])
        lane_index = self.lane_names(full, lanes)
        self.preloaded = self.vector_loads(flat, shape, lanes, vectors, lane_index, "")
        if self.tuning.row_reload and self.row_hints(shape):
            # NOTE: read again (from L1 or L2, where the first read's evict_last left it)
            # instead of from the registers that held it: the same 48 registers for layernorm,
            # but 2-3% faster on an H200 (BENCHMARKS.md, Why the generator's defaults). Safe where an output is the
            # held input's own buffer: a thread reads each element again before it writes it,
            # and no other thread writes it.
            self.preloaded.update(self.vector_loads(
                flat, shape, lanes, {n: full for n in self.cached}, lane_index, "r",
                self.tuning.row_reload_load, "again"))
        for node_id in self.cached:
            for lane, index in enumerate(lane_index):
                self.preloaded.setdefault((node_id, index),
                                          self.held_item(node_id, f"jv * {lanes} + {lane}"))
        specials = dict(r.special)
        for node_id in self.kept:          # kept computed values: by lane
            r.special[node_id] = lambda index, node_id=node_id, lanes_of={
                index: f"jv * {lanes} + {lane}" for lane, index in enumerate(lane_index)}: (
                self.held_item(node_id, lanes_of[index]) if index in lanes_of else None)
        row_index, self.row_index = self.row_index, None    # held items: through `preloaded`
        r.emit(f"ev = {flat}")
        self.vector_lanes_store(lane_index, lanes, rows,
                                (self.tuning.row_stores or None) if self.row_hints(shape) else None, "ordered")
        self.row_index = row_index
        r.special = specials
        self.preloaded = {}
        self.close_vector_guard()
        r.pop()

    def open_vector_guard(self, first: str, items: int, block: int, inner: int) -> None:
        """Where a row's vectors overrun it (items x block > inner), skip the vectors from
        `first` on past its end (closed by close_vector_guard)."""
        self.vector_guarded = items * block > inner
        if self.vector_guarded:
            self.renderer.emit(f"if {first} < {inner}:")
            self.renderer.push()

    def close_vector_guard(self) -> None:
        if self.vector_guarded:
            self.renderer.pop()

    def hoist_row_values(self, shape, axes, full) -> None:
        """Render now, in the row's scope, the group's values of one per row (a row's mean, its
        deviation, and the reciprocals of row divisors where INVARIANT_DIVIDE takes them), so
        that the vector loop over the row finds them instead of computing them each step (the
        compiler kept layernorm's square root inside that loop)."""
        r = self.renderer
        per_row = {keepdims_shape(shape, axes): tuple("0" if d in axes else full[d]
                                                      for d in range(len(shape))),
                   outer_shape(shape, axes): tuple(full[d] for d in range(len(shape))
                                                   if d not in axes)}
        for node in self.group.members.values():
            if node.kind == ELEMENTWISE and node.shape in per_row and node.shape != shape:
                r.value(node, per_row[node.shape])
        if r.invariant_divide is None:
            return
        for node in self.group.members.values():
            divisor = node.inputs[1] if node.op == "divide" else None
            # the divisions Renderer.elementwise takes to invariant_divide: float32 computations
            if divisor is not None and node.shape == shape and divisor.shape in per_row and \
                    divisor.shape != shape and r.held(node.inputs[0].dtype) == np.float32 and \
                    not is_inline_constant(divisor):
                cuda_divide.reciprocal(r, r.value(divisor, per_row[divisor.shape]))

    def row_loop(self, items, block, inner, inner_names, shape, axes, across=False) -> None:
        """A loop over a thread's items of its row (`across`: its vectors' lanes in turn, for a
        reduction that may combine its items in any order; see the NOTE)."""
        r = self.renderer
        lanes = self.row_lanes     # items in vectors: item j is lane j % lanes of vector j // lanes
        vectors = items // lanes if lanes else 0
        # NOTE: a thread's vectors are combined lane by lane across them (its items in the order
        # lane 0 of every vector, then lane 1, ...), so that the first combines need every
        # vector's load and ptxas issues them together: item by item, ptxas issued the fourth
        # 16-byte load of the float16 softmax's class kernel after the first row's arithmetic had
        # begun (1.14x its specialized kernel; across the vectors 1.01x, and the specialized
        # kernel 1.01x itself; H200, benchmarks/experiments/rows_class_variants.py). Not for an
        # arg-reduction, whose ties keep the first position it meets.
        if across and vectors > 1:
            r.emit(f"for jj in range({items}):")
            r.push()
            r.emit(f"j = (jj % {vectors}) * {lanes} + jj // {vectors}")
        else:
            r.emit(f"for j in range({items}):")
            r.push()
        col = f"(t + (j // {lanes}) * {block}) * {lanes} + j % {lanes}" if lanes else f"t + j * {block}"
        r.emit(f"col = {self.ix(col)}")
        # NOTE: when the row is an exact multiple of the block, every item exists; the compiler
        # cannot know that (it does not know the block size), so the guard is left out here.
        self.guarded = items * block != inner
        if self.guarded:
            r.emit(f"if col < {inner}:")
            r.push()
        else:
            r.scopes.append({})
        self.delinearize("col", inner_names, [shape[a] for a in axes])

    def end_row_loop(self) -> None:
        if self.guarded:
            self.renderer.pop()
        else:
            self.renderer.scopes.pop()
        self.renderer.pop()

    def hold_row(self, full, shape, axes, inner_names, items, block, inner) -> None:
        """Read each row-shaped input of the group into a per-thread register array once (a
        vector at a time where row_lanes is set)."""
        r = self.renderer
        held = self.held_params(shape)
        # NOTE: float16 rows are held as halves (their storage type) where the kernel spells
        # halves by intrinsics/half.py: the compiler folds the narrowing on the way in and the widening on
        # the way out into the ops that read them (measured on an H200, softmax f16 16384x4096
        # with native half ops: 72 registers and 7 blocks an SM without spilling, 0.114 ms,
        # against 96 registers and 5 blocks held as float32, 0.129 ms).
        for param in held:
            r.emit(f"held_{param.name} = cuda.local.array("
                   f"{items}, {self.register_type(param.node.id, param.node.dtype)})")
        if not held:
            return
        lanes = self.row_lanes
        if lanes:
            r.globals[f"vload{lanes}"] = ("vector", f"vload{lanes}")
            r.emit(f"for jv in range({items // lanes}):")
            r.push()
            r.emit(f"{inner_names[-1]} = {self.ix(f'(t + jv * {block}) * {lanes}')}")
            self.open_vector_guard(inner_names[-1], items, block, inner)
            lane_index = self.lane_indices(full, lanes)
            loaded = self.vector_loads(self.offset(shape, contiguous(shape), full), shape, lanes,
                                       {p.node.id: full for p in held}, lane_index, "",
                                       self.tuning.row_hold_load if self.tuning.row_reload and self.row_hints(shape)
                                       else None, "kept")
            for param in held:
                for lane, index in enumerate(lane_index):
                    r.emit(f"held_{param.name}[jv * {lanes} + {lane}] = "
                           f"{self.holding(param.node.id, loaded[(param.node.id, index)])}")
            self.close_vector_guard()
            r.pop()
        else:
            self.row_loop(items, block, inner, inner_names, shape, axes)
            for param in held:
                r.emit(f"held_{param.name}[j] = "
                       f"{self.holding(param.node.id, self.load(param.node, full))}")
            self.end_row_loop()
        for param in held:
            self.cached[param.node.id] = f"held_{param.name}"
