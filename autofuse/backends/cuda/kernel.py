"""The kernel writer's core: a generated kernel's parameters (one raw pointer per array, Python
scalars by value), its index width, loads and stores, and the finished `KernelSource`. The
strategies (emit/) build on it; writer.py puts them together.
"""
from __future__ import annotations

import dataclasses
import itertools
import keyword
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...arrays import contiguous
from ...fusion.group import Group
from ...ir.graph import Node
from .. import helpers
from ..accumulators import Accumulators
from ..render import Renderer, short
from .device import Device
from .index_folding import fold
from .intrinsics import divide as cuda_divide
from .intrinsics import half as cuda_half
from .tuning import Tuning

MAX_GRID = (1 << 31) - 1       # blocks along a grid's x axis
INDEX_LIMIT = 1 << 31          # arrays and loops under this many elements use 32-bit index math
#                                softmax 0.1329 -> 0.1295 with the reload. Reload hints on the L1
#                                alone: layernorm 0.1372; held through the row: 0.1342.


@dataclass
class Param:
    """One kernel parameter: the node it carries and how (pointer to an array, or a value)."""
    node: Node
    name: str
    by_value: bool = False
    strides: tuple | None = None     # element strides of a non-contiguous graph input
    aligned: bool = True             # its base address is a multiple of 16 bytes: every array
    #                                  the program allocates, and each argument that was at the
    #                                  signature's first call (runtime/program.py checks it)


@dataclass(frozen=True)
class Size:
    """A runtime integer argument (int64) of a kernel general over sizes: an extent of `node`
    (`axis`), or its element stride there (`stride`; `strides` as the kernel reads the array, None
    for C-contiguous). Appended after the outputs, before any scratch buffer."""
    name: str
    node: Node
    axis: int
    stride: bool = False
    strides: tuple | None = None

    @property
    def value(self) -> int:
        if not self.stride:
            return int(self.node.shape[self.axis])
        return int((self.strides or contiguous(self.node.shape))[self.axis])

    dtype = np.dtype(np.int64)

    def argument(self) -> np.int64:
        """The value as the kernel takes it."""
        return np.int64(self.value)

    def moved(self, node: Node, strides: dict) -> "Size":
        return dataclasses.replace(self, node=node, strides=strides.get(node.id))


