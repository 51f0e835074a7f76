"""Generated source for one fusion group as one numba.cuda kernel over raw pointers.

Kernels take one pointer per array (and Python-scalar arguments by value), with shapes and
strides baked in per signature:
- elementwise/loop: a grid-stride loop over the output's elements;
- input, "rows": one block per row; row-shaped inputs read once into registers, each reduction a
  pass over them with a block reduction (warp shuffles, or a shared-memory tree in the simulator);
- input, "columns": one thread per output element, reduced axes looped (coalesced when the kept
  axes are the fast ones);
- input, "split": a full reduction over all blocks; the last block to finish combines the partials;
- input, "two-stage" (cuda_two_stage.py): few outputs over a long extent, the extent cut into
  chunks across blocks, each output tile's last block combining its chunks' partials;
- output: a shared-memory tiled matmul, each thread holding a register block, epilogue applied in
  registers before the single store.
"""
from __future__ import annotations

import itertools
import keyword
import math
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..fusion.group import Group, keepdims_shape, outer_shape
from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE
from ..ir.printer import is_inline_constant
from . import cuda_divide, cuda_half, cuda_matmul, cuda_strip, cuda_two_stage, helpers
from .render import Accumulators, Renderer, short

THREADS = 256                  # threads per block for pointwise, columns, split and matmul kernels
SPLIT_BLOCKS = 1056            # blocks of a split reduction (8 per SM of an H100/H200)
SPLIT_ELEMENTS = 1 << 16       # full reductions over at least this many elements are split
ROW_ITEMS = 16                 # elements of a row each thread aims to hold in registers, or
ROW_BYTES = 64                 # more where they take fewer bytes than this (float16: 32, four
#                                16-byte vectors; H200, 16384x4096 rows beside torch.compile in one
#                                process (tune.py): softmax f16 0.1268 -> 0.1197 ms, layernorm f16
#                                0.1065 -> 0.1011, with float16="float32" 0.0918 -> 0.0822 and
#                                0.0868 -> 0.0766; float32 rows at 32 items: softmax alike,
#                                layernorm 0.1339 -> 0.1403)
MAX_ROW_ITEMS = 32             # the most a thread holds; longer rows are re-read from memory
ROW_GRID = 65535               # rows kernels: blocks, one a row; more rows loop
ROW_THREADS_PER_SM = 1280      # rows kernels ask ptxas to fit this many threads an SM (cuda.py)
INVARIANT_DIVIDE = 1           # vector steps: float32 a / b with b the same over the loop (a row's
#                                sum, a scalar): b's reciprocal once, then a multiply and Markstein's
#                                correction a quotient, exact as IEEE division (cuda_divide; H200,
#                                x torch.compile: softmax 0.804 -> 0.774, layernorm 1.011 -> 1.010;
#                                layernorm run for seconds at the 700 W limit, SM clock beside
#                                torch.compile's: 1695 vs 1770 MHz before, 1905 vs 1920 with it)
NATIVE_HALVES = 1              # float16 kernels: casts as LLVM's (folded where they meet) and
#                                float16 add, subtract and multiply as one f16 instruction each,
#                                the answers NumPy's (cuda_half); 0: numba's casts, float32 ops
ROW_HOLD_HALVES = 1            # ... and rows kernels hold float16 rows as halves (H200, softmax
#                                f16 with native ops: 72 registers, 7 blocks an SM, 0.114 ms; held
#                                as float32 96 and 5, 0.129 ms)
TRANSPOSE_TILES = 1            # 2-D transposed reads through shared-memory tiles (0: gathered
#                                element by element in the grid-stride loop: H200, (x.T+y)*2
#                                2.73x torch.compile's time, the gathers' sectors through L2)
TILE_T = 64                    # transposes: TILE_T x TILE_T tiles through shared memory
#                                (H200, (x.T+y)*2 8192², vector tiles: 32 0.1917 ms, 64 0.1893,
#                                torch.compile 0.1904; element tiles: 32 and 64 alike)
TILE_THREADS = 512             # ... by blocks of this many threads (H200, (x.T+y)*2 x torch.compile:
#                                256 1.006 and 1.003, 512 1.001 and 1.000 in two runs; 128 1.006)
TILE_ACROSS = 0                # vector tiles: threads across a tile row (0: one vector each; 8:
#                                two vectors each, 32 lanes on 32 banks: 1.008, with 512 1.003)
TILE, TILE_K = 128, 16          # matmul: a TILE x TILE block of outputs, TILE_K-deep slabs
MICRO = 8                      # each matmul thread computes MICRO x MICRO outputs
PREFETCH = 1                   # matmul: read the next slab into registers during this one
KEEP_REDUCED = 0               # rows: keep a reduced value read again later in registers
#                                (measured on an H200: softmax 1.94x of the floor with, 1.76x without)
KEEP_REDUCED_HALVES = 1        # ... where it is a float16 value held as a half (ROW_HOLD_HALVES):
#                                H200, softmax f16 16384x4096 beside torch.compile, 0.742 -> 0.601
#                                (exp once an element; with ROW_WIDE_DIVIDE 0.643 -> 0.545)
ROW_WIDE_DIVIDE = 1            # rows holding more than ROW_ITEMS (float16: 32) take reciprocal
#                                division and hoisted row values too (0: IEEE division, row values
#                                a step). H200, beside torch.compile, float16 held as halves:
#                                layernorm f16 1.003 -> 0.894, softmax f16 0.742 -> 0.643
ILP_LOADS = 4                  # grid-stride kernels: loads a thread aims to have in flight; it
MAX_ILP = 4                    # takes up to MAX_ILP elements a step, a grid-stride apart, to get
#                                them (4 and 8 consecutive elements a thread, tried earlier,
#                                measured slower on an H200)
GRID_PER_SM = 0                # grid-stride kernels launch at most this many blocks per SM
#                                (0: no cap, a block per THREADS x step elements; measured on
#                                an H200 with 16-byte vectors: bias+GELU 1.14x -> 1.03x of the
#                                floor, relu chain 1.01x -> 0.97x, stencil 1.39x -> 1.34x)
MAX_GRID = (1 << 31) - 1       # blocks along a grid's x axis
INDEX_LIMIT = 1 << 31          # arrays and loops under this many elements use 32-bit index math
VECTOR = 1                     # grid-stride kernels: vector loads and stores where they apply
MAX_LANES = 8                  # ... of at most this many elements (8: 16 bytes of float16)
VECTOR_BYTES = 16              # ... of at most this many bytes, and of 8 where the kernel's
VECTOR_STEP_BYTES = 32         # full-size array inputs (broadcasts not counted) at 16 bytes each
#                                would pass this many (0: no limit).
#                                H200, k-input chains beside torch.compile on the GPU's clock
#                                (experiments/vector_width_probe.py), 16 / 8 bytes: 1 input 0.991
#                                / 1.090, 2 0.996 / 1.006, 3 1.002 / 0.999, 4 1.005 / 0.9995, 6
#                                1.002 / 1.000 (Inductor's autotuner chose 8 for the relu chain)
VECTOR_ILP = 1                 # ... and this many vectors a thread a grid-stride step (H200,
#                                on the GPU's clock beside torch.compile: relu chain 1.005x at 1,
#                                1.013x at 2, with 128 threads a block too; bias+GELU 0.996x, 0.998x)
VECTOR_SPREAD = "grid"         # ... placed a grid-stride apart ("grid") or a block apart inside
#                                the block's own consecutive vectors ("block", Inductor's layout)
REDUCE_SPREAD = "block"        # split reductions' vector steps likewise, or "chunk": each block
#                                walks a contiguous range of its own (Inductor's split kernels).
#                                H200, sum(x*x) beside torch.compile, GPU clock, two processes:
#                                grid 1.007 / 0.989, block 1.005 / -, chunk 1.011 / -, block with
#                                REDUCE_LOADS evict_first - / 0.983 (chunk with 2048 blocks of 512
#                                threads, Inductor's shape, 1.002)
SETSLICE_FAST = 1              # ... and a branch-free path for vectors inside every assigned region
NARROW_MATMUL = 0              # ... in matmul kernels too (relu(x@w+b) measured 11.2 ms without,
#                                12.6 ms with, on an H200)
REDUCE_VECTORS = 4             # split reductions: 16-byte vectors a thread loads per step
#                                (sum(x*x), 2^28 float32, H200: 1 0.248 ms, 2 0.243, 4 0.242)
REDUCE_TAIL_HALVES = 0         # ... then half as many down to 2 before single vectors take the rest
#                                (sum(x*x), H200, GPU clock: 0.2412 ms without, 0.2410 with; torch.
#                                compile 0.2356. SPLIT_BLOCKS 1024 0.2425, 2112 0.2408; 8 vectors
#                                a step as 4)
REDUCE_LOADS = ".L1::evict_first"  # split reductions' vector reads of data read once: PTX cache
#                                qualifiers as STREAM_LOADS ("": as STREAM_LOADS). H200, sum(x*x)
#                                beside torch.compile: 1.009x -> 1.005x and (with REDUCE_SPREAD
#                                block) 0.989x -> 0.983x; Inductor's split reductions read with
#                                evict_first too. As STREAM_LOADS it made the relu chain and
#                                (x.T+y)*2 6% slower.
STREAM_LOADS = ""              # reads of data a kernel reads once, and writes: PTX cache
STREAM_STORES = ""             # qualifiers (cuda_vector.hinted_load/store; "" for plain
#                                accesses). Off: on an H200, loads .nc.L1::no_allocate with stores
#                                .cs ran 0.2-0.5% faster than plain in cache_hints_probe.py's
#                                process (sessions 7 and 8: relu chain 0.3040 -> 0.3035 ms,
#                                (x.T+y)*2 0.1909 -> 0.1902, sum(x*x) 0.2370 -> 0.2359) but 3-6%
#                                slower in benchmarks/gpu.py's (session 8, the same kernels: relu
#                                chain 0.3194 hinted against 0.3040 plain, whichever system ran
#                                first), so the gain depends on something outside the kernel.
#                                Session 12, timed by CUDA events and a fixed difference of batches
#                                (gpu.time_rounds), loads .nc.L1::no_allocate alone: relu chain
#                                0.3052 -> 0.3203 ms, (x.T+y)*2 0.1896 -> 0.1990, sum 0.2409 -> 0.2401.
ROW_RELOAD = 1                 # rows (vector path): the row outputs read held inputs again
ROW_HOLD_LOAD = ".L1::evict_last.L2::cache_hint|evict_last"    # (first read: keep it cached)
ROW_RELOAD_LOAD = ".L1::evict_first.L2::cache_hint|evict_first"  # (second: the last use)
#                                instead of keeping them in registers to the end, with PTX cache
#                                qualifiers on both reads (Inductor's layernorm does the same).
ROW_STORES = ".L1::evict_normal"  # rows (vector path): outputs stored by inline PTX with PTX's
#                                default eviction priority, i.e. plain stores that the compiler
#                                keeps in order, so that gamma/beta reads stay after the stores
#                                before them instead of being hoisted to the row's start.
ROW_HINT_BYTES = 4             # ... ROW_RELOAD and ROW_STORES apply to rows of elements at least
#                                this wide: float16 softmax ran 0.125 -> 0.139 ms with them (H200,
#                                full run at ec9997a), so float16 rows keep their earlier kernels
ROW_HOIST = 1                  # rows (vector path): values of one per row rendered before the
#                                vector loop over the row (hoist_row_values)
OVERLAP = 1                    # kernels begin with cuda_vector.launch_dependents() and
#                                wait_for_prerequisite(), so they may launch to overlap the end
#                                of the kernel before them (cuda_host; H200, pdl_probe.py, x
#                                torch.compile by the GPU's clock, a CUDA graph -> overlapping
#                                launches: layernorm 1.008 -> 0.992, (x.T+y)*2 1.001 -> 0.992,
#                                relu chain 1.000 -> 0.995); split reductions excepted: one wave
#                                of blocks, and overlapping made sum(x*x) 0.3-0.5% slower whether
#                                they signalled at their start or after their loop
ROW_READ_VECTOR_BYTES = 4      # rows: row outputs' other inputs (gamma, beta) read as vectors
#                                where the row's elements are at most this many bytes.
#                                Measured on an H200 (BENCHMARKS.md, sessions 5-9), float32
#                                layernorm 16384x4096 beside torch.compile in one process: element
#                                reads of gamma/beta 0.1342 ms (48 registers, 5 blocks an SM);
#                                vectors with plain stores 0.183 (82 registers: every vector read
#                                hoisted); vectors with ordered stores 0.1333 (64, 4 blocks); those
#                                with the reload 0.1309 (48, 5 blocks), torch.compile 0.1315.
#                                softmax 0.1329 -> 0.1295 with the reload. Reload hints on the L1
#                                alone: layernorm 0.1372; held through the row: 0.1342.


