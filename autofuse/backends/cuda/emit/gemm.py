"""The compact matrix-product kernel: float32 or float64, its sizes (M, N, K, batch) and every
array's strides runtime arguments, its source written with loops, so one compiled kernel serves
every shape of a product's structure (emit/gemm_plan.py decides; KernelSource.sizes carries them).

The design is emit/matmul_tiles.py's: a block computes a tm x tn tile, each thread 8 x 8 results
as two 4-wide chunks per side (a warp is 4 x 8 threads); slabs of `depth` K elements go through
registers into two alternating shared halves, one barrier a slab; a thread reads its 8 values of
A and of B for one k as four ld.shared.v4. A thread moves 4 consecutive elements of each operand
a slab: one 16-byte load (two for float64) where the operand is a kernel parameter whose runtime
strides and address allow, else four guarded reads through the operand's index map (prologues,
edges, odd sizes). The epilogue stages the accumulators through shared memory a few rows at a
time, so its loop over the tile is one loop whatever the tile, and its stores are coalesced.
"""
from __future__ import annotations

from ..kernel import Grid, Size
from . import accumulators
from .gemm_plan import Plan, operand_axes


def write(source, plan: Plan):
    """The kernel, as `source` (a KernelWriter) renders kernels."""
    r = source.renderer
    source.narrow = False                 # sizes are arguments: 64-bit index math throughout
    node = source.group.matmul
    a, b = node.inputs
    tm, tn, depth = plan.tm, plan.tn, plan.depth
    side_m, side_n = tm // 8, tn // 8
    threads = side_m * side_n
    nb = source.numba_type(node.dtype)
    zero = r.constant(node.dtype.type(0))
    arguments(source, node, a)
    r.load = lambda operand, index: load(source, operand, index)
    for name in ("address", "vload2", "vload4", "sload4", "sstore4"):
        r.globals[name] = ("vector", name)
    r.globals["ix"] = ("index", "uint32")     # shared offsets: no negative-index wraparound
    if plan.narrow:              # running offsets and bounds in 32 bits: fewer registers
        r.globals["sx"] = ("index", "int32")
    source.small = (lambda text: f"sx({text})") if plan.narrow else (lambda text: text)
    batch = batch_of(source, node)
    sb = 2 * depth * tm                   # B's slabs follow A's in the one shared array
    area = 2 * depth * (tm + tn)
    align = "" if source.simulator else ", alignment=32"
    r.emit("t = cuda.threadIdx.x")
    r.emit("w = t // 32")
    r.emit("lane = t % 32")
    r.emit(f"tm = (w // {side_n // 8}) * 4 + lane // 8")
    r.emit(f"tn = (w % {side_n // 8}) * 8 + lane % 8")
    r.emit(f"row0 = cuda.blockIdx.y * {tm}")
    r.emit(f"col0 = cuda.blockIdx.x * {tn}")
    r.emit(f"smem = cuda.shared.array({area}, {nb}{align})")
    # NOTE: the accumulators a local array indexed by constants (registers after SROA), a K
    # step one intrinsic call (intrinsics/register_block.py): 64 scalars in tuple assignments
    # cost numba's front end ~20 s a kernel, for the same PTX arithmetic
    acc = accumulators.declare(r, 8, 8, nb)
    r.emit(accumulators.fill(8, 8, zero))
    stages = [_Stage(source, "a", a, plan.stage_a, "row0", "M", tm, 0, depth, threads, batch),
              _Stage(source, "b", b, plan.stage_b, "col0", "N", tn, sb, depth, threads, batch)]
    for stage in stages:
        stage.declare(r)
    _main_loop(source, stages, acc, plan, zero)
    _epilogue(source, node, acc, batch, plan, area)
    source.grid_rule = Grid(tn, tm)
    grid = source.grid_rule.of({s.name: s.value for s in source.sizes})
    # NOTE: float32: registers for two blocks an SM (ptxas for sm_90 fits 128 a thread without
    # spilling; unbounded it took 153 and one block); float64's 64 accumulators take ~250.
    blocks = source.tuning.gemm_blocks if node.dtype.itemsize == 4 else 0
    return source.finish(f"compact tiled {tm}x{tn}x{depth}, 8x8 per thread, sizes as arguments",
                         threads, grid, min_blocks=blocks)


