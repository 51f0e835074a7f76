"""The tensor-core matrix-product kernel: `mma.sync` (intrinsics/mma.py) on float64, float16
(float32 sums) and float32 as TF32 or three TF32 products, its sizes (M, N, K, batch) and every
array's strides runtime arguments, as the compact kernel (gemm.py) takes them; emit/mma_plan.py
decides the instruction and the tile.

A block computes a tm x tn tile of the result: warps_m x warps_n warps, each tiles_m x tiles_n
instruction tiles whose accumulators are its lanes' registers, laid out as mma_shapes.py gives.
Slabs of `slab` K words (a word: an element, or two float16 elements packed) pass through
registers into two alternating shared halves, one barrier a slab: iteration i reads slab i from
memory (vector loads where a parameter's runtime strides allow, else guarded reads through the
operands' index maps, so prologues, transposes, strides and ragged edges read alike), computes
slab i - 1 from its half, then stores slab i into the other half. Each operand's shared rows run
along its unit-stride axis, padded so that a warp's fragment reads (8 rows x 4 K words) fall in
distinct banks (Plan.layout). The epilogue runs on each accumulator and stores it where it lies
in the result.
"""
from __future__ import annotations

import numpy as np

from ..kernel import Grid
from . import gemm
from .mma_plan import Plan


def prelude(source, plan: Plan, intrinsics) -> tuple:
    """What both tensor-core kernels (this one, mma_pipeline.py) open with: 64-bit index math,
    the product's arguments and loads, the mma `intrinsics` and shared-memory helpers as
    globals, the block's batch coordinates. (renderer, product, a, b, batch)"""
    r = source.renderer
    source.narrow = False                 # sizes are arguments: 64-bit index math throughout
    node = source.group.matmul
    a, b = node.inputs
    gemm.arguments(source, node, a)
    r.load = lambda operand, index: gemm.load(source, operand, index)
    r.globals["ix"] = ("index", "uint32")     # shared offsets: no negative-index wraparound
    for name in intrinsics:
        r.globals[name] = ("mma", name)
    for name in ("address", "sstore4"):
        r.globals[name] = ("vector", name)
    return r, node, a, b, gemm.batch_of(source, node)


def write(source, plan: Plan):
    """The kernel, as `source` (a KernelWriter) renders kernels."""
    shape = plan.instruction
    conversion = {"f16": "pack_halves", "tf32": "tf32", "3xtf32": "tf32_split"}.get(plan.kind)
    r, node, a, b, batch = prelude(source, plan, filter(None, (shape.name, conversion)))
    word = {"f64": np.float64, "f16": np.uint32}.get(plan.kind, np.float32)
    shared = source.numba_type(word)
    align = "" if source.simulator else ", alignment=32"
    stages = [_Stage(source, plan, "a", a, plan.tm, "M", "row0", plan.stage_a, batch),
              _Stage(source, plan, "b", b, plan.tn, "N", "col0", plan.stage_b, batch)]
    sa, sb = stages
    r.emit("t = cuda.threadIdx.x")
    r.emit("lane = t % 32")
    r.emit("lg = lane // 4")
    r.emit("lq = lane % 4")
    r.emit(f"wm = (t // 32 // {plan.warps_n}) * {plan.tiles_m * shape.m}")
    r.emit(f"wn = (t // 32 % {plan.warps_n}) * {plan.tiles_n * shape.n}")
    r.emit(f"row0 = cuda.blockIdx.y * {plan.tm}")
    r.emit(f"col0 = cuda.blockIdx.x * {plan.tn}")
    for stage in stages:
        r.emit(f"s{stage.name} = cuda.shared.array({2 * stage.half}, {shared}{align})")
    # this lane's fragment words, from a shared half's start
    r.emit(f"la = {sa.offset('(wm + lg)', 'lq')}")
    r.emit(f"lb = {sb.offset('(wn + lg)', 'lq')}")
    zero = r.constant(np.dtype(np.float64 if shape.accumulator == "f64" else np.float32).type(0))
    acc = {(i, j): [f"c{i}_{j}_{e}" for e in range(len(shape.c))]
           for i in range(plan.tiles_m) for j in range(plan.tiles_n)}
    for registers in acc.values():
        r.emit(" = ".join(registers) + f" = {zero}")
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
    for stage in stages:
        r.emit(f"b{stage.name} = (1 - h) * {stage.half} + l{stage.name}")
    _slab(source, plan, acc, stages)
    r.pop()
    r.emit("if more:")
    r.push()
    for stage in stages:
        stage.store()
    r.pop()
    r.emit("h = 1 - h")
    r.emit("cuda.syncthreads()")
    r.pop()
    epilogue(source, plan, node, acc, batch)
    source.grid_rule = Grid(plan.tn, plan.tm)
    grid = source.grid_rule.of({s.name: s.value for s in source.sizes})
    text = (f"tensor cores ({plan.kind}, mma.sync {shape.ptx.split('.')[3]}), {plan.tm}x{plan.tn}"
            f"x{depth} a block, sizes as arguments")
    return source.finish(text, plan.threads, grid)


