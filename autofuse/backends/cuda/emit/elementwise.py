"""Grid-stride loops over a loop group's elements: the pointwise kernel, its loads in flight and
element indices."""
from __future__ import annotations


import numpy as np

from ...index_text import affine
from ....arrays import contiguous
from ....ir.ops import ELEMENTWISE, OPS
from ..kernel import MAX_GRID, KernelSource, storage_dtype
from . import strip as cuda_strip


class Elementwise:
    """Methods of the kernel writer (writer.KernelWriter); see the module docstring."""

    def pointwise(self) -> KernelSource:
        """A grid-stride loop over the elements (a 2-D rows x columns grid, which avoids the
        per-element index division, measured slower on an H200: 2.50x vs 1.54x of the floor)."""
        r = self.renderer
        shape = self.group.root.shape
        size = int(np.prod(shape, dtype=np.int64))
        index = tuple(f"i{d}" for d in range(len(shape)))
        self.identity, self.identity_shape = index, shape
        transposed = self.transposed_inputs(shape)
        if transposed and self.tuning.transpose_tiles:
            return self.transpose_tiles(shape, index, transposed)
        threads = 32 if self.simulator else self.tuning.threads
        ilp = self.ilp(size, threads)

        def compute(flat, element):
            for param in self.outputs:
                self.renderer.value(param.node, element)

        def store(flat, element):
            for param in self.outputs:
                self.store(param, element, flat if param.node.shape == shape else None)

        strip = cuda_strip.plan(self, shape, size, threads)
        if not isinstance(strip, str):
            return cuda_strip.write(self, strip, compute, store)

        width = self.vector_width(size)
        lanes = self.vector_lanes(shape, size, threads, width)
        vectors = self.vector_reads(shape, lanes) if lanes else {}
        steps = [vectors]
        if lanes and self.tuning.vector_ilp > 1 and (self.dynamic or size >= self.tuning.vector_ilp * lanes * threads) and not any(
                m.op == "setslice" for m in self.group.members.values()):
            # each vector of a step has index names of its own (i0_1, ...): its reads, found again
            steps = [self.vector_reads(shape, lanes, base=tuple(f"i{d}_{u}" for d in range(
                len(shape)))) for u in range(self.tuning.vector_ilp)]
            if any(step.keys() != vectors.keys() for step in steps):
                steps = [vectors]
        vector_ilp = len(steps)
        assumed = lanes and self.assume_aligned([self.names[n] for n in vectors] + self.outputs)
        if assumed:
            self.vector_loop(shape, size, lanes, vectors, threads, steps)
        elif lanes:
            aligned = " | ".join(f"address({p.name})" for p in
                                 [self.names[n] for n in vectors] + self.outputs)
            r.emit(f"if ({aligned}) % 16 == 0:")
            r.push()
            self.vector_loop(shape, size, lanes, vectors, threads, steps)
            r.pop()
            r.emit("else:    # a base address not 16-byte aligned: element by element")
            r.push()
        if not assumed:
            self.strided_loop(size, shape, ilp, compute, store)
        if lanes and not assumed:
            r.pop()
        width = lanes * vector_ilp or ilp
        blocks = max(1, min(-(-size // (threads * width)), MAX_GRID))
        strategy = "grid-stride" + (f", {lanes}-wide vectors" if lanes else "") + (
            f" x{vector_ilp}" if vector_ilp > 1 else "")
        if ilp > 1 and not assumed:
            strategy += f" (misaligned: {ilp} per step)" if lanes else f", {ilp} per step"
        source = self.finish(strategy, threads, (blocks, 1, 1), self.tuning.pointwise_min_blocks)
        source.launch_rule = ("elements", threads * width)
        return source

    def vector_width(self, size: int) -> int:
        """Bytes of a vector access: Tuning.vector_bytes, or 8 where the full-size inputs at
        that width would pass vector_step_bytes a step (measured faster for memory-bound
        kernels of 3 or more inputs) unless the element's arithmetic is heavy for its bytes
        (vector_step_cost): then the independent elements a thread holds hide the math's
        latency (black-scholes, float64 and float32, 3 inputs and 2 outputs)."""
        tuning = self.tuning
        full = [p for p in self.params if not p.by_value and p.node.size == size]
        step = len(full) * tuning.vector_bytes
        if not tuning.vector_step_bytes or step <= tuning.vector_step_bytes:
            return tuning.vector_bytes
        if tuning.vector_step_cost:
            element = sum(storage_dtype(p.node.dtype).itemsize for p in full + self.outputs)
            work = sum(OPS[m.op].cost for m in self.group.members.values()
                       if OPS[m.op].kind == ELEMENTWISE)
            if work >= tuning.vector_step_cost * element:
                return tuning.vector_bytes
        return min(tuning.vector_bytes, 8)

    def region(self) -> KernelSource:
        """A slice assignment written in place (fusion/in_place.py says when nothing can tell):
        a grid-stride loop over the update's elements only, each stored where it lands in the
        base, whose memory the output takes (runtime/buffers.py)."""
        r = self.renderer
        root = self.group.root
        update = root.inputs[1]
        shape = update.shape
        size = int(np.prod(shape, dtype=np.int64))
        self.identity_shape = shape
        threads = 32 if self.simulator else self.tuning.threads
        (param,) = self.outputs
        starts, steps = r.starts(root), root.attrs["step"]

        def compute(flat, element):
            r.value(update, element)

        def store(flat, element):
            target = tuple(affine(a, s, i) for a, s, i in zip(starts, steps, element))
            offset = self.offset(root.shape, contiguous(root.shape), target)
            r.emit(f"{param.name}[{offset}] = {self.stored(root, r.value(update, element))}")

        self.strided_loop(size, shape, 1, compute, store)
        blocks = max(1, min(-(-size // threads), MAX_GRID))
        region = "x".join(map(str, shape))
        source = self.finish(f"in place: the {region} region, into its base's memory", threads,
                             (blocks, 1, 1))
        source.launch_rule = ("elements", threads)
        source.reason = ("a slice assignment whose base nothing reads afterwards: only its region "
                         "is computed and stored, into the base's memory")
        return source

    def ilp(self, size: int, threads: int, loads_wanted: int = 0, most: int = 0) -> int:
        """Elements a thread takes per grid-stride step: enough that about ILP_LOADS (or
        `loads_wanted`) loads are in flight per thread, at most MAX_ILP (or `most`) (measured on
        an H200: bias+GELU, 2 loads an element, 1.50x of the floor at 1 element a step and 1.24x
        at 2-8; relu(x*y+z)*w, 4 loads, and the 5-point stencil are fastest at 1)."""
        ilp = max(1, min(most or self.tuning.max_ilp,
                         (loads_wanted or self.tuning.ilp_loads) // max(1, len(self.reads()))))
        return ilp if self.dynamic or size >= ilp * threads else 1

    def reads(self) -> list:
        """The array parameters the members read, once per member that reads each."""
        return [source.id for member in self.group.members.values() for source in
                {s.id: s for s in member.inputs}.values()
                if source.id in self.names and not self.names[source.id].by_value]

    def strided_loop(self, size: int, shape, ilp: int, compute, finish,
                     start: str = "cuda.grid(1)", step: str = "cuda.gridsize(1)") -> None:
        """A grid-stride loop over `size` flat elements of `shape`: `compute(flat, element)`
        emits an element's loads and arithmetic, `finish(flat, element)` its stores or
        accumulation. With ilp > 1, a step takes `ilp` elements a grid-stride apart (coalesced
        like the plain loop), all computed before any is finished, so their loads are in flight
        together (a store through one raw pointer may alias any later load, so the compiler
        cannot reorder them itself); a plain loop takes the remainder."""
        r = self.renderer
        r.emit(f"e = {self.ix(start)}")
        r.emit(f"step = {self.ix(step)}")
        if ilp > 1:
            r.emit(f"while e + {ilp - 1} * step < {size}:")
            r.push()
            elements = []
            for u in range(ilp):
                flat = "e" if u == 0 else f"e{u}"
                if u:
                    r.emit(f"{flat} = {self.ix(f'e + {u} * step')}")
                elements.append((flat, self.element_index(flat, shape, f"_{u}" if u else "")))
            for flat, element in elements:
                self.identity, self.flat_index = element, flat
                compute(flat, element)
            for flat, element in elements:
                self.identity, self.flat_index = element, flat
                finish(flat, element)
            r.emit(f"e = {self.ix(f'e + {ilp} * step')}")
            r.pop()
        r.emit(f"while e < {size}:")
        r.push()
        element = self.element_index("e", shape, "")
        self.identity, self.flat_index = element, "e"
        compute("e", element)
        finish("e", element)
        r.emit(f"e = {self.ix('e + step')}")
        r.pop()
        self.flat_index = None

    def element_index(self, flat: str, shape, suffix: str) -> tuple:
        """Emit the multi-index of flat element `flat` of `shape`; returns its names."""
        index = tuple(f"i{d}{suffix}" for d in range(len(shape)))
        if len(shape) > 1:
            self.delinearize(flat, list(index), list(shape))
        elif len(shape) == 1:
            self.renderer.emit(f"{index[0]} = {flat}")
        return index
