"""The pipelined float16 tensor-core product kernel: `mma.sync` m16n8k16 (float32 sums) fed by
`ldmatrix` from shared stages that `cp.async` fills ahead of use; its sizes (M, N, K, batch) and
every array's strides runtime arguments, as the register-staged kernel (emit/mma_gemm.py) takes
them; emit/mma_plan.py decides the tile and the stages.

A block computes a tm x tn tile of the result: warps_m x warps_n warps, each tiles_m x tiles_n
instruction tiles whose accumulators are its lanes' registers. K passes in stages of `depth`
elements through `stages` shared buffers a side: before the loop the first stages - 1 are asked
for; each iteration waits for its own stage's copies (cp.async.wait_group stages - 2), meets the
block at one barrier (every copy of that stage has landed, and every warp has finished the stage
before, whose buffer is the one refilled next), asks for the stage stages - 1 ahead, then
computes. An operand's stage is rows of 16-byte chunks along its unit-stride axis (K, or its tile
axis: then the fragments are read with ldmatrix .trans), chunk c of row r stored at c ^ swizzle(r)
(Plan.swizzle) so that the 8 rows of an ldmatrix phase fall in distinct banks. Where both
operands are kernel parameters whose runtime strides and address allow, a chunk is one cp.async
(rows past the edges zero-filled by a short source size); else a second loop fills the stages
word by word, two guarded reads through an operand's index map each (prologues, odd strides).
The epilogue is the register-staged kernel's: each accumulator through it, stored where it lies
in the result.
"""
from __future__ import annotations

import numpy as np

from ..kernel import Grid
from . import gemm
from .mma_gemm import prelude
from .mma_plan import Plan


def write(source, plan: Plan):
    """The kernel, as `source` (a KernelWriter) renders kernels."""
    shape = plan.instruction
    wait = f"cp_async_wait{plan.stages - 2}"
    r, node, a, b, batch = prelude(source, plan, (shape.name, "pack_halves", "ldmatrix4",
                                                  "ldmatrix4t", "cp_async16", "cp_async_commit",
                                                  wait))
    sides = [_Operand(source, plan, "a", a, "M", "row0", "wm", batch),
             _Operand(source, plan, "b", b, "N", "col0", "wn", batch)]
    for line in ("t = cuda.threadIdx.x", "lane = t % 32", "lg = lane // 4", "lq = lane % 4",
                 "q8 = lane // 8", "i8 = lane % 8",
                 f"wm = (t // 32 // {plan.warps_n}) * {plan.tiles_m * shape.m}",
                 f"wn = (t // 32 % {plan.warps_n}) * {plan.tiles_n * shape.n}",
                 f"row0 = cuda.blockIdx.y * {plan.tm}", f"col0 = cuda.blockIdx.x * {plan.tn}"):
        r.emit(line)
    shared = source.numba_type(np.uint32)
    align = "" if source.simulator else ", alignment=128"
    for side in sides:
        r.emit(f"s{side.name} = cuda.shared.array({plan.stages * side.words}, {shared}{align})")
    zero = r.constant(np.float32(0))
    acc = {(i, j): f"c{i}_{j}" for i in range(plan.tiles_m) for j in range(plan.tiles_n)}
    r.emit(" = ".join(acc.values()) + f" = ({', '.join([zero] * len(shape.c))},)")
    for side in sides:
        side.declare()
    direct = all(side.view is not None for side in sides)
    if direct:           # both operands by cp.async: a loop holding nothing else; the other
        #                  reads both element by element (either computed, or its strides or
        #                  address ruling cp.async out), as rarely fast matters there
        r.emit(f"if {' and '.join(f'v{side.name}' for side in sides)}:")
        r.push()
        _loop(source, plan, acc, sides, True)
        r.pop()
        r.emit("else:")
        r.push()
    _loop(source, plan, acc, sides, False)
    if direct:
        r.pop()
    _epilogue(source, plan, node, acc, batch)
    source.grid_rule = Grid(plan.tn, plan.tm)
    grid = source.grid_rule.of({s.name: s.value for s in source.sizes})
    text = (f"tensor cores (f16, mma.sync {shape.ptx.split('.')[3]}), {plan.tm}x{plan.tn}"
            f"x{plan.slab * shape.pack} a block, {plan.stages} cp.async stages, ldmatrix, sizes as arguments")
    return source.finish(text, plan.threads, grid, min_blocks=plan.blocks)