@dataclass
class Param:
    """One kernel parameter: the node it carries and how (pointer to an array, or a value)."""
    node: Node
    name: str
    by_value: bool = False
    strides: tuple | None = None     # element strides of a non-contiguous graph input


@dataclass
class Frame:
    """How a vector loop's steps are placed (Generator.vector_frame): the loop's bound `end`, the
    distance `spacing` between a step's vectors, and `advance(w)`, e's next value after a step of
    w vectors, as text."""
    end: str
    spacing: str
    advance: Callable[[int], str]

    def at(self, u: int, lanes: int) -> str:
        """The flat element index of a step's vector u (of `lanes` elements)."""
        return f"(e + {u} * {self.spacing}) * {lanes}" if u else f"e * {lanes}"

    def last(self, width: int) -> str:
        """The vector index of a step's last vector, which the loop's condition bounds."""
        return f"e + {width - 1} * {self.spacing}" if width > 1 else "e"


@dataclass
class CudaKernelSource:
    name: str
    text: str
    globals: dict
    params: list[Param]
    outputs: list[Param]
    strategy: str
    block: int
    grid: tuple                      # blocks (x, y, z); the runner may cap x by the device's size
    scratch: list = field(default_factory=list)   # (name, count, dtype) extra buffers (split)
    helpers: list = field(default_factory=list)
    signature: list = field(default_factory=list)  # numba types, in parameter order
    min_blocks: int = 0              # launch bounds: blocks an SM the registers must allow (0: any)
    overlaps: bool = False           # waits for the stream's kernel before it (OVERLAP): may be
    #                                  launched with programmatic stream serialization


def identifiers(text: str) -> set:
    """The names an index expression uses."""
    return {name for name in re.findall(r"[A-Za-z_]\w*", text) if not keyword.iskeyword(name)}


def contiguous(shape) -> tuple:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def in_bounds(index: tuple, shape: tuple, ranges: dict) -> bool:
    """Whether every coordinate of `index` (expressions over the names of `ranges`, each taking
    0 .. its extent - 1) stays inside `shape`, checked at every corner of the ranges (index maps
    are affine in them, or stay in bounds by construction); False where an expression uses
    another name."""
    names = sorted(ranges)
    if any(not identifiers(c) <= set(names) for c in index):
        return False
    for corner in itertools.product(*[(0, max(0, ranges[n] - 1)) for n in names]):
        values = dict(zip(names, corner))
        for coordinate, size in zip(index, shape):
            value = eval(coordinate, {"__builtins__": {}}, values)    # generated arithmetic
            if not 0 <= value < size:
                return False
    return True


def storage_dtype(dtype) -> np.dtype:
    """numba-cuda cannot store through a bool pointer: bool arrays travel as uint8."""
    dtype = np.dtype(dtype)
    return np.dtype(np.uint8) if dtype.kind == "b" else dtype