def _main_loop(source, stages, acc, plan: Plan, zero: str) -> None:
    """The loop over K's slabs."""
    r = source.renderer
    tm, tn, depth = plan.tm, plan.tn, plan.depth
    sb = 2 * depth * tm
    # NOTE: iteration i reads slab i into registers, computes slab i - 1 from its shared half
    # while those reads are in flight, then stores slab i into the other half; the one barrier
    # an iteration orders both (a half is rewritten two slabs after it was read).
    r.emit("cur = 0")
    r.emit(f"for k0 in range(0, K + {depth}, {depth}):")
    r.push()
    r.emit("more = k0 < K")
    r.emit("if more:")
    r.push()
    for stage in stages:
        stage.fetch(r, zero)
    r.pop()
    r.emit("if k0 > 0:")
    r.push()
    # NOTE: a slab's K steps are written out (`unroll` of them; a while loop over the shared
    # offsets where fewer than `depth`): numba's range loop cost ~17 integer instructions a step
    # in the PTX, against 64 FMAs. A step's 64 FMAs are one intrinsic call, so the slab takes 5
    # lines a step.
    unroll = min(source.tuning.gemm_unroll, depth)
    r.emit(f"sa0 = cur * {tm} + tm * 4")
    r.emit(f"sb0 = {sb} + cur * {tn} + tn * 4")
    if unroll < depth:
        r.emit(f"send = sa0 + {depth * tm}")
        r.emit("while sa0 < send:")
        r.push()
    for u in range(unroll):
        for side, base, width in (("a", "sa0", tm), ("b", "sb0", tn)):
            for chunk in range(2):
                names = ", ".join(f"{side}{4 * chunk + i}_" for i in range(4))
                r.emit(f"{names} = sload4(smem, {base} + {u * width + chunk * width // 2})")
        r.emit(accumulators.step(8, 8))
    if unroll < depth:
        r.emit(f"sa0 += {unroll * tm}")
        r.emit(f"sb0 += {unroll * tn}")
        r.pop()
    r.emit(f"cur = {depth} - cur")
    r.pop()
    r.emit("if more:")
    r.push()
    for stage in stages:
        stage.stage(r)
    r.pop()
    r.emit("cuda.syncthreads()")
    r.pop()


def _kept(source, extent: int) -> bool:
    """Whether an axis of `extent` has its size and stride arguments: one of more than 1
    element, or any in a class kernel (its renderer keeps size-1 axes: dynamic/), whose text is
    then the same at size 1 as at any other size."""
    return extent != 1 or not source.renderer.ones


def arguments(source, node, a) -> None:
    """The kernel's size arguments: batch extents (of more than 1), M, N, K, and each array's
    element strides along its axes of more than 1 element (every axis in a class kernel)."""
    sizes = source.sizes
    for d, extent in enumerate(node.shape[:-2]):
        if _kept(source, extent):
            sizes.append(Size(f"B{d}", node, d))
    sizes += [Size("M", node, node.ndim - 2), Size("N", node, node.ndim - 1),
              Size("K", a, a.ndim - 1)]
    for param in source.params + source.outputs:
        if param.by_value:
            continue
        for d, extent in enumerate(param.node.shape):
            if _kept(source, extent):
                sizes.append(Size(f"{param.name}_s{d}", param.node, d, True, param.strides))


def stride(param, axis) -> str:
    return f"{param.name}_s{axis}"


def load(source, node, index) -> str:
    """An input's element at `index`, through its stride arguments."""
    param = source.names[node.id]
    if param.by_value:
        return source.register(node, param.name)
    terms = [f"{i if i.isidentifier() else f'({i})'} * {stride(param, d)}"
             for d, (i, extent) in enumerate(zip(index, node.shape))
             if _kept(source, extent) and i != "0"]
    return source.register(node, f"{param.name}[{' + '.join(terms) or '0'}]")


def batch_of(source, node) -> tuple:
    """The batch coordinates of this block (from blockIdx.z over the runtime batch extents)."""
    r = source.renderer
    names = [f"b{d}" if _kept(source, extent) else "0" for d, extent in enumerate(node.shape[:-2])]
    kept = [d for d, name in enumerate(names) if name != "0"]
    if kept:
        r.emit("rest = cuda.blockIdx.z")
    for d in reversed(kept):
        if d == kept[0]:
            r.emit(f"b{d} = rest")
        else:
            r.emit(f"b{d} = rest % B{d}")
            r.emit(f"rest = rest // B{d}")
    return tuple(names)