def _slab(source, plan: Plan, acc: dict, stages: list) -> None:
    """One shared slab's instruction steps: each step's fragments of A and B, then every tile's
    mma (three for 3xtf32: the small products first)."""
    r = source.renderer
    shape = plan.instruction
    mma = shape.name
    for step in range(plan.slab // shape.words):
        base = step * shape.words
        fragments = {}
        for stage, tiles, extent, offsets in ((stages[0], plan.tiles_m, shape.m, shape.a),
                                              (stages[1], plan.tiles_n, shape.n, shape.b)):
            side = stage.name
            along_tile, along_k = stage.steps
            for i in range(tiles):
                words = []
                for e, offset in enumerate(offsets):
                    dr, dk = offset if side == "a" else (0, offset)
                    at = (i * extent + dr) * along_tile + (base + dk) * along_k
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
            if plan.kind == "3xtf32":       # (the low parts' products first: they are smallest)
                low_left, low_right = [f"{n}l" for n in left], [f"{n}l" for n in right]
                products = [(low_left, right), (left, low_right), (left, right)]
            for x, y in products:
                r.emit(f"{', '.join(registers)}, = {mma}(({', '.join(x)},), ({', '.join(y)},), "
                       f"{c})")


def epilogue(source, plan: Plan, node, acc: dict, batch: tuple) -> None:
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
            value = source.register_value(register, node)    # (float16: rounded once)
            gemm.store_outputs(source, node, batch, "gi", "gj", value)
            r.pop()


class _Stage:
    """One operand's slab in shared memory, its `along` axis (the one of unit stride in memory,
    where the plan could tell: "k" or "tile") contiguous there: rows of `stride` words, [tile][K
    word] or [K word][tile]. A thread moves chunks of 4 words along that axis: chunk c = t + j *
    threads, read with one or two vector loads where the operand is a kernel parameter whose
    runtime strides and address allow and the chunk lies inside it, else element by element,
    guarded, through the operand's index map; stored with one st.shared.v4."""

    def __init__(self, source, plan: Plan, name, node, width, extent, origin, along, batch):
        self.source, self.plan, self.name, self.node = source, plan, name, node
        self.width, self.extent, self.origin, self.along, self.batch = \
            width, extent, origin, along, batch
        self.pack = plan.instruction.pack
        self.stride, rows = plan.layout(name)
        self.steps = (self.stride, 1) if along == "k" else (1, self.stride)
        self.half = rows * self.stride       # words a shared half
        chunks = width * plan.slab // 4
        assert chunks % plan.threads == 0 or chunks < plan.threads, (chunks, plan.threads)
        self.rounds = -(-chunks // plan.threads)
        self.partial = f"t < {chunks}" if chunks < plan.threads else None
        self.view = gemm.operand_axes(source.group, node, source.renderer.ones)
        if self.view is not None and self.view[0].ndim == 0:
            self.view = None

    def offset(self, tile: str, word: str) -> str:
        """A word's place in a shared half, its tile coordinate and K word given."""
        terms = [name if step == 1 else f"{name} * {step}"
                 for name, step in zip((tile, word), self.steps)]
        return " + ".join(terms)

    def declare(self) -> None:
        r, name, plan, pack = self.source.renderer, self.name, self.plan, self.pack
        for j in range(self.rounds):
            c = f"(t + {j * plan.threads})" if j else "t"
            if self.along == "k":
                r.emit(f"{name}t{j} = {c} // {plan.slab // 4}")
                r.emit(f"{name}k{j} = ({c} % {plan.slab // 4}) * 4")
            else:
                r.emit(f"{name}t{j} = ({c} % {self.width // 4}) * 4")
                r.emit(f"{name}k{j} = {c} // {self.width // 4}")
            r.emit(f"{name}s{j} = {self.offset(f'{name}t{j}', f'{name}k{j}')}")
        if self.view is None:
            return
        param = self.source.names[self.view[0].id]
        strides = ["0" if axis is None else gemm.stride(param, axis) for axis in self.view[1]]
        tile, k = (strides[-2], strides[-1]) if name == "a" else (strides[-1], strides[-2])
        self.k_stride = k
        along, other = (k, tile) if self.along == "k" else (tile, k)
        lanes = 16 // self.node.dtype.itemsize
        checks = [f"address({param.name}) % 16 == 0", f"{along} == 1"]
        checks += [f"{s} % {lanes} == 0" for s in [other] + strides[:-2] if s != "0"]
        r.emit(f"v{name} = {' and '.join(checks)}")
        r.emit(f"{name}inc = {plan.slab * pack} * {k}")
        batch = [f"{i} * {s}" for i, s in zip(self.batch, strides[:-2]) if i != "0" and s != "0"]
        for j in range(self.rounds):
            start = batch + [f"({self.origin} + {name}t{j}) * {tile}", f"{name}k{j} * {pack} * {k}"]
            r.emit(f"{name}o{j} = {' + '.join(start)}")
            r.emit(f"{name}left{j} = {self.extent} - {self.origin} - {name}t{j}")
            r.emit(f"{name}klim{j} = K - {name}k{j} * {pack}")

    def _registers(self, j: int) -> list:
        return [f"{self.name}r{j}_{i}" for i in range(4)]

    def fetch(self) -> None:
        """This thread's chunks of the slab at k0 into registers (zeros past the edges)."""
        r = self.source.renderer
        for j in range(self.rounds):
            if self.partial:
                r.emit(f"if {self.partial}:")
                r.push()
            if self.view is not None:
                self._direct(j)
                r.emit("else:")
                r.push()
                self._elements(j)
                r.pop()
                r.emit(f"{self.name}o{j} += {self.name}inc")
            else:
                self._elements(j)
            if self.partial:
                r.pop()

    def _direct(self, j: int) -> None:
        """`if` the chunk may be read by vector loads: those loads (the `else` is the caller's)."""
        r, name, pack = self.source.renderer, self.name, self.pack
        param = self.source.names[self.view[0].id].name
        words, offset = self._registers(j), f"{name}o{j}"
        kind = self.plan.kind
        if self.along == "k":
            r.emit(f"if v{name} and {name}left{j} > 0 and k0 + {4 * pack} <= {name}klim{j}:")
        else:
            r.emit(f"if v{name} and {name}left{j} >= 4 and k0 + {pack} <= {name}klim{j}:")
        r.push()
        self.source.renderer.globals.update(
            {f"vload{n}": ("vector", f"vload{n}") for n in (2, 4, 8)})
        if kind == "f64":
            r.emit(f"{', '.join(words[:2])} = vload2({param}, {offset})")
            r.emit(f"{', '.join(words[2:])} = vload2({param}, {offset} + 2)")
        elif kind != "f16":
            r.emit(f"{', '.join(words)} = vload4({param}, {offset})")
        elif self.along == "k":       # 8 consecutive halves along K: 4 words
            halves = [f"{name}h{i}" for i in range(8)]
            r.emit(f"{', '.join(halves)} = vload8({param}, {offset})")
            for i, word in enumerate(words):
                r.emit(f"{word} = pack_halves({halves[2 * i]}, {halves[2 * i + 1]})")
        else:                         # rows 2w and 2w + 1 of 4 consecutive tile elements
            low, high = [f"{name}l{i}" for i in range(4)], [f"{name}u{i}" for i in range(4)]
            r.emit(f"{', '.join(low)} = vload4({param}, {offset})")
            r.emit(f"{', '.join(high)} = vload4({param}, {offset} + {self.k_stride})")
            for word, x, y in zip(words, low, high):
                r.emit(f"{word} = pack_halves({x}, {y})")
        r.pop()

    def _elements(self, j: int) -> None:
        """The chunk element by element through the operand's index map, guarded."""
        r, name, pack = self.source.renderer, self.name, self.pack
        zero = r.constant(np.dtype(np.float64 if self.plan.kind == "f64" else np.float32).type(0))
        for i, word in enumerate(self._registers(j)):
            tile, k = (f"{name}t{j}", f"{name}k{j} + {i}") if self.along == "k" else \
                (f"{name}t{j} + {i}", f"{name}k{j}")
            r.emit(f"g{name} = {self.origin} + {tile}")
            elements = []
            for p in range(pack):
                element = f"{name}e{p}" if pack > 1 else word
                r.emit(f"gk = k0 + ({k}) * {pack} + {p}" if pack > 1 else f"gk = k0 + {k}")
                r.emit(f"{element} = {zero}")
                r.emit(f"if g{name} < {self.extent} and gk < K:")
                r.push()
                index = self.batch + ((f"g{name}", "gk") if name == "a" else ("gk", f"g{name}"))
                r.emit(f"{element} = {r.value(self.node, index)}")
                r.pop()
                elements.append(element)
            if pack > 1:
                r.emit(f"{word} = pack_halves({', '.join(elements)})")

    def store(self) -> None:
        """The fetched chunks into shared half h: one 16-byte store each."""
        r, name = self.source.renderer, self.name
        for j in range(self.rounds):
            if self.partial:
                r.emit(f"if {self.partial}:")
                r.push()
            r.emit(f"sstore4(s{name}, h * {self.half} + {name}s{j}, "
                   f"{', '.join(self._registers(j))})")
            if self.partial:
                r.pop()