def _loop(source, plan: Plan, acc: dict, sides: list, direct: bool) -> None:
    """The stages: the first stages - 1 asked for, then each waited for, computed, and the one
    stages - 1 ahead asked for; `direct`: by cp.async alone (both operands checked)."""
    r = source.renderer
    depth = plan.slab * plan.instruction.pack
    last = plan.stages - 1
    r.emit(f"nk = (K + {depth - 1}) // {depth}")
    r.emit("kf = 0")                      # the K element the next stage asked for starts at
    r.emit("sw = 0")                      # ... and the buffer it fills
    r.emit(f"for p in range({last}):")
    r.push()
    _fetch(source, sides, depth, last, direct)
    r.pop()
    r.emit("sr = 0")                      # the buffer computed next
    r.emit("for kt in range(nk):")
    r.push()
    r.emit(f"cp_async_wait{plan.stages - 2}()")
    r.emit("cuda.syncthreads()")
    _fetch(source, sides, depth, last, direct)
    _compute(source, plan, acc, sides)
    r.emit(f"sr = sr + 1 if sr < {last} else 0")
    r.pop()


def _fetch(source, sides: list, depth: int, last: int, direct: bool) -> None:
    """Ask for the stage at K element kf into buffer sw (nothing past K), one commit group."""
    r = source.renderer
    r.emit("if kf < K:")
    r.push()
    for side in sides:
        side.fetch(direct)
    r.pop()
    r.emit("cp_async_commit()")
    r.emit(f"kf += {depth}")
    r.emit(f"sw = sw + 1 if sw < {last} else 0")


