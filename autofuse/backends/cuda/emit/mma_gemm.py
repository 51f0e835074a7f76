"""The tensor-core matrix-product kernel: `mma.sync` (intrinsics/mma.py) on float64, float16
(float32 sums) and float32 as TF32 or three TF32 products, its sizes (M, N, K, batch) and every
array's strides runtime arguments, as the compact kernel (gemm.py) takes them; emit/mma_plan.py
decides the instruction and the tile.

A block computes a tm x tn tile of the result: warps_m x warps_n warps, each tiles_m x tiles_n
instruction tiles whose accumulators are its lanes' registers, laid out as mma_shapes.py gives.
Slabs of `slab` K words (a word: an element, or two float16 elements packed) pass through
registers into two alternating shared halves, one barrier a slab: iteration i reads slab i from
memory (guarded, through the operands' index maps, so prologues, transposes, strides and ragged
edges read alike), computes slab i - 1 from its half, then stores slab i into the other half.
Shared rows are `slab + 4` words apart, so a warp's fragment reads (8 rows x 4 words) fall in
distinct banks. The epilogue runs on each accumulator and stores it where it lies in the result.
"""
from __future__ import annotations

import numpy as np

from ..kernel import Grid
from . import gemm
from .mma_plan import Plan

PAD = 4            # words between a shared row's end and the next row's start (bank spread)


def write(source, plan: Plan):
    """The kernel, as `source` (a KernelWriter) renders kernels."""
    r = source.renderer
    source.narrow = False                 # sizes are arguments: 64-bit index math throughout
    node = source.group.matmul
    a, b = node.inputs
    shape = plan.instruction
    gemm.arguments(source, node, a)
    r.load = lambda operand, index: gemm.load(source, operand, index)
    r.globals["ix"] = ("index", "uint32")     # shared offsets: no negative-index wraparound
    conversion = {"f16": "pack_halves", "tf32": "tf32", "3xtf32": "tf32_split"}.get(plan.kind)
    for name in filter(None, (shape.name, conversion)):
        r.globals[name] = ("mma", name)
    batch = gemm.batch_of(source, node)
    row = plan.slab + PAD
    word = {"f64": np.float64, "f16": np.uint32}.get(plan.kind, np.float32)
    shared = source.numba_type(word)
    r.emit("t = cuda.threadIdx.x")
    r.emit("lane = t % 32")
    r.emit("lg = lane // 4")
    r.emit("lq = lane % 4")
    r.emit(f"wm = (t // 32 // {plan.warps_n}) * {plan.tiles_m * shape.m}")
    r.emit(f"wn = (t // 32 % {plan.warps_n}) * {plan.tiles_n * shape.n}")
    r.emit(f"row0 = cuda.blockIdx.y * {plan.tm}")
    r.emit(f"col0 = cuda.blockIdx.x * {plan.tn}")
    r.emit(f"sa = cuda.shared.array({2 * plan.tm * row}, {shared})")
    r.emit(f"sb = cuda.shared.array({2 * plan.tn * row}, {shared})")
    r.emit(f"la = (wm + lg) * {row} + lq")      # this lane's fragment words, from a half's start
    r.emit(f"lb = (wn + lg) * {row} + lq")
    zero = r.constant(np.dtype(np.float64 if shape.accumulator == "f64" else np.float32).type(0))
    acc = {(i, j): [f"c{i}_{j}_{e}" for e in range(len(shape.c))]
           for i in range(plan.tiles_m) for j in range(plan.tiles_n)}
    for registers in acc.values():
        r.emit(" = ".join(registers) + f" = {zero}")
    stages = [_Stage(source, plan, "a", a, plan.tm, "M", "row0", plan.stage_a, batch),
              _Stage(source, plan, "b", b, plan.tn, "N", "col0", plan.stage_b, batch)]
    for stage in stages:
        stage.declare()
    depth = plan.slab * shape.pack
    r.emit("h = 0")
    r.emit(f"for k0 in range(0, K + {depth}, {depth}):")
    r.push()
    r.emit("more = k0 < K")
    r.emit("if more:")
    r.push()
    for stage in stages:
        stage.fetch()
    r.pop()
    r.emit("if k0 > 0:")
    r.push()
    r.emit(f"ba = (1 - h) * {plan.tm * row} + la")
    r.emit(f"bb = (1 - h) * {plan.tn * row} + lb")
    _slab(source, plan, acc, row)
    r.pop()
    r.emit("if more:")
    r.push()
    for stage in stages:
        stage.store()
    r.pop()
    r.emit("h = 1 - h")
    r.emit("cuda.syncthreads()")
    r.pop()
    _epilogue(source, plan, node, acc, batch)
    source.grid_rule = Grid(plan.tn, plan.tm)
    grid = source.grid_rule.of({s.name: s.value for s in source.sizes})
    text = (f"tensor cores ({plan.kind}, mma.sync {shape.ptx.split('.')[3]}), {plan.tm}x{plan.tn}"
            f"x{depth} a block, sizes as arguments")
    return source.finish(text, plan.threads, grid)


