"""The float32 matmul kernel for contiguous operands: 16-byte loads, double-buffered shared
slabs, a warp-shaped thread layout, in about 128 registers a thread (ptxas for sm_90: 127 for
relu(x@w+b) at 8192x4096x4096 and attention's matmuls, two 256-thread blocks an SM; launch
bounds for two blocks gain nothing there and spill in the rectangular tiles' kernel).

Where it applies (float32 operands that are kernel parameters read directly, C-contiguous, with
the inner dimension K and the columns N multiples of 4), a block computes a 128 x 128 tile of the
result (256 x 64 where the result has at most 64 columns, 64 x 256 where it has at most 64
rows: Tiles), each thread an 8 x 8 block of it as two 4-wide chunks per side:
- A and B arrive 8-deep slabs at a time, 16 bytes a thread per chunk (ld.global.nc.v4), into
  registers while the previous slab's FMAs run; A goes to shared memory transposed ([k][m]), B as is;
- two shared slabs alternate, so one barrier per slab orders both the reads and the writes;
- a thread reads its 8 values of A and of B for one k as four 16-byte shared loads (ld.shared.v4);
  the 32 threads of a warp are 4 x 8 of the thread grid, so each of those loads is one contiguous
  run of shared memory;
- the epilogue runs on the accumulators and stores 16 bytes at a time.
Base addresses are checked in the kernel: an operand or result not 16-byte aligned (a view with an
offset) is read or written element by element, same arithmetic.

Measured on an H200 (relu(x @ w + b) at 8192 x 4096 x 4096, BENCHMARKS.md): 47.0 TFLOP/s, 0.98x
cuBLAS plus the epilogue; the general kernel (emit/matmul.py): 24.7.
"""
from __future__ import annotations

import numpy as np

from ....arrays import contiguous
from ...index_text import broadcast_index
from ..kernel import storage_dtype
from . import accumulators


class Tiles:
    """A block's tile of the result, tm x tn, and its thread grid: each thread 8 x 8 results as
    two 4-wide chunks per side, the second `half` of the tile further along."""

    def __init__(self, m: int, n: int, tuning):
        # a result with at most `narrow` columns (rows) takes wide x narrow tiles (narrow x wide),
        # so that a 64-wide result (attention's P @ V) computes no half-empty tiles
        narrow, wide = tuning.tiles_narrow, tuning.tiles_wide
        if narrow and n <= narrow < m:
            self.tm, self.tn = wide, narrow
        elif narrow and m <= narrow < n:
            self.tm, self.tn = narrow, wide
        else:
            self.tm = self.tn = tuning.tiles_side
        self.depth = tuning.tiles_depth             # K elements a shared slab
        self.side_m, self.side_n = self.tm // 8, self.tn // 8
        self.threads = self.side_m * self.side_n
        self.half_m, self.half_n = self.tm // 2, self.tn // 2


def refusal(source) -> str | None:
    """Why this kernel does not apply to the group's matmul, or None where it does."""
    node = source.group.matmul
    (a, _), (b, _) = operands = [_operand(source, x) for x in node.inputs]
    if any(x.dtype != np.float32 for x in (node, a, b)):
        return "not float32"
    params = [source.names.get(x.id) for x in (a, b)]
    if any(p is None or p.by_value or p.strides is not None for p in params):
        return "an operand is not a C-contiguous kernel parameter (or its transpose) read directly"
    k = node.inputs[0].shape[-1]
    if k == 0:
        return "K is 0"
    for which, (operand, _) in zip("ab", operands):
        if operand.shape[-1] % 4:
            return f"the contiguous axis of operand {which} is not a multiple of 4"
    return None


