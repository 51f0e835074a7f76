"""Vector memory access inside generated loops: which reads can be vectors, how a loop's steps are
placed, and loads and stores of several lanes at once."""
from __future__ import annotations

import math


from ....ir.graph import Node
from ...conditions import all_of
from ...render import Renderer
from ....arrays import contiguous
from ..kernel import Frame, identifiers, in_bounds, storage_dtype


class Vectors:
    """Methods of the kernel writer (writer.KernelWriter); see the module docstring."""

    # -- vector access ---------------------------------------------------------------------------
    def lanes_for(self, params, width: int = 16) -> int:
        """Elements of a vector: `width` bytes of the widest of `params`, at most max_lanes; 1
        (no vectors) where one is complex: the vector intrinsics move ints and floats only."""
        if any(p.node.dtype.kind == "c" for p in params):
            return 1
        return min(self.tuning.max_lanes, width // max(storage_dtype(p.node.dtype).itemsize for p in params))

    def assume_aligned(self, params) -> bool:
        """Whether the kernel reads and writes `params` as vectors with no check of their base
        addresses and no element-by-element copy of its body (Tuning.assume_aligned): each
        aligned (Param.aligned), the kernel not a shape class's nor written into an argument's
        memory. The parameters go to KernelSource.assumed, which the runtime checks."""
        if not self.tuning.assume_aligned or self.dynamic or self.into is not None or \
                not all(p.aligned for p in params):
            return False
        self.assumed += [p.name for p in params]
        return True

    def vector_lanes(self, shape, size: int, threads: int, width: int | None = None) -> int:
        """Elements a thread takes as one vector (lanes_for the outputs and array inputs), or
        0 where vectors do not apply: every output must be the loop's shape (stored at the flat
        index) and the last axis a multiple of the lanes (so a vector never crosses a row)."""
        if not self.tuning.vector or not shape or any(p.node.shape != shape for p in self.outputs):
            return 0
        width = self.tuning.vector_bytes if width is None else width
        lanes = self.lanes_for(self.outputs + [p for p in self.params if p.node.shape], width)
        if lanes < 2 or shape[-1] % lanes or (size < lanes * threads and not self.dynamic):
            return 0
        return lanes

    def vector_reads(self, shape, lanes: int, nodes: list | None = None,
                     base: tuple | None = None) -> dict:
        """Group inputs whose `lanes` reads in a vector step are consecutive and aligned: node id
        -> the index lane 0 reads. Found by rendering the outputs at each lane's index in a
        throwaway renderer and keeping inputs read exactly once a lane, at indices equal but for
        the last coordinate, which is the lane's own; memory strides must keep the lane-0 offset
        a multiple of the lanes. Other inputs are read element by element (a broadcast column
        once, as before)."""
        base = base or tuple(f"i{d}" for d in range(len(shape)))
        lane_index = self.lane_indices(base, lanes)
        conditional: set = set()
        reads = self.probe_reads(lane_index, nodes=nodes, conditional=conditional)
        ranges = dict(zip(base, shape))
        found = {}
        for param in self.params:
            node = param.node
            seen = [lane.get(node.id, []) for lane in reads]
            itemsize = storage_dtype(node.dtype).itemsize
            if param.by_value or not node.shape or lanes * itemsize > 16 or \
                    any(len(s) != 1 for s in seen):
                continue
            first = seen[0][0]
            strides = param.strides or contiguous(node.shape)
            if strides[-1] != 1 or any(stride % lanes for size, stride in
                                       zip(node.shape[:-1], strides[:-1]) if size > 1):
                continue
            if (node.id, first) in conditional and not in_bounds(first, node.shape, ranges):
                continue         # read only where a branch holds (a slice assignment's region)
            if all(s[0] == first[:-1] + (index[-1],) and index[-1] not in first[:-1]
                   for s, index in zip(seen, lane_index)):
                found[node.id] = first
        return found

    def probe_reads(self, indices: list, assumed: list | None = None,
                    nodes: list | None = None, conditional: set | None = None) -> list[dict]:
        """For each index of `indices`, the global reads the outputs (or `nodes`) make there:
        {input node id: [indices read]}, found by rendering them in a throwaway renderer (nothing
        is emitted). With a list `assumed`, slice assignments take their update branch and add
        their conditions to it (Renderer.assumed). A set `conditional` receives the (node id,
        index) reads made only inside a branch (a slice assignment's or concatenation's)."""
        reads: list[dict] = []

        def read(node, index):
            reads[-1].setdefault(node.id, []).append(index)
            if conditional is not None and probe.depth > 1:
                conditional.add((node.id, index))
            return f"probe{node.id}"
        probe = Renderer(self.group, read, "cuda")
        probe.ones, probe.counts = self.renderer.ones, self.renderer.counts
        probe.assumed = assumed
        for node in list(self.group.reductions) + [self.group.matmul]:
            if node is not None:         # computed elsewhere in the kernel: not read here
                probe.special[node.id] = lambda index, name=f"probe{node.id}": name
        for index in indices:
            reads.append({})
            for node in nodes or [p.node for p in self.outputs]:
                probe.value(node, index)
        return reads

    @staticmethod
    def lane_indices(base: tuple, lanes: int) -> list:
        return [base if lane == 0 else base[:-1] + (f"{base[-1]}v{lane}",)
                for lane in range(lanes)]

    def vector_loop(self, shape, size: int, lanes: int, vectors: dict, threads: int,
                    steps: list | None = None) -> None:
        """The grid-stride loop a vector at a time: one vector load per input in `vectors`, the
        lanes computed as scalars, one vector store per output. With `steps`, the vector reads of
        each of several vectors whose index names end _0, _1, ..., a step takes that many vectors
        (placed as VECTOR_SPREAD says: vector_frame), every load of all of them before any store
        (a store through a raw pointer may alias a later load, so the compiler keeps them in
        order), and a loop a vector at a time takes the remainder."""
        r = self.renderer
        for name in ("address", f"vload{lanes}", f"vstore{lanes}"):
            r.globals[name] = ("vector", name)
        ilp = len(steps or [])
        frame = self.vector_frame(size // lanes, max(1, ilp), threads, self.tuning.vector_spread)
        if ilp > 1:
            r.emit(f"while {frame.last(ilp)} < {frame.end}:")
            r.push()
            taken, self.preloaded = [], {}
            for u, reads in enumerate(steps):
                flat = "ev" if u == 0 else f"ev{u}"
                r.emit(f"{flat} = {self.ix(frame.at(u, lanes))}")
                lane_index = self.lane_names(self.element_index(flat, shape, f"_{u}"), lanes)
                self.preloaded.update(self.vector_loads(flat, shape, lanes, reads, lane_index,
                                                        f"_{u}"))
                taken.append((flat, lane_index))
            for flat, lane_index in taken:
                self.vector_lanes_store(lane_index, lanes, at=flat)
            self.preloaded = {}
            r.emit(f"e = {self.ix(frame.advance(ilp))}")
            r.pop()
        r.emit(f"while e < {frame.end}:")
        r.push()
        r.emit(f"ev = {self.ix(f'e * {lanes}')}")
        lane_index = self.vector_index("ev", shape, lanes)
        self.preloaded = self.vector_loads("ev", shape, lanes, vectors, lane_index, "")
        if not (self.tuning.setslice_fast and self.interior_first(lane_index, lanes)):
            self.vector_lanes_store(lane_index, lanes)
        self.preloaded = {}
        r.emit(f"e = {self.ix(frame.advance(1))}")
        r.pop()

    def vector_frame(self, count: int, width: int, threads: int, spread: str,
                     blocks: int = 0) -> Frame:
        """Emit the start of a loop over `count` vectors whose first steps take `width` vectors a
        thread, and return how its steps are placed (Frame). Spreads:
        - "grid": a step's vectors a grid-stride apart; all the grid's threads sweep the array
          together, each step of the grid covering `width` grid-wide stretches;
        - "block": a block's step covers width x threads consecutive vectors, a thread's vectors a
          block apart (Inductor's pointwise layout), and the grid strides on by `width` grids;
        - "chunk" (for `blocks` blocks): each block walks a contiguous range of its own, whole
          blocks of vectors long (so each starts aligned), the last one shorter.
        Narrower steps after the first ones take what a thread has left: under "grid" a grid
        stride apart, otherwise a block apart, which stays inside the block's stretch."""
        r = self.renderer
        if spread == "grid" or (spread == "block" and width == 1):
            r.emit(f"e = {self.ix('cuda.grid(1)')}")
            r.emit(f"step = {self.ix('cuda.gridsize(1)')}")
            return Frame(str(count), "step", lambda w: f"e + {w} * step" if w > 1 else "e + step")
        if spread == "block":
            r.emit(f"e = {self.ix(f'cuda.blockIdx.x * {width * threads} + cuda.threadIdx.x')}")
            r.emit(f"step = {self.ix(f'cuda.gridsize(1) * {width}')}")
            return Frame(str(count), str(threads),
                         lambda w: "e + step" if w == width else f"e + {w * threads}")
        if spread != "chunk" or not blocks:
            raise ValueError(f"vector loops spread by 'grid', 'block' or 'chunk', not {spread!r}")
        chunk = -(-count // (blocks * threads)) * threads
        r.emit(f"e = {self.ix(f'cuda.blockIdx.x * {chunk} + cuda.threadIdx.x')}")
        r.emit(f"end = {self.ix(f'min(cuda.blockIdx.x * {chunk} + {chunk}, {count})')}")
        return Frame("end", str(threads), lambda w: f"e + {w * threads}")

    def vector_index(self, flat: str, shape, lanes: int) -> list:
        """Emit the multi-index of the vector starting at flat element `flat` and its lanes' last
        coordinates; returns each lane's index."""
        return self.lane_names(self.element_index(flat, shape, ""), lanes)

    def lane_names(self, base: tuple, lanes: int) -> list:
        """Emit the last coordinates of lanes 1.. of the vector at index `base`; returns each
        lane's index."""
        lane_index = self.lane_indices(base, lanes)
        for lane in range(1, lanes):
            self.renderer.emit(f"{lane_index[lane][-1]} = {base[-1]} + {lane}")
        return lane_index

    def vector_loads(self, flat: str, shape, lanes: int, vectors: dict, lane_index: list,
                     suffix: str, qualifier: str | None = None, label: str = "once") -> dict:
        """Emit one vector load per input of `vectors` (vector_reads) for the vector at `flat`
        (whose lanes' indices are `lane_index`, just emitted); returns the preloaded entries
        mapping each lane's read to its register (named with `suffix`)."""
        base = lane_index[0]
        preloaded = {}
        for node_id, first in vectors.items():
            param = self.names[node_id]
            node = param.node
            index = first[:-1] + (base[-1],)
            offset = flat if param.strides is None and node.shape == shape and index == base \
                else self.offset(node.shape, param.strides or contiguous(node.shape), index)
            names = [f"{param.name}v{lane}{suffix}" for lane in range(lanes)]
            load = self.vector_function("load", node, lanes, math.prod(shape), qualifier, label)
            self.renderer.emit(f"{', '.join(names)} = {load}({param.name}, {offset})")
            for lane, name in enumerate(names):
                preloaded[(node_id, first[:-1] + (lane_index[lane][-1],))] = \
                    self.register(node, name)
        return preloaded

    def vector_lanes_store(self, lane_index, lanes: int, params: list | None = None,
                           qualifier: str | None = None, label: str = "once",
                           at: str = "ev") -> None:
        """Store each output of `params` (default: all) at the vector starting at flat element
        `at`, its lanes' values rendered at `lane_index` (with PTX `qualifier`, where given, as
        inline PTX)."""
        r = self.renderer
        params = self.outputs if params is None else params
        r.deferred = []
        values = [[r.value(p.node, index) for p in params] for index in lane_index]
        conditions, r.deferred = r.deferred, None
        if conditions:
            values = self.unless(conditions, values, lambda: [
                [r.value(p.node, index) for p in params] for index in lane_index])
        for k, param in enumerate(params):
            lane_values = [self.stored(param.node, values[lane][k]) for lane in range(lanes)]
            store = self.vector_function("store", param.node, lanes, param.node.size,
                                         qualifier, label)
            r.emit(f"{store}({param.name}, {at}, {', '.join(lane_values)})")

    def unless(self, conditions: list, values: list, again) -> list:
        """`values` (lists of value names) as new names, given again by `again()` rendered
        afresh with plain division where any of `conditions` fails (intrinsics/divide.py: quotients
        outside the ranges where the reciprocal's correction is exact)."""
        r = self.renderer
        kept = [[r.name("v") for _ in row] for row in values]
        for names, row in zip(kept, values):
            for name, value in zip(names, row):
                r.emit(f"{name} = {value}")
        every = " & ".join(f"({c})" for c in dict.fromkeys(conditions))
        r.emit(f"if not ({every}):    # rare: IEEE division")
        r.push()
        scopes, divide = r.scopes, r.invariant_divide
        r.scopes, r.invariant_divide = [{}], None
        try:
            for names, row in zip(kept, again()):
                for name, value in zip(names, row):
                    r.emit(f"{name} = {value}")
        finally:
            r.scopes, r.invariant_divide = scopes, divide
        r.pop()
        return kept

    def vector_function(self, kind: str, node: Node, lanes: int, loop_size: int,
                        qualifier: str | None = None, label: str = "once") -> str:
        """The vector load or store of `lanes` elements of `node` in a loop over `loop_size`
        elements: `vload4` and the like, or a hinted access named after `label` (intrinsics/vector.py's
        hinted_load / hinted_store, as inline PTX) with PTX cache qualifiers: `qualifier` where
        given (a rows kernel's own: `vload4_kept`), else STREAM_LOADS (STREAM_STORES) where the
        kernel reads (writes) each element of `node` once (it has as many elements as the
        loop: nothing broadcast), which keeps the caches for what is read again
        (`vload4_once`); split reductions' loads take REDUCE_LOADS instead where it is set.
        Accesses under 4 bytes are never hinted."""
        if qualifier is None:
            qualifier = self.once_loads if kind == "load" else ""
            label = "once"
            if node.size < loop_size:
                qualifier = ""
        if not qualifier or lanes * storage_dtype(node.dtype).itemsize < 4:
            return f"v{kind}{lanes}"
        name = f"v{kind}{lanes}_{label}" if lanes > 1 else f"{kind}_{label}"
        self.renderer.globals[name] = ("hinted", kind, lanes, qualifier)
        return name

    def interior_first(self, lane_index, lanes: int) -> bool:
        """For groups with slice assignments (a stencil's `v[1:-1, 1:-1] = ...`): a vector whose
        every lane lies inside every assigned region takes a branch-free path, its lanes' loads
        all in flight together; other vectors (the edges) branch lane by lane as before.
        Measured on an H200 (5-point stencil, 8192²): see BENCHMARKS.md. Returns False (nothing
        emitted) where the regions' conditions depend on values computed inside the step."""
        if not any(m.op == "setslice" for m in self.group.members.values()):
            return False
        r = self.renderer
        mark = len(r.lines)
        r.push()                       # the body, rendered first to learn its conditions
        r.assumed = []
        self.vector_lanes_store(lane_index, lanes)
        conditions, r.assumed = r.assumed, None
        body = r.lines[mark:]
        del r.lines[mark:]
        r.pop()
        known = {name for index in lane_index for name in index} | {"ev", "e"} | \
            set(r.lifted.values())        # (slice starts passed as arguments: fixed per launch)
        unique = list(dict.fromkeys(conditions))
        if not unique or any(not identifiers(c) <= known for c in unique):
            return False
        r.emit(f"if {all_of(unique)}:    # every lane inside: no branches")
        r.lines += body
        r.emit("else:")
        r.push()
        self.vector_lanes_store(lane_index, lanes)
        r.pop()
        return True