def _slab(source, plan: Plan, acc: dict, row: int) -> None:
    """One shared slab's instruction steps: each step's fragments of A and B, then every tile's
    mma (three for 3xtf32: the small products first)."""
    r = source.renderer
    shape = plan.instruction
    mma = shape.name
    for step in range(plan.slab // shape.words):
        base = step * shape.words
        fragments = {}
        for side, tiles, extent, offsets in (("a", plan.tiles_m, shape.m, shape.a),
                                             ("b", plan.tiles_n, shape.n, shape.b)):
            for i in range(tiles):
                words = []
                for e, offset in enumerate(offsets):
                    dr, dk = offset if side == "a" else (0, offset)
                    at = (i * extent + dr) * row + base + dk
                    name = f"f{side}{i}_{e}"
                    loaded = f"s{side}[ix(b{side} + {at})]"
                    if plan.kind == "tf32":
                        loaded = f"tf32({loaded})"
                    if plan.kind == "3xtf32":
                        r.emit(f"{name}, {name}l = tf32_split({loaded})")
                    else:
                        r.emit(f"{name} = {loaded}")
                    words.append(name)
                fragments[side, i] = words
        for (i, j), registers in acc.items():
            left, right = fragments["a", i], fragments["b", j]
            c = f"({', '.join(registers)},)"
            products = [(left, right)]
            if plan.kind == "3xtf32":
                low = lambda names: [f"{n}l" for n in names]
                products = [(low(left), right), (left, low(right)), (left, right)]
            for x, y in products:
                r.emit(f"{', '.join(registers)}, = {mma}(({', '.join(x)},), ({', '.join(y)},), "
                       f"{c})")


def _epilogue(source, plan: Plan, node, acc: dict, batch: tuple) -> None:
    """Each accumulator through the epilogue into the outputs, where it lies in the result."""
    r = source.renderer
    shape = plan.instruction
    r.emit("er = row0 + wm + lg")
    r.emit("ec = col0 + wn + 2 * lq")
    for (i, j), registers in acc.items():
        for register, (dr, dc) in zip(registers, shape.c):
            r.emit(f"gi = er + {i * shape.m + dr}")
            r.emit(f"gj = ec + {j * shape.n + dc}")
            r.emit("if gi < M and gj < N:")
            r.push()
            gemm.store_outputs(source, node, batch, "gi", "gj", source.register_value(register, node))
            r.pop()


class _Stage:
    """One operand's slab: `rounds` words a thread, word w = t + j * threads at (tile
    coordinate, K word) along K first (`along` "k") or along the tile first; a float16 word packs
    elements 2w and 2w + 1 along K."""

    def __init__(self, source, plan: Plan, name, node, width, extent, origin, along, batch):
        self.source, self.plan, self.name, self.node = source, plan, name, node
        self.width, self.extent, self.origin, self.along, self.batch = \
            width, extent, origin, along, batch
        total = width * plan.slab
        assert total % plan.threads == 0, (total, plan.threads)
        self.rounds = total // plan.threads

    def declare(self) -> None:
        r, name, plan = self.source.renderer, self.name, self.plan
        for j in range(self.rounds):
            w = f"(t + {j * plan.threads})" if j else "t"
            if self.along == "k":
                r.emit(f"{name}t{j} = {w} // {plan.slab}")
                r.emit(f"{name}k{j} = {w} % {plan.slab}")
            else:
                r.emit(f"{name}t{j} = {w} % {self.width}")
                r.emit(f"{name}k{j} = {w} // {self.width}")
            r.emit(f"{name}s{j} = {name}t{j} * {plan.slab + PAD} + {name}k{j}")

    def fetch(self) -> None:
        """This thread's words of the slab at k0 into registers (zeros past the edges)."""
        r, name = self.source.renderer, self.name
        pack = self.plan.instruction.pack
        held = np.float64 if self.plan.kind == "f64" else np.float32
        zero = r.constant(np.dtype(held).type(0))
        for j in range(self.rounds):
            r.emit(f"g{name} = {self.origin} + {name}t{j}")
            elements = []
            for p in range(pack):
                element = f"{name}r{j}_{p}" if pack > 1 else f"{name}r{j}"
                r.emit(f"gk = k0 + {name}k{j} * {pack} + {p}" if pack > 1 else
                       f"gk = k0 + {name}k{j}")
                r.emit(f"{element} = {zero}")
                r.emit(f"if g{name} < {self.extent} and gk < K:")
                r.push()
                index = self.batch + ((f"g{name}", "gk") if name == "a" else ("gk", f"g{name}"))
                r.emit(f"{element} = {r.value(self.node, index)}")
                r.pop()
                elements.append(element)
            if pack > 1:
                r.emit(f"{name}r{j} = pack_halves({', '.join(elements)})")

    def store(self) -> None:
        """The fetched words into shared half h."""
        r, name = self.source.renderer, self.name
        half = self.width * (self.plan.slab + PAD)
        for j in range(self.rounds):
            r.emit(f"s{name}[ix(h * {half} + {name}s{j})] = {name}r{j}")