def write(source):
    """The kernel, as `source` (a KernelWriter) renders kernels."""
    r = source.renderer
    source.narrow = False           # (the general matmul measured slower with 32-bit indices)
    node = source.group.matmul
    (a, a_transposed), (b, b_transposed) = (_operand(source, x) for x in node.inputs)
    pa, pb = source.names[a.id], source.names[b.id]
    batch = node.shape[:-2]
    m, n = node.shape[-2:]
    k = node.inputs[0].shape[-1]
    batch_names = tuple(f"b{d}" for d in range(len(batch)))
    # NOTE: in a shape class (dynamic) M may vary: tiles as for many rows, so that every size's
    # text is the stand-in's (the compact kernel's rule too, gemm_plan.choose)
    tiles = Tiles(max(m, source.tuning.tiles_narrow + 1) if source.dynamic else m, n,
                  source.tuning)
    # (an extent of 0 is guarded as one past a tile's edge: a shape class's text at size 0)
    guard_m, guard_n, guard_k = (size % step != 0 or size == 0 for size, step in
                                 ((m, tiles.tm), (n, tiles.tn), (k, tiles.depth)))
    for name in ("address", "vload4", "vstore4", "sload4", "sstore4"):
        r.globals[name] = ("vector", name)
    zero = r.constant(np.float32(0))
    nb = source.numba_type(node.dtype)
    align = "" if source.simulator else ", alignment=16"

    r.emit("t = cuda.threadIdx.x")
    r.emit("w = t // 32")
    r.emit("lane = t % 32")
    warps_n = tiles.side_n // 8
    r.emit(f"tm = (w // {warps_n}) * 4 + lane // 8")      # a warp: 4 rows x 8 columns of threads
    r.emit(f"tn = (w % {warps_n}) * 8 + lane % 8")
    r.emit(f"row0 = cuda.blockIdx.y * {tiles.tm}")
    r.emit(f"col0 = cuda.blockIdx.x * {tiles.tn}")
    if batch:
        source.delinearize("cuda.blockIdx.z", list(batch_names), list(batch))
    r.emit(f"sa = cuda.shared.array(({2 * tiles.depth}, {tiles.tm}), {nb}{align})")
    r.emit(f"sb = cuda.shared.array(({2 * tiles.depth}, {tiles.tn}), {nb}{align})")
    # NOTE: the accumulators a local array indexed by constants, a K step one intrinsic call
    # (intrinsics/register_block.py): the same PTX, a third of numba's front-end time
    acc = accumulators.declare(r, 8, 8, nb)
    r.emit(accumulators.fill(8, 8, zero))
    r.emit(f"aligned = (address({pa.name}) | address({pb.name})) % 16 == 0")
    # Staging: per slab a thread moves 4 elements of each operand that are consecutive in memory:
    # along K where K is the operand's contiguous axis (A, or B read transposed: 4 shared
    # stores, transposing), else along the tile (B, or A read transposed: one 16-byte store).
    stagings = [_Staging("a", "sa", pa, a, "row0", m, k, tiles.tm, tiles.threads,
                         along_k=not a_transposed, depth=tiles.depth),
                _Staging("b", "sb", pb, b, "col0", n, k, tiles.tn, tiles.threads,
                         along_k=b_transposed, depth=tiles.depth)]
    for staging in stagings:
        staging.declare(r, _batch_offset(source, staging.node, node, batch_names))

    def fetch(k_origin: str) -> None:
        for staging in stagings:
            staging.fetch(r, k_origin, zero, guard_m if staging.name == "a" else guard_n, guard_k)

    def stage(row: str) -> None:
        for staging in stagings:
            staging.stage(r, row)

    def compute() -> None:
        r.emit(f"abase = cur * {tiles.tm} + tm * 4")
        r.emit(f"bbase = cur * {tiles.tn} + tn * 4")
        for kk in range(tiles.depth):
            for side, base, width, half in (("a", "abase", tiles.tm, tiles.half_m),
                                            ("b", "bbase", tiles.tn, tiles.half_n)):
                for chunk in range(2):
                    names = ", ".join(f"{side}{4 * chunk + i}_" for i in range(4))
                    r.emit(f"{names} = sload4(s{side}, {base} + {kk * width + chunk * half})")
            r.emit(accumulators.step(8, 8))

    # NOTE: slab s lives in shared rows (s % 2) * depth: the next slab is written to the other
    # half after this slab's FMAs, and the one barrier per slab orders both (reads of a half
    # happen before its rewrite two slabs later; writes before the next slab's reads).
    fetch("0")
    stage("")
    r.emit("cuda.syncthreads()")
    r.emit("cur = 0")
    r.emit(f"for k0 in range(0, {k}, {tiles.depth}):")
    r.push()
    r.emit(f"nxt = {tiles.depth} - cur")
    r.emit(f"more = k0 + {tiles.depth} < {k}")
    r.emit("if more:")
    r.push()
    fetch(f"k0 + {tiles.depth}")
    r.pop()
    compute()
    r.emit("if more:")
    r.push()
    stage("nxt + ")
    r.pop()
    r.emit("cuda.syncthreads()")
    r.emit("cur = nxt")
    r.pop()
    # NOTE: the epilogue stays written out for each of a thread's 64 results: looped over staged
    # rows (emit/looped_epilogue.py, as the general kernel does) it was 3-4x shorter and its
    # first call 1.6-2.2x shorter, but ran 4-40% slower warm on an H200 (mlp_gelu 3.25 -> 3.51
    # ms, syrk 2.49 -> 2.75, pairwise_distances_gram 0.54 -> 0.76): the 64 results' epilogue
    # loads, written out, are all in flight at once
    _epilogue(source, node, acc, batch_names, guard_m, guard_n, tiles)
    batch_size = int(np.prod(batch, dtype=np.int64))
    grid = (max(1, -(-n // tiles.tn)), max(1, -(-m // tiles.tm)), max(1, batch_size))
    written = source.finish(f"tiled {tiles.tm}x{tiles.tn}x{tiles.depth}, 8x8 per thread, 16-byte "
                            "loads, double-buffered", tiles.threads, grid,
                            source.tuning.tiles_min_blocks)
    if source.dynamic:
        written.launch_rule = ("tiles", tiles.tm, tiles.tn)
    written.spill_bytes = source.tuning.tiles_spill_bytes
    written.bound_if_needed = True
    return written


def _operand(source, x):
    """(the array a matmul operand reads, whether it is read transposed): the operand itself, the
    parameter a batch broadcast expands, or the parameter whose last two axes it swaps."""
    if x.id in source.names or not x.inputs or x.inputs[0].id not in source.names:
        return x, False
    inner = x.inputs[0]
    if x.op == "broadcast_to" and inner.shape[-2:] == x.shape[-2:]:
        return inner, False
    swap = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    if x.op == "transpose" and x.ndim >= 2 and tuple(x.attrs["perm"]) == swap:
        return inner, True
    return x, False


class _Staging:
    """How one operand's slab (depth x `width` elements) goes from global to shared memory, in
    chunks of 4 consecutive elements, chunk c = t + j * threads for j = 0, 1, ...: `along_k`
    (the operand's contiguous axis is K: a chunk is 4 k of one tile row, stored transposed as 4
    scalars) or along the tile (4 tile columns of one k, one 16-byte shared store)."""

    def __init__(self, name, shared, param, node, origin, extent, k, width, threads, along_k,
                 depth):
        self.depth = depth
        self.name, self.shared, self.param, self.node = name, shared, param, node
        self.origin, self.extent, self.k, self.along_k = origin, extent, k, along_k
        self.width = width
        chunks = self.depth * width // 4
        self.rounds = -(-chunks // threads)
        # (a slab of fewer chunks than threads: only the first `chunks` threads move one)
        self.partial = f"t < {chunks}" if chunks < threads else None
        self.threads = threads

    def _names(self, j: int):
        suffix = f"{j}" if self.rounds > 1 else ""
        return f"{self.name}q{suffix}", f"{self.name}k{suffix}", f"{self.name}off{suffix}"

    def declare(self, r, batch: str) -> None:
        for j in range(self.rounds):
            q, kq, offset = self._names(j)
            chunk = f"(t + {j * self.threads})" if j else "t"
            if self.along_k:
                r.emit(f"{q} = {chunk} // {self.depth // 4}")
                r.emit(f"{kq} = ({chunk} % {self.depth // 4}) * 4")
                r.emit(f"{offset} = {batch}({self.origin} + {q}) * {self.k} + {kq}")
            else:
                r.emit(f"{kq} = {chunk} // {self.width // 4}")
                r.emit(f"{q} = ({chunk} % {self.width // 4}) * 4")
                r.emit(f"{offset} = {batch}{kq} * {self.extent} + {self.origin} + {q}")

    def fetch(self, r, k_origin: str, zero, guard_tile: bool, guard_k: bool) -> None:
        for j in range(self.rounds):
            q, kq, base = self._names(j)
            conds = ([self.partial] if self.partial else []) + \
                    ([f"{self.origin} + {q} < {self.extent}"] if guard_tile else []) + \
                    ([f"{k_origin} + {kq} < {self.k}"] if guard_k else [])
            offset = f"{base} + {k_origin}" if self.along_k else \
                f"{base} + ({k_origin}) * {self.extent}"
            _load4(r, self._registers(j), self.param.name, offset, conds, zero)

    def _registers(self, j: int) -> list:
        return [f"{self.name}r{j}_{i}" if self.rounds > 1 else f"{self.name}r{i}"
                for i in range(4)]

    def stage(self, r, row: str) -> None:
        for j in range(self.rounds):
            q, kq, _ = self._names(j)
            registers = self._registers(j)
            if self.partial:
                r.emit(f"if {self.partial}:")
                r.push()
            if self.along_k:
                for i, register in enumerate(registers):
                    r.emit(f"{self.shared}[{row}{kq} + {i}, {q}] = {register}")
            else:
                r.emit(f"sstore4({self.shared}, ({row}{kq}) * {self.width} + {q}, "
                       f"{', '.join(registers)})")
            if self.partial:
                r.pop()


def _batch_offset(source, operand, node, batch_names) -> str:
    """`offset + ` of the operand's batch index (broadcast over missing or size-1 batch axes)."""
    if not batch_names:
        return ""
    index = broadcast_index(operand.shape, node.shape, batch_names + ("0", "0"))
    offset = source.offset(operand.shape[:-2], contiguous(operand.shape)[:-2], index[:-2])
    return "" if offset == "0" else f"{offset} + "


def _load4(r, names, pointer, offset, conds, zero) -> None:
    """names = pointer[offset:offset + 4]: one 16-byte load where `aligned`, else four."""
    if conds:
        r.emit(f"{' = '.join(names)} = {zero}")
        r.emit(f"if {' and '.join(conds)}:")
        r.push()
    r.emit("if aligned:")
    r.push()
    r.emit(f"{', '.join(names)} = vload4({pointer}, {offset})")
    r.pop()
    r.emit("else:")
    r.push()
    for i, name in enumerate(names):
        r.emit(f"{name} = {pointer}[{offset} + {i}]")
    r.pop()
    if conds:
        r.pop()


def _epilogue(source, node, acc, batch_names, guard_m, guard_n, tiles) -> None:
    """Each output from the accumulators: 16-byte stores where every output is the matmul's
    shape in 4-byte elements and the output addresses are aligned, else element by element."""
    r = source.renderer
    m, n = node.shape[-2:]
    for x in range(8):
        r.emit(f"gi{x} = row0 + tm * 4 + {(x // 4) * tiles.half_m + x % 4}")
    for y in range(8):
        r.emit(f"gj{y} = col0 + tn * 4 + {(y // 4) * tiles.half_n + y % 4}")
    vector = n % 4 == 0 and all(p.node.shape == node.shape and p.node.dtype.kind != "b" and
                                storage_dtype(p.node.dtype).itemsize == 4 for p in source.outputs)
    if vector:
        r.emit("out_aligned = (" + " | ".join(f"address({p.name})" for p in source.outputs)
               + ") % 16 == 0")
    for x in range(8):
        for chunk in range(2):
            ys = range(4 * chunk, 4 * chunk + 4)
            if not vector:
                for y in ys:
                    _store_one(source, node, acc, x, y, batch_names, guard_m, guard_n)
                continue
            conds = ([f"gi{x} < {m}"] if guard_m else []) + \
                    ([f"gj{4 * chunk} < {n}"] if guard_n else [])
            if conds:
                r.emit(f"if {' and '.join(conds)}:")
                r.push()
            else:
                r.scopes.append({})
            values = {p.name: [] for p in source.outputs}
            for y in ys:
                index = batch_names + (f"gi{x}", f"gj{y}")
                r.special[node.id] = lambda _, name=acc[x][y]: name
                for param in source.outputs:
                    values[param.name].append(r.value(param.node, index))
            flat = source.offset(node.shape, contiguous(node.shape),
                                 batch_names + (f"gi{x}", f"gj{4 * chunk}"))
            r.emit("if out_aligned:")
            r.push()
            for param in source.outputs:
                r.emit(f"vstore4({param.name}, {flat}, {', '.join(values[param.name])})")
            r.pop()
            r.emit("else:")
            r.push()
            for param in source.outputs:
                for i, value in enumerate(values[param.name]):
                    r.emit(f"{param.name}[{flat} + {i}] = {value}")
            r.pop()
            if conds:
                r.pop()
            else:
                r.scopes.pop()


def _store_one(source, node, acc, x, y, batch_names, guard_m, guard_n) -> None:
    r = source.renderer
    m, n = node.shape[-2:]
    conds = ([f"gi{x} < {m}"] if guard_m else []) + ([f"gj{y} < {n}"] if guard_n else [])
    if conds:
        r.emit(f"if {' and '.join(conds)}:")
        r.push()
    else:
        r.scopes.append({})
    r.special[node.id] = lambda _, name=acc[x][y]: name
    for param in source.outputs:
        source.store(param, batch_names + (f"gi{x}", f"gj{y}"))
    if conds:
        r.pop()
    else:
        r.scopes.pop()