@dataclass(frozen=True)
class Grid:
    """A grid computed from a kernel's sizes: blocks of `tn` columns along x, `tm` rows along y,
    and the product of the `batch` sizes (times `splits` shares of K) along z."""
    tn: int
    tm: int
    splits: int = 1

    def of(self, sizes: dict) -> tuple:
        batch = 1
        for name, value in sizes.items():
            if name.startswith("B"):
                batch *= value
        return (max(1, -(-sizes["N"] // self.tn)), max(1, -(-sizes["M"] // self.tm)),
                max(1, batch * self.splits))


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
class KernelSource:
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
    spill_bytes: int = 0             # ... kept where ptxas spills at most this many bytes a thread
    bound_if_needed: bool = False    # ... only where the kernel linked without bounds does not fit
    #                                  min_blocks blocks an SM (compile._least_bound)
    overlaps: bool = False           # waits for the stream's kernel before it (OVERLAP): may be
    #                                  launched with programmatic stream serialization
    reason: str = ""                 # why its strategy (plan.Plan.reason)
    sizes: list = field(default_factory=list)     # Size arguments, after the outputs
    rule: Grid | None = None         # where sizes are arguments: the grid from their values
    assumed: list = field(default_factory=list)   # parameters whose 16-byte alignment the
    #                                  kernel assumes (a vector body with no element-by-element
    #                                  copy): runtime/program.py checks the arguments among them
    launch_rule: tuple = ()          # the grid at other sizes (dynamic/): ("elements", taken
    #                                  a block a step), ("rows", most blocks, a block a row),
    #                                  ("tiles", tm, tn: a block a tile of the product's result)
    #                                  and others (dynamic.py's _grid and _blocks)

    def rebound(self, mapping: dict, strides: dict | None = None) -> "KernelSource":
        """This kernel for another group of the same structure: each parameter carries the node
        at its place there (`mapping`: node id here -> node there); size arguments take that
        group's values (`strides`: its inputs' element strides), and the grid with them."""
        move = lambda params: [dataclasses.replace(p, node=mapping[p.node.id]) for p in params]
        sizes = [size.moved(mapping[size.node.id], strides or {}) for size in self.sizes]
        grid = self.rule.of({s.name: s.value for s in sizes}) if self.rule else self.grid
        return dataclasses.replace(self, params=move(self.params), outputs=move(self.outputs),
                                   sizes=sizes, grid=grid)


def identifiers(text: str) -> set:
    """The names an index expression uses."""
    return {name for name in re.findall(r"[A-Za-z_]\w*", text) if not keyword.iskeyword(name)}


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


def atomic_scratch(name: str) -> bool:
    """Whether a scratch buffer is passed as a numba array (atomics need one): the split
    reduction's counter and a scan's look-back state (emit/scans.py), else a raw pointer."""
    return name == "counter" or name.startswith("sync_")


def storage_dtype(dtype) -> np.dtype:
    """numba-cuda cannot store through a bool pointer: bool arrays travel as uint8."""
    dtype = np.dtype(dtype)
    return np.dtype(np.uint8) if dtype.kind == "b" else dtype


class KernelBase:
    """The kernel writer's core: parameters, index width, loads and stores, and the finished kernel."""

    def __init__(self, group: Group, name: str, input_strides: dict, simulator: bool,
                 tuning: Tuning, device: Device, misaligned: frozenset = frozenset()):
        self.group = group
        self.name = name
        self.simulator = simulator
        self.tuning = tuning
        self.device = device
        self.split_reduction = False       # (split kernels do not overlap: OVERLAP)
        self.into = None                   # a slice assignment's base written in place (region)
        self.dynamic = False               # sizes may become arguments (dynamic/): choices that
        #                                    only pay at some sizes are made as at large ones
        self.renderer = Renderer(group, self.load, "cuda")
        self.acc = Accumulators(self.renderer)
        self.params: list[Param] = []
        self.names: dict[int, Param] = {}
        for k, node in enumerate(group.inputs):
            by_value = node.ndim == 0 and node.op == "input"
            param = Param(node, f"a{k}", by_value, input_strides.get(node.id),
                          node.id not in misaligned)
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
        self.once_loads = ""                # PTX cache qualifiers of vector loads of data read
        #                                     once (split reductions: Tuning.reduce_loads)
        self.scratch = []
        self.assumed: list[str] = []        # parameters assumed 16-byte aligned (KernelSource)
        self.sizes: list[Size] = []         # runtime size arguments (emit/gemm.py)
        self.grid_rule: Grid | None = None
        self.preloaded: dict = {}           # (node id, index) -> a value loaded ahead (a vector
        #                                     lane, or a read issued before a barrier)
        self.narrow = self.fits_32_bits()
        self.wide_indices = False           # 64-bit signed indices where set (emit/strip.py's
        #                                     edge rows: NVVM rebases 32-bit ones, see there)
        self.renderer.index = self.ix
        if self.tuning.native_halves:
            self.renderer.halves = cuda_half.Spelling(self.renderer)
        if self.tuning.invariant_divide:
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
        if self.group.kind == "scatter":
            spans.append(self.group.scatter.inputs[2].size)
        for param in self.params + self.outputs:
            shape = param.node.shape
            strides = param.strides or contiguous(shape)
            if 0 in shape:
                continue
            spans.append(1 + sum((size - 1) * abs(stride) for size, stride in zip(shape, strides)))
        return max(spans) < INDEX_LIMIT

    def ix(self, expression: str, signed: bool = False, literal: bool = False) -> str:
        """`expression` as a 32-bit index where the kernel's sizes allow, else unchanged.

        numba widens integer arithmetic to 64 bits; truncating each index variable (and each
        offset) back to 32 bits lets LLVM narrow the arithmetic feeding it, so a flat index's
        division by a constant row length becomes a mask or a 32-bit multiply instead of ~12
        64-bit instructions (bias+GELU: 296 -> 65 PTX instructions). Coordinates are never
        negative (unsigned); an offset with a negative stride is signed. `literal`: a number
        is narrowed too (in a class kernel it becomes a size argument's form)."""
        expression = fold(expression)
        if not self.narrow or (expression.isdigit() and not literal):
            return expression
        if self.wide_indices:
            name = "sl" if signed else "ul"
            self.renderer.globals[name] = ("index", "int64") if signed else ("index", "int64", 0)
            return f"{name}({expression})"
        name = "sx" if signed else "ix"
        self.renderer.globals[name] = ("index", "int32" if signed else "uint32")
        return f"{name}({expression})"

    # -- memory ------------------------------------------------------------------------------------
    def offset(self, shape, strides, index) -> str:
        terms = []
        for i, size, stride in zip(index, shape, strides):
            if (size == 1 and not self.dynamic) or i == "0" or stride == 0:
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

    # -- the kernel ------------------------------------------------------------------------------
    def finish(self, strategy: str, block: int, grid: tuple, min_blocks: int = 0) -> KernelSource:
        r = self.renderer
        names = [p.name for p in self.params] + [p.name for p in self.outputs]
        names += [size.name for size in self.sizes]
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
        return KernelSource(self.name, "\n".join(lines), values, self.params, self.outputs,
                                strategy, block, grid, list(self.scratch), helper_sources,
                                min_blocks=min_blocks, overlaps=overlaps,
                                sizes=list(self.sizes), rule=self.grid_rule,
                                assumed=list(dict.fromkeys(self.assumed)))

    def overlaps(self) -> bool:
        """Whether the kernel begins by waiting for the one before it (OVERLAP; not in the
        simulator, which runs kernels one after another, nor split reductions)."""
        return bool(self.tuning.overlap and not self.simulator and not self.split_reduction)