class CudaSource:
    def __init__(self, group: Group, name: str, input_strides: dict, simulator: bool = False):
        self.group = group
        self.name = name
        self.simulator = simulator
        self.split_reduction = False       # (split kernels do not overlap: OVERLAP)
        self.renderer = Renderer(group, self.load, "cuda")
        self.acc = Accumulators(self.renderer)
        self.params: list[Param] = []
        self.names: dict[int, Param] = {}
        for k, node in enumerate(group.inputs):
            by_value = node.ndim == 0 and node.op == "input"
            param = Param(node, f"a{k}", by_value, input_strides.get(node.id))
            self.params.append(param)
            self.names[node.id] = param
        self.outputs = [Param(n, f"o{k}") for k, n in enumerate(group.outputs.values())]
        self.cached: dict[int, str] = {}    # node id -> register array holding this thread's row items
        self.kept: dict[int, str] = {}      # node id -> register array keeping a computed row value
        self.held_halves: set[int] = set()  # ... of those, the ones held as float16 (holding())
        self.flat_index = None              # the flat element index, for loads at `identity`
        self.identity = None                # the index that `flat_index` stands for
        self.identity_shape = None          # ... over this shape (a C-contiguous array of it)
        self.row_index = None               # rows: the full index of this thread's row item
        self.row_lanes = 0                  # rows: a thread's items are vectors of this many
        self.tiles: dict = {}               # (node id, index) -> its shared-memory element
        self.stream_size = 0                # element loads and stores may be cache-hinted in a
        #                                     loop over this many elements (vector_function)
        self.once_loads = STREAM_LOADS      # qualifiers of vector loads of data read once
        self.scratch = []
        self.preloaded: dict = {}           # (node id, index) -> a value loaded ahead (a vector
        #                                     lane, or a read issued before a barrier)
        self.narrow = self.fits_32_bits()
        self.renderer.index = self.ix
        if NATIVE_HALVES:
            self.renderer.halves = cuda_half.Spelling(self.renderer)
        if INVARIANT_DIVIDE:
            self.renderer.invariant_divide = lambda a, b, value: cuda_divide.render(
                self.renderer, a, b, value, simulator)

    # -- index width ---------------------------------------------------------------------------------
    def fits_32_bits(self) -> bool:
        """Whether every index, offset and loop counter of this kernel fits in 32 bits: every
        array it touches spans under INDEX_LIMIT elements (so does the loop over them, whose
        grid-stride step stays far under 2^31 more)."""
        spans = [int(np.prod(self.group.root.shape, dtype=np.int64))]
        if self.group.kind == "input":
            spans.append(int(np.prod(self.group.reduce_space[0], dtype=np.int64)))
        for param in self.params + self.outputs:
            shape = param.node.shape
            strides = param.strides or contiguous(shape)
            if 0 in shape:
                continue
            spans.append(1 + sum((size - 1) * abs(stride) for size, stride in zip(shape, strides)))
        return max(spans) < INDEX_LIMIT

    def ix(self, expression: str, signed: bool = False) -> str:
        """`expression` as a 32-bit index where the kernel's sizes allow, else unchanged.

        numba widens integer arithmetic to 64 bits; truncating each index variable (and each
        offset) back to 32 bits lets LLVM narrow the arithmetic feeding it, so a flat index's
        division by a constant row length becomes a mask or a 32-bit multiply instead of ~12
        64-bit instructions (bias+GELU: 296 -> 65 PTX instructions). Coordinates are never
        negative (unsigned); an offset with a negative stride is signed."""
        if not self.narrow or expression.isdigit():
            return expression
        name = "sx" if signed else "ix"
        self.renderer.globals[name] = ("index", "int32" if signed else "uint32")
        return f"{name}({expression})"

    # -- memory ------------------------------------------------------------------------------------
    def offset(self, shape, strides, index) -> str:
        terms = []
        for i, size, stride in zip(index, shape, strides):
            if size == 1 or i == "0" or stride == 0:
                continue
            terms.append(i if stride == 1 else f"{i} * {stride}")
        if not terms:
            return "0"
        if len(terms) == 1 and terms[0].isidentifier():
            return terms[0]
        return self.ix(" + ".join(terms), signed=any(s < 0 for s in strides))

    def load(self, node: Node, index: tuple) -> str:
        param = self.names[node.id]
        if param.by_value:
            return self.register(node, param.name)
        if node.id in self.cached and index == self.row_index:
            return self.held_item(node.id, "j")
        if (node.id, index) in self.tiles:
            return self.tiles[(node.id, index)]
        if (node.id, index) in self.preloaded:
            return self.preloaded[(node.id, index)]
        if self.flat_index and param.strides is None and index == self.identity \
                and node.shape == self.identity_shape:
            flat = self.flat_index
        else:
            flat = self.offset(node.shape, param.strides or contiguous(node.shape), index)
        if self.stream_size:
            load = self.vector_function("load", node, 1, self.stream_size)
            if load != "vload1":
                return self.register(node, f"{load}({param.name}, {flat})")
        return self.register(node, f"{param.name}[{flat}]")

    def register(self, node: Node, value: str) -> str:
        """A value of `node` read from memory as the kernel holds it: a bool from its byte, a
        float16 widened to float32 (render.Renderer.held)."""
        if node.dtype.kind == "b":
            return f"({value} != 0)"
        if self.renderer.held(node.dtype) != node.dtype:
            if self.renderer.halves is not None:
                return self.renderer.halves.widen(value)
            return f"{self.renderer.ctor(self.renderer.held(node.dtype))}({value})"
        return value

    def stored(self, node: Node, value: str) -> str:
        """A held value of `node` as its storage type (bools as bytes, float32 as float16)."""
        if node.dtype.kind == "b":
            return f"{self.renderer.ctor(np.uint8)}({value})"
        if self.renderer.held(node.dtype) != node.dtype:
            if self.renderer.halves is not None:
                return self.renderer.halves.narrow(value)
            return f"{self.renderer.ctor(node.dtype)}({value})"
        return value

    def store(self, param: Param, index: tuple, flat: str | None = None) -> None:
        r = self.renderer
        node = param.node
        value = r.value(node, index)
        if flat is None:
            flat = self.offset(node.shape, contiguous(node.shape), index)
        store = self.vector_function("store", node, 1, node.size) if self.stream_size else ""
        if store.endswith("_once"):
            r.emit(f"{store}({param.name}, {flat}, {self.stored(node, value)})")
        else:
            r.emit(f"{param.name}[{flat}] = {self.stored(node, value)}")

    def delinearize(self, flat: str, names: list[str], sizes: list[int]) -> None:
        """Emit `names[d] = ...` for the multi-index of `flat` over `sizes` (row-major)."""
        r = self.renderer
        rest = flat
        for d, name in enumerate(names):
            inner = int(np.prod(sizes[d + 1:], dtype=np.int64))
            if d == len(sizes) - 1 or inner == 1:
                # NOTE: the axes after this one all have size 1: their indices are 0 (the fuzzer
                # found `rest` reused for them, which read the wrong elements of (n, 1) views).
                r.emit(f"{name} = {rest}")
                rest = "0"
            else:
                r.emit(f"{name} = {self.ix(f'{rest} // {inner}')}")
                r.emit(f"{name}_rest = {self.ix(f'{rest} - {name} * {inner}')}")
                rest = f"{name}_rest"

    # -- kinds -------------------------------------------------------------------------------------
    def generate(self) -> CudaKernelSource:
        kind = self.group.kind
        if kind == "output":
            return self.matmul()
        if kind == "input":
            return self.reduction()
        return self.pointwise()

    def pointwise(self) -> CudaKernelSource:
        """A grid-stride loop over the elements (a 2-D rows x columns grid, which avoids the
        per-element index division, measured slower on an H200: 2.50x vs 1.54x of the floor)."""
        r = self.renderer
        shape = self.group.root.shape
        size = int(np.prod(shape, dtype=np.int64))
        index = tuple(f"i{d}" for d in range(len(shape)))
        self.identity, self.identity_shape = index, shape
        transposed = self.transposed_inputs(shape)
        if transposed and TRANSPOSE_TILES:
            return self.transpose_tiles(shape, index, transposed)
        threads = 32 if self.simulator else THREADS
        ilp = self.ilp(size, threads)

        def compute(flat, element):
            for param in self.outputs:
                self.renderer.value(param.node, element)

        def store(flat, element):
            for param in self.outputs:
                self.store(param, element, flat if param.node.shape == shape else None)

        strip = cuda_strip.plan(self, shape, size, threads)
        if not isinstance(strip, str):
            return cuda_strip.generate(self, strip, compute, store)

        arrays = sum(1 for p in self.params if not p.by_value and p.node.size == size)
        width = VECTOR_BYTES if not VECTOR_STEP_BYTES or arrays * VECTOR_BYTES <= VECTOR_STEP_BYTES \
            else min(VECTOR_BYTES, 8)
        lanes = self.vector_lanes(shape, size, threads, width)
        vectors = self.vector_reads(shape, lanes) if lanes else {}
        steps = [vectors]
        if lanes and VECTOR_ILP > 1 and size >= VECTOR_ILP * lanes * threads and not any(
                m.op == "setslice" for m in self.group.members.values()):
            # each vector of a step has index names of its own (i0_1, ...): its reads, found again
            steps = [self.vector_reads(shape, lanes, base=tuple(f"i{d}_{u}" for d in range(
                len(shape)))) for u in range(VECTOR_ILP)]
            if any(step.keys() != vectors.keys() for step in steps):
                steps = [vectors]
        vector_ilp = len(steps)
        if lanes:
            aligned = " | ".join(f"address({p.name})" for p in
                                 [self.names[n] for n in vectors] + self.outputs)
            r.emit(f"if ({aligned}) % 16 == 0:")
            r.push()
            self.vector_loop(shape, size, lanes, vectors, threads, steps)
            r.pop()
            r.emit("else:    # a base address not 16-byte aligned: element by element")
            r.push()
        self.strided_loop(size, shape, ilp, compute, store)
        if lanes:
            r.pop()
        width = lanes * vector_ilp or ilp
        blocks = max(1, min(-(-size // (threads * width)), MAX_GRID))
        strategy = "grid-stride" + (f", {lanes}-wide vectors" if lanes else "") + (
            f" x{vector_ilp}" if vector_ilp > 1 else "")
        if ilp > 1:
            strategy += f" (misaligned: {ilp} per step)" if lanes else f", {ilp} per step"
        return self.finish(strategy, threads, (blocks, 1, 1))

    # -- vector access ---------------------------------------------------------------------------
    @staticmethod
    def lanes_for(params, width: int = 16) -> int:
        """Elements of a vector: `width` bytes of the widest of `params`, at most MAX_LANES."""
        return min(MAX_LANES, width // max(storage_dtype(p.node.dtype).itemsize for p in params))

    def vector_lanes(self, shape, size: int, threads: int, width: int = VECTOR_BYTES) -> int:
        """Elements a thread takes as one vector (lanes_for the outputs and array inputs), or
        0 where vectors do not apply: every output must be the loop's shape (stored at the flat
        index) and the last axis a multiple of the lanes (so a vector never crosses a row)."""
        if not VECTOR or not shape or any(p.node.shape != shape for p in self.outputs):
            return 0
        lanes = self.lanes_for(self.outputs + [p for p in self.params if p.node.shape], width)
        if lanes < 2 or shape[-1] % lanes or size < lanes * threads:
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
        frame = self.vector_frame(size // lanes, max(1, ilp), threads, VECTOR_SPREAD)
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
        if not (SETSLICE_FAST and self.interior_first(lane_index, lanes)):
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
        afresh with plain division where any of `conditions` fails (cuda_divide: quotients
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
        elements: `vload4` and the like, or a hinted access named after `label` (cuda_vector.
        hinted_load / hinted_store, as inline PTX) with PTX cache qualifiers: `qualifier` where
        given (a rows kernel's own: `vload4_kept`), else STREAM_LOADS (STREAM_STORES) where the
        kernel reads (writes) each element of `node` once (it has as many elements as the
        loop: nothing broadcast), which keeps the caches for what is read again
        (`vload4_once`); split reductions' loads take REDUCE_LOADS instead where it is set.
        Accesses under 4 bytes are never hinted."""
        if qualifier is None:
            qualifier = self.once_loads if kind == "load" else STREAM_STORES
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
        known = {name for index in lane_index for name in index} | {"ev", "e"}
        unique = list(dict.fromkeys(conditions))
        if not unique or any(not identifiers(c) <= known for c in unique):
            return False
        r.emit(f"if {' and '.join(f'({c})' for c in unique)}:    # every lane inside: no branches")
        r.lines += body
        r.emit("else:")
        r.push()
        self.vector_lanes_store(lane_index, lanes)
        r.pop()
        return True

    def ilp(self, size: int, threads: int, loads_wanted: int = 0, most: int = 0) -> int:
        """Elements a thread takes per grid-stride step: enough that about ILP_LOADS (or
        `loads_wanted`) loads are in flight per thread, at most MAX_ILP (or `most`) (measured on
        an H200: bias+GELU, 2 loads an element, 1.50x of the floor at 1 element a step and 1.24x
        at 2-8; relu(x*y+z)*w, 4 loads, and the 5-point stencil are fastest at 1)."""
        loads = sum(1 for member in self.group.members.values() for source in
                    {s.id: s for s in member.inputs}.values()
                    if source.id in self.names and not self.names[source.id].by_value)
        ilp = max(1, min(most or MAX_ILP, (loads_wanted or ILP_LOADS) // max(1, loads)))
        return ilp if size >= ilp * threads else 1

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

    def transposed_inputs(self, shape) -> list:
        """Group inputs read only through a 2-D transpose to the output's shape: such reads are
        strided, so they go through shared-memory tiles instead."""
        if len(shape) != 2 or min(shape) < 32:
            return []
        found = []
        for param in self.params:
            node = param.node
            readers = [m for m in self.group.members.values() if any(s.id == node.id for s in m.inputs)]
            if param.by_value or param.strides is not None or node.shape != shape[::-1] or not readers:
                continue
            if all(m.op == "transpose" and m.shape == shape for m in readers):
                found.append(param)
        return found

    def transpose_tiles(self, shape, index, transposed) -> CudaKernelSource:
        """TILE_T x TILE_T output tiles; each transposed input staged through shared memory with
        coalesced reads along its rows, then read across (a padding column avoids bank
        conflicts). Where every tile is full and the arrays allow (transpose_lanes), a thread
        reads and writes its row segment of a tile as one vector (16 bytes of float32), with an
        element-by-element loop for base addresses not 16-byte aligned."""
        r = self.renderer
        rows, cols = shape
        side = TILE_T
        tiles_r, tiles_c = -(-rows // side), -(-cols // side)
        self.stream_size = rows * cols      # element accesses may be cache-hinted (load, store)
        r.emit(f"t = {self.ix('cuda.threadIdx.x')}")
        for param in transposed:
            r.emit(f"tile_{param.name} = cuda.shared.array(({side}, {side + 1}), "
                   f"{self.numba_type(param.node.dtype)})")
        lanes, vectors = self.transpose_lanes(shape, transposed)
        if lanes:
            for name in ("address", f"vload{lanes}", f"vstore{lanes}"):
                r.globals[name] = ("vector", name)
            aligned = " | ".join(f"address({p.name})" for p in
                                 transposed + [self.names[n] for n in vectors] + self.outputs)
            r.emit(f"if ({aligned}) % 16 == 0:")
            r.push()
            self.tile_loop(shape, transposed, lanes, vectors)
            r.pop()
            r.emit("else:    # a base address not 16-byte aligned: element by element")
            r.push()
        self.tile_loop(shape, transposed, 1, {})
        if lanes:
            r.pop()
        self.stream_size = 0
        strategy = "transpose tiles" + (f", {lanes}-wide vectors" if lanes else "")
        return self.finish(strategy, TILE_THREADS, (min(tiles_r * tiles_c, MAX_GRID), 1, 1))

    def transpose_lanes(self, shape, transposed) -> tuple[int, dict]:
        """(lanes, vector reads of the other inputs) for vector tiles, or (0, {}): every tile
        full, every output of the tile's shape, the transposed inputs contiguous (so a tile row
        is consecutive), and at least one vector a thread a tile (at most 16 bytes)."""
        rows, cols = shape
        if not VECTOR or rows % TILE_T or cols % TILE_T or \
                any(p.node.shape != shape for p in self.outputs):
            return 0, {}
        lanes = min(self.lanes_for(self.outputs + transposed), TILE_T * TILE_T // TILE_THREADS)
        if lanes < 2 or TILE_THREADS % (TILE_T // lanes) or TILE_T % (TILE_THREADS // (TILE_T // lanes)):
            return 0, {}
        return lanes, self.vector_reads(shape, lanes)

    def tile_loop(self, shape, transposed, lanes: int, vectors: dict) -> None:
        """The loop over tiles, a thread taking `lanes` consecutive columns of a tile row at a
        time (1: elements; then `vectors` is empty)."""
        r = self.renderer
        rows, cols = shape
        side = TILE_T
        across = side // lanes               # threads across a tile row, a vector each, or
        if lanes > 1 and TILE_ACROSS and side // lanes % TILE_ACROSS == 0:
            across = TILE_ACROSS             # fewer, each taking vectors TILE_ACROSS apart
        step = TILE_THREADS // across        # tile rows a pass covers
        # a thread's (tile row, tile column) offsets: rows a pass apart, columns a row of
        # threads apart
        spots = [(step * k, across * lanes * c) for k in range(side // step)
                 for c in range(side // (across * lanes))]
        tiles_r, tiles_c = -(-rows // side), -(-cols // side)
        exact = rows % side == 0 and cols % side == 0     # every tile full: no bounds guards
        r.emit(f"tx = {self.ix(f't % {across}')}")
        r.emit(f"ty = {self.ix(f't // {across}')}")
        r.emit(f"blk = {self.ix('cuda.blockIdx.x')}")
        r.emit(f"while blk < {tiles_r * tiles_c}:")
        r.push()
        r.emit(f"br = {self.ix(f'blk // {tiles_c}')}")
        r.emit(f"bc = {self.ix(f'blk - br * {tiles_c}')}")

        def column(offset: int) -> str:
            base = "tx" if lanes == 1 else f"tx * {lanes}"
            return f"{base} + {offset}" if offset else base

        for row, col in spots:
            r.emit(f"sr = {self.ix(f'bc * {side} + ty + {row}')}")
            r.emit(f"sc = {self.ix(f'br * {side} + {column(col)}')}")
            if not exact:
                r.emit(f"if sr < {cols} and sc < {rows}:")
                r.push()
            for param in transposed:
                if lanes == 1:
                    r.emit(f"tile_{param.name}[ty + {row}, tx] = "
                           f"{self.load(param.node, ('sr', 'sc'))}")
                    continue
                names = [f"{param.name}t{lane}" for lane in range(lanes)]
                load = self.vector_function("load", param.node, lanes, rows * cols)
                r.emit(f"{', '.join(names)} = {load}({param.name}, {self.ix(f'sr * {rows} + sc')})")
                for lane, name in enumerate(names):
                    r.emit(f"tile_{param.name}[ty + {row}, {column(col)} + {lane}] = {name}")
            if not exact:
                r.pop()
        # NOTE: every other global read of the tile's outputs is issued before the barrier, so
        # its latency overlaps the tile loads' (measured on an H200, (x.T+y)*2: 1.00x of the
        # floor with, one tile per block; 1.38x with y read after the barrier, 16 blocks per SM
        # looping over tiles).
        indices, lane_indices, first_column = [], [], {}
        for k, (row, col) in enumerate(spots):
            i0, i1 = f"i0_{k}", f"i1_{k}"
            r.emit(f"{i0} = {self.ix(f'br * {side} + ty + {row}')}")
            if col in first_column:
                r.emit(f"{i1} = {first_column[col]}")
            else:
                r.emit(f"{i1} = {self.ix(f'bc * {side} + {column(col)}')}")
                first_column[col] = i1
            indices.append((i0, i1))
            if lanes > 1:
                lane_index = self.lane_names((i0, i1), lanes)
                lane_indices.append(lane_index)
                r.emit(f"ev_{k} = {self.ix(f'{i0} * {cols} + {i1}')}")
                at = self.vector_reads(shape, lanes, base=(i0, i1))      # `vectors`, at (i0, i1)
                self.preloaded.update(self.vector_loads(
                    f"ev_{k}", shape, lanes, {n: at[n] for n in vectors}, lane_index, f"_{k}"))
        everywhere = [index for lane_index in lane_indices for index in lane_index] or indices
        self.preload(everywhere, {p.node.id for p in transposed},
                     None if exact else lambda i0, i1: f"{i0} < {rows} and {i1} < {cols}",
                     (rows, cols))
        r.emit("cuda.syncthreads()")
        for k, ((i0, i1), (row, col)) in enumerate(zip(indices, spots)):
            if exact:
                r.scopes.append({})
            else:
                r.emit(f"if {i0} < {rows} and {i1} < {cols}:")
                r.push()
            self.identity, self.identity_shape = (i0, i1), shape
            self.flat_index = self.ix(f"{i0} * {cols} + {i1}")
            if lanes == 1:
                self.tiles = {(p.node.id, (i1, i0)): f"tile_{p.name}[tx, ty + {row}]"
                              for p in transposed}
                for param in self.outputs:
                    self.store(param, (i0, i1))
            else:
                self.tiles = {(p.node.id, (index[1], i0)):
                              f"tile_{p.name}[{column(col)} + {lane}, ty + {row}]"
                              for p in transposed for lane, index in enumerate(lane_indices[k])}
                r.emit(f"ev = ev_{k}")
                self.vector_lanes_store(lane_indices[k], lanes)
            if exact:
                r.scopes.pop()
            else:
                r.pop()
        self.tiles = {}
        self.preloaded = {}
        self.identity = self.flat_index = None
        r.emit("cuda.syncthreads()")
        r.emit(f"blk = {self.ix('blk + cuda.gridDim.x')}")
        r.pop()

    def preload(self, indices: list, skip: set, guard, ranges: tuple) -> None:
        """Issue now the global reads the outputs will make at each index of `indices` (found by
        a throwaway render), except of inputs in `skip`, so they are in flight across a barrier;
        `guard(*index)`, where given, is the condition under which an index is in bounds, and
        `ranges` the extent of each of its coordinates there."""
        r = self.renderer
        conditional: set = set()
        for index, reads in zip(indices, self.probe_reads(indices, conditional=conditional)):
            known = set(index)
            for node_id, requested in reads.items():
                param = self.names[node_id]
                if node_id in skip or param.by_value:
                    continue
                for wanted in requested:
                    if not identifiers(" ".join(wanted)) <= known or \
                            (node_id, wanted) in self.preloaded:
                        continue      # an index the probe derived itself: read it later
                    if (node_id, wanted) in conditional and \
                            not in_bounds(wanted, param.node.shape, dict(zip(index, ranges))):
                        continue      # read only inside a slice assignment's region
                    name = r.name("pre")
                    value = self.load(param.node, wanted)
                    if guard is None:
                        r.emit(f"{name} = {value}")
                    else:
                        zero = r.constant(param.node.dtype.type(0))
                        r.emit(f"{name} = {value} if {guard(*index)} else {zero}")
                    self.preloaded[(node_id, wanted)] = name

    # -- reductions ----------------------------------------------------------------------------------
    def reduction(self) -> CudaKernelSource:
        shape, axes = self.group.reduce_space
        outer_axes = [d for d in range(len(shape)) if d not in axes]
        outer = int(np.prod([shape[d] for d in outer_axes], dtype=np.int64))
        inner = int(np.prod([shape[a] for a in axes], dtype=np.int64))
        trailing = tuple(axes) == tuple(range(len(shape) - len(axes), len(shape)))
        dependent = any(self.group.depends_on_reduction(n.inputs[0]) for n in self.group.reductions)
        row_outputs = [p for p in self.outputs
                       if p.node.shape == shape and shape != outer_shape(shape, axes)]
        threshold = 256 if self.simulator else SPLIT_ELEMENTS
        # NOTE: outputs the size of the reduced space (y of `y, y.sum()`) are written as the
        # split loop goes, unless they need a reduction's result (x / x.sum()): that needs all
        # the grid's partials first, so such a group stays one block (the fusion pass keeps rows
        # that long apart).
        independent = not dependent and \
            not any(self.group.depends_on_reduction(p.node) for p in row_outputs)
        if outer == 1 and inner >= threshold and independent:
            return self.split(shape, axes, inner, row_outputs)
        plan = cuda_two_stage.plan(shape, axes, outer, inner, THREADS, SPLIT_BLOCKS,
                                   self.simulator) if independent else None
        if plan:
            return cuda_two_stage.generate(self, shape, axes, outer, inner, plan, row_outputs)
        if trailing and (inner >= 32 or outer < 32 * 132):
            return self.rows(shape, axes, outer_axes, outer, inner)
        return self.columns(shape, axes, outer_axes, outer)

    def _outer_index(self, outer_axes, shape, flat: str) -> None:
        names = [f"i{d}" for d in outer_axes]
        self.delinearize(flat, names, [shape[d] for d in outer_axes])

    def store_reduced(self, shape, axes, guard: str | None) -> list[Param]:
        """Store outputs of the reduced (outer) shape; returns the row-shaped ones left."""
        r = self.renderer
        outer_index = tuple(f"i{d}" for d in range(len(shape)) if d not in axes)
        keep_index = tuple("0" if d in axes else f"i{d}" for d in range(len(shape)))
        reduced, rows = [], []
        for param in self.outputs:
            node = param.node
            if node.shape == outer_shape(shape, axes):
                reduced.append((param, outer_index))
            elif node.shape == keepdims_shape(shape, axes):
                reduced.append((param, keep_index))
            else:
                rows.append(param)
        if reduced and guard:
            r.emit(f"if {guard}:")
            r.push()
        for param, index in reduced:
            self.store(param, index)
        if reduced and guard:
            r.pop()
        return rows

    def columns(self, shape, axes, outer_axes, outer) -> CudaKernelSource:
        """One thread per output element; the reduced axes looped in order."""
        r = self.renderer
        full = tuple(f"i{d}" if d not in axes else f"r{d}" for d in range(len(shape)))
        r.emit(f"o = {self.ix('cuda.grid(1)')}")
        r.emit(f"while o < {outer}:")
        r.push()
        self._outer_index(outer_axes, shape, "o")
        for node in self.group.reductions:
            acc, idx, result = r.name("acc"), r.name("k"), r.name("red")
            self.acc.init(node, acc, idx, node.dtype)
            for a in axes:
                r.emit(f"for r{a} in range({shape[a]}):")
                r.push()
            value = r.value(node.inputs[0], full)
            self.acc.combine(node, acc, idx, value, node.dtype, f"r{axes[0]}" if axes else "0")
            for _ in axes:
                r.pop()
            final = idx if node.op in ("argmax", "argmin") else acc
            r.emit(f"{result} = {r.convert(node.dtype, final, op_result=True)}")
            r.special[node.id] = lambda index, result=result: result
        rows = self.store_reduced(shape, axes, None)
        for param in rows:
            for a in axes:
                r.emit(f"for r{a} in range({shape[a]}):")
                r.push()
            self.store(param, full)
            for _ in axes:
                r.pop()
        r.emit(f"o = {self.ix('o + cuda.gridsize(1)')}")
        r.pop()
        blocks = max(1, min(-(-outer // THREADS), 65535))
        return self.finish("columns", THREADS, (blocks, 1, 1))

    def block_size(self, shape, inner: int) -> int:
        """Threads a row: enough that each holds about ROW_ITEMS elements of it (more of narrow
        ones: ROW_BYTES), from a warp up to 512."""
        # NOTE: at most 512 threads: a row kept in registers (and a kept intermediate) needs up to
        # ~100 registers a thread, and 1024 such threads exceed an SM's 64K registers.
        items = min(MAX_ROW_ITEMS, max(ROW_ITEMS, ROW_BYTES // (self.row_itemsize(shape) or 4)))
        block = 32
        while block < 512 and block * items < inner:
            block *= 2
        return block

    def rows(self, shape, axes, outer_axes, outer, inner) -> CudaKernelSource:
        """One block per row: the row's inputs read once into registers, a block reduction per
        reduction, then the row-shaped outputs written once. Where the row allows, a thread's
        items are 16-byte vectors (row_vectors): read, and written, a vector at a time."""
        r = self.renderer
        block = self.block_size(shape, inner)
        items = -(-inner // block)
        hold = 0 < items <= MAX_ROW_ITEMS           # (an empty row holds nothing)
        full = tuple(f"i{d}" if d not in axes else f"r{d}" for d in range(len(shape)))
        # NOTE: a thread holding more than ROW_ITEMS (float16 rows: 32) is near its launch
        # bounds' register budget; held as float32, float16 layernorm with the reciprocal
        # division spilled there (6 blocks an SM instead of 8 on the H200). Held as halves
        # (ROW_HOLD_HALVES) it fits 8 blocks of 128 in 64 registers without spilling.
        if items > ROW_ITEMS and not ROW_WIDE_DIVIDE:
            r.invariant_divide = None
        r.emit(f"t = {self.ix('cuda.threadIdx.x')}")
        r.emit(f"row = {self.ix('cuda.blockIdx.x')}")
        for node in self.group.reductions:
            self.declare_shared(node)
        plan = self.row_vectors(shape, axes, inner, block, full) if hold else None
        if plan:
            lanes, vectors, aligned = plan
            for name in ("address", f"vload{lanes}", f"vstore{lanes}"):
                r.globals[name] = ("vector", name)
            names = " | ".join(f"address({p.name})" for p in aligned)
            r.emit(f"if ({names}) % 16 == 0:")
            r.push()
            self.row_body(shape, axes, outer_axes, outer, inner, block, items, full, lanes, vectors)
            r.pop()
            r.emit("else:    # a base address not 16-byte aligned: element by element")
            r.push()
        self.row_body(shape, axes, outer_axes, outer, inner, block, items, full, 0, {})
        if plan:
            r.pop()
        blocks = max(1, min(outer, ROW_GRID))
        strategy = "rows" + ("" if hold else " (re-read)") + \
            (f", {plan[0]}-wide vectors" if plan else "")
        # NOTE: a row held in registers makes register count decide how many blocks an SM runs,
        # and ptxas, told nothing, chose 56 registers for layernorm over 4096-long float32 rows
        # (4 blocks of 256 an SM). Asked for ROW_THREADS_PER_SM threads (launch bounds: 48
        # registers, 5 blocks, no spills) it ran 0.1365 -> 0.1332 ms on an H200; softmax was
        # already at 48. Where the bound makes ptxas spill, cuda.py links without it.
        min_blocks = min(32, max(1, ROW_THREADS_PER_SM // block)) if hold else 0
        return self.finish(strategy, block, (blocks, 1, 1), min_blocks)

    def row_vectors(self, shape, axes, inner, block, full):
        """(lanes, vector reads of the row outputs' other inputs, arrays whose base addresses must
        be 16-byte aligned) where a thread's row items can be vectors, else None: one trailing
        reduced axis, a multiple of block x lanes long; every held input and row output readable
        a vector at a time (a last stride of 1, other strides multiples of the lanes)."""
        if not VECTOR or len(axes) != 1 or axes[0] != len(shape) - 1:
            return None
        held = self.held_params(shape)
        outs = [p for p in self.outputs if p.node.shape == shape]
        reduced = (outer_shape(shape, axes), keepdims_shape(shape, axes))
        if any(p.node.shape != shape and p.node.shape not in reduced for p in self.outputs) or \
                not held and not outs:
            return None
        lanes = self.lanes_for(held + outs)
        if lanes < 2 or inner % (block * lanes):
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
            <= ROW_READ_VECTOR_BYTES else {}
        return lanes, vectors, held + [self.names[n] for n in vectors] + outs

    def row_body(self, shape, axes, outer_axes, outer, inner, block, items, full, lanes,
                 vectors) -> None:
        """The loop over this block's rows (`lanes` > 0: items in vectors of that many)."""
        r = self.renderer
        inner_names = [f"r{a}" for a in axes]
        hold = 0 < items <= MAX_ROW_ITEMS
        self.row_index, self.row_lanes = full, lanes
        r.fixed = {f"i{d}" for d in range(len(shape)) if d not in axes}   # the row's index
        r.emit(f"while row < {outer}:")
        r.push()
        self._outer_index(outer_axes, shape, "row")
        if hold:
            self.hold_row(full, shape, axes, inner_names, items, block, inner)
        for node in self.group.reductions:
            acc, idx, result = r.name("acc"), r.name("k"), r.name("red")
            self.acc.init(node, acc, idx, node.dtype)
            source = node.inputs[0]
            keep = hold and self._read_later(source, node) and (
                KEEP_REDUCED or KEEP_REDUCED_HALVES and self.holds_halves(source.dtype))
            if keep:
                r.emit(f"kept{source.id} = cuda.local.array({items}, "
                       f"{self.register_type(source.id, source.dtype)})")
            self.row_loop(items, block, inner, inner_names, shape, axes)
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
            final = idx if node.op in ("argmax", "argmin") else acc
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
        if outer > ROW_GRID and len(self.group.reductions) < 2:
            # NOTE: a block's next row writes the shared arrays again. With two or more block
            # reductions a row, the barrier of each comes after every thread's reads of the one
            # before, so the next row's writes wait already; a block that has only one row (the
            # grid is one block a row up to ROW_GRID rows) needs no barrier either.
            r.emit("cuda.syncthreads()")
        r.emit(f"row = {self.ix('row + cuda.gridDim.x')}")
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
        if ROW_HOIST and (items <= ROW_ITEMS or ROW_WIDE_DIVIDE):    # (see the NOTE in rows)
            self.hoist_row_values(shape, (axis,), full)
        r.emit(f"for jv in range({items // lanes}):")
        r.push()
        r.emit(f"r{axis} = {self.ix(f'(t + jv * {block}) * {lanes}')}")
        lane_index = self.lane_names(full, lanes)
        self.preloaded = self.vector_loads(flat, shape, lanes, vectors, lane_index, "")
        if ROW_RELOAD and self.row_hints(shape):
            # NOTE: read again (from L1 or L2, where the first read's evict_last left it)
            # instead of from the registers that held it: the same 48 registers for layernorm,
            # but 2-3% faster on an H200 (BENCHMARKS.md, session 9). Safe where an output is the
            # held input's own buffer: a thread reads each element again before it writes it,
            # and no other thread writes it.
            self.preloaded.update(self.vector_loads(
                flat, shape, lanes, {n: full for n in self.cached}, lane_index, "r",
                ROW_RELOAD_LOAD, "again"))
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
                                (ROW_STORES or None) if self.row_hints(shape) else None, "ordered")
        self.row_index = row_index
        r.special = specials
        self.preloaded = {}
        r.pop()

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

    def row_loop(self, items, block, inner, inner_names, shape, axes) -> None:
        r = self.renderer
        r.emit(f"for j in range({items}):")
        r.push()
        lanes = self.row_lanes     # items in vectors: item j is lane j % lanes of vector j // lanes
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
        # halves by cuda_half: the compiler folds the narrowing on the way in and the widening on
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
            lane_index = self.lane_indices(full, lanes)
            loaded = self.vector_loads(self.offset(shape, contiguous(shape), full), shape, lanes,
                                       {p.node.id: full for p in held}, lane_index, "",
                                       ROW_HOLD_LOAD if ROW_RELOAD and self.row_hints(shape)
                                       else None, "kept")
            for param in held:
                for lane, index in enumerate(lane_index):
                    r.emit(f"held_{param.name}[jv * {lanes} + {lane}] = "
                           f"{self.holding(param.node.id, loaded[(param.node.id, index)])}")
            r.pop()
        else:
            self.row_loop(items, block, inner, inner_names, shape, axes)
            for param in held:
                r.emit(f"held_{param.name}[j] = "
                       f"{self.holding(param.node.id, self.load(param.node, full))}")
            self.end_row_loop()
        for param in held:
            self.cached[param.node.id] = f"held_{param.name}"

    def holds_halves(self, dtype) -> bool:
        return self.renderer.halves is not None and ROW_HOLD_HALVES and \
            self.renderer.held(dtype) != dtype

    def register_type(self, node_id: int, dtype) -> str:
        """The numba type of a register array holding a row's values of node `node_id`: float16
        ones as halves (holds_halves; noted in held_halves), others as numba_type."""
        if not self.holds_halves(dtype):
            return self.numba_type(dtype)
        self.held_halves.add(node_id)
        self.renderer.globals["nb_f16"] = ("numba", "types.float16")
        return "nb_f16"

    def holding(self, node_id: int, value: str) -> str:
        """A held input's value as its register array keeps it (float16 held as halves)."""
        return self.renderer.halves.narrow(value) if node_id in self.held_halves else value

    def held_item(self, node_id: int, item: str) -> str:
        """Item `item` of a held input's (or kept value's) register array, as the kernel holds
        its values."""
        value = f"{self.cached.get(node_id) or self.kept[node_id]}[{item}]"
        return self.renderer.halves.widen(value) if node_id in self.held_halves else value

    def row_hints(self, shape) -> bool:
        """Whether a rows kernel's vector path reads its held row twice and orders its stores
        (ROW_RELOAD, ROW_STORES): rows of elements at least ROW_HINT_BYTES wide."""
        width = self.row_itemsize(shape)
        return width > 0 and width >= ROW_HINT_BYTES

    def row_itemsize(self, shape) -> int:
        """Bytes of the widest element of a rows kernel's row: its held inputs and row-shaped
        outputs (0 where there are none)."""
        row = self.held_params(shape) + [p for p in self.outputs if p.node.shape == shape]
        return max((storage_dtype(p.node.dtype).itemsize for p in row), default=0)

    def held_params(self, shape) -> list[Param]:
        """The inputs a rows kernel holds in registers: row-shaped, read at the row index."""
        return [p for p in self.params if not p.by_value and p.node.shape == shape
                and self._read_at_row(p.node)]

    def _read_later(self, source: Node, reduction: Node) -> bool:
        """Whether a member other than `reduction` reads `source` (a computed row value)."""
        if source.id not in self.group.members or source.kind != "elementwise":
            return False
        return any(m.id != reduction.id and any(s.id == source.id for s in m.inputs)
                   for m in self.group.members.values())

    def _read_at_row(self, node: Node) -> bool:
        """Whether every member reads `node` at the row index itself (not through an index map)."""
        return all(m.kind == "reduce" or m.kind == "elementwise" and m.shape == node.shape
                   for m in self.group.members.values() if any(s.id == node.id for s in m.inputs))

    def numba_type(self, dtype) -> str:
        """The numba type of registers, local and shared arrays holding values of `dtype`."""
        dtype = storage_dtype(dtype) if np.dtype(dtype).kind == "b" else \
            self.renderer.held(dtype)
        name = f"nb_{short(dtype)}"
        self.renderer.globals[name] = ("numba", dtype.name)
        return name

    def partial_dtype(self, node: Node) -> np.dtype:
        """The type of reduction `node`'s partial results in scratch memory: its accumulator's
        (an arg-reduction's: its input's), bools as bytes."""
        arg = node.op in ("argmax", "argmin")
        return storage_dtype(self.renderer.held(node.inputs[0].dtype if arg else node.dtype))

    def to_partial(self, node: Node, acc: str) -> str:
        """Accumulator `acc` of `node` as its partial's type (a bool as a byte)."""
        return f"{self.renderer.ctor(np.uint8)}({acc})" if self._bool_partial(node) else acc

    def from_partial(self, node: Node, value: str) -> str:
        """A partial of `node` read back as its accumulator's type."""
        return f"({value} != 0)" if self._bool_partial(node) else value

    def _bool_partial(self, node: Node) -> bool:
        arg = node.op in ("argmax", "argmin")
        return (node.inputs[0].dtype if arg else node.dtype).kind == "b"

    def declare_shared(self, node: Node) -> None:
        r = self.renderer
        dtype = node.inputs[0].dtype if node.op in ("argmax", "argmin") else node.dtype
        size = 1024 if self.simulator else 32
        r.emit(f"sh{node.id} = cuda.shared.array({size}, {self.numba_type(dtype)})")
        if node.op in ("argmax", "argmin"):
            r.emit(f"shi{node.id} = cuda.shared.array({size}, {self.numba_type(np.int64)})")

    def block_reduce(self, node: Node, acc: str, idx: str, block: int) -> None:
        """Combine every thread's `acc` into all threads' `acc` (and `idx` for arg-reductions).
        It ends without a barrier: a caller that writes the node's shared array again (a rows
        kernel's next row, a split kernel's last block) passes one of its own first."""
        r = self.renderer
        arg = node.op in ("argmax", "argmin")
        sh, shi = f"sh{node.id}", f"shi{node.id}"
        if self.simulator:
            r.emit(f"{sh}[t] = {acc}")
            if arg:
                r.emit(f"{shi}[t] = {idx}")
            r.emit("cuda.syncthreads()")
            step = block // 2
            while step >= 1:
                r.emit(f"if t < {step}:")
                r.push()
                other, other_idx = r.name("sw"), r.name("swi")
                r.emit(f"{other} = {sh}[t + {step}]")
                r.emit(f"{other_idx} = {shi}[t + {step}]" if arg else f"{other_idx} = 0")
                self.acc.merge(node, acc, idx, other, other_idx)
                r.emit(f"{sh}[t] = {acc}")
                if arg:
                    r.emit(f"{shi}[t] = {idx}")
                r.pop()
                r.emit("cuda.syncthreads()")
                step //= 2
            r.emit(f"{acc} = {sh}[0]")
            if arg:
                r.emit(f"{idx} = {shi}[0]")
            return
        self.warp_reduce(node, acc, idx)
        if block > 32:
            warps = block // 32
            r.emit("if t % 32 == 0:")
            r.push()
            r.emit(f"{sh}[t // 32] = {acc}")
            if arg:
                r.emit(f"{shi}[t // 32] = {idx}")
            r.pop()
            r.emit("cuda.syncthreads()")
            r.emit(f"if t % 32 < {warps}:")
            r.push()
            r.emit(f"{acc} = {sh}[t % 32]")
            if arg:
                r.emit(f"{idx} = {shi}[t % 32]")
            r.pop()
            r.emit("else:")
            r.push()
            self.acc.init(node, acc, idx, node.dtype)
            r.pop()
            self.warp_reduce(node, acc, idx)

    def warp_reduce(self, node: Node, acc: str, idx: str, lanes=(16, 8, 4, 2, 1)) -> None:
        """Combine `acc` (and `idx`) across the lanes of a warp `lanes` apart (xor shuffles)."""
        r = self.renderer
        arg = node.op in ("argmax", "argmin")
        dtype = self.renderer.held(node.inputs[0].dtype if arg else node.dtype)
        # NOTE: warp shuffles move 32- and 64-bit values only: bools and narrow ints travel as
        # int32 and come back to their own type.
        narrow = dtype.kind == "b" or dtype.itemsize < 4
        for lane in lanes:
            other, other_idx = r.name("sw"), r.name("swi")
            source = f"{r.ctor(np.int32)}({acc})" if narrow else acc
            shuffled = f"cuda.shfl_xor_sync(0xffffffff, {source}, {lane})"
            if narrow:
                shuffled = f"({shuffled} != 0)" if dtype.kind == "b" else f"{r.ctor(dtype)}({shuffled})"
            r.emit(f"{other} = {shuffled}")
            r.emit(f"{other_idx} = cuda.shfl_xor_sync(0xffffffff, {idx}, {lane})" if arg
                   else f"{other_idx} = 0")
            self.acc.merge(node, acc, idx, other, other_idx)

    def split(self, shape, axes, inner, row_outputs=()) -> CudaKernelSource:
        """A full reduction across SPLIT_BLOCKS blocks; the last block combines their partials.
        Outputs of the reduced space's shape (`row_outputs`, which need no reduction's result)
        are stored as the loop computes them (a vector at a time on the vector path)."""
        r = self.renderer
        nodes = self.group.reductions
        block = 32 if self.simulator else THREADS
        blocks = 3 if self.simulator else SPLIT_BLOCKS
        self.once_loads = REDUCE_LOADS or STREAM_LOADS
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
        lanes = self.reduce_lanes(shape, inner, block, row_outputs)
        vectors = self.vector_reads(shape, lanes, [n.inputs[0] for n in nodes] +
                                    [p.node for p in row_outputs]) if lanes else {}
        if vectors:
            aligned = " | ".join([f"address({self.names[n].name})" for n in vectors] +
                                 [f"address({p.name})" for p in row_outputs])
            r.emit(f"if ({aligned}) % 16 == 0:")
            r.push()
            self.vector_reduce_loop(shape, inner, lanes, vectors, compute, combine, block, blocks,
                                    row_outputs)
            r.pop()
            r.emit("else:    # a base address not 16-byte aligned: element by element")
            r.push()
        self.strided_loop(inner, shape, self.ilp(inner, block), compute, combine_and_store)
        if vectors:
            r.pop()
        for k, (node, (acc, idx)) in enumerate(zip(nodes, accs)):
            self.block_reduce(node, acc, idx, block)
            self.scratch.append((f"part{k}", blocks, self.partial_dtype(node)))
            self.scratch.append((f"parti{k}", blocks, np.dtype(np.int64)))
        self.scratch.append(("counter", 1, np.dtype(np.int32)))
        r.emit("if t == 0:")
        r.push()
        for k, (acc, idx) in enumerate(accs):
            r.emit(f"part{k}[cuda.blockIdx.x] = {self.to_partial(node, acc)}")
            r.emit(f"parti{k}[cuda.blockIdx.x] = {idx}")
        r.emit("cuda.threadfence()")
        r.emit(f"last[0] = cuda.atomic.add(counter, 0, 1) == {blocks - 1}")
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
            r.emit(f"if b < {blocks}:")
            r.push()
            self.acc.merge(node, acc, idx, self.from_partial(node, f"part{k}[b]"), f"parti{k}[b]")
            r.pop()
            r.pop()
            self.block_reduce(node, acc, idx, block)
            final = idx if node.op in ("argmax", "argmin") else acc
            result = r.name("red")
            r.emit(f"{result} = {r.convert(node.dtype, final, op_result=True)}")
            r.special[node.id] = lambda index, result=result: result
        self.store_reduced(shape, axes, "t == 0")
        r.emit("if t == 0:")
        r.push()
        r.emit("counter[0] = 0")
        r.pop()
        r.pop()
        strategy = "split" + (f", {lanes}-wide vectors x{REDUCE_VECTORS}" if vectors else "")
        return self.finish(strategy, block, (blocks, 1, 1))

    def reduce_lanes(self, shape, size: int, threads: int, stored=()) -> int:
        """Elements a reduction thread reads as one vector (lanes_for its array inputs and the
        outputs it stores a vector at a time), or 0: the last axis must be a multiple of the
        lanes."""
        read = [p for p in self.params if not p.by_value]
        if not VECTOR or not shape or not read:
            return 0
        lanes = self.lanes_for(read + list(stored))
        if lanes < 2 or shape[-1] % lanes or size < lanes * threads:
            return 0
        return lanes

    def vector_reduce_loop(self, shape, size: int, lanes: int, vectors: dict, compute,
                           combine, threads: int, blocks: int, stored=()) -> None:
        """The loop of a split reduction, REDUCE_VECTORS vectors a step placed as REDUCE_SPREAD
        says (vector_frame): every vector load of the step issued first, then each lane computed
        and combined in element order (so an argmax keeps the first of equal values), then the
        outputs of `stored` written a vector at a time; loops of half as many vectors
        (REDUCE_TAIL_HALVES) and of single vectors take the remainder, so a thread's last
        vectors are not read one round trip after another."""
        r = self.renderer
        for name in ("address", f"vload{lanes}") + ((f"vstore{lanes}",) if stored else ()):
            r.globals[name] = ("vector", name)
        widths = [REDUCE_VECTORS]
        while REDUCE_TAIL_HALVES and widths[-1] > 2:
            widths.append(widths[-1] // 2)
        frame = self.vector_frame(size // lanes, REDUCE_VECTORS, threads, REDUCE_SPREAD, blocks)
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

    # -- matmul --------------------------------------------------------------------------------------
    def matmul(self) -> CudaKernelSource:
        """Tiles of TILE x TILE outputs per block, TILE_K-deep slabs of A and B through shared
        memory, each thread accumulating MICRO x MICRO outputs in registers (written out as scalar
        variables, so no local array can spill). Operands are read through their index maps (a
        transposed weight is not copied); the epilogue runs on the registers before the store.
        float32 matmuls of contiguous operands take cuda_matmul.py's faster kernel instead."""
        if cuda_matmul.refusal(self) is None:
            return cuda_matmul.generate(self)
        r = self.renderer
        self.narrow = self.narrow and bool(NARROW_MATMUL)
        node = self.group.matmul
        a, b = node.inputs
        batch = node.shape[:-2]
        m, n = node.shape[-2:]
        k = a.shape[-1]
        tile, depth, micro = TILE, TILE_K, MICRO
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
        registers = [[f"c{x}_{y}" for y in range(micro)] for x in range(micro)]
        for row in registers:
            r.emit(" = ".join(row) + f" = {zero}")
        per_thread = depth * tile // threads
        slots = []                                 # (register, shared array, operand, ...)
        for operand, shared, extent, origin in ((a, "sa", m, "row0"), (b, "sb", n, "col0")):
            for p in range(per_thread):
                q = f"t + {p * threads}" if p else "t"
                mm, kk = f"{shared}m{p}", f"{shared}k{p}"
                if shared == "sa":          # consecutive threads walk k, then rows of A
                    r.emit(f"{mm} = ({q}) // {depth}")
                    r.emit(f"{kk} = ({q}) % {depth}")
                else:                       # consecutive threads walk columns of B
                    r.emit(f"{kk} = ({q}) // {tile}")
                    r.emit(f"{mm} = ({q}) % {tile}")
                r.emit(f"{shared}g{p} = {origin} + {mm}")
                slots.append((f"{shared}r{p}", shared, operand, extent, mm, kk, f"{shared}g{p}"))

        def fetch(k_origin: str) -> None:
            """Read the slab at k_origin into each thread's staging registers."""
            for register, shared, operand, extent, mm, kk, gm in slots:
                r.emit(f"gk = {k_origin} + {kk}")
                index = tuple(batch_names) + ((gm, "gk") if shared == "sa" else ("gk", gm))
                guard = [c for c, need in ((f"gk < {k}", k % depth), (f"{gm} < {extent}",
                                                                      extent % tile)) if need]
                if guard:
                    r.emit(f"{register} = {zero}")
                    r.emit(f"if {' and '.join(guard)}:")
                    r.push()
                else:
                    r.scopes.append({})
                r.emit(f"{register} = {r.value(operand, index)}")
                if guard:
                    r.pop()
                else:
                    r.scopes.pop()

        # NOTE: the next slab's global reads are issued before this slab's arithmetic, so their
        # latency hides behind it (register double buffering).
        if PREFETCH and k > 0:
            fetch("0")
        elif PREFETCH:                  # an empty inner dimension reads nothing (zeros result)
            for register, *_ in slots:
                r.emit(f"{register} = {zero}")
        r.emit(f"for k0 in range(0, {k}, {depth}):")
        r.push()
        if not PREFETCH:
            fetch("k0")
        for register, shared, _, _, mm, kk, _ in slots:
            r.emit(f"{shared}[{kk}, {mm}] = {register}")
        r.emit("cuda.syncthreads()")
        if PREFETCH:
            r.emit(f"if k0 + {depth} < {k}:")
            r.push()
            fetch(f"k0 + {depth}")
            r.pop()
        # NOTE: a thread's outputs are strided by `side` (rows tm + side*x, columns tn + side*y),
        # so a warp reads consecutive shared-memory words (no bank conflicts) and its stores of
        # one (x, y) are consecutive in memory. The slab loop is unrolled in the source: constant
        # shared-memory offsets, and no index arithmetic between the FMAs.
        for kk in range(depth):
            for x in range(micro):
                r.emit(f"a{x}_ = sa[{kk}, tm + {side * x}]")
            for y in range(micro):
                r.emit(f"b{y}_ = sb[{kk}, tn + {side * y}]")
            for x in range(micro):
                for y in range(micro):
                    r.emit(f"{registers[x][y]} += a{x}_ * b{y}_")
        r.emit("cuda.syncthreads()")
        r.pop()
        for x in range(micro):
            r.emit(f"gi{x} = row0 + tm + {side * x}")
        for y in range(micro):
            r.emit(f"gj{y} = col0 + tn + {side * y}")
        for x in range(micro):
            for y in range(micro):
                r.emit(f"if gi{x} < {m} and gj{y} < {n}:")
                r.push()
                r.special[node.id] = lambda index, name=self.register_value(registers[x][y], node): name
                index = tuple(batch_names) + (f"gi{x}", f"gj{y}")
                for param in self.outputs:
                    self.store(param, index)
                r.pop()
        batch_size = int(np.prod(batch, dtype=np.int64))
        grid = (max(1, -(-n // tile)), max(1, -(-m // tile)), max(1, batch_size))
        return self.finish(f"tiled {tile}x{tile}x{depth}, {micro}x{micro} per thread", threads, grid)

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

    # -- the kernel ------------------------------------------------------------------------------
    def finish(self, strategy: str, block: int, grid: tuple, min_blocks: int = 0) -> CudaKernelSource:
        r = self.renderer
        names = [p.name for p in self.params] + [p.name for p in self.outputs]
        names += [name for name, _, _ in self.scratch]
        overlaps = self.overlaps()
        first = []
        if overlaps:
            # NOTE: the next kernel may launch at once (it waits for this one before it touches
            # memory); its blocks take the SM slots this one's blocks leave.
            first = ["    launch_dependents()", "    wait_for_prerequisite()"]
            for name in ("launch_dependents", "wait_for_prerequisite"):
                r.globals[name] = ("vector", name)
        lines = [f"def {self.name}({', '.join(names)}):"] + first + r.lines + ["    return"]
        values = dict(r.globals)
        helper_sources = []
        for helper_name, dtype in sorted(r.helpers):
            text, constants = helpers.source(helper_name, dtype, short(dtype))
            helper_sources.append(text)
            values.update(constants)
        return CudaKernelSource(self.name, "\n".join(lines), values, self.params, self.outputs,
                                strategy, block, grid, list(self.scratch), helper_sources,
                                min_blocks=min_blocks, overlaps=overlaps)

    def overlaps(self) -> bool:
        """Whether the kernel begins by waiting for the one before it (OVERLAP; not in the
        simulator, which runs kernels one after another, nor split reductions)."""
        return bool(OVERLAP and not self.simulator and not self.split_reduction)


def generate(group: Group, name: str, input_strides: dict, simulator: bool = False,
             round_halves: bool = True):
    """The kernel of `group`; `round_halves=False` keeps float16 results of ops in float32 (jit's
    float16="float32")."""
    source = CudaSource(group, name, input_strides, simulator)
    source.renderer.round_halves = round_halves
    return source.generate()
