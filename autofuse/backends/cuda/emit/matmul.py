"""The general tiled matmul kernel (any dtype and layout): shared-memory slabs, a register block
per thread, the epilogue applied in registers before the store."""
from __future__ import annotations


import numpy as np

from ....ir.graph import Node
from ..kernel import KernelSource
from . import (accumulators, gemm, gemm_plan, guarded, looped_epilogue, mma_gemm, mma_pipeline,
               mma_plan)
from . import matmul_tiles as cuda_matmul


class Matmul:
    """Methods of the kernel writer (writer.KernelWriter); see the module docstring."""

    # -- matmul --------------------------------------------------------------------------------------
    def matmul(self) -> KernelSource:
        """Tiles of TILE x TILE outputs per block, TILE_K-deep slabs of A and B through shared
        memory, each thread accumulating MICRO x MICRO outputs in registers (float32 and float64:
        a local array indexed only by constants, which LLVM keeps in registers, updated a K step
        by one intrinsic call; other dtypes: scalar variables). Operands are read through their index maps (a
        transposed weight is not copied); the epilogue runs on the registers before the store.
        float32 matmuls of contiguous operands take emit/matmul_tiles.py's faster kernel instead,
        and float32 and float64 products that emit/gemm_plan.py accepts the compact kernel
        general over sizes (emit/gemm.py)."""
        strides = {p.node.id: p.strides for p in self.params}
        # NOTE: the tensor-core kernels take their sizes and strides as arguments: a shape class
        # (dynamic) runs them too, their tiles chosen as for many rows
        tensor = mma_plan.choose(self.group, strides, self.tuning, self.device.shared_per_block,
                                 self.simulator, self.dynamic)
        if tensor is not None:
            source = (mma_pipeline if tensor.stages else mma_gemm).write(self, tensor)
            source.reason = tensor.reason
            return source
        plan = gemm_plan.choose(self.group, strides, self.tuning, self.dynamic)
        if plan is not None:
            source = gemm.write(self, plan)
            source.reason = plan.reason
            return source
        if cuda_matmul.refusal(self) is None:
            return cuda_matmul.write(self)
        r = self.renderer
        self.narrow = False      # 64-bit index math: measured faster here (BENCHMARKS.md)
        node = self.group.matmul
        a, b = node.inputs
        batch = node.shape[:-2]
        m, n = node.shape[-2:]
        k = a.shape[-1]
        tile, depth, micro = fitted_tile(self.tuning.tile, self.tuning.tile_k, self.tuning.micro,
                                         node.dtype.itemsize, self.device.shared_per_block,
                                         node.dtype.kind == "c")
        side = tile // micro                     # threads along each side of the tile
        threads = side * side
        batch_names = [f"b{d}" for d in range(len(batch))]
        nb = self.numba_type(node.dtype)
        zero = r.constant(node.dtype.type(0))
        r.emit(f"t = {self.ix('cuda.threadIdx.x')}")
        r.emit(f"tm = t // {side}")
        r.emit(f"tn = t % {side}")       # (not t - tm * side: LLVM proves % non-negative)
        r.emit(f"row0 = cuda.blockIdx.y * {tile}")
        r.emit(f"col0 = cuda.blockIdx.x * {tile}")
        if batch:
            self.delinearize("cuda.blockIdx.z", batch_names, list(batch))
        r.emit(f"sa = cuda.shared.array(({depth}, {tile}), {nb})")
        r.emit(f"sb = cuda.shared.array(({depth}, {tile}), {nb})")
        block = register_block(node.dtype, r.held(node.dtype), self.tuning)
        if block:
            # NOTE: the block in a local array, a K step one intrinsic call (intrinsics/
            # register_block.py): the same arithmetic for NVVM, a tenth of the statements for
            # numba's front end. Constant indices keep the array in registers.
            registers = accumulators.declare(r, micro, micro, nb, values=False)
            r.emit(accumulators.fill(micro, micro, zero))
        else:
            registers = [[f"c{x}_{y}" for y in range(micro)] for x in range(micro)]
            for row in registers:
                r.emit(" = ".join(row) + f" = {zero}")
        per_thread = depth * tile // threads
        kind = _Looped if self.tuning.staging_loop else _WrittenOut
        staging = kind(self, ((a, "sa", m, "row0"), (b, "sb", n, "col0")), per_thread, threads,
                       depth, tile, k, batch_names, nb, zero)
        staging.declare()
        # NOTE: the next slab's global reads are issued before this slab's arithmetic, so their
        # latency hides behind it (register double buffering).
        if self.tuning.prefetch and k > 0:
            staging.fetch("0")
        elif self.tuning.prefetch:                  # an empty inner dimension reads nothing (zeros result)
            staging.clear()
        r.emit(f"for k0 in range(0, {k}, {depth}):")
        r.push()
        if not self.tuning.prefetch:
            staging.fetch("k0")
        staging.store()
        r.emit("cuda.syncthreads()")
        if self.tuning.prefetch:
            r.emit(f"if k0 + {depth} < {k}:")
            r.push()
            staging.fetch(f"k0 + {depth}")
            r.pop()
        # NOTE: a thread's outputs are strided by `side` (rows tm + side*x, columns tn + side*y),
        # so a warp reads consecutive shared-memory words (no bank conflicts) and its stores of
        # one (x, y) are consecutive in memory. The slab loop is unrolled in the source: constant
        # shared-memory offsets, and no index arithmetic between the FMAs.
        for kk in range(depth):
            if block:
                r.emit(f"outer{micro}x{micro}(acc, sa, sb, {kk}, tm, tn, {side})")
                continue
            for x in range(micro):
                r.emit(f"a{x}_ = sa[{kk}, tm + {side * x}]")
            for y in range(micro):
                r.emit(f"b{y}_ = sb[{kk}, tn + {side * y}]")
            for x in range(micro):
                for y in range(micro):
                    r.emit(f"{registers[x][y]} += a{x}_ * b{y}_")
        r.emit("cuda.syncthreads()")
        r.pop()
        looped = block and looped_epilogue.applies(self, self.group)
        if looped:
            # (A's slab is free after the last one; it has room where depth >= side)
            looped_epilogue.write(
                self, registers, lambda x, y: ("tm", f"tn + {side * y}"), (side, tile), threads,
                f"row0 + x * {side} + i", batch_names,
                lambda text: self.register_value(text, node), "sa" if side <= depth else None)
        else:
            for x in range(micro):
                r.emit(f"gi{x} = row0 + tm + {side * x}")
            for y in range(micro):
                r.emit(f"gj{y} = col0 + tn + {side * y}")
            for x in range(micro):
                for y in range(micro):
                    r.emit(f"if gi{x} < {m} and gj{y} < {n}:")
                    r.push()
                    r.special[node.id] = lambda index, name=self.register_value(
                        registers[x][y], node): name
                    index = tuple(batch_names) + (f"gi{x}", f"gj{y}")
                    for param in self.outputs:
                        self.store(param, index)
                    r.pop()
        batch_size = int(np.prod(batch, dtype=np.int64))
        grid = (max(1, -(-n // tile)), max(1, -(-m // tile)), max(1, batch_size))
        return self.finish(f"tiled {tile}x{tile}x{depth}, {micro}x{micro} per thread"
                           + looped_epilogue.strategy(looped), threads, grid)

    def register_value(self, register: str, node: Node) -> str:
        """A matmul accumulator as a value of the result's dtype: numba accumulates bools and
        narrow ints in wider ints, so a bool product sum can be 2 (the fuzzer found `== True`
        false in an epilogue) and an int32 sum may not have wrapped yet; a float16 product sum,
        accumulated in float32 as NumPy's matmul does, is rounded once."""
        dtype = node.dtype
        if dtype.kind == "b":
            return f"({register} != 0)"
        if dtype.kind in "iu" and dtype.itemsize < 8 or self.renderer.held(dtype) != dtype:
            return self.renderer.convert(dtype, register, op_result=True)
        return register


def register_block(dtype, held, tuning) -> bool:
    """Whether the general kernel keeps a thread's accumulators in a local array updated by one
    intrinsic call a K step (Tuning.register_block): float32 and float64 products, whose
    accumulators, shared slabs and result are all of the result's dtype; other dtypes keep
    scalar registers (accumulators.applies)."""
    return tuning.register_block and accumulators.applies(dtype, held)


def fitted_tile(tile: int, depth: int, micro: int, itemsize: int, shared: int,
                complex_: bool = False) -> tuple:
    """The tile, slab depth and outputs a thread along each side, halved from the tuning's until the
    two slabs (depth x tile elements each) fit the block's shared memory: complex128's 16-byte
    elements take 64x64 tiles of 4x4 a thread (the same threads, a quarter of the registers).
    Complex values start halved (`complex_`): a complex multiply-add is four real ones, so 4x4
    complex outputs a thread do the real 8x8's arithmetic a loaded value, in half its
    accumulator registers (complex64 at 8x8 wrote 1,506 lines, 85 s to PTX; at 4x4 see
    test_complex's PTX test)."""
    if complex_ and micro > 1 and tile > micro:
        tile, micro = tile // 2, micro // 2
    while 2 * depth * tile * itemsize > shared and micro > 1 and tile > micro:
        tile, micro = tile // 2, micro // 2
    return tile, depth, micro


class _WrittenOut:
    """A thread's staging of the A and B slabs, each of its slots written out: registers
    sar0, sar1, ... (and sbr...), their shared-memory places and global rows named once."""

    def __init__(self, writer, operands, per_thread: int, threads: int, depth: int, tile: int,
                 k: int, batch_names: list, nb: str, zero: str):
        self.writer, self.r = writer, writer.renderer
        self.operands, self.per_thread, self.threads = operands, per_thread, threads
        self.depth, self.tile, self.k, self.batch_names = depth, tile, k, batch_names
        self.nb, self.zero = nb, zero
        self.slots = []                            # (register, shared array, operand, ...)

    def declare(self) -> None:
        for operand, shared, extent, origin in self.operands:
            for p in range(self.per_thread):
                q = f"t + {p * self.threads}" if p else "t"
                mm, kk, gm = f"{shared}m{p}", f"{shared}k{p}", f"{shared}g{p}"
                self.places(shared, q, mm, kk, gm, origin)
                self.slots.append((f"{shared}r{p}", shared, operand, extent, mm, kk, gm))

    def places(self, shared: str, q: str, mm: str, kk: str, gm: str, origin: str) -> None:
        """A slot's place in the slab (`mm`, `kk`) from its thread-and-slot number `q`, and its
        global row (column) `gm`."""
        r = self.r
        if shared == "sa":          # consecutive threads walk k, then rows of A
            r.emit(f"{mm} = ({q}) // {self.depth}")
            r.emit(f"{kk} = ({q}) % {self.depth}")
        else:                       # consecutive threads walk columns of B
            r.emit(f"{kk} = ({q}) // {self.tile}")
            r.emit(f"{mm} = ({q}) % {self.tile}")
        r.emit(f"{gm} = {origin} + {mm}")

    def fetch(self, k_origin: str) -> None:
        """Read the slab at k_origin into each thread's staging registers."""
        for register, shared, operand, extent, mm, kk, gm in self.slots:
            self.read(register, shared, operand, extent, gm, f"{k_origin} + {kk}")

    def read(self, register: str, shared: str, operand, extent: int, gm: str, gk: str) -> None:
        """`register` = the operand at global row (column) `gm` and depth `gk`, zero past the
        ends."""
        r = self.r
        r.emit(f"gk = {gk}")
        index = tuple(self.batch_names) + ((gm, "gk") if shared == "sa" else ("gk", gm))
        guard = [c for c, need in ((f"gk < {self.k}", self.k % self.depth),
                                   (f"{gm} < {extent}", extent % self.tile)) if need]
        guarded.read(r, register, self.zero, guard, lambda: r.value(operand, index))

    def clear(self) -> None:
        for register, *_ in self.slots:
            self.r.emit(f"{register} = {self.zero}")

    def store(self) -> None:
        for register, shared, _, _, mm, kk, _ in self.slots:
            self.r.emit(f"{shared}[{kk}, {mm}] = {register}")


class _Looped(_WrittenOut):
    """The same staging as loops over a thread's slots: the registers a local array a slab
    (`sar`, `sbr`), a slot's shared-memory place and global row (column) local arrays of
    integers filled once (`sam`, `sak`, `sag`, ...); LLVM unrolls the constant trip counts and
    keeps every array in registers."""

    def declare(self) -> None:
        r = self.r
        for _, shared, _, origin in self.operands:
            r.emit(f"{shared}r = cuda.local.array({self.per_thread}, {self.nb})")
            for part in "mkg":
                r.emit(f"{shared}{part} = cuda.local.array({self.per_thread}, numba.int64)")
            r.emit(f"for p in range({self.per_thread}):")
            r.push()
            self.places(shared, f"t + p * {self.threads}", f"{shared}m[p]", f"{shared}k[p]",
                        f"{shared}g[p]", origin)
            r.pop()

    def fetch(self, k_origin: str) -> None:
        r = self.r
        for operand, shared, extent, _ in self.operands:
            r.emit(f"for p in range({self.per_thread}):")
            r.push()
            r.emit(f"gm = {shared}g[p]")
            self.read(f"{shared}r[p]", shared, operand, extent, "gm", f"{k_origin} + {shared}k[p]")
            r.pop()

    def clear(self) -> None:
        for _, shared, _, _ in self.operands:
            self.r.emit(f"for p in range({self.per_thread}):    {shared}r[p] = {self.zero}")

    def store(self) -> None:
        for _, shared, _, _ in self.operands:
            self.r.emit(f"for p in range({self.per_thread}):    "
                        f"{shared}[{shared}k[p], {shared}m[p]] = {shared}r[p]")
