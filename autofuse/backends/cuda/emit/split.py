"""The "split" reduction kernel: one full reduction over all blocks, vector steps, and the last
block combining the partials."""
from __future__ import annotations


import numpy as np

from ..kernel import KernelSource


class Split:
    """Methods of the kernel writer (writer.KernelWriter); see the module docstring."""

    def split(self, shape, axes, inner, row_outputs=(), scalar=False) -> KernelSource:
        """A full reduction across a wave of blocks (Tuning.split_blocks); the last block combines their partials.
        Outputs of the reduced space's shape (`row_outputs`, which need no reduction's result)
        are stored as the loop computes them (a vector at a time on the vector path). `scalar`:
        an element a thread a step, where arithmetic bounds the kernel (plan.Plan.scalar)."""
        r = self.renderer
        nodes = self.group.reductions
        block = 32 if self.simulator else self.tuning.threads
        blocks = 3 if self.simulator else self.tuning.split_blocks(self.device)
        if not (self.dynamic or self.simulator):    # no block without an element a thread
            blocks = max(1, min(blocks, -(-inner // block)))
        self.once_loads = self.tuning.reduce_loads
        self.split_reduction = True
        r.emit(f"t = {self.ix('cuda.threadIdx.x')}")
        for node in nodes:
            self.declare_shared(node)
        r.emit(f"last = cuda.shared.array(1, {self.numba_type(np.int32)})")
        accs = []
        for node in nodes:
            acc, idx = r.name("acc"), r.name("k")
            self.acc.init(node, acc, idx, node.dtype)
            accs.append((acc, idx))
        values = {}

        def compute(flat, element):
            values[flat] = [r.value(node.inputs[0], element) for node in nodes]

        def combine(flat, element):
            for node, (acc, idx), value in zip(nodes, accs, values[flat]):
                self.acc.combine(node, acc, idx, value, node.dtype, flat)

        def combine_and_store(flat, element):
            combine(flat, element)
            for param in row_outputs:
                self.store(param, element, flat)

        self.identity_shape = shape
        lanes = 0 if scalar else self.reduce_lanes(shape, inner, block, row_outputs)
        vectors = self.vector_reads(shape, lanes, [n.inputs[0] for n in nodes] +
                                    [p.node for p in row_outputs]) if lanes else {}
        # NOTE: a class kernel over one axis (whose size may vary) takes the whole vectors, then
        # the elements after the last one at a time: its stand-in sizes are odd primes
        tail = f"{inner} // {lanes}" if self.dynamic and len(shape) == 1 else None
        assumed = bool(vectors) and self.assume_aligned([self.names[n] for n in vectors] +
                                                        list(row_outputs))
        if vectors:
            if not assumed:
                aligned = " | ".join([f"address({self.names[n].name})" for n in vectors] +
                                     [f"address({p.name})" for p in row_outputs])
                r.emit(f"if ({aligned}) % 16 == 0:")
                r.push()
            self.vector_reduce_loop(shape, inner, lanes, vectors, compute, combine, block, blocks,
                                    row_outputs, tail)
            if tail:
                self.strided_loop(inner, shape, 1, compute, combine_and_store,
                                  f"{tail} * {lanes} + cuda.grid(1)")
            if not assumed:
                r.pop()
                r.emit("else:    # a base address not 16-byte aligned: element by element")
                r.push()
        if not assumed:
            self.strided_loop(inner, shape, self.ilp(inner, block), compute, combine_and_store)
        if vectors and not assumed:
            r.pop()
        for k, (node, (acc, idx)) in enumerate(zip(nodes, accs)):
            self.block_reduce(node, acc, idx, block)
            self.scratch.append((f"part{k}", blocks, self.partial_dtype(node)))
            self.scratch.append((f"parti{k}", blocks, self.second_partial_dtype(node)))
        self.scratch.append(("counter", 1, np.dtype(np.int32)))
        r.emit("if t == 0:")
        r.push()
        for k, (node, (acc, idx)) in enumerate(zip(nodes, accs)):
            r.emit(f"part{k}[cuda.blockIdx.x] = {self.to_partial(node, acc)}")
            r.emit(f"parti{k}[cuda.blockIdx.x] = {idx}")
        r.emit("cuda.threadfence()")
        # a class kernel's grid is chosen at launch (`cuda.gridDim.x` blocks, at most `blocks`)
        launched = "cuda.gridDim.x" if self.dynamic else blocks
        last = "cuda.gridDim.x - 1" if self.dynamic else blocks - 1
        r.emit(f"last[0] = cuda.atomic.add(counter, 0, 1) == {last}")
        r.pop()
        r.emit("cuda.syncthreads()")
        r.emit("if last[0] != 0:")
        r.push()
        r.emit("cuda.threadfence()")
        for k, (node, (acc, idx)) in enumerate(zip(nodes, accs)):
            self.acc.init(node, acc, idx, node.dtype)
            # NOTE: a fixed count of partials a thread, each guarded, so that the compiler
            # unrolls the loop and issues every read at once: `range(t, blocks, block)` read
            # them one round trip after another while the rest of the GPU waited.
            r.emit(f"for u in range({-(-blocks // block)}):")
            r.push()
            r.emit(f"b = {self.ix(f't + u * {block}')}")
            r.emit(f"if b < {launched}:")
            r.push()
            self.acc.merge(node, acc, idx, self.from_partial(node, f"part{k}[b]"), f"parti{k}[b]")
            r.pop()
            r.pop()
            self.block_reduce(node, acc, idx, block)
            final = self.acc.final(node, acc, idx)
            result = r.name("red")
            r.emit(f"{result} = {r.convert(node.dtype, final, op_result=True)}")
            r.special[node.id] = lambda index, result=result: result
        self.store_reduced(shape, axes, "t == 0")
        r.emit("if t == 0:")
        r.push()
        r.emit("counter[0] = 0")
        r.pop()
        r.pop()
        strategy = "split" + (f", {lanes}-wide vectors x{self.tuning.reduce_vectors}" if vectors else "")
        if not self.dynamic:
            return self.finish(strategy, block, (blocks, 1, 1))
        source = self.finish(f"{strategy}, at most {blocks} blocks (chosen at launch)", block,
                             (blocks, 1, 1))
        # NOTE: a block at least 4 elements a thread: a wave of blocks from 4 x threads x blocks
        # elements on (as the specialized kernel's), fewer blocks to merge below that
        source.launch_rule = ("split", blocks, 4 * block)
        return source

    def reduce_lanes(self, shape, size: int, threads: int, stored=()) -> int:
        """Elements a reduction thread reads as one vector (lanes_for its array inputs and the
        outputs it stores a vector at a time), or 0: the last axis must be a multiple of the
        lanes."""
        read = [p for p in self.params if not p.by_value]
        if not self.tuning.vector or not shape or not read:
            return 0
        lanes = self.lanes_for(read + list(stored))
        whole = shape[-1] % lanes == 0 or (self.dynamic and len(shape) == 1)   # (split's tail)
        if lanes < 2 or not whole or (size < lanes * threads and not self.dynamic):
            return 0
        return lanes

    def vector_reduce_loop(self, shape, size: int, lanes: int, vectors: dict, compute,
                           combine, threads: int, blocks: int, stored=(), count=None) -> None:
        """The loop of a split reduction, REDUCE_VECTORS vectors a step placed as REDUCE_SPREAD
        says (vector_frame): every vector load of the step issued first, then each lane computed
        and combined in element order (so an argmax keeps the first of equal values), then the
        outputs of `stored` written a vector at a time; loops of half as many vectors
        (REDUCE_TAIL_HALVES) and of single vectors take the remainder, so a thread's last
        vectors are not read one round trip after another. `count`: the vectors as text, where
        not size // lanes (a class kernel's whole vectors of a size that varies)."""
        r = self.renderer
        for name in ("address", f"vload{lanes}") + ((f"vstore{lanes}",) if stored else ()):
            r.globals[name] = ("vector", name)
        widths = [self.tuning.reduce_vectors]
        frame = self.vector_frame(size // lanes if count is None else count,
                                  self.tuning.reduce_vectors, threads, self.tuning.reduce_spread,
                                  blocks)
        for width in sorted(set(widths) | {1}, reverse=True):
            r.emit(f"while {frame.last(width)} < {frame.end}:")
            r.push()
            loaded = []
            for u in range(width):
                flat = f"ev{u}"
                r.emit(f"{flat} = {self.ix(frame.at(u, lanes))}")
                lane_index = self.vector_index(flat, shape, lanes)
                loaded.append((flat, lane_index,
                               self.vector_loads(flat, shape, lanes, vectors, lane_index, f"_{u}")))
            for u, (flat, lane_index, preloaded) in enumerate(loaded):
                if width > 1:          # the index names hold the last vector's: emit this one's
                    self.vector_index(flat, shape, lanes)
                r.scopes.append({})
                self.preloaded = preloaded
                for lane, index in enumerate(lane_index):
                    position = flat if lane == 0 else f"({flat} + {lane})"
                    compute(position, index)
                    combine(position, index)
                if stored:
                    self.vector_lanes_store(lane_index, lanes, list(stored), at=flat)
                self.preloaded = {}
                r.scopes.pop()
            r.emit(f"e = {self.ix(frame.advance(width))}")
            r.pop()