def _compute(source, plan: Plan, acc: dict, sides: list) -> None:
    """Buffer sr's instruction steps: each step's fragments by ldmatrix, then every tile's mma."""
    r = source.renderer
    shape = plan.instruction
    sa, sb = sides
    for side in sides:
        r.emit(f"r{side.name} = sr * {side.words}")
    for step in range(plan.slab // shape.words):
        for i in range(plan.tiles_m):             # A: rows 0-7, 8-15 at K 0-7, then at K 8-15
            r.emit(f"fa{i} = {sa.ldmatrix(step, i)}")
        for pair in range(plan.tiles_n // 2):     # B: columns 0-7 at K 0-7, 8-15; then 8-15
            r.emit(f"fb{pair} = {sb.ldmatrix(step, pair)}")
        for (i, j), c in acc.items():
            half = ":2" if j % 2 == 0 else "2:"
            r.emit(f"{c} = {shape.name}(fa{i}, fb{j // 2}[{half}], {c})")


def _epilogue(source, plan: Plan, node, acc: dict, batch: tuple) -> None:
    """Each accumulator through the epilogue into the outputs, where it lies in the result: a
    loop over the warp's instruction tiles (their accumulator tuples gathered in one tuple, read
    at the loop's index), each tile's registers written out."""
    r = source.renderer
    shape = plan.instruction
    r.emit(f"acc = ({', '.join(acc.values())},)")
    r.emit("er = row0 + wm + lg")
    r.emit("ec = col0 + wn + 2 * lq")
    r.emit(f"for q in range({len(acc)}):")
    r.push()
    r.emit("cq = acc[q]")
    r.emit(f"ei = er + (q // {plan.tiles_n}) * {shape.m}")
    r.emit(f"ej = ec + (q % {plan.tiles_n}) * {shape.n}")
    for e, (dr, dc) in enumerate(shape.c):
        r.emit(f"gi = ei + {dr}")
        r.emit(f"gj = ej + {dc}")
        r.emit("if gi < M and gj < N:")
        r.push()
        value = source.register_value(f"cq[{e}]", node)    # (float16: rounded once)
        gemm.store_outputs(source, node, batch, "gi", "gj", value)
        r.pop()
    r.pop()


class _Operand:
    """One operand's stages in shared memory (Plan.rows, Plan.swizzle): a thread's chunks c = t +
    j * threads of each stage, where they come from and go; its lanes' ldmatrix rows."""

    def __init__(self, source, plan: Plan, name, node, extent, origin, warp, batch):
        self.source, self.plan, self.name, self.node = source, plan, name, node
        self.extent, self.origin, self.warp, self.batch = extent, origin, warp, batch
        self.kmajor = (plan.stage_a if name == "a" else plan.stage_b) == "k"
        self.rows, self.chunks = plan.rows(name)
        self.row_words = 4 * self.chunks
        self.words = self.rows * self.row_words          # a stage
        self.spread = plan.swizzle(name)[0]
        count = self.rows * self.chunks
        self.rounds = max(1, count // plan.threads)
        self.partial = f"t < {count}" if count < plan.threads else None
        self.view = gemm.operand_axes(source.group, node, source.renderer.ones)
        if self.view is not None and self.view[0].ndim == 0:
            self.view = None

    def swizzle(self, row8: str) -> str:
        """The chunk swizzle of a row, its index mod 8 given (text)."""
        return row8 if self.spread == 1 else f"({row8} // {self.spread})"

    def declare(self) -> None:
        r, n, plan = self.source.renderer, self.name, self.plan
        for j in range(self.rounds):
            c = f"(t + {j * plan.threads})" if j else "t"
            r.emit(f"{n}r{j} = {c} // {self.chunks}")
            r.emit(f"{n}c{j} = {c} % {self.chunks}")
            r.emit(f"{n}s{j} = {n}r{j} * {self.row_words} + "
                   f"({n}c{j} ^ {self.swizzle(f'({n}r{j} % 8)')}) * 4")
            tile, k = (f"{n}r{j}", f"{n}c{j} * 8") if self.kmajor else \
                (f"{n}c{j} * 8", f"{n}r{j}")
            r.emit(f"{n}t{j} = {tile}")
            r.emit(f"{n}k{j} = {k}")
        # this lane's ldmatrix row: matrix q = q8, row i8 of it; A's matrices step the tile
        # first, then K; B's (two tiles of 8 columns) K first, then the tile
        tile_q, k_q = ("(q8 % 2)", "(q8 // 2)") if n == "a" else ("(q8 // 2)", "(q8 % 2)")
        swizzle = self.swizzle("i8")
        if self.kmajor:      # rows along the tile: one offset a step (the tile is linear in it)
            for step in range(plan.slab // plan.instruction.words):
                r.emit(f"{n}f{step} = ({self.warp} + {tile_q} * 8 + i8) * {self.row_words} + "
                       f"(({2 * step} + {k_q}) ^ {swizzle}) * 4")
        else:                # rows along K: one offset a 16-wide group of the tile
            for group in range(self.groups):
                r.emit(f"{n}g{group} = ({k_q} * 8 + i8) * {self.row_words} + "
                       f"((({self.warp} + {16 * group}) // 8 + {tile_q}) ^ {swizzle}) * 4")
        if self.view is not None:
            self._addresses()

    @property
    def groups(self) -> int:
        """16-wide groups of a warp's tile along this operand."""
        return self.plan.tiles_m if self.name == "a" else self.plan.tiles_n // 2

    def ldmatrix(self, step: int, group: int) -> str:
        """The call reading one 16-wide group's fragments of one instruction step."""
        n = self.name
        if self.kmajor:
            return f"ldmatrix4(s{n}, r{n} + {n}f{step} + {16 * group * self.row_words})"
        return f"ldmatrix4t(s{n}, r{n} + {n}g{group} + {16 * step * self.row_words})"

    def _addresses(self) -> None:
        """The vector check (v<name>) and each chunk's element offset in its parameter."""
        r, n, plan = self.source.renderer, self.name, self.plan
        param = self.source.names[self.view[0].id]
        strides = ["0" if axis is None else gemm.stride(param, axis) for axis in self.view[1]]
        tile, k = (strides[-2], strides[-1]) if n == "a" else (strides[-1], strides[-2])
        along, other = (k, tile) if self.kmajor else (tile, k)
        checks = [f"address({param.name}) % 16 == 0", f"{along} == 1"]
        checks += [f"{s} % 8 == 0" for s in [other] + strides[:-2] if s != "0"]
        r.emit(f"v{n} = {' and '.join(checks)}")
        r.emit(f"{n}inc = {plan.slab * plan.instruction.pack} * {k}")
        batch = [f"{i} * {s}" for i, s in zip(self.batch, strides[:-2]) if i != "0" and s != "0"]
        for j in range(self.rounds):
            start = batch + [f"({self.origin} + {n}t{j}) * {tile}", f"{n}k{j} * {k}"]
            r.emit(f"{n}o{j} = {' + '.join(start)}")
            left = f"{self.extent} - {self.origin} - {n}t{j}"
            if self.kmajor:       # K - (the chunk's K), where its row lies inside the operand
                r.emit(f"{n}lim{j} = K - {n}k{j} if {left} > 0 else 0")
            else:                 # the chunk's elements inside the operand; K past its row
                r.emit(f"{n}lim{j} = min(max({left}, 0), 8)")
                r.emit(f"{n}klim{j} = K - {n}k{j}")

    def fetch(self, direct: bool) -> None:
        """The stage at kf into buffer sw: this thread's chunks by cp.async (`direct`: both
        operands checked), else the loop over the stage's words (_words)."""
        r, n = self.source.renderer, self.name
        if not direct:
            self._words()
            return
        param = self.source.names[self.view[0].id].name
        for j in range(self.rounds):
            if self.partial:
                r.emit(f"if {self.partial}:")
                r.push()
            if self.kmajor:        # elements of the row's chunk before K; none past M (N)
                r.emit(f"nb = min(max({n}lim{j} - kf, 0), 8)")
            else:                  # elements of the chunk before M (N); none past K
                r.emit(f"nb = {n}lim{j} if kf < {n}klim{j} else 0")
            r.emit(f"cp_async16(s{n}, sw * {self.words} + {n}s{j}, {param}, "
                   f"{n}o{j} if nb > 0 else 0, nb * 2)")
            r.emit(f"{n}o{j} += {n}inc")
            if self.partial:
                r.pop()

    def _words(self) -> None:
        """The stage word by word, two elements each through the operand's index map, guarded:
        a loop (not unrolled, and holding nothing across stages), as it serves only operands
        that are computed or whose strides or address rule out cp.async."""
        r, n, plan = self.source.renderer, self.name, self.plan
        zero = r.constant(np.float32(0))
        r.emit(f"for u in range(t, {self.words}, {plan.threads}):")
        r.push()
        r.emit(f"ur = u // {self.row_words}")
        r.emit(f"uw = u % {self.row_words}")
        tile, k = ("ur", "2 * uw") if self.kmajor else ("2 * uw", "ur")
        for p in range(2):
            step = (tile, f"{k} + {p}") if self.kmajor else (f"{tile} + {p}", k)
            r.emit(f"g{n} = {self.origin} + {step[0]}")
            r.emit(f"gk = kf + {step[1]}")
            r.emit(f"{n}e{p} = {zero}")
            r.emit(f"if g{n} < {self.extent} and gk < K:")
            r.push()
            index = self.batch + ((f"g{n}", "gk") if n == "a" else ("gk", f"g{n}"))
            r.emit(f"{n}e{p} = {r.value(self.node, index)}")
            r.pop()
        r.emit(f"s{n}[ix(sw * {self.words} + ur * {self.row_words} + "
               f"((uw // 4) ^ {self.swizzle('(ur % 8)')}) * 4 + uw % 4)] = "
               f"pack_halves({n}e0, {n}e1)")
        r.pop()