class _Stage:
    """One operand's slabs: a thread's chunks c = t + j * threads of 4 consecutive elements,
    along K (`along` "k": 4 shared stores, transposing) or along the tile (one 16-byte store)."""

    def __init__(self, source, name, node, along, origin, extent, width, base, depth, threads,
                 batch):
        self.source, self.name, self.node, self.along = source, name, node, along
        self.origin, self.extent, self.width, self.base = origin, extent, width, base
        self.depth, self.threads, self.batch = depth, threads, batch
        chunks = depth * width // 4
        self.rounds = -(-chunks // threads)
        self.partial = f"t < {chunks}" if chunks < threads else None
        self.view = operand_axes(source.group, node, source.renderer.ones)
        if self.view is not None and self.view[0].ndim == 0:
            self.view = None

    def _position(self, j: int) -> tuple:
        """(tile coordinate, k coordinate) of round j's chunk, as names."""
        return f"{self.name}q{j}", f"{self.name}k{j}"

    def declare(self, r) -> None:
        per = self.depth // 4 if self.along == "k" else self.width // 4
        assert self.rounds == 1 or self.threads % per == 0    # (rounds shift by constants)
        for j in range(self.rounds):
            q, kq = self._position(j)
            chunk = f"(t + {j * self.threads})" if j else "t"
            major, minor = (q, kq) if self.along == "k" else (kq, q)
            r.emit(f"{major} = {chunk} // {per}")
            r.emit(f"{minor} = ({chunk} % {per}) * 4")
        if self.view is None:
            return
        param = self.source.names[self.view[0].id]
        strides = ["0" if axis is None else stride(param, axis) for axis in self.view[1]]
        tile, k = (strides[-2], strides[-1]) if self.name == "a" else (strides[-1], strides[-2])
        along, other = (k, tile) if self.along == "k" else (tile, k)
        batch = [f"{i} * {s}" for i, s in zip(self.batch, strides[:-2]) if i != "0" and s != "0"]
        lanes = 16 // self.node.dtype.itemsize
        checks = [f"address({param.name}) % 16 == 0", f"{along} == 1"]
        checks += [f"{s} % {lanes} == 0" for s in [other] + strides[:-2] if s != "0"]
        # NOTE: what the reads need is computed once: the offset at k0 = 0 (advanced a slab at
        # a time), the elements left along the tile and along K from the chunk's first. With
        # guards recomputed from the index in the loop, ptxas kept ~40 more registers.
        self.step = along
        small = self.source.small
        r.emit(f"{self.name}inc = {small(f'{self.depth} * {k}')}")
        r.emit(f"v{self.name} = {' and '.join(checks)}")
        # (round j's chunk lies self.shift(j) further along the tile or along K than round 0's)
        wide = 3 if self.along == "tile" else 0
        q, kq = self._position(0)
        r.emit(f"{self.name}left = {small(f'{self.extent} - {self.origin} - {q}')}")
        r.emit(f"{self.name}klim = {small(f'K - {kq}')}")
        for j in range(self.rounds):
            q, kq = self._position(j)
            start = ' + '.join(batch + [f'({self.origin} + {q}) * {tile}', f'{kq} * {k}'])
            r.emit(f"{self.name}o{j} = {small(start)}")
            ts, ks = self.shift(j)
            r.emit(f"v{self.name}{j} = v{self.name} and {wide + ts} < {self.name}left")

    def shift(self, j: int) -> tuple:
        """(along the tile, along K): how much further round j's chunk lies than round 0's."""
        per = self.depth // 4 if self.along == "k" else self.width // 4
        step = j * self.threads // per
        return (step, 0) if self.along == "k" else (0, step)

    def _registers(self, j: int) -> list:
        return [f"{self.name}r{j}_{i}" for i in range(4)]

    def fetch(self, r, zero) -> None:
        """Round j's 4 elements into registers at slab k0: one or two 16-byte loads where the
        strides, the address and the sizes allow, else element by element, guarded (through
        the operand's index map where it is computed)."""
        for j in range(self.rounds):
            q, kq = self._position(j)
            registers = self._registers(j)
            if self.partial:
                r.emit(f"if {self.partial}:")
                r.push()
            if self.view is not None:
                self._direct(r, j, registers, zero)
            else:
                for i, register in enumerate(registers):
                    ti, ki = (f"{self.origin} + {q}", f"k0 + {kq}")
                    ti, ki = (f"{ti} + {i}", ki) if self.along == "tile" else (ti, f"{ki} + {i}")
                    r.emit(f"{register} = {zero}")
                    r.emit(f"if {ti} < {self.extent} and {ki} < K:")
                    r.push()
                    index = self.batch + ((ti, ki) if self.name == "a" else (ki, ti))
                    r.emit(f"{register} = {r.value(self.node, index)}")
                    r.pop()
            if self.partial:
                r.pop()

    def _direct(self, r, j: int, registers: list, zero: str) -> None:
        """A kernel parameter's chunk, at its running offset."""
        name, offset = self.name, f"{self.name}o{j}"
        param = self.source.names[self.view[0].id].name
        wide = 3 if self.along == "k" else 0
        ts, ks = self.shift(j)
        r.emit(f"if v{name}{j} and k0 + {wide + ks} < {name}klim:")
        r.push()
        if self.node.dtype.itemsize == 4:
            r.emit(f"{', '.join(registers)} = vload4({param}, {offset})")
        else:
            r.emit(f"{', '.join(registers[:2])} = vload2({param}, {offset})")
            r.emit(f"{', '.join(registers[2:])} = vload2({param}, {offset} + 2)")
        r.pop()
        r.emit("else:")
        r.push()
        for i, register in enumerate(registers):
            ti, ki = (i, 0) if self.along == "tile" else (0, i)
            r.emit(f"{register} = {zero}")
            r.emit(f"if {ti + ts} < {name}left and k0 + {ki + ks} < {name}klim:")
            r.push()
            at = f"{offset} + {i} * {self.step}" if i else offset
            r.emit(f"{register} = {self.source.register(self.node, f'{param}[{at}]')}")
            r.pop()
        r.pop()
        r.emit(f"{offset} = {self.source.small(f'{offset} + {name}inc')}")

    def stage(self, r) -> None:
        """Store the fetched chunks into the shared half `cur` (rows cur .. cur + depth)."""
        slab = f"{self.base} + cur * {self.width}"
        for j in range(self.rounds):
            q, kq = self._position(j)
            registers = self._registers(j)
            if self.partial:
                r.emit(f"if {self.partial}:")
                r.push()
            if self.along == "k":
                for i, register in enumerate(registers):
                    r.emit(f"smem[ix({slab} + ({kq} + {i}) * {self.width} + {q})] = {register}")
            else:
                r.emit(f"sstore4(smem, {slab} + {kq} * {self.width} + {q}, "
                       f"{', '.join(registers)})")
            if self.partial:
                r.pop()


def _epilogue(source, node, acc, batch, plan: Plan, area: int) -> None:
    """The accumulators through shared memory, `rows` of each thread's 8 at a time; then the
    block's loop over the staged rows applies the epilogue and stores each output (consecutive
    threads, consecutive columns)."""
    r = source.renderer
    tm, tn = plan.tm, plan.tn
    side_m, half_m, half_n = tm // 8, tm // 2, tn // 2
    rows = 8
    while rows * side_m * tn > area:
        rows //= 2
    r.emit(f"for p in range({8 // rows}):")
    r.push()
    r.emit("cuda.syncthreads()")
    for p in range(8 // rows):
        r.emit(f"{'if' if p == 0 else 'elif'} p == {p}:")
        r.push()
        for local in range(rows):
            x = p * rows + local
            for chunk in range(2):
                values = ", ".join(acc[x][4 * chunk + i] for i in range(4))
                r.emit(f"sstore4(smem, ({local * side_m} + tm) * {tn} + tn * 4 + "
                       f"{chunk * half_n}, {values})")
        r.pop()
    r.emit("cuda.syncthreads()")
    r.emit(f"for e in range(t, {rows * side_m * tn}, {threads_of(plan)}):")
    r.push()
    r.emit(f"i = e // {tn}")
    r.emit(f"x = p * {rows} + i // {side_m}")
    r.emit(f"gi = row0 + (i % {side_m}) * 4 + x % 4 + (x // 4) * {half_m}")
    r.emit(f"gj = col0 + e - i * {tn}")
    r.emit("if gi < M and gj < N:")
    r.push()
    r.emit("v = smem[ix(e)]")
    store_outputs(source, node, batch, "gi", "gj", "v")
    r.pop()
    r.pop()
    r.pop()


def store_outputs(source, node, batch: tuple, row: str, column: str, value: str) -> None:
    """Store every output at result element (batch, row, column), the product there being
    `value`: the epilogue's ops rendered on it, each output through its stride arguments."""
    r = source.renderer
    r.special[node.id] = lambda index: value
    index = batch + (row, column)
    kept = [i for i, extent in zip(index, node.shape) if extent != 1]
    for param in source.outputs:
        if param.node.shape == node.shape and not r.ones:
            out = index         # (a class kernel: every axis keeps its index and stride)
        else:
            moving = iter(kept)
            out = tuple("0" if extent == 1 else next(moving) for extent in param.node.shape)
        result = r.value(param.node, out)
        terms = [f"{i} * {stride(param, d)}" for d, (i, extent)
                 in enumerate(zip(out, param.node.shape)) if _kept(source, extent) and i != "0"]
        r.emit(f"{param.name}[{' + '.join(terms) or '0'}] = {source.stored(param.node, result)}")


def threads_of(plan: Plan) -> int:
    return (plan.tm // 8) * (plan.tn // 8)

