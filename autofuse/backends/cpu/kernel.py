"""What the CPU code generator produces for a group (KernelSource: the function's text and how the
runner passes each array), and the numbers it sizes loops by."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

from ...ir.graph import Node

PARALLEL_ELEMENTS = 1 << 16      # below this a group runs on one thread (no fork-join cost)
SPLIT_ELEMENTS = 1 << 18         # a full reduction over at least this many elements is split
MATMUL_TILE_BYTES = 1 << 18      # rows of a matmul computed per BLAS call (one tile in L2) ...
MATMUL_TILE_MAX_BYTES = 1 << 23  # ... or, up to this, a thread's share of the rows (matmul.py)
MATMUL_PARALLEL_FLOPS = 1 << 22  # a product of fewer flops runs its tiles on one thread
LANE_BYTES = 256                 # a row loop's lanes (independent accumulators of its
#                                  sums, products, extremes: rows.py), all its buffers together:
#                                  8 AVX2 registers, half the file (layernorm 1024x1024 float32,
#                                  one thread: 64 float64 lanes spilled in the loop, 2.0 ms; 32
#                                  lanes 1.0 ms; 16, 1.3 ms)
LANES = 64                       # lanes at most
SHORT_LANES = 8                  # lanes of a row shorter than twice its lanes, and at least
ROW_CHUNKS = 64                  # pieces a parallel rows loop is cut into (buffers made once each)
LANED = ("sum", "prod", "max", "min")
# Where the CPU spells an op its own way (keys: an op, or a reduction, and the computation's kind).
# A max or min reduction's accumulator takes numba's scalar np.maximum / np.minimum, which
# propagate NaN as NumPy does and which LLVM vectorizes (a select), where the op table's
# `a if (a > b or a != a) else b` stayed scalar: 4096 x 4096 float32 max over axis 0 on one core
# 8.9 -> 4.5 ms (NumPy 3.9). Elementwise np.maximum keeps the op table's form: numba's differs
# from NumPy's on signed zeros (maximum(-0.0, 0.0)). numba's CPU target has no math.fmod (the
# CUDA target's libdevice has); np.fmod is the same libm.
CPU_SPELLINGS = {("max", "f"): "np.maximum({0}, {1})", ("min", "f"): "np.minimum({0}, {1})",
                 ("fmod", "f"): "np.fmod({0}, {1})"}
COLUMN_TILE = 4096               # most contiguous columns one thread owns in a column reduction
COLUMN_TILE_MIN = 256            # fewest, when narrower tiles are what gives the threads work
COLUMN_TILES = 8                 # tiles (or blocks of rows) a column reduction is cut into
COLUMN_BLOCK_ROWS = 64           # fewest reduced rows a block of rows holds
CROSS_TILE = 32                  # elementwise loops that read across memory (a transpose, a
#                                  Fortran-ordered input): the last two axes in tiles this wide


def planned_cores() -> int:
    """The cores a kernel's work is cut for where the pieces follow the machine (a matmul's BLAS
    tiles): $AUTOFUSE_CPU_CORES, else the threads numba may use here. (The golden snapshot pins
    it, so generated text does not depend on the machine that records it.)"""
    value = os.environ.get("AUTOFUSE_CPU_CORES")
    if value:
        return max(1, int(value))
    from .runtime import thread_count
    return thread_count()


@dataclass
class Argument:
    """How the runner passes one array: the node it holds and the view it takes."""
    node: Node
    view: str = "as_is"         # "as_is", "flat" (1-D), "ravelled" (passed as is, made 1-D
    #                             by the kernel), "one" (0-d as shape (1,)), "operand"
    chain: tuple = ()           # operand nodes evaluated on the host (matmul operands)
    into: Node | None = None    # an output written into this input's memory (in place)
    order: tuple | None = None  # a flat view's array stored in this axis order (slowest first),
    #                             not C's: viewed in memory order, an output allocated so


@dataclass
class KernelSource:
    name: str
    text: str
    globals: dict
    inputs: list[Argument]
    outputs: list[Argument]
    parallel: bool
    strategy: str
    helpers: list = field(default_factory=list)     # helper function sources
    lifted: list = field(default_factory=list)      # sharing.Lifted: starts and scalars passed first

    def rebound(self, mapping: dict) -> "KernelSource":
        """This kernel for another group of the same structure: each argument holds the node at
        its place there (`mapping`: node id here -> node there)."""
        def move(arguments):
            return [dataclasses.replace(a, node=mapping[a.node.id],
                                        chain=tuple(mapping[n.id] for n in a.chain),
                                        into=a.into and mapping[a.into.id])
                    for a in arguments]
        return dataclasses.replace(self, inputs=move(self.inputs), outputs=move(self.outputs),
                                   lifted=[a.moved(mapping[a.node.id]) for a in self.lifted])

    @property
    def leading(self) -> tuple:
        """The values passed before the arrays: this group's lifted slice starts and scalars."""
        return tuple(argument.argument() for argument in self.lifted)
