"""What the CPU code generator produces for a group (KernelSource: the function's text and how the
runner passes each array), and the numbers it sizes loops by."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ...ir.graph import Node

PARALLEL_ELEMENTS = 1 << 16      # below this a group runs on one thread (no fork-join cost)
SPLIT_ELEMENTS = 1 << 18         # a full reduction over at least this many elements is split
MATMUL_TILE_BYTES = 1 << 18      # rows of a matmul computed per BLAS call (one tile in L2)
MATMUL_PARALLEL_FLOPS = 1 << 22  # a product of fewer flops runs its tiles on one thread
LANES = 8                        # independent accumulators of a sum/prod/max/min inner loop
LANED = ("sum", "prod", "max", "min")
COLUMN_TILE = 256                # kept contiguous columns one thread owns in a column reduction


@dataclass
class Argument:
    """How the runner passes one array: the node it holds and the view it takes."""
    node: Node
    view: str = "as_is"         # "as_is", "flat" (1-D), "one" (0-d as shape (1,)), "operand"
    chain: tuple = ()           # operand nodes evaluated on the host (matmul operands)


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

    def rebound(self, mapping: dict) -> "KernelSource":
        """This kernel for another group of the same structure: each argument holds the node at
        its place there (`mapping`: node id here -> node there)."""
        def move(arguments):
            return [dataclasses.replace(a, node=mapping[a.node.id],
                                        chain=tuple(mapping[n.id] for n in a.chain))
                    for a in arguments]
        return dataclasses.replace(self, inputs=move(self.inputs), outputs=move(self.outputs))
